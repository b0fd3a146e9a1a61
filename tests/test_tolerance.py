"""The tolerance helpers (``sm5.oracle.rulelang.tolerance``) against definitions of their own:
the bounds of ``rcp`` and ``rsq`` checked exactly (a float32 f is within 2^-21 of 1/x when
|f * x - 1| <= 2^-21, of 1/sqrt(x) when (1 - 2^-21)^2 <= f^2 * x <= (1 + 2^-21)^2), those of
``exp`` and ``log`` against binary64's functions away from the ends, and the fused operations'
bounds holding the evaluations a real implementation performs (IEEE single precision, step by
step, in the orders D3D11 allows)."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from fractions import Fraction

import pytest

from sm5.oracle.machine.state import f32_order
from sm5.oracle.rulelang import tolerance
from sm5.oracle.rulelang.float64 import f32_value

EPS = Fraction(1, 2**21)


def bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def single(x: float) -> float:
    """x rounded to nearest float32 (CPython's conversion), as a float."""
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def value(w: int) -> Fraction:
    return Fraction(f32_value(w))


def inside(w: int, lo: int, hi: int) -> bool:
    return f32_order(lo) <= f32_order(w) <= f32_order(hi)


def neighbours(lo: int, hi: int) -> tuple[int, int]:
    """The float32s just outside [lo, hi] (both ends positive normals here)."""
    return lo - 1, hi + 1


def operands(seed: int, count: int, low: int, high: int) -> list[int]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        x = rng.uniform(1.0, 2.0) * 2.0 ** rng.randint(low, high)
        out.append(bits(x))
    return out


@pytest.mark.parametrize("w", operands(1, 300, -120, 120))
def test_rcp_bounds_are_the_float32s_within_2_21_of_the_reciprocal(w: int) -> None:
    _, lo, hi = tolerance.reciprocal_bounds(w)
    x = value(w)

    def within(f: int) -> bool:
        return abs(value(f) * x - 1) <= EPS

    assert within(lo) and within(hi)
    below, above = neighbours(lo, hi)
    assert not within(below) and not within(above)


@pytest.mark.parametrize("w", operands(2, 300, -120, 120))
def test_rsq_bounds_are_the_float32s_within_2_21_of_the_reciprocal_root(w: int) -> None:
    _, lo, hi = tolerance.reciprocal_sqrt_bounds(w)
    x = value(w)

    def within(f: int) -> bool:
        return (1 - EPS) ** 2 <= value(f) ** 2 * x <= (1 + EPS) ** 2

    assert within(lo) and within(hi)
    below, above = neighbours(lo, hi)
    assert not within(below) and not within(above)


def _relative_check(w: int, bounds: tuple[int, int, int], exact: float) -> None:
    """lo and hi lie within 2^-21 of the binary64 value (its own error, about 2^-52, is far
    below the margin kept) and their outer neighbours beyond it."""
    _, lo, hi = bounds
    margin = 2.0**-40
    for end in (lo, hi):
        assert abs(f32_value(end) / exact - 1) <= 2.0**-21 + margin, hex(w)
    below, above = neighbours(lo, hi) if exact > 0 else (lo + 1, hi - 1)
    for outside in (below, above):
        assert abs(f32_value(outside) / exact - 1) > 2.0**-21 - margin, hex(w)


@pytest.mark.parametrize("x", [random.Random(3).uniform(-120.0, 120.0) for _ in range(200)])
def test_exp_bounds_against_binary64(x: float) -> None:
    w = bits(x)
    _relative_check(w, tolerance.exp2_bounds(w), 2.0 ** f32_value(w))


@pytest.mark.parametrize("w", operands(4, 200, -100, 100))
def test_log_bounds_against_binary64(w: int) -> None:
    x = f32_value(w)
    exact = math.log2(x)
    _, lo, hi = tolerance.log2_bounds(w)
    if 0.5 <= x <= 2.0:
        margin = 2.0**-45
        assert abs(f32_value(lo) - exact) <= 2.0**-21 + margin
        assert abs(f32_value(hi) - exact) <= 2.0**-21 + margin
        below = lo + 1 if lo & 0x80000000 else lo - 1
        above = hi - 1 if hi & 0x80000000 else hi + 1
        assert abs(f32_value(below) - exact) > 2.0**-21 - margin
        assert abs(f32_value(above) - exact) > 2.0**-21 - margin
    elif exact != 0:
        _relative_check(w, (0, lo, hi), exact)


@pytest.mark.parametrize(("bounds", "w", "expected"), [
    # rcp(2.0): 0.5 * (1 -/+ 2^-21); spacing 2^-25 below 0.5 (8 steps), 2^-24 above (4 steps)
    (tolerance.reciprocal_bounds, 0x40000000, (0x3F000000, 0x3EFFFFF8, 0x3F000004)),
    # rcp(-0) = -inf; rcp(+inf) = +0 (FS 22.10.18 table)
    (tolerance.reciprocal_bounds, 0x80000000, (0xFF800000,) * 3),
    (tolerance.reciprocal_bounds, 0x7F800000, (0,) * 3),
    # rsq(-4) is a NaN; rsq(-0) = -inf (FS 22.10.19)
    (tolerance.reciprocal_sqrt_bounds, 0xC0800000, (0x7FC00000,) * 3),
    (tolerance.reciprocal_sqrt_bounds, 0x80000000, (0xFF800000,) * 3),
    # exp(-150) = 2^-150: no float32 within 2^-21; to nearest a tie between 0 and 2^-149: +0
    (tolerance.exp2_bounds, 0xC3160000, (0,) * 3),
    # exp(128) = 2^128: the largest float32 or +inf
    (tolerance.exp2_bounds, 0x43000000, (0x7F800000, 0x7F7FFFFF, 0x7F800000)),
    # log(1) = 0 within 2^-21 absolute: -2^-21 .. 2^-21
    (tolerance.log2_bounds, 0x3F800000, (0, 0xB5000000, 0x35000000)),
    # log(-0) = -inf (FS 3.1.3.1)
    (tolerance.log2_bounds, 0x80000000, (0xFF800000,) * 3),
])
def test_worked_values(bounds: Callable[[int], tuple[int, int, int]], w: int,
                       expected: tuple[int, int, int]) -> None:
    assert bounds(w) == expected


# ----------------------------------------------------------------------------------------------
# Fused operations: real evaluations lie inside


def moderate(rng: random.Random) -> float:
    """A float32 of moderate exponent (sums of such products are exact in binary64)."""
    return single(rng.choice((-1, 1)) * rng.uniform(1.0, 2.0) * 2.0 ** rng.randint(-5, 5))


def _cases(seed: int, n: int, count: int = 150) -> list[tuple[list[float], list[float]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        xs = [moderate(rng) for _ in range(n)]
        ys = [moderate(rng) for _ in range(n)]
        if rng.random() < 0.5:  # a near-cancellation: the last product undoes the others
            partial = sum(x * y for x, y in zip(xs[:-1], ys[:-1], strict=True))
            xs[-1] = single(-partial) if partial else xs[-1]
            ys[-1] = 1.0
        out.append((xs, ys))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_fused_bounds_hold_every_serial_single_precision_evaluation(n: int) -> None:
    for xs, ys in _cases(10 + n, n):
        addend = None
        if n == 1:
            addend = moderate(random.Random(hash((xs[0], ys[0])) & 0xFFFF))
        words_x = tuple(bits(x) for x in xs)
        words_y = tuple(bits(y) for y in ys)
        nearest, lo, hi = tolerance.dot_bounds(
            words_x, words_y, None if addend is None else bits(addend))
        products = [single(x * y) for x, y in zip(xs, ys, strict=True)]  # exact in binary64
        terms = products + ([addend] if addend is not None else [])
        orders = [terms, terms[::-1], sorted(terms), sorted(terms, key=abs)]
        for order in orders:
            total = order[0]
            for term in order[1:]:
                total = single(total + term)  # the binary64 sum is exact here
            assert inside(bits(total), lo, hi), (xs, ys, addend, hex(lo), hex(hi))
        assert inside(nearest, lo, hi)
        if lo == hi:
            assert nearest == lo


def test_division_bounds_hold_the_divide_and_the_reciprocal_product() -> None:
    rng = random.Random(20)
    for _ in range(400):
        x, y = moderate(rng), single(rng.uniform(1.0, 2.0) * 2.0 ** rng.randint(-100, 100))
        nearest, lo, hi = tolerance.quotient_bounds(bits(x), bits(y))
        direct = single(x / y)  # binary64's quotient then narrowed: a neighbour of x / y
        through_reciprocal = single(x * single(1.0 / y))
        for got in (direct, through_reciprocal, f32_value(nearest)):
            assert inside(bits(got), lo, hi), (x, y, hex(lo), hex(hi))


@pytest.mark.parametrize(("args", "expected"), [
    # mad(1 + 2^-23, 1 - 2^-24, -1): the product 1 + 2^-24 - 2^-47 rounds to 1.0 or 1 + 2^-23,
    # so the sum is 0 or 2^-23; fused 2^-24 - 2^-47 (0x337FFFFE) between
    (((0x3F800001,), (0x3F7FFFFF,), 0xBF800000), (0x337FFFFE, 0x80000000, 0x34000000)),
    # mad(FLT_MAX, 2, -FLT_MAX): the product overflows (FLT_MAX or +inf): 0 or +inf; fused FLT_MAX
    (((0x7F7FFFFF,), (0x40000000,), 0xFF7FFFFF), (0x7F7FFFFF, 0x80000000, 0x7F800000)),
    # mad(-0, 1, -0) = -0 exactly (every term -0)
    (((0x80000000,), (0x3F800000,), 0x80000000), (0x80000000,) * 3),
    # dp2((FLT_MAX, FLT_MAX), (FLT_MAX, -FLT_MAX)): exactly 0, but an unfused evaluation gives
    # inf - inf: a NaN or a number
    (((0x7F7FFFFF, 0x7F7FFFFF), (0x7F7FFFFF, 0xFF7FFFFF), None), (0, 0x7FC00000, 0x7FC00000)),
])
def test_fused_worked_values(args: tuple[tuple[int, ...], tuple[int, ...], int | None],
                             expected: tuple[int, int, int]) -> None:
    assert tolerance.dot_bounds(*args) == expected


@pytest.mark.parametrize(("x", "y", "expected"), [
    (0x3F800000, 0x40400000, (0x3EAAAAAB, 0x3EAAAAAA, 0x3EAAAAAB)),  # 1/3
    (0x3F800000, 0x80000000, (0xFF800000,) * 3),  # 1 / -0 = -inf
    (0x7F800000, 0x7F000000, (0x7F800000, 0x7FC00000, 0x7FC00000)),  # inf / 2^127: NaN or inf
    (0x3F800000, 0x7F000000, (0x00400000, 0x80000000, 0x00400000)),  # 1 / 2^127: 2^-127 or 0
    (0xBF800000, 0x7F800000, (0x80000000,) * 3),  # -1 / inf = -0
])
def test_division_worked_values(x: int, y: int, expected: tuple[int, int, int]) -> None:
    assert tolerance.quotient_bounds(x, y) == expected


@pytest.mark.parametrize("seed", range(4))
def test_directed_rounding_brackets_the_value_by_adjacent_float32s(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        q = Fraction(rng.choice((-1, 1)) * rng.getrandbits(60) + 1, 1 << rng.randint(0, 220))
        down, up = tolerance.round_f32(q, upward=False), tolerance.round_f32(q, upward=True)
        low, high = value(down), value(up)
        assert low <= q <= high
        # adjacent: nothing float32 holds lies strictly between (the next pattern up from low)
        after = down + 1 if not down & 0x80000000 else (down - 1 if down != 0x80000000 else 1)
        assert low == q == high or value(after) == high
