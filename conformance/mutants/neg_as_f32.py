"""neg_as_f32: ``-`` on a double source flips bit 31 of both 32-bit words.

The negate counterpart of ``abs_as_f32``: a per-component float negate flips the double's sign
(bit 63) and bit 31 of its mantissa.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator

LOW_SIGN = 1 << 31


class NegAsF32(NaiveTranslator):
    name = "neg_as_f32"

    def modified(self, bits: int, neg: bool, absolute: bool) -> int:
        bits = super().modified(bits, neg, absolute)
        return bits ^ LOW_SIGN if neg else bits
