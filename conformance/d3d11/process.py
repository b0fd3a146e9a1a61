"""One long-lived runner process, fed one record at a time, restarted after a crash or a hang.

The runner prints its header line once it has a device, then one line per record. A reader
thread collects the lines, so a wait has a time-out on every platform: a record that gets no
line in time kills the process (its whole process group under Wine), an end of output means it
crashed, and the next record starts a fresh one.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import tempfile
import threading
from typing import IO, Any

from sm5.conformance.d3d11.host import Host
from sm5.conformance.d3d11.stream import (
    RUNNER_ID,
    Record,
    Reply,
    StreamError,
    parse_header,
    parse_reply,
    stream_header,
)
from sm5.conformance.process_env import subprocess_environ

DEFAULT_TIMEOUT_S = 30.0
STARTUP_TIMEOUT_S = 120.0
_STDERR_SHOWN = 400
_EOF = None


class RunnerFailed(Exception):
    """The runner crashed, hung or printed something else than a reply; ``reason`` says how and
    ``kind`` which: ``crash`` (it died), ``timeout`` (it hung) or ``error`` (a garbled reply)."""

    def __init__(self, reason: str, kind: str = "crash") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(_EOF)


class RunnerProcess:
    """A runner started through ``host``; ``ask`` sends one record and returns its reply."""

    def __init__(self, host: Host, *, timeout: float = DEFAULT_TIMEOUT_S,
                 startup_timeout: float = STARTUP_TIMEOUT_S, args: tuple[str, ...] = ()
                 ) -> None:
        self.host = host
        self.args = args
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.header: dict[str, Any] = {}
        self.starts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: IO[bytes] | None = None

    def ask(self, record: Record, timeout: float | None = None) -> Reply:
        """The reply to ``record``, waited for ``timeout`` seconds (default: the process's)."""
        if self._proc is None:
            self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(record.encode())
            proc.stdin.flush()
        except OSError:
            raise RunnerFailed(self._died()) from None
        line = self._next_line(self.timeout if timeout is None else timeout)
        try:
            reply = parse_reply(line, f"runner reply to {record.vector_id}")
        except StreamError as exc:
            self._stop()
            raise RunnerFailed(f"garbled reply: {exc.message}", "error") from None
        if reply.status == "crash":
            self._stop()  # the runner's exception handler ends the process after this line
        return reply

    def _start(self) -> None:
        launch = self.host.launch(*self.args)
        self.host.linger_wineserver()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the process)
        self._lines = queue.Queue()
        kwargs: dict[str, Any] = {}
        if os.name != "nt":
            kwargs["start_new_session"] = True
        self._proc = subprocess.Popen(list(launch.argv), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr,
                                      env={**subprocess_environ(), **launch.env}, **kwargs)
        self.starts += 1
        assert self._proc.stdout is not None and self._proc.stdin is not None
        threading.Thread(target=_pump, args=(self._proc.stdout, self._lines),
                         daemon=True).start()
        line = self._next_line(self.startup_timeout)
        try:
            self.header = parse_header(line, "runner header")
        except StreamError as exc:
            self._stop()
            raise RunnerFailed(exc.message, "error") from None
        if self.header.get("runner") != RUNNER_ID:
            self._stop()
            raise RunnerFailed(f"{self.host.runner} is {self.header.get('runner')!r}, not "
                               f"{RUNNER_ID!r}: rebuild it with bash runners/d3d11/build.sh "
                               "(or scripts/setup.sh --d3d11)", "error")
        self._proc.stdin.write(stream_header())
        self._proc.stdin.flush()

    def _next_line(self, timeout: float) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self._stop()
            raise RunnerFailed(f"process timed out after {timeout:g} s", "timeout") from None
        if line is _EOF:
            raise RunnerFailed(self._died())
        return line.decode("utf-8", "replace")

    def _died(self) -> str:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        stderr = self._stderr_text()
        self._stop()
        if code is None:
            how = "closed its output"
        elif code < 0:
            how = f"crashed (signal {-code})"
        else:
            how = f"exited with status {code}"
        return f"process {how}" + (f"; stderr: {stderr}" if stderr else "")

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace")
        return " ".join(text.split())[-_STDERR_SHOWN:]

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                if os.name != "nt":
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # end of input: the runner exits by itself
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        self._stop()
