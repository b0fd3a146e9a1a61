"""The JSON Lines subprocess protocol: an implementation in any language, as a child process.

One long-lived child per run. For each vector the client writes one request line on the child's
standard input and reads one reply line from its standard output::

    request  {"id": ..., "program": [asm lines], "target": "cs_5_0", "runtime": "11.0",
              "state": {...}}
    reply    {"id": ..., "state": {...}}          executed: the final state
             {"id": ..., "rejected": "reason"}    an illegal instance (name the rule id)
             {"id": ..., "unsupported": "reason"} not implemented: not a failure

Anything else is a failure of that vector with a clear reason, and the run goes on: the child
exits or crashes (its standard error is quoted, truncated), no reply comes within the per-vector
time-out, the reply is not a JSON object, answers another id, or carries a malformed state. After
a crash, a time-out or a garbled reply the child is stopped and a fresh one started for the next
vector (the stream can no longer be trusted). A fresh child gets ``startup`` extra seconds for
its first reply.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from sm5.conformance.interface import Result
from sm5.oracle.errors import Sm5Error
from sm5.oracle.state import state_from_json
from sm5.vectors.format import Vector

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP = 10.0   # extra seconds a fresh child has for its first reply (imports, set-up)
STDERR_LIMIT = 1000      # characters of the child's standard error quoted in a reason
EXCERPT_LIMIT = 200      # characters of a garbled reply quoted in a reason
MAX_REPLY_BYTES = 64 << 20
REPLY_KINDS = ("state", "rejected", "unsupported")


class _Timeout(Exception):
    pass


class _Exited(Exception):
    pass


class _Garbled(Exception):
    """The reply breaks the protocol; the stream is out of step and the child is restarted."""


def request_of(vector: Vector) -> dict[str, Any]:
    """The request for one vector: never its expectations."""
    return {"id": vector.id, "program": list(vector.program), "target": vector.target,
            "runtime": vector.runtime, "state": vector.state}


def request_line(vector: Vector) -> bytes:
    """The exact bytes sent for one vector: its request as one JSON line."""
    return (json.dumps(request_of(vector), separators=(",", ":")) + "\n").encode("utf-8")


class SubprocessImplementation:
    """An implementation speaking JSON Lines on a child process's standard input and output."""

    def __init__(self, argv: Sequence[str], *, name: str | None = None,
                 capabilities: frozenset[str] = frozenset({"executes", "validates"}),
                 timeout: float = DEFAULT_TIMEOUT, startup: float = DEFAULT_STARTUP,
                 env: Mapping[str, str] | None = None) -> None:
        if not argv:
            raise Sm5Error("cmd: an empty command line")
        self.argv = tuple(argv)
        self.name = name or "cmd:" + " ".join(self.argv)
        self.capabilities = capabilities
        self.timeout = timeout
        self.startup = startup
        self.env = dict(env) if env is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._buffer = bytearray()
        self.starts = 0  # how many children were started (tests and diagnostics)
        self._previous_id: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        if self._stderr is None:
            # Append mode: the child's writes land at the end whatever offset we read from.
            self._stderr = tempfile.TemporaryFile(mode="a+b")  # noqa: SIM115 - lives as long as self
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self._stderr, env=self.env, bufsize=0)
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        self._proc = proc
        self._buffer = bytearray()
        self._previous_id = None
        self.starts += 1
        return proc

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        self._buffer = bytearray()
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if proc.poll() is None:
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._stop()

    def close(self) -> None:
        self._stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- one vector ----------------------------------------------------------------------------

    def run(self, vector: Vector) -> Result:
        line = request_line(vector)
        allowed = self.timeout
        try:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                proc = self._start()
                allowed += self.startup
        except OSError as exc:
            return Result.error(f"cannot start {self.argv[0]}: {exc.strerror or exc}")
        mark = self._stderr_size()
        deadline = time.monotonic() + allowed
        try:
            self._send(proc, line, deadline)
            reply = self._receive(proc, deadline)
            result = self._interpret(reply, vector.id)
            self._previous_id = vector.id
            return result
        except _Timeout:
            self._kill()
            return Result.timeout(f"no reply within the time-out of {allowed:g} s; the "
                                f"implementation was stopped{self._stderr_since(mark)}")
        except _Exited:
            code = self._reap(proc)
            return Result.crash(f"the implementation {code} before answering"
                                f"{self._stderr_since(mark)}")
        except _Garbled as exc:
            self._kill()
            return Result.error(f"{exc}{self._stderr_since(mark)}")

    def _send(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not _ready(fd, select.POLLOUT, remaining):
                raise _Timeout
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise _Exited from None
            view = view[written:]

    def _receive(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        start = 0
        while (end := self._buffer.find(b"\n", start)) < 0:
            start = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not _ready(fd, select.POLLIN, remaining):
                raise _Timeout
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise _Exited
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _Garbled(f"the reply exceeds {MAX_REPLY_BYTES >> 20} MiB without a "
                               "line break")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line

    def _interpret(self, line: bytes, vector_id: str) -> Result:
        try:
            doc = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Garbled(f"the reply is not JSON: {_excerpt(line)}") from None
        if not isinstance(doc, dict):
            raise _Garbled(f"the reply is not a JSON object: {_excerpt(line)}")
        if doc.get("id") != vector_id:
            if doc.get("id") == self._previous_id:
                raise _Garbled(f"the reply answers the previous request {self._previous_id!r}, "
                               f"not {vector_id!r}: it wrote more than one line for that one")
            raise _Garbled(f"the reply answers id {doc.get('id')!r}, not {vector_id!r}")
        kinds = [k for k in REPLY_KINDS if k in doc]
        if len(kinds) != 1:
            raise _Garbled(f"the reply must hold exactly one of {', '.join(REPLY_KINDS)}; "
                           f"it holds {', '.join(kinds) or 'none'}")
        kind = kinds[0]
        value = doc[kind]
        if kind == "state":
            try:
                state_from_json(value, where="reply.state")
            except Sm5Error as exc:
                return Result.error(f"the reply's state is malformed: {exc}")
            return Result.of_state(value)
        if not isinstance(value, str):
            return Result.error(f"the reply's {kind} must be a string reason, got "
                                f"{_excerpt(json.dumps(value).encode())}")
        return Result.rejected(value) if kind == "rejected" else Result.unsupported(value)

    # -- diagnostics ---------------------------------------------------------------------------

    def _reap(self, proc: subprocess.Popen[bytes]) -> str:
        try:
            code = proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self._kill()
            return "closed its standard output"
        self._stop()
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def _stderr_size(self) -> int:
        if self._stderr is None:
            return 0
        return os.fstat(self._stderr.fileno()).st_size

    def _stderr_since(self, mark: int) -> str:
        if self._stderr is None:
            return ""
        size = self._stderr_size()
        if size <= mark:
            return ""
        self._stderr.seek(max(mark, size - 4 * STDERR_LIMIT))
        text = self._stderr.read(size - mark).decode("utf-8", "replace").strip()
        if len(text) > STDERR_LIMIT:
            text = "..." + text[-STDERR_LIMIT:]
        return f"; stderr: {text}" if text else ""


def _ready(fd: int, event: int, timeout: float) -> bool:
    """Wait until ``fd`` is ready for ``event`` (or hung up / in error) or ``timeout`` passes."""
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(0 if timeout <= 0 else max(1, int(timeout * 1000))))


def _excerpt(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= EXCERPT_LIMIT else text[:EXCERPT_LIMIT] + "...")
