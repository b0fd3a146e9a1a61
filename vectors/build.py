"""Case -> Vector: run the oracle and record what it says.

Expectations are never written by hand: the outcomes, the expected state (acceptance sets), the
clauses fired and, for an illegal instance, the rule come from ``sm5.oracle.execution.executor``.
Every non-exact acceptance set is tied to the clauses that allow it (``expect.allowed_by``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sm5.oracle.asm import parse_program, parse_vector_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.legality import violations
from sm5.oracle.legality.structure import match_structure
from sm5.oracle.machine.program import COMPONENTS, register_file
from sm5.oracle.machine.state import (
    UNWRITTEN_TEMPS,
    UNWRITTEN_TEMPS_ERRATUM,
    Execution,
    ExpectedState,
    expected_to_json,
    state_from_json,
    step_to_json,
)
from sm5.oracle.model.control import LEAVE, RETURN, SELECT
from sm5.oracle.model.spec import Spec
from sm5.vectors.format import Vector
from sm5.vectors.instances import Case


def run(case: Case, spec: Spec) -> Execution:
    program = case.parsed if case.parsed is not None else parse_vector_program(case.program)
    state = case.machine if case.machine is not None else state_from_json(case.state)
    return execute(program, state, target=case.target, runtime=case.runtime, spec=spec)


def _outcomes_where(spec: Spec, effects: Sequence[str], scopes: Sequence[str]) -> frozenset[str]:
    """The names of the model's outcomes of those effects and scopes (``spec/model.yaml``)."""
    return frozenset(o.name for o in spec.model.outcomes
                     if o.effect in effects and o.scope in scopes)


def memory_voiding(spec: Spec) -> frozenset[str]:
    """Outcomes that leave memory unwritten or undefined (an out-of-bounds access)."""
    return _outcomes_where(spec, ("unchanged", "undefined"),
                           ("memory", "resource", "shared_memory"))


def allowed_by(state: ExpectedState, clauses: Sequence[str], spec: Spec, *,
               flowing: bool = False, unwritten: bool = False) -> dict[str, list[str]]:
    """For every non-exact location (``r1.x``, ``u0``, ``u0[3]``), the fired clauses whose
    outcomes allow it, by the model's outcome table: an undefined component by an outcome that
    undefines destinations, an undefined resource or word by one that undefines its resource
    (all shared memory, for a shared-memory file), a constrained one by a constraining outcome.

    ``flowing``: a program's state, where a value one instruction left undefined or
    constrained may be moved anywhere by the next: any undefining outcome allows an undefined
    location, and any undefining or constraining one a constrained location (a few values
    joined from several runs).

    ``unwritten``: the program starts with undefined temps (a register the state does not give,
    an x# element): where no clause allows an undefined location, the erratum that leaves them
    undefined does."""
    undefined = ("undefined",)
    destination = _outcomes_where(spec, undefined, ("destination",))
    resource = _outcomes_where(spec, undefined, ("resource",))
    shared = _outcomes_where(spec, undefined, ("shared_memory",))
    constrained = _outcomes_where(spec, ("constrained",), ("destination",))
    if flowing:
        anything = destination | resource | shared
        destination = resource = shared = anything
        constrained = constrained | anything
    outcomes = {cid: _clause_outcomes(spec, cid) for cid in clauses}

    def because(allowing: frozenset[str]) -> list[str]:
        found = [cid for cid in clauses if allowing.intersection(outcomes[cid])]
        return found or ([UNWRITTEN_TEMPS_ERRATUM] if unwritten else [])

    out: dict[str, list[str]] = {}
    for name, comps in state.registers.items():
        for letter, accept in zip(COMPONENTS, comps, strict=True):
            if accept is None:
                out[f"{name}.{letter}"] = because(destination)
            elif not isinstance(accept, int):
                out[f"{name}.{letter}"] = because(constrained)
    files = spec.model.shared_memory_files
    for name, res in state.resources.items():
        whole = shared if register_file(name) in files else resource
        if res is None:
            out[name] = because(whole)
            continue
        for i, word in enumerate(res.words):
            if word is None:
                out[f"{name}[{i}]"] = because(whole)
            elif not isinstance(word, int):
                out[f"{name}[{i}]"] = because(constrained)
    return out


def _clause_outcomes(spec: Spec, clause_id: str) -> tuple[str, ...]:
    """The outcomes a clause can give; none for a flow-control clause (it moves the program
    counter, never a word)."""
    name = clause_id.split(".", 1)[0]
    if name in spec.control.instructions:
        return ()
    return spec.instruction(name).clause(clause_id).outcomes


def expect_json(execution: Execution, spec: Spec) -> dict[str, Any]:
    if execution.rejected:
        return {"outcomes": [spec.model.rejected_outcome], "rule": execution.rule}
    assert execution.state is not None
    doc: dict[str, Any] = {"outcomes": list(execution.outcomes),
                           "state": expected_to_json(execution.state)}
    because = allowed_by(execution.state, execution.clauses, spec,
                         flowing=len(execution.steps) > 1,
                         unwritten=UNWRITTEN_TEMPS in execution.facts)
    if because:
        doc["allowed_by"] = because
    return doc


def broken_rules(case: Case, spec: Spec) -> tuple[str, ...]:
    program = case.parsed if case.parsed is not None else parse_vector_program(case.program)
    state = case.machine if case.machine is not None else state_from_json(case.state)
    return tuple(r.id for r in violations(program, case.target, case.runtime, state, spec))


def derived_flags(case: Case, execution: Execution, broken: Sequence[str], spec: Spec
                  ) -> set[str]:
    flags: set[str] = set()
    if execution.rejected:
        flags.add("must-reject")
        if len(broken) > 1:
            flags.add("multi-rule")
        return flags
    final = execution.state.invocation if execution.state is not None else None
    inactive = "invocation" in case.state or final != spec.model.invocation_states[0]
    flags.update(structure_flags(case, spec))
    flags.update(execution.facts)
    if inactive:
        flags.add("inactive")
    elif memory_voiding(spec).intersection(execution.outcomes):
        flags.add("oob")
    return flags


def structure_flags(case: Case, spec: Spec) -> set[str]:
    """Flags of what a program's flow control is (a real implementation may read a program
    differently for them, whatever its values): a conditional break in a switch; a switch whose
    last block runs into its end; code after an untested return of the main program that stands
    in no block."""
    control = spec.control
    program = case.parsed if case.parsed is not None else \
        parse_program(list(case.program), spec=spec)
    code = program.instructions
    if not any(i.name in control.instructions for i in code):
        return set()
    structure = match_structure(program, control, None, spec.instructions.__contains__)
    flags: set[str] = set()
    main_ends = len(structure.in_main) if all(structure.in_main) else \
        structure.in_main.index(False)
    for k, ins in enumerate(code):
        effect = control.effect_of(ins.name)
        tested = effect is not None and control.instructions[ins.name].test
        if effect == LEAVE and tested and structure.within.get(k) in control.selects:
            flags.add(CONDITIONAL_BREAK_IN_SWITCH)
        if (effect == RETURN and not tested and structure.in_main[k] and k + 1 < main_ends
                and not any(p < k < e for p, e in structure.end.items())):
            flags.add(CODE_AFTER_RETURN)
        if effect == SELECT and k in structure.end:
            last = code[structure.end[k] - 1]
            last_effect = control.effect_of(last.name)
            if last_effect != LEAVE or control.instructions[last.name].test:
                flags.add(SWITCH_FALLS_OUT)
    return flags


#: The structure flags (their meanings: spec/schema/vector.schema.json).
CONDITIONAL_BREAK_IN_SWITCH = "conditional-break-in-switch"
SWITCH_FALLS_OUT = "switch-falls-out"
CODE_AFTER_RETURN = "code-after-return"


def _short(clause_id: str) -> str:
    return clause_id.split(".", 1)[1] if "." in clause_id else clause_id


def reason_of(case: Case, execution: Execution, broken: Sequence[str]) -> str:
    if execution.rejected:
        text = f"breaks {execution.rule}: {execution.reason}"
        if len(broken) > 1:
            text += f" (also breaks {', '.join(r for r in broken if r != execution.rule)})"
    else:
        text = ", ".join(dict.fromkeys(_short(c) for c in execution.clauses))
        text += " -> " + " + ".join(execution.outcomes)
    return f"{text}; {case.note}" if case.note else text


def zeroed_resources(state: Mapping[str, Any]) -> dict[str, Any]:
    """A must-reject vector's state with every resource word 0: an implementation refuses the
    program before reading a word, so the words only cost bytes (a resource keeps its length,
    which says whether a view is bound, and every field a binding rule reads)."""
    out: dict[str, Any] = {}
    for name, value in state.items():
        if isinstance(value, Mapping) and "data" in value:
            value = {**value, "data": [0] * len(value["data"])}
        out[name] = value
    return out


def to_vector(case: Case, vector_id: str, spec: Spec, subject: tuple[int, ...] | None = None
              ) -> Vector:
    """The vector of a case, every expectation from the oracle. ``subject``: a program vector
    (format version 2), about the instructions at those positions; it records its steps."""
    execution = run(case, spec)
    broken = broken_rules(case, spec) if execution.rejected else ()
    flags = sorted(set(case.flags) | derived_flags(case, execution, broken, spec))
    clauses = broken if execution.rejected else execution.clauses
    state = zeroed_resources(case.state) if execution.rejected else dict(case.state)
    steps = (tuple(step_to_json(s) for s in execution.steps)
             if subject is not None and execution.steps else None)
    return Vector(vector_id, case.program, case.target, case.runtime, state,
                  expect_json(execution, spec), tuple(clauses), tuple(flags),
                  reason_of(case, execution, broken), _provenance(case.provenance), subject,
                  steps)


def _provenance(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return dict(value) if value is not None else None
