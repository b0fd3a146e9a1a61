"""wrap32_index_stride: the structured address is one 32-bit dword index, checked per dword.

vkd3d-shader (``spirv_compiler_emit_raw_structured_addressing``: ``index * (stride / 4) +
(offset >> 2)`` in 32-bit ``OpIMul``/``OpIAdd``), DXVK's legacy DXBC compiler
(``emitCalcBufferIndexStructured``, Sint32) and wined3d's GLSL backend flatten the address in
32 bits and rely on buffer robustness against the whole view. A huge index wraps modulo 2^32 back
into the buffer and writes, where D3D11 says an out-of-bounds index writes nothing. vkd3d-proton
PR #3100 reports the same wrap in NVIDIA and Intel native drivers.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import U32, NaiveTranslator


class Wrap32IndexStride(NaiveTranslator):
    name = "wrap32_index_stride"

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        first = (index * (res["stride"] // 4) + (offset >> 2)) & U32
        # Robustness per dword against the view: words past the end are dropped.
        return [w for w in ((first + k) & U32 for k in range(words)) if w < len(res["data"])]
