"""dmovc_zw_cond_from_x: with a ``.zw`` destination the condition is read from src0's x.

DXVK's current compiler (dxbc-spirv ``Converter::handleMovc`` with ``convertMaskTo32Bit``)
compacts the 64-bit write mask by population count, so a lone ``.zw`` double becomes lane 0 and
takes its condition from post-swizzle component 0 instead of component 1 (vkd3d-proton PR #307
discusses the same compaction).
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class DmovcZwCondFromX(NaiveTranslator):
    name = "dmovc_zw_cond_from_x"

    def dmovc_condition(self, cond: list[int], lane: int, mask: str) -> int:
        return cond[0] if mask == "zw" else cond[lane]
