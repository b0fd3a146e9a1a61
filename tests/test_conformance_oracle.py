"""The oracle as an implementation: one concrete state per vector, chosen by hand-stated rules."""

from __future__ import annotations

from typing import Any

from conformance_cases import DOUBLES, structured, vector

from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.run import run_vector

ORACLE = OracleImplementation()


def answer(program: list[str], state: dict[str, Any], target: str = "cs_5_0") -> dict[str, Any]:
    result = ORACLE.run(vector("case", program, target, "11.0", state))
    assert result.status == "state", result
    assert result.state is not None
    return dict(result.state)


def test_undefined_resource_keeps_its_input_words() -> None:
    state = {"r0": [0, 0, 0, 0], "r1": [9, 9, 9, 9], "u0": structured(16, 2)}
    out = answer(["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(12), r1.xyzw"],
                 state)
    assert out["u0"] == state["u0"]  # resource_undefined: the input contents


def test_undefined_return_value_keeps_the_register() -> None:
    state = {"r0": [7, 8, 9, 10], "u0": {"kind": "raw", "data": [1, 2]}}
    out = answer(["dcl_uav_raw u0", "imm_atomic_iadd r0.z, u0, l(8), l(1)"], state)
    assert out["r0"] == [7, 8, 9, 10]  # out of bounds: dst0 undefined, memory untouched
    assert out["u0"]["data"] == [1, 2]


def test_constrained_nan_is_the_canonical_quiet_nan() -> None:
    # -src1 on a signalling NaN: "a NaN, bits undefined": the pair holds 0x7FF8000000000000.
    state = {"r0": [0, 0, 0, 0], "r1": [1, 1, 0, 0], "r2": [5, 0x7FF00000, 5, 0x7FF00000],
             "r3": [0, 0, 0, 0]}
    out = answer([DOUBLES, "dmovc r0.xyzw, r1.xyzw, -r2.xyzw, r3.xyzw"], state)
    assert out["r0"] == [0, 0x7FF80000, 0, 0x7FF80000]


def test_masked_value_is_the_value() -> None:
    # _sat of -0.0: a zero of either sign (the sign bit is free); the value chosen is +0.0.
    state = {"r0": [1, 1, 1, 1], "r1": [1, 0, 0, 0], "r2": [0, 0x80000000, 0, 0],
             "r3": [0, 0, 0, 0]}
    out = answer([DOUBLES, "dmovc_sat r0.xy, r1.xyzw, r2.xyzw, r3.xyzw"], state)
    assert out["r0"] == [0, 0, 1, 1]


def test_rejection_names_the_rule() -> None:
    result = ORACLE.run(vector("case", ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
                               "cs_4_1", "11.0", {"r0": [0, 0, 0, 0],
                                                  "u0": {"kind": "raw", "data": [0]}}))
    assert result.status == "rejected"
    assert result.reason.startswith("imm_atomic_iadd.availability.target: ")


def test_a_vector_whose_state_does_not_fit_its_program_is_an_error() -> None:
    v = vector("case", ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"], "cs_5_0",
               "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0]}})
    bad = type(v)(v.id, v.program, v.target, v.runtime, {"r0": [0, 0, 0, 0]}, v.expect)
    verdict = run_vector(ORACLE, bad)
    assert verdict.status == "fail"
    assert "the oracle cannot run this vector" in verdict.reason
    assert "declares u0 but the state has no u0" in verdict.reason
