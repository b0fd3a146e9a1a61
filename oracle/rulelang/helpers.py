"""The rule language's helper functions, one registry: each entry holds the helper's name, its
argument and result types, its Python function, its z3 model and the special values the vector
generator gives the inputs that reach each argument. A helper without a z3 model (the tolerance
helpers: the bounds of a transcendental result) is an uninterpreted function in the proofs.

Types (``sm5.oracle.rulelang.ruletypes`` checks them when the spec loads):

``p64``, ``p32``
    a bit pattern held as an exact integer (a double, a float32, a 32-bit result of a
    conversion); an argument outside 0 .. 2**width - 1 is an error in Python and a side
    condition in z3.
``uword``, ``iword``
    a 32-bit word in its unsigned or signed view (``sm5.oracle.rulelang.words``); in z3 a 32-bit
    bit-vector, in Python the integer of the view.
``bool``
    a truth value.

The Python function of an entry takes and returns values as a rule holds them (patterns as
non-negative integers, a word as the integer of its view); the z3 model takes one bit-vector per
argument (of the argument's width) and returns a bit-vector of the result's width or a Bool.
z3 is imported when a model is first used, so the oracle's Python back end never loads it.
Word operators of the rule language (``+``, ``<<``, ...) on words are these helpers too: the
type checker rewrites ``a + b`` on two uwords into ``uword_sum(a, b)``.
"""

from __future__ import annotations

import importlib
import math
import struct
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sm5.oracle.rulelang import float32, float64, tolerance, words

HelperType = Literal["p64", "p32", "uword", "iword", "bool"]

#: Width in bits of each value type (a Bool has none).
WIDTHS: Mapping[str, int] = {"p64": 64, "p32": 32, "uword": 32, "iword": 32}
WORD_TYPES = frozenset({"uword", "iword"})
PATTERN_TYPES = frozenset({"p64", "p32"})


class _LazyZ3:
    """``Z.fpAdd`` is ``z3.fpAdd``, z3 imported on first use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("z3"), name)


Z = _LazyZ3()


@dataclass(frozen=True)
class Specials:
    """Values the vector generator gives every input that reaches an argument, each with its
    tag; ``width`` is the argument's (a set is offered to inputs of that width only)."""

    name: str
    width: int
    values: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Helper:
    """One helper of the rule language."""

    name: str
    args: tuple[HelperType, ...]
    result: HelperType
    python: Callable[..., int | bool]
    #: None: no z3 model; the proofs read the helper as an uninterpreted function.
    z3: Callable[..., Any] | None
    #: Per argument, the special-value sets of the inputs that reach it.
    specials: tuple[tuple[Specials, ...], ...]
    text: str
    #: In the proofs that abstract arithmetic (``sm5.oracle.proofs.z3rules.symbols``), is the
    #: pattern result a free pattern? The float32 helpers but the square roots stay exact: z3
    #: decides their 32-bit floating point quickly, and clauses lean on them (a flushed operand
    #: is a zero).
    abstracted: bool = True

    @property
    def arity(self) -> int:
        return len(self.args)

    @property
    def on_patterns(self) -> bool:
        """An argument or the result is a pattern held as an exact integer: z3 states it
        natively only in the bit-vector encoding (``Int2BV`` of every argument otherwise)."""
        return any(t in PATTERN_TYPES for t in (*self.args, self.result))


# ----------------------------------------------------------------------------------------------
# Special values


def _double_bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def _f64_specials() -> Specials:
    """IEEE binary64 patterns every double path must keep apart, computed from the format."""
    bits = _double_bits
    sign = 1 << 63
    exp_mask = 0x7FF << 52
    frac_top = (1 << 52) - 1
    return Specials("binary64", 64, (
        (bits(0.0), "zero"), (sign, "neg-zero"),
        (1, "denormal"), (frac_top, "denormal"), (sign | 1, "denormal"),
        (sign | frac_top, "denormal"),
        (bits(sys.float_info.min), "boundary"), (bits(0.5), "boundary"),
        (bits(1.0), "boundary"), (bits(-1.0), "boundary"), (bits(2.0), "boundary"),
        (bits(-2.0), "boundary"), (bits(math.nextafter(1.0, 2.0)), "boundary"),
        # Half an ULP of 1.0: 1 + 2^-53 and (1 + 2^-52) + 2^-53 are the two ties of rounding.
        (bits(2.0**-53), "halfway"),
        # Just beyond the 32-bit integer ranges of the double-to-integer conversions.
        (bits(2.0**31), "range"), (bits(-(2.0**31) - 1.0), "range"), (bits(2.0**32), "range"),
        (bits(sys.float_info.max), "extreme"), (bits(-sys.float_info.max), "extreme"),
        (exp_mask, "inf"), (sign | exp_mask, "inf"),
        (exp_mask | (1 << 51), "nan"), (sign | exp_mask | (1 << 51), "nan"),
        (exp_mask | 1, "nan"), (exp_mask | frac_top, "nan"), (sign | exp_mask | 0x12345, "nan"),
    ))


def _f32_edges() -> Specials:
    """Doubles at the edges of float32, for a narrowing: the largest float32, the halfway point
    above it (rounds to infinity) and the double below that point, the smallest normal and the
    halfway point below it, the smallest denormal, the ties 2^-150 (to 0) and 3 * 2^-150,
    the ties of 1.0 (1 + 2^-24 to 1.0, 1 + 3 * 2^-24 up) and a value past a tie."""
    largest = (2.0 - 2.0**-23) * 2.0**127
    halfway = (2.0 - 2.0**-24) * 2.0**127
    values = (largest, -largest, halfway, -halfway, math.nextafter(halfway, 0.0), 2.0**-126,
              -(2.0**-126), (1.0 - 2.0**-25) * 2.0**-126, 2.0**-149, -(2.0**-149), 2.0**-150,
              3 * 2.0**-150, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24, -(1.0 + 2.0**-24 + 2.0**-52))
    return Specials("float32 edges", 64, tuple((_double_bits(v), "float32") for v in values))


#: Doubles every double input gets (``f64_specials`` of the generator).
F64 = _f64_specials()
#: Doubles at the edges of float32, for the inputs of a narrowing.
F32_EDGES = _f32_edges()
#: float32 patterns every float32 input must keep apart: zeros, the smallest and largest
#: denormals, the smallest normal, 1.0, the largest finite, infinities and NaNs (either sign).
F32 = Specials("float32", 32, tuple((v, "float32") for v in (
    0, 0x80000000, 1, 0x007FFFFF, 0x80000001, 0x807FFFFF, 0x00800000, 0x80800000,
    0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
    0x7FC00000, 0xFFC00000, 0x7F800001)))
#: float32 patterns at the edges of the float32 conversions and roundings: the ties of the
#: rounding to integers (0.5, 1.5, 2.5, -0.5, -2.5) and values just off them, the largest
#: float32 below 2^23 (the last with a fraction) and 2^23, the integer limits (2^31, 2^32 and
#: the float32 just below each, -2^31 and the float32 below it), the half limits (65504, the
#: float32 just above it, 65520 where rounding to nearest would reach the half infinity, the
#: value just below it), ties and near-ties of half rounding (1 + 2^-11, 1 + 3 * 2^-12), the
#: smallest half normal 2^-14, the smallest half denormal 2^-24, 2^-25 (the tie below it) and
#: a value between, and tiny negatives whose fraction rounds to 1.0 (-2^-30, -2^-25).
F32_EDGES32 = Specials("float32 conversion edges", 32, tuple((v, "float32-edge") for v in (
    0x3F000000, 0x3FC00000, 0x40200000, 0xBF000000, 0xC0200000, 0x3EFFFFFF, 0x3F000001,
    0x4AFFFFFF, 0x4B000000, 0x4F000000, 0x4EFFFFFF, 0xCF000000, 0xCF000001, 0x4F800000,
    0x4F7FFFFF, 0x477FE000, 0x477FE001, 0x477FF000, 0x477FEFFF, 0x3F801000, 0x3F801800,
    0x38800000, 0x33800000, 0x33000000, 0x33400000, 0xB0800000, 0xB3000000, 0x3F7FFFFF)))
#: Half patterns (in the low 16 bits) at the edges of binary16: zeros, the smallest and largest
#: denormals, the smallest normal, 1.0, the largest finite, infinities, NaNs, and words whose
#: high 16 bits are set (ignored).
F16 = Specials("binary16", 32, tuple((v, "binary16") for v in (
    0x0000, 0x8000, 0x0001, 0x03FF, 0x8001, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00,
    0xFC00, 0x7E00, 0x7C01, 0xFE00, 0xABCD3C00, 0xFFFF0001)))
#: Integers at the edges of float32 exactness: 2^24 and its neighbours (2^24 + 1 is the first
#: integer float32 cannot hold, a tie), 2^24 + 3 (a tie rounding up), 2^25 + 2, the largest
#: words of both views, and their negatives.
INT_TO_FLOAT = Specials("integer to float32", 32, tuple((v, "int-to-float") for v in (
    0x01000000, 0x01000001, 0x00FFFFFF, 0x01000003, 0x02000002, 0x7FFFFFFF, 0x7FFFFFC0,
    0x7FFFFFBF, 0x80000000, 0x80000001, 0xFEFFFFFF, 0xFFFFFFFF, 0xFFFFFF7F, 0xFFFFFF80)))
#: Shift counts, bitfield widths and offsets: bits [4:0] at and around their ends, and counts
#: whose high bits a correct implementation ignores (``uword_shl(1, 33) == 2``).
COUNTS = Specials("count", 32, tuple((v, "count") for v in (
    0, 1, 4, 8, 16, 31, 32, 33, 63, 0xFFFFFFFF)))
#: Words at the edges of both views.
WORD_EDGES = Specials("word", 32, tuple((v, "word") for v in (
    0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF)))

#: float32 patterns at the edges of the tolerances (FS 22.10): 2^x near the top of the range
#: (127.99999, 128) and at and below the denormals (-126, -149, -150, -160), log2 at the ends of
#: its absolute-error interval (0.5 and the float32 below, 2 and the float32 above), reciprocals
#: whose result is a denormal (2^126 .. 2^127) or the largest power of two (2^-126), and
#: operands whose results float32 holds exactly (4, 0.25) or not (3).
TOLERANCE_EDGES = Specials("tolerance edges", 32, tuple((v, "float32-edge") for v in (
    0x42FFFFFF, 0x43000000, 0xC2FC0000, 0xC3150000, 0xC3160000, 0xC3200000, 0x3F000000,
    0x3EFFFFFF, 0x40000000, 0x40000001, 0x7E800000, 0x7F000000, 0xFF000000, 0x40800000,
    0x3E800000, 0x40400000, 0xC0400000)))

#: Every special-value set, in the order the generator appends them to an input's candidates.
SPECIAL_SETS = (F64, F32_EDGES, F32, F32_EDGES32, F16, INT_TO_FLOAT, COUNTS, WORD_EDGES,
                TOLERANCE_EDGES)


# ----------------------------------------------------------------------------------------------
# z3 models of the float helpers (z3's floating-point theory, round to nearest even)


def _fp(word: Any) -> Any:
    return Z.fpBVToFP(word, Z.Float64())


def _fp32(word: Any) -> Any:
    return Z.fpBVToFP(word, Z.Float32())


def _pattern(result: Any) -> Any:
    """A double result as its pattern; a NaN becomes the default quiet NaN."""
    return Z.If(Z.fpIsNaN(result), Z.BitVecVal(float64.QUIET_NAN, 64), Z.fpToIEEEBV(result))


def _to_int(word: Any, low: int, high: int, signed: bool, nearest: bool = False) -> Any:
    """Truncate toward zero (or round to nearest even) after clamping to [low, high]; NaN
    gives 0 (double to integer)."""
    return _fp_to_int(_fp(word), low, high, signed, nearest)


def _fp_to_int(x: Any, low: int, high: int, signed: bool, nearest: bool = False) -> Any:
    """:func:`_to_int` on a floating-point term of any sort that holds the bounds exactly.
    The guards keep the conversion inside the 32-bit range."""
    sort = x.sort()
    top = Z.FPVal(float(high) + (0.5 if nearest else 1.0), sort)
    bottom = Z.FPVal(float(low), sort)
    convert = Z.fpToSBV if signed else Z.fpToUBV
    below = (Z.fpLEQ(x, bottom) if signed
             else Z.fpLEQ(x, Z.FPVal(0.5, sort)) if nearest
             else Z.fpLT(x, Z.FPVal(1.0, sort)))
    inside = convert(Z.RNE() if nearest else Z.RTZ(), x, Z.BitVecSort(32))
    return Z.If(Z.fpIsNaN(x), Z.BitVecVal(0, 32),
                Z.If(Z.fpGEQ(x, top), Z.BitVecVal(high & 0xFFFFFFFF, 32),
                     Z.If(below, Z.BitVecVal(low & 0xFFFFFFFF, 32), inside)))


def _narrow(word: Any) -> Any:
    """Double to float32, round to nearest even; a NaN becomes binary32's default quiet NaN."""
    narrowed = Z.fpToFP(Z.RNE(), _fp(word), Z.Float32())
    return Z.If(Z.fpIsNaN(narrowed), Z.BitVecVal(float64.F32_QUIET_NAN, 32),
                Z.fpToIEEEBV(narrowed))


def _binary(op: str, rounding: str = "RNE") -> Callable[[Any, Any], Any]:
    return lambda a, b: _pattern(getattr(Z, op)(getattr(Z, rounding)(), _fp(a), _fp(b)))


def _pattern32(result: Any) -> Any:
    """A float32 result as its pattern; a NaN becomes binary32's default quiet NaN."""
    return Z.If(Z.fpIsNaN(result), Z.BitVecVal(float64.F32_QUIET_NAN, 32), Z.fpToIEEEBV(result))


def _flush32(word: Any) -> Any:
    return Z.If(Z.fpIsSubnormal(_fp32(word)), word & Z.BitVecVal(float64.F32_SIGN, 32), word)


def _saturate32(word: Any) -> Any:
    x = _fp32(word)
    one = Z.FPVal(1.0, Z.Float32())
    return Z.If(Z.Or(Z.fpIsNaN(x), Z.fpLEQ(x, Z.FPVal(0.0, Z.Float32()))), Z.BitVecVal(0, 32),
                Z.If(Z.fpGEQ(x, one), Z.BitVecVal(0x3F800000, 32), word))


def _integral32(rounding: str) -> Callable[[Any], Any]:
    return lambda w: _pattern32(Z.fpRoundToIntegral(getattr(Z, rounding)(), _fp32(w)))


def _sqrt32(rounding: str) -> Callable[[Any], Any]:
    return lambda w: _pattern32(Z.fpSqrt(getattr(Z, rounding)(), _fp32(w)))


def _binary32(op: str, rounding: str = "RNE") -> Callable[[Any, Any], Any]:
    return lambda a, b: _pattern32(getattr(Z, op)(getattr(Z, rounding)(), _fp32(a), _fp32(b)))


def _int_to_f32(rounding: str, signed: bool) -> Callable[[Any], Any]:
    convert = Z.fpSignedToFP if signed else Z.fpUnsignedToFP
    return lambda w: Z.fpToIEEEBV(convert(getattr(Z, rounding)(), w, Z.Float32()))


def _f32_to_int(signed: bool) -> Callable[[Any], Any]:
    """Truncation toward zero of a float32, saturated, NaN 0 (2^31 and 2^32 are float32s)."""
    low, high = (-(2**31), 2**31 - 1) if signed else (0, 2**32 - 1)
    return lambda w: _fp_to_int(_fp32(w), low, high, signed)


def _to_f16(rounding: str) -> Callable[[Any], Any]:
    """float32 to binary16 rounded by ``rounding`` (toward zero never reaches the infinity),
    zero extended; a NaN becomes the half default NaN."""
    def model(word: Any) -> Any:
        x = _fp32(word)
        half = Z.fpToIEEEBV(Z.fpToFP(getattr(Z, rounding)(), x, Z.FPSort(5, 11)))
        return Z.If(Z.fpIsNaN(x), Z.BitVecVal(float32.F16_QUIET_NAN, 32), Z.ZeroExt(16, half))
    return model


def _from_f16(word: Any) -> Any:
    half = Z.fpBVToFP(Z.Extract(15, 0, word), Z.FPSort(5, 11))
    return _pattern32(Z.fpToFP(Z.RNE(), half, Z.Float32()))


def _float32_helpers() -> list[Helper]:
    """Helpers on float32 patterns (and the binary16 conversions)."""
    f32_in = ((F32, F32_EDGES32),)

    def unary(name: str, result: HelperType, python: Callable[..., int | bool],
              model: Callable[..., Any], text: str,
              specials: tuple[tuple[Specials, ...], ...] = f32_in,
              abstracted: bool = False) -> Helper:
        return Helper(name, ("p32",), result, python, model, specials, text,
                      abstracted=abstracted)

    def binary(name: str, result: HelperType, python: Callable[..., int | bool],
               model: Callable[..., Any], text: str) -> Helper:
        return Helper(name, ("p32", "p32"), result, python, model, f32_in * 2, text,
                      abstracted=False)

    ints = ((WORD_EDGES, INT_TO_FLOAT),)
    return [
        unary("f32_flush", "p32", float32.flush, _flush32,
              "a denormal becomes the zero of its sign; any other pattern is unchanged"),
        unary("f32_saturate", "p32", float32.saturate, _saturate32,
              "min(1.0, max(0.0, a)): a NaN, a negative number and -0.0 give +0.0"),
        binary("f32_lt", "bool", float32.less, lambda a, b: Z.fpLT(_fp32(a), _fp32(b)),
               "a < b (false on a NaN; denormals compare by value)"),
        binary("f32_ge", "bool", float32.greater_equal, lambda a, b: Z.fpGEQ(_fp32(a), _fp32(b)),
               "a >= b (false on a NaN)"),
        binary("f32_eq", "bool", float32.equal, lambda a, b: Z.fpEQ(_fp32(a), _fp32(b)),
               "a == b (false on a NaN, -0 equals +0)"),
        binary("f32_add", "p32", float32.sum_of, _binary32("fpAdd"),
               "a + b, round to nearest even"),
        binary("f32_sub", "p32", float32.sub, _binary32("fpSub"),
               "a - b, round to nearest even"),
        binary("f32_add_rtz", "p32", float32.add_toward_zero, _binary32("fpAdd", "RTZ"),
               "a + b, round toward zero"),
        # Square roots are abstracted in the proofs, as double arithmetic is: three of them in
        # one query are beyond z3's budget, and no clause leans on their relation to xf.
        unary("f32_sqrt", "p32", float32.square_root, _sqrt32("RNE"),
              "the square root, round to nearest even (a negative number: NaN; -0: -0)",
              abstracted=True),
        unary("f32_sqrt_down", "p32", float32.square_root_down, _sqrt32("RTN"),
              "the square root rounded toward -inf", abstracted=True),
        unary("f32_sqrt_up", "p32", float32.square_root_up, _sqrt32("RTP"),
              "the square root rounded toward +inf", abstracted=True),
        binary("f32_mul", "p32", float32.product, _binary32("fpMul"),
               "a * b, round to nearest even"),
        binary("f32_mul_rtz", "p32", float32.mul_toward_zero, _binary32("fpMul", "RTZ"),
               "a * b, round toward zero"),
        unary("f32_round_ne", "p32", float32.nearest_integral, _integral32("RNE"),
              "to an integral float32, nearest even (a zero keeps the operand's sign)"),
        unary("f32_round_ni", "p32", float32.floor, _integral32("RTN"),
              "to an integral float32 toward -inf"),
        unary("f32_round_pi", "p32", float32.ceiling, _integral32("RTP"),
              "to an integral float32 toward +inf"),
        unary("f32_round_z", "p32", float32.truncate, _integral32("RTZ"),
              "to an integral float32 toward zero"),
        unary("f32_to_i32", "p32", float32.to_i32, _f32_to_int(True),
              "to signed 32-bit: NaN is 0, truncated, saturated"),
        unary("f32_to_u32", "p32", float32.to_u32, _f32_to_int(False),
              "to unsigned 32-bit: NaN is 0, truncated, saturated"),
        *(unary(f"f32_from_{view}{suffix}", "p32", getattr(float32, f"from_{view}{suffix}"),
                _int_to_f32(mode, view == "i32"),
                f"a word read as {reading}, to float32 rounded {rounding}", ints)
          for view, reading in (("i32", "signed"), ("u32", "unsigned"))
          for suffix, mode, rounding in (("", "RNE", "to nearest even"),
                                         ("_down", "RTN", "toward -inf"),
                                         ("_up", "RTP", "toward +inf"))),
        unary("f32_to_f16", "p32", float32.to_f16, _to_f16("RTZ"),
              "to binary16 in the low 16 bits, rounded toward zero (beyond the range: the "
              "largest finite half; NaN: a half NaN)"),
        unary("f32_to_f16_nearest", "p32", float32.to_f16_nearest, _to_f16("RNE"),
              "to binary16 in the low 16 bits, rounded to nearest even (beyond the range: the "
              "half infinity; NaN: a half NaN)"),
        unary("f16_to_f32", "p32", float32.from_f16, _from_f16,
              "the binary16 in the low 16 bits as a float32 (exact)", ((F16,),)),
    ]


def _float_helpers() -> list[Helper]:
    d = (F64,)

    def f64(name: str, arity: int, result: HelperType, python: Callable[..., int | bool],
            model: Callable[..., Any], text: str, specials: tuple[Specials, ...] = d) -> Helper:
        pattern: HelperType = "p64"
        args = (pattern,) * arity
        return Helper(name, args, result, python, model, (specials,) * arity, text)

    def f32(name: str, result: HelperType, python: Callable[..., int | bool],
            model: Callable[..., Any], text: str) -> Helper:
        return Helper(name, ("p32",), result, python, model, ((F32,),), text)

    return [
        f64("f64_add", 2, "p64", float64.sum_of, _binary("fpAdd"), "a + b, round to nearest even"),
        f64("f64_mul", 2, "p64", float64.product, _binary("fpMul"), "a * b, round to nearest even"),
        f64("f64_div", 2, "p64", float64.quotient, _binary("fpDiv"),
            "a / b, round to nearest even"),
        f64("f64_fma", 3, "p64", float64.fma,
            lambda a, b, c: _pattern(Z.fpFMA(Z.RNE(), _fp(a), _fp(b), _fp(c))),
            "a * b + c rounded once"),
        f64("f64_lt", 2, "bool", float64.less, lambda a, b: Z.fpLT(_fp(a), _fp(b)),
            "a < b (false on a NaN)"),
        f64("f64_ge", 2, "bool", float64.greater_equal, lambda a, b: Z.fpGEQ(_fp(a), _fp(b)),
            "a >= b (false on a NaN)"),
        f64("f64_eq", 2, "bool", float64.equal, lambda a, b: Z.fpEQ(_fp(a), _fp(b)),
            "a == b (false on a NaN, -0 equals +0)"),
        f64("f64_is_nan", 1, "bool", float64.is_nan, lambda a: Z.fpIsNaN(_fp(a)), "a NaN"),
        f64("f64_is_inf", 1, "bool", float64.is_inf, lambda a: Z.fpIsInf(_fp(a)),
            "an infinity"),
        f64("f64_is_zero", 1, "bool", float64.is_zero, lambda a: Z.fpIsZero(_fp(a)),
            "either zero"),
        f64("f64_is_denormal", 1, "bool", float64.is_denormal,
            lambda a: Z.fpIsSubnormal(_fp(a)), "a subnormal double"),
        f64("f64_to_i32", 1, "p32", float64.to_i32,
            lambda a: _to_int(a, -(2**31), 2**31 - 1, True),
            "to signed 32-bit: NaN is 0, clamped, truncated"),
        f64("f64_to_u32", 1, "p32", float64.to_u32,
            lambda a: _to_int(a, 0, 2**32 - 1, False),
            "to unsigned 32-bit: NaN is 0, clamped, truncated"),
        f64("f64_to_i32_nearest", 1, "p32", float64.to_i32_nearest,
            lambda a: _to_int(a, -(2**31), 2**31 - 1, True, nearest=True),
            "to signed 32-bit: NaN is 0, clamped, rounded to nearest even"),
        f64("f64_to_u32_nearest", 1, "p32", float64.to_u32_nearest,
            lambda a: _to_int(a, 0, 2**32 - 1, False, nearest=True),
            "to unsigned 32-bit: NaN is 0, clamped, rounded to nearest even"),
        Helper("f64_from_i32", ("p32",), "p64", float64.from_i32,
               lambda w: Z.fpToIEEEBV(Z.fpSignedToFP(Z.RNE(), w, Z.Float64())), ((),),
               "a 32-bit pattern read as signed, as a double (exact)"),
        Helper("f64_from_u32", ("p32",), "p64", float64.from_u32,
               lambda w: Z.fpToIEEEBV(Z.fpUnsignedToFP(Z.RNE(), w, Z.Float64())), ((),),
               "a 32-bit pattern read as unsigned, as a double (exact)"),
        Helper("f64_from_f32", ("p32",), "p64", float64.from_f32,
               lambda w: _pattern(Z.fpToFP(Z.RNE(), _fp32(w), Z.Float64())), ((F32,),),
               "a float32 pattern widened (exact)"),
        f64("f64_to_f32", 1, "p32", float64.to_f32, _narrow,
            "narrowed to float32, round to nearest even, overflow to infinity",
            (F64, F32_EDGES)),
        f64("f64_div_down", 2, "p64", float64.div_down, _binary("fpDiv", "RTN"),
            "a / b rounded toward -inf"),
        f64("f64_div_up", 2, "p64", float64.div_up, _binary("fpDiv", "RTP"),
            "a / b rounded toward +inf"),
        f32("f32_is_nan", "bool", float64.f32_is_nan, lambda w: Z.fpIsNaN(_fp32(w)),
            "a float32 NaN"),
        f32("f32_is_inf", "bool", float64.f32_is_inf, lambda w: Z.fpIsInf(_fp32(w)),
            "a float32 infinity"),
        f32("f32_is_zero", "bool", float64.f32_is_zero, lambda w: Z.fpIsZero(_fp32(w)),
            "a float32 zero"),
        f32("f32_is_denormal", "bool", float64.f32_is_denormal,
            lambda w: Z.fpIsSubnormal(_fp32(w)), "a float32 subnormal"),
    ]


# ----------------------------------------------------------------------------------------------
# Word helpers


def _viewed(function: Callable[..., int], args: tuple[HelperType, ...],
            result: HelperType) -> Callable[..., int | bool]:
    """``function`` on 32-bit patterns as a rule calls it: arguments in their views, the
    result in its view (a bool result as a bool)."""
    del args  # words.* reduce every argument modulo 2**32 themselves
    if result == "iword":
        return lambda *a: words.signed(function(*a))
    if result == "bool":
        return lambda *a: bool(function(*a))
    return function


def _count(c: Any) -> Any:
    return c & Z.BitVecVal(31, 32)


def _field(width: Any, offset: Any, value: Any, arithmetic: bool) -> Any:
    """``field_extract``/``field_extract_signed`` on bit-vectors: the field moved to the top,
    shifted back down."""
    w, o = _count(width), _count(offset)
    thirty_two = Z.BitVecVal(32, 32)
    down = (lambda x, n: x >> n) if arithmetic else Z.LShR
    inside = Z.ULT(w + o, thirty_two)
    return Z.If(w == 0, Z.BitVecVal(0, 32),
                Z.If(inside, down(value << (thirty_two - w - o), thirty_two - w),
                     down(value, o)))


def _field_insert_model(width: Any, offset: Any, insert: Any, base: Any) -> Any:
    w, o = _count(width), _count(offset)
    field = ((Z.BitVecVal(1, 32) << w) - 1) << o
    return ((insert << o) & field) | (base & ~field)


def _word_helpers() -> list[Helper]:
    out: list[Helper] = []

    def register(name: str, args: tuple[HelperType, ...], result: HelperType,
            function: Callable[..., int], model: Callable[..., Any], text: str,
            specials: tuple[tuple[Specials, ...], ...] | None = None) -> None:
        out.append(Helper(name, args, result, _viewed(function, args, result), model,
                          specials if specials is not None else ((WORD_EDGES,),) * len(args),
                          text))

    views: tuple[HelperType, ...] = ("uword", "iword")
    for v in views:
        view = str(v)
        two, one = (v, v), (v,)
        register(f"{view}_sum", two, v, words.sum_of, lambda a, b: a + b, "a + b modulo 2**32")
        register(f"{view}_sub", two, v, words.sub, lambda a, b: a - b, "a - b modulo 2**32")
        register(f"{view}_product", two, v, words.product, lambda a, b: a * b,
            "the low 32 bits of a * b")
        register(f"{view}_neg", one, v, words.neg, lambda a: -a, "-a modulo 2**32")
        register(f"{view}_bitnot", one, v, words.invert, lambda a: ~a, "every bit flipped")
        register(f"{view}_bitand", two, v, words.and_, lambda a, b: a & b, "bitwise and")
        register(f"{view}_bitor", two, v, words.or_, lambda a, b: a | b, "bitwise or")
        register(f"{view}_bitxor", two, v, words.exclusive_or, lambda a, b: a ^ b,
            "bitwise exclusive or")
        register(f"{view}_shl", (v, "uword"), v, words.shl, lambda a, c: a << _count(c),
            "shift left by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    register("uword_shr", ("uword", "uword"), "uword", words.lshr,
        lambda a, c: Z.LShR(a, _count(c)),
        "logical shift right by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    register("iword_shr", ("iword", "uword"), "iword", words.ashr, lambda a, c: a >> _count(c),
        "arithmetic shift right by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    register("uword_div", ("uword", "uword"), "uword", words.quotient, lambda a, b: Z.UDiv(a, b),
        "unsigned quotient (the divisor is not 0)")
    register("uword_mod", ("uword", "uword"), "uword", words.remainder, lambda a, b: Z.URem(a, b),
        "unsigned remainder (the divisor is not 0)")
    fields = ((COUNTS,), (COUNTS,), (WORD_EDGES,))
    register("field_extract", ("uword", "uword", "uword"), "uword", words.field_extract,
        lambda w, o, x: _field(w, o, x, False),
        "field_extract(width, offset, value): the field, zero-extended (width, offset: bits "
        "[4:0])",
        fields)
    register("field_extract_signed", ("uword", "uword", "iword"), "iword",
        words.field_extract_signed, lambda w, o, x: _field(w, o, x, True),
        "field_extract_signed(width, offset, value): the field, sign-extended (width, offset: "
        "bits [4:0])",
        fields)
    register("field_insert", ("uword", "uword", "uword", "uword"), "uword", words.field_insert,
        _field_insert_model,
        "field_insert(width, offset, insert, base): base with the field replaced by insert's "
        "low bits",
        (*fields[:2], (WORD_EDGES,), (WORD_EDGES,)))
    register("umul_hi", ("uword", "uword"), "uword", words.umul_hi,
        lambda a, b: Z.Extract(63, 32, Z.ZeroExt(32, a) * Z.ZeroExt(32, b)),
        "the high 32 bits of the unsigned 64-bit product")
    register("imul_hi", ("iword", "iword"), "iword", words.imul_hi,
        lambda a, b: Z.Extract(63, 32, Z.SignExt(32, a) * Z.SignExt(32, b)),
        "the high 32 bits of the signed 64-bit product")
    register("uadd_carry", ("uword", "uword"), "uword", words.uadd_carry,
        lambda a, b: Z.ZeroExt(31, Z.Extract(32, 32, Z.ZeroExt(1, a) + Z.ZeroExt(1, b))),
        "1 where a + b does not fit 32 bits, else 0")
    register("usub_borrow", ("uword", "uword"), "uword", words.usub_borrow,
        lambda a, b: Z.If(Z.ULT(a, b), Z.BitVecVal(1, 32), Z.BitVecVal(0, 32)),
        "1 where b > a (unsigned), else 0")
    register("bit_reverse", ("uword",), "uword", words.bit_reverse,
        lambda a: Z.Concat(*[Z.Extract(i, i, a) for i in range(32)]), "the bits reversed")
    register("bit_count", ("uword",), "uword", words.bit_count,
        lambda a: Z.Sum(*[Z.ZeroExt(31, Z.Extract(i, i, a)) for i in range(32)]),
        "the number of bits set")
    return out


def _tolerance_helpers() -> list[Helper]:
    """Per function D3D11 lets err, three helpers of its flushed operands: the result to
    nearest, and the least and the greatest float32 its tolerance admits
    (``sm5.oracle.rulelang.tolerance``)."""
    out: list[Helper] = []
    BoundsOf = Callable[..., tuple[int, int, int]]
    functions: tuple[tuple[str, BoundsOf, str], ...] = (
        ("reciprocal", tolerance.reciprocal_bounds, "1/x (within 2^-21 relative)"),
        ("rsqrt", tolerance.reciprocal_sqrt_bounds, "x^(-1/2) (within 2^-21 relative)"),
        ("exp2", tolerance.exp2_bounds, "2^x (within 2^-21 relative)"),
        ("log2", tolerance.log2_bounds,
         "log2(x) (within 2^-21 absolute on [0.5, 2], relative elsewhere)"),
        ("sin", tolerance.sine_bounds,
         "sin(x) (within 0.0008 absolute on [-100 pi, 100 pi], in [-1, 1] beyond)"),
        ("cos", tolerance.cosine_bounds,
         "cos(x) (within 0.0008 absolute on [-100 pi, 100 pi], in [-1, 1] beyond)"),
    )
    operand = (F32, F32_EDGES32, TOLERANCE_EDGES)
    fused: tuple[tuple[str, int, BoundsOf, str], ...] = (
        ("quotient", 2, tolerance.quotient_bounds,
         "x / y (as x * (1/y): the reciprocal within 1 ULP, the multiply to nearest or "
         "truncated; or a direct divide within 1 ULP)"),
        ("muladd", 3, lambda a, b, c: tolerance.dot_bounds((a,), (b,), c),
         "a * b + c (fused, or each step within 1 ULP)"),
        *((f"dot{n}", 2 * n, _dot(n),
           f"x0 * y0 + ... + x{n - 1} * y{n - 1}, arguments x0 .. x{n - 1}, y0 .. y{n - 1} "
           "(fused, or any serial order, each step within 1 ULP)") for n in (2, 3, 4)),
    )
    table = [(name, 1, bounds, what) for name, bounds, what in functions] + list(fused)
    for name, arity, bounds, what in table:
        for index, suffix, which in ((0, "", "rounded to nearest even once (its table's value "
                                                "where the table gives one)"),
                                     (1, "_low", "the least float32 within the tolerance"),
                                     (2, "_high", "the greatest float32 within the tolerance")):
            pattern: HelperType = "p32"
            out.append(Helper(f"f32_{name}{suffix}", (pattern,) * arity, pattern,
                              _component(bounds, index), None, (operand,) * arity,
                              f"{what}: {which}"))
    return out


def _dot(n: int) -> Callable[..., tuple[int, int, int]]:
    return lambda *words: tolerance.dot_bounds(tuple(words[:n]), tuple(words[n:]))


def _component(bounds: Callable[..., tuple[int, int, int]], index: int) -> Callable[..., int]:
    return lambda *words: bounds(*words)[index]


#: Every helper a rule may call, by name.
REGISTRY: Mapping[str, Helper] = {h.name: h for h in (*_float_helpers(), *_float32_helpers(),
                                                      *_word_helpers(), *_tolerance_helpers())}

#: The rule-language operator on words that each helper of :data:`OPERATORS` stands for:
#: (view, operator node type name) -> helper name.
OPERATORS: Mapping[tuple[str, str], str] = {
    **{(view, op): f"{view}_{name}" for view in ("uword", "iword") for op, name in (
        ("Add", "sum"), ("Sub", "sub"), ("Mult", "product"), ("USub", "neg"), ("Invert", "bitnot"),
        ("BitAnd", "bitand"), ("BitOr", "bitor"), ("BitXor", "bitxor"), ("LShift", "shl"),
        ("RShift", "shr"))},
    ("uword", "FloorDiv"): "uword_div", ("uword", "Mod"): "uword_mod",
}
