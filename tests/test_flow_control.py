"""The program counter on acceptance sets: a few-valued condition splits the run into paths whose
final states are joined; an unknown one widens the program's writes; a memory write the spec does
not model in a discarded invocation is refused; a step record covers every execution; the step
budget ends in ``unbounded``. (The semantics of each flow-control clause are checked by the hand
cases, tests/hand/<name>.yaml.)"""

from __future__ import annotations

import pytest

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import ExecError
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json


def run(lines: list[str], state: dict[str, object], target: str = "cs_5_0"
        ) -> tuple[tuple[str, ...], dict[str, object], list[tuple[int, str, int, bool]]]:
    result = execute(parse_program(lines), state_from_json(state), target=target)
    assert result.state is not None, result.rule
    steps = [(s.index, s.instruction, s.runs, s.widened) for s in result.steps]
    return result.outcomes, expected_to_json(result.state), steps


def test_a_condition_of_two_values_runs_both_arms_and_joins_them() -> None:
    # dmin of +0.0 and -0.0 may return either zero (FS 22.14.6): the high word is 0 or
    # 0x80000000, and 0x80000000 is a non-zero condition. Both arms run, r2.x is 1 or 2.
    outcomes, state, steps = run(
        ["dcl_globalFlags enableDoublePrecisionFloatOps", "dmin r0.xy, d(0.0), d(-0.0)",
         "if_nz r0.y", "mov r2.x, l(1)", "else", "mov r2.x, l(2)", "endif"],
        {"r0": [7, 7, 7, 7], "r2": [0, 0, 0, 0]})
    assert outcomes == ("defined", "dst_constrained")
    assert state["r2"] == [{"one_of": [1, 2]}, 0, 0, 0]
    assert state["r0"] == [0, {"one_of": [0, 0x80000000]}, 7, 7]
    assert (1, "if", 2, False) in steps  # the if ran once on each path


def test_an_unknown_condition_widens_every_write_of_the_program() -> None:
    # An immediate atomic past the end of its view returns an undefined value (FS 18.6.8.3):
    # a branch on it cannot be enumerated, so all the program may write becomes anything.
    outcomes, state, steps = run(
        ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(8), l(1)", "if_nz r0.x",
         "mov r2.x, l(1)", "else", "store_raw u0.x, l(0), r2.x", "endif"],
        {"r0": [7, 7, 7, 7], "r2": [5, 0, 0, 0], "u0": {"kind": "raw", "data": [3, 4]}})
    assert outcomes == ("no_write", "dst_undefined")
    assert state["r2"] == [None, 0, 0, 0]
    assert state["u0"] is None
    assert steps[-1] == (1, "if", 0, True)


def test_a_write_the_spec_does_not_model_after_a_discard_is_refused() -> None:
    program = ["dcl_uav_raw u0", "discard_nz r1.x", "store_raw u0.x, l(0), r1.x"]
    with pytest.raises(ExecError, match="discarded invocation, which its semantics do not model"):
        run(program, {"r1": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [0]}}, "ps_5_0")
    # the atomics model it: after the discard the atomic changes nothing (FS 16.13)
    outcomes, state, _ = run(["dcl_uav_raw u0", "discard_nz r1.x",
                              "atomic_iadd u0, l(0), r1.x"],
                             {"r1": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [5]}},
                             "ps_5_0")
    assert outcomes == ("no_write",)
    assert state["u0"] == {"kind": "raw", "data": [5]}
    assert state["invocation"] == "discarded"
    # a discard whose test fails leaves the write to happen
    _, state, _ = run(program, {"r1": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [9]}},
                      "ps_5_0")
    assert state["u0"] == {"kind": "raw", "data": [0]}


def test_a_step_record_covers_every_execution_of_its_instruction() -> None:
    outcomes, state, steps = run(
        ["mov r0.x, l(0)", "loop", "uge r1.x, r0.x, l(10)", "breakc_nz r1.x",
         "iadd r0.x, r0.x, l(1)", "endloop"], {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]})
    assert outcomes == ("defined",)
    assert state["r0"] == [10, 0, 0, 0]
    assert [(i, name, runs) for i, name, runs, _ in steps] == [
        (0, "mov", 1), (1, "loop", 1), (2, "uge", 11), (3, "breakc", 11), (4, "iadd", 10),
        (5, "endloop", 10)]


def test_past_the_step_budget_every_word_is_accepted() -> None:
    outcomes, state, steps = run(["loop", "iadd r0.x, r0.x, l(1)", "endloop"],
                                 {"r0": [0, 0, 0, 0]})
    assert outcomes == ("unbounded",)
    assert state["r0"] == [None, None, None, None]
    assert sum(runs for _, _, runs, _ in steps) == 100_000
