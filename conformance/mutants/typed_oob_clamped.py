"""typed_oob_clamped: an atomic on a typed buffer clamps an out-of-bounds element index.

The typed-buffer form of clamping robustness (see ``index_oob_clamped``); DXVK PR #4962 promotes
atomically accessed typed UAVs to storage buffers, the path where a clamp rather than a drop is
easy to get. D3D11: an out-of-bounds element index writes nothing.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class TypedOobClamped(NaiveTranslator):
    name = "typed_oob_clamped"

    def typed_word(self, res: dict[str, Any], index: int) -> int | None:
        return min(index, len(res["data"]) - 1) if res["data"] else None
