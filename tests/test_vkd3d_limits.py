"""Time limits of the vkd3d adapter that measure work: an isolated dispatch gets its execution
limit plus a margin over the compile time measured in process, and the execution limit is
configurable (``SM5_VKD3D_TIMEOUT``)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sm5.conformance.compare import FAILING, judge
from sm5.conformance.expectations import load_expectations
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d import adapter as vkd3d_adapter
from sm5.conformance.vkd3d.adapter import (
    COMPILE_MARGIN,
    EXPECTATIONS_FILE,
    TargetUnavailable,
    Vkd3dLavapipe,
    create,
    execution_limit_from_environment,
    needs_isolation,
)
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.cli.options import OptionError
from sm5.oracle.dxbc.harness import WORD_BYTES
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector


@pytest.mark.parametrize("text", ["0", "-5", "nan", "inf", "soon"])
def test_execution_limit_rejects_unusable_values(monkeypatch: pytest.MonkeyPatch,
                                                 text: str) -> None:
    monkeypatch.setenv("SM5_VKD3D_TIMEOUT", text)
    with pytest.raises(OptionError, match="SM5_VKD3D_TIMEOUT"):
        execution_limit_from_environment()


def test_execution_limit_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SM5_VKD3D_TIMEOUT", "150")
    assert execution_limit_from_environment() == 150.0
    monkeypatch.delenv("SM5_VKD3D_TIMEOUT")
    assert execution_limit_from_environment() == vkd3d_adapter.EXECUTION_LIMIT_S


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


def _largest_isolated_tgsm_vector() -> Vector:
    """The isolated golden vector with the most ``g#`` words (the harness copies them all)."""
    best: tuple[int, Vector] | None = None
    for _, _, vector in iter_selected(vector_files(None)):
        if vector.rejected:
            continue
        words = sum(len(v.get("data", ())) for k, v in vector.state.items()
                    if k.startswith("g") and isinstance(v, dict))
        if not words or (best is not None and words <= best[0]):
            continue
        program = parse_vector_program(tuple(vector.program))
        if needs_isolation(program, state_from_json(vector.state), vector.target,
                           vector.runtime):
            best = (words, vector)
    assert best is not None
    return best[1]


def test_isolated_limit_adds_the_measured_compile_time(adapter: Vkd3dLavapipe) -> None:
    vector = _largest_isolated_tgsm_vector()
    result = adapter.run(vector)
    assert "timed out" not in result.reason, result.reason
    assert adapter.isolated_runs >= 1
    assert adapter._compile_seconds, "the shader was not compiled in process first"
    seconds = max(adapter._compile_seconds.values())
    assert seconds > 0
    prepared = adapter._prepare(vector)
    limit, why = adapter._isolated_limit(prepared.compiled.spirv, prepared.bindings)
    assert limit == pytest.approx(adapter.execution_limit + COMPILE_MARGIN * seconds)
    assert "compile measured in process" in why


def _tgsm_words(vector: Vector) -> int:
    return sum(len(v.get("data", ())) for k, v in vector.state.items()
               if k.startswith("g") and isinstance(v, dict))


def test_largest_tgsm_vectors_run_with_a_verdict(adapter: Vkd3dLavapipe) -> None:
    """The legal golden vectors whose g# fills cs_5_0's 32 KB run under vkd3d (the harness
    copies g# in a loop, so the shader is as small as for a 16-byte g#) and get a verdict: a
    state judged against the spec, not unsupported, an error or a time-out."""
    full = load_default().model.limits["tgsm_bytes_5_0"] // WORD_BYTES
    vectors = [v for _, _, v in iter_selected(vector_files(None))
               if not v.rejected and v.target == "cs_5_0" and _tgsm_words(v) == full]
    assert vectors, "the golden set has no legal vector with a full 32 KB of g#"
    expectations = load_expectations(EXPECTATIONS_FILE)
    for vector in vectors:
        started = time.perf_counter()
        result = adapter.run(vector)
        seconds = time.perf_counter() - started
        assert result.status == "state", (vector.id, result.status, result.reason)
        verdict = judge(vector, result, expectations, adapter.capabilities)
        assert verdict.status not in FAILING, (vector.id, verdict.status, verdict.reason)
        assert seconds < 60, f"{vector.id} took {seconds:.0f} s"
