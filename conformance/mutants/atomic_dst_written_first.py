"""atomic_dst_written_first: an atomic writes dst0 before reading a source that aliases it.

``imm_atomic_iadd r0.x, u0, r1.xxxx, r0.x``: a translator that stores the old memory value into
r0.x as soon as it has loaded it, then reads src0, adds the old value instead of the one r0.x
held. The spec reads every source first (an instruction's inputs are its initial state).
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import Machine, NaiveTranslator, load, store
from sm5.oracle.machine.program import Instruction
from sm5.oracle.model.spec import InstructionSpec


class AtomicDstWrittenFirst(NaiveTranslator):
    name = "atomic_dst_written_first"

    def read_modify_write(self, ins: InstructionSpec, instruction: Instruction, m: Machine,
                          res: dict[str, Any], word: int) -> None:
        memory = ins.semantics.memory
        assert memory is not None
        old = load(res, word)
        if memory.returns is not None:
            self.write_scalar(self.operand(ins, instruction, memory.returns), old, m)
        store(res, word, self.combine(ins, old, self.source_values(ins, instruction, m)))
