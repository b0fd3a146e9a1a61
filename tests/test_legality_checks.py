"""The generated legality checks (``sm5.oracle.legality.checks``) against the interpreter
(``sm5.oracle.legality.interpreted_rules``): the same broken rules in the same order, on the
instruction of every golden vector and on hypothesis-drawn variations of them (other masks,
swizzles, modifiers, saturation, targets and runtimes); where the generated function cannot
decide, the interpreter's answer or error."""

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
from sm5.oracle.errors import RuleError
from sm5.oracle.legality import (
    Context,
    context,
    generated_checks,
    interpreted_rules,
    program_features,
    violations,
)
from sm5.oracle.machine.program import Instruction, Program
from sm5.oracle.machine.state import MachineState
from sm5.oracle.model.spec import InstructionSpec, Spec, load_default
from sm5.oracle.rulelang.rules import parse_rule

EXAMPLES = int(os.environ.get("SM5_PROPERTY_EXAMPLES", "300"))

Case = tuple[InstructionSpec, Instruction, Program, Context, MachineState, dict[str, bool]]


def interpreted(spec: Spec, case: Case) -> tuple[str, object]:
    ins, instruction, program, ctx, state, features = case
    try:
        return "rules", [r.id for r in interpreted_rules(ins, instruction, program, ctx, state,
                                                         spec, features)]
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}"


def generated(spec: Spec, case: Case) -> tuple[str, object]:
    ins, instruction, program, ctx, state, features = case
    function = generated_checks(ins)
    assert function is not None
    try:
        return "rules", [r.id for r in function(instruction, program, ctx, state, spec,
                                                features)]
    except Exception as exc:  # the generated function gives up; the interpreter decides
        return "gave up", type(exc).__name__


def case_of(spec: Spec, instruction: Instruction, program: Program, target: str, runtime: str,
            state: MachineState) -> Case:
    ctx = context(spec, target, runtime)
    return (spec.instructions[instruction.name], instruction, program, ctx, state,
            program_features(program, ctx, spec))


@cache
def golden_cases() -> tuple[Case, ...]:
    spec = load_default()
    cases: list[Case] = []
    for _, _, vector in iter_selected(vector_files(None)):
        program = parse_vector_program(vector.program)
        state = request_state(vector)
        cases.extend(case_of(spec, instruction, program, vector.target, vector.runtime, state)
                     for instruction in program.instructions
                     if instruction.name in spec.instructions)
    return tuple(cases)


def test_every_instruction_has_generated_checks() -> None:
    spec = load_default()
    assert [n for n, ins in spec.instructions.items() if generated_checks(ins) is None] == []


@pytest.mark.slow  # long tier (docs/testing.md)
def test_generated_checks_agree_with_the_interpreter_on_the_golden_vectors() -> None:
    spec = load_default()
    cases = golden_cases()
    assert len(cases) > 30_000
    rejected = 0
    for case in cases:
        want = interpreted(spec, case)
        got = generated(spec, case)
        assert got == want, (case[1], case[3])
        rejected += bool(want[1])
    assert 10_000 < rejected < len(cases)  # both the legal and the illegal instances


LETTERS = "xyzw"


@settings(max_examples=EXAMPLES, deadline=None)
@given(pick=st.integers(0, 10**9), data=st.data())
def test_generated_checks_agree_on_drawn_instances(pick: int, data: st.DataObject) -> None:
    spec = load_default()
    cases = golden_cases()
    _, instruction, program, _, state, _ = cases[pick % len(cases)]
    operands = list(instruction.operands)
    if operands:  # (sync has none)
        k = data.draw(st.integers(0, len(operands) - 1))
        op = operands[k]
        letters = data.draw(st.text(LETTERS, min_size=1, max_size=4))
        operands[k] = dataclasses.replace(
            op, components=letters if op.selection in ("mask", "swizzle") else letters[0]
            if op.selection == "select" else op.components,
            neg=data.draw(st.booleans()), abs=data.draw(st.booleans()))
    drawn = dataclasses.replace(instruction, operands=tuple(operands),
                                sat=data.draw(st.booleans()))
    target = data.draw(st.sampled_from([t.name for t in spec.model.targets]))
    runtime = data.draw(st.sampled_from([r.name for r in spec.model.runtimes]))
    case = case_of(spec, drawn, program, target, runtime, state)
    want = interpreted(spec, case)
    got = generated(spec, case)
    if got[0] == "gave up":
        assert want[0] == "error"
    else:
        assert got == want


def test_a_rule_that_is_not_a_truth_value_is_the_interpreters_error() -> None:
    spec = load_default()
    ins, instruction, program, ctx, state, _ = next(
        c for c in golden_cases() if any(r.check == "expr" for r in c[0].rules))
    number = next(i for i, r in enumerate(ins.rules) if r.check == "expr")
    rules = list(ins.rules)
    rules[number] = dataclasses.replace(rules[number],
                                        reject_if=parse_rule("1 + 1", where="test"))
    broken = dataclasses.replace(ins, rules=tuple(rules))
    patched = dataclasses.replace(spec, instructions={**spec.instructions, ins.name: broken})
    case = case_of(patched, instruction, program, ctx.target, ctx.runtime, state)
    assert generated(patched, case)[0] == "gave up"
    with pytest.raises(RuleError, match="not a truth value"):
        violations(program, ctx.target, ctx.runtime, state, patched)
