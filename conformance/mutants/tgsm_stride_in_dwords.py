"""tgsm_stride_in_dwords: the structure stride of a g# is taken in dwords instead of bytes.

DXVK issue #64: the thread group shared memory array came out 4 times too large because the
declaration's byte count was read as dwords. The same confusion in a structured g# address
(``index * stride + offset / 4`` instead of ``(index * stride + offset) / 4``) puts every structure
but the first 4 times too far.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class TgsmStrideInDwords(NaiveTranslator):
    name = "tgsm_stride_in_dwords"

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        if not register.startswith("g"):
            return super().structured_words(res, register, index, offset, words)
        if not self.structured_in_bounds(res, index, offset, words):
            return []
        first = index * res["stride"] + offset // 4
        return [w for w in range(first, first + words) if w < len(res["data"])]
