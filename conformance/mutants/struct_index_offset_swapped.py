"""struct_index_offset_swapped: structured index and byte offset read from each other's operand.

``store_structured dst, dstAddress, dstByteOffset, src0`` and the atomics' ``dstAddress.xy`` put
the index first; a translator that takes them in the order of a (byte offset, index) helper
swaps them, which only equal or zero values hide.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class StructIndexOffsetSwapped(NaiveTranslator):
    name = "struct_index_offset_swapped"

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        return super().structured_words(res, register, offset, index, words)
