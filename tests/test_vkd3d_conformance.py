"""vkd3d-shader on Mesa lavapipe as an implementation under test: the adapter and the golden run.

The golden run needs the real components (libvkd3d-shader or Debian's vkd3d-compiler, lavapipe,
the ``vulkan`` module; ``conformance/vkd3d/setup.sh``) and skips naming the missing one. It
checks the expectations file against what vkd3d actually does: with it the run passes; without
it the failing vectors are exactly ones it lists. The default run sends the representative
subset of the golden set (``sm5.conformance.subset``) with every must-reject vector; the
``slow`` step (and ``sm5 pipeline``) sends the whole set, where every entry must also explain
some divergence.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from spec_facts import operand_index, structured_address

from sm5.conformance.compare import FAILING, Verdict, judge, verdict_without_running
from sm5.conformance.expectations import NONE, Expectations, load_expectations
from sm5.conformance.guards import request_vector
from sm5.conformance.implementations import Unavailable, resolve
from sm5.conformance.interface import Result
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.subset import representative
from sm5.conformance.vkd3d.adapter import (
    CAPABILITIES,
    EXPECTATIONS_FILE,
    TargetUnavailable,
    Vkd3dLavapipe,
    create,
    texel_format,
)
from sm5.conformance.vkd3d.child import ChildFailed, IsolatedRunner, outputs_of, run_isolated
from sm5.conformance.vkd3d.shader import (
    Vkd3dCompilerCli,
    Vkd3dUnavailable,
    load_translator,
    register_bindings,
)
from sm5.conformance.vkd3d.vulkan_runner import (
    BufferBinding,
    Dispatch,
    RunOutput,
    VulkanRunError,
)
from sm5.oracle.asm import parse_program
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import build_harness
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector

WRAP_FLAG = "z3-witness"
CANARY = 0xC0DE0000


def _vector(program: list[str], state: Mapping[str, Any], vid: str = "hand/0") -> Vector:
    return Vector(vid, tuple(program), "cs_5_0", "11.0", dict(state), {})


def _structured(stride: int, count: int, data: list[int]) -> dict[str, Any]:
    return {"kind": "structured", "stride": stride, "count": count, "data": data}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def adapter() -> Iterator[Vkd3dLavapipe]:
    try:
        impl = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    yield impl
    impl.close()


@dataclass(frozen=True)
class GoldenRun:
    vectors: tuple[Vector, ...]  # the whole golden set, or its subset and must-reject vectors
    results: Mapping[str, Result | None]  # None: not sent (not applicable)
    expectations: Expectations
    whole: bool


def _run_golden(adapter: Vkd3dLavapipe, vectors: Sequence[Vector]) -> dict[str, Result | None]:
    results: dict[str, Result | None] = {}
    for vector in vectors:
        early = verdict_without_running(vector, NONE, adapter.capabilities)
        results[vector.id] = None if early is not None else adapter.run(request_vector(vector))
    return results


def _results_to_json(results: Mapping[str, Result | None]) -> dict[str, Any]:
    return {k: None if r is None else {"status": r.status, "state": r.state, "reason": r.reason}
            for k, r in results.items()}


def _results_from_json(doc: Mapping[str, Any]) -> dict[str, Result | None]:
    return {k: None if r is None else Result(r["status"], r["state"], r["reason"])
            for k, r in doc.items()}


#: Parts of the golden set that pytest-xdist workers share out (see `golden`).
CHUNKS = 12
CHUNK_WAIT_S = 900.0


def _claim_chunk(shared: Path, name: str) -> int | None:
    """The next unclaimed part of the run, or None when all are taken."""
    with (shared / f"{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = shared / f"{name}.next"
        taken = int(counter.read_text(encoding="utf-8")) if counter.is_file() else 0
        if taken >= CHUNKS:
            return None
        atomic_write_text(counter, str(taken + 1))
        return taken


def _shared_results(adapter: Vkd3dLavapipe, vectors: Sequence[Vector], shared: Path, name: str
                    ) -> dict[str, Result | None]:
    """Run the vectors together with the other workers: each claims parts until none are
    left, then reads everybody's results."""
    size = -(-len(vectors) // CHUNKS)
    while (chunk := _claim_chunk(shared, name)) is not None:
        part = vectors[chunk * size:(chunk + 1) * size]
        atomic_write_text(shared / f"{name}.{chunk}.json",
                          json.dumps(_results_to_json(_run_golden(adapter, part))))
    results: dict[str, Result | None] = {}
    deadline = time.monotonic() + CHUNK_WAIT_S
    for chunk in range(CHUNKS):
        path = shared / f"{name}.{chunk}.json"
        while not path.is_file():
            if time.monotonic() > deadline:
                pytest.fail(f"part {chunk} of the golden run never arrived (its worker died?)")
            time.sleep(0.2)
        results.update(_results_from_json(json.loads(path.read_text(encoding="utf-8"))))
    return results


@pytest.fixture(scope="module", params=["subset", pytest.param("whole", marks=pytest.mark.slow)])
def golden(request: pytest.FixtureRequest, adapter: Vkd3dLavapipe,
           tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    """The representative subset and the must-reject vectors, or (``slow``) every golden
    vector, through the adapter once per test session (raw results).

    Under pytest-xdist the workers that get here share the run out in parts, through files
    under the session's shared temporary folder.
    """
    every = tuple(v for _, _, v in iter_selected(vector_files(None)))
    whole = request.param == "whole"
    if whole:
        vectors = every
    else:
        chosen = set(representative(every))
        vectors = tuple(v for v in every if v.id in chosen or v.rejected)
    expectations = load_expectations(EXPECTATIONS_FILE)
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return GoldenRun(vectors, _run_golden(adapter, vectors), expectations, whole)
    shared = tmp_path_factory.getbasetemp().parent
    return GoldenRun(vectors, _shared_results(adapter, vectors, shared,
                                              f"vkd3d-{request.param}"), expectations, whole)


# --------------------------------------------------------------------------- golden run


def _verdict(vector: Vector, result: Result | None, expectations: Expectations) -> Verdict:
    early = verdict_without_running(vector, expectations, CAPABILITIES)
    if early is not None:
        return early
    assert result is not None
    return judge(vector, result, expectations, CAPABILITIES,
                 request=request_vector(vector).state)


def _covered(golden: GoldenRun, vector: Vector) -> bool:
    return golden.expectations.lookup(vector) is not None


def test_golden_set_passes_with_the_expectations_file(golden: GoldenRun) -> None:
    verdicts = {v.id: _verdict(v, golden.results[v.id], golden.expectations)
                for v in golden.vectors}
    failing = {k: f"{v.status}: {v.reason} {v.diffs[:3]}" for k, v in verdicts.items()
               if v.status in FAILING}
    assert not failing
    executed = [v for v in golden.vectors if golden.results[v.id] is not None]
    passed = [v for v in executed if verdicts[v.id].status == "pass"]
    assert len(passed) > len(executed) // 2  # the run is real: most vectors really pass


def test_every_entry_explains_a_divergence_and_only_covered_vectors_fail(
        golden: GoldenRun) -> None:
    """Without the file, the failing vectors are exactly ones an entry covers, and every entry
    (a predicate over what a vector is) covers some failing vector: none is stale.

    A crash, the one failure that is not a wrong value, happens only where the spec leaves
    shared memory undefined (an out-of-bounds or misaligned g# access)."""
    raw = {v.id: _verdict(v, golden.results[v.id], NONE) for v in golden.vectors}
    failing = [v for v in golden.vectors if raw[v.id].status in FAILING]
    assert failing, "vkd3d diverges somewhere (else the file is stale as a whole)"
    assert [v.id for v in failing if not _covered(golden, v)] == []
    if golden.whole:  # a subset need not meet every divergence
        explaining = {id(golden.expectations.lookup(v)) for v in failing}
        stale = [e.label for e in golden.expectations.entries if id(e) not in explaining]
        assert stale == []
    strict = [v.id for v in golden.vectors if raw[v.id].status == "pass"
              and (e := golden.expectations.lookup(v)) is not None and e.status == "fail"]
    assert strict == []  # a fail entry whose vector passes is xpass
    crashes = [v for v in failing if raw[v.id].reason.startswith("process crashed")]
    # only a g# access the spec does not call exact (a write that voids shared memory, or a
    # read whose result is undefined) may crash lavapipe, which does not bounds-check it
    assert all(v.expect["outcomes"] != ["defined"]
               and any(" g" in line for line in v.program) for v in crashes), \
        [v.id for v in crashes]
    assert {raw[v.id].status for v in crashes} <= {"crash"}  # a verdict of its own


@pytest.mark.slow  # long tier (docs/testing.md)
def test_every_expectation_matches_a_golden_vector() -> None:
    every = [v for _, _, v in iter_selected(vector_files(None))]
    unused = load_expectations(EXPECTATIONS_FILE).unused(every)
    assert [e.label for e in unused] == []


def test_must_reject_vectors_are_not_sent(golden: GoldenRun) -> None:
    rejected = [v for v in golden.vectors if v.rejected]
    assert rejected, "the golden set holds must-reject vectors"
    assert all(golden.results[v.id] is None for v in rejected)
    assert all(_verdict(v, None, NONE).status == "not-applicable" for v in rejected)


@dataclass(frozen=True)
class Flattened:
    """vkd3d's reading of a structured access: the dwords it touches, and the component of a
    returned value (a register component, or None when the instruction returns nothing)."""

    register: str
    dwords: frozenset[int]
    returned: tuple[str, int] | None


def _flattened(vector: Vector) -> Flattened | None:
    """vkd3d flattens (index, byte offset) to the dword index index * stride / 4 + offset / 4
    in 32-bit arithmetic and checks only that against the view. The memory operand, the
    address inputs and the returned register come from the spec (roles, address formula),
    their values from the witness the vector was built from. None: not structured."""
    spec = load_default()
    instruction = spec.instruction(vector.id.split("/")[0])
    [ins] = [i for i in parse_program(list(vector.program)).instructions
             if i.name == instruction.name]
    at = operand_index(instruction, "memory")
    if at is None:  # a witness of a register instruction's theorem: no address to flatten
        return None
    memory = ins.operands[at]
    if vector.state[memory.register]["kind"] != "structured":
        return None
    witness = (vector.provenance or {})["witness"]
    index_name, offset_name = structured_address(instruction, witness)
    stride = vector.state[memory.register]["stride"]
    flat = (witness[index_name] * (stride // 4) + witness[offset_name] // 4) % 2**32
    width = len(memory.components) if memory.selection == "mask" else 1
    dst = operand_index(instruction, "dst")
    returned = None
    if dst is not None and len(ins.operands[dst].components) == 1:
        returned = (ins.operands[dst].register, "xyzw".index(ins.operands[dst].components))
    return Flattened(memory.register, frozenset((flat + i) % 2**32 for i in range(width)),
                     returned)


def test_wrap_witnesses_show_vkd3d_32_bit_flattening(golden: GoldenRun) -> None:
    """The z3 witnesses on structured u#: vkd3d touches only the dwords its wrapped flat index
    names, returns the word there, and where that is a visible change the vector fails and an
    entry covers it. Witnesses on g# are out-of-bounds groupshared accesses (may crash)."""
    witnesses = [v for v in golden.vectors if WRAP_FLAG in v.flags and not v.rejected]
    assert witnesses, f"the golden set holds {WRAP_FLAG} vectors"
    seen_wrap = seen_returned = 0
    for vector in witnesses:
        result = golden.results[vector.id]
        assert result is not None
        flattened = _flattened(vector)
        if flattened is None:
            continue
        register = flattened.register
        if register.startswith("g"):
            assert _covered(golden, vector) or result.status == "state", vector.id
            continue
        assert result.status == "state" and result.state is not None, (vector.id, result)
        before = list(vector.state[register]["data"])
        after = result.state[register]["data"]
        changed = {i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
        assert changed <= flattened.dwords, vector.id
        in_view = sorted(i for i in flattened.dwords if i < len(before))
        if flattened.returned is not None and in_view:
            name, lane = flattened.returned
            assert result.state[name][lane] == before[in_view[0]], vector.id
            seen_returned += 1
        if _verdict(vector, result, NONE).status in FAILING:
            assert changed and _covered(golden, vector), vector.id
        seen_wrap += bool(changed)
    assert seen_wrap, "some witness wraps into the view and writes there"
    assert seen_returned, "some witness of an instruction that returns a value wraps into the view"


# --------------------------------------------------------------------------- adapter by hand


def test_resolver_builds_the_adapter() -> None:
    try:
        impl = resolve("vkd3d")
    except Unavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    try:
        assert impl.name == "vkd3d"
        assert impl.capabilities == frozenset({"executes"})
    finally:
        assert isinstance(impl, Vkd3dLavapipe)
        impl.close()


def test_in_bounds_store_structured_by_hand(adapter: Vkd3dLavapipe) -> None:
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


def test_sync_with_every_flag_writes_nothing_by_hand(adapter: Vkd3dLavapipe) -> None:
    """A fence of u# and g# plus the group barrier, in one thread: every word keeps its value."""
    state = {"r0": [1, 2, 3, 4], "u0": {"kind": "raw", "data": [5, 6, 7, 8]},
             "g0": {"kind": "raw", "data": [9, 10, 11, 12]}}
    for line in ("sync_uglobal_g_t", "sync_ugroup_g_t", "sync_g"):
        vector = _vector(["dcl_uav_raw u0", "dcl_tgsm_raw g0, 16", line], state)
        result = adapter.run(vector)
        assert result.status == "state", (line, result.reason)
        assert result.state == state, line


def test_index_wrap_writes_element_zero(adapter: Vkd3dLavapipe) -> None:
    """idx 0x40000000 * stride 16 wraps to 0: vkd3d writes element 0 (D3D writes nothing)."""
    vector = _vector(["dcl_uav_structured u0, 16", "store_structured u0.x, r0.x, l(4), r1.x"],
                     {"r0": [0x40000000, 0, 0, 0], "r1": [7, 0, 0, 0],
                      "u0": _structured(16, 2, [0] * 8)})
    result = adapter.run(vector)
    assert result.state is not None
    assert result.state["u0"]["data"] == [0, 7, 0, 0, 0, 0, 0, 0]


def test_typed_sint_atomic_by_hand(adapter: Vkd3dLavapipe) -> None:
    vector = _vector(["dcl_uav_typed_buffer (sint,sint,sint,sint) u0",
                      "imm_atomic_iadd r1.x, u0, r0.x, r0.y"],
                     {"r0": [1, 0xFFFFFFFF, 0, 0], "r1": [0, 0, 0, 0],
                      "u0": {"kind": "typed", "format": "R32_SINT", "data": [5, 6, 7]}})
    result = adapter.run(vector)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r1"] == [6, 0, 0, 0]
    assert result.state["u0"]["data"] == [5, 5, 7]


def test_dmovc_selects_per_double_by_hand(adapter: Vkd3dLavapipe) -> None:
    nan = [0x00000001, 0x7FF00000]  # a signalling NaN keeps its payload
    vector = _vector(["dmovc r3.xyzw, r2.xyxx, r0.xyzw, r1.xyzw"],
                     {"r0": [*nan, 3, 4], "r1": [5, 6, 7, 8], "r2": [0x80000000, 0, 0, 0],
                      "r3": [0, 0, 0, 0]})
    result = adapter.run(vector)
    if result.status == "unsupported" and "Unrecognized opcode" in result.reason:
        pytest.skip(f"the translator lacks dmovc: {result.reason}")
    assert result.state is not None
    assert result.state["r3"] == [*nan, 7, 8]


def test_helper_invocation_is_unsupported(adapter: Vkd3dLavapipe) -> None:
    vector = _vector(["dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, l(0), l(1)"],
                     {"r1": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0]},
                      "invocation": "helper"})
    result = adapter.run(vector)
    assert result.status == "unsupported"
    assert "helper" in result.reason


def test_out_of_bounds_tgsm_runs_isolated(adapter: Vkd3dLavapipe) -> None:
    """A far out-of-bounds g# atomic may crash lavapipe: it runs in a child, the run goes on."""
    oob = _vector(["dcl_tgsm_raw g0, 16", "imm_atomic_iadd r1.x, g0, r0.x, r0.y"],
                  {"r0": [0xFFFFFFFC, 1, 0, 0], "r1": [0, 0, 0, 0],
                   "g0": {"kind": "raw", "data": [1, 2, 3, 4]}})
    before = adapter.isolated_runs
    result = adapter.run(oob)
    assert adapter.isolated_runs == before + 1
    assert result.status in ("state", "crash")  # a crash is that vector's verdict of its own
    if result.status == "crash":
        assert result.reason.startswith("process crashed (signal")
    in_bounds = _vector(list(oob.program), {**oob.state, "r0": [4, 1, 0, 0]})
    after = adapter.run(in_bounds)
    assert adapter.isolated_runs == before + 1  # in bounds: in process
    assert after.state is not None
    assert after.state["r1"] == [2, 0, 0, 0]
    assert after.state["g0"]["data"] == [1, 3, 3, 4]


class _DamagingRunner:
    """Stands in for VulkanRunner: reports a changed canary after the UAV window."""

    device_name = "fake"
    robust_buffer_access = True
    broken = False

    def run_batch(self, dispatches: Sequence[Dispatch]) -> list[list[RunOutput]]:
        answers = []
        for dispatch in dispatches:
            bindings = dispatch.bindings
            outs = []
            for b in bindings:
                diff = ((len(b.words), CANARY + 99, 7),) if b.binding == bindings[0].binding \
                    else ()
                outs.append(RunOutput(b.binding, b.words, not diff, diff))
            answers.append(outs)
        return answers

    def close(self) -> None:
        pass


def test_a_write_outside_the_window_is_an_error() -> None:
    translator = load_translator()
    if translator is None:
        pytest.skip("no vkd3d translator")
    impl = Vkd3dLavapipe(translator, runner=_DamagingRunner())  # type: ignore[arg-type]
    vector = _vector(["dcl_uav_structured u0, 16", "store_structured u0.x, l(0), l(0), l(1)"],
                     {"u0": _structured(16, 1, [0, 0, 0, 0])})
    vector = Vector(vector.id, vector.program, vector.target, vector.runtime, vector.state,
                    {"outcomes": ["resource_undefined"], "state": {"u0": None}})
    result = impl.run(vector)
    assert result.status == "error"
    assert result.reason.startswith("wrote outside u0's window")
    assert "word +4 0xc0de0063 -> 0x00000007" in result.reason
    assert judge(vector, result, capabilities=CAPABILITIES).status == "fail"


class _FailingSubmissionRunner:
    """Stands in for VulkanRunner: a submission that holds the dispatch storing ``bad`` fails
    and breaks the runner; every other dispatch stores its value into the state."""

    device_name = "fake"
    robust_buffer_access = True

    def __init__(self, bad: int, log: list[int]) -> None:
        self.bad, self.log, self.broken = bad, log, False

    def run_batch(self, dispatches: Sequence[Dispatch]) -> list[list[RunOutput] | Exception]:
        assert not self.broken
        self.log.append(len(dispatches))
        values = [d.bindings[0].words[0] for d in dispatches]
        if self.bad in values:
            self.broken = True
            return [VulkanRunError("dispatch failed; the runner cannot be reused")
                    for _ in dispatches]
        return [[RunOutput(b.binding, b.words, True, ()) for b in d.bindings]
                for d in dispatches]

    def close(self) -> None:
        pass


def test_a_failed_submission_costs_only_the_vector_that_fails_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Several vectors go to lavapipe in one submission; when it fails, each runs again alone
    on a fresh device, so only the vector that fails alone is an error."""
    translator = load_translator()
    if translator is None:
        pytest.skip("no vkd3d translator")
    log: list[int] = []
    impl = Vkd3dLavapipe(translator, runner=_FailingSubmissionRunner(7, log))  # type: ignore[arg-type]
    renewed: list[_FailingSubmissionRunner] = []

    def renew() -> None:
        renewed.append(_FailingSubmissionRunner(7, log))
        impl._runner = renewed[-1]  # type: ignore[assignment]

    monkeypatch.setattr(impl, "_renew_runner", renew)
    program = ["dcl_uav_raw u0", "store_raw u0.x, l(0), r0.x"]
    vectors = [_vector(program, {"u0": {"kind": "raw", "data": [value]}, "r0": [1, 0, 0, 0]},
                       f"hand/{value}") for value in range(5, 10)]
    results = impl.run_batch(vectors)
    assert [r.status for r in results] == ["state", "state", "error", "state", "state"]
    assert [r.state["u0"]["data"] for r in results if r.state] == [[5], [6], [8], [9]]
    assert "lavapipe failed: dispatch failed" in results[2].reason
    assert log == [5, 1, 1, 1, 1, 1]  # one submission, then each alone
    assert len(renewed) == 2  # after the submission, and after the vector that fails alone


def test_cli_1_2_reports_dmovc_unsupported(adapter: Vkd3dLavapipe) -> None:
    try:
        cli = Vkd3dCompilerCli()
    except Vkd3dUnavailable as exc:
        pytest.skip(f"vkd3d-compiler unavailable: {exc}")
    if " 1.2 " not in f" {cli.version()} ":
        pytest.skip(f"dmovc is unknown only to vkd3d-compiler 1.2, have {cli.version()!r}")
    impl = Vkd3dLavapipe(cli)
    try:
        vector = _vector(["dmovc r3.xyzw, r2.xyxx, r0.xyzw, r1.xyzw"],
                         {"r0": [1, 2, 3, 4], "r1": [5, 6, 7, 8], "r2": [0, 1, 0, 0],
                          "r3": [0, 0, 0, 0]})
        result = impl.run(vector)
        assert result.status == "unsupported"
        assert "Unrecognized opcode 0xc8" in result.reason
    finally:
        impl.close()


def test_texel_formats_by_hand() -> None:
    assert texel_format("raw", "R32_TYPELESS") == "r32_uint"
    assert texel_format("structured", "UNKNOWN") == "r32_uint"
    assert texel_format("typed", "R32_UINT") == "r32_uint"
    assert texel_format("typed", "R32_SINT") == "r32_sint"
    assert texel_format("typed", "R32_FLOAT") == "r32_float"


# --------------------------------------------------------------------------- child process


FORK_SCRIPT = """
import json, os, signal, sys, time
from sm5.conformance.vkd3d.child import fork_and_serve
works = {
    "crash": lambda: os.kill(os.getpid(), signal.SIGSEGV),
    "sleep": lambda: time.sleep(30),
    "silent": lambda: os._exit(3),
    "reply": lambda: ({"outputs": [], "pid": os.getpid()}, None),
    "crash-after-reply": lambda: ({"outputs": []}, lambda: os.kill(os.getpid(), signal.SIGSEGV)),
}
print(json.dumps(fork_and_serve(works[sys.argv[1]], float(sys.argv[2]))))
"""


def _fork_and_serve(work: str, timeout: float) -> dict[str, Any]:
    """fork_and_serve in a fresh single-threaded interpreter, as the zygote calls it."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", FORK_SCRIPT, work, str(timeout)],
                          capture_output=True, text=True, timeout=60, cwd=root, check=True)
    reply: dict[str, Any] = json.loads(proc.stdout)
    return reply


def test_fork_and_serve_reports_a_crash_by_signal() -> None:
    assert _fork_and_serve("crash", 30) == {"crashed": int(signal.SIGSEGV)}


def test_fork_and_serve_kills_a_child_past_its_timeout() -> None:
    assert _fork_and_serve("sleep", 0.5) == {"timeout": 0.5}


def test_fork_and_serve_reports_a_child_without_reply() -> None:
    assert _fork_and_serve("silent", 30) == {
        "error": "the child exited with status 3 without a reply"}


def test_fork_and_serve_passes_the_reply_from_another_process() -> None:
    reply = _fork_and_serve("reply", 30)
    assert reply["outputs"] == [] and isinstance(reply["pid"], int)


def test_fork_and_serve_keeps_a_complete_reply_despite_a_crash_in_teardown() -> None:
    assert _fork_and_serve("crash-after-reply", 30) == {"outputs": []}


BINDING = BufferBinding(0, (1, 2, 3))


def test_zygote_replies_become_reasons_by_hand() -> None:
    with pytest.raises(ChildFailed, match=r"^process crashed \(signal 11\)$"):
        outputs_of({"crashed": 11}, [BINDING])
    with pytest.raises(ChildFailed, match=r"^process timed out after 0.5 s$"):
        outputs_of({"timeout": 0.5}, [BINDING])
    with pytest.raises(ChildFailed, match=r"^child: boom$"):
        outputs_of({"error": "boom"}, [BINDING])
    with pytest.raises(ChildFailed, match="malformed reply"):
        outputs_of({"outputs": [{"binding": 0, "words": [1, 2], "guard_diff": []}]}, [BINDING])
    assert outputs_of({"outputs": [{"binding": 0, "words": [2, 4, 6],
                                    "guard_diff": [[-1, 0xC0DDFFFF, 5]]}]}, [BINDING]) == [
        RunOutput(0, (2, 4, 6), False, ((-1, 0xC0DDFFFF, 5),))]


def test_real_child_runs_a_shader(adapter: Vkd3dLavapipe) -> None:
    program = parse_program(["dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, l(4), l(5)"])
    harness = build_harness(program, state_from_json({"r1": [9, 9, 9, 9],
                                                      "u0": {"kind": "raw", "data": [1, 2]}}))
    spirv = adapter.translator.dxbc_to_spirv(program_to_dxbc(harness.program))
    numbers = register_bindings(spirv)
    bindings = [BufferBinding(numbers["u0"], (1, 2)),
                BufferBinding(numbers["u1"], harness.state_words)]
    outs = run_isolated(spirv, bindings)
    assert [o.words for o in outs] == [(1, 7), (2, 9, 9, 9)]
    assert all(o.guard_intact for o in outs)
    with IsolatedRunner() as runner:
        assert runner.run(spirv, bindings) == outs
        zygote = runner._proc
        assert zygote is not None
        zygote.kill()  # a dead zygote is replaced on the next dispatch
        zygote.wait()
        assert runner.run(spirv, bindings) == outs


def test_a_pipeline_lavapipe_refuses_leaves_the_device_in_use(adapter: Vkd3dLavapipe) -> None:
    """lavapipe refuses the pipeline vkd3d builds for ``dtof`` into ``.zw`` from a register
    (docs: dtof-destination-beyond-x): an error result, the same again without a second
    compile, and the device (with every pipeline it compiled) goes on serving other vectors."""
    refused = _vector(["dtof r0.zw, r1.xyzw"],
                      {"r0": [0, 0, 0, 0], "r1": [0, 0x3FF00000, 0, 0x40000000]})
    fine = _vector(["dtof r0.x, r1.xy"], {"r0": [0, 0, 0, 0], "r1": [0, 0x3FF00000, 0, 0]})
    runner = adapter._runner
    first = adapter.run(refused)
    assert first.status == "error" and "VkErrorUnknown" in first.reason, first
    compiled = runner.cached_pipelines
    again = adapter.run(refused)
    assert (again.status, again.reason) == (first.status, first.reason)
    assert adapter._runner is runner and runner.cached_pipelines == compiled
    result = adapter.run(fine)
    assert result.status == "state" and result.state is not None
    assert result.state["r0"][0] == 0x3F800000  # 1.0 as float32
