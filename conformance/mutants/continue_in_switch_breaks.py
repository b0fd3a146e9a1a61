"""continue_in_switch_breaks: a continue inside a switch inside a loop only leaves the switch.

A translator that maps ``continue`` to the innermost breakable construct (as it maps ``break``)
leaves the switch and runs the rest of the loop body instead of starting the next iteration
(FS 22.7.6: the beginning of the current loop; a switch is not a loop). The vectors with a
continue in a switch in a loop catch it.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.machine.program import Instruction
from sm5.oracle.model.spec import load_default


class ContinueInSwitchBreaks(NaiveTranslator):
    name = "continue_in_switch_breaks"

    def next_iteration(self, code: tuple[Instruction, ...], pc: int) -> int:
        control = load_default().control
        around = control.loops | control.selects
        innermost = next((b for b in self.enclosing(code, pc) if b[0] in around), None)
        if innermost is not None and innermost[0] in control.selects:
            return self.leave(code, pc)
        return super().next_iteration(code, pc)
