"""The one executor's entry: a legal program on a machine state.

A program without flow control runs straight through the interpreter
(``sm5.oracle.execution.interpreter``); one with flow control runs under the program counter of
``sm5.oracle.execution.control``, its partners matched once by the structure pass. A
one-instruction program is the special case of the first.

Before the first instruction the state is completed with the program's own state: the icb its
declaration lists (a read-only resource), every element of its indexable temps and every temp
register it uses that the state does not give, the last two *undefined* (erratum
``state.uninitialised_temps``: never 0 by assumption). After the last one the final state is
the vector's again: the temps' elements and the constants are not part of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from sm5.oracle.execution.control import run_controlled
from sm5.oracle.execution.indexing import ProgramUndefined, declared_files, register_files
from sm5.oracle.execution.interpreter import initial_state, run_straight_line
from sm5.oracle.legality.structure import match_structure
from sm5.oracle.machine.program import Operand, Program, element_name
from sm5.oracle.machine.state import (
    CONSTANT_KIND,
    UNWRITTEN_TEMPS,
    Accept,
    Execution,
    ExpectedResource,
    ExpectedState,
    MachineState,
    Resource,
)
from sm5.oracle.model.spec import Spec

UNDEFINED: tuple[Accept, Accept, Accept, Accept] = (None, None, None, None)
#: The end of an element's name in a state (``x0[2]``, :func:`element_name`).
ELEMENT_END = element_name("", 0)[-1]


def run_program(program: Program, state: MachineState, spec: Spec) -> Execution:
    """Every instruction of a legal program, from ``state``."""
    full, undefined = _program_state(program, state, spec)
    start = None
    if undefined:
        begin = initial_state(full)
        start = ExpectedState({**begin.registers, **dict.fromkeys(undefined, UNDEFINED)},
                              begin.resources, begin.invocation)
    try:
        execution = _run(program, full, spec, start)
    except ProgramUndefined as undefined_access:
        execution = _anything(full, undefined_access.outcome)
    if undefined:
        execution = replace(execution, facts=(*execution.facts, UNWRITTEN_TEMPS))
    return _without_program_state(execution, state)


def _run(program: Program, state: MachineState, spec: Spec, start: ExpectedState | None
         ) -> Execution:
    controls = spec.control.instructions
    if not any(ins.name in controls for ins in program.instructions):
        return run_straight_line(program, state, spec, start)
    structure = match_structure(program, spec.control, None, spec.instructions.__contains__)
    return run_controlled(program, state, spec, structure, start)


def _program_state(program: Program, state: MachineState, spec: Spec
                   ) -> tuple[MachineState, tuple[str, ...]]:
    """``state`` with the program's icb and its undefined registers (as 0s, their names
    returned: the interpreter starts them undefined)."""
    model = spec.model
    constants: dict[str, Resource] = {}
    undefined: list[str] = []
    declared = declared_files(model)
    for decl in program.declarations:
        dspec = spec.declarations.declarations.get(decl.name)
        if dspec is None or decl.register is None:
            continue
        if dspec.listed:
            constants[decl.register.register] = Resource(CONSTANT_KIND, decl.numbers)
        elif decl.register.file in declared and decl.numbers:
            undefined.extend(element_name(decl.register.register, k)
                             for k in range(decl.numbers[0]))
    temps = register_files(model) - declared
    for instruction in program.instructions:
        for operand in instruction.operands:
            for op in _read_registers(operand):
                if op.file in temps and op.register not in state.registers:
                    undefined.append(op.register)
    if not constants and not undefined:
        return state, ()
    names = tuple(dict.fromkeys(undefined))
    registers = {**state.registers, **{name: (0, 0, 0, 0) for name in names}}
    return MachineState(registers, {**state.resources, **constants}, state.invocation), names


def _read_registers(op: Operand) -> Iterator[Operand]:
    current: Operand | None = op
    while current is not None:
        yield current
        current = current.relative


def _anything(state: MachineState, outcome: str) -> Execution:
    """No verdict on any word: every register component and resource accepts anything."""
    registers = dict.fromkeys(state.registers, UNDEFINED)
    resources: dict[str, ExpectedResource | None] = dict.fromkeys(state.resources)
    return Execution((outcome,), (), ExpectedState(registers, resources, state.invocation))


def _without_program_state(execution: Execution, given: MachineState) -> Execution:
    """The final state over the vector's own words: the registers it gives or the program
    uses, its resources; not the temps' elements nor the icb."""
    final = execution.state
    if final is None or (final.registers.keys() == given.registers.keys()
                         and final.resources.keys() == given.resources.keys()
                         and not any(res.kind == CONSTANT_KIND
                                     for res in given.resources.values())):
        return execution
    registers = {name: value for name, value in final.registers.items()
                 if not name.endswith(ELEMENT_END)}
    resources = {name: res for name, res in final.resources.items()
                 if name in given.resources and given.resources[name].kind != CONSTANT_KIND}
    return replace(execution, state=ExpectedState(registers, resources, final.invocation))
