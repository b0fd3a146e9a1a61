"""Float32 results within a tolerance: the least and the greatest float32 an instruction may
write, and the result to nearest, for the functions D3D11 lets err (the reciprocal, the reciprocal
square root, 2^x, log2 x, sine and cosine, the divide, the fused multiply-adds and dot products:
FS 22.10, 3.1.3.2). The Python side of the rule language's tolerance helpers; they have no z3
model, so the proofs read each as an uninterpreted function of its operands.

Every function takes flushed float32 patterns (the kernel flushes its sources) and gives a
pattern. The exact result is a rational (``fractions``) where it is one, and otherwise a
``decimal`` value at 60 significant digits (``Decimal.ln`` and ``.sqrt`` round correctly,
``Context.power`` within an ulp): after at most two more operations it lies within a relative
10^-50 of the real result, and the bounds are widened by that much, so an interval never
misses a float32 the tolerance admits (it may admit one more only where a bound lies within
10^-50 of a float32).
The accepted float32s are those between the real bounds: the lower bound rounded up, the upper
rounded down; where no float32 lies between (a result far below the smallest denormal), the
result to nearest alone. Each instruction's bounds are computed once per operand tuple (the
rule language asks for the nearest, the least and the greatest value in turn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

from sm5.oracle.rulelang.float64 import (
    F32_INF,
    F32_QUIET_NAN,
    F32_SIGN,
    f32_is_denormal,
    f32_is_inf,
    f32_is_nan,
    f32_is_zero,
    f32_value,
)

#: The largest finite float32, (2 - 2^-23) * 2^127, and the relative error 2^-21 of FS 22.10.
LARGEST = Fraction((1 << 24) - 1, 1) * 2**104
LARGEST_PATTERN = 0x7F7FFFFF
RELATIVE = Fraction(1, 2**21)
#: How far the decimal value may lie from the real result, relatively.
DECIMAL_ERROR = Fraction(1, 10**50)
ONE = 0x3F800000


def round_f32(q: Fraction, upward: bool) -> int:
    """The rational ``q`` rounded to a float32 pattern toward +inf (``upward``) or -inf,
    denormals kept; beyond the largest float32, the infinity when rounding away from zero and
    the largest finite float32 otherwise; a nonzero value rounding to zero keeps its sign.
    Integer arithmetic: the magnitude n/d is counted in units of the float32 spacing at its
    binade (2^-149 below the normals)."""
    n, d = q.numerator, q.denominator
    if n == 0:
        return 0
    negative = n < 0
    n = -n if negative else n
    away = upward != negative
    exponent = n.bit_length() - d.bit_length()  # 2^exponent <= n/d < 2^(exponent + 2)
    if (n << max(0, -exponent)) < (d << max(0, exponent)):
        exponent -= 1
    shift = max(exponent, -126) - 23  # the spacing is 2^shift
    num, den = (n, d << shift) if shift >= 0 else (n << -shift, d)
    count, remainder = divmod(num, den)
    if remainder and away:
        count += 1
    if count == 1 << 24:  # rounded up into the next binade
        count, shift = 1 << 23, shift + 1
    sign = F32_SIGN if negative else 0
    if count < 1 << 23:  # a denormal (or zero)
        return sign | count
    field = shift + 23 + 127
    if field >= 255:
        return sign | (F32_INF if away else LARGEST_PATTERN)
    return sign | (field << 23) | (count - (1 << 23))


def _power(exponent: int) -> Fraction:
    return Fraction(2) ** exponent


def nearest_f32(q: Fraction) -> int:
    """``q`` rounded to nearest even float32 (denormals kept; from half an ULP beyond the largest
    float32, the infinity)."""
    down, up = round_f32(q, upward=False), round_f32(q, upward=True)
    if down == up:
        return down
    low, high = _real(down), _real(up)
    if q - low != high - q:
        return down if q - low < high - q else up
    return down if not down & 1 else up


def _real(w: int) -> Fraction:
    """A finite float32's value; an infinity stands for 2^128, where rounding meets it."""
    if f32_is_inf(w):
        return _power(128) * (-1 if w & F32_SIGN else 1)
    return Fraction(f32_value(w))


def _accepted(low: Fraction, high: Fraction, nearest: tuple[int, int]) -> tuple[int, int]:
    """The least and the greatest float32 in the real interval [low, high]; both zeros where it
    holds 0; where it holds no float32, ``nearest``: the results to nearest of the least and
    the greatest value the exact result may be (one, unless a decimal value stands for it).
    Where the interval reaches beyond the largest float32, the result may overflow: the infinity
    of that sign and the largest finite float32 are both in ("limit theory", Q-04)."""
    lo, hi = round_f32(low, upward=True), round_f32(high, upward=False)
    if high > LARGEST:
        hi = F32_INF
        if low > LARGEST:
            lo = LARGEST_PATTERN
    if low < -LARGEST:
        lo = F32_SIGN | F32_INF
        if high < -LARGEST:
            hi = F32_SIGN | LARGEST_PATTERN
    if low <= 0 <= high:
        lo = lo if low < 0 else F32_SIGN  # -0.0 orders below +0.0
        hi = hi if high > 0 else 0
    if _value(lo) > _value(hi):  # lo above hi by value: no float32 between
        return nearest
    return lo, hi


def _relative(t_low: Fraction, t_high: Fraction) -> tuple[Fraction, Fraction]:
    """The reals within 2^-21 relative of some value in [t_low, t_high] (one sign)."""
    if t_low >= 0:
        return t_low * (1 - RELATIVE), t_high * (1 + RELATIVE)
    return t_low * (1 + RELATIVE), t_high * (1 - RELATIVE)


def _bracket(y: Decimal) -> tuple[Fraction, Fraction]:
    """The reals a decimal value within :data:`DECIMAL_ERROR` of the real result may stand for."""
    value = Fraction(y)
    slack = abs(value) * DECIMAL_ERROR
    return value - slack, value + slack


# ----------------------------------------------------------------------------------------------
# The instructions' results: (nearest, lowest, highest) per operand


Bounds = tuple[int, int, int]


def _nan() -> Bounds:
    return F32_QUIET_NAN, F32_QUIET_NAN, F32_QUIET_NAN


def _exact(w: int) -> Bounds:
    return w, w, w


def _nearest(t_low: Fraction, t_high: Fraction) -> tuple[int, int]:
    return nearest_f32(t_low), nearest_f32(t_high)


def _within_relative(t_low: Fraction, t_high: Fraction, nearest: int) -> Bounds:
    return (nearest, *_accepted(*_relative(t_low, t_high), _nearest(t_low, t_high)))


@lru_cache(maxsize=1 << 16)
def reciprocal_bounds(w: int) -> Bounds:
    """The reciprocal (FS 22.10.18): NaN gives NaN, a zero the infinity of its sign, an infinity the
    zero of its sign; otherwise 1/x within 2^-21 relative."""
    if f32_is_nan(w):
        return _nan()
    sign = w & F32_SIGN
    if f32_is_zero(w):
        return _exact(sign | F32_INF)
    if f32_is_inf(w):
        return _exact(sign)
    t = 1 / Fraction(f32_value(w))
    return _within_relative(t, t, nearest_f32(t))


@lru_cache(maxsize=1 << 16)
def reciprocal_sqrt_bounds(w: int) -> Bounds:
    """The reciprocal square root (FS 22.10.19): NaN and a negative number (-inf included)
    give NaN, a zero the infinity of its sign, +inf gives +0; otherwise x^(-1/2) within 2^-21
    relative."""
    if f32_is_nan(w):
        return _nan()
    if f32_is_zero(w):
        return _exact((w & F32_SIGN) | F32_INF)
    if w & F32_SIGN:
        return _nan()
    if w == F32_INF:
        return _exact(0)
    with localcontext() as context:
        context.prec = 60
        y = 1 / Decimal(f32_value(w)).sqrt()
    low, high = _bracket(y)
    return _within_relative(low, high, nearest_f32(Fraction(y)))


@lru_cache(maxsize=1 << 16)
def exp2_bounds(w: int) -> Bounds:
    """2^x (FS 22.10.6): NaN gives NaN, -inf +0, a zero 1.0, +inf +inf; otherwise 2^x
    within 2^-21 relative ("follows limit theory", Q-04: a result beyond the largest float32 is
    the largest or the infinity; one far below the denormals, +0)."""
    if f32_is_nan(w):
        return _nan()
    if f32_is_zero(w):
        return _exact(ONE)
    x = f32_value(w)
    if x >= 128.0:  # 2^128 and beyond: within 2^-21 of it only the largest and the infinity
        return F32_INF, LARGEST_PATTERN, F32_INF
    if x <= -160.0:  # below 2^-160: no float32 within 2^-21; to nearest +0
        return _exact(0)
    if x == math.floor(x):  # a power of two: exact
        t = _power(int(x))
        return _within_relative(t, t, nearest_f32(t))
    with localcontext() as context:
        context.prec = 60
        y = context.power(Decimal(2), Decimal(x))
    low, high = _bracket(y)
    return _within_relative(low, high, nearest_f32(Fraction(y)))


@lru_cache(maxsize=1 << 16)
def log2_bounds(w: int) -> Bounds:
    """log2 x (FS 22.10.8): NaN and a negative number give NaN, a zero -inf, +inf +inf;
    otherwise log2(x) within 2^-21 absolute for x in [0.5, 2], 2^-21 relative elsewhere."""
    if f32_is_nan(w):
        return _nan()
    if f32_is_zero(w):
        return _exact(F32_SIGN | F32_INF)
    if w & F32_SIGN:
        return _nan()
    if w == F32_INF:
        return _exact(F32_INF)
    x = f32_value(w)
    with localcontext() as context:
        context.prec = 60
        y = Decimal(x).ln() / Decimal(2).ln()
    low, high = _bracket(y)
    nearest = nearest_f32(Fraction(y))
    if 0.5 <= x <= 2.0:
        return (nearest, *_accepted(low - RELATIVE, high + RELATIVE, _nearest(low, high)))
    return _within_relative(low, high, nearest)


# ----------------------------------------------------------------------------------------------
# Fused operations and the divide: every serial evaluation, each step within 1 ULP


#: An extended real: a rational, or an infinity (a float, only ever +inf or -inf).
Ext = Fraction | float
INF = math.inf


@dataclass(frozen=True)
class Span:
    """What the evaluations of an expression may give: every number between ``lo`` and ``hi``
    (float32 values), and whether some evaluation gives a NaN (``nan``) or a number
    (``number``)."""

    lo: Ext
    hi: Ext
    nan: bool = False
    number: bool = True


NAN_ONLY = Span(-INF, INF, nan=True, number=False)


def _sum(a: Ext, b: Ext) -> Ext | None:
    if math.isinf(a) and math.isinf(b) and (a > 0) != (b > 0):
        return None
    if math.isinf(a) or math.isinf(b):
        return a if math.isinf(a) else b
    return Fraction(a) + Fraction(b)


def _product(a: Ext, b: Ext) -> Ext | None:
    if (math.isinf(a) and b == 0) or (math.isinf(b) and a == 0):
        return None
    if math.isinf(a) or math.isinf(b):
        return INF if (a > 0) == (b > 0) else -INF
    return Fraction(a) * Fraction(b)


def _value(w: int) -> Ext:
    """A non-NaN float32 pattern as an extended real (the zero's sign dropped)."""
    x = f32_value(w)
    return x if math.isinf(x) else Fraction(x)


def step(q: Ext) -> tuple[Ext, Ext]:
    """The least and the greatest value one operation whose exact result is ``q`` may write:
    either float32 neighbour (1 ULP; beyond the largest float32: the largest or the infinity),
    a denormal flushed to zero or not."""
    if math.isinf(q):
        return q, q
    down, up = round_f32(Fraction(q), upward=False), round_f32(Fraction(q), upward=True)
    low = Fraction(0) if f32_is_denormal(down) and not down & F32_SIGN else _value(down)
    high = Fraction(0) if f32_is_denormal(up) and up & F32_SIGN else _value(up)
    return low, high


def _step_span(q: Ext | None) -> Span:
    if q is None:
        return NAN_ONLY
    return Span(*step(q))


def _add_spans(a: Span, b: Span) -> Span:
    """An addition of two evaluated operands, within 1 ULP."""
    number = a.number and b.number and not (
        a.lo == a.hi and b.lo == b.hi and math.isinf(a.lo) and math.isinf(b.lo)
         and (a.lo > 0) != (b.lo > 0))
    nan = a.nan or b.nan or (a.hi == INF and b.lo == -INF) or (a.lo == -INF and b.hi == INF)
    if nan or not number:
        return Span(-INF, INF, nan=nan, number=number)
    low, high = _sum(a.lo, b.lo), _sum(a.hi, b.hi)
    assert low is not None and high is not None
    return Span(step(low)[0], step(high)[1])


def _serial(spans: list[Span]) -> Span:
    """What every serial evaluation of the sum of ``spans`` may give: any two are added, then
    the rest, so every binary tree over the terms. Per subset of the terms, the hull of its
    sums over every split into two parts: the ends of an addition of spans are monotone in the
    operands' ends, and the parts' evaluations are independent, so the hull is exact (a NaN of
    +inf + -inf is reached where some evaluation of one part reaches +inf and one of the other
    -inf)."""
    best: dict[int, Span] = {1 << k: span for k, span in enumerate(spans)}
    for subset in range(1, 1 << len(spans)):
        if subset in best:
            continue
        sums = []
        part = (subset - 1) & subset
        while part:
            rest = subset ^ part
            if part < rest:  # each split once
                sums.append(_add_spans(best[part], best[rest]))
            part = (part - 1) & subset
        best[subset] = _hull(sums)
    return best[(1 << len(spans)) - 1]


def _hull(spans: list[Span]) -> Span:
    numbers = [s for s in spans if s.number]
    nan = any(s.nan for s in spans)
    if not numbers:
        return NAN_ONLY
    return Span(min(s.lo for s in numbers), max(s.hi for s in numbers), nan=nan)


def _zero_sign(terms: list[tuple[Ext, bool]]) -> int:
    """IEEE's sign of an exact zero sum of ``terms`` (value, negative sign) to nearest: -0 only
    where every term is -0."""
    return F32_SIGN if all(v == 0 and negative for v, negative in terms) else 0


def _negative(w: int) -> bool:
    return bool(w & F32_SIGN)


@lru_cache(maxsize=1 << 16)
def dot_bounds(xs: tuple[int, ...], ys: tuple[int, ...], addend: int | None = None) -> Bounds:
    """sum(x_i * y_i), plus ``addend`` where given (FS 22.10.9), over flushed float32
    operands, as FS 3.1.3.2 lets a fused operation err: no worse than the worst serial
    evaluation of its unfused expansion, each step within 1 ULP (E-04), a denormal step result
    flushed or not, an intermediate overflow saturated or kept. The result to nearest is the
    exact sum rounded once. (nearest, least, greatest); both bounds NaN where some evaluation
    gives a NaN and another a number (an overflow meeting an infinity)."""
    if any(f32_is_nan(w) for w in (*xs, *ys)) or (addend is not None and f32_is_nan(addend)):
        return _nan()
    products = [_product(_value(x), _value(y)) for x, y in zip(xs, ys, strict=True)]
    exact = [p for p in products if p is not None]
    if len(exact) < len(products):  # inf * 0 in every evaluation
        return _nan()
    terms = [(p, _negative(x) != _negative(y))
             for p, x, y in zip(exact, xs, ys, strict=True)]
    if addend is not None:
        terms.append((_value(addend), _negative(addend)))
    total: Ext | None = Fraction(0)
    for value, _ in terms:
        total = None if total is None else _sum(total, value)
    if total is None:  # infinite terms of both signs: +inf + -inf in every evaluation
        return _nan()
    spans = [_step_span(p) for p in exact]
    if addend is not None:
        spans.append(Span(_value(addend), _value(addend)))
    span = _hull([_serial(spans), _step_span(total)])
    nearest = _nearest_pattern(total, _zero_sign(terms))
    if span.nan:
        return nearest, F32_QUIET_NAN, F32_QUIET_NAN
    return (nearest, *_span_patterns(span, nearest))


def _nearest_pattern(exact: Ext, zero: int) -> int:
    """The exact result rounded once to nearest even: an infinity of its sign, or the zero
    ``zero`` (IEEE's sign of an exact zero), or the float32 nearest."""
    if math.isinf(exact):
        return F32_INF | (F32_SIGN if exact < 0 else 0)
    if exact == 0:
        return zero
    return nearest_f32(Fraction(exact))


def _span_patterns(span: Span, nearest: int) -> tuple[int, int]:
    """A span's ends as float32 patterns: a zero end is -0.0 below and +0.0 above (both zeros
    in), a span of zero alone the nearest result's zero."""
    if span.lo == 0 and span.hi == 0:
        return nearest, nearest
    return _pattern_of(span.lo, low=True), _pattern_of(span.hi, low=False)


def _pattern_of(value: Ext, low: bool) -> int:
    if math.isinf(value):
        return F32_INF | (F32_SIGN if value < 0 else 0)
    if value == 0:
        return F32_SIGN if low else 0
    return round_f32(Fraction(value), upward=False)  # a float32 value: exact


@lru_cache(maxsize=1 << 16)
def quotient_bounds(x_word: int, y_word: int) -> Bounds:
    """The divide (FS 22.10.2, 3.1.3.2): x * (1/y) with the reciprocal within 1 ULP (flushed where
    it is a denormal: |y| > 2^126) and the multiply to nearest or truncated (E-03), or a direct
    divide at least as accurate (within 1 ULP of x/y). The result to nearest is x/y rounded
    once. (nearest, least, greatest); both bounds NaN where one evaluation gives a NaN and
    another a number (inf / a huge divisor, whose reciprocal may flush to 0)."""
    if f32_is_nan(x_word) or f32_is_nan(y_word):
        return _nan()
    x, y = _value(x_word), _value(y_word)
    sign = F32_SIGN if _negative(x_word) != _negative(y_word) else 0
    exact = _quotient(x, y, sign)
    if exact is None:
        return _nan()
    reciprocal = _step_span(_quotient(Fraction(1), y, y_word & F32_SIGN))
    candidates: list[Span] = [_step_span(exact)]
    for r in (reciprocal.lo, reciprocal.hi):
        q = _product(x, r)
        candidates.append(NAN_ONLY if q is None else _multiply_step(q))
    span = _hull(candidates)
    nearest = _nearest_pattern(exact, sign)
    if span.nan:
        return nearest, F32_QUIET_NAN, F32_QUIET_NAN
    return (nearest, *_span_patterns(span, nearest))


def _quotient(a: Ext, b: Ext, sign: int) -> Ext | None:
    """a / b over the extended reals; ``sign``, the sign bit of the quotient (the operands'
    signs, zeros included), gives an infinite quotient its sign."""
    if (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
        return None
    if math.isinf(a) or b == 0:
        return -INF if sign else INF
    if math.isinf(b):
        return Fraction(0)
    return Fraction(a) / Fraction(b)


def _multiply_step(q: Ext) -> Span:
    """The multiply of the divide: to nearest even or truncated (E-03), flushed or not."""
    if math.isinf(q):
        return Span(q, q)
    exact = Fraction(q)
    nearest = nearest_f32(exact)
    truncated = round_f32(exact, upward=exact < 0)
    values = [_flushed_values(w) for w in (nearest, truncated)]
    return Span(min(v[0] for v in values), max(v[1] for v in values))


def _flushed_values(w: int) -> tuple[Ext, Ext]:
    """The least and greatest value a written pattern stands for, flushed or not."""
    value = _value(w)
    if f32_is_denormal(w):
        return (min(value, Fraction(0)), max(value, Fraction(0)))
    return value, value


# ----------------------------------------------------------------------------------------------
# Sine and cosine: absolute 0.0008 on [-100 pi, 100 pi], [-1, 1] beyond


#: pi to 100 significant digits (the 60-digit arithmetic below needs fewer).
PI = Decimal("3.141592653589793238462643383279502884197169399375105820974944592307816406286"
             "208998628034825342117068")
#: The absolute error FS 22.10.20 allows, and where it holds.
SINCOS_ERROR = Fraction(8, 10000)
NEGATIVE_ONE = 0xBF800000


def _sin_cos(x: Fraction) -> tuple[Decimal, Decimal]:
    """sin x and cos x to about 55 digits: x reduced by a multiple of 2 pi (|x| <= 100 pi here,
    so the reduction loses under 3 digits), then the Taylor series on [-pi, pi]."""
    with localcontext() as context:
        context.prec = 60
        y = Decimal(x.numerator) / Decimal(x.denominator)
        turns = (y / (2 * PI)).to_integral_value()
        r = y - turns * 2 * PI
        term, sine, k = r, r, 1
        while abs(term) > Decimal(10) ** -58:
            term = -term * r * r / ((2 * k) * (2 * k + 1))
            sine += term
            k += 1
        term, cosine, k = Decimal(1), Decimal(1), 1
        while abs(term) > Decimal(10) ** -58:
            term = -term * r * r / ((2 * k - 1) * (2 * k))
            cosine += term
            k += 1
        return +sine, +cosine


def _periodic_bounds(w: int, cosine: bool) -> Bounds:
    """sin or cos of a flushed float32 (FS 22.10.20): NaN and the infinities give NaN; a zero
    gives sin = the zero, cos = 1; within [-100 pi, 100 pi] any float32 within 0.0008 of the
    exact value (and in [-1, 1]); beyond, any float32 in [-1, 1] (Q-03), to nearest +0."""
    if f32_is_nan(w) or f32_is_inf(w):
        return _nan()
    if f32_is_zero(w):
        return _exact(ONE if cosine else w)
    x = Fraction(f32_value(w))
    if abs(x) > 100 * Fraction(PI):
        return 0, NEGATIVE_ONE, ONE
    sine, cos_value = _sin_cos(x)
    y = cos_value if cosine else sine
    low, high = _bracket(y)
    nearest = nearest_f32(Fraction(y))
    lo, hi = _accepted(max(low - SINCOS_ERROR, Fraction(-1)),
                       min(high + SINCOS_ERROR, Fraction(1)), _nearest(low, high))
    return nearest, lo, hi


@lru_cache(maxsize=1 << 16)
def sine_bounds(w: int) -> Bounds:
    return _periodic_bounds(w, cosine=False)


@lru_cache(maxsize=1 << 16)
def cosine_bounds(w: int) -> Bounds:
    return _periodic_bounds(w, cosine=True)
