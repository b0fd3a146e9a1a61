"""The oracle as an implementation under test: it answers one concrete state per vector.

The oracle computes acceptance sets; a real implementation returns values. This adapter picks a
deterministic representative of each set: an exact value as is, an undefined component, word or
resource keeps its value from the input state, a masked value its ``value``, and a register pair
that must hold a double NaN the canonical quiet NaN 0x7FF8000000000000.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from sm5.conformance.guards import guard_sides, guards_kept, request_state
from sm5.conformance.interface import Result
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.asm.parser import forget_parsed
from sm5.oracle.errors import Sm5Error
from sm5.oracle.execution.executor import check_instructions, check_state, execute
from sm5.oracle.execution.run import run_program
from sm5.oracle.legality import first_violation
from sm5.oracle.machine.program import Program
from sm5.oracle.machine.state import (
    Accept,
    Execution,
    ExpectedState,
    F16Nan,
    F32Nan,
    F32Range,
    F64Nan,
    F64OneOf,
    MachineState,
    Masked,
    OneOf,
    Resource,
    resource_to_json,
    split64,
)
from sm5.oracle.model.spec import Spec, load_default
from sm5.oracle.rulelang.float32 import F16_QUIET_NAN
from sm5.oracle.rulelang.float64 import F32_QUIET_NAN, QUIET_NAN
from sm5.vectors.format import Vector

#: What legality reads of a state's views: (register, bound format, has a hidden counter).
Formats = tuple[tuple[str, str, bool], ...]
#: What ``check_state`` reads of a state: its views' (register, kind, stride, count, words,
#: format), its registers and the invocation.
Shape = tuple[tuple[tuple[str, str, int, int, int, str], ...], tuple[str, ...], str]


def rejection(program: Program, target: str, runtime: str, formats: Formats
              ) -> tuple[str, str] | None:
    """(rule id, text) of the first legality rule the instance breaks, or None.

    Legality depends on the program, the context and, of the state, only the formats bound to
    typed views and which views have a hidden counter; it is the costly half of an execution,
    and golden vectors share programs, so it is computed once per distinct key (`_Plan`).
    (``test_conformance_golden`` checks on every golden vector that this path and
    ``sm5.oracle.execution.executor.execute`` agree.)
    """
    bound = MachineState({}, {name: Resource("typed" if fmt else "structured", (), format=fmt,
                                             counter=0 if counter else None)
                              for name, fmt, counter in formats})
    rule = first_violation(program, target, runtime, bound)
    return None if rule is None else (rule.id, rule.text)


@dataclass(frozen=True)
class _Plan:
    """What every execution of one program needs, worked out once per distinct program text:
    the parsed program, whether the interpreter can run it (every instruction specified), and
    memos of the legality verdict per (target, runtime, formats) and of the state shapes
    checked per target."""

    program: Program
    runnable: bool
    spec: Spec
    verdicts: dict[tuple[str, str, Formats], tuple[str, str] | None] = \
        field(default_factory=dict, compare=False)
    shapes: set[tuple[Shape, str]] = field(default_factory=set, compare=False)


@lru_cache(maxsize=16384)
def _plan(program: tuple[str, ...]) -> _Plan:
    parsed_program = parse_vector_program(program)
    spec = load_default()
    try:
        check_instructions(parsed_program, spec)
    except Sm5Error:
        return _Plan(parsed_program, False, spec)
    return _Plan(parsed_program, True, spec)


def _check_shape(program: Program, shape: Shape, target: str) -> None:
    """``sm5.oracle.execution.executor.check_state`` reads only the shape of the state: checked once
    per (program, shape, target); a failure raises (and is not remembered)."""
    resources, registers, invocation = shape
    state = MachineState(dict.fromkeys(registers, (0, 0, 0, 0)),
                         {name: Resource(kind, (0,) * words, stride, count, fmt)
                          for name, kind, stride, count, words, fmt in resources}, invocation)
    spec = load_default()
    check_state(program, state, spec, spec.model.target(target).stage)


def _shape(state: MachineState) -> Shape:
    return (tuple(sorted((k, r.kind, r.stride, r.count, len(r.data), r.format)
                         for k, r in state.resources.items())),
            tuple(sorted(state.registers)), state.invocation)


def oracle_execution(vector: Vector, state: MachineState) -> Execution:
    """``sm5.oracle.execution.executor.execute`` on the vector, with what depends only on the
    program (and the context, the formats or the shape of the state) looked up in its plan."""
    plan = _plan(vector.program)
    formats = tuple(sorted((k, r.format, r.counter is not None)
                           for k, r in state.resources.items()))
    key = (vector.target, vector.runtime, formats)
    try:
        broken = plan.verdicts[key]
    except KeyError:
        broken = plan.verdicts[key] = rejection(plan.program, vector.target, vector.runtime,
                                                formats)
    if broken is not None:
        return Execution((plan.spec.model.rejected_outcome,), (), None, rule=broken[0],
                         reason=broken[1])
    if not plan.runnable:  # an instruction the interpreter cannot run: the executor says so
        return execute(plan.program, state, vector.target, vector.runtime)
    checked = (_shape(state), vector.target)
    if checked not in plan.shapes:
        _check_shape(plan.program, checked[0], vector.target)
        plan.shapes.add(checked)
    return run_program(plan.program, state, plan.spec)


def clear_caches() -> None:
    """Forget every parsed line and program, legality verdict, state shape and guard, as in a
    fresh process (for benchmarks)."""
    forget_parsed()
    for cached in (_plan, guard_sides):
        cached.cache_clear()


class OracleImplementation:
    """The executable specification itself (executes and validates)."""

    name = "oracle"
    capabilities = frozenset({"executes", "validates"})

    def run(self, vector: Vector) -> Result:
        try:
            state = request_state(vector)
            execution = oracle_execution(vector, state)
        except Sm5Error as exc:
            return Result.error(f"the oracle cannot run this vector: {exc}")
        if execution.rejected:
            return Result.rejected(f"{execution.rule}: {execution.reason}")
        assert execution.state is not None
        # The spec never touches memory beside a view: its guard words go back unchanged.
        return Result.of_state(guards_kept(vector.state,
                                           representative(execution.state, state)))


def representative(expected: ExpectedState, before: MachineState) -> dict[str, Any]:
    """One concrete state inside ``expected`` (JSON form), undefined parts taken from ``before``."""
    out: dict[str, Any] = {}
    for key, accepts in expected.registers.items():
        out[key] = list(accepts) if _exact(accepts) else \
            _register(accepts, before.registers.get(key, (0, 0, 0, 0)))
    for key, res in expected.resources.items():
        original = before.resources[key]
        if res is None:
            out[key] = resource_to_json(original)
            continue
        if res.words is original.data:  # not written: the words as they were
            data = list(original.data)
        elif _exact(res.words):
            data = list(cast(tuple[int, ...], res.words))  # every word exact
        else:
            data = [_pick(w, original.data[i]) for i, w in enumerate(res.words)]
        body = resource_to_json(original, data)
        if res.has_counter:
            body["counter"] = _pick(res.counter, original.counter or 0)
        out[key] = body
    if expected.invocation != "active":
        out["invocation"] = expected.invocation
    return out


def _exact(accepts: tuple[Accept, ...]) -> bool:
    """Every acceptance set is one exact value (checked at C speed: memories can be large)."""
    return not accepts or set(map(type, accepts)) == {int}


def _register(accepts: tuple[Accept, ...], before: tuple[int, ...]) -> list[int]:
    values = [_pick(a, before[i]) for i, a in enumerate(accepts)]
    for lo in (0, 2):
        if isinstance(accepts[lo], F64Nan) or isinstance(accepts[lo + 1], F64Nan):
            values[lo], values[lo + 1] = split64(QUIET_NAN)
        pair = accepts[lo] if isinstance(accepts[lo], F64OneOf) else accepts[lo + 1]
        if isinstance(pair, F64OneOf):
            values[lo], values[lo + 1] = split64(pair.values[0])
    return values


def _pick(accept: Accept, before: int) -> int:
    if accept is None:
        return before
    if isinstance(accept, Masked):
        return accept.value
    if isinstance(accept, F64Nan | F64OneOf):
        return 0  # replaced by the canonical NaN or the first double for the whole pair
    if isinstance(accept, OneOf):
        return accept.values[0]
    if isinstance(accept, F32Nan):
        return F32_QUIET_NAN
    if isinstance(accept, F16Nan):
        return F16_QUIET_NAN
    if isinstance(accept, F32Range):
        return accept.lo
    return accept

