"""Replaying the D3D11 runner's output made elsewhere (``--impl results:FILE``).

A user runs ``sm5-d3d11-runner.exe programs.sm5d3d11 > results.jsonl`` on a Windows machine with
a real GPU (``sm5 d3d11 stream`` writes the programs), brings ``results.jsonl`` back and judges
it anywhere: each vector is turned into its record again (the same harness, DXBC and views) and
the reply with the same id is read as the adapter reads a live one. The record's digest, echoed
by the runner, must match: a results file made from other vectors, or by another version of the
harness, gives an ``error`` for that vector rather than a verdict on the wrong program.

The file may hold several runs one after the other (a run resumed with ``--start N`` after a
crash appends its own header); for an id answered twice the last line counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sm5.conformance.d3d11.stream import (
    RUNNER_ID,
    Reply,
    StreamError,
    parse_header,
    parse_reply,
    record_or_result,
    result_of,
)
from sm5.conformance.interface import Result
from sm5.oracle.errors import Sm5Error
from sm5.vectors.format import Vector

CAPABILITIES: frozenset[str] = frozenset({"executes"})


class ReplayError(Sm5Error):
    """A results file cannot be read."""


class Replay:
    """An implementation whose answers come from a runner's results file."""

    capabilities: frozenset[str] = CAPABILITIES

    def __init__(self, path: Path, header: Mapping[str, Any], replies: Mapping[str, Reply]
                 ) -> None:
        self.path = path
        self.header = dict(header)
        self.replies = dict(replies)
        adapter = header.get("adapter", "unknown adapter")
        self.name = f"d3d11 results ({adapter}, feature level {header.get('feature_level')})"

    def run(self, vector: Vector) -> Result:
        record = record_or_result(vector)
        if isinstance(record, Result):
            return record
        reply = self.replies.get(vector.id)
        if reply is None:
            return Result.error(f"{self.path.name} holds no reply for this vector (the run "
                                "stopped before it, or it was made from other vectors)")
        return result_of(record, reply)


def is_runner_output(first_line: bytes) -> bool:
    """Is this the first line of the runner's output (its header, or its no-device line)?"""
    try:
        return _is_header(first_line.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _is_header(line: str) -> bool:
    try:
        doc = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(doc, dict) and ("format" in doc or doc.get("status") == "no-device")


def load_replay(path: Path) -> Replay:
    """Read a results file; the first malformed line is one error naming the file and line."""
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read: {exc.strerror}", where=str(path)) from None
    header: dict[str, Any] | None = None
    replies: dict[str, Reply] = {}
    with handle:
        for number, line in enumerate(handle, start=1):
            where = f"{path}:{number}"
            if not line.strip():
                continue
            try:
                if _is_header(line):
                    header = parse_header(line, where)
                    if header.get("runner") != RUNNER_ID:
                        raise ReplayError(
                            f"made by {header.get('runner')!r}, not {RUNNER_ID!r}: its stream "
                            "format differs (every answer would be to another record); run "
                            "the runner built from this checkout on a stream written by it",
                            where=where)
                    continue
                if header is None:
                    raise ReplayError("expected the runner's header line first", where=where)
                reply = parse_reply(line, where)
            except StreamError as exc:
                raise ReplayError(exc.message, where=exc.where) from None
            replies[reply.vector_id] = reply
    if header is None:
        raise ReplayError("no runner header line: not an sm5-d3d11 results file",
                          where=str(path))
    return Replay(path, header, replies)
