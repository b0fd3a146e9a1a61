"""Known divergences of an implementation: an expectations file (YAML), never code.

The file is a list of entries::

    - id: "<instruction>/boundary/*"        # an exact vector id or an fnmatch glob
      status: xfail                           # fail | xfail | unsupported | skip
      reason: "32-bit wrap of index * stride"
      link: "https://..."                     # optional: the upstream bug

* ``fail``: a known divergence that must still fail; a pass is reported as ``xpass`` (a failure
  of the run: the implementation was fixed and the entry is stale).
* ``xfail``: may fail; a failure is reported as ``xfail``, a pass stays a pass.
* ``unsupported``: the implementation lacks the feature; the vector is not run.
* ``skip``: the vector is not run (e.g. it crashes the implementation's host).

An exact id wins over globs; among globs the first in file order wins.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sm5.oracle.errors import Sm5Error, SpecError
from sm5.oracle.yamlio import load_yaml

EXPECTATION_STATUSES = ("fail", "xfail", "unsupported", "skip")
_FIELDS = {"id", "status", "reason", "link"}
_GLOB_CHARS = frozenset("*?[")


class ExpectationError(Sm5Error):
    """An expectations file is malformed."""


@dataclass(frozen=True)
class Expectation:
    id: str
    status: str
    reason: str
    link: str = ""

    @property
    def is_glob(self) -> bool:
        return any(c in _GLOB_CHARS for c in self.id)

    def describe(self) -> str:
        """The reason with its link, as shown in a verdict."""
        return f"{self.reason} ({self.link})" if self.link else self.reason


@dataclass(frozen=True)
class Expectations:
    entries: tuple[Expectation, ...] = ()
    source: str = ""
    _exact: Mapping[str, Expectation] = field(init=False, repr=False, compare=False)
    _globs: tuple[Expectation, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Indexes derived from ``entries`` (a frozen dataclass sets them once, here).
        object.__setattr__(self, "_exact", {e.id: e for e in self.entries if not e.is_glob})
        object.__setattr__(self, "_globs", tuple(e for e in self.entries if e.is_glob))

    def lookup(self, vector_id: str) -> Expectation | None:
        exact = self._exact.get(vector_id)
        if exact is not None:
            return exact
        for entry in self._globs:
            if fnmatch.fnmatchcase(vector_id, entry.id):
                return entry
        return None

    def unused(self, vector_ids: Sequence[str]) -> tuple[Expectation, ...]:
        """Entries that match none of ``vector_ids`` (stale entries worth removing)."""
        used = {id(self.lookup(v)) for v in vector_ids}
        return tuple(e for e in self.entries if id(e) not in used)


NONE = Expectations()


def parse_expectations(doc: Any, where: str) -> Expectations:
    """Check a loaded YAML document; the first problem names the file and the entry."""
    if doc is None:
        return Expectations((), where)
    if not isinstance(doc, list):
        raise ExpectationError("expected a list of entries {id, status, reason, link}",
                               where=where)
    entries: list[Expectation] = []
    seen: set[str] = set()
    for number, item in enumerate(doc, start=1):
        label = f"{where}: entry {number}"
        if not isinstance(item, dict):
            raise ExpectationError(f"expected a mapping with id, status, reason, got {item!r}",
                                   where=label)
        if isinstance(item.get("id"), str):
            label += f" (id {item['id']!r})"
        extra = sorted(set(map(str, item)) - _FIELDS)
        if extra:
            raise ExpectationError(f"unknown field(s) {', '.join(extra)}; expected "
                                   f"{', '.join(sorted(_FIELDS))}", where=label)
        for key in ("id", "status", "reason"):
            value = item.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ExpectationError(f"field {key}: expected a non-empty string, got "
                                       f"{value!r}", where=label)
        if item["status"] not in EXPECTATION_STATUSES:
            raise ExpectationError(f"field status: {item['status']!r} is not one of "
                                   f"{', '.join(EXPECTATION_STATUSES)}", where=label)
        link = item.get("link", "")
        if not isinstance(link, str):
            raise ExpectationError(f"field link: expected a string, got {link!r}", where=label)
        if item["id"] in seen:
            raise ExpectationError("duplicate id; each id or glob appears once", where=label)
        seen.add(item["id"])
        entries.append(Expectation(item["id"], item["status"], item["reason"].strip(), link))
    return Expectations(tuple(entries), where)


def load_expectations(path: Path | None) -> Expectations:
    """Read an expectations file; ``None`` means no known divergences."""
    if path is None:
        return NONE
    try:
        doc = load_yaml(path)
    except SpecError as exc:
        raise ExpectationError(exc.message, where=exc.where) from None
    return parse_expectations(doc, str(path))
