"""signed_minmax_unsigned: the signed atomic minimum and maximum compare as unsigned.

``atomic_imax``/``imin`` and their ``imm_`` forms order the words as two's-complement signed
integers (FS 22.17.13-14, 22.17.25-26). A translator that keeps every buffer as ``uint`` and
emits the unsigned ``atomicMax``/``atomicMin`` on it (as Wine's GLSL back end does for raw and
structured buffers) gets the result wrong exactly when src0 and the word differ in their sign
bit (the ``result.*_across_sign`` clauses).
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import InstructionSpec
from sm5.oracle.rulelang.rules import parse_rule


class SignedMinmaxUnsigned(NaiveTranslator):
    name = "signed_minmax_unsigned"

    def combine(self, ins: InstructionSpec, old: int, values: dict[str, int]) -> int:
        memory = ins.semantics.memory
        kernel = memory.kernel.text if memory is not None and memory.kernel is not None else ""
        if "i32(" not in kernel:
            return super().combine(ins, old, values)
        unsigned = parse_rule(kernel.replace("i32(", "("), where=f"{self.name}: kernel")
        return int(unsigned.evaluate({**values, "old": old}))
