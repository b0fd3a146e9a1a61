"""32-bit words in Python: the rule language's ``uword`` and ``iword`` values and operations.

A word is 32 bits with two views: ``uword`` reads it as 0 .. 2**32 - 1, ``iword`` as the two's
complement -2**31 .. 2**31 - 1. A rule holds a word as the integer of its view; every function
here takes the 32-bit patterns (any integer is reduced modulo 2**32 first) and returns a
pattern, so one definition serves both views (``sm5.oracle.rulelang.helpers`` converts at the
edges). Arithmetic wraps modulo 2**32; shift counts, bitfield widths and offsets use bits [4:0], as
the SM5 integer instructions read them (FS 22.11.x, 22.12.x).
"""

from __future__ import annotations

MASK = 0xFFFFFFFF
BITS = 32
SIGN = 1 << 31


def pattern(x: int) -> int:
    """The 32-bit pattern of ``x``: its value modulo 2**32 (a uword's value)."""
    return x & MASK


def signed(x: int) -> int:
    """The two's-complement value of the low 32 bits of ``x`` (an iword's value)."""
    return ((x & MASK) ^ SIGN) - SIGN


def sum_of(a: int, b: int) -> int:
    return (a + b) & MASK


def sub(a: int, b: int) -> int:
    return (a - b) & MASK


def product(a: int, b: int) -> int:
    return (a * b) & MASK


def neg(a: int) -> int:
    return -a & MASK


def invert(a: int) -> int:
    return ~a & MASK


def and_(a: int, b: int) -> int:
    return a & b & MASK


def or_(a: int, b: int) -> int:
    return (a | b) & MASK


def exclusive_or(a: int, b: int) -> int:
    return (a ^ b) & MASK


def shl(a: int, count: int) -> int:
    """Shift left by bits [4:0] of ``count``: ``shl(1, 33) == 2``."""
    return ((a & MASK) << (count & 31)) & MASK


def lshr(a: int, count: int) -> int:
    """Logical shift right by bits [4:0] of ``count`` (zeros in from the top)."""
    return (a & MASK) >> (count & 31)


def ashr(a: int, count: int) -> int:
    """Arithmetic shift right by bits [4:0] of ``count`` (copies of bit 31 in from the top)."""
    return (signed(a) >> (count & 31)) & MASK


def quotient(a: int, b: int) -> int:
    """Unsigned quotient (``b`` is not 0: a rule guards it, as ``//`` on exact integers)."""
    return (a & MASK) // (b & MASK)


def remainder(a: int, b: int) -> int:
    """Unsigned remainder (``b`` is not 0)."""
    return (a & MASK) % (b & MASK)


def field_extract(width: int, offset: int, value: int) -> int:
    """The field of bits [4:0] of ``width`` bits at bit bits [4:0] of ``offset``, zero-extended;
    a field past bit 31 is cut there; a width of 0 gives 0
    (``field_extract(8, 28, 0xF1234567) == 0xF``)."""
    w, o = width & 31, offset & 31
    if w == 0:
        return 0
    return ((value & MASK) >> o) & ((1 << min(w, BITS - o)) - 1)


def field_extract_signed(width: int, offset: int, value: int) -> int:
    """As :func:`field_extract`, sign-extended from the field's top bit; a field cut at bit 31
    extends bit 31 (``field_extract_signed(4, 4, 0xF0) == 0xFFFFFFFF``)."""
    w, o = width & 31, offset & 31
    if w == 0:
        return 0
    if w + o < BITS:
        return ashr((value << (BITS - w - o)) & MASK, BITS - w)
    return ashr(value, o)


def field_insert(width: int, offset: int, insert: int, base: int) -> int:
    """``base`` with bits [offset, offset + width) replaced by the low bits of ``insert``; width
    and offset use bits [4:0] and the field is cut at bit 31 (``field_insert(8, 28, 0xFF, 0) ==
    0xF0000000``)."""
    w, o = width & 31, offset & 31
    field = (((1 << w) - 1) << o) & MASK
    return (((insert & MASK) << o) & field) | (base & MASK & ~field)


def umul_hi(a: int, b: int) -> int:
    """The high 32 bits of the unsigned 64-bit product."""
    return ((a & MASK) * (b & MASK)) >> BITS


def imul_hi(a: int, b: int) -> int:
    """The high 32 bits of the signed 64-bit product (as a pattern)."""
    return (signed(a) * signed(b)) >> BITS & MASK


def uadd_carry(a: int, b: int) -> int:
    """1 where the unsigned sum does not fit 32 bits, else 0 (the carry out of the addition)."""
    return ((a & MASK) + (b & MASK)) >> BITS


def usub_borrow(a: int, b: int) -> int:
    """1 where ``b`` exceeds ``a`` unsigned, else 0 (the borrow of a subtraction)."""
    return int(a & MASK < b & MASK)


def bit_reverse(a: int) -> int:
    """The 32 bits in reverse order."""
    return int(f"{a & MASK:032b}"[::-1], 2)


def bit_count(a: int) -> int:
    return bin(a & MASK).count("1")
