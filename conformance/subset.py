"""A representative subset of a vector set, for implementations too slow to run it whole by
default (the D3D11 API under Wine runs a few programs per second).

The subset is chosen by a rule over what each vector is, never by a list of ids, so vectors that
are added (new instructions, new sections) are covered by the same rule. Walking the files in
order, an executable vector (one the oracle does not reject) is kept when

* its section is one of :data:`WHOLE_SECTIONS` (the declaration limits, aliasing of registers,
  the witnesses of the theorems: few, and each one a distinct edge), or
* it fires a clause, carries a flag, or belongs to an (instruction, section) pair that fewer
  than :data:`PER_KEY` kept vectors have so far.

Every clause a golden vector fires is therefore run at least once (``PER_KEY`` times where the set
has that many), every flag and every section of every instruction too. The same files give the
same subset, in file order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from sm5.conformance.vector_facts import id_parts
from sm5.vectors.format import Vector

#: Sections kept whole.
WHOLE_SECTIONS = frozenset({"limit", "alias", "witness"})
#: How many vectors are kept per clause, per flag and per (instruction, section).
PER_KEY = 2


def _keys(vector: Vector) -> Iterator[tuple[str, str]]:
    instruction, section = id_parts(vector.id)
    yield "section", f"{instruction}/{section}"
    for clause in vector.clauses:
        yield "clause", clause
    for flag in vector.flags:
        yield "flag", flag


def representative(vectors: Iterable[Vector], per_key: int = PER_KEY) -> tuple[str, ...]:
    """The ids of the subset (see the module docstring), in the order of ``vectors``."""
    seen: Counter[tuple[str, str]] = Counter()
    kept: list[str] = []
    for vector in vectors:
        if vector.rejected:
            continue
        keys = tuple(_keys(vector))
        if id_parts(vector.id)[1] in WHOLE_SECTIONS or any(seen[k] < per_key for k in keys):
            kept.append(vector.id)
            seen.update(keys)
    return tuple(kept)
