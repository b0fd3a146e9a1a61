"""The flow-control theorem: each flow-control instruction's clauses partition what its effect can
do. Proved for every instruction of the spec; a clause set with an overlap, a gap or a dead
clause fails with the model that shows it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sm5.oracle.model.control import ControlClause
from sm5.oracle.model.spec import load_default
from sm5.oracle.proofs import run_all
from sm5.oracle.proofs.theorems.base import Budget
from sm5.oracle.proofs.theorems.control import clause_partition
from sm5.oracle.rulelang.rules import parse_rule

SPEC = load_default()
CONTROL = SPEC.control
TYPES = {v.name: v.type for v in CONTROL.variables}


def clause(cid: str, when: str) -> ControlClause:
    rule = parse_rule(when, where="test", known=frozenset(TYPES), types=TYPES)
    return ControlClause(cid, rule, "text", CONTROL.instructions["breakc"].clauses[0].source)


def test_every_flow_control_instruction_is_proved() -> None:
    results = run_all(SPEC, instructions=sorted(CONTROL.instructions))
    assert [(r.name, r.status) for r in results] == [
        (f"{name}/clauses", "proved") for name in sorted(CONTROL.instructions)]


@pytest.mark.parametrize("clauses, problem", [
    # leaving a loop and "the test passes" overlap where the innermost construct is a loop
    ((("breakc.a", "acts and within == 'loop'"), ("breakc.b", "acts"),
      ("breakc.c", "not acts")), "overlap"),
    # nothing says what a breakc inside a switch does
    ((("breakc.a", "acts and within == 'loop'"), ("breakc.c", "not acts")), "no clause"),
    # a breakc never leaves with its test failing: a dead clause
    ((("breakc.a", "acts"), ("breakc.b", "not acts and goes == 'end'"),
      ("breakc.c", "not acts and goes == 'next'")), "can never fire"),
])
def test_a_broken_clause_set_fails(clauses: tuple[tuple[str, str], ...], problem: str) -> None:
    broken = replace(CONTROL.instructions["breakc"],
                     clauses=tuple(clause(cid, when) for cid, when in clauses))
    found = clause_partition(CONTROL, broken, Budget(10_000_000))
    assert found.status == "failed"
    assert problem in found.detail


def test_the_if_sense_read_inverted_is_caught() -> None:
    # Erratum control.if_test_sense: FS 22.7.1 restriction 2 states if_nz true on all-zero
    # bits. A clause that enters the first arm when the bits are zero (with _nz) is not one the
    # effect can produce together with the test: the partition fails.
    inverted = replace(CONTROL.instructions["if"], clauses=(
        clause("if.enters", "goes == 'next' and (cond == 0) == nz"),
        clause("if.to_else", "goes == 'arm'"), clause("if.to_end", "goes == 'end'")))
    found = clause_partition(CONTROL, inverted, Budget(10_000_000))
    assert found.status == "failed"
