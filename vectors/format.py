"""Vector format ``sm5-vectors/1``: JSON Lines, a header line then one vector per line.

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
from typing import Any, TextIO

from sm5.oracle.errors import Sm5Error
from sm5.oracle.fileio import publish
from sm5.vectors.flags import notes_for

FORMAT = "sm5-vectors/1"


class VectorError(Sm5Error):
    """A vector file or line is malformed, or disagrees with the oracle."""


def canonical(obj: Any) -> str:
    """The one JSON spelling of ``obj``: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Header:
    """The first line of a vector file. ``count``: how many vector lines follow (readers check
    it); ``notes``: the meaning of every flag the vectors carry (``sm5.vectors.flags``)."""

    instruction: str
    spec_version: str
    generator: Mapping[str, Any]
    count: int
    notes: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "instruction": self.instruction,
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

    @property
    def rejected(self) -> bool:
        return list(self.expect.get("outcomes", ())) == ["rejected"]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "program": list(self.program), "target": self.target,
            "runtime": self.runtime, "state": self.state, "expect": self.expect,
            "clauses": list(self.clauses), "flags": list(self.flags), "reason": self.reason,
        }
        if self.provenance is not None:
            out["provenance"] = self.provenance
        return out

    @classmethod
    def from_json(cls, doc: Any, where: str) -> Vector:
        if not isinstance(doc, dict):
            raise VectorError("expected a vector object", where=where)
        required = ("id", "program", "target", "runtime", "state", "expect")
        missing = [k for k in required if k not in doc]
        if missing:
            raise VectorError(f"missing field(s) {', '.join(missing)}", where=where)
        allowed = {*required, "clauses", "flags", "reason", "provenance"}
        extra = sorted(set(doc) - allowed)
        if extra:
            raise VectorError(f"unknown field(s) {', '.join(extra)}", where=where)
        program = doc["program"]
        if not isinstance(program, list) or not all(isinstance(x, str) for x in program):
            raise VectorError("field program: expected a list of asm lines", where=where)
        for key in ("id", "target", "runtime"):
            if not isinstance(doc[key], str):
                raise VectorError(f"field {key}: expected a string", where=where)
        if not isinstance(doc["state"], dict) or not isinstance(doc["expect"], dict):
            raise VectorError("fields state and expect: expected objects", where=where)
        return cls(doc["id"], tuple(program), doc["target"], doc["runtime"], doc["state"],
                   doc["expect"], tuple(doc.get("clauses", ())), tuple(doc.get("flags", ())),
                   str(doc.get("reason", "")), doc.get("provenance"))


def parse_header(line: str, where: str) -> Header:
    try:
        doc = json.loads(line)
    except json.JSONDecodeError as exc:
        raise VectorError(f"header is not JSON: {exc.msg}", where=where) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise VectorError(f"first line must be a header with \"format\": \"{FORMAT}\"",
                          where=where)
    notes = doc.get("notes", {})
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise VectorError("header field notes: expected an object of flag meanings",
                          where=where)
    count = doc.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise VectorError("header field count: expected the number of vector lines",
                          where=where)
    try:
        return Header(str(doc["instruction"]), str(doc["spec_version"]), dict(doc["generator"]),
                      count, notes)
    except (KeyError, TypeError, ValueError) as exc:
        raise VectorError(f"header field {exc} missing or malformed", where=where) from None


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
    """The header and a lazy iterator over the vectors of one file (memory stays flat)."""
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise VectorError(f"cannot read: {exc.strerror}", where=str(path)) from None
    first = handle.readline()
    if not first:
        handle.close()
        raise VectorError("empty file; expected a header line", where=f"{path}:1")
    header = parse_header(first, f"{path}:1")
    return header, _iter_lines(handle, path, header.count)


def _iter_lines(handle: TextIO, path: Path, count: int) -> Iterator[Vector]:
    """The vectors after the header; the file must hold exactly ``count`` of them."""
    number = 1
    with handle:
        for number, line in enumerate(handle, start=2):
            where = f"{path}:{number}"
            if number - 1 > count:
                raise VectorError(f"more vector lines than the header's count {count}",
                                  where=where)
            if not line.strip():
                raise VectorError("blank line", where=where)
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise VectorError(f"not JSON: {exc.msg} at column {exc.colno}",
                                  where=where) from None
            yield Vector.from_json(doc, where)
    if number - 1 != count:
        raise VectorError(f"the header's count is {count} but the file holds {number - 1} "
                          "vector lines (truncated?)", where=f"{path}:1")


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
        final = Header(header.instruction, header.spec_version, header.generator, count,
                       notes_for(flags))
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
