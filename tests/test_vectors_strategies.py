"""The hypothesis strategies: legal instances are legal, illegal ones break one rule, states
fire their clause, and every case runs through the oracle as the text says.

The default run checks one instruction per shape of clause groups (``spec_facts.one_per_shape``:
16 of the 48, whose strategies are the shared ones the rest use too); the others are ``slow``
tests, run in CI's separate step."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_facts import one_per_shape

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.build import run
from sm5.vectors.instances import Case, Shape
from sm5.vectors.realize import assemble
from sm5.vectors.shapes import violations
from sm5.vectors.strategies import Illegal, cases, illegal_instances, legal_instances, states_for

SPEC = load_default()
DEFAULT_RUN = frozenset(one_per_shape(SPEC))


def _param(value: str, name: str) -> object:
    """``value`` as a test parameter, ``slow`` unless ``name`` is checked by the default run."""
    return value if name in DEFAULT_RUN else pytest.param(value, marks=pytest.mark.slow)


NAMES = [_param(name, name) for name in sorted(SPEC.instructions)]
CLAUSES = [_param(c.id, c.id.split(".")[0]) for c in SPEC.all_clauses()]
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.mark.parametrize("name", NAMES)
def test_legal_instances_are_legal(name: str) -> None:
    @FAST
    @given(legal_instances(name), st.data())
    def check(shape: Shape, data: st.DataObject) -> None:
        assert violations(SPEC, shape) == ()
        case = assemble(SPEC, shape, _chooser(data))
        assert not run(case, SPEC).rejected

    check()


@pytest.mark.parametrize("name", NAMES)
def test_illegal_instances_break_exactly_one_rule(name: str) -> None:
    @FAST
    @given(illegal_instances(name), st.data())
    def check(found: Illegal, data: st.DataObject) -> None:
        case = assemble(SPEC, found.shape, _chooser(data))
        program = parse_program(list(case.program))
        execution = execute(program, state_from_json(case.state), case.target, case.runtime)
        assert execution.rule == found.rule

    check()


@pytest.mark.parametrize("clause", CLAUSES)
def test_states_fire_their_clause(clause: str) -> None:
    name = clause.split(".")[0]

    @settings(max_examples=15, deadline=None)
    @given(states_for(name, clause))
    def check(case: Case) -> None:
        assert clause in run(case, SPEC).clauses

    check()


@pytest.mark.parametrize("name", NAMES)
def test_cases_say_what_they_run(name: str) -> None:
    """The program text parses back to the AST the case was built from, and the state JSON
    reads back as the machine state the generator executed."""

    @FAST
    @given(cases(name))
    def check(case: Case) -> None:
        assert parse_program(list(case.program)).lines == case.parsed.lines  # type: ignore[union-attr]
        if case.machine is not None:
            assert state_from_json(case.state) == case.machine
        run(case, SPEC)

    check()


def _chooser(data: st.DataObject):  # type: ignore[no-untyped-def]
    from sm5.vectors.strategies import DrawChooser

    return DrawChooser(data.draw)
