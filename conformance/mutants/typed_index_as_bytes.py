"""typed_index_as_bytes: a typed buffer's element index is treated as a byte address.

A translator that routes typed atomics through its raw-buffer path (DXVK PR #4962 turns typed
UAVs used by atomics into storage buffers addressed like raw ones) must scale the element index
by 4; forgetting it makes element i hit element i / 4.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class TypedIndexAsBytes(NaiveTranslator):
    name = "typed_index_as_bytes"

    def typed_word(self, res: dict[str, Any], index: int) -> int | None:
        return self.raw_word(res, index - index % 4)
