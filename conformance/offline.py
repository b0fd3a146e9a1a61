"""Offline runs: the requests written to a file, the replies judged later.

As TestFloat's users do, an implementation can be run where the suite cannot (another machine, a
Windows box with a D3D11 driver, a device): ``sm5 requests`` writes the exact request lines the
JSON Lines protocol would send, the implementation answers them anywhere, one reply line each in
the protocol's format, and ``sm5 verify`` judges the replies with the same code as a live run.

:class:`ReplayImplementation` is the piece to reuse: it is an ordinary implementation whose
``run(vector)`` returns the recorded answer, so a replay goes through the same
:func:`sm5.conformance.run.run`, expectations, verdicts, results JSON, JUnit and report inputs as a
live run. Anything that records answers (a D3D11 runner's replay, a file from a device) only has to
produce the mapping from vector id to :class:`Result` (:func:`load_replies` reads the protocol's
JSON Lines into one).

A reply line holds ``id`` and exactly one of ``state``, ``rejected``, ``unsupported`` (the
protocol's replies) or, for a runner that watched the implementation die, ``crash`` or ``timeout``
with a reason. A line that is not a JSON object with a string ``id``, or repeats an id, makes the
file unreadable (an error naming the line); a reply whose content is wrong (two kinds, a malformed
state) fails its vector, as it would in a live run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sm5.conformance.compare import verdict_without_running
from sm5.conformance.expectations import NONE, Expectations
from sm5.conformance.guards import request_vector
from sm5.conformance.interface import Result
from sm5.conformance.protocol import REPLY_KINDS, reply_result, request_line
from sm5.conformance.run import Shard, iter_selected
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_bytes
from sm5.vectors.format import Vector

#: Reply kinds a recorded answer may hold: the protocol's, and the two a runner may record.
RECORDED_KINDS = (*REPLY_KINDS, "crash", "timeout")
MAX_LINE_BYTES = 64 << 20


class ReplyFileError(Sm5Error):
    """A replies file that cannot be read (names the file and line)."""


def sent_vectors(files: Sequence[Path], *, shard: Shard | None = None,
                 select: Sequence[str] = (), expectations: Expectations = NONE,
                 capabilities: frozenset[str] = frozenset({"executes", "validates"})
                 ) -> Iterator[Vector]:
    """The vectors a live run would send to an implementation with these capabilities, in run
    order (skipped, unsupported-by-expectation and not-applicable vectors are never sent)."""
    for _, _, vector in iter_selected(files, shard, select):
        if verdict_without_running(vector, expectations, capabilities) is None:
            yield vector


def requests_bytes(vectors: Iterable[Vector]) -> bytes:
    """The request lines, byte for byte as the protocol sends them."""
    return b"".join(request_line(request_vector(v)) for v in vectors)


def write_requests(path: Path, vectors: Iterable[Vector]) -> int:
    """Write the requests atomically; returns how many."""
    data = requests_bytes(vectors)
    atomic_write_bytes(path, data)
    return data.count(b"\n")


def result_of_reply(doc: Mapping[str, Any]) -> Result:
    """The :class:`Result` a reply object stands for (its ``id`` already matched)."""
    kinds = [k for k in RECORDED_KINDS if k in doc]
    if len(kinds) != 1:
        return Result.error(f"the reply must hold exactly one of {', '.join(RECORDED_KINDS)}; "
                            f"it holds {', '.join(kinds) or 'none'}")
    return reply_result(kinds[0], doc[kinds[0]])


def load_replies(path: Path) -> dict[str, Result]:
    """Every reply of a JSON Lines file, by vector id."""
    replies: dict[str, Result] = {}
    lines: dict[str, int] = {}
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ReplyFileError(f"cannot read: {exc.strerror}", where=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            if len(raw) > MAX_LINE_BYTES:
                raise ReplyFileError(f"line longer than {MAX_LINE_BYTES >> 20} MiB", where=where)
            if not raw.strip():
                continue
            try:
                doc = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ReplyFileError(f"not JSON: {exc.msg} at column {exc.colno}",
                                     where=where) from None
            except UnicodeDecodeError:
                raise ReplyFileError("not UTF-8", where=where) from None
            if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
                raise ReplyFileError("expected a reply object with a string \"id\"",
                                     where=where)
            vector_id = doc["id"]
            if vector_id in lines:
                raise ReplyFileError(f"a second reply for {vector_id!r} (the first is line "
                                     f"{lines[vector_id]})", where=where)
            lines[vector_id] = number
            replies[vector_id] = result_of_reply(doc)
    return replies


@dataclass
class ReplayImplementation:
    """An implementation that answers with recorded results (see the module docstring)."""

    name: str
    replies: Mapping[str, Result]
    source: str = "the replies"
    capabilities: frozenset[str] = frozenset({"executes", "validates"})

    def run(self, vector: Vector) -> Result:
        result = self.replies.get(vector.id)
        if result is None:
            return Result.error(f"no reply for this vector in {self.source}")
        return result


class Recorded(Protocol):
    """A replay: an implementation answering from a file, ``replies`` keyed by vector id."""

    name: str
    capabilities: frozenset[str]

    @property
    def replies(self) -> Mapping[str, object]: ...

    def run(self, vector: Vector) -> Result: ...


def _first_line(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    return raw[:MAX_LINE_BYTES]
    except OSError as exc:
        raise ReplyFileError(f"cannot read: {exc.strerror}", where=str(path)) from None
    return b""


def replay_of(path: Path, name: str | None = None,
              capabilities: frozenset[str] | None = None) -> Recorded:
    """The replay of a replies file (``name`` defaults to ``replay:<file name>``).

    A file whose first line is the D3D11 runner's header (``runners/d3d11/runner.c``) holds that
    runner's own output, the buffers it read back: it is judged by
    ``sm5.conformance.d3d11.replay``, which rebuilds each vector's program and views to decode
    them (an executing implementation only). Any other file holds replies in the protocol's
    format."""
    from sm5.conformance.d3d11.replay import is_runner_output, load_replay

    if is_runner_output(_first_line(path)):
        replay = load_replay(path)
        if name:
            replay.name = name
        if capabilities is not None:
            replay.capabilities = frozenset(replay.capabilities & capabilities)
        return replay
    return ReplayImplementation(name or f"replay:{path.name}", load_replies(path), str(path),
                                capabilities if capabilities is not None
                                else frozenset({"executes", "validates"}))
