"""IEEE 754 binary64 operations on bit patterns, the Python side of the rule language's ``f64_*``
helpers (``sm5.oracle.rulelang.helpers`` pairs each with its z3 model).

A double is held as its 64-bit pattern (an unsigned integer), as a register pair holds it.
Python floats are IEEE binary64 with round-to-nearest-even, so each operation is the exact
IEEE result; the special cases Python signals instead (division by zero) are rebuilt from the
standard. A NaN result is returned as the default quiet NaN: the spec never depends on a
NaN's payload (its clauses accept any NaN), only on its being a NaN.
"""

from __future__ import annotations

import math
import struct
import sys
from fractions import Fraction

SIGN = 1 << 63
QUIET_NAN = 0x7FF8000000000000
#: The default quiet NaN of binary32 (the pattern a NaN narrows to).
F32_QUIET_NAN = 0x7FC00000
F32_SIGN = 1 << 31
F32_INF = 0x7F800000


def value(bits: int) -> float:
    """The double a 64-bit pattern holds."""
    number: float = struct.unpack("<d", struct.pack("<Q", bits & (2**64 - 1)))[0]
    return number


def bits_of(number: float) -> int:
    """The 64-bit pattern of a double (a NaN becomes the default quiet NaN)."""
    if math.isnan(number):
        return QUIET_NAN
    pattern: int = struct.unpack("<Q", struct.pack("<d", number))[0]
    return pattern


def sum_of(a: int, b: int) -> int:
    return bits_of(value(a) + value(b))


def product(a: int, b: int) -> int:
    return bits_of(value(a) * value(b))


def quotient(a: int, b: int) -> int:
    x, y = value(a), value(b)
    if y == 0.0:
        if x == 0.0 or math.isnan(x):
            return QUIET_NAN
        negative = (a ^ b) & SIGN
        return bits_of(-math.inf if negative else math.inf)
    return bits_of(x / y)


def fma(a: int, b: int, c: int) -> int:
    """a * b + c rounded once (IEEE fusedMultiplyAdd), from the exact rational value."""
    x, y, z = value(a), value(b), value(c)
    if math.isfinite(x) and math.isfinite(y) and not math.isnan(z) and math.isinf(z):
        return c  # a finite product (exact, whatever its size) plus an infinity
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return bits_of(x * y + z)  # an infinite product, or a NaN: no rounding involved
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        product_negative = bool((a ^ b) & SIGN)
        both_negative = product_negative and bool(c & SIGN) and (x == 0.0 or y == 0.0) \
            and z == 0.0
        return SIGN if both_negative else 0  # an exact zero sum is +0 in round to nearest
    try:
        rounded = exact.numerator / exact.denominator  # correctly rounded (nearest even)
    except OverflowError:
        rounded = math.inf if exact > 0 else -math.inf
    return bits_of(rounded)


def to_i32(a: int) -> int:
    """Double to signed 32-bit (as its pattern): NaN is 0, clamped to [-2^31, 2^31 - 1], the
    fraction truncated."""
    x = value(a)
    if math.isnan(x):
        return 0
    number = max(-(2**31), min(2**31 - 1, math.trunc(max(-(2.0**32), min(2.0**32, x)))))
    return number & 0xFFFFFFFF


def to_u32(a: int) -> int:
    """Double to unsigned 32-bit: NaN is 0, clamped to [0, 2^32 - 1], the fraction truncated."""
    x = value(a)
    if math.isnan(x):
        return 0
    return max(0, min(2**32 - 1, math.trunc(max(-1.0, min(2.0**33, x)))))


def to_i32_nearest(a: int) -> int:
    """:func:`to_i32` rounding to nearest even instead of truncating (a sibling's kernel)."""
    x = value(a)
    if math.isnan(x):
        return 0
    number = max(-(2**31), min(2**31 - 1, round(max(-(2.0**32), min(2.0**32, x)))))
    return number & 0xFFFFFFFF


def to_u32_nearest(a: int) -> int:
    """:func:`to_u32` rounding to nearest even instead of truncating (a sibling's kernel)."""
    x = value(a)
    if math.isnan(x):
        return 0
    return max(0, min(2**32 - 1, round(max(-1.0, min(2.0**33, x)))))


def from_i32(w: int) -> int:
    """A 32-bit pattern read as a signed integer, as a double (exact)."""
    return bits_of(float(w - (1 << 32) if w & 0x80000000 else w))


def from_u32(w: int) -> int:
    return bits_of(float(w))


def from_f32(w: int) -> int:
    """A binary32 pattern widened to binary64: exact (every float32 is a double); a NaN becomes
    the default quiet NaN."""
    return bits_of(f32_value(w))


def to_f32(a: int) -> int:
    """A double narrowed to binary32, rounded to nearest even (overflow gives an infinity of the
    sign, as IEEE rounding does; a NaN gives the default quiet NaN of binary32)."""
    x = value(a)
    if math.isnan(x):
        return F32_QUIET_NAN
    try:
        pattern: int = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:  # finite, but nearer 2^128 than the largest float32: an infinity
        pattern = (F32_SIGN if x < 0 else 0) | F32_INF
    return pattern


def f32_value(w: int) -> float:
    """The float32 a 32-bit pattern holds, as a Python float (exact)."""
    number: float = struct.unpack("<f", struct.pack("<I", w & 0xFFFFFFFF))[0]
    return number


def f32_is_nan(w: int) -> bool:
    return (w >> 23) & 0xFF == 0xFF and w & 0x7FFFFF != 0


def f32_is_inf(w: int) -> bool:
    return w & 0x7FFFFFFF == F32_INF


def f32_is_zero(w: int) -> bool:
    return w & 0x7FFFFFFF == 0


def f32_is_denormal(w: int) -> bool:
    """A subnormal float32: exponent field 0, fraction not 0."""
    return (w >> 23) & 0xFF == 0 and w & 0x7FFFFF != 0


def _div_directed(a: int, b: int, upward: bool) -> int:
    """a / b rounded toward +inf (``upward``) or -inf: with :func:`quotient` (nearest) they bracket
    the exact quotient by its two adjacent doubles, equal when it is representable."""
    x, y = value(a), value(b)
    if not (math.isfinite(x) and math.isfinite(y)) or x == 0.0 or y == 0.0:
        return quotient(a, b)  # NaN, infinity or zero: exact, no rounding involved
    exact = Fraction(x) / Fraction(y)
    nearest = x / y
    if math.isinf(nearest):
        beyond = (nearest > 0) == upward  # rounding away from zero keeps the infinity
        return bits_of(nearest if beyond else math.copysign(sys.float_info.max, nearest))
    rounded = Fraction(nearest)
    if rounded == exact:
        return bits_of(nearest)
    if upward:
        return bits_of(nearest if rounded > exact else math.nextafter(nearest, math.inf))
    return bits_of(nearest if rounded < exact else math.nextafter(nearest, -math.inf))


def div_down(a: int, b: int) -> int:
    return _div_directed(a, b, upward=False)


def div_up(a: int, b: int) -> int:
    return _div_directed(a, b, upward=True)


def less(a: int, b: int) -> bool:
    return value(a) < value(b)


def greater_equal(a: int, b: int) -> bool:
    return value(a) >= value(b)


def equal(a: int, b: int) -> bool:
    return value(a) == value(b)


#: The exponent field of a double, all ones (an infinity or a NaN), and the magnitude bits.
EXPONENT = 0x7FF0000000000000
MAGNITUDE = SIGN - 1


# The classes read from the bits (the same answers as math.isnan/isinf/== 0.0 on the value,
# without the conversion: the interpreter asks them several times per lane).
def is_nan(a: int) -> bool:
    return a & MAGNITUDE > EXPONENT


def is_inf(a: int) -> bool:
    return a & MAGNITUDE == EXPONENT


def is_zero(a: int) -> bool:
    return a & MAGNITUDE == 0


def is_denormal(a: int) -> bool:
    """A subnormal double: exponent field 0, fraction not 0 (zeros are not denormals)."""
    return (a >> 52) & 0x7FF == 0 and a & ((1 << 52) - 1) != 0
