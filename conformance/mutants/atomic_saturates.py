"""atomic_saturates: the atomic add saturates at 0xFFFFFFFF instead of wrapping.

The add is "insensitive to sign" and wraps modulo 2^32 (FS 22.12.1; RenderDoc's ``*udst += src``
and ``OpAtomicIAdd`` wrap); an emulator that adds in a wider type and clamps to the u32 range
instead of truncating does not.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import U32, NaiveTranslator
from sm5.oracle.model.spec import InstructionSpec


class AtomicSaturates(NaiveTranslator):
    name = "atomic_saturates"

    def combine(self, ins: InstructionSpec, old: int, values: dict[str, int]) -> int:
        new = super().combine(ins, old, values)
        memory = ins.semantics.memory
        adds = memory is not None and memory.kernel is not None and "+" in memory.kernel.text
        return U32 if adds and new < old else new
