"""breakc_leaves_loop: a conditional break inside a switch leaves the enclosing loop.

vkd3d-shader sends ``breakc`` to the innermost *loop*, skipping an enclosing switch (its control
flow flattener looks for the innermost loop for a conditional break; an unconditional break is
right). A hand-encoded program on vkd3d-shader 1.14 with lavapipe stored 0 where D3D gives 100
(FS 22.7.9: the instruction after the next endloop or endswitch). The vectors with a breakc in a
switch in a loop catch it.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.machine.program import Instruction
from sm5.oracle.model.spec import load_default


class BreakcLeavesLoop(NaiveTranslator):
    name = "breakc_leaves_loop"

    def leave_kinds(self, instruction: Instruction) -> tuple[str, ...]:
        control = load_default().control
        if instruction.flags:  # the tested form
            return tuple(sorted(control.loops))
        return super().leave_kinds(instruction)
