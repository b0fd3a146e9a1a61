"""icb_out_of_range_not_zero: a read of the immediate constant buffer past its end gives its
last element instead of 0.

vkd3d-shader declares the icb as a SPIR-V private array and indexes it without a check (an
out-of-bounds access is undefined in SPIR-V); on lavapipe the read came back as the last
element's words (a loop summing icb[0..3] of a 3-element icb gave 211 where D3D gives 111;
conformance/vkd3d/expectations.yaml, icb-read-past-end-not-zero). D3D reads the icb exactly like
a dynamically indexed constant buffer: 0 past the end (FS 7.5, 7.5.1; erratum
state.icb_out_of_range). The icb vectors at and past the end catch it.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import load_default


class IcbOutOfRangeNotZero(NaiveTranslator):
    name = "icb_out_of_range_not_zero"

    def constant_element(self, register: str, element: int, count: int) -> int:
        listed = {f.name for f in load_default().model.register_files if f.elements == "listed"}
        if register in listed and count and element >= count:
            return count - 1  # clamped to the last element
        return super().constant_element(register, element, count)
