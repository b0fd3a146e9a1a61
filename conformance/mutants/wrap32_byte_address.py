"""wrap32_byte_address: a structured byte address computed in 32 bits, checked against the buffer.

A translator that turns a structured access into a byte address (``index * stride + offset`` in a
32-bit multiply-add, as raw buffer code does) and relies on a bounds check against the view's
byte size: a huge index wraps modulo 2^32 back into the buffer and writes, where D3D11 says an
out-of-bounds index writes nothing.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import U32, NaiveTranslator


class Wrap32ByteAddress(NaiveTranslator):
    name = "wrap32_byte_address"

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        byte = (index * res["stride"] + offset) & U32
        if byte % 4 or byte + 4 * words > 4 * len(res["data"]):
            return []
        return list(range(byte // 4, byte // 4 + words))
