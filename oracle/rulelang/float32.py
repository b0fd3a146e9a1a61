"""IEEE 754 binary32 (and binary16) operations on bit patterns, the Python side of the rule
language's float32 helpers (``sm5.oracle.rulelang.helpers`` pairs each with its z3 model on
``FPSort(8, 24)``).

A float32 is held as its 32-bit pattern, as a register component holds it. Every function is
exact: a float32 is a Python float exactly, an integral or directed result is computed on that
float without rounding, and a sum is rounded once to binary64 and then to binary32, which gives
the correctly rounded binary32 sum (binary64 has more than 2 * 24 + 2 bits of precision, so the
second rounding never lands on a tie the first one made). A NaN result is binary32's default
quiet NaN: the spec never depends on a NaN's payload.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from sm5.oracle.rulelang.float64 import (
    F32_INF,
    F32_QUIET_NAN,
    F32_SIGN,
    f32_is_denormal,
    f32_is_nan,
    f32_value,
)

#: binary16: the default quiet NaN, the infinity and the largest finite value.
F16_QUIET_NAN = 0x7E00
F16_INF = 0x7C00
F16_LARGEST = 0x7BFF
F16_SIGN = 0x8000


def pattern(number: float) -> int:
    """The binary32 pattern of a Python float that binary32 holds exactly (a NaN becomes the
    default quiet NaN)."""
    if math.isnan(number):
        return F32_QUIET_NAN
    bits: int = struct.unpack("<I", struct.pack("<f", number))[0]
    return bits


def flush(w: int) -> int:
    """A denormal becomes the zero of its sign; every other pattern is returned unchanged."""
    return w & F32_SIGN if f32_is_denormal(w) else w


def saturate(w: int) -> int:
    """min(1.0, max(0.0, w)) with min and max's NaN rule: a NaN gives +0.0, 1.0 and above
    (+inf included) 1.0, a negative number or zero (-0.0 included) +0.0; the rest is kept (a
    positive float32 orders as its bits)."""
    if f32_is_nan(w):
        return 0
    if w & F32_SIGN:
        return 0
    return min(w, 0x3F800000)


def less(a: int, b: int) -> bool:
    return f32_value(a) < f32_value(b)


def greater_equal(a: int, b: int) -> bool:
    return f32_value(a) >= f32_value(b)


def equal(a: int, b: int) -> bool:
    return f32_value(a) == f32_value(b)


def _integral(w: int, direction: str) -> int:
    """``w`` rounded to an integral float32 in ``direction`` (``nearest`` even, ``floor``,
    ``ceiling``, ``truncate``; IEEE roundToIntegral: the sign of a zero result is the
    operand's; infinities and NaNs pass through, a NaN as the default)."""
    if f32_is_nan(w):
        return F32_QUIET_NAN
    x = f32_value(w)
    if math.isinf(x) or abs(x) >= 2.0**23:  # already integral
        return w & 0xFFFFFFFF
    if direction == "nearest":
        whole = float(round(x))  # Python rounds half to even
    elif direction == "floor":
        whole = float(math.floor(x))
    elif direction == "ceiling":
        whole = float(math.ceil(x))
    else:
        whole = float(math.trunc(x))
    return pattern(math.copysign(whole, x))


def nearest_integral(w: int) -> int:
    return _integral(w, "nearest")


def floor(w: int) -> int:
    return _integral(w, "floor")


def ceiling(w: int) -> int:
    return _integral(w, "ceiling")


def truncate(w: int) -> int:
    return _integral(w, "truncate")


def _narrow(x: float) -> int:
    """A Python float rounded to nearest even binary32 (overflow: an infinity of its sign)."""
    if math.isnan(x):
        return F32_QUIET_NAN
    try:
        return pattern(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:  # nearer 2^128 than the largest float32
        return (F32_SIGN if x < 0 else 0) | F32_INF


def sum_of(a: int, b: int) -> int:
    """a + b rounded to nearest even (x + (-x) is +0, -0 + -0 is -0, as IEEE)."""
    return _narrow(f32_value(a) + f32_value(b))


def sub(a: int, b: int) -> int:
    """a - b rounded to nearest even."""
    return _narrow(f32_value(a) - f32_value(b))


def product(a: int, b: int) -> int:
    """a * b rounded to nearest even (the product of two float32 significands is exact in
    binary64, so one rounding happens)."""
    return _narrow(f32_value(a) * f32_value(b))


def _toward_zero(nearest: int, exact: Fraction) -> int:
    """The float32 ``nearest`` (the exact value rounded to nearest even) moved one step toward
    zero where it lies beyond ``exact`` in magnitude: the exact value rounded toward zero
    (an infinity becomes the largest finite float32 of its sign)."""
    if nearest & 0x7FFFFFFF == F32_INF:
        return nearest - 1
    if abs(Fraction(f32_value(nearest))) > abs(exact):
        return nearest - 1  # one unit of the magnitude bits less (the smallest denormal: zero)
    return nearest


def square_root(w: int) -> int:
    """The square root rounded to nearest even (binary64's correctly rounded root narrowed:
    binary64 has more than 2 * 24 + 2 bits, so the second rounding is innocuous); a negative
    number or a NaN gives the default NaN, -0 gives -0, +inf gives +inf."""
    x = f32_value(w)
    if math.isnan(x) or (x < 0.0):
        return F32_QUIET_NAN
    if x == 0.0 or math.isinf(x):
        return w & 0xFFFFFFFF
    return _narrow(math.sqrt(x))


def _sqrt_directed(w: int, upward: bool) -> int:
    """The square root rounded toward +inf (``upward``) or -inf: the root to nearest, moved one
    step where it lies on the wrong side of the exact root (compared by squaring, exactly)."""
    nearest = square_root(w)
    x = f32_value(w)
    if math.isnan(x) or x <= 0.0 or math.isinf(x):
        return nearest
    square = Fraction(f32_value(nearest)) ** 2
    exact = Fraction(x)
    if square == exact or (square > exact) == upward:
        return nearest
    return nearest + 1 if upward else nearest - 1


def square_root_down(w: int) -> int:
    return _sqrt_directed(w, upward=False)


def square_root_up(w: int) -> int:
    return _sqrt_directed(w, upward=True)


def add_toward_zero(a: int, b: int) -> int:
    """a + b rounded toward zero (a NaN, an infinity: as to nearest)."""
    x, y = f32_value(a), f32_value(b)
    nearest = sum_of(a, b)
    if not (math.isfinite(x) and math.isfinite(y)):
        return nearest
    return _toward_zero(nearest, Fraction(x) + Fraction(y))


def mul_toward_zero(a: int, b: int) -> int:
    """a * b rounded toward zero (a NaN, an infinity: as to nearest)."""
    x, y = f32_value(a), f32_value(b)
    nearest = product(a, b)
    if not (math.isfinite(x) and math.isfinite(y)):
        return nearest
    return _toward_zero(nearest, Fraction(x) * Fraction(y))


def _step(w: int, toward_positive: bool) -> int:
    """The float32 adjacent to a finite pattern ``w`` toward +inf or -inf."""
    x = f32_value(w)
    if x == 0.0:
        return 1 if toward_positive else F32_SIGN | 1
    grows = (x > 0) == toward_positive
    return w + 1 if grows else w - 1


def _directed(x: float, upward: bool) -> int:
    """A finite Python float rounded to binary32 toward +inf (``upward``) or -inf; past the
    largest float32 the rounding away from zero gives the infinity, toward zero the largest."""
    nearest = _narrow(x)
    value = f32_value(nearest)
    if value == x:
        return nearest
    if math.isinf(value):
        beyond = (x > 0) == upward
        return nearest if beyond else nearest - 1
    above = value > x
    if above == upward:
        return nearest
    return _step(nearest, upward)


def from_i32_down(w: int) -> int:
    """A 32-bit pattern read as a signed integer, rounded toward -inf to a float32."""
    return _directed(float(w - (1 << 32) if w & 0x80000000 else w), upward=False)


def from_i32_up(w: int) -> int:
    return _directed(float(w - (1 << 32) if w & 0x80000000 else w), upward=True)


def from_i32(w: int) -> int:
    """A 32-bit pattern read as a signed integer, rounded to nearest even to a float32."""
    return _narrow(float(w - (1 << 32) if w & 0x80000000 else w))


def from_u32(w: int) -> int:
    return _narrow(float(w & 0xFFFFFFFF))


def from_u32_down(w: int) -> int:
    return _directed(float(w & 0xFFFFFFFF), upward=False)


def from_u32_up(w: int) -> int:
    return _directed(float(w & 0xFFFFFFFF), upward=True)


def to_i32(w: int) -> int:
    """float32 to signed 32-bit (as its pattern): NaN is 0, the fraction truncated, saturated
    to [-2^31, 2^31 - 1]."""
    if f32_is_nan(w):
        return 0
    x = f32_value(w)
    if math.isinf(x):
        return 0x7FFFFFFF if x > 0 else 0x80000000
    return max(-(2**31), min(2**31 - 1, math.trunc(x))) & 0xFFFFFFFF


def to_u32(w: int) -> int:
    """float32 to unsigned 32-bit: NaN is 0, the fraction truncated, saturated to
    [0, 2^32 - 1]."""
    if f32_is_nan(w):
        return 0
    x = f32_value(w)
    if math.isinf(x):
        return 0xFFFFFFFF if x > 0 else 0
    return max(0, min(2**32 - 1, math.trunc(x)))


def to_f16(w: int) -> int:
    """float32 to binary16 rounded toward zero, in the low 16 bits: a finite value beyond the
    half range is the largest finite half of its sign (rounding toward zero never reaches the
    infinity), an infinity stays one, a NaN is the half default NaN, a float32 denormal is a
    zero of its sign."""
    if f32_is_nan(w):
        return F16_QUIET_NAN
    sign = F16_SIGN if w & F32_SIGN else 0
    x = abs(f32_value(w))
    if math.isinf(x):
        return sign | F16_INF
    if x >= 65504.0:
        return sign | F16_LARGEST
    if x < 2.0**-14:  # a half denormal (or zero): units of 2^-24, truncated
        return sign | math.floor(math.ldexp(x, 24))
    mantissa, exponent = math.frexp(x)  # x = mantissa * 2^exponent, 0.5 <= mantissa < 1
    significand = math.floor(math.ldexp(mantissa, 11))  # 1024 .. 2047
    return sign | ((exponent - 1 + 15) << 10) | (significand - 1024)


def to_f16_nearest(w: int) -> int:
    """float32 to binary16 rounded to nearest even as IEEE converts (beyond the range: the
    half infinity), in the low 16 bits; a NaN is the half default NaN."""
    if f32_is_nan(w):
        return F16_QUIET_NAN
    x = f32_value(w)
    try:
        half: int = struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:  # nearer 2^16 than 65504: the infinity of its sign
        half = (F16_SIGN if x < 0 else 0) | F16_INF
    return half


def from_f16(w: int) -> int:
    """The half in the low 16 bits of ``w`` as a float32 (exact: every half is a float32, a
    half denormal a float32 normal); a NaN is the float32 default quiet NaN."""
    half: float = struct.unpack("<e", struct.pack("<H", w & 0xFFFF))[0]
    return pattern(half)
