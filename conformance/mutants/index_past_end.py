"""index_past_end: a structured access at index == count (one element past the view) is in bounds.

The bounds check compares the structure index with ``index > count`` instead of ``>=``, so a
store or atomic at the first index past the view writes the element that follows it in the
buffer. An independent implementation written from the README had exactly this bug and passed
every vector whose resource words alone were compared: the write lands outside the view, in
memory the vector's own words cannot show. The guard words around every view catch it.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class IndexPastEnd(NaiveTranslator):
    name = "index_past_end"

    def structured_in_bounds(self, res: dict[str, Any], index: int, offset: int,
                             words: int) -> bool:
        return offset % 4 == 0 and offset + 4 * words <= res["stride"] and \
            index <= res["count"]
