"""Programs of several instructions on every path: the oracle, the naive translator behind the
mutants, DXBC through vkd3d-shader on lavapipe, Wine's d3d11 and DXVK.

Each program carries a value from one instruction into the next: an undefined out-of-bounds
structured load stored elsewhere, one of two doubles (drcp's 1-ULP result) multiplied, a zero of
either sign compared, words loaded and stored back and forth. The expectation is the oracle's
(the reference); the real implementations are judged against it as in a conformance run, and
skip, saying why, where they are not installed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sm5.conformance.compare import judge
from sm5.conformance.interface import Implementation
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.build import expect_json
from sm5.vectors.format import Vector

EXTENDED = "dcl_globalFlags enableDoublePrecisionFloatOps | enable11_1DoubleExtensions"
DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"

#: (id, program, state, runtime, uses doubles)
PROGRAMS = (
    ("undefined_load_stored",
     ("dcl_uav_structured u0, 8", "dcl_uav_raw u1",
      "ld_structured r0.xy, l(0), l(4), u0.xyzw", "store_raw u1.xyz, l(4), r0.xyxy"),
     {"r0": [7, 7, 7, 7], "u0": {"kind": "structured", "stride": 8, "count": 2,
                                 "data": [1, 2, 3, 4]},
      "u1": {"kind": "raw", "data": [9, 9, 9, 9, 9]}}, "11.0", False),
    ("one_of_two_doubles_multiplied",
     (EXTENDED, "drcp r0.xy, r1.xyxy", "dmul r2.xy, r0.xyxy, r3.xyxy"),
     {"r0": [0, 0, 0, 0], "r1": [0, 0x40080000, 0, 0], "r2": [5, 5, 5, 5],
      "r3": [0, 0x40000000, 0, 0]}, "11.1", True),
    ("either_zero_compared",
     (DOUBLES, "dmin r0.xy, r1.xyxy, r1.zwzw", "deq r2.x, r0.xyxy, r3.xyxy"),
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0x80000000], "r2": [3, 3, 3, 3],
      "r3": [0, 0, 0, 0]}, "11.0", True),
    ("words_back_and_forth",
     ("dcl_uav_raw u0", "dcl_uav_raw u1", "ld_raw r0.xy, l(4), u0.xyxx",
      "store_raw u1.xy, l(0), r0.yxxx", "ld_raw r1.x, l(0), u1.yxxx",
      "store_raw u0.x, l(0), r1.x"),
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [1, 2, 3]},
      "u1": {"kind": "raw", "data": [0, 0]}}, "11.0", False),
)


def vectors() -> Iterator[tuple[Vector, bool]]:
    spec = load_default()
    for name, lines, state, runtime, doubles in PROGRAMS:
        execution = execute(parse_program(list(lines)), state_from_json(state), "cs_5_0",
                            runtime)
        assert len(execution.steps) == len(lines) - sum(x.startswith("dcl_") for x in lines)
        yield (Vector(f"program/straight_line/{name}", lines, "cs_5_0", runtime, state,
                      expect_json(execution, spec)), doubles)


def run_all(impl: Implementation, *, doubles_optional: bool) -> dict[str, str]:
    verdicts = {}
    for vector, doubles in vectors():
        verdict = judge(vector, impl.run(vector))
        if doubles and doubles_optional and verdict.status == "unsupported":
            continue  # a device without doubles
        verdicts[vector.id] = f"{verdict.status}: {verdict.reason} {verdict.diffs}"
    return verdicts


def test_the_oracle_answers_its_own_expectation() -> None:
    verdicts = run_all(OracleImplementation(), doubles_optional=False)
    assert len(verdicts) == len(PROGRAMS)
    assert all(v.startswith("pass") for v in verdicts.values()), verdicts


def test_the_naive_translator_runs_every_instruction_it_implements() -> None:
    naive = NaiveTranslator()
    statuses = {v.id: judge(v, naive.run(v)).status for v, _ in vectors()}
    assert statuses["program/straight_line/undefined_load_stored"] == "pass"
    assert statuses["program/straight_line/words_back_and_forth"] == "pass"
    # the double arithmetic it does not implement is unsupported, never a failure
    assert statuses["program/straight_line/one_of_two_doubles_multiplied"] == "unsupported"


def _real(name: str) -> Implementation:
    """The real implementation ``name``; the test skips, saying why, where it is absent."""
    if name == "vkd3d":
        from sm5.conformance.vkd3d import adapter as vkd3d

        try:
            return vkd3d.create()
        except vkd3d.TargetUnavailable as exc:
            pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    from sm5.conformance.d3d11 import adapter as d3d11

    try:
        return d3d11.create(name.partition(":")[2])
    except d3d11.TargetUnavailable as exc:
        pytest.skip(f"{name} under Wine unavailable: {exc}")


@pytest.mark.parametrize(("name", "doubles_optional"), [
    ("vkd3d", False), ("d3d11", True), ("d3d11:dxvk", False)])
def test_a_real_implementation_runs_programs(name: str, doubles_optional: bool) -> None:
    impl = _real(name)
    try:
        verdicts = run_all(impl, doubles_optional=doubles_optional)
    finally:
        impl.close()  # type: ignore[attr-defined]
    assert len(verdicts) >= 2  # the programs without doubles run on every device
    assert all(v.startswith("pass") for v in verdicts.values()), verdicts
