"""A representative subset of a vector set, for implementations too slow to run it whole by
default (the D3D11 API under Wine runs a few programs per second).

The subset is chosen by a rule over what each vector is, never by a list of ids, so vectors that
are added (new instructions, new sections) are covered by the same rule. Walking the files in
order, an executable vector (one the oracle does not reject) is kept when

* its section is one of :data:`WHOLE_SECTIONS` (aliasing of registers: few, each a distinct
  pair of operands), or
* it fires a clause, carries a flag, belongs to an (instruction, section) pair, declares
  resources as written (``limit``) or is the witness of a theorem (``witness``: the theorem's
  kind and group and the model z3 found), that fewer than :data:`PER_KEY` kept vectors have so
  far. A declaration at the edge of a limit, or a witness of the shared memory definition, is
  the same edge under every instruction that uses it (25 atomics declare the same ``u63``), so it
  is kept per declaration text and per witness, not per instruction.

Every clause a golden vector fires is therefore run at least once (``PER_KEY`` times where the set
has that many), every flag and every section of every instruction too. The same files give the
same subset, in file order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator

from sm5.conformance.vector_facts import id_parts
from sm5.vectors.format import Vector

#: Sections kept whole.
WHOLE_SECTIONS = frozenset({"alias"})
#: How many vectors are kept per clause, per flag and per (instruction, section).
PER_KEY = 2


def _keys(vector: Vector) -> Iterator[tuple[str, str]]:
    instruction, section = id_parts(vector.id)
    yield "section", f"{instruction}/{section}"
    if section == "limit":
        yield "declarations", "\n".join(line for line in vector.program if line.startswith("dcl_"))
    if section == "witness" and vector.provenance is not None:
        theorems = [t.split("/", 1)[-1] for t in vector.provenance.get("theorems", ())]
        witness = vector.provenance.get("witness", {})
        yield "witness", json.dumps([theorems, witness], sort_keys=True)
    for clause in vector.clauses:
        yield "clause", clause
    for flag in vector.flags:
        yield "flag", flag


def representative(vectors: Iterable[Vector], per_key: int = PER_KEY, *,
                   leave_out: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ids of the subset (see the module docstring), in the order of ``vectors``; the
    vectors of the subjects in ``leave_out`` (the first part of their ids) are left out."""
    seen: Counter[tuple[str, str]] = Counter()
    kept: list[str] = []
    for vector in vectors:
        if vector.rejected or id_parts(vector.id)[0] in leave_out:
            continue
        keys = tuple(_keys(vector))
        if id_parts(vector.id)[1] in WHOLE_SECTIONS or any(seen[k] < per_key for k in keys):
            kept.append(vector.id)
            seen.update(keys)
    return tuple(kept)
