"""The real D3D11 API (Wine's d3d11 here) as an implementation: the adapter and a golden run.

The runs need wine, Xvfb and the runner built with mingw-w64 (``scripts/setup.sh --d3d11``) and
skip naming the missing piece. The default run sends the representative subset of the golden set
(``sm5.conformance.subset``: a rule, not a list; a few hundred programs) through Wine's OpenGL
renderer once per test session (pytest-xdist workers share it out in parts) and checks the
expectations file against what Wine actually does. The ``slow`` step sends the same subset
through the runner as a Windows user would run it (a stream file in, a results file out; the
replay of that file must give the same verdicts) and through the Vulkan renderer. The whole
golden set on both renderers is ``sm5 conform --impl d3d11[:vulkan]`` (docs: figures).
``d3d11:dxvk`` (DXVK's DLLs, ``scripts/setup.sh --dxvk``) runs one golden section in the
default run and the whole golden set, with its expectations file checked, in the ``slow`` step.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from d3d11_runner import create_runner

from sm5.conformance.compare import FAILING, Verdict, judge, verdict_without_running
from sm5.conformance.d3d11 import adapter as d3d11_adapter
from sm5.conformance.d3d11.adapter import (
    CAPABILITIES,
    MAX_TGSM_WORDS,
    D3D11Runner,
    needs_isolation,
)
from sm5.conformance.d3d11.expectations_file import FILES
from sm5.conformance.d3d11.host import dxvk_version
from sm5.conformance.d3d11.stream import record_of, write_stream
from sm5.conformance.expect_check import check_expectations
from sm5.conformance.expectations import NONE, Expectations, load_expectations
from sm5.conformance.implementations import resolve
from sm5.conformance.interface import Result
from sm5.conformance.run import iter_selected, run, vector_files
from sm5.conformance.subset import representative
from sm5.oracle.errors import NotExpressible
from sm5.oracle.files.atomic import atomic_write_text
from sm5.pipeline import wine_leaves_out
from sm5.vectors.format import Vector

#: Parts of the subset that pytest-xdist workers share out (see `_shared_results`).
CHUNKS = 4
CHUNK_WAIT_S = 900.0


def _vector(program: list[str], state: Mapping[str, Any], vid: str = "hand/0") -> Vector:
    return Vector(vid, tuple(program), "cs_5_0", "11.0", dict(state), {})


def _structured(stride: int, count: int, data: list[int]) -> dict[str, Any]:
    return {"kind": "structured", "stride": stride, "count": count, "data": data}


@pytest.fixture(scope="module")
def adapter() -> Iterator[D3D11Runner]:
    impl = create_runner()
    yield impl
    impl.close()


# --------------------------------------------------------------------------- subset run


@dataclass(frozen=True)
class GoldenRun:
    vectors: tuple[Vector, ...]  # the whole golden set
    subset: tuple[Vector, ...]  # the vectors sent (the representative subset)
    results: Mapping[str, Result | None]  # None: not sent (not applicable)
    expectations: Expectations


def _run(impl: D3D11Runner, vectors: Sequence[Vector]) -> dict[str, Result | None]:
    results: dict[str, Result | None] = {}
    for vector in vectors:
        early = verdict_without_running(vector, NONE, impl.capabilities)
        results[vector.id] = None if early is not None else impl.run(vector)
    return results


def _claim_chunk(shared: Path, tag: str) -> int | None:
    with (shared / f"d3d11-{tag}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = shared / f"d3d11-{tag}.next"
        taken = int(counter.read_text(encoding="utf-8")) if counter.is_file() else 0
        if taken >= CHUNKS:
            return None
        atomic_write_text(counter, str(taken + 1))
        return taken


def _shared_results(impl: D3D11Runner, vectors: Sequence[Vector], shared: Path, tag: str
                    ) -> dict[str, Result | None]:
    """Each worker claims parts until none are left, then reads everybody's results."""
    size = -(-len(vectors) // CHUNKS)
    while (chunk := _claim_chunk(shared, tag)) is not None:
        part = _run(impl, vectors[chunk * size:(chunk + 1) * size])
        doc = {k: None if r is None else [r.status, r.state, r.reason] for k, r in part.items()}
        atomic_write_text(shared / f"d3d11-{tag}.{chunk}.json", json.dumps(doc))
    results: dict[str, Result | None] = {}
    deadline = time.monotonic() + CHUNK_WAIT_S
    for chunk in range(CHUNKS):
        path = shared / f"d3d11-{tag}.{chunk}.json"
        while not path.is_file():
            if time.monotonic() > deadline:
                pytest.fail(f"part {chunk} of the subset run never arrived (its worker died?)")
            time.sleep(0.2)
        doc = json.loads(path.read_text(encoding="utf-8"))
        results.update({k: None if r is None else Result(*r) for k, r in doc.items()})
    return results


def _golden_run(impl: D3D11Runner, renderer: str, factory: pytest.TempPathFactory) -> GoldenRun:
    vectors = tuple(v for _, _, v in iter_selected(vector_files(None)))
    chosen = set(representative(vectors, leave_out=wine_leaves_out()))
    subset = tuple(v for v in vectors if v.id in chosen)
    expectations = load_expectations(FILES[renderer])
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return GoldenRun(vectors, subset, _run(impl, subset), expectations)
    shared = factory.getbasetemp().parent
    return GoldenRun(vectors, subset, _shared_results(impl, subset, shared, renderer),
                     expectations)


@pytest.fixture(scope="module")
def golden(adapter: D3D11Runner, tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    return _golden_run(adapter, "gl", tmp_path_factory)


def _verdict(vector: Vector, result: Result | None, expectations: Expectations) -> Verdict:
    early = verdict_without_running(vector, expectations, CAPABILITIES)
    if early is not None:
        return early
    assert result is not None
    return judge(vector, result, expectations, CAPABILITIES)


def _check_run(golden: GoldenRun) -> None:
    """Every verdict as the expectations file says; without it, the only failures are vectors
    an entry covers."""
    verdicts = {v.id: _verdict(v, golden.results[v.id], golden.expectations)
                for v in golden.subset}
    failing = {k: f"{v.status}: {v.reason}" for k, v in verdicts.items() if v.status in FAILING}
    assert failing == {}
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    assert counts.get("pass", 0) > 2 * counts.get("xfail", 0), counts
    raw = {v.id: _verdict(v, golden.results[v.id], NONE) for v in golden.subset}
    unexplained = {v.id for v in golden.subset if raw[v.id].status in FAILING
                   and golden.expectations.lookup(v) is None}
    assert unexplained == set()


@pytest.mark.slow  # long tier (docs/testing.md)
def test_subset_is_a_rule_over_the_golden_set(golden: GoldenRun) -> None:
    """Every clause and every (instruction, section) of the executable golden vectors is in the
    subset, which is a small part of the set (the flow-control files, left out, aside)."""
    executable = [v for v in golden.vectors
                  if not v.rejected and v.id.split("/")[0] not in wine_leaves_out()]
    assert {c for v in executable for c in v.clauses} == \
        {c for v in golden.subset for c in v.clauses}
    sections = {tuple(v.id.split("/")[:2]) for v in executable}
    assert sections == {tuple(v.id.split("/")[:2]) for v in golden.subset}
    assert len(golden.subset) * 10 < len(executable)


@pytest.mark.slow  # long tier (docs/testing.md)
def test_subset_passes_with_the_expectations_file(golden: GoldenRun) -> None:
    _check_run(golden)


@pytest.mark.slow  # long tier (docs/testing.md)
def test_every_expectation_matches_a_golden_vector() -> None:
    vectors = [v for _, _, v in iter_selected(vector_files(None))]
    for path in FILES.values():
        assert [e.label for e in load_expectations(path).unused(vectors)] == [], path


@pytest.mark.slow  # long tier (docs/testing.md)
def test_doubles_are_unsupported_with_the_reason(golden: GoldenRun, adapter: D3D11Runner
                                                 ) -> None:
    """Wine has no double support: every program with doubles it is sent is unsupported, and
    the reason names the feature query (or, for a helper invocation, the harness)."""
    if adapter._main.header.get("doubles"):
        pytest.skip(f"this device supports doubles: {adapter._main.header}")
    sent = [(v, r) for v in golden.subset
            if v.id.startswith("dmovc/") and (r := golden.results[v.id]) is not None]
    assert sent
    assert {r.status for _, r in sent} == {"unsupported"}
    by_feature = [v for v, r in sent if "D3D11_FEATURE_DOUBLES" in r.reason]
    assert len(by_feature) > len(sent) // 2
    assert all(r.reason.startswith("not expressible") for v, r in sent if v not in by_feature)


@pytest.mark.slow
def test_replay_of_the_runner_output_gives_the_same_verdicts(golden: GoldenRun,
                                                            adapter: D3D11Runner,
                                                            tmp_path: Path) -> None:
    """The subset as a Windows user runs it: the programs in one stream file, the .exe runs
    them in one process, ``results:FILE`` judges its output (the quarantined vectors, which may
    crash the process, and the harnesses the adapter does not send under Wine are left out)."""
    chosen = []
    for vector in golden.subset:
        if vector.rejected or needs_isolation(vector):
            continue
        try:
            record = record_of(vector)
        except NotExpressible:
            continue
        if sum(t.words for t in record.harness.layout.tgsm) <= MAX_TGSM_WORDS:
            chosen.append(record)  # the adapter does not send larger copies under Wine
    stream = tmp_path / "programs.sm5d3d11"
    stream.write_bytes(write_stream(chosen))
    launch = adapter.host.launch(str(stream))
    results = tmp_path / "results.jsonl"
    with results.open("wb") as out:
        subprocess.run(list(launch.argv), env={**os.environ, **launch.env}, stdout=out,
                       stderr=subprocess.DEVNULL, timeout=1800, check=True)
    replay = resolve(f"results:{results}")
    assert len(replay.replies) == len(chosen)  # type: ignore[attr-defined]
    by_id = {v.id: v for v in golden.subset}
    differ = {}
    for record in chosen:
        vector = by_id[record.vector_id]
        live = _verdict(vector, golden.results[vector.id], golden.expectations)
        again = judge(vector, replay.run(vector), golden.expectations, CAPABILITIES)
        if (live.status, live.diffs) != (again.status, again.diffs):
            differ[vector.id] = (live.status, again.status, again.reason)
    assert differ == {}


@pytest.mark.slow
def test_vulkan_renderer_subset_passes_with_its_expectations_file(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    impl = create_runner("vulkan")
    try:
        _check_run(_golden_run(impl, "vulkan", tmp_path_factory))
    finally:
        impl.close()


# --------------------------------------------------------------------------- by hand


def test_in_bounds_store_structured_by_hand(adapter: D3D11Runner) -> None:
    vector = _vector(["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(4), r1.zwxy"],
                     {"r0": [2, 0, 0, 0], "r1": [10, 11, 12, 13],
                      "u0": _structured(16, 3, list(range(100, 112)))})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state == {
        "r0": [2, 0, 0, 0], "r1": [10, 11, 12, 13],
        "u0": _structured(16, 3, [100, 101, 102, 103, 104, 105, 106, 107,
                                  108, 12, 13, 111]),
    }
    assert "feature level 11_1" in adapter.device


def test_typed_sint_atomic_by_hand(adapter: D3D11Runner) -> None:
    vector = _vector(["dcl_uav_typed_buffer (sint,sint,sint,sint) u0",
                      "imm_atomic_iadd r1.x, u0, r0.x, r0.y"],
                     {"r0": [1, 0xFFFFFFFF, 0, 0], "r1": [0, 0, 0, 0],
                      "u0": {"kind": "typed", "format": "R32_SINT", "data": [5, 6, 7]}})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r1"] == [6, 0, 0, 0]
    assert result.state["u0"]["data"] == [5, 5, 7]


def test_structured_and_raw_srv_buffers_by_hand(adapter: D3D11Runner) -> None:
    """t# buffers are shader resource views: read in bounds, 0 out of bounds, never written."""
    vector = _vector(["dcl_resource_structured t2, 8", "dcl_resource_raw t0",
                      "ld_structured r0.xy, r1.x, l(0), t2.xyxx",
                      "ld_structured r2.x, r1.y, l(0), t2.x"],
                     {"r0": [9, 9, 9, 9], "r1": [1, 5, 0, 0], "r2": [9, 9, 9, 9],
                      "t0": {"kind": "raw", "data": [1, 2]},
                      "t2": _structured(8, 2, [10, 11, 12, 13])})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r0"] == [12, 13, 9, 9]  # structure 1's two words
    assert result.state["r2"] == [0, 9, 9, 9]  # structure 5 of 2: out of bounds reads 0
    assert result.state["t2"]["data"] == [10, 11, 12, 13]
    assert result.state["t0"]["data"] == [1, 2]


NULL_VIEW = _vector(["dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, l(0), l(5)"],
                    {"r1": [9, 9, 9, 9], "u0": {"kind": "raw", "data": []}})


def test_a_null_view_reads_zero_on_the_gl_renderer(adapter: D3D11Runner) -> None:
    """A UAV without words is a NULL view: the atomic is out of bounds, returns 0."""
    result = adapter.run(NULL_VIEW)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r1"] == [0, 9, 9, 9]


def test_out_of_bounds_tgsm_runs_in_the_quarantine(adapter: D3D11Runner) -> None:
    oob = _vector(["dcl_tgsm_raw g0, 16", "imm_atomic_iadd r1.x, g0, r0.x, r0.y"],
                  {"r0": [0xFFFFFFFC, 1, 0, 0], "r1": [0, 0, 0, 0],
                   "g0": {"kind": "raw", "data": [1, 2, 3, 4]}})
    before = adapter.isolated_runs
    result = adapter.run(oob)
    assert adapter.isolated_runs == before + 1
    assert result.status in ("state", "crash", "timeout"), result.reason
    in_bounds = _vector(list(oob.program), {**oob.state, "r0": [4, 1, 0, 0]})
    after = adapter.run(in_bounds)
    assert adapter.isolated_runs == before + 1  # in bounds: the main process
    assert after.state is not None
    assert after.state["r1"] == [2, 0, 0, 0]
    assert after.state["g0"]["data"] == [1, 3, 3, 4]


def test_a_runner_that_hangs_is_killed_and_replaced(tmp_path: Path) -> None:
    """A time-out in the main process is tried once more in a fresh runner process with four
    times the limit; only the second time-out is the verdict, naming both limits."""
    impl = create_runner()
    try:
        impl._main.timeout = 0.001  # no reply can come that fast: the wait times out
        result = impl.run(NULL_VIEW)
        assert result == Result.timeout("process timed out after 0.001 s, and again after "
                                        "0.004 s in a fresh runner process")
        assert impl._main.starts == 2 and impl.retried == 1
        assert impl._main.timeout == 0.001  # the longer limit was for the retry alone
        impl._main.timeout = 60
        again = impl.run(NULL_VIEW)
        assert again.status == "state", again.reason
        assert impl._main.starts == 3 and impl.retried == 1
    finally:
        impl.close()


def test_a_time_out_that_does_not_come_back_is_not_the_verdict(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector whose first wait times out (a busy machine) and whose retry in a fresh runner
    process answers gets the retry's result: the machine's load does not decide a verdict."""
    monkeypatch.setattr(d3d11_adapter, "RETRY_TIMEOUT_FACTOR", 60_000.0)  # 0.001 s -> 60 s
    impl = create_runner()
    try:
        impl._main.timeout = 0.001
        result = impl.run(NULL_VIEW)
        assert result.status == "state", result.reason
        assert result.state is not None and result.state["r1"] == [0, 9, 9, 9]
        assert impl._main.starts == 2 and impl.retried == 1
    finally:
        impl.close()


def test_the_vulkan_renderer_drops_a_dispatch_with_a_null_view() -> None:
    impl = create_runner("vulkan")
    try:
        assert impl.name == "d3d11:vulkan"
        dropped = impl.run(NULL_VIEW)
        assert dropped.status == "error"
        assert "did not run" in dropped.reason
        fine = impl.run(_vector(["dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, l(4), l(5)"],
                                {"r1": [9, 9, 9, 9], "u0": {"kind": "raw", "data": [1, 2]}}))
        assert fine.status == "state", fine.reason
        assert fine.state is not None
        assert fine.state["u0"]["data"] == [1, 7] and fine.state["r1"] == [2, 9, 9, 9]
    finally:
        impl.close()


def test_a_malformed_stream_stops_the_runner_with_a_named_byte(adapter: D3D11Runner,
                                                               tmp_path: Path) -> None:
    stream = tmp_path / "bad.sm5d3d11"
    stream.write_bytes(b"SM5D3D11\x03\x00\x00\x00JUNK")
    launch = adapter.host.launch(str(stream))
    proc = subprocess.run(list(launch.argv), env={**os.environ, **launch.env},
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 2
    last = json.loads(proc.stdout.decode().splitlines()[-1])
    assert last == {"status": "malformed",
                    "reason": "malformed stream at byte 16: expected a record tag REC1"}


def test_a_stream_of_another_version_is_named(adapter: D3D11Runner, tmp_path: Path) -> None:
    stream = tmp_path / "old.sm5d3d11"
    stream.write_bytes(b"SM5D3D11\x02\x00\x00\x00")
    launch = adapter.host.launch(str(stream))
    proc = subprocess.run(list(launch.argv), env={**os.environ, **launch.env},
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 2
    last = json.loads(proc.stdout.decode().splitlines()[-1])
    assert last["reason"].startswith("malformed stream at byte 12: stream version 2, this "
                                     "runner reads version 3")


# --------------------------------------------------------------------------- hidden counters


def _counted(stride: int, count: int, data: list[int], counter: int) -> dict[str, Any]:
    return {**_structured(stride, count, data), "counter": counter}


def test_imm_atomic_alloc_by_hand(adapter: D3D11Runner) -> None:
    """The count before the increment lands in dst; the view's words are untouched (FS
    imm_atomic_alloc)."""
    vector = _vector(["dcl_uav_structured u3, 8", "imm_atomic_alloc r2.z, u3"],
                     {"r2": [9, 9, 9, 9], "u3": _counted(8, 2, [1, 2, 3, 4], 5)})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state == {"r2": [9, 9, 5, 9], "u3": _counted(8, 2, [1, 2, 3, 4], 6)}


def test_imm_atomic_consume_by_hand(adapter: D3D11Runner) -> None:
    """The count after the decrement lands in dst, and 0 wraps to 0xffffffff (FS
    imm_atomic_consume)."""
    program = ["dcl_uav_structured u0, 4", "imm_atomic_consume r1.x, u0"]
    result = adapter.run(_vector(program, {"r1": [9, 9, 9, 9], "u0": _counted(4, 1, [7], 5)}))
    assert result.status == "state", result.reason
    assert result.state == {"r1": [4, 9, 9, 9], "u0": _counted(4, 1, [7], 4)}
    wrap = adapter.run(_vector(program, {"r1": [9, 9, 9, 9], "u0": _counted(4, 1, [7], 0)}))
    assert wrap.status == "state", wrap.reason
    assert wrap.state == {"r1": [0xFFFFFFFF, 9, 9, 9], "u0": _counted(4, 1, [7], 0xFFFFFFFF)}


def test_a_counter_on_a_view_of_no_elements_by_hand(adapter: D3D11Runner) -> None:
    """A counted view without words is created as a view of no elements (not a NULL view,
    which has no counter): the counter still counts."""
    vector = _vector(["dcl_uav_structured u1, 16", "imm_atomic_alloc r0.y, u1"],
                     {"r0": [9, 9, 9, 9], "u1": _counted(16, 0, [], 100)})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state == {"r0": [9, 100, 9, 9], "u1": _counted(16, 0, [], 101)}


@pytest.mark.slow  # long tier (docs/testing.md)
def test_the_subset_runs_the_counter_vectors(golden: GoldenRun) -> None:
    """Every counted vector of the subset is run; only an initial count of 0xffffffff, which
    D3D11 reads as keep the current count, is unsupported."""
    sent = [(v, r) for v in golden.subset
            if (r := golden.results[v.id]) is not None
            and any(isinstance(res, dict) and "counter" in res for res in v.state.values())]
    assert sent
    for vector, result in sent:
        all_ones = any(isinstance(res, dict) and res.get("counter") == 0xFFFFFFFF
                       for res in vector.state.values())
        if all_ones:
            assert result.status == "unsupported" and "keep the current count" in result.reason
        else:
            assert result.status != "unsupported", (vector.id, result.reason)
    passed = [v for v, r in sent if _verdict(v, r, NONE).status == "pass"]
    assert passed, "no counted vector of the subset passes on the OpenGL renderer"


def test_the_vulkan_renderer_does_not_count() -> None:
    """wined3d's Vulkan renderer keeps the count set through the API away from the shader (the
    hidden-counter-not-bound entry of expectations-vulkan.yaml)."""
    impl = create_runner("vulkan")
    try:
        vector = _vector(["dcl_uav_structured u0, 4", "imm_atomic_alloc r1.x, u0"],
                         {"r1": [9, 9, 9, 9], "u0": _counted(4, 1, [7], 5)})
        result = impl.run(vector)
        assert result.status == "state", result.reason
        assert result.state is not None
        assert result.state["u0"]["counter"] == 5  # the count set, read back unchanged
        assert result.state["r1"] == [0, 9, 9, 9]
    finally:
        impl.close()


# --------------------------------------------------------------------------- DXVK


def test_dxvk_runs_a_golden_section_with_doubles_and_names_its_version() -> None:
    """DXVK reports doubles, so the double conversions run (Wine's d3d11 has none); every
    verdict is as its expectations file says, and the results name the version the setup
    recorded."""
    impl = create_runner("dxvk")
    expectations = load_expectations(FILES["dxvk"])
    assert impl.name == "d3d11:dxvk"
    assert impl.version and impl.version == dxvk_version()
    report = run(impl, None, expectations, require_used=False, select=("itod/mask-swizzle/*",))
    statuses = {v.status for v in report.verdicts.values()}
    assert report.verdicts and not report.failed, report.failures()[:3]
    assert "unsupported" not in statuses and "pass" in statuses
    assert report.to_json()["impl_version"] == impl.version


@pytest.mark.slow
def test_dxvk_runs_the_whole_golden_set_with_its_expectations_file() -> None:
    """``sm5 conform --impl d3d11:dxvk --expect expectations-dxvk.yaml --check-expect``: no
    failure the file does not explain, and every entry of it matches vectors and explains a
    divergence."""
    impl = create_runner("dxvk")
    expectations = load_expectations(FILES["dxvk"])
    report = run(impl, None, expectations)
    vectors = [v for _, _, v in iter_selected(vector_files(None))]
    check = check_expectations(expectations, vectors, report.verdicts)
    assert check.problems() == []
    assert not report.failed, report.failures()[:3]
