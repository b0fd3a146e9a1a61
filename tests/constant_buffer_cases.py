"""Constant-buffer cases shared by the tests that run real implementations (vkd3d, Wine's
d3d11): the golden families that bind a cb#, and a program reading cb0[r1.x] with the values
worked out by hand from FS 7.5."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sm5.vectors.format import Vector

GOLDEN = Path(__file__).resolve().parents[1] / "vectors" / "golden" / "program_state.jsonl"
FAMILIES = ("program_state/constant-buffer-dynamic-index/",
            "program_state/constant-buffer-operands/")
#: cb0 of two elements, 1..8.
WORDS = [1, 2, 3, 4, 5, 6, 7, 8]
DYNAMIC = ["dcl_constantBuffer cb0[2], dynamicIndexed", "dcl_uav_raw u0",
           "mov r0.xyzw, cb0[r1.x + 0].xyzw", "store_raw u0.xyzw, l(0), r0.xyzw"]
#: The element index in r1.x and what cb0[r1.x] reads, worked out by hand: element 0 is words
#: 0..3, element 1 words 4..7; elements 2 and 0xFFFFFFFF are past the end of the bound buffer
#: and read 0 in all four components (FS 7.5).
BY_HAND = [(0, [1, 2, 3, 4]), (1, [5, 6, 7, 8]), (2, [0, 0, 0, 0]),
           (0xFFFFFFFF, [0, 0, 0, 0])]


def hand_vector(program: list[str], state: Mapping[str, Any], vid: str = "hand/cb") -> Vector:
    return Vector(vid, tuple(program), "cs_5_0", "11.0", dict(state), {})


def dynamic(index: int, words: list[int] | None = None) -> Vector:
    """The DYNAMIC program reading element ``index`` of cb0 (``words``, WORDS by default)."""
    return hand_vector(DYNAMIC, {"cb0": {"kind": "constant",
                                         "data": WORDS if words is None else words},
                                 "r0": [7, 7, 7, 7], "r1": [index, 0, 0, 0],
                                 "u0": {"kind": "raw", "data": [0xDEAD] * 4}})
