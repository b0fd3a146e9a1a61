"""The real D3D11 API as an implementation under test (``--sm5-impl=d3d11``).

Per vector: the oracle's cs_5_0 harness is encoded as DXBC (the program ``sm5 dxbc`` exports)
and sent, with its UAVs as windows inside canary-filled buffers, to the runner
(``runners/d3d11/runner.c``), which calls ``ID3D11Device`` / ``ID3D11DeviceContext``: create the
shader, the buffers and views (raw, structured, typed, NULL), dispatch one thread group, check
the pipeline statistics count the invocation, read everything back. One runner process serves
the whole run. On Windows it runs directly against the GPU's driver (or WARP); elsewhere under
Wine, whose d3d11 translates the DXBC itself (wined3d: GLSL on Mesa llvmpipe, or SPIR-V on
lavapipe with its Vulkan renderer).

Names: ``d3d11`` (Wine's OpenGL renderer, or Windows' hardware device), ``d3d11:vulkan``
(Wine's Vulkan renderer), ``d3d11:dxvk`` (DXVK's d3d11 and dxgi in place of Wine's, on
lavapipe; its version in :attr:`D3D11Runner.version`), ``d3d11:warp`` (Windows only: the WARP
software device).

* **Executes only.** The D3D runtime validates little of a shader's instructions; must-reject
  vectors are not applicable.
* **Windows and canaries.** A changed canary word is an ``error`` naming the words: D3D never
  writes outside a UAV.
* **Isolation.** Wine does not bounds-check groupshared memory: an out-of-bounds ``g#`` access
  can crash or hang the process. Instances the oracle says leave shared memory undefined run in
  a second runner process (the *quarantine*), restarted after each crash or time-out; every
  other vector runs in the main process, which therefore never sees such an access.
* **Time-outs.** No vector of the main process is expected to hang, so when one times out
  (a busy machine, or a stall of the driver that does not come back) it is tried once more in
  a fresh runner process with :data:`RETRY_TIMEOUT_FACTOR` times the limit: only a second
  time-out is its verdict, so the load of the machine does not decide one.
* **Unsupported.** What a compute harness cannot express (helper invocations), a program using
  doubles on a device without double support (Wine 8.0), a UAV slot beyond the feature level,
  a hidden counter starting at 0xffffffff (D3D11's "keep the count" initial count), and under
  Wine a harness copying more than :data:`MAX_TGSM_WORDS` words of ``g#``.
* **Hidden counters.** A structured UAV with a ``counter`` gets D3D's hidden counter, set
  through ``pUAVInitialCounts`` and read back with ``CopyStructureCount``.
"""

from __future__ import annotations

from pathlib import Path

from sm5.conformance.d3d11.host import RENDERERS, Host, HostUnavailable, is_windows
from sm5.conformance.d3d11.process import DEFAULT_TIMEOUT_S, RunnerFailed, RunnerProcess
from sm5.conformance.d3d11.stream import Record, record_or_result, result_of
from sm5.conformance.guards import request_state
from sm5.conformance.interface import Result
from sm5.conformance.isolation import names_shared_memory, voids_shared_memory
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.execution.executor import execute
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector

NAME = "d3d11"
EXPECTATIONS_FILE = Path(__file__).with_name("expectations.yaml")
CAPABILITIES: frozenset[str] = frozenset({"executes"})
#: A quarantined vector may hang (huge g# indices): a shorter wait than the main process's.
ISOLATED_TIMEOUT_S = 20.0
#: A vector of the main process that times out is tried once more in a fresh runner process,
#: with this many times the limit, before the time-out is its verdict (see `run_record`).
RETRY_TIMEOUT_FACTOR = 4.0
#: Shared-memory words the harness copies in and out at most under Wine: it copies g# four words
#: per instruction, so a g# total at the 32 KB limit (8192 words) makes a shader of thousands of
#: instructions that Mesa takes minutes to compile (as for the vkd3d adapter). Such vectors are
#: unsupported under Wine; on Windows, and in a stream for the runner, they run.
MAX_TGSM_WORDS = 2048


def needs_isolation(vector: Vector) -> bool:
    """Does this instance leave shared memory undefined (the driver may then crash)? Instances
    the oracle cannot classify are isolated too."""
    try:
        program = parse_vector_program(tuple(vector.program))
        state = request_state(vector)
    except Sm5Error:
        return True
    model = load_default().model
    if not names_shared_memory(program, state, model):
        return False
    try:
        execution = execute(program, state, target=vector.target, runtime=vector.runtime)
    except Sm5Error:
        return True
    return voids_shared_memory(execution, model)


def implementation_name(renderer: str, warp: bool) -> str:
    if warp:
        return f"{NAME}:warp"
    return NAME if renderer == "gl" else f"{NAME}:{renderer}"


class D3D11Runner:
    """The adapter (see the module docstring). Not thread-safe: one run at a time."""

    capabilities: frozenset[str] = CAPABILITIES

    def __init__(self, host: Host, *, warp: bool = False,
                 timeout: float = DEFAULT_TIMEOUT_S,
                 isolated_timeout: float = ISOLATED_TIMEOUT_S) -> None:
        self.host = host
        self.name = implementation_name(host.renderer, warp)
        #: The version of the D3D11 implementation when the setup recorded one (DXVK's).
        self.version = host.version
        args = ("--warp",) if warp else ()
        self._main = RunnerProcess(host, timeout=timeout, args=args)
        self._quarantine = RunnerProcess(host, timeout=isolated_timeout, args=args)
        self.isolated_runs = 0
        #: Vectors of the main process that timed out and were tried again (see `run_record`).
        self.retried = 0

    @property
    def device(self) -> str:
        """The device the main runner reported (after its first vector)."""
        header = self._main.header or self._quarantine.header
        if not header:
            return self.host.describe()
        return (f"{header.get('adapter', '?')} at feature level "
                f"{header.get('feature_level', '?')} ({self.host.describe()})")

    @property
    def restarts(self) -> int:
        return max(self._main.starts - 1, 0) + max(self._quarantine.starts - 1, 0)

    def run(self, vector: Vector) -> Result:
        record = record_or_result(vector)
        if isinstance(record, Result):
            return record
        tgsm_words = sum(t.words for t in record.harness.layout.tgsm)
        if tgsm_words > MAX_TGSM_WORDS and not is_windows():
            return Result.unsupported(
                f"{tgsm_words} words of g#: the harness copies at most {MAX_TGSM_WORDS} under "
                "Wine (an unrolled copy of more takes minutes to compile on Mesa)")
        return self.run_record(record, isolated=needs_isolation(vector))

    def run_record(self, record: Record, *, isolated: bool) -> Result:
        """The record's result; a time-out in the main process is tried once more in a fresh
        runner process (the one that timed out was killed) with a longer limit, and only a
        second time-out is the verdict, naming both limits."""
        process = self._quarantine if isolated else self._main
        self.isolated_runs += isolated
        try:
            return result_of(record, process.ask(record))
        except RunnerFailed as exc:
            if exc.kind != "timeout" or isolated:
                return Result.failed(exc.kind, exc.reason)
            first = exc
        self.retried += 1
        limit = process.timeout * RETRY_TIMEOUT_FACTOR
        try:
            return result_of(record, process.ask(record, timeout=limit))
        except RunnerFailed as exc:
            if exc.kind != "timeout":
                return Result.failed(exc.kind, exc.reason)
            return Result.timeout(f"{first.reason}, and again after {limit:g} s in a fresh "
                                  "runner process")

    def close(self) -> None:
        self._main.close()
        self._quarantine.close()
        self.host.close()


class TargetUnavailable(Sm5Error):
    """A component of the D3D11 target is missing on this machine."""


def create(variant: str = "") -> D3D11Runner:
    """The adapter for ``d3d11[:variant]``; variant: ``gl`` (default), ``vulkan``, ``dxvk``,
    ``warp``.

    Raises TargetUnavailable naming the missing component (see scripts/setup.sh --d3d11).
    """
    warp = variant == "warp"
    renderer = "gl" if variant in ("", "warp") else variant
    if renderer not in RENDERERS:
        raise TargetUnavailable(f"unknown variant {variant!r}; expected d3d11, d3d11:vulkan, "
                                "d3d11:dxvk or d3d11:warp", where=NAME)
    if warp and not is_windows():
        raise TargetUnavailable("WARP exists only on Windows; under Wine use d3d11 or "
                                "d3d11:vulkan", where=NAME)
    try:
        host = Host(renderer)
    except HostUnavailable as exc:
        raise TargetUnavailable(exc.message, where=exc.where or NAME) from None
    return D3D11Runner(host, warp=warp)
