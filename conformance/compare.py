"""Judging one implementation result against one vector: a verdict with per-component diffs.

Without expectations the raw verdict is ``pass``, ``fail``, ``crash``, ``timeout``, ``unsupported``
or ``not-applicable``; ``crash`` and ``timeout`` are failures of their own (as VK-CTS reports them):
the implementation died or gave no answer in time. An expectations entry turns a failure (``fail``,
``crash``, ``timeout``) into ``xfail`` and, for a strict entry (status ``fail``), ``pass`` into
``xpass``. ``skip`` comes only from an expectations entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sm5.conformance.expectations import NONE, Expectation, Expectations
from sm5.conformance.guards import guard_diffs, without_guards
from sm5.conformance.interface import Result
from sm5.oracle.errors import Sm5Error
from sm5.oracle.machine.program import COMPONENTS
from sm5.oracle.machine.state import (
    Accept,
    ExpectedResource,
    F16Nan,
    F32Nan,
    F32Range,
    F64Nan,
    F64OneOf,
    Masked,
    OneOf,
    accepts,
    expected_from_json,
    register_accepts,
)
from sm5.vectors.format import Vector

VerdictStatus = Literal["pass", "fail", "crash", "timeout", "xfail", "xpass", "unsupported",
                        "not-applicable", "skip"]
#: Every verdict status, in report order.
VERDICTS: tuple[VerdictStatus, ...] = ("pass", "fail", "crash", "timeout", "xfail", "xpass",
                                       "unsupported", "not-applicable", "skip")
#: Verdicts that make a run fail.
FAILING: frozenset[str] = frozenset({"fail", "crash", "timeout", "xpass"})
#: Raw verdicts an expectations entry turns into ``xfail``.
FAILURES: frozenset[str] = frozenset({"fail", "crash", "timeout"})


@dataclass(frozen=True)
class Verdict:
    status: VerdictStatus
    reason: str = ""
    diffs: tuple[str, ...] = ()


def applicable(vector: Vector, capabilities: frozenset[str]) -> str | None:
    """Why the vector does not apply to an implementation with these capabilities, or None."""
    if vector.rejected and "validates" not in capabilities:
        return "a must-reject vector and the implementation does not validate"
    if not vector.rejected and not capabilities & {"executes", "validates"}:
        return "the implementation neither executes nor validates"
    return None


def judge(vector: Vector, result: Result, expectations: Expectations = NONE,
          capabilities: frozenset[str] = frozenset({"executes", "validates"}),
          request: Mapping[str, Any] | None = None) -> Verdict:
    """The verdict on ``result``, an implementation's answer to ``vector``.

    ``request`` is the state the implementation was sent (the vector's, with guard words around
    its views: :mod:`sm5.conformance.guards`); when given, the answer must return every guard
    word unchanged and hold no register or resource the request does not have.
    """
    expectation = expectations.lookup(vector)
    early = early_verdict(vector, expectation, capabilities)
    if early is not None:
        return early
    return judge_answer(vector, result, expectation, capabilities, request)


def judge_answer(vector: Vector, result: Result, expectation: Expectation | None,
                 capabilities: frozenset[str], request: Mapping[str, Any] | None = None
                 ) -> Verdict:
    """`judge` for a vector that was sent (`early_verdict` gave None), with its expectation."""
    raw = _rejection_verdict(vector, result) if vector.rejected else \
        _execution_verdict(vector, result, capabilities, request)
    return apply_expectation(raw, expectation)


def verdict_without_running(vector: Vector, expectations: Expectations,
                            capabilities: frozenset[str]) -> Verdict | None:
    """The verdict when the vector must not be sent at all (skipped, unsupported by the
    expectations file, or not applicable to the capabilities), else None."""
    return early_verdict(vector, expectations.lookup(vector), capabilities)


def early_verdict(vector: Vector, expectation: Expectation | None,
                  capabilities: frozenset[str]) -> Verdict | None:
    """`verdict_without_running`, given the vector's expectation (already looked up)."""
    if expectation is not None and expectation.status in ("skip", "unsupported"):
        return Verdict("skip" if expectation.status == "skip" else "unsupported",
                       expectation.describe())
    why_not = applicable(vector, capabilities)
    if why_not is not None:
        return Verdict("not-applicable", why_not)
    return None


def apply_expectation(raw: Verdict, expectation: Expectation | None) -> Verdict:
    if expectation is None or raw.status not in FAILURES | {"pass"}:
        return raw
    note = expectation.describe()
    if raw.status in FAILURES:
        what = raw.reason if raw.status == "fail" else f"{raw.status}: {raw.reason}"
        return Verdict("xfail", f"expected divergence: {note}; {what}", raw.diffs)
    if expectation.status == "fail":
        return Verdict("xpass", f"listed as a known failure ({note}) but passed; remove the "
                       "entry from the expectations file")
    return raw


def _rejection_verdict(vector: Vector, result: Result) -> Verdict:
    rule = str(vector.expect.get("rule", ""))
    if result.status == "rejected":
        if rule and rule not in result.reason:
            return Verdict("pass", f"rejected as expected (the spec names rule {rule}; the "
                           f"implementation said: {_short(result.reason)})")
        return Verdict("pass", f"rejected by rule {rule}")
    if result.status == "unsupported":
        return Verdict("unsupported", result.reason)
    broken = _broken_run(result)
    if broken is not None:
        return broken
    return Verdict("fail", f"an illegal instance (rule {rule}: {vector.reason or 'see spec'}) "
                   "was accepted instead of rejected")


def _execution_verdict(vector: Vector, result: Result, capabilities: frozenset[str],
                       request: Mapping[str, Any] | None) -> Verdict:
    if result.status == "unsupported":
        return Verdict("unsupported", result.reason)
    broken = _broken_run(result)
    if broken is not None:
        return broken
    if result.status == "rejected":
        return Verdict("fail", f"a legal instance was rejected: {_short(result.reason)}")
    if result.state is None:
        if "executes" in capabilities:
            return Verdict("fail", "the implementation returned no state")
        return Verdict("pass", "accepted (validation only)")
    expected = vector.expect.get("state")
    if not isinstance(expected, dict):
        return Verdict("fail", "the vector has no expected state")
    observed = result.state
    outside: tuple[str, ...] = ()
    if request is not None:
        outside = guard_diffs(request, observed, expected)
        observed = without_guards(observed)
    diffs = outside + state_diffs(expected, observed)
    if outside:
        return Verdict("fail", f"{len(outside)} write(s) outside the request's views and "
                       f"registers", diffs)
    if diffs:
        return Verdict("fail", f"{len(diffs)} value(s) outside the acceptance sets", diffs)
    return Verdict("pass")


def _broken_run(result: Result) -> Verdict | None:
    """The verdict on a run that gave no answer: ``crash``, ``timeout`` or (any other error)
    ``fail``; None for an answer."""
    if result.status in ("crash", "timeout"):
        return Verdict(result.status, result.reason)
    if result.status == "error":
        return Verdict("fail", result.reason)
    return None


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# ----------------------------------------------------------------------------------------------
# State comparison


def state_diffs(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per register component or memory word outside its acceptance set.

    The common case, an observed state equal to an all-exact expected one, costs one dict
    comparison per entry; only entries that differ are decoded into acceptance sets.
    """
    lines: list[str] = []
    for key, want in expected.items():
        got = observed.get(key)
        if key == "invocation" or want is None or (want == got and _exact_u32(got)):
            continue
        if got is None:
            lines.append(f"{key}: missing from the observed state")
            continue
        lines.extend(_entry_diffs(key, want, got))
    return tuple(lines)


def _exact_u32(value: Any) -> bool:
    """An observed entry made only of u32 integers (equal to its expectation: it passes)."""
    if isinstance(value, dict):
        value = value.get("data")
    return _u32_list(value)


def _entry_diffs(key: str, want: Any, got: Any) -> list[str]:
    try:
        decoded = expected_from_json({key: want}, where="expect.state")
    except Sm5Error as exc:
        return [f"{key}: the vector's expected value is malformed: {exc}"]
    if key in decoded.registers:
        return _register_diffs(key, decoded.registers[key], got)
    resource = decoded.resources.get(key)
    return [] if resource is None else _resource_diffs(key, resource, got)


def _register_diffs(key: str, want: Sequence[Accept], got: Any) -> list[str]:
    if not _u32_list(got) or len(got) != 4:
        return [f"{key}: observed {_show(got)} is not 4 u32 components"]
    bad = register_accepts(tuple(want), tuple(got))
    lines: list[str] = []
    for i in bad:
        lines.append(f"{key}.{COMPONENTS[i]}: expected {_describe(want[i], i)}, "
                     f"observed {_hex(got[i])}")
    return lines


def _resource_diffs(key: str, want: ExpectedResource, got: Any) -> list[str]:
    data = got.get("data") if isinstance(got, dict) else None
    if not _u32_list(data):
        return [f"{key}: observed {_show(got)} is not a resource with a list of u32 words"]
    assert isinstance(data, list)
    if len(data) != len(want.words):
        return [f"{key}: expected {len(want.words)} words, observed {len(data)}"]
    lines = [f"{key}[{i}]: expected {_describe(w, i)}, observed {_hex(data[i])}"
             for i, w in enumerate(want.words) if not accepts(w, data[i])]
    if want.has_counter:
        got_counter = got.get("counter") if isinstance(got, dict) else None
        if not isinstance(got_counter, int) or not _u32_list([got_counter]):
            lines.append(f"{key}.counter: observed {_show(got_counter)} is not a u32 counter")
        elif not accepts(want.counter, got_counter):
            lines.append(f"{key}.counter: expected {_describe(want.counter, 0)}, observed "
                         f"{_hex(got_counter)}")
    return lines


def _describe(accept: Accept, index: int) -> str:
    if isinstance(accept, Masked):
        return f"{_hex(accept.value)} under mask {_hex(accept.mask)}"
    if isinstance(accept, F64Nan):
        pair = "xy" if index < 2 else "zw"
        return f"a double NaN in .{pair}"
    if isinstance(accept, F64OneOf):
        pair = "xy" if index < 2 else "zw"
        return f"one of the doubles {', '.join(_hex(v) for v in accept.values)} in .{pair}"
    if isinstance(accept, OneOf):
        return f"one of {', '.join(_hex(v) for v in accept.values)}"
    if isinstance(accept, F32Nan):
        return "a float32 NaN"
    if isinstance(accept, F16Nan):
        return "a half NaN in the low 16 bits, the high 16 bits 0"
    if isinstance(accept, F32Range):
        return f"a float32 from {_hex(accept.lo)} to {_hex(accept.hi)}"
    if accept is None:
        return "any value"
    return _hex(accept)


def _u32_list(value: Any) -> bool:
    # set/map/min/max run at C speed: this check sits on the hot path of every vector.
    if not isinstance(value, list):
        return False
    if not value:
        return True
    return set(map(type, value)) == {int} and min(value) >= 0 and max(value) <= 0xFFFFFFFF


def _hex(value: int) -> str:
    return f"0x{value:08x}"


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
