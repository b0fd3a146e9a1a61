"""The exact register steps (``sm5.oracle.execution.exact_steps``) against the general step
(``sm5.oracle.execution.semantics.run_instruction``): the same execution, or the same error, for
programs built from the golden vectors' legal straight-line programs run twice over (the second
pass reads what the first wrote: NaNs, infinities, denormals, carries and ranges flow on) and from
a 50-step chain of register instructions."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

import sm5.oracle.execution.interpreter as interpreter
from sm5.conformance.guards import request_state
from sm5.conformance.run import golden_dir
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.execution.exact_steps import COMPILE_AFTER, register_plan
from sm5.oracle.execution.run import run_program
from sm5.oracle.machine.program import Program
from sm5.oracle.machine.state import Execution, MachineState
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import read_file

SPEC = load_default()
#: Legal vectors taken from the start of each golden file.
PER_FILE = 25

Case = tuple[str, Program, MachineState]


def outcome(run: Callable[[], Execution]) -> tuple[str, object]:
    try:
        return "execution", run()
    except Exception as exc:  # compared as is: both paths must fail the same way
        return "error", f"{type(exc).__name__}: {exc}"


def general(program: Program, state: MachineState) -> tuple[str, object]:
    """The program with every step run by the general step."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interpreter, "register_plan", lambda spec, instruction: None)
        return outcome(lambda: run_program(program, state, SPEC))


def quick(program: Program, state: MachineState) -> tuple[str, object]:
    return outcome(lambda: run_program(program, state, SPEC))


def _legal_straight_line(path: Path) -> Iterator[Case]:
    controls = SPEC.control.instructions
    _, vectors = read_file(path)
    for vector in vectors:
        if "state" not in vector.expect:
            continue
        program = parse_vector_program(vector.program)
        if any(ins.name in controls or ins.name not in SPEC.instructions
               for ins in program.instructions):
            continue
        twice = dataclasses.replace(program, lines=program.lines + program.instructions)
        yield vector.id, twice, request_state(vector)


@cache
def golden_cases() -> tuple[Case, ...]:
    cases: list[Case] = []
    for path in sorted(golden_dir().glob("*.jsonl")):
        cases.extend(itertools.islice(_legal_straight_line(path), PER_FILE))
    return tuple(cases)


def test_the_cases_reach_register_steps_of_many_instructions() -> None:
    cases = golden_cases()
    names = {ins.name for _, program, _ in cases for ins in program.instructions
             if register_plan(SPEC.instructions[ins.name], ins) is not None}
    assert len(cases) > 1000
    assert len(names) > 60, sorted(names)


def test_register_steps_give_the_general_steps_execution() -> None:
    differ = []
    for vector_id, program, state in golden_cases():
        want, got = general(program, state), quick(program, state)
        if want != got:
            differ.append((vector_id, want, got))
    assert differ == []


def test_a_chain_of_fifty_steps_gives_the_general_steps_execution() -> None:
    lines = ["dcl_globalFlags enableDoublePrecisionFloatOps"]
    kernels = ("dadd", "dmul", "dmax", "dmin", "dadd")
    for k in range(50):
        lines.append(f"{kernels[k % 5]} r{k % 4}.xy, r{(k + 1) % 4}.xyxy, "
                     f"-r{(k + 2) % 4}.xyxy")
    program = parse_vector_program(tuple(lines))
    for words in ((0x3FF00000, 0x40000000), (0, 0x7FF00000), (1, 0x80000000)):
        registers = {f"r{k}": (words[0], words[1] + k, words[0], words[1])
                     for k in range(4)}
        state = MachineState(registers, {})
        want, got = general(program, state), quick(program, state)
        assert want[0] == "execution"
        assert got == want


def test_compiled_steps_give_the_general_steps_execution() -> None:
    """Each program run until its register steps are compiled (``COMPILE_AFTER`` runs), then
    once more: the compiled steps give the general step's execution."""
    compiled = 0
    differ = []
    for vector_id, program, state in golden_cases()[::3]:
        want = general(program, state)
        for _ in range(COMPILE_AFTER):
            quick(program, state)
        got = quick(program, state)
        compiled += sum(1 for ins in program.instructions
                        if (plan := register_plan(SPEC.instructions[ins.name], ins)) is not None
                        and plan.compiled is not None)
        if want != got:
            differ.append((vector_id, want, got))
    assert differ == []
    assert compiled > 300
