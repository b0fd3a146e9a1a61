"""Bounded reading of ``sm5-vectors/1`` and ``/2`` JSON Lines files: the layer every reader shares.

A header line then one JSON value per line. Every defect of the bytes (a line that is not
UTF-8 or not JSON, an integer of more digits than Python converts, nesting deeper than the
decoder goes, an overlong line, a header whose ``count`` disagrees with the file, a file cut
short) becomes one error naming the file and line, of the class the caller chooses. The field
checks of a vector live with its type (``sm5.vectors.format``); this module knows only lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from sm5.oracle.errors import Sm5Error, bounded

FORMAT = "sm5-vectors/1"
#: Files of programs (several instructions, steps recorded); a version-1 file is read as a file
#: of one-instruction programs. The header tells them apart: ``format``, and the subject's key
#: (``instruction`` in version 1, ``subject`` in version 2).
PROGRAM_FORMAT = "sm5-vectors/2"
SUBJECT_KEYS = {FORMAT: "instruction", PROGRAM_FORMAT: "subject"}
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line read (a level-2 vector is a few kilobytes; the largest golden one 40 KB)."""


def decode_line(raw: bytes, where: str, error: type[Sm5Error] = Sm5Error) -> Any:
    """One line as a JSON value; any defect is an ``error`` at ``where``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}",
                    where=where) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not JSON: {exc.msg} at column {exc.colno}", where=where) from None
    except RecursionError:
        raise error("not JSON this reader accepts: nested too deeply", where=where) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise error(f"not JSON this reader accepts: {bounded(str(exc))}", where=where) from None


def check_header(doc: Any, where: str, error: type[Sm5Error] = Sm5Error) -> dict[str, Any]:
    """The header object, its fields of the right types and ``count`` a non-negative integer."""
    if not isinstance(doc, dict) or not isinstance(doc.get("format"), str) or \
            doc["format"] not in SUBJECT_KEYS:
        raise error(f"first line must be a header with \"format\": \"{FORMAT}\" (or "
                    f"\"{PROGRAM_FORMAT}\")", where=where)
    subject = SUBJECT_KEYS[doc["format"]]
    for key, kind in ((subject, str), ("spec_version", str), ("generator", dict)):
        if not isinstance(doc.get(key), kind):
            raise error(f"header field {key}: expected a {kind.__name__}", where=where)
    count = doc.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise error("header field count: expected a non-negative integer, the number of "
                    "vector lines", where=where)
    return doc


def _read_line(handle: BinaryIO, where: str, error: type[Sm5Error]) -> bytes:
    raw = handle.readline(MAX_LINE_BYTES + 1)
    if len(raw) > MAX_LINE_BYTES:
        raise error(f"line longer than {MAX_LINE_BYTES} bytes", where=where)
    return raw


def _count_lines(path: Path) -> tuple[int, bool]:
    """(number of line ends, whether the file ends with one), read in blocks."""
    ends, last = 0, b"\n"
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            ends += block.count(b"\n")
            last = block[-1:]
    return ends, last == b"\n"


def read_lines(path: Path, error: type[Sm5Error] = Sm5Error
               ) -> tuple[dict[str, Any], Iterator[tuple[str, Any]]]:
    """The header and a lazy iterator of (``file:line``, JSON value) over the other lines.

    The header's ``count`` is checked against the file before any line is read, so a file cut
    short (or grown) is refused up front, and again at the end in case it changed meanwhile."""
    try:
        ends, terminated = _count_lines(path)
        handle = path.open("rb")
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror}", where=str(path)) from None
    try:
        first = _read_line(handle, f"{path}:1", error)
        if not first:
            raise error("empty file; expected a header line", where=f"{path}:1")
        header = check_header(decode_line(first, f"{path}:1", error), f"{path}:1", error)
        if not terminated:
            raise error("the last line has no line end: the file was cut short",
                        where=f"{path}:{ends + 1}")
        if ends - 1 != header["count"]:
            raise error(f"the header counts {header['count']} vectors but the file holds "
                        f"{ends - 1} lines after it (cut short or extended?)", where=f"{path}:1")
    except BaseException:
        handle.close()
        raise
    return header, _iter_lines(handle, path, header["count"], error)


def _iter_lines(handle: BinaryIO, path: Path, count: int, error: type[Sm5Error]
                ) -> Iterator[tuple[str, Any]]:
    with handle:
        number = 1
        while True:
            number += 1
            where = f"{path}:{number}"
            line = _read_line(handle, where, error)
            if not line:
                if number - 2 != count:
                    raise error(f"the header counts {count} vectors but {number - 2} were read",
                                where=where)
                return
            if not line.strip():
                raise error("blank line", where=where)
            yield where, decode_line(line, where, error)
