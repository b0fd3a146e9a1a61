"""Run lavapipe dispatches in child processes, so a crash costs one vector, not the run.

lavapipe does not bounds-check groupshared (TGSM) memory: an out-of-bounds ``g#`` access
writes outside the workgroup's array and can kill the process with SIGSEGV. The adapter runs
such vectors here.

`IsolatedRunner` starts one long-lived *zygote* (``python -m conformance.vkd3d.child``) that
loads the Vulkan bindings, lavapipe and LLVM (it creates and closes one device, which leaves it
single-threaded) and never dispatches. For each dispatch the zygote forks a child, which creates
its own lavapipe device, runs the shader and exits; the zygote reports how the child ended. A
fresh process per dispatch means memory an out-of-bounds access damaged never carries over into
another vector's result, and forking the warm zygote (about 20 ms) costs a tenth of starting
Python and lavapipe afresh. Neither the zygote nor a child writes a core dump when it crashes.

The zygote speaks JSON Lines on stdin/stdout::

    request  {"spirv": base64, "groups": [x, y, z], "robust_buffer_access": bool,
              "timeout": seconds,
              "bindings": [{"binding", "words", "kind", "guard_words", "texel_format", "null"}]}
             (``kind``: one of vulkan_runner.BindingKind, "uniform" for a constant buffer)
    reply    {"outputs": [{"binding", "words", "guard_diff": [[offset, expected, found], ...]}]}
             | {"error": "message"} | {"crashed": signal number} | {"timeout": seconds}

    request  {"batch": [request, ...]}           several dispatches in one child, in order
    reply    {"batch": [reply, ...]}             one reply per dispatch that ran; when the child
                                                 died, the last is how, and the rest never ran

A batch saves a fork and a device per dispatch. Each dispatch keeps its own time-out (it starts
when the previous one replied). When a batch dies, `IsolatedRunner.run_batch` keeps the replies
that came before and sends the dispatch that died again, at the head of a new batch with the
rest, which never ran: first in a fresh child, its reply is as good as a run of its own (a
*quarantine* run: a batch-mate's damage must not become its verdict), and when it dies again
that is its verdict and the rest go on in another child. A dispatch that died first in its
child is not run again. A re-run that survives takes the rest along in its child (a child of
its own and another for the rest would cost one fork and device more).

A crash, a time-out or an unreadable reply raises `ChildFailed` with a one-line reason such as
``process crashed (signal 11)``.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import functools
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from sm5.conformance.vkd3d.vulkan_runner import BufferBinding, RunOutput

DEFAULT_TIMEOUT_S = 60.0
#: Extra time the parent grants the zygote beyond a dispatch's own time-out.
ZYGOTE_MARGIN_S = 30.0
_MODULE = "sm5.conformance.vkd3d.child"
_STDERR_TAIL = 400
_READ_CHUNK = 1 << 16

Reply = dict[str, Any]


class ChildFailed(Exception):
    """The child process crashed, timed out or answered something unreadable (``kind``: the
    conformance result it is: ``crash``, ``timeout`` or ``error``)."""

    def __init__(self, reason: str, kind: str = "error") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


# --------------------------------------------------------------------------- wire format


def encode_request(
    spirv: bytes,
    bindings: Sequence[BufferBinding],
    groups: tuple[int, int, int],
    robust_buffer_access: bool,
    timeout: float,
) -> bytes:
    doc = request_doc(spirv, bindings, groups, robust_buffer_access, timeout)
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


@functools.lru_cache(maxsize=256)
def _base64(spirv: bytes) -> str:
    """A shader as the wire carries it (the dispatches of a batch share a few shaders)."""
    return base64.b64encode(spirv).decode("ascii")


def request_doc(
    spirv: bytes,
    bindings: Sequence[BufferBinding],
    groups: tuple[int, int, int],
    robust_buffer_access: bool,
    timeout: float,
) -> dict[str, Any]:
    """One dispatch request as a JSON object (see the module docstring)."""
    return {
        "spirv": _base64(bytes(spirv)),
        "groups": list(groups),
        "robust_buffer_access": robust_buffer_access,
        "timeout": timeout,
        "bindings": [
            {
                "binding": b.binding,
                "words": list(b.words),
                "kind": b.kind,
                "guard_words": b.guard_words,
                "texel_format": b.texel_format,
                "null": b.null,
            }
            for b in bindings
        ],
    }


def decode_request(doc: Mapping[str, Any]) -> tuple[bytes, list[BufferBinding],
                                                    tuple[int, int, int], bool]:
    groups = tuple(int(g) for g in doc["groups"])
    if len(groups) != 3:
        raise ValueError(f"groups must be three ints, got {doc['groups']!r}")
    bindings = [
        BufferBinding(
            binding=int(b["binding"]),
            words=tuple(int(w) for w in b["words"]),
            kind=b["kind"],
            guard_words=int(b["guard_words"]),
            texel_format=b["texel_format"],
            null=bool(b.get("null", False)),
        )
        for b in doc["bindings"]
    ]
    return (
        base64.b64decode(doc["spirv"]),
        bindings,
        (groups[0], groups[1], groups[2]),
        bool(doc["robust_buffer_access"]),
    )


def _output_to_json(out: RunOutput) -> dict[str, Any]:
    return {
        "binding": out.binding,
        "words": list(out.words),
        "guard_diff": [list(d) for d in out.guard_diff],
    }


def _output_from_json(doc: Mapping[str, Any]) -> RunOutput:
    diff = tuple((int(o), int(e), int(f)) for o, e, f in doc["guard_diff"])
    return RunOutput(
        binding=int(doc["binding"]),
        words=tuple(int(w) for w in doc["words"]),
        guard_intact=not diff,
        guard_diff=diff,
    )


def outputs_of(reply: Mapping[str, Any], expected: Sequence[BufferBinding]) -> list[RunOutput]:
    """The outputs of a zygote reply; raises ChildFailed for any other kind of reply."""
    if "crashed" in reply:
        raise ChildFailed(f"process crashed (signal {reply['crashed']})", "crash")
    if "timeout" in reply:
        raise ChildFailed(f"process timed out after {reply['timeout']:g} s", "timeout")
    if "error" in reply:
        raise ChildFailed(f"child: {reply['error']}")
    try:
        outputs = [_output_from_json(o) for o in reply["outputs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ChildFailed(f"child sent a malformed reply: {exc!r}") from None
    if [o.binding for o in outputs] != [b.binding for b in expected] or any(
        len(o.words) != len(b.words) for o, b in zip(outputs, expected, strict=True)
    ):
        raise ChildFailed("child sent a malformed reply: outputs do not match the bindings")
    return outputs


# --------------------------------------------------------------------------- parent side


@dataclass(frozen=True)
class Job:
    """One dispatch of a batch; ``timeout`` None: the runner's own limit."""

    spirv: bytes
    bindings: tuple[BufferBinding, ...]
    groups: tuple[int, int, int] = (1, 1, 1)
    timeout: float | None = None


def _child_environment() -> dict[str, str]:
    """The parent's environment, with this checkout first on the module path."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = root if not path else os.pathsep.join([root, path])
    return env


class IsolatedRunner:
    """Like ``VulkanRunner.run``, each dispatch in a fresh child process (see module doc).

    The zygote starts on first use and again after it died; `close` ends it.
    """

    def __init__(
        self, *, robust_buffer_access: bool = True, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.robust_buffer_access = robust_buffer_access
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._pending = b""
        self._docs: dict[int, tuple[Job, dict[str, Any]]] = {}
        #: Dispatches run again after their batch died (for tests and benchmarks).
        self.quarantined = 0
        #: Children forked for batches, and how many of them crashed or timed out.
        self.children = 0
        self.deaths = 0
        self._cancelled = False

    def run(
        self,
        spirv: bytes,
        bindings: Sequence[BufferBinding],
        groups: tuple[int, int, int] = (1, 1, 1),
        timeout: float | None = None,
    ) -> list[RunOutput]:
        """One dispatch in a forked child; ``timeout`` overrides the runner's own limit."""
        limit = self.timeout if timeout is None else timeout
        request = encode_request(bytes(spirv), bindings, groups, self.robust_buffer_access, limit)
        return outputs_of(self._exchange(request, limit), bindings)

    def _exchange(self, request: bytes, limit: float) -> dict[str, Any]:
        """Send one request line to the zygote, read its reply line as a JSON object; a dead
        or silent child, or a malformed reply, is a ChildFailed."""
        proc = self._zygote()
        assert proc.stdin is not None
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
            line = self._read_line(proc, time.monotonic() + limit + ZYGOTE_MARGIN_S)
        except (OSError, ChildFailed) as exc:
            reason = exc.reason if isinstance(exc, ChildFailed) else str(exc)
            raise ChildFailed(self._abandon(reason)) from None
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ChildFailed(f"child sent a malformed reply: {exc}") from None
        if not isinstance(reply, dict):
            raise ChildFailed("child sent a malformed reply: not an object")
        return reply

    def run_batch(self, jobs: Sequence[Job]) -> list[list[RunOutput] | ChildFailed]:
        """Several dispatches, as few children as crashes allow (see the module docstring):
        per job its outputs or the ChildFailed it ended with, in order."""
        results: list[list[RunOutput] | ChildFailed] = []
        self._docs.clear()  # each job is encoded once, however many batches it is sent in
        while len(results) < len(jobs):
            rest = jobs[len(results):]
            self.children += 1
            try:
                replies = self._request_batch(rest)
            except ChildFailed as exc:
                replies = [{"error": f"the isolation process failed ({exc.reason})"}]
            if not replies:
                replies = [{"error": "the isolation process answered no dispatch"}]
            for position, (reply, job) in enumerate(zip(replies, rest, strict=False)):
                try:
                    results.append(outputs_of(reply, job.bindings))
                except ChildFailed as exc:
                    if exc.kind in ("crash", "timeout"):
                        self.deaths += 1
                    if position == 0:  # first in a fresh child: as good as a run of its own
                        results.append(exc)
                    else:  # it leads the next batch: first in a fresh child (quarantine)
                        self.quarantined += 1
                    break
        self._docs.clear()
        return results

    def _doc(self, job: Job) -> dict[str, Any]:
        found = self._docs.get(id(job))
        if found is None or found[0] is not job:
            limit = self.timeout if job.timeout is None else job.timeout
            found = self._docs[id(job)] = (job, request_doc(
                job.spirv, job.bindings, job.groups, self.robust_buffer_access, limit))
        return found[1]

    def _request_batch(self, jobs: Sequence[Job]) -> list[Reply]:
        requests = [self._doc(j) for j in jobs]
        limit = sum(r["timeout"] for r in requests)
        reply = self._exchange(
            json.dumps({"batch": requests}, separators=(",", ":")).encode() + b"\n", limit)
        replies = reply.get("batch")
        if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
            raise ChildFailed("child sent a malformed reply: the batch is not a list of objects")
        return replies

    def close(self) -> None:
        self._stop()

    def cancel(self) -> None:
        """Stop at once, from any thread: the zygote and the child it runs are killed (they are
        a process group of their own), a request waiting for them fails, and no zygote starts
        again. For a run that is being interrupted; `close` still tidies up afterwards."""
        self._cancelled = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)

    def cpu_seconds(self) -> float:
        """CPU time of the running zygote and the children it reaped (0 when none runs; a
        zygote that ended counts in this process's own children times)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return 0.0
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def __enter__(self) -> IsolatedRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ----------------------------------------------------------------- zygote

    def _zygote(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._cancelled:
            raise ChildFailed("the isolation process was stopped (the run is ending)")
        self._stop()
        # Lives as long as the zygote (a file, not a pipe: the zygote never blocks on it).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(
            [sys.executable, "-m", _MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=_child_environment(),
            start_new_session=True,  # `cancel` ends the zygote with the child it runs
        )
        self._pending = b""
        return self._proc

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildFailed("no reply in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                raise ChildFailed("it exited")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def _abandon(self, reason: str) -> str:
        """End a zygote that failed; the failure with the end of its stderr."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        self._stop_process()
        tail = self._stderr_tail()
        self._stop()
        return f"the isolation process failed ({reason})" + (f": {tail}" if tail else "")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return " ".join(text[-_STDERR_TAIL:].split())

    def _stop(self) -> None:
        self._stop_process()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stop_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()  # the zygote ends at end of input
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def run_isolated(
    spirv: bytes,
    bindings: Sequence[BufferBinding],
    *,
    groups: tuple[int, int, int] = (1, 1, 1),
    robust_buffer_access: bool = True,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> list[RunOutput]:
    """One dispatch in a child process (a zygote of its own); raises ChildFailed."""
    with IsolatedRunner(robust_buffer_access=robust_buffer_access, timeout=timeout) as runner:
        return runner.run(spirv, bindings, groups)


# --------------------------------------------------------------------------- zygote side


Work = Callable[[], tuple[Reply, Callable[[], None] | None]]
"""A child's job: its reply, and what to do after the reply is out (or None)."""
BatchWork = Callable[[Callable[[Reply], None]], Callable[[], None] | None]
"""A child's jobs: emits one reply per job; returns what to do after the last (or None)."""

#: How long a child may take to tear down after its reply before it is killed.
REAP_TIMEOUT_S = 30.0


class Zygote:
    """Forks one child per job (from a single-threaded process) and reports how it went.

    The reply goes back as soon as the child has written it; the child then tears its
    device down (which also flushes Mesa's shader cache to disk) while the caller carries
    on, and is reaped before the next fork. A crash after a complete reply is not reported:
    the dispatch's results were already read back.
    """

    def __init__(self) -> None:
        self._pending: int | None = None

    def serve(self, work: Work, timeout: float) -> Reply:
        self.reap()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(read_end)
                reply, after = work()
                with os.fdopen(write_end, "wb") as out:
                    out.write(json.dumps(reply, separators=(",", ":")).encode())
                if after is not None:
                    after()
            finally:
                os._exit(0)
        os.close(write_end)
        data, timed_out = _read_until_eof(read_end, time.monotonic() + timeout)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"timeout": timeout}
        complete = _parse_reply(data)
        if complete is not None:
            self._pending = pid
            return complete
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return {"crashed": os.WTERMSIG(status)}
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return {"error": f"the child exited with status {code} without a reply"}

    def serve_batch(self, work: BatchWork, timeouts: Sequence[float]) -> list[Reply]:
        """Like `serve` for ``len(timeouts)`` jobs in one child: ``work`` emits one reply per
        job; each job has its time-out from the previous reply. The replies that came, and
        how the child ended when that was before the last one."""
        self.reap()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(read_end)
                with os.fdopen(write_end, "wb") as out:
                    def emit(reply: Reply) -> None:
                        out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
                        out.flush()
                    after = work(emit)
                if after is not None:
                    after()
            finally:
                os._exit(0)
        os.close(write_end)
        replies: list[Reply] = []
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            pending = b""
            while len(replies) < len(timeouts):
                line, pending, timed_out = _read_line_until(
                    pipe, pending, time.monotonic() + timeouts[len(replies)])
                if timed_out:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return [*replies, {"timeout": timeouts[len(replies)]}]
                reply = _parse_reply(line) if line is not None else None
                if reply is None:
                    break
                replies.append(reply)
        if len(replies) == len(timeouts):
            self._pending = pid
            return replies
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return [*replies, {"crashed": os.WTERMSIG(status)}]
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return [*replies, {"error": f"the child exited with status {code} without a reply"}]

    def reap(self) -> None:
        """Wait for the previous child to finish tearing down (kill it if it hangs)."""
        pid, self._pending = self._pending, None
        if pid is None:
            return
        deadline = time.monotonic() + REAP_TIMEOUT_S
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.001)


def _parse_reply(data: bytes) -> Reply | None:
    try:
        reply = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return reply if isinstance(reply, dict) else None


def fork_and_serve(work: Work, timeout: float) -> Reply:
    """One job in a forked child, the child reaped before returning (see `Zygote`)."""
    zygote = Zygote()
    try:
        return zygote.serve(work, timeout)
    finally:
        zygote.reap()


def _read_line_until(pipe: IO[bytes], pending: bytes, deadline: float
                     ) -> tuple[bytes | None, bytes, bool]:
    """(the next line or None at end of input, what is left after it, timed out)."""
    while b"\n" not in pending:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, pending, True
        ready, _, _ = select.select([pipe], [], [], left)
        if not ready:
            continue
        chunk = pipe.read(_READ_CHUNK)
        if not chunk:
            return None, pending, False
        pending += chunk
    line, _, rest = pending.partition(b"\n")
    return line, rest, False


def _read_until_eof(fd: int, deadline: float) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(chunks), True
            ready, _, _ = select.select([pipe], [], [], left)
            if not ready:
                continue
            chunk = pipe.read(_READ_CHUNK)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)


def _serve(doc: Mapping[str, Any], instance: Any) -> tuple[Reply, Callable[[], None] | None]:
    """The child's job: one dispatch on a device of its own (on the zygote's instance)."""
    from sm5.conformance.vkd3d.vulkan_runner import VulkanRunner

    try:
        spirv, bindings, groups, robust = decode_request(doc)
    except (KeyError, TypeError, ValueError) as exc:
        return {"error": f"malformed request: {exc!r}"}, None
    try:
        runner = VulkanRunner(robust_buffer_access=robust, instance=instance)
    except Exception as exc:  # the reply carries any failure as text to the parent
        return {"error": f"{type(exc).__name__}: {exc}"}, None
    try:
        outputs = runner.run(spirv, bindings, groups=groups)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}, runner.close
    return {"outputs": [_output_to_json(o) for o in outputs]}, runner.close


def _serve_batch(docs: Sequence[Mapping[str, Any]], instance: Any,
                 emit: Callable[[Reply], None]) -> Callable[[], None] | None:
    """The child's jobs: the dispatches in order on one device of its own; a dispatch that
    fails ends the batch (its reply says why; the parent sends the rest again)."""
    from sm5.conformance.vkd3d.vulkan_runner import VulkanRunner

    runner: VulkanRunner | None = None
    for doc in docs:
        try:
            spirv, bindings, groups, robust = decode_request(doc)
        except (KeyError, TypeError, ValueError) as exc:
            emit({"error": f"malformed request: {exc!r}"})
            break
        try:
            if runner is None:
                runner = VulkanRunner(robust_buffer_access=robust, instance=instance)
            elif runner.robust_buffer_access != robust:
                raise ValueError("a batch shares one robust_buffer_access setting")
            outputs = runner.run(spirv, bindings, groups=groups)
        except Exception as exc:  # the reply carries any failure as text to the parent
            emit({"error": f"{type(exc).__name__}: {exc}"})
            break
        emit({"outputs": [_output_to_json(o) for o in outputs]})
    return runner.close if runner is not None else None


def _preload() -> Any:
    """Load the Vulkan bindings, lavapipe and LLVM once, before any fork; the shared instance.

    Creating and closing one device, then creating an instance, leaves the process
    single-threaded (lavapipe starts its threads per device) with the expensive one-time
    initialisation done, so a forked child only opens its own device. Failures are left for
    the children to report (they then create everything themselves).
    """
    try:
        from sm5.conformance.vkd3d.vulkan_runner import VulkanRunner, create_instance

        VulkanRunner().close()
        instance = create_instance()
    except Exception as exc:
        print(f"sm5 vkd3d zygote: preloading lavapipe failed: {exc}", file=sys.stderr)
        return None
    threads = _thread_count()
    if threads > 1:
        print(f"sm5 vkd3d zygote: {threads} threads after preloading; forked children may "
              "hang (the time-out ends them)", file=sys.stderr)
    return instance


_PR_SET_DUMPABLE = 4


def _no_core_dumps() -> None:
    """No child of this zygote leaves a core dump: a crash is an expected verdict here,
    hundreds a run, and a core of a process with LLVM loaded is hundreds of megabytes. Both
    the core size limit and the dumpable flag (a ``core_pattern`` that pipes cores to a
    handler such as systemd-coredump ignores the limit); forked children inherit both."""
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def main() -> int:
    """Zygote entry: one JSON request per stdin line, one reply per stdout line."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the loader or Mesa print must not corrupt the replies
    _no_core_dumps()
    instance = _preload()
    zygote = Zygote()
    for line in sys.stdin.buffer:
        try:
            doc = json.loads(line)
            if "batch" in doc:
                docs = list(doc["batch"])
                timeouts = [float(d["timeout"]) for d in docs]
            else:
                timeout = float(doc["timeout"])
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
            reply: Reply = {"error": f"malformed request: {exc!r}"}
        else:
            if "batch" in doc:
                reply = {"batch": zygote.serve_batch(
                    functools.partial(_serve_batch, docs, instance), timeouts)}
            else:
                reply = zygote.serve(functools.partial(_serve, doc, instance), timeout)
        replies.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        replies.flush()
    zygote.reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
