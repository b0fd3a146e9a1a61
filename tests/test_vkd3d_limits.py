"""Time limits of the vkd3d adapter that measure work: an isolated dispatch gets its execution
limit plus a margin over the compile time measured in process, and the execution limit is
configurable (``SM5_VKD3D_TIMEOUT``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d import adapter as vkd3d_adapter
from sm5.conformance.vkd3d.adapter import (
    COMPILE_MARGIN,
    TargetUnavailable,
    Vkd3dLavapipe,
    create,
    execution_limit_from_environment,
    needs_isolation,
)
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.options import OptionError
from sm5.oracle.state import state_from_json
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
