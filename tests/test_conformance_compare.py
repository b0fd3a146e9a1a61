"""The judge: verdicts and per-component diffs, written out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from sm5.conformance.compare import judge, state_diffs
from sm5.conformance.expectations import Expectation, Expectations
from sm5.conformance.interface import Result
from sm5.vectors.format import Vector

BOTH = frozenset({"executes", "validates"})
EXECUTES = frozenset({"executes"})
VALIDATES = frozenset({"validates"})


def vector(expect: dict[str, Any], vid: str = "store_structured/x/0001") -> Vector:
    return Vector(vid, ("dcl_uav_structured u0, 8", "store_structured u0.x, l(0), l(0), r1.x"),
                  "cs_5_0", "11.0", {}, expect, ("store_structured.uav_structured.in_bounds",))


EXPECT = {"outcomes": ["defined"], "state": {
    "r1": [5, None, {"value": 0x10, "mask": 0xF0}, 7],
    "r2": [{"f64": "nan"}, {"f64": "nan"}, 0, 0],
    "u0": {"kind": "structured", "stride": 8, "count": 1, "data": [2, 3]},
    "u1": None}}
GOOD = {"r1": [5, 123, 0x1F, 7], "r2": [0, 0x7FF80000, 0, 0],
        "u0": {"kind": "structured", "stride": 8, "count": 1, "data": [2, 3]},
        "u1": {"kind": "raw", "data": [9, 9]}}
REJECT = {"outcomes": ["rejected"], "rule": "store_structured.operand.dst0.mask"}


def test_state_inside_every_acceptance_set_passes() -> None:
    verdict = judge(vector(EXPECT), Result.of_state(GOOD))
    assert (verdict.status, verdict.diffs) == ("pass", ())


def test_diff_lines_name_register_component_and_memory_word() -> None:
    bad = {**GOOD, "r1": [6, 0, 0x2F, 7],
           "u0": {"kind": "structured", "stride": 8, "count": 1, "data": [2, 0]}}
    verdict = judge(vector(EXPECT), Result.of_state(bad))
    assert verdict.status == "fail"
    assert verdict.diffs == (
        "r1.x: expected 0x00000005, observed 0x00000006",
        "r1.z: expected 0x00000010 under mask 0x000000f0, observed 0x0000002f",
        "u0[1]: expected 0x00000003, observed 0x00000000",
    )


def test_f64_nan_pair_must_hold_a_nan() -> None:
    bad = {**GOOD, "r2": [0, 0x3FF00000, 0, 0]}  # 1.0, not a NaN
    diffs = judge(vector(EXPECT), Result.of_state(bad)).diffs
    assert diffs == ("r2.x: expected a double NaN in .xy, observed 0x00000000",
                     "r2.y: expected a double NaN in .xy, observed 0x3ff00000")


@pytest.mark.parametrize(("observed", "line"), [
    ({k: v for k, v in GOOD.items() if k != "r1"}, "r1: missing from the observed state"),
    ({**GOOD, "r1": [5, 0, 0x10]}, "r1: observed [5, 0, 16] is not 4 u32 components"),
    ({**GOOD, "r1": [5, True, 0x10, 7]}, "r1: observed [5, True, 16, 7] is not 4 u32 components"),
    ({**GOOD, "u0": {"kind": "structured", "data": [2]}}, "u0: expected 2 words, observed 1"),
    ({**GOOD, "u0": {"kind": "structured", "data": [2, -3]}},
     "u0: observed {'kind': 'structured', 'data': [2, -3]} is not a resource with a list of u32 "
     "words"),
])
def test_malformed_observed_state_is_a_failure(observed: dict[str, Any], line: str) -> None:
    assert state_diffs(EXPECT["state"], observed) == (line,)  # type: ignore[arg-type]


def test_exact_equality_does_not_accept_booleans_for_integers() -> None:
    expect = {"outcomes": ["defined"], "state": {"r0": [1, 0, 0, 0]}}
    assert judge(vector(expect), Result.of_state({"r0": [True, 0, 0, 0]})).status == "fail"


@pytest.mark.parametrize(("result", "status", "fragment"), [
    (Result.rejected("store_structured.operand.dst0.mask: bad mask"), "pass",
     "rejected by rule store_structured.operand.dst0.mask"),
    (Result.rejected("illegal write mask"), "pass",
     "the spec names rule store_structured.operand.dst0.mask; the implementation said: "
     "illegal write mask"),
    (Result.of_state({}), "fail", "was accepted instead of rejected"),
    (Result.unsupported("no validation of masks"), "unsupported", "no validation of masks"),
    (Result.error("the implementation exited with code 3"), "fail", "exited with code 3"),
])
def test_must_reject_vector_on_a_validating_implementation(result: Result, status: str,
                                                             fragment: str) -> None:
    verdict = judge(vector(REJECT), result, capabilities=BOTH)
    assert verdict.status == status
    assert fragment in verdict.reason


def test_capabilities_decide_what_applies() -> None:
    assert judge(vector(REJECT), Result.of_state({}), capabilities=EXECUTES).status == \
        "not-applicable"
    # A validating-only implementation accepts a legal instance without a state: a pass ...
    assert judge(vector(EXPECT), Result.accepted(), capabilities=VALIDATES).status == "pass"
    # ... and rejecting a legal instance is a failure whatever the capabilities.
    verdict = judge(vector(EXPECT), Result.rejected("no"), capabilities=VALIDATES)
    assert (verdict.status, verdict.reason) == ("fail", "a legal instance was rejected: no")
    assert judge(vector(EXPECT), Result.accepted(), capabilities=BOTH).status == "fail"


def test_expectations_turn_failures_into_xfail_and_stale_entries_into_xpass() -> None:
    bad = Result.of_state({**GOOD, "r1": [6, 0, 0x10, 7]})
    strict = Expectations((Expectation("store_structured/x/*", "fail", "known bug",
                                       "https://example.org/1"),))
    loose = Expectations((Expectation("store_structured/x/0001", "xfail", "flaky"),))
    failed = judge(vector(EXPECT), bad, strict)
    assert failed.status == "xfail"
    assert "known bug (https://example.org/1)" in failed.reason
    assert failed.diffs == ("r1.x: expected 0x00000005, observed 0x00000006",)
    assert judge(vector(EXPECT), Result.of_state(GOOD), strict).status == "xpass"
    assert judge(vector(EXPECT), Result.of_state(GOOD), loose).status == "pass"
    assert judge(vector(EXPECT), bad, loose).status == "xfail"


def test_skip_and_unsupported_expectations_need_no_result() -> None:
    never = Result.error("must not be looked at")
    skip = Expectations((Expectation("store_structured/*", "skip", "crashes the host"),))
    unsupported = Expectations((Expectation("store_structured/*", "unsupported", "no UAVs"),))
    assert judge(vector(EXPECT), never, skip).status == "skip"
    assert judge(vector(EXPECT), never, unsupported).status == "unsupported"
