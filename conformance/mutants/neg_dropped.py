"""neg_dropped: the ``-`` modifier on dmovc's sources is ignored.

A conditional move read as a bit copy (the asm page: "the absence of modifiers moves data without
altering bits") tempts a translator to skip operand modifiers altogether; vkd3d and DXVK load
dmovc's sources with their modifiers applied as double operations.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class NegDropped(NaiveTranslator):
    name = "neg_dropped"

    def modified(self, bits: int, neg: bool, absolute: bool) -> int:
        return super().modified(bits, False, absolute)
