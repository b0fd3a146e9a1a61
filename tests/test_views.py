"""Buffer views beyond their words: the hidden counter of a structured UAV view (state format,
comparison, harness index and read-back, vkd3d's counter descriptor) and the expectations key
that tells an empty view from a non-empty one.

Expected values here are written by hand from the vector format's definition (docs, "Vector
format"), never computed by the code under test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sm5.conformance.compare import state_diffs
from sm5.conformance.expectations import ExpectationError, parse_expectations
from sm5.conformance.vkd3d.adapter import TargetUnavailable, Vkd3dLavapipe, create
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.dxbc.harness import build_harness, decode_state, harness_to_json
from sm5.oracle.errors import StateError
from sm5.oracle.machine.state import (
    expected_from_json,
    expected_to_json,
    state_from_json,
    state_to_json,
)
from sm5.vectors.format import Vector

COUNTED = {"kind": "structured", "stride": 4, "count": 2, "counter": 7, "data": [10, 11]}


def test_counter_round_trips_through_the_state_json() -> None:
    state = state_from_json({"u0": COUNTED})
    assert state.resources["u0"].counter == 7
    assert state_to_json(state)["u0"] == COUNTED
    zero = state_from_json({"u0": {**COUNTED, "counter": 0}})
    assert zero.resources["u0"].counter == 0


def test_a_view_without_counter_stays_without_one() -> None:
    doc = {"kind": "structured", "stride": 4, "count": 1, "data": [1]}
    state = state_from_json({"u0": doc})
    assert state.resources["u0"].counter is None
    assert "counter" not in state_to_json(state)["u0"]


@pytest.mark.parametrize(("key", "doc", "message"), [
    ("u0", {"kind": "raw", "data": [1], "counter": 0}, "only a structured view"),
    ("t0", {**COUNTED}, "only a UAV"),
    ("u0", {**COUNTED, "counter": -1}, "unsigned 32-bit"),
    ("u0", {**COUNTED, "counter": 1 << 32}, "unsigned 32-bit"),
])
def test_a_misplaced_or_malformed_counter_is_one_clear_error(key: str, doc: dict[str, Any],
                                                             message: str) -> None:
    with pytest.raises(StateError, match=message) as caught:
        state_from_json({key: doc})
    assert key in (caught.value.where or "")


def test_expected_counter_is_an_acceptance_set() -> None:
    expected = expected_from_json({"u0": {**COUNTED, "counter": None}})
    res = expected.resources["u0"]
    assert res is not None and res.has_counter and res.counter is None
    assert expected_to_json(expected)["u0"]["counter"] is None
    without = expected_from_json({"u0": {"kind": "raw", "data": [1]}}).resources["u0"]
    assert without is not None and not without.has_counter


def test_comparison_reads_the_counter() -> None:
    want = {"u0": {**COUNTED, "counter": 8}}
    assert state_diffs(want, {"u0": {**COUNTED, "counter": 8}}) == ()
    assert state_diffs(want, {"u0": {**COUNTED, "counter": 7}}) == (
        "u0.counter: expected 0x00000008, observed 0x00000007",)
    missing = state_diffs(want, {"u0": {k: v for k, v in COUNTED.items() if k != "counter"}})
    assert missing == ("u0.counter: observed None is not a u32 counter",)
    # Undefined: any counter passes, a missing one does not.
    anything = {"u0": {**COUNTED, "counter": None}}
    assert state_diffs(anything, {"u0": {**COUNTED, "counter": 123}}) == ()


PROGRAM = ("dcl_uav_structured u0, 4", "imm_atomic_alloc r0.x, u0")


def _harness() -> Any:
    state = state_from_json({"r0": [1, 2, 3, 4], "u0": COUNTED})
    return build_harness(parse_vector_program(PROGRAM), state, runtime="11.0")


def test_the_dxbc_index_gives_the_initial_count() -> None:
    doc = harness_to_json(_harness())
    assert doc["bindings"]["u0"]["counter"] == 7
    raw = build_harness(parse_vector_program(("dcl_uav_raw u0", "ld_raw r0.x, l(0), u0")),
                        state_from_json({"r0": [0, 0, 0, 0], "u0": {"kind": "raw",
                                                                      "data": [5]}}),
                        runtime="11.0")
    assert "counter" not in harness_to_json(raw)["bindings"]["u0"]


def test_decoding_needs_the_final_count_of_every_counted_view() -> None:
    h = _harness()
    final = decode_state(h, h.state_words, {"u0": [10, 11]}, {"u0": 8})
    assert final.resources["u0"].counter == 8
    with pytest.raises(StateError, match="hidden counter"):
        decode_state(h, h.state_words, {"u0": [10, 11]})


def _extent_entry(extent: str) -> Any:
    return parse_expectations([{"name": "e", "status": "xfail", "reason": "r",
                                "match": {"operands": {"role": "memory", "extent": extent}}}],
                              "x.yaml").entries[0].match


def _ld_typed(data: list[int]) -> Vector:
    return Vector("ld_uav_typed/boundary/0000",
                  ("dcl_uav_typed_buffer (uint,uint,uint,uint) u0",
                   "ld_uav_typed r0.xyzw, l(0, 0, 0, 0), u0.xyzw"),
                  "cs_5_0", "11.0",
                  {"r0": [0, 0, 0, 0], "u0": {"kind": "typed", "format": "R32_UINT",
                                              "data": data}}, {})


def test_extent_tells_an_empty_view_from_a_non_empty_one() -> None:
    empty, full = _ld_typed([]), _ld_typed([5])
    assert _extent_entry("empty").holds(empty) and not _extent_entry("empty").holds(full)
    assert _extent_entry("nonempty").holds(full) and not _extent_entry("nonempty").holds(empty)
    with pytest.raises(ExpectationError, match="extent"):
        _extent_entry("zero")


# --------------------------------------------------------------------------- vkd3d


@pytest.fixture(scope="module")
def adapter() -> Iterator[Vkd3dLavapipe]:
    try:
        impl = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    yield impl
    impl.close()


@pytest.mark.parametrize(("declaration", "instruction", "before", "after", "returned"), [
    ("dcl_uav_structured", "imm_atomic_alloc", 7, 8, 7),
    ("dcl_uav_structured_opc", "imm_atomic_alloc", 0xFFFFFFFF, 0, 0xFFFFFFFF),
    ("dcl_uav_structured_opc", "imm_atomic_consume", 7, 6, 6),
    ("dcl_uav_structured", "imm_atomic_consume", 0, 0xFFFFFFFF, 0xFFFFFFFF),
])
def test_vkd3d_reads_and_writes_the_counter_buffer(adapter: Vkd3dLavapipe, declaration: str,
                                                   instruction: str, before: int, after: int,
                                                   returned: int) -> None:
    state = {"r0": [1, 2, 3, 4], "u0": {**COUNTED, "counter": before}}
    vector = Vector(f"{instruction}/hand/0000",
                    (f"{declaration} u0, 4", f"{instruction} r0.y, u0"), "cs_5_0", "11.0",
                    state, {})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["u0"] == {**COUNTED, "counter": after}
    assert result.state["r0"] == [1, returned, 3, 4]
