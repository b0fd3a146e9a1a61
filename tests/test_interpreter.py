"""The program interpreter: values that flow from one instruction into the next.

Every expected state here is written from the sources (FS 18.6.8.3 for out-of-bounds structured
reads, 22.4.11 for store_raw, 22.14.5 for drcp's 1-ULP result, 22.14.2/22.14.3 for the sign of
a zero chosen by dmin/dmax, 22.14 for deq), never computed by the oracle: the interpreter must
carry the undefined, constrained and few-valued results exactly as they are into later
instructions.
"""

from __future__ import annotations

from typing import Any

import pytest

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import ExecError
from sm5.oracle.execution.executor import execute
from sm5.oracle.execution.interpreter import FANOUT, Inspected, Opaque, join, members
from sm5.oracle.machine.program import Instruction, Program
from sm5.oracle.machine.state import (
    F32Range,
    F64OneOf,
    Masked,
    OneOf,
    expected_to_json,
    state_from_json,
)

DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
EXTENDED = "dcl_globalFlags enableDoublePrecisionFloatOps | enable11_1DoubleExtensions"
ONE_THIRD_BELOW = 0x3FD5555555555555  # the doubles either side of 1/3
ONE_THIRD_ABOVE = 0x3FD5555555555556
TWO = 0x4000000000000000
TRUE = 0xFFFFFFFF


def lo(bits: int) -> int:
    return bits & 0xFFFFFFFF


def hi(bits: int) -> int:
    return bits >> 32


def run(lines: list[str], state: dict[str, Any], runtime: str = "11.0"
        ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = execute(parse_program(lines), state_from_json(state), "cs_5_0", runtime)
    assert result.rule is None, result.reason
    assert result.state is not None
    steps = [{"instruction": s.instruction, "clauses": list(s.clauses), "runs": s.runs,
              "widened": s.widened} for s in result.steps]
    return expected_to_json(result.state), steps


def test_an_undefined_load_is_stored_elsewhere_as_undefined_words() -> None:
    # ld_structured at byte offset 4 of an 8-byte structure reading .xy runs past the structure:
    # undefined values (FS 18.6.8.3); store_raw then writes r0.x, r0.y, r0.x at bytes 4..15.
    lines = ["dcl_uav_structured u0, 8", "dcl_uav_raw u1",
             "ld_structured r0.xy, l(0), l(4), u0.xyzw", "store_raw u1.xyz, l(4), r0.xyxy"]
    state = {"r0": [7, 7, 7, 7],
             "u0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]},
             "u1": {"kind": "raw", "data": [9, 9, 9, 9, 9]}}
    expect, steps = run(lines, state)
    assert expect["r0"] == [None, None, 7, 7]
    assert expect["u1"]["data"] == [9, None, None, None, 9]
    assert expect["u0"]["data"] == [1, 2, 3, 4]
    assert [s["widened"] for s in steps] == [False, False]


def test_a_stored_mix_of_exact_and_undefined_words_keeps_each() -> None:
    lines = ["dcl_uav_structured u0, 8", "dcl_uav_raw u1",
             "ld_structured r0.x, l(0), l(4), u0.yyyy", "store_raw u1.xyzw, l(0), r0.yxyx"]
    state = {"r0": [7, 5, 7, 7],
             "u0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]},
             "u1": {"kind": "raw", "data": [9, 9, 9, 9]}}
    expect, _ = run(lines, state)
    # .x picks the second word (.yyyy): bytes 8..11 of an 8-byte structure, undefined.
    assert expect["r0"] == [None, 5, 7, 7]
    assert expect["u1"]["data"] == [5, None, 5, None]


def test_a_store_at_an_undefined_address_leaves_the_whole_resource_undefined() -> None:
    lines = ["dcl_uav_structured u0, 8", "dcl_uav_raw u1",
             "ld_structured r0.xy, l(0), l(4), u0.xyzw", "store_raw u1.x, r0.x, l(3)"]
    state = {"r0": [0, 0, 0, 0],
             "u0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]},
             "u1": {"kind": "raw", "data": [9, 9]}}
    expect, steps = run(lines, state)
    assert expect["u1"] is None  # anywhere, misaligned included (a write then undefines all)
    assert steps[1] == {"instruction": "store_raw", "clauses": [], "runs": 0, "widened": True}


def test_a_double_of_one_of_two_values_flows_through_an_exact_multiply() -> None:
    # drcp of 3.0: either double adjacent to 1/3 (FS 22.14.5, 1 ULP); times 2.0 is exact for
    # each, so r2 holds one of the two doubles adjacent to 2/3, as a pair.
    lines = [EXTENDED, "drcp r0.xy, r1.xyxy", "dmul r2.xy, r0.xyxy, d(2.0)"]
    state = {"r0": [0, 0, 0, 0], "r1": [0, 0x40080000, 0, 0], "r2": [5, 5, 5, 5]}
    expect, steps = run(lines, state, "11.1")
    below, above = ONE_THIRD_BELOW + (1 << 52), ONE_THIRD_ABOVE + (1 << 52)
    pair = {"f64_one_of": [[lo(below), hi(below)], [lo(above), hi(above)]]}
    assert expect["r2"] == [pair, pair, 5, 5]
    assert steps[1]["runs"] == 2


def test_a_zero_of_either_sign_compares_equal_to_zero() -> None:
    # dmin(+0, -0): either zero (the sign of an equal pair is free); deq with 0.0 is true for
    # both, so the comparison is exact although its input is not.
    lines = [DOUBLES, "dmin r0.xy, r1.xyxy, r1.zwzw", "deq r2.x, r0.xyxy, d(0.0)"]
    state = {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0x80000000], "r2": [3, 3, 3, 3]}
    expect, steps = run(lines, state)
    assert expect["r0"][:2] == [0, {"mask": 0x7FFFFFFF, "value": 0}]
    assert expect["r2"] == [TRUE, 3, 3, 3]
    assert steps[1]["runs"] == 2 and not steps[1]["widened"]


def test_a_nan_of_any_payload_read_by_a_rule_widens_the_step() -> None:
    # dadd of a NaN gives some NaN (any payload); a later dmul reads it in a rule: its result
    # cannot be enumerated, so what it writes is anything, and what it does not write is kept.
    lines = [DOUBLES, "dadd r0.xy, r1.xyxy, r1.xyxy", "dmul r2.xy, r0.xyxy, d(2.0)"]
    state = {"r0": [0, 0, 0, 0], "r1": [1, 0x7FF00000, 0, 0], "r2": [4, 4, 4, 4]}
    expect, steps = run(lines, state)
    assert expect["r0"][:2] == [{"f64": "nan"}, {"f64": "nan"}]
    assert expect["r2"] == [None, None, 4, 4]
    assert steps[1]["widened"]


def test_an_unspecified_instruction_is_an_error_naming_its_line() -> None:
    # Every instruction the grammar reads is specified; a program built in Python may hold one
    # that is not.
    program = parse_program(["dcl_uav_raw u0", "nop"])
    made_up = Program((program.lines[0], Instruction("xmax", (), line=2)))
    with pytest.raises(ExecError, match="line 2: xmax is not specified"):
        execute(made_up, state_from_json({"u0": {"kind": "raw", "data": [0]}}))


def test_members_enumerate_small_sets_only() -> None:
    assert members(5) == (5,)
    assert members(OneOf((1, 2))) == (1, 2)
    assert members(Masked(0x10, 0xFFFFFFFC)) == (0x10, 0x11, 0x12, 0x13)
    assert members(Masked(0, 0xFFFF0000)) is None  # 16 free bits
    assert members(None) is None


def test_join_keeps_one_value_lists_a_few_and_gives_up_past_the_fanout() -> None:
    assert join([3, 3]) == 3
    assert join([3, 1, OneOf((1, 2))]) == OneOf((1, 2, 3))
    assert join(list(range(FANOUT + 1))) is None
    assert join([3, None]) is None
    both = F64OneOf((1, 2))
    assert join([both, both]) == both


def test_float32_ranges_enumerate_when_small_and_join_into_their_span() -> None:
    # [1.0, 1.0 + 3 ULP]: four float32s, enumerated; [-0.0, +0.0]: the two zeros
    assert members(F32Range(0x3F800000, 0x3F800003)) == (0x3F800000, 0x3F800001, 0x3F800002,
                                                         0x3F800003)
    assert members(F32Range(0x80000000, 0)) == (0, 0x80000000)
    wide = F32Range(0xBF800000, 0x3F800000)  # -1.0 .. 1.0: far more than the fanout
    assert members(wide) is None
    # a range and a value outside it: the span holding both; a NaN among them: anything
    assert join([wide, 0x40000000]) == F32Range(0xBF800000, 0x40000000)
    assert join([wide, 0x7FC00000]) is None
    assert join([F32Range(0x3F800000, 0x3F800001), 0x3F800003]) == OneOf(
        (0x3F800000, 0x3F800001, 0x3F800003))


def test_a_tolerance_flows_into_the_next_instruction() -> None:
    # rcp(3.0) is one of eleven float32s (0x3EAAAAA6 .. 0x3EAAAAB0: within 2^-21 of 1/3, FS
    # 22.10.18); mov, run once per member (eleven runs, within the fanout), writes one of the
    # eleven; mul by 2.0 is exact on each, so the product is one of the eleven doubled
    # (exponent + 1: 0x3F2AAAA6 .. 0x3F2AAAB0), never a guess.
    execution = execute(parse_program(["rcp r1.x, r0.x", "mov r2.x, r1.x",
                                       "mul r3.x, r2.x, l(2.0)"]),
                        state_from_json({"r0": [0x40400000, 0, 0, 0], "r1": [0, 0, 0, 0],
                                         "r2": [0, 0, 0, 0], "r3": [0, 0, 0, 0]}))
    assert execution.state is not None
    assert execution.state.registers["r1"][0] == F32Range(0x3EAAAAA6, 0x3EAAAAB0)
    assert execution.state.registers["r2"][0] == OneOf(tuple(range(0x3EAAAAA6, 0x3EAAAAB1)))
    assert execution.state.registers["r3"][0] == OneOf(tuple(range(0x3F2AAAA6, 0x3F2AAAB1)))


def test_mov_passes_an_undefined_component_along_through_its_swizzle() -> None:
    # mov without modifiers moves bits unchanged (FS 22.9.1): each destination component
    # receives the source component at its swizzle position, undefined or not.
    lines = ["dcl_uav_structured u0, 8", "ld_structured r0.x, l(0), l(4), u0.yyyy",
             "mov r2.xyzw, r0.yxxy"]
    state = {"r0": [7, 5, 7, 7], "r2": [1, 1, 1, 1],
             "u0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]}}
    expect, steps = run(lines, state)
    assert expect["r2"] == [5, None, None, 5]
    assert steps[1]["widened"] is False


def test_a_nan_of_any_payload_moves_as_a_class() -> None:
    # -x of a NaN is some NaN (FS 22.18.2); a plain mov keeps it a NaN of any payload.
    lines = ["mov r1.x, -r0.x", "mov r2.xy, r1.xxxx"]
    expect, steps = run(lines, {"r0": [0x7FC00001, 0, 0, 0], "r1": [0, 0, 0, 0],
                                "r2": [6, 6, 6, 6]})
    assert expect["r2"] == [{"f32": "nan"}, {"f32": "nan"}, 6, 6]
    assert [s["widened"] for s in steps] == [False, False]


def test_a_modifier_on_an_undefined_component_widens_the_step() -> None:
    # -x looks at x's bits (a NaN test): an undefined x gives anything, written as anything.
    lines = ["dcl_uav_structured u0, 8", "ld_structured r0.x, l(0), l(4), u0.yyyy",
             "mov r3.xy, -r0.xxxx"]
    state = {"r0": [7, 5, 7, 7], "r3": [3, 3, 3, 3],
             "u0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]}}
    expect, steps = run(lines, state)
    assert expect["r3"] == [None, None, 3, 3]
    assert steps[1]["widened"] is True


def test_an_opaque_value_refuses_to_be_looked_at() -> None:
    value = Opaque()
    for look in (lambda v: v == 0, lambda v: v + 1, lambda v: 1 & v, lambda v: int(v),
                 lambda v: bool(v), lambda v: v < 3, lambda v: -v, lambda v: hash(v),
                 lambda v: v >> 2, lambda v: f"{v:x}"):
        with pytest.raises(Inspected):
            look(value)
