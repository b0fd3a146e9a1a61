"""write_mask_ignored: a store writes four components whatever its write mask.

RenderDoc's ``OPCODE_STORE_STRUCTURED`` calls ``TypedUAVStore`` with a format of 4 components
unless the mask is a single component, so ``.xy`` and ``.xyz`` stores also write the following
words (up to the end of the structure) from src0's remaining components.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class WriteMaskIgnored(NaiveTranslator):
    name = "write_mask_ignored"

    def store_count(self, mask: str) -> int:
        return 1 if len(mask) == 1 else 4
