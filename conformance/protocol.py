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
import time
from collections.abc import Mapping, Sequence
from typing import Any

from sm5.conformance.guards import without_guards
from sm5.conformance.interface import Result
from sm5.oracle.errors import Sm5Error
from sm5.oracle.machine.state import state_from_json
from sm5.vectors.format import Vector

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP = 10.0   # extra seconds a fresh child has for its first reply (imports, set-up)
DEFAULT_BREAKER = 5      # consecutive time-outs or crashes after which the run stops
STDERR_LIMIT = 1000      # characters of the child's standard error quoted in a reason
STDERR_KEPT = 64 << 10   # bytes of standard error kept (the tail); the rest is counted, dropped
EXCERPT_LIMIT = 200      # characters of a garbled reply quoted in a reason
MAX_REPLY_BYTES = 64 << 20
POLL_SLICE = 0.1         # seconds between checks that the child is still alive
REPLY_KINDS = ("state", "rejected", "unsupported")


class ImplementationBroken(Sm5Error):
    """The circuit breaker: the implementation timed out or crashed on too many consecutive
    vectors, so the run stops instead of waiting out every remaining one."""


class _Timeout(Exception):
    pass


class _Exited(Exception):
    pass


class _Garbled(Exception):
    """The reply breaks the protocol; the stream is out of step and the child is restarted."""


class StderrTail:
    """The last :data:`STDERR_KEPT` bytes a child wrote on standard error, and how many bytes
    it wrote in all: a child that floods its standard error costs bounded memory, no disk."""

    def __init__(self, keep: int = STDERR_KEPT) -> None:
        self.keep = keep
        self.total = 0
        self._tail = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._tail += chunk
        if len(self._tail) > self.keep:
            del self._tail[:len(self._tail) - self.keep]

    def since(self, mark: int, limit: int = STDERR_LIMIT) -> str:
        """What was written after byte ``mark``: the last ``limit`` characters, with the count
        of what was left out."""
        written = self.total - mark
        if written <= 0:
            return ""
        data = bytes(self._tail[-min(written, len(self._tail)):])
        text = data.decode("utf-8", "replace").strip()
        dropped = written - len(data)
        if len(text) > limit:
            dropped += len(text.encode("utf-8", "replace")) - len(
                text[-limit:].encode("utf-8", "replace"))
            text = text[-limit:]
        if not text:
            return ""
        return f"; stderr ({dropped} earlier bytes dropped): ...{text}" if dropped \
            else f"; stderr: {text}"


def reply_result(kind: str, value: Any) -> Result:
    """The :class:`Result` of one reply's answer (``kind`` is one of :data:`REPLY_KINDS`, or a
    ``crash``/``timeout`` a runner recorded): a malformed state or reason is an error result.
    A state is checked in its vector form; its views' guard words are judged later, against
    the request (:func:`sm5.conformance.guards.guard_diffs`)."""
    if kind == "state":
        if not isinstance(value, dict):
            return Result.error(f"the reply's state must be an object, got "
                                f"{_excerpt(json.dumps(value).encode())}")
        try:
            state_from_json(without_guards(value), where="reply.state")
        except Sm5Error as exc:
            return Result.error(f"the reply's state is malformed: {exc}")
        return Result.of_state(value)
    if not isinstance(value, str):
        return Result.error(f"the reply's {kind} must be a string reason, got "
                            f"{_excerpt(json.dumps(value).encode())}")
    return {"rejected": Result.rejected, "unsupported": Result.unsupported,
            "crash": Result.crash, "timeout": Result.timeout}[kind](value)


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
                 env: Mapping[str, str] | None = None,
                 breaker: int = DEFAULT_BREAKER) -> None:
        if not argv:
            raise Sm5Error("cmd: an empty command line")
        self.argv = tuple(argv)
        self.name = name or "cmd:" + " ".join(self.argv)
        self.capabilities = capabilities
        self.timeout = timeout
        self.startup = startup
        self.env = dict(env) if env is not None else None
        self.breaker = breaker  # 0: never stop the run
        self._failures = 0      # consecutive time-outs and crashes
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr = StderrTail()
        self._buffer = bytearray()
        self.starts = 0  # how many children were started (tests and diagnostics)
        self._previous_id: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        # A session of its own: the child and whatever it forks form one process group, killed
        # together when the child is stopped.
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env, bufsize=0,
                                start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
        self._proc = proc
        self._buffer = bytearray()
        self._previous_id = None
        self.starts += 1
        return proc

    def _stop(self) -> None:
        """Close the child's input, give it a second to exit, then kill its whole group."""
        proc, self._proc = self._proc, None
        self._buffer = bytearray()
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
        _kill_group(proc)
        self._drain_stderr(proc)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _kill(self) -> None:
        if self._proc is not None:
            _kill_group(self._proc)
        self._stop()

    def close(self) -> None:
        self._stop()

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
        mark = self._stderr.total
        deadline = time.monotonic() + allowed
        try:
            self._send(proc, line, deadline)
            reply = self._receive(proc, deadline)
            result = self._interpret(reply, vector.id)
            self._previous_id = vector.id
            self._failures = 0
            return result
        except _Timeout:
            self._kill()
            reason = (f"time-out: no reply within {allowed:g} s (the per-vector limit "
                      f"{self.timeout:g} s" + (f" + {self.startup:g} s to start" if
                                                allowed > self.timeout else "") +
                      f"); the implementation was stopped{self._stderr.since(mark)}")
            broken = Result.timeout(reason)
        except _Exited:
            code = self._reap(proc)
            reason = f"the implementation {code} before answering{self._stderr.since(mark)}"
            broken = Result.crash(reason)
        except _Garbled as exc:
            self._kill()
            self._failures = 0
            return Result.error(f"{exc}{self._stderr.since(mark)}")
        self._failures += 1
        if self.breaker and self._failures >= self.breaker:
            raise ImplementationBroken(
                f"stopped after {self._failures} consecutive time-outs or crashes (the circuit "
                f"breaker; raise it with --max-consecutive-errors); the last, on vector "
                f"{vector.id}: {reason}", where=self.name)
        return broken

    def _send(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        while view:
            self._wait(proc, fd, select.POLLOUT, deadline)
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
            self._wait(proc, fd, select.POLLIN, deadline)
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise _Exited
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise _Garbled(f"the reply exceeds {MAX_REPLY_BYTES >> 20} MiB without a "
                               f"line break (read {len(self._buffer)} bytes, dropped): "
                               f"{_excerpt(bytes(self._buffer[:EXCERPT_LIMIT]))}")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line

    def _interpret(self, line: bytes, vector_id: str) -> Result:
        try:
            doc = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):  # JSONDecodeError included
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
        return reply_result(kind, value)

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

    def _wait(self, proc: subprocess.Popen[bytes], fd: int, event: int,
              deadline: float) -> None:
        """Until ``fd`` is ready for ``event``, draining standard error meanwhile (a child
        blocked on a full stderr pipe never answers). Raises _Timeout at the deadline, and
        _Exited when the child is gone while a process it forked still holds the pipe open (no
        end of file will come)."""
        poller = select.poll()
        poller.register(fd, event)
        err = proc.stderr.fileno() if proc.stderr is not None and not proc.stderr.closed else -1
        if err >= 0:
            poller.register(err, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout
            ready = dict(poller.poll(max(1, int(min(remaining, POLL_SLICE) * 1000))))
            if err in ready and not self._read_stderr(err):
                poller.unregister(err)
                err = -1
            if fd in ready:
                return
            if proc.poll() is not None:
                raise _Exited

    def _read_stderr(self, fd: int) -> bool:
        """Read what is there; False at end of file."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if chunk:
            self._stderr.feed(chunk)
        return bool(chunk)

    def _drain_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        """After the group is dead: what is left in the pipe (bounded by the pipe's size)."""
        if proc.stderr is None or proc.stderr.closed:
            return
        fd = proc.stderr.fileno()
        for _ in range(64):
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self._stderr.feed(chunk)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group (grandchildren included) and reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    proc.wait()


def _excerpt(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= EXCERPT_LIMIT else text[:EXCERPT_LIMIT] + "...")
