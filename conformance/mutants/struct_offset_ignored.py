"""struct_offset_ignored: a structured atomic takes only the structure index, not the offset.

The address of ``imm_atomic_iadd`` has as many components as the resource has dimensions (raw 1,
structured 2); a translator that reads the address like a raw or typed one drops ``.y``, the
byte offset inside the structure (RenderDoc's atomic path adds it but never checks it, a sign of
how easily that second component is overlooked). Every atomic then hits the structure's first
word.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class StructOffsetIgnored(NaiveTranslator):
    name = "struct_offset_ignored"

    def atomic_word(self, res: dict[str, Any], register: str, address: list[int]
                    ) -> int | None:
        if res["kind"] == "structured":
            address = [address[0], 0]
        return super().atomic_word(res, register, address)
