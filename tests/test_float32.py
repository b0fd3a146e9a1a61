"""The float32 helpers of the rule language on values worked out from the sources (FS 3.2.2,
22.10, 22.13; IEEE 754), independently of the helpers' own code."""

from __future__ import annotations

import pytest

from sm5.oracle.rulelang.helpers import REGISTRY

NAN = 0x7FC00000
INF = 0x7F800000


@pytest.mark.parametrize(("helper", "argument", "expected"), [
    # f32tof16 rounds toward zero: 1 + 3 * 2^-12 is 0x3C00 (to nearest: 0x3C01); past 65504 the
    # largest finite half (65520.0 and 1e10 alike), never the infinity unless the input is one.
    ("f32_to_f16", 0x3F801800, 0x3C00),
    ("f32_to_f16", 0x477FF000, 0x7BFF),
    ("f32_to_f16", 0x501502F9, 0x7BFF),     # 1e10
    ("f32_to_f16", 0xD01502F9, 0xFBFF),     # -1e10
    ("f32_to_f16", INF, 0x7C00),
    ("f32_to_f16", 0x3356BF95, 0x0000),     # 5e-8: below 2^-24, toward zero
    ("f32_to_f16", 0x33800000, 0x0001),     # 2^-24: the smallest half denormal
    ("f32_to_f16", 0x80000000, 0x8000),
    ("f32_to_f16", 0x80000001, 0x8000),     # a float32 denormal: a zero of its sign
    ("f32_to_f16", NAN, 0x7E00),
    # ... and to nearest even, the sibling: the tie 65520.0 goes to the infinity.
    ("f32_to_f16_nearest", 0x3F801800, 0x3C01),
    ("f32_to_f16_nearest", 0x477FF000, 0x7C00),
    # f16tof32 is exact: a half denormal is a float32 normal; the high 16 bits are ignored.
    ("f16_to_f32", 0x0001, 0x33800000),
    ("f16_to_f32", 0xABCD3C00, 0x3F800000),
    ("f16_to_f32", 0x8000, 0x80000000),
    ("f16_to_f32", 0xFC00, 0xFF800000),
    # Rounding to integers keeps the sign of a zero (IEEE): round_ne(2.5) = 2, round_ne(-0.5)
    # = -0, round_ni(-0.5) = -1, round_pi(0.5) = 1, round_z(-1.5) = -1.
    ("f32_round_ne", 0x40200000, 0x40000000),
    ("f32_round_ne", 0xBF000000, 0x80000000),
    ("f32_round_ni", 0xBF000000, 0xBF800000),
    ("f32_round_pi", 0x3F000000, 0x3F800000),
    ("f32_round_z", 0xBFC00000, 0xBF800000),
    # ftoi/ftou: NaN 0, truncated, saturated.
    ("f32_to_i32", NAN, 0),
    ("f32_to_i32", INF, 0x7FFFFFFF),
    ("f32_to_i32", 0x4F000000, 0x7FFFFFFF),  # 2^31
    ("f32_to_i32", 0xCF000000, 0x80000000),  # -2^31
    ("f32_to_i32", 0xBFF33333, 0xFFFFFFFF),  # -1.9
    ("f32_to_u32", 0xBF800000, 0),           # -1.0
    ("f32_to_u32", 0x4F7FFFFF, 0xFFFFFF00),  # 4294967040.0
    ("f32_to_u32", INF, 0xFFFFFFFF),
    # itof/utof and the neighbours: 2^24 + 1 lies between 2^24 and 2^24 + 2, 0xFFFFFFFF
    # between 4294967040 and 2^32.
    ("f32_from_i32", 0x01000001, 0x4B800000),
    ("f32_from_i32_up", 0x01000001, 0x4B800001),
    ("f32_from_i32_down", 0xFEFFFFFF, 0xCB800001),  # -(2^24 + 1): down is -(2^24 + 2)
    ("f32_from_u32", 0xFFFFFFFF, 0x4F800000),
    ("f32_from_u32_down", 0xFFFFFFFF, 0x4F7FFFFF),
    ("f32_from_i32", 0x80000000, 0xCF000000),
    # _sat: NaN and -0 give +0, 2.0 gives 1.0, 0.5 stays.
    ("f32_saturate", NAN, 0),
    ("f32_saturate", 0x80000000, 0),
    ("f32_saturate", 0x40000000, 0x3F800000),
    ("f32_saturate", 0x3F000000, 0x3F000000),
    # sqrt: 2.0 lies between 0x3FB504F3 (1.41421353...) and 0x3FB504F4 (1.41421365...), the
    # first nearer the root 1.41421356...; 4.0 has the exact root 2.0; -0 gives -0, -1 a NaN.
    ("f32_sqrt", 0x40000000, 0x3FB504F3),
    ("f32_sqrt_down", 0x40000000, 0x3FB504F3),
    ("f32_sqrt_up", 0x40000000, 0x3FB504F4),
    ("f32_sqrt_down", 0x40800000, 0x40000000),
    ("f32_sqrt_up", 0x40800000, 0x40000000),
    ("f32_sqrt", 0x80000000, 0x80000000),
    ("f32_sqrt", 0xBF800000, NAN),
    ("f32_sqrt_up", INF, INF),
    # A denormal flushed keeps its sign.
    ("f32_flush", 0x00000001, 0),
    ("f32_flush", 0x80000001, 0x80000000),
    ("f32_flush", 0x00800000, 0x00800000),
])
def test_float32_helpers_on_values_from_the_sources(helper: str, argument: int,
                                                    expected: int) -> None:
    assert REGISTRY[helper].python(argument) == expected


@pytest.mark.parametrize(("helper", "a", "b", "expected"), [
    # 1 + 3 * 2^-24 lies 1.5 ULP above 1.0: to nearest 1 + 2^-22, truncated 1 + 2^-23.
    ("f32_add", 0x3F800000, 0x34400000, 0x3F800002),
    ("f32_add_rtz", 0x3F800000, 0x34400000, 0x3F800001),
    # 1 + 3 * 2^-25 lies 0.75 ULP above 1.0: to nearest 1 + 2^-23, truncated 1.0.
    ("f32_add", 0x3F800000, 0x33C00000, 0x3F800001),
    ("f32_add_rtz", 0x3F800000, 0x33C00000, 0x3F800000),
    # 1 + 2^-24 is a tie: to the even 1.0; truncated 1.0 too.
    ("f32_add", 0x3F800000, 0x33800000, 0x3F800000),
    # FLT_MAX + FLT_MAX: the infinity to nearest, FLT_MAX truncated.
    ("f32_add", 0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000),
    ("f32_add_rtz", 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF),
    ("f32_add_rtz", 0xFF7FFFFF, 0xFF7FFFFF, 0xFF7FFFFF),
    # x + (-x) is +0 in both modes; -0 + -0 is -0.
    ("f32_add_rtz", 0x3F800000, 0xBF800000, 0x00000000),
    ("f32_add_rtz", 0x80000000, 0x80000000, 0x80000000),
    # (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: 1 + 2^-22 either way.
    ("f32_mul", 0x3F800001, 0x3F800001, 0x3F800002),
    ("f32_mul_rtz", 0x3F800001, 0x3F800001, 0x3F800002),
    # (1 - 2^-24) * (1 + 2^-23) = 1 + 2^-24 - 2^-47, just below the tie: 1.0 either way.
    ("f32_mul", 0x3F7FFFFF, 0x3F800001, 0x3F800000),
    ("f32_mul_rtz", 0x3F7FFFFF, 0x3F800001, 0x3F800000),
    # (1 + 2^-23) * (1 + 2^-22) = 1 + 3 * 2^-23 + 2^-45: to nearest 1 + 3 * 2^-23 (the 2^-45
    # is far below half an ULP), truncated the same.
    ("f32_mul", 0x3F800001, 0x3F800002, 0x3F800003),
    # 1.5 * (1 + 2^-23) = 1.5 + 1.5 * 2^-23, a tie between 1.5 + 2^-23 and 1.5 + 2^-22: to
    # nearest the even 1.5 + 2^-22, truncated 1.5 + 2^-23.
    ("f32_mul", 0x3FC00000, 0x3F800001, 0x3FC00002),
    ("f32_mul_rtz", 0x3FC00000, 0x3F800001, 0x3FC00001),
    # 2^-126 * 0.5 = 2^-127, a denormal, exact; 0 * -1 is -0.
    ("f32_mul", 0x00800000, 0x3F000000, 0x00400000),
    ("f32_mul_rtz", 0x00000000, 0xBF800000, 0x80000000),
])
def test_float32_arithmetic_in_both_rounding_modes(helper: str, a: int, b: int,
                                                   expected: int) -> None:
    assert REGISTRY[helper].python(a, b) == expected


def test_float32_subtraction_rounds_a_tiny_fraction_to_one() -> None:
    # frc(-2^-30) = -2^-30 - (-1) = 1 - 2^-30, which rounds to 1.0 (FS 22.10.7; erratum E-05).
    assert REGISTRY["f32_sub"].python(0xB0800000, 0xBF800000) == 0x3F800000
    # x - x is +0 in round to nearest, -0 - (-0) too.
    assert REGISTRY["f32_sub"].python(0x80000000, 0x80000000) == 0


def test_float32_comparisons_ignore_the_sign_of_zero_and_fail_on_nan() -> None:
    eq, lt, ge = (REGISTRY[n].python for n in ("f32_eq", "f32_lt", "f32_ge"))
    assert eq(0, 0x80000000) and not lt(0x80000000, 0) and ge(0x80000000, 0)
    assert not eq(NAN, NAN) and not lt(NAN, 0) and not ge(NAN, 0)
