"""The generated lane functions (``sm5.oracle.execution.semantics.lanes``) against the interpreter
(``gather``, ``full_env``, ``fired_in``): the same environment, in the same order, and the same
clauses, on every lane of the golden vectors and on hypothesis-drawn register values; where the
generated function cannot decide, the interpreter's result or error."""

from __future__ import annotations

import dataclasses
import os
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.conformance.guards import request_state
from sm5.conformance.run import iter_selected, vector_files
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import ExecError
from sm5.oracle.execution.bindings import gather, lanes_of
from sm5.oracle.execution.semantics.lanes import evaluate_lane, lane_function
from sm5.oracle.machine.program import Instruction, subject_of, subject_positions
from sm5.oracle.machine.state import MachineState
from sm5.oracle.model.clauses import fired_in, full_env
from sm5.oracle.model.spec import InstructionSpec, load_default
from sm5.oracle.rulelang.rules import parse_rule

EXAMPLES = int(os.environ.get("SM5_PROPERTY_EXAMPLES", "300"))

Lane = tuple[InstructionSpec, Instruction, MachineState, int]


def interpreted(spec: InstructionSpec, instruction: Instruction, state: MachineState,
                lane: int) -> tuple[str, object]:
    try:
        env = full_env(spec.semantics, gather(spec, instruction, state, lane))
        return "value", (list(env.items()), fired_in(spec, env))
    except Exception as exc:  # an illegal instance's lane can fail in any way: compared as is
        return "error", f"{type(exc).__name__}: {exc}"


def generated(spec: InstructionSpec, instruction: Instruction, state: MachineState,
              lane: int) -> tuple[str, object]:
    function = lane_function(spec)
    assert function is not None
    try:
        env, fired = function(instruction, state, lane)
    except Exception as exc:  # the generated function gives up; evaluate_lane falls back
        return "gave up", type(exc).__name__
    return "value", (list(env.items()), fired)


@cache
def golden_lanes() -> tuple[Lane, ...]:
    spec = load_default()
    lanes: list[Lane] = []
    for _, _, vector in iter_selected(vector_files(None)):
        program = parse_vector_program(vector.program)
        for position in subject_positions(program, subject_of(vector.id)):
            subject = program.instructions[position]
            if subject.name not in spec.instructions:
                continue  # a flow-control instruction: no lanes
            ins_spec = spec.instructions[subject.name]
            state = request_state(vector)
            lanes.extend((ins_spec, subject, state, lane)
                         for lane in lanes_of(ins_spec, subject))
    return tuple(lanes)


def test_every_instruction_has_a_generated_lane_function() -> None:
    spec = load_default()
    assert [name for name, ins in spec.instructions.items() if lane_function(ins) is None] == []


@pytest.mark.slow  # long tier (docs/testing.md)
def test_generated_lanes_agree_with_the_interpreter_on_the_golden_vectors() -> None:
    lanes = golden_lanes()
    assert len(lanes) > 40_000
    gave_up = 0
    for spec, instruction, state, lane in lanes:
        want = interpreted(spec, instruction, state, lane)
        got = generated(spec, instruction, state, lane)
        if got[0] == "gave up":
            gave_up += 1
            assert want[0] == "error", (spec.name, instruction, lane, got)
        else:
            assert got == want, (spec.name, instruction, lane)
        # The fast path with its fallback gives the interpreter's result or error, always.
        try:
            env, fired = evaluate_lane(spec, instruction, state, lane)
        except Exception as exc:
            assert want == ("error", f"{type(exc).__name__}: {exc}")
        else:
            assert want == ("value", (list(env.items()), fired))
    # The golden set holds vectors whose state the interpreter refuses (a missing register,
    # an operand that cannot be read): the generated function gives up on them, and only them.
    assert 0 < gave_up < len(lanes) // 20


@settings(max_examples=EXAMPLES, deadline=None)
@given(pick=st.integers(0, 10**9), words=st.lists(st.integers(0, 0xFFFFFFFF), min_size=64,
                                                    max_size=64))
def test_generated_lanes_agree_on_drawn_register_values(pick: int, words: list[int]) -> None:
    """A golden lane with its registers' values drawn (addresses, values, doubles, NaNs...)."""
    lanes = golden_lanes()
    spec, instruction, state, lane = lanes[pick % len(lanes)]
    drawn = iter(words)
    registers = {name: (next(drawn), next(drawn), next(drawn), next(drawn))
                 for name in sorted(state.registers)[:16]}
    state = dataclasses.replace(state, registers={**state.registers, **registers})
    want = interpreted(spec, instruction, state, lane)
    got = generated(spec, instruction, state, lane)
    if got[0] == "gave up":
        assert want[0] == "error"
    else:
        assert got == want


def test_a_group_where_two_clauses_fire_is_the_interpreters_error() -> None:
    """A spec whose clauses overlap: the generated function gives up, and the fallback raises
    the interpreter's error naming the group and the clauses."""
    spec, instruction, state, lane = next(
        x for x in golden_lanes() if len(x[0].semantics.groups[0].clauses) > 1)
    group = spec.semantics.groups[0]
    always = parse_rule("True", where="test")
    overlapping = dataclasses.replace(group, clauses=tuple(
        dataclasses.replace(c, when=always) for c in group.clauses))
    broken = dataclasses.replace(spec, semantics=dataclasses.replace(
        spec.semantics, groups=(overlapping, *spec.semantics.groups[1:])))
    assert len(group.clauses) > 1
    assert generated(broken, instruction, state, lane)[0] == "gave up"
    with pytest.raises(ExecError, match=f"group {group.id} must have exactly one clause"):
        evaluate_lane(broken, instruction, state, lane)


def test_a_condition_that_is_not_a_truth_value_is_the_interpreters_error() -> None:
    spec, instruction, state, lane = golden_lanes()[0]
    group = spec.semantics.groups[0]
    broken = dataclasses.replace(spec, semantics=dataclasses.replace(
        spec.semantics, groups=(dataclasses.replace(group, scope=parse_rule("1 + 1",
                                                                            where="test")),
                                *spec.semantics.groups[1:])))
    assert generated(broken, instruction, state, lane)[0] == "gave up"
    with pytest.raises(Exception, match="not a truth value"):
        evaluate_lane(broken, instruction, state, lane)
