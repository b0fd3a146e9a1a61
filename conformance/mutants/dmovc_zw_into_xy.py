"""dmovc_zw_into_xy: a ``.zw`` double is written to ``.xy``.

The other half of the mask compaction of dxbc-spirv / vkd3d-proton PR #307: once ``.zw`` is
compacted to the first 64-bit lane, a store that forgets to expand it again writes the double
into x and y.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class DmovcZwIntoXy(NaiveTranslator):
    name = "dmovc_zw_into_xy"

    def dmovc_first_component(self, lane: int, mask: str) -> int:
        return 0 if mask == "zw" else 2 * lane
