"""The one executor's entry: a legal program on a machine state.

A program without flow control runs straight through the interpreter
(``sm5.oracle.execution.interpreter``); one with flow control runs under the program counter of
``sm5.oracle.execution.control``, its partners matched once by the structure pass. A
one-instruction program is the special case of the first.
"""

from __future__ import annotations

from sm5.oracle.execution.control import run_controlled
from sm5.oracle.execution.interpreter import run_straight_line
from sm5.oracle.legality.structure import match_structure
from sm5.oracle.machine.program import Program
from sm5.oracle.machine.state import Execution, MachineState
from sm5.oracle.model.spec import Spec


def run_program(program: Program, state: MachineState, spec: Spec) -> Execution:
    """Every instruction of a legal program, from ``state``."""
    controls = spec.control.instructions
    if not any(ins.name in controls for ins in program.instructions):
        return run_straight_line(program, state, spec)
    structure = match_structure(program, spec.control, None, spec.instructions.__contains__)
    return run_controlled(program, state, spec, structure)
