"""The rule language's helper functions, one registry: each entry holds the helper's name, its
argument and result types, its Python function, its z3 model and the special values the vector
generator gives the inputs that reach each argument.

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
type checker rewrites ``a + b`` on two uwords into ``uword_add(a, b)``.
"""

from __future__ import annotations

import importlib
import math
import struct
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sm5.oracle.rulelang import float64, words

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
    z3: Callable[..., Any]
    #: Per argument, the special-value sets of the inputs that reach it.
    specials: tuple[tuple[Specials, ...], ...]
    text: str

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
#: Shift counts, bitfield widths and offsets: bits [4:0] at and around their ends, and counts
#: whose high bits a correct implementation ignores (``uword_shl(1, 33) == 2``).
COUNTS = Specials("count", 32, tuple((v, "count") for v in (
    0, 1, 4, 8, 16, 31, 32, 33, 63, 0xFFFFFFFF)))
#: Words at the edges of both views.
WORD_EDGES = Specials("word", 32, tuple((v, "word") for v in (
    0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF)))

#: Every special-value set, in the order the generator appends them to an input's candidates.
SPECIAL_SETS = (F64, F32_EDGES, F32, COUNTS, WORD_EDGES)


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
    gives 0 (double to integer). The guards keep the conversion inside the 32-bit range."""
    x = _fp(word)
    top = Z.FPVal(float(high) + (0.5 if nearest else 1.0), Z.Float64())
    bottom = Z.FPVal(float(low), Z.Float64())
    convert = Z.fpToSBV if signed else Z.fpToUBV
    below = (Z.fpLEQ(x, bottom) if signed
             else Z.fpLEQ(x, Z.FPVal(0.5, Z.Float64())) if nearest
             else Z.fpLT(x, Z.FPVal(1.0, Z.Float64())))
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
        f64("f64_add", 2, "p64", float64.add, _binary("fpAdd"), "a + b, round to nearest even"),
        f64("f64_mul", 2, "p64", float64.mul, _binary("fpMul"), "a * b, round to nearest even"),
        f64("f64_div", 2, "p64", float64.div, _binary("fpDiv"), "a / b, round to nearest even"),
        f64("f64_fma", 3, "p64", float64.fma,
            lambda a, b, c: _pattern(Z.fpFMA(Z.RNE(), _fp(a), _fp(b), _fp(c))),
            "a * b + c rounded once"),
        f64("f64_lt", 2, "bool", float64.lt, lambda a, b: Z.fpLT(_fp(a), _fp(b)),
            "a < b (false on a NaN)"),
        f64("f64_ge", 2, "bool", float64.ge, lambda a, b: Z.fpGEQ(_fp(a), _fp(b)),
            "a >= b (false on a NaN)"),
        f64("f64_eq", 2, "bool", float64.eq, lambda a, b: Z.fpEQ(_fp(a), _fp(b)),
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

    def add(name: str, args: tuple[HelperType, ...], result: HelperType,
            function: Callable[..., int], model: Callable[..., Any], text: str,
            specials: tuple[tuple[Specials, ...], ...] | None = None) -> None:
        out.append(Helper(name, args, result, _viewed(function, args, result), model,
                          specials if specials is not None else ((WORD_EDGES,),) * len(args),
                          text))

    views: tuple[HelperType, ...] = ("uword", "iword")
    for v in views:
        view = str(v)
        two, one = (v, v), (v,)
        add(f"{view}_add", two, v, words.add, lambda a, b: a + b, "a + b modulo 2**32")
        add(f"{view}_sub", two, v, words.sub, lambda a, b: a - b, "a - b modulo 2**32")
        add(f"{view}_mul", two, v, words.mul, lambda a, b: a * b,
            "the low 32 bits of a * b")
        add(f"{view}_neg", one, v, words.neg, lambda a: -a, "-a modulo 2**32")
        add(f"{view}_bitnot", one, v, words.invert, lambda a: ~a, "every bit flipped")
        add(f"{view}_bitand", two, v, words.and_, lambda a, b: a & b, "bitwise and")
        add(f"{view}_bitor", two, v, words.or_, lambda a, b: a | b, "bitwise or")
        add(f"{view}_bitxor", two, v, words.exclusive_or, lambda a, b: a ^ b,
            "bitwise exclusive or")
        add(f"{view}_shl", (v, "uword"), v, words.shl, lambda a, c: a << _count(c),
            "shift left by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    add("uword_shr", ("uword", "uword"), "uword", words.lshr,
        lambda a, c: Z.LShR(a, _count(c)),
        "logical shift right by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    add("iword_shr", ("iword", "uword"), "iword", words.ashr, lambda a, c: a >> _count(c),
        "arithmetic shift right by bits [4:0] of the count", ((WORD_EDGES,), (COUNTS,)))
    add("uword_div", ("uword", "uword"), "uword", words.quotient, lambda a, b: Z.UDiv(a, b),
        "unsigned quotient (the divisor is not 0)")
    add("uword_mod", ("uword", "uword"), "uword", words.remainder, lambda a, b: Z.URem(a, b),
        "unsigned remainder (the divisor is not 0)")
    fields = ((COUNTS,), (COUNTS,), (WORD_EDGES,))
    add("field_extract", ("uword", "uword", "uword"), "uword", words.field_extract,
        lambda w, o, x: _field(w, o, x, False),
        "field_extract(width, offset, value): the field, zero-extended (width, offset: bits "
        "[4:0])",
        fields)
    add("field_extract_signed", ("uword", "uword", "iword"), "iword",
        words.field_extract_signed, lambda w, o, x: _field(w, o, x, True),
        "field_extract_signed(width, offset, value): the field, sign-extended (width, offset: "
        "bits [4:0])",
        fields)
    add("field_insert", ("uword", "uword", "uword", "uword"), "uword", words.field_insert,
        _field_insert_model,
        "field_insert(width, offset, insert, base): base with the field replaced by insert's "
        "low bits",
        (*fields[:2], (WORD_EDGES,), (WORD_EDGES,)))
    add("umul_hi", ("uword", "uword"), "uword", words.umul_hi,
        lambda a, b: Z.Extract(63, 32, Z.ZeroExt(32, a) * Z.ZeroExt(32, b)),
        "the high 32 bits of the unsigned 64-bit product")
    add("imul_hi", ("iword", "iword"), "iword", words.imul_hi,
        lambda a, b: Z.Extract(63, 32, Z.SignExt(32, a) * Z.SignExt(32, b)),
        "the high 32 bits of the signed 64-bit product")
    add("uadd_carry", ("uword", "uword"), "uword", words.uadd_carry,
        lambda a, b: Z.ZeroExt(31, Z.Extract(32, 32, Z.ZeroExt(1, a) + Z.ZeroExt(1, b))),
        "1 where a + b does not fit 32 bits, else 0")
    add("usub_borrow", ("uword", "uword"), "uword", words.usub_borrow,
        lambda a, b: Z.If(Z.ULT(a, b), Z.BitVecVal(1, 32), Z.BitVecVal(0, 32)),
        "1 where b > a (unsigned), else 0")
    add("bit_reverse", ("uword",), "uword", words.bit_reverse,
        lambda a: Z.Concat(*[Z.Extract(i, i, a) for i in range(32)]), "the bits reversed")
    add("bit_count", ("uword",), "uword", words.bit_count,
        lambda a: Z.Sum(*[Z.ZeroExt(31, Z.Extract(i, i, a)) for i in range(32)]),
        "the number of bits set")
    return out


#: Every helper a rule may call, by name.
REGISTRY: Mapping[str, Helper] = {h.name: h for h in (*_float_helpers(), *_word_helpers())}

#: The rule-language operator on words that each helper of :data:`OPERATORS` stands for:
#: (view, operator node type name) -> helper name.
OPERATORS: Mapping[tuple[str, str], str] = {
    **{(view, op): f"{view}_{name}" for view in ("uword", "iword") for op, name in (
        ("Add", "add"), ("Sub", "sub"), ("Mult", "mul"), ("USub", "neg"), ("Invert", "bitnot"),
        ("BitAnd", "bitand"), ("BitOr", "bitor"), ("BitXor", "bitxor"), ("LShift", "shl"),
        ("RShift", "shr"))},
    ("uword", "FloorDiv"): "uword_div", ("uword", "Mod"): "uword_mod",
}
