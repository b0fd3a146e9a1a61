"""Does a vector tell an instruction from a sibling? The sibling's semantics runs on the vector's
state through the interpreter (the spec with the instruction replaced by the sibling); the
vector tells them apart when the sibling's final state is exact and some word of it lies
outside the vector's acceptance sets. Generation fails when no vector of a file tells an
instruction from one of its siblings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.execution.executor import execute
from sm5.oracle.execution.interpreter import members
from sm5.oracle.machine.state import (
    PAIR_FORMS,
    Accept,
    ExpectedState,
    F16Nan,
    F32Nan,
    F32Range,
    OneOf,
    accepts,
    expected_from_json,
    f32_order,
    state_from_json,
)
from sm5.oracle.model.siblings import Sibling
from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors.format import Vector
from sm5.vectors.shapes import GenerationError


def with_sibling(spec: Spec, name: str, sibling: Sibling) -> Spec:
    """``spec`` with instruction ``name`` computing its sibling's kernel."""
    return replace(spec, instructions={**spec.instructions, name: sibling.spec})


@cache
def default_variant(name: str, sibling_id: str) -> Spec | None:
    """The built-in spec with ``name`` computing its sibling ``sibling_id``, built once (None
    where ``name`` is not specified or lists no such sibling)."""
    spec = load_default()
    instruction = spec.instructions.get(name)
    sibling = next((s for s in instruction.siblings if s.id == sibling_id), None) \
        if instruction is not None else None
    return with_sibling(spec, name, sibling) if sibling is not None else None


def sibling_state(vector: Vector, variant: Spec) -> ExpectedState | None:
    """The sibling's final state on the vector (None: rejected or refused). Words the sibling
    leaves constrained (a NaN of any payload, one of a few values) stay so: only its exact words
    can show a difference."""
    if vector.rejected:
        return None
    try:
        program = parse_vector_program(tuple(vector.program))
        state = state_from_json(vector.state)
        execution = execute(program, state, vector.target, vector.runtime, variant)
    except Sm5Error:
        return None
    return execution.state


def _shown_outside(want: tuple[Accept, ...], got: Sequence[Accept]) -> bool:
    """Some component of ``got`` lies outside ``want`` whatever value the sibling gives it
    there: an exact word outside, or a few values (``one_of``) all outside. A class the sibling
    leaves open (any NaN, anything) shows nothing; a form judging a double pair counts only
    where both halves are exact."""
    for i, accept in enumerate(want):
        if isinstance(accept, PAIR_FORMS):
            lo, hi = got[i & ~1], got[i | 1]
            if isinstance(lo, int) and isinstance(hi, int) and not accepts(accept, lo, hi):
                return True
            continue
        if _all_outside(accept, got[i]):
            return True
    return False


def outside(expected: ExpectedState, observed: ExpectedState) -> bool:
    """Some word of ``observed`` lies outside ``expected``'s acceptance sets whatever value the
    sibling gives it (its exact words, and its words of a few values)."""
    for name, want in expected.registers.items():
        got: Any = observed.registers.get(name)
        if got is None or _shown_outside(want, got):
            return True
    for name, want_res in expected.resources.items():
        got_res = observed.resources.get(name)
        if want_res is None or got_res is None:
            continue
        if any(_all_outside(w, g) for w, g in zip(want_res.words, got_res.words, strict=True)):
            return True
        if want_res.has_counter and _all_outside(want_res.counter, got_res.counter):
            return True
    return False


def _all_outside(want: Accept, got: Accept) -> bool:
    """Every value the sibling may give the word lies outside ``want``: a few values, each
    outside; a float32 range disjoint from ``want`` (a range, a few values, any NaN); a NaN
    class (any float32 or half NaN) where ``want`` holds no value of that class. Anything else
    (a word the sibling leaves free) shows nothing."""
    values = members(got)
    if values is not None:
        return not any(accepts(want, v) for v in values)
    if isinstance(got, F32Range):
        if isinstance(want, F32Range):
            return (f32_order(got.hi) < f32_order(want.lo)
                    or f32_order(want.hi) < f32_order(got.lo))
        if isinstance(want, F32Nan):
            return True  # a range holds no NaN
        fixed = members(want)
        return fixed is not None and not any(accepts(got, v) for v in fixed)
    if isinstance(got, F32Nan) and isinstance(want, F32Range):
        return True  # a range holds no NaN
    if isinstance(got, F32Nan | F16Nan):
        fixed = (want,) if isinstance(want, int) else want.values \
            if isinstance(want, OneOf) else None
        return fixed is not None and not any(accepts(got, v) for v in fixed)
    return False


def tells_apart(vector: Vector, variant: Spec) -> bool:
    final = sibling_state(vector, variant)
    if final is None:
        return False
    return outside(expected_from_json(vector.expect["state"]), final)


def check_siblings(spec: Spec, name: str, vectors: Iterable[Vector]) -> dict[str, str]:
    """The id of a vector telling ``name`` from each of its siblings; raises when a sibling
    stays indistinguishable on every vector."""
    siblings = spec.instruction(name).siblings
    if not siblings:
        return {}
    candidates = [v for v in vectors if not v.rejected]
    # z3's witnesses first: they were found to tell this pair apart.
    candidates.sort(key=lambda v: "z3-witness" not in v.flags)
    found: dict[str, str] = {}
    for sibling in siblings:
        variant = with_sibling(spec, name, sibling)
        hit = next((v.id for v in candidates if tells_apart(v, variant)), None)
        if hit is None:
            raise GenerationError(f"{name}: no vector tells it from its sibling {sibling.id} "
                                  f"({sibling.text})")
        found[sibling.id] = hit
    return found
