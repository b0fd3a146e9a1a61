"""raw_address_in_words: a raw buffer's byte address is used as a dword index.

RenderDoc's DXBC debugger (``dxbc_debug.cpp``, the shared atomic case) adds the raw address to a
dword pointer with stride 4 and compares it against the element count: the atomic lands 4 times
too far (its loads and stores scale correctly). DXVK issue #64 is the same byte/dword confusion
in a ``dcl_tgsm_raw`` size.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class RawAddressInWords(NaiveTranslator):
    name = "raw_address_in_words"

    def raw_word(self, res: dict[str, Any], address: int) -> int | None:
        return address if address < len(res["data"]) else None
