"""What each vector flag means, read from the one table of them: ``$defs/flag`` of the vector
schema (``spec/schema/vector.schema.json``). A vector file's header copies the meanings of the
flags its vectors carry into ``notes``, as Wycheproof's test files do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from sm5.oracle.files.yamlio import schema


@cache
def flag_meanings() -> Mapping[str, str]:
    """Every flag and its meaning, in the schema's order."""
    return {entry["const"]: entry["description"]
            for entry in schema("vector")["$defs"]["flag"]["oneOf"]}


def notes_for(flags: Iterable[str]) -> dict[str, str]:
    """The header ``notes`` of a file whose vectors carry ``flags`` (sorted by flag). A flag the
    table does not know has no note; the schema rejects such a vector (``sm5 vectors check``)."""
    table = flag_meanings()
    return {f: table[f] for f in sorted(set(flags)) if f in table}
