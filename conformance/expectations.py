"""Known divergences of an implementation: an expectations file (YAML), never code.

The file is a list of entries. An entry names the vectors it covers by an exact id, an fnmatch
glob over ids, or a *predicate* over what a vector is (``match``), and says what to expect::

    - id: "*/witness/0007"                   # an exact vector id or an fnmatch glob
      status: fail
      reason: "32-bit wrap of index * stride"

    - name: dword-flattening-wrap            # a short label for verdicts and checks
      status: xfail
      reason: "vkd3d bounds-checks only the 32-bit flattened dword index"
      link: "https://..."                     # optional: the upstream bug
      match:                                  # every key given must hold (AND) ...
        clauses: ["*.oob_index"]              # ... and, within a key, any value (OR)
        operands: {file: l, type: double}     # an operand of the instruction under test

``match`` keys (each a glob or a list of globs; a vector matches a key when one of its values
matches one of the globs): ``id``, ``instruction``, ``category`` (both from the id
``<instruction>/<category>/<number>``), ``clauses`` (the clause ids that fired, or the rules
a must-reject vector breaks), ``flags``, ``outcomes`` (the expected outcomes). ``operands`` is
one mapping or a list of them (any): an operand of the instruction under test matches when
every key holds: ``file`` (as written: ``r``, ``u``, ``g``, ``l`` for an immediate), ``name``
and ``role`` (the spec's operand name and role), ``type`` (``double`` or ``32-bit``: the width
the spec's semantics read from it, see ``vector_facts``), ``extent`` (``empty`` or
``nonempty``: whether the resource the operand names holds any word in the vector's state),
``components`` (a glob over the write mask or swizzle letters as written: ``[yzw]*``),
``aliased`` (``yes``: another operand of the instruction names the same register; ``no``).
``resources`` is one mapping or a list
of them (any): a resource of the vector's initial state (``u0``, ``t1``, ``g0``) matches when
every key holds: ``register`` (a glob over its name: ``u[89]``, ``u[1-6][0-9]``), ``file`` (a
glob over its register file: ``u``, ``t``, ``g``), ``kind`` (a glob:
``raw``, ``structured``, ``typed``), ``declared`` (a glob over the element type its declaration
names: ``uint``, ``sint``, ``float``, ...; typed views only), ``empty`` (true: it holds no
words, so a runner binds a NULL view, or a view of no elements when it has a hidden counter;
false: it holds some), ``counter`` (true: its view has a hidden counter, the state gives its
``counter``; false: it has none).

* ``fail``: a known divergence that must still fail; a pass is reported as ``xpass`` (a failure
  of the run: the implementation was fixed and the entry is stale).
* ``xfail``: may fail; a failure is reported as ``xfail``, a pass stays a pass.
* ``unsupported``: the implementation lacks the feature; the vector is not run.
* ``skip``: the vector is not run (e.g. it crashes the implementation's host).

An entry that is only an exact id wins over every other entry; otherwise the first matching
entry in file order decides. An entry that decides no vector of the selected files is an
error (``unused``), never silence.
"""

from __future__ import annotations

import fnmatch
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sm5.conformance.vector_facts import (
    OPERAND_TYPES,
    OperandFact,
    declared_types,
    id_parts,
    known_siblings,
    operand_facts,
    sibling_tells_apart,
)
from sm5.oracle.errors import Sm5Error, SpecError
from sm5.oracle.files.yamlio import load_yaml
from sm5.oracle.machine.program import subject_of
from sm5.vectors.format import Vector

#: Recent look-ups kept (a run looks each vector up two or three times within one batch).
RECENT_LOOKUPS = 1024
EXPECTATION_STATUSES = ("fail", "xfail", "unsupported", "skip")
_FIELDS = {"id", "name", "status", "reason", "link", "match"}
_GLOB_CHARS = frozenset("*?[")
#: Keys of ``match`` that hold globs over one of the vector's fields.
GLOB_KEYS = ("id", "instruction", "category", "clauses", "flags", "outcomes")
#: Keys of one operand form.
OPERAND_KEYS = ("file", "name", "role", "type", "extent", "components", "aliased")
#: Values of ``extent``: the operand's resource in the vector's state holds no word / some.
OPERAND_EXTENTS = ("empty", "nonempty")
#: Values of ``aliased``: another operand of the instruction names the operand's register / none.
OPERAND_ALIASED = ("yes", "no")
#: Keys of one resource form.
RESOURCE_KEYS = ("register", "file", "kind", "declared", "empty", "counter")
#: Keys of ``match`` that hold forms (one mapping or a list of them).
FORM_KEYS = ("operands", "resources")
#: The key naming siblings the implementation computes instead (spec/instructions: siblings).
COMPUTES_KEY = "computes"


class ExpectationError(Sm5Error):
    """An expectations file is malformed, or an entry matches no vector."""


def _is_glob(text: str) -> bool:
    return any(c in _GLOB_CHARS for c in text)


def _any_matches(values: Iterable[str], globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(v, g) for v in values for g in globs)


@dataclass(frozen=True)
class OperandForm:
    """A form one operand of the instruction under test can have; each field a glob or ""."""

    file: str = ""
    name: str = ""
    role: str = ""
    type: str = ""
    extent: str = ""
    components: str = ""
    aliased: str = ""

    def holds(self, operand: OperandFact, extent: str = "", aliased: str = "") -> bool:
        return all(not want or fnmatch.fnmatchcase(have, want)
                   for want, have in ((self.file, operand.file), (self.name, operand.name),
                                      (self.role, operand.role), (self.type, operand.type),
                                      (self.extent, extent),
                                      (self.components, operand.components),
                                      (self.aliased, aliased)))


def _aliased(operand: OperandFact, facts: Sequence[OperandFact]) -> str:
    """``yes`` when another operand of the instruction names ``operand``'s register (an
    immediate names none), else ``no``."""
    if operand.file in ("l", "d", "null"):
        return "no"
    return "yes" if any(other is not operand and other.register == operand.register
                        for other in facts) else "no"


def _extent(vector: Vector, operand: OperandFact) -> str:
    """``empty`` / ``nonempty`` for an operand naming a resource of the vector's state (a view
    of no words: a harness may bind it as a null descriptor), else ""."""
    res = vector.state.get(operand.register)
    if not isinstance(res, dict):
        return ""
    return "nonempty" if res.get("data") else "empty"


@dataclass(frozen=True)
class ResourceForm:
    """A form one resource of the vector's initial state can have; ``register``, ``file`` and
    ``kind`` globs or "", ``empty`` and ``counter`` None when not asked."""

    file: str = ""
    kind: str = ""
    empty: bool | None = None
    register: str = ""

    declared: str = ""
    counter: bool | None = None

    def holds(self, register: str, resource: Any, declared: Mapping[str, str]) -> bool:
        if not isinstance(resource, Mapping):
            return False
        kind, data = resource.get("kind"), resource.get("data")
        return ((not self.register or fnmatch.fnmatchcase(register, self.register))
                and (not self.declared or (register in declared and fnmatch.fnmatchcase(
                    declared[register], self.declared)))
                and (not self.file or fnmatch.fnmatchcase(register[:1], self.file))
                and (not self.kind or (isinstance(kind, str)
                                       and fnmatch.fnmatchcase(kind, self.kind)))
                and (self.empty is None or self.empty == (not data))
                and (self.counter is None or self.counter == ("counter" in resource)))


def _vector_values(vector: Vector) -> dict[str, tuple[str, ...]]:
    instruction, category = id_parts(vector.id)
    return {"id": (vector.id,), "instruction": (instruction,), "category": (category,),
            "clauses": tuple(vector.clauses), "flags": tuple(vector.flags),
            "outcomes": tuple(str(o) for o in vector.expect.get("outcomes", ()))}


@dataclass(frozen=True)
class Predicate:
    """What a vector must be for an entry to cover it: globs per field (AND across fields, OR
    within one) and operand forms (one operand matching one form)."""

    globs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    operands: tuple[OperandForm, ...] = ()
    resources: tuple[ResourceForm, ...] = ()
    #: Sibling ids of the vector's instruction: the vector is one an implementation computing
    #: that sibling's kernel instead fails (sm5.vectors.siblings).
    computes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.globs and not self.operands and not self.resources and not self.computes

    def holds(self, vector: Vector, values: Mapping[str, tuple[str, ...]] | None = None
              ) -> bool:
        """``values``: the vector's `_vector_values` when the caller has them already."""
        if self.globs:
            if values is None:
                values = _vector_values(vector)
            if not all(_any_matches(values[key], globs) for key, globs in self.globs):
                return False
        if self.resources:
            declared = declared_types(tuple(vector.program))
            if not any(form.holds(name, res, declared) for form in self.resources
                       for name, res in vector.state.items()):
                return False
        if self.computes and not any(sibling_tells_apart(vector, s) for s in self.computes):
            return False
        if self.operands:
            facts = operand_facts(tuple(vector.program), subject_of(vector.id))
            return any(form.holds(op, _extent(vector, op), _aliased(op, facts))
                       for form in self.operands for op in facts)
        return True


@dataclass(frozen=True)
class Expectation:
    id: str
    status: str
    reason: str
    link: str = ""
    match: Predicate = Predicate()
    name: str = ""

    @property
    def is_glob(self) -> bool:
        return _is_glob(self.id)

    @property
    def exact(self) -> bool:
        """Only an exact vector id: such an entry wins over every other."""
        return bool(self.id) and not self.is_glob and self.match.empty

    @property
    def label(self) -> str:
        """How checks and reports name the entry."""
        return self.name or self.id or "(unnamed predicate)"

    def covers(self, vector: Vector, values: Mapping[str, tuple[str, ...]] | None = None
               ) -> bool:
        if self.id and not fnmatch.fnmatchcase(vector.id, self.id):
            return False
        return self.match.holds(vector, values)

    def describe(self) -> str:
        """The reason with its link, as shown in a verdict."""
        return f"{self.reason} ({self.link})" if self.link else self.reason


@dataclass(frozen=True)
class Expectations:
    entries: tuple[Expectation, ...] = ()
    source: str = ""
    _exact: Mapping[str, Expectation] = field(init=False, repr=False, compare=False)
    _ordered: tuple[Expectation, ...] = field(init=False, repr=False, compare=False)
    _recent: OrderedDict[str, tuple[Vector, Expectation | None]] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Indexes derived from ``entries`` (a frozen dataclass sets them once, here).
        object.__setattr__(self, "_exact", {e.id: e for e in self.entries if e.exact})
        object.__setattr__(self, "_ordered", tuple(e for e in self.entries if not e.exact))
        object.__setattr__(self, "_recent", OrderedDict())

    def lookup(self, vector: Vector) -> Expectation | None:
        """The entry that decides this vector, or None.

        The answers for the last :data:`RECENT_LOOKUPS` vectors are kept, by vector id and for
        that very vector object (a run asks again for the same vector before judging it).
        """
        recent = self._recent.get(vector.id)
        if recent is not None and recent[0] is vector:
            return recent[1]
        found = self._exact.get(vector.id)
        if found is None and self._ordered:
            values = _vector_values(vector)  # once for every entry asked
            found = next((e for e in self._ordered if e.covers(vector, values)), None)
        if self._ordered:  # without predicates a look-up is one dict access already
            self._recent[vector.id] = (vector, found)
            if len(self._recent) > RECENT_LOOKUPS:
                self._recent.popitem(last=False)
        return found

    def decided(self, vectors: Iterable[Vector]) -> dict[int, list[str]]:
        """For each entry (by position), the ids of the vectors it decides, in order."""
        out: dict[int, list[str]] = {i: [] for i in range(len(self.entries))}
        position = {id(e): i for i, e in enumerate(self.entries)}
        for vector in vectors:
            entry = self.lookup(vector)
            if entry is not None:
                out[position[id(entry)]].append(vector.id)
        return out

    def unused(self, vectors: Iterable[Vector]) -> tuple[Expectation, ...]:
        """Entries that decide none of ``vectors`` (they match none, or earlier entries
        decide every vector they match): stale, or a typo."""
        decided = self.decided(vectors)
        return tuple(e for i, e in enumerate(self.entries) if not decided[i])

    def require_used(self, vectors: Iterable[Vector]) -> None:
        """Raise one error naming every entry that decides no vector."""
        decided = self.decided(vectors)
        unused = [(i, e) for i, e in enumerate(self.entries) if not decided[i]]
        if unused:
            names = "; ".join(f"entry {i + 1} ({e.label})" for i, e in unused)
            raise ExpectationError(f"{len(unused)} entr{'y' if len(unused) == 1 else 'ies'} "
                                   f"match no vector of the selected files: {names}",
                                   where=self.source)


NONE = Expectations()


def _strings(value: Any, what: str, label: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or \
            not all(isinstance(v, str) and v.strip() for v in items):
        raise ExpectationError(f"{what}: expected a non-empty string or list of non-empty "
                               f"strings, got {value!r}", where=label)
    return tuple(items)


def _known_keys(doc: Any, field: str, keys: Sequence[str], label: str) -> None:
    """``doc`` is a non-empty mapping whose keys are among ``keys`` (``match.<field>``)."""
    if not isinstance(doc, dict) or not doc:
        raise ExpectationError(f"match.{field}: expected a mapping with some of "
                               f"{', '.join(keys)}, got {doc!r}", where=label)
    extra = sorted(set(map(str, doc)) - set(keys))
    if extra:
        raise ExpectationError(f"match.{field}: unknown key(s) {', '.join(extra)}; expected "
                               f"{', '.join(keys)}", where=label)


def _operand_form(doc: Any, label: str) -> OperandForm:
    _known_keys(doc, "operands", OPERAND_KEYS, label)
    values: dict[str, str] = {}
    for key, value in doc.items():
        if not isinstance(value, str) or not value.strip():
            raise ExpectationError(f"match.operands.{key}: expected a non-empty string, got "
                                   f"{value!r}", where=label)
        values[str(key)] = value
    if "extent" in values and values["extent"] not in OPERAND_EXTENTS:
        raise ExpectationError(f"match.operands.extent: {values['extent']!r} is not one of "
                               f"{', '.join(OPERAND_EXTENTS)}", where=label)
    if "aliased" in values and values["aliased"] not in OPERAND_ALIASED:
        raise ExpectationError(f"match.operands.aliased: {values['aliased']!r} is not one of "
                               f"{', '.join(OPERAND_ALIASED)}", where=label)
    if "type" in values and values["type"] not in OPERAND_TYPES:
        raise ExpectationError(f"match.operands.type: {values['type']!r} is not one of "
                               f"{', '.join(OPERAND_TYPES)}", where=label)
    return OperandForm(**values)


def _resource_form(doc: Any, label: str) -> ResourceForm:
    _known_keys(doc, "resources", RESOURCE_KEYS, label)
    for key in ("empty", "counter"):
        if key in doc and not isinstance(doc[key], bool):
            raise ExpectationError(f"match.resources.{key}: expected true or false, got "
                                   f"{doc[key]!r}", where=label)
    for key in ("register", "file", "kind", "declared"):
        value = doc.get(key, "")
        if key in doc and (not isinstance(value, str) or not value.strip()):
            raise ExpectationError(f"match.resources.{key}: expected a non-empty string, got "
                                   f"{value!r}", where=label)
    return ResourceForm(str(doc.get("file", "")), str(doc.get("kind", "")), doc.get("empty"),
                        str(doc.get("register", "")), str(doc.get("declared", "")),
                        doc.get("counter"))


def _forms(doc: Mapping[Any, Any], key: str, label: str) -> list[Any]:
    raw = doc[key]
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise ExpectationError(f"match.{key}: expected a mapping or a non-empty list",
                               where=label)
    return items


def _predicate(doc: Any, label: str) -> Predicate:
    keys = ", ".join((*GLOB_KEYS, *FORM_KEYS, COMPUTES_KEY))
    if not isinstance(doc, dict) or not doc:
        raise ExpectationError(f"field match: expected a mapping with some of {keys}, got "
                               f"{doc!r}", where=label)
    extra = sorted(set(map(str, doc)) - {*GLOB_KEYS, *FORM_KEYS, COMPUTES_KEY})
    if extra:
        raise ExpectationError(f"field match: unknown key(s) {', '.join(extra)}; expected "
                               f"{keys}", where=label)
    globs = tuple((key, _strings(doc[key], f"match.{key}", label))
                  for key in GLOB_KEYS if key in doc)
    operands = tuple(_operand_form(item, label) for item in _forms(doc, "operands", label)) \
        if "operands" in doc else ()
    resources = tuple(_resource_form(item, label) for item in _forms(doc, "resources", label)) \
        if "resources" in doc else ()
    computes = _strings(doc[COMPUTES_KEY], f"match.{COMPUTES_KEY}", label) \
        if COMPUTES_KEY in doc else ()
    known = known_siblings()
    unknown = sorted(set(computes) - known)
    if unknown:
        raise ExpectationError(f"field match.{COMPUTES_KEY}: unknown sibling(s) "
                               f"{', '.join(unknown)}; expected one of {', '.join(sorted(known))}",
                               where=label)
    return Predicate(globs, operands, resources, computes)


def _label(number: int, where: str, item: Mapping[Any, Any]) -> str:
    label = f"{where}: entry {number}"
    for key in ("id", "name"):
        if isinstance(item.get(key), str):
            return label + f" ({key} {item[key]!r})"
    return label


def parse_expectations(doc: Any, where: str) -> Expectations:
    """Check a loaded YAML document; the first problem names the file and the entry."""
    if doc is None:
        return Expectations((), where)
    if not isinstance(doc, list):
        raise ExpectationError("expected a list of entries {id or match, status, reason}",
                               where=where)
    entries: list[Expectation] = []
    seen: set[str] = set()
    for number, item in enumerate(doc, start=1):
        if not isinstance(item, dict):
            raise ExpectationError(f"expected a mapping with id or match, status, reason, got "
                                   f"{item!r}", where=f"{where}: entry {number}")
        entries.append(_entry(item, _label(number, where, item), seen))
    return Expectations(tuple(entries), where)


def _entry(item: Mapping[Any, Any], label: str, seen: set[str]) -> Expectation:
    extra = sorted(set(map(str, item)) - _FIELDS)
    if extra:
        raise ExpectationError(f"unknown field(s) {', '.join(extra)}; expected "
                               f"{', '.join(sorted(_FIELDS))}", where=label)
    if "id" not in item and "match" not in item:
        raise ExpectationError("expected an id (exact or glob) or a match predicate",
                               where=label)
    for key in ("id", "name", "status", "reason"):
        value = item.get(key)
        if (key in item or key in ("status", "reason")) and \
                (not isinstance(value, str) or not value.strip()):
            raise ExpectationError(f"field {key}: expected a non-empty string, got "
                                   f"{value!r}", where=label)
    if item["status"] not in EXPECTATION_STATUSES:
        raise ExpectationError(f"field status: {item['status']!r} is not one of "
                               f"{', '.join(EXPECTATION_STATUSES)}", where=label)
    link = item.get("link", "")
    if not isinstance(link, str):
        raise ExpectationError(f"field link: expected a string, got {link!r}", where=label)
    predicate = _predicate(item["match"], label) if "match" in item else Predicate()
    if "name" in item or "match" not in item:
        what = "name" if "name" in item else "id"
        key = f"{what}:{item[what]}"
        if key in seen:
            raise ExpectationError(f"duplicate {what}; each {what} appears once", where=label)
        seen.add(key)
    return Expectation(str(item.get("id", "")), item["status"], item["reason"].strip(), link,
                       predicate, str(item.get("name", "")))


def load_expectations(path: Path | None) -> Expectations:
    """Read an expectations file; ``None`` means no known divergences."""
    if path is None:
        return NONE
    try:
        doc = load_yaml(path)
    except SpecError as exc:
        raise ExpectationError(exc.message, where=exc.where) from None
    return parse_expectations(doc, str(path))
