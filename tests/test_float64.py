"""The rule language's f64 helpers: the Python definitions against z3's IEEE floating-point
theory (two independent implementations of binary64), on the special classes, and a few values
checked against IEEE 754 by hand."""

from __future__ import annotations

import itertools
import math
import struct

import pytest
import z3

from sm5.oracle.errors import RuleError
from sm5.oracle.rulelang.helpers import REGISTRY, WIDTHS
from sm5.oracle.rulelang.rules import parse_rule

FLOAT_HELPERS = sorted(name for name, h in REGISTRY.items() if h.on_patterns and h.z3 is not None)
#: The tolerance helpers: bounds of results D3D11 lets err, with no z3 model (the proofs read
#: them as uninterpreted functions; tests/test_tolerance.py checks them against definitions of
#: their own).
TOLERANCE_HELPERS = sorted(name for name, h in REGISTRY.items() if h.z3 is None)


def bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


SPECIALS = [bits(v) for v in (
    0.0, -0.0, 1.0, -1.5, 2.0**-53, 1.0 + 2.0**-52, 5e-324, -5e-324, 2.2250738585072014e-308,
    1.7976931348623157e308, -1.7976931348623157e308, math.inf, -math.inf, 1 / 3,
    2147483647.5, -2147483648.9, -2147483649.0, 4294967295.9, 4294967296.0,
    # float32 edges, for the narrowing: the largest float32, the halfway point above it (rounds
    # to infinity), just below that point, the smallest normal and denormal float32, a tie.
    3.4028234663852886e38, 3.4028235677973366e38, 3.4028235677973362e38, 2.0**-126, 2.0**-149,
    -(2.0**-150), 2.0**-150 * 3, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24)] + [
    0x7FF8000000000000, 0xFFF0000000000001]
WORDS = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 12345, 0x807FFFFF, 0x00800000, 0x7F800000,
         0xFF800000, 0x7FC00000, 0x7F7FFFFF, 0x3F800000,
         # float32 edges of the conversions and roundings: 0.5, 2.5, -0.5, -2.5 (ties), 2^23,
         # 2^31, -2^31, 2^32, 65520 (a half tie to the infinity), 1 + 3 * 2^-12, 2^-24, and the
         # words 2^24 + 1 and 0xFFFFFF7F that float32 cannot hold; half patterns 0x3C00, 0x7E00
         0x3F000000, 0x40200000, 0xBF000000, 0xC0200000, 0x4B000000, 0x4F000000, 0xCF000000,
         0x4F800000, 0x477FF000, 0x3F801800, 0x33800000, 0x01000001, 0xFFFFFF7F, 0x3C00, 0x7E00]


def test_the_float_helpers_are_the_f64_and_f32_ones() -> None:
    assert sorted(n for n in REGISTRY if n.startswith(("f64_", "f32_", "f16_"))) == sorted(
        FLOAT_HELPERS + TOLERANCE_HELPERS)
    assert len(FLOAT_HELPERS) == 53
    functions = ("reciprocal", "rsqrt", "exp2", "log2", "sin", "cos", "quotient", "muladd",
                 "dot2", "dot3", "dot4")
    expected = sorted(f"f32_{f}{end}" for f in functions for end in ("", "_low", "_high"))
    assert expected == TOLERANCE_HELPERS


@pytest.mark.parametrize("name", FLOAT_HELPERS)
def test_python_and_z3_agree_on_special_classes(name: str) -> None:
    helper = REGISTRY[name]
    arity, width, function, op = helper.arity, WIDTHS[helper.args[0]], helper.python, helper.z3
    kind = "bool" if helper.result == "bool" else "int"
    pool = SPECIALS if width == 64 else WORDS
    if arity == 3:
        pool = pool[::2]
    for args in itertools.product(pool, repeat=arity):
        term = z3.simplify(op(*[z3.BitVecVal(a, width) for a in args]))
        got = z3.is_true(term) if kind == "bool" else term.as_long()
        assert function(*args) == got, (name, [hex(a) for a in args])


@pytest.mark.parametrize(("text", "expected"), [
    # 1 + 2^-53 is a tie between 1 and its successor: the even one, 1.
    (f"f64_add({bits(1.0)}, {bits(2.0**-53)})", bits(1.0)),
    # x + (-x) is +0 in round to nearest; -0 + -0 is -0.
    (f"f64_add({bits(1.0)}, {bits(-1.0)})", 0),
    (f"f64_add({1 << 63}, {1 << 63})", 1 << 63),
    # 1 / 0 = +inf; 0 / 0 is a NaN (the default quiet NaN).
    (f"f64_div({bits(1.0)}, 0)", bits(math.inf)),
    ("f64_div(0, 0)", 0x7FF8000000000000),
    # fma rounds once: (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104 exactly (a separate multiply gives 0).
    (f"f64_fma({bits(1.0 + 2.0**-52)}, {bits(1.0 - 2.0**-52)}, {bits(-1.0)})", bits(-(2.0**-104))),
    # dtoi: truncation toward zero, clamp, NaN is 0; dtou: negatives are 0.
    (f"f64_to_i32({bits(-2.75)})", 0xFFFFFFFE),
    (f"f64_to_i32({bits(math.inf)})", 0x7FFFFFFF),
    (f"f64_to_i32({bits(-3e9)})", 0x80000000),
    ("f64_to_i32(9221120237041090560)", 0),
    (f"f64_to_u32({bits(-0.5)})", 0),
    (f"f64_to_u32({bits(5e9)})", 0xFFFFFFFF),
    ("f64_from_i32(4294967295)", bits(-1.0)),
    ("f64_from_u32(4294967295)", bits(4294967295.0)),
    # float32 -> double is exact, denormals and infinities included.
    ("f64_from_f32(1)", bits(2.0**-149)),
    ("f64_from_f32(4286578688)", bits(-math.inf)),
    # double -> float32, nearest even: 1 + 2^-24 is a tie (to 1.0), 1 + 3 * 2^-24 a tie to the
    # even 1 + 2^-22; the point halfway between the largest float32 and 2^128 goes to infinity;
    # 2^-150 ties between 0 and the smallest denormal (to 0), 3 * 2^-150 to two units.
    (f"f64_to_f32({bits(1.0 + 2.0**-24)})", 0x3F800000),
    (f"f64_to_f32({bits(1.0 + 3 * 2.0**-24)})", 0x3F800002),
    (f"f64_to_f32({bits(3.4028235677973366e38)})", 0x7F800000),
    (f"f64_to_f32({bits(-3.4028235677973362e38)})", 0xFF7FFFFF),
    (f"f64_to_f32({bits(2.0**-150)})", 0),
    (f"f64_to_f32({bits(3 * 2.0**-150)})", 2),
    ("f64_to_f32(18444492273895866368)", 0x7FC00000),
    # directed quotients bracket 1/3 (binary 0.0101...: nearest rounds down).
    (f"f64_div_down({bits(1.0)}, {bits(3.0)})", 0x3FD5555555555555),
    (f"f64_div_up({bits(1.0)}, {bits(3.0)})", 0x3FD5555555555556),
    (f"f64_div_up({bits(-1.0)}, {bits(3.0)})", 0xBFD5555555555555),
    (f"f64_div_down({bits(1.0)}, {bits(5e-324)})", bits(1.7976931348623157e308)),
    (f"f64_div_up({bits(1.0)}, {bits(5e-324)})", bits(math.inf)),
    (f"f64_div_up({bits(1.0)}, {bits(4.0)})", bits(0.25)),
    ("f32_is_denormal(2155872255)", True),
    ("f32_is_nan(2139095040)", False),
    # comparisons ignore the sign of zero and are false on a NaN
    (f"f64_eq(0, {1 << 63})", True),
    ("f64_ge(9221120237041090560, 0)", False),
])
def test_values_worked_out_by_hand(text: str, expected: int | bool) -> None:
    assert parse_rule(text, where="test").evaluate({}) == expected


def test_argument_wider_than_the_helper_is_an_error() -> None:
    with pytest.raises(RuleError, match="32-bit patterns"):
        parse_rule("f64_from_u32(4294967296)", where="test").evaluate({})
    with pytest.raises(RuleError, match="64-bit patterns"):
        parse_rule("f64_is_nan(0 - 1)", where="test").evaluate({})
