"""Batched runs of the vkd3d adapter: isolated dispatches share a child process, a batch that
dies costs only the dispatch that died (run again first in a fresh child, in quarantine), and
batched verdicts equal one-by-one verdicts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from process_group import sm5_group

from sm5.conformance.compare import verdict_without_running
from sm5.conformance.expectations import load_expectations
from sm5.conformance.guards import without_guards
from sm5.conformance.run import iter_selected, run_vector, run_vectors, vector_files
from sm5.conformance.vkd3d.adapter import (
    CAPABILITIES,
    EXPECTATIONS_FILE,
    ISOLATED_BATCH,
    MAX_COMPILED,
    MAX_PIPELINES,
    IsolatedItem,
    TargetUnavailable,
    Vkd3dLavapipe,
    create,
    dispatch_key,
    isolation_units,
    work_units,
)
from sm5.conformance.vkd3d.child import ChildFailed, IsolatedRunner, Job, Reply
from sm5.conformance.vkd3d.vulkan_runner import BufferBinding, RunOutput
from sm5.oracle.asm import parse_program, parse_vector_program
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import build_harness
from sm5.oracle.errors import Sm5Error
from sm5.oracle.machine.state import state_from_json

BATCH_SCRIPT = """
import json, os, signal, sys, time
from sm5.conformance.vkd3d.child import Zygote
def work(emit):
    for step in sys.argv[1].split(","):
        if step == "ok":
            emit({"outputs": [], "pid": os.getpid()})
        elif step == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif step == "sleep":
            time.sleep(30)
    return None
zygote = Zygote()
print(json.dumps(zygote.serve_batch(work, [float(sys.argv[2])] * int(sys.argv[3]))))
zygote.reap()
"""


def _serve_batch(steps: str, timeout: float, jobs: int) -> list[dict[str, Any]]:
    """Zygote.serve_batch in a fresh single-threaded interpreter, as the zygote calls it."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", BATCH_SCRIPT, steps, str(timeout), str(jobs)],
                          capture_output=True, text=True, timeout=60, cwd=root, check=True)
    replies: list[dict[str, Any]] = json.loads(proc.stdout)
    return replies


def test_a_batch_runs_in_one_child() -> None:
    replies = _serve_batch("ok,ok,ok", 30, 3)
    assert [r["outputs"] for r in replies] == [[], [], []]
    assert len({r["pid"] for r in replies}) == 1


def test_a_batch_that_crashes_keeps_the_replies_before() -> None:
    replies = _serve_batch("ok,ok,crash,ok", 30, 4)
    assert [r.get("outputs") for r in replies[:2]] == [[], []]
    assert replies[2:] == [{"crashed": 11}]


def test_each_dispatch_of_a_batch_has_its_own_time_out() -> None:
    replies = _serve_batch("ok,sleep,ok", 0.5, 3)
    assert replies[1:] == [{"timeout": 0.5}]


def test_a_batch_that_ends_early_says_so() -> None:
    replies = _serve_batch("ok", 30, 2)
    assert replies[1:] == [{"error": "the child exited with status 0 without a reply"}]


# --------------------------------------------------------------------------- quarantine


BINDING = BufferBinding(0, (1,))
OK: Reply = {"outputs": [{"binding": 0, "words": [7], "guard_diff": []}]}
OUT = [RunOutput(0, (7,), True, ())]


class _ScriptedRunner(IsolatedRunner):
    """An IsolatedRunner whose child answers from a script (no process): each batch request
    takes the next list of replies; a dispatch run alone takes the next single reply."""

    def __init__(self, batches: list[list[Reply]], alone: list[Reply]) -> None:
        super().__init__()
        self.batches, self.alone = batches, alone
        self.requests: list[list[bytes]] = []
        self.singles: list[bytes] = []

    def _request_batch(self, jobs: Sequence[Job]) -> list[Reply]:
        self.requests.append([j.spirv for j in jobs])
        return self.batches.pop(0)

    def run(self, spirv: bytes, bindings: Sequence[BufferBinding],
            groups: tuple[int, int, int] = (1, 1, 1), timeout: float | None = None
            ) -> list[RunOutput]:
        from sm5.conformance.vkd3d.child import outputs_of

        self.singles.append(spirv)
        return outputs_of(self.alone.pop(0), bindings)


def _jobs(*names: str) -> list[Job]:
    return [Job(n.encode(), (BINDING,)) for n in names]


def test_the_dispatch_a_batch_died_in_leads_the_next_batch() -> None:
    runner = _ScriptedRunner([[OK, {"crashed": 11}], [OK, OK, OK]], alone=[])
    results = runner.run_batch(_jobs("a", "b", "c", "d"))
    assert results == [OUT, OUT, OUT, OUT]  # b survives first in a fresh child: not b's damage
    assert runner.requests == [[b"a", b"b", b"c", b"d"], [b"b", b"c", b"d"]]
    assert runner.singles == [] and runner.quarantined == 1


def test_a_crash_first_in_a_child_is_the_verdict() -> None:
    runner = _ScriptedRunner([[OK, {"crashed": 11}], [{"crashed": 11}], [{"crashed": 6}], [OK]],
                             alone=[])
    results = runner.run_batch(_jobs("a", "b", "c", "d"))
    assert results[0] == OUT and results[3] == OUT
    b, c = results[1], results[2]
    assert isinstance(b, ChildFailed) and b.kind == "crash" and "signal 11" in b.reason
    # c died first in a fresh child: as good as a run of its own, not re-run
    assert isinstance(c, ChildFailed) and "signal 6" in c.reason
    assert runner.quarantined == 1
    assert (runner.children, runner.deaths) == (4, 3)
    assert runner.requests == [[b"a", b"b", b"c", b"d"], [b"b", b"c", b"d"], [b"c", b"d"],
                               [b"d"]]


# --------------------------------------------------------------------------- real runs


@pytest.fixture(scope="module")
def adapter() -> Iterator[Vkd3dLavapipe]:
    try:
        impl = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    try:
        yield impl
    finally:
        impl.close()


def _item(index: int, shader: bytes) -> IsolatedItem:
    return IsolatedItem(index, None, Job(shader, ()), "")  # type: ignore[arg-type]


def test_isolated_dispatches_are_packed_by_shader_into_units_of_work() -> None:
    """A shader's dispatches stay together and in their order (a child compiles the shader
    once), shaders are packed up to the unit size, a shader with more spans several units,
    the largest units come first; the same batch, the same units."""
    shaders = [b"a", b"b", b"a", b"c", b"a", b"b", b"d", b"e", b"e", b"e", b"e", b"e"]
    items = [_item(i, s) for i, s in enumerate(shaders)]
    units = work_units(items, 4)
    assert [[i.index for i in unit] for unit in units] == [
        [1, 5, 3, 6], [7, 8, 9, 10], [0, 2, 4], [11]]
    assert work_units(items, 4) == units
    assert [[i.index for i in unit] for unit in work_units(items, 32)] == [
        [0, 2, 4, 1, 5, 3, 6, 7, 8, 9, 10, 11]]
    assert work_units([], 4) == []


def test_a_dispatch_that_died_last_time_is_a_unit_of_its_own() -> None:
    """A dispatch remembered as having killed a fresh child runs alone (one child, its death
    its verdict); the others are packed as `work_units` packs them; nothing is dropped or
    run twice, and the same memory gives the same units."""
    shaders = [b"a", b"b", b"a", b"c", b"a", b"b", b"d", b"e", b"e", b"e", b"e", b"e"]
    items = [IsolatedItem(i, None, Job(s, (BufferBinding(0, (i,)),)), "")  # type: ignore[arg-type]
             for i, s in enumerate(shaders)]
    died = {dispatch_key(items[i].job): None for i in (2, 7)}
    units = isolation_units(items, died, processes=2)
    # the other 10 in 2 * 4 - 2 = 6 units wanted: 2 dispatches a unit, by shader
    assert [[i.index for i in unit] for unit in units] == [
        [0, 4], [1, 5], [3, 6], [8, 9], [10, 11], [2], [7]]
    assert sorted(i.index for unit in units for i in unit) == list(range(len(items)))
    assert isolation_units(items, died, processes=2) == units
    # nothing remembered: the units work_units gives, small enough for 4 a process
    assert isolation_units(items, {}, processes=2) == work_units(items, 2)
    many = [_item(i, bytes([i % 7])) for i in range(300)]
    assert max(len(u) for u in isolation_units(many, {}, processes=1)) == ISOLATED_BATCH


def test_a_second_pass_runs_each_death_in_a_child_of_its_own() -> None:
    """The second pass over isolated vectors that crash lavapipe judges every vector as the
    first did, with fewer children: a vector that died first in a fresh child runs alone
    again, so no death has to be told from a batch-mate's damage in a second child. Lavapipe's
    crashes on these atomics are not deterministic: a vector may crash in one pass only, and
    that is the only difference allowed."""
    try:
        impl = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    expectations = load_expectations(EXPECTATIONS_FILE)
    vectors = [v for _, _, v in iter_selected(vector_files(None), select=["imm_atomic_cmp_exch/*"])
               if verdict_without_running(v, expectations, impl.capabilities) is None]
    passes = []
    try:
        for _ in range(2):
            quarantined, (children, deaths) = impl.quarantined, impl.isolation_children
            statuses = {v.id: (verdict.status, verdict.reason)
                        for v, verdict in run_vectors(impl, vectors, expectations)}
            passes.append((statuses, impl.quarantined - quarantined,
                           impl.isolation_children[0] - children,
                           impl.isolation_children[1] - deaths))
    finally:
        impl.close()
    (first, quarantined1, children1, deaths1), (second, quarantined2, children2, deaths2) = passes
    assert quarantined1 > 0 and deaths1 > 0, "the slice holds no batch that died"
    assert second.keys() == first.keys()
    differing = {k: (first[k], second[k]) for k in first if first[k][0] != second[k][0]}
    assert all(_crashed(*a) or _crashed(*b) for a, b in differing.values()), differing
    assert len(differing) <= len(first) // 20, differing
    assert quarantined2 < quarantined1 and deaths2 < deaths1 and children2 < children1


def _crashed(status: str, reason: str) -> bool:
    """A crash verdict, or a crash an expectations entry turned into ``xfail``."""
    return status == "crash" or (status == "xfail" and "; crash: " in reason)


@pytest.mark.slow  # long tier (docs/testing.md)
def test_the_caches_hold_what_a_pass_over_the_golden_set_translates() -> None:
    """The adapter's translations and lavapipe pipelines are least recently used caches and a
    run walks its vectors in the same order each pass: bounds below the golden set's distinct
    harness programs (a shader each at the most) would make every vector of a second pass
    translate and compile again."""
    expectations = load_expectations(EXPECTATIONS_FILE)
    programs = set()
    for _, _, vector in iter_selected(vector_files(None)):
        if verdict_without_running(vector, expectations, CAPABILITIES) is not None:
            continue
        try:
            program = parse_vector_program(tuple(vector.program))
            harness = build_harness(program, state_from_json(without_guards(vector.state)),
                                    runtime=vector.runtime)
        except Sm5Error:
            continue
        programs.add(harness.program)
    assert 1000 < len(programs) <= min(MAX_COMPILED, MAX_PIPELINES)


def test_real_batch_equals_single_runs(adapter: Vkd3dLavapipe) -> None:
    program = parse_program(["dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, l(4), l(5)"])
    harness = build_harness(program, state_from_json({"r1": [9, 9, 9, 9],
                                                      "u0": {"kind": "raw", "data": [1, 2]}}))
    spirv = adapter.translator.dxbc_to_spirv(program_to_dxbc(harness.program))
    jobs = [Job(spirv, (BufferBinding(0, (1, k)), BufferBinding(1, harness.state_words)))
            for k in range(3)]
    with IsolatedRunner() as runner:
        batch = runner.run_batch(jobs)
        singles = [runner.run(j.spirv, j.bindings) for j in jobs]
    assert batch == singles
    assert [out[0].words for out in singles if not isinstance(out, ChildFailed)] == [
        (1, 5), (1, 6), (1, 7)]


def test_batched_verdicts_equal_one_by_one_verdicts(adapter: Vkd3dLavapipe) -> None:
    """Over a slice of the golden set holding isolated vectors (out-of-bounds g#), the engine's
    batched run judges every vector as running them one at a time does."""
    expectations = load_expectations(EXPECTATIONS_FILE)
    vectors = [v for _, _, v in iter_selected(vector_files(None), select=["imm_atomic_cmp_exch/*"])
               if verdict_without_running(v, expectations, adapter.capabilities) is None][:400]
    before = adapter.isolated_runs
    single = {v.id: run_vector(adapter, v, expectations).status for v in vectors}
    isolated = adapter.isolated_runs - before
    assert isolated > 0, "the slice holds no isolated vector"
    batched = {v.id: verdict.status for v, verdict in run_vectors(adapter, vectors, expectations)}
    assert batched == single


def _processes_marked(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (the run's, and anything it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_leaves_no_isolation_process(adapter: Vkd3dLavapipe, tmp_path: Path,
                                                        signum: int) -> None:
    """SIGTERM or Ctrl-C while isolation processes are busy: the run ends within seconds with
    its own exit code, and neither a zygote nor a child it forked is left running."""
    marker = f"SM5_TEST_RUN={uuid.uuid4().hex}"
    name, value = marker.split("=")
    with sm5_group(["conform", "--impl", "vkd3d", "--select", "imm_atomic_cmp_exch/*"],
                   tmp_path, env={**os.environ, name: value}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE) as child:
        deadline = time.monotonic() + 120
        while len(_processes_marked(marker)) < 3:  # the run, a zygote, a child of it
            assert child.poll() is None and time.monotonic() < deadline, \
                "no isolation process started"
            time.sleep(0.05)
        if signum == signal.SIGINT:
            os.killpg(child.pid, signum)  # Ctrl-C reaches the terminal's foreground group
        else:
            child.send_signal(signum)
        started = time.monotonic()
        _, err = child.communicate(timeout=60)
        seconds = time.monotonic() - started
    assert child.returncode == (143 if signum == signal.SIGTERM else 130), err[-2000:]
    assert "Traceback" not in err
    assert seconds < 15, f"the run took {seconds:.1f} s to end"
    deadline = time.monotonic() + 10
    while _processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_marked(marker) == [], "an isolation process outlived the run"


NOT_DUMPABLE_SCRIPT = """
import ctypes
from sm5.conformance.vkd3d.child import _no_core_dumps
_no_core_dumps()
print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
"""


def test_isolation_processes_leave_no_core_dumps() -> None:
    """Hundreds of children crash in a run: the zygote (and so every child it forks) may
    write no core, neither by the size limit nor through a core_pattern handler."""
    runner = IsolatedRunner()
    try:
        [answer] = runner.run_batch([Job(b"not SPIR-V", (BINDING,))])
        assert isinstance(answer, ChildFailed)  # the zygote answered: it is running
        assert runner._proc is not None
        limits = Path(f"/proc/{runner._proc.pid}/limits").read_text()
    finally:
        runner.close()
    [core] = [line.split()[4:6] for line in limits.splitlines()
              if line.startswith("Max core file size")]
    assert core == ["0", "0"]
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", NOT_DUMPABLE_SCRIPT], cwd=root,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "0"
