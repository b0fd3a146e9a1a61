"""struct_bound_off_by_one: a write that ends exactly at the end of the structure counts as out
of bounds.

The byte-offset rule (``offset + 4 * components > stride``) is the one every peer reads
differently (vkd3d-proton PR #1433: "byte based" versus "structure element based"); an
implementation that gets the comparison wrong by one (``>=``) drops, or makes undefined, the last
legal write of every structure, e.g. ``store_structured u0.xyzw`` at offset 0 of a 16-byte
structure. Out-of-bounds handling itself (no write, clipped write) cannot be told from the spec's
"whole UAV undefined"; the boundary can.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class StructBoundOffByOne(NaiveTranslator):
    name = "struct_bound_off_by_one"

    def structured_in_bounds(self, res: dict[str, Any], index: int, offset: int,
                             words: int) -> bool:
        return offset % 4 == 0 and offset + 4 * words < res["stride"] and \
            index < res["count"]
