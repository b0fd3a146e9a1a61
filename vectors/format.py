"""Vector formats ``sm5-vectors/1`` and ``sm5-vectors/2``: JSON Lines, a header line then one
vector per line. Version 2 holds programs: its header names a ``subject`` (a family of programs)
instead of an ``instruction``, and each vector says which of its instructions it is about
(``subject``: their positions) and what each step fired (``steps``). A version-1 vector is a
one-instruction program about that instruction.

Canonical JSON (sorted keys, no spaces) so regeneration is byte-identical. Reading never raises
anything but :class:`VectorError`, which names the file and line.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sm5.oracle.errors import Sm5Error, StateError, bounded
from sm5.oracle.files.atomic import publish
from sm5.oracle.files.jsonl import FORMAT as FORMAT
from sm5.oracle.files.jsonl import PROGRAM_FORMAT as PROGRAM_FORMAT
from sm5.oracle.files.jsonl import SUBJECT_KEYS, check_header, decode_line, read_lines
from sm5.oracle.machine.state import MachineState, expected_from_json, state_from_json
from sm5.vectors.flags import notes_for


class VectorError(Sm5Error):
    """A vector file or line is malformed, or disagrees with the oracle."""


def canonical(obj: Any) -> str:
    """The one JSON spelling of ``obj``: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Header:
    """The first line of a vector file. ``subject``: the instruction (version 1) or family of
    programs (version 2) its vectors are about; ``count``: how many vector lines follow (readers
    check it); ``notes``: the meaning of every flag the vectors carry (``sm5.vectors.flags``)."""

    subject: str
    spec_version: str
    generator: Mapping[str, Any]
    count: int
    notes: Mapping[str, str] = field(default_factory=dict)
    format: str = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, SUBJECT_KEYS[self.format]: self.subject,
                "spec_version": self.spec_version, "generator": dict(self.generator),
                "count": self.count, "notes": dict(self.notes)}


@dataclass(frozen=True)
class Vector:
    """One vector. ``state`` and ``expect`` keep their JSON form (the public contract)."""

    id: str
    program: tuple[str, ...]
    target: str
    runtime: str
    state: Mapping[str, Any]
    expect: Mapping[str, Any]
    clauses: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    reason: str = ""
    provenance: Mapping[str, Any] | None = field(default=None)
    #: Version 2: the positions (among the program's instructions) of those the vector is
    #: about, and each executed step's record (``sm5.oracle.machine.state.step_to_json``).
    subject: tuple[int, ...] | None = None
    steps: tuple[Mapping[str, Any], ...] | None = None
    #: The typed form of ``state`` when the vector was read from JSON: its field checks build
    #: it (``sm5.oracle.machine.state.state_from_json``), so a reader of typed values need not build
    #: it again. No part of the vector's value: not compared, not printed, and not carried by
    #: ``dataclasses.replace``.
    decoded_state: MachineState | None = field(default=None, init=False, compare=False,
                                               repr=False)

    def with_state(self, state: Mapping[str, Any], *, same_machine_state: bool = False
                   ) -> Vector:
        """The same vector with another state (``dataclasses.replace`` costs several times
        more, and a run makes one per vector). ``same_machine_state``: the new state differs
        from this one by nothing the typed state holds (guard words), so the typed state carries
        over."""
        out = Vector(self.id, self.program, self.target, self.runtime, state, self.expect,
                     self.clauses, self.flags, self.reason, self.provenance, self.subject,
                     self.steps)
        if same_machine_state:
            out._decoded(self.decoded_state)
        return out

    def _decoded(self, state: MachineState | None) -> None:
        # A derived value set once, right after construction (as a __post_init__ would).
        object.__setattr__(self, "decoded_state", state)

    @property
    def rejected(self) -> bool:
        # Only a must-reject vector names the rule its instance breaks (read at load).
        return "rule" in self.expect

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "program": list(self.program), "target": self.target,
            "runtime": self.runtime, "state": self.state, "expect": self.expect,
            "clauses": list(self.clauses), "flags": list(self.flags), "reason": self.reason,
        }
        if self.provenance is not None:
            out["provenance"] = self.provenance
        if self.subject is not None:
            out["subject"] = list(self.subject)
        if self.steps is not None:
            out["steps"] = [dict(step) for step in self.steps]
        return out

    @classmethod
    def from_json(cls, doc: Any, where: str) -> Vector:
        """Check every field's shape, so that no reader meets a value of the wrong type."""
        if not isinstance(doc, dict):
            raise VectorError("expected a vector object", where=where)
        required = ("id", "program", "target", "runtime", "state", "expect")
        missing = [k for k in required if k not in doc]
        if missing:
            raise VectorError(f"missing field(s) {', '.join(missing)}", where=where)
        allowed = {*required, "clauses", "flags", "reason", "provenance", "subject", "steps"}
        extra = sorted(set(doc) - allowed)
        if extra:
            raise VectorError(f"unknown field(s) {bounded(', '.join(extra))}", where=where)
        program = doc["program"]
        if not isinstance(program, list) or not all(isinstance(x, str) for x in program):
            raise VectorError("field program: expected a list of asm lines", where=where)
        for key in ("id", "target", "runtime", "reason"):
            if not isinstance(doc.get(key, ""), str):
                raise VectorError(f"field {key}: expected a string", where=where)
        clauses = _strings(doc, "clauses", where)
        flags = _strings(doc, "flags", where)
        provenance = doc.get("provenance")
        if provenance is not None and not isinstance(provenance, dict):
            raise VectorError("field provenance: expected an object", where=where)
        try:
            state = state_from_json(doc["state"], where="state")
        except StateError as exc:
            raise VectorError(f"field {exc.where}: {exc.message}", where=where) from None
        _check_expect(doc["expect"], where)
        subject, steps = _program_fields(doc, len(program), where)
        vector = cls(doc["id"], tuple(program), doc["target"], doc["runtime"], doc["state"],
                     doc["expect"], clauses, flags, doc.get("reason", ""), provenance, subject,
                     steps)
        vector._decoded(state)
        return vector


def _program_fields(doc: Mapping[str, Any], lines: int, where: str
                    ) -> tuple[tuple[int, ...] | None, tuple[Mapping[str, Any], ...] | None]:
    """``subject`` (instruction positions) and ``steps`` (objects), where present."""
    subject = doc.get("subject")
    if subject is not None:
        if not isinstance(subject, list) or not subject or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < lines
                for k in subject):
            raise VectorError("field subject: expected a non-empty list of instruction "
                              "positions", where=where)
        subject = tuple(subject)
    steps = doc.get("steps")
    if steps is not None:
        if not isinstance(steps, list) or not all(isinstance(x, dict) for x in steps):
            raise VectorError("field steps: expected a list of step objects", where=where)
        steps = tuple(steps)
    return subject, steps


def _strings(doc: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise VectorError(f"field {key}: expected a list of strings", where=where)
    return tuple(value)


def _check_expect(expect: Any, where: str) -> None:
    if not isinstance(expect, dict):
        raise VectorError("field expect: expected an object", where=where)
    outcomes = _strings(expect, "outcomes", where + ": expect")
    if not outcomes:
        raise VectorError("field expect.outcomes: expected a non-empty list", where=where)
    if "rule" in expect:
        if not isinstance(expect["rule"], str) or len(outcomes) != 1:
            raise VectorError("field expect.rule: a rejected vector names its rule (a string) "
                              "and has one outcome", where=where)
        return
    allowed_by = expect.get("allowed_by", {})
    if not isinstance(allowed_by, dict) or not all(
            isinstance(v, list) and all(isinstance(c, str) for c in v)
            for v in allowed_by.values()):
        raise VectorError("field expect.allowed_by: expected an object of clause id lists",
                          where=where)
    try:
        expected_from_json(expect.get("state"), where="expect.state")
    except StateError as exc:
        raise VectorError(f"field {exc.where}: {exc.message}", where=where) from None


def _header(doc: Mapping[str, Any], where: str) -> Header:
    notes = doc.get("notes", {})
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise VectorError("header field notes: expected an object of flag meanings",
                          where=where)
    return Header(doc[SUBJECT_KEYS[doc["format"]]], doc["spec_version"], dict(doc["generator"]),
                  doc["count"], notes, doc["format"])


def parse_header(line: str | bytes, where: str) -> Header:
    raw = line.encode("utf-8") if isinstance(line, str) else line
    return _header(check_header(decode_line(raw, where, VectorError), where, VectorError), where)


def read_header(path: Path) -> Header:
    """The header of one vector file (its first line only)."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            first = handle.readline()
    except OSError as exc:
        raise VectorError(f"cannot read: {exc.strerror}", where=str(path)) from None
    except UnicodeDecodeError:
        raise VectorError("header is not UTF-8", where=f"{path}:1") from None
    if not first:
        raise VectorError("empty file; expected a header line", where=f"{path}:1")
    return parse_header(first, f"{path}:1")


def read_file(path: Path) -> tuple[Header, Iterator[Vector]]:
    """The header and a lazy iterator over the vectors of one file (memory stays flat); the
    header's ``count`` is enforced (``sm5.oracle.files.jsonl``)."""
    doc, lines = read_lines(path, VectorError)
    header = _header(doc, f"{path}:1")
    return header, (Vector.from_json(value, where) for where, value in lines)


def iter_vectors(paths: Iterable[Path]) -> Iterator[tuple[Path, Vector]]:
    """Every vector of every file (a folder means its ``*.jsonl`` files, sorted)."""
    for path in paths:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        for file in files:
            _, vectors = read_file(file)
            for vector in vectors:
                yield file, vector


def write_file(path: Path, header: Header, vectors: Iterable[Vector]) -> int:
    """Write atomically: body to a temporary file first (streaming), then header + body.

    The header's ``count`` is filled in from the number of vectors written, its ``notes`` from
    the flags they carry (``notes`` maps the flags used to their meanings, see
    ``sm5.vectors.flags.notes_for``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, body_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.body.")
    count = 0
    flags: set[str] = set()
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as body:
            for vector in vectors:
                body.write(canonical(vector.to_json()) + "\n")
                flags.update(vector.flags)
                count += 1
        final = Header(header.subject, header.spec_version, header.generator, count,
                       notes_for(flags), header.format)
        fd2, out_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd2, "w", encoding="utf-8", newline="\n") as out, \
                    open(body_name, encoding="utf-8") as src:
                out.write(canonical(final.to_json()) + "\n")
                for line in src:
                    out.write(line)
            publish(out_name, path)
        except BaseException:
            Path(out_name).unlink(missing_ok=True)
            raise
    finally:
        Path(body_name).unlink(missing_ok=True)
    return count
