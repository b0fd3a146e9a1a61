"""cmp_exch_operands_swapped: imm_atomic_cmp_exch's comparand and new value swapped.

The asm order is ``dst0, dst1, dstAddress, src0 (compare), src1 (value)``; the intrinsic
InterlockedCompareExchange takes (dest, compare_value, value) and SPIR-V OpAtomicCompareExchange
takes (value, comparator). A translator that passes them in the wrong order writes the
comparand when memory equals the new value.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import Machine, NaiveTranslator
from sm5.oracle.machine.program import Instruction
from sm5.oracle.model.spec import InstructionSpec


class CmpExchOperandsSwapped(NaiveTranslator):
    name = "cmp_exch_operands_swapped"

    def source_values(self, ins: InstructionSpec, instruction: Instruction, m: Machine
                      ) -> dict[str, int]:
        values = super().source_values(ins, instruction, m)
        if ins.name == "imm_atomic_cmp_exch" and len(values) == 2:
            first, second = values
            values = {first: values[second], second: values[first]}
        return values
