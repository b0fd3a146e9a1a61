"""abs_as_f32: ``_abs`` on a double source is applied per 32-bit component.

A translator that applies source modifiers before knowing the operand is a double treats x/y (and
z/w) as two floats and clears bit 31 of both words: the sign of the double (bit 63) is cleared,
but so is bit 31 of its mantissa. vkd3d (``spirv_compiler_emit_load_src``) and DXVK load double
sources as 64-bit values precisely to avoid this.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator

LOW_SIGN = 1 << 31


class AbsAsF32(NaiveTranslator):
    name = "abs_as_f32"

    def modified(self, bits: int, neg: bool, absolute: bool) -> int:
        if absolute:
            bits &= ~LOW_SIGN
        return super().modified(bits, neg, absolute)
