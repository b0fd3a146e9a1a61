"""atomic_saturates: the atomic add saturates at 0xFFFFFFFF instead of wrapping.

The add is "insensitive to sign" and wraps modulo 2^32 (FS 22.12.1; RenderDoc's ``*udst += src``
and ``OpAtomicIAdd`` wrap); an emulator that adds in a wider type and clamps to the u32 range
instead of truncating does not.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import U32, NaiveTranslator


class AtomicSaturates(NaiveTranslator):
    name = "atomic_saturates"

    def atomic_add(self, old: int, value: int) -> int:
        return min(old + value, U32)
