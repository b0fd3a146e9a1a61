"""index_oob_clamped: an out-of-bounds structure index is clamped to the last structure.

Clamping robustness (the index is clamped into the view instead of the access being dropped) is
how several GPU robustness modes and CPU emulators keep accesses inside a buffer; vkd3d-proton
PR #2623 documents AMD treating structured buffers like typed ones with their own element bounds.
D3D11 says an out-of-bounds index writes nothing, so clamping writes where nothing may change.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class IndexOobClamped(NaiveTranslator):
    name = "index_oob_clamped"

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        if res["count"] > 0:
            index = min(index, res["count"] - 1)
        return super().structured_words(res, register, index, offset, words)
