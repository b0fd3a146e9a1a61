"""sat_dropped: dmovc_sat moves the double without saturating it.

A move is "just a copy" to many translators; the asm page lists ``_sat`` for dmovc and DXVK
applies it through ``emitDstOperandModifiers`` / ``storeDstModified``. Dropping it leaves values
outside [0, 1] and NaNs unclamped.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class SatDropped(NaiveTranslator):
    name = "sat_dropped"

    def saturated(self, bits: int) -> int:
        return bits
