"""sat_nan_kept: _sat of a NaN double returns the NaN instead of 0.

``_sat`` is ``min(1, max(0, v))`` with dmax/dmin returning the non-NaN operand, so a NaN
saturates to +0 (FS 22.19.1). A clamp built on IEEE comparisons (``v < 0 ? 0 : v > 1 ? 1 : v``,
or SPIR-V ``FClamp``, undefined for NaN) lets the NaN through.
"""

from __future__ import annotations

import math

from sm5.conformance.mutants.base import NaiveTranslator, f64


class SatNanKept(NaiveTranslator):
    name = "sat_nan_kept"

    def saturated(self, bits: int) -> int:
        return bits if math.isnan(f64(bits)) else super().saturated(bits)
