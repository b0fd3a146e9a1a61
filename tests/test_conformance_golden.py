"""The golden set: the oracle passes all of it, so does the mutants' bug-free base, and every
bundled mutant fails on at least one vector (kill rate 100%, as printed by ``sm5 mutants``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conformance_cases import all_vectors

from sm5.cli import main
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.oracle_impl import OracleImplementation, oracle_execution
from sm5.conformance.run import iter_selected, run, vector_files
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector
from sm5.vectors.programs import program_subjects


@pytest.fixture(scope="module")
def golden() -> list[Vector]:
    return [v for _, _, v in iter_selected(vector_files(None))]


@pytest.mark.slow  # long tier (docs/testing.md)
def test_golden_set_is_there(golden: list[Vector]) -> None:
    assert {v.id.split("/")[0] for v in golden} == \
        set(load_default().instructions) | set(program_subjects())


@pytest.mark.slow  # long tier (docs/testing.md)
def test_oracle_passes_every_golden_vector() -> None:
    report = run(OracleImplementation())
    assert report.failures() == []
    assert report.counts()["pass"] == len(report.verdicts)


def _agrees(vectors: list[Vector]) -> None:
    for vector in vectors:
        state = state_from_json(vector.state)
        fast = oracle_execution(vector, state)
        slow = execute(parse_vector_program(vector.program), state, vector.target, vector.runtime)
        assert fast == slow, vector.id


def test_cached_oracle_path_agrees_with_the_executor_on_the_hand_picked_cases() -> None:
    _agrees(all_vectors())


@pytest.mark.slow  # the whole golden set twice over; the hand-picked cases above by default
def test_cached_oracle_path_agrees_with_the_executor(golden: list[Vector]) -> None:
    _agrees(golden)


@pytest.mark.slow  # the whole golden set; tests/test_mutants_strength.py checks the named ones
def test_naive_base_of_the_mutants_passes_every_golden_vector() -> None:
    report = run(NaiveTranslator())
    assert report.failures() == []


@pytest.mark.slow  # every mutant over the whole golden set (sm5 pipeline prints it too)
def test_every_mutant_is_killed(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mutants"])
    out = capsys.readouterr().out
    assert " NO " not in out, out
    assert code == 0
    assert "(100.0%)" in out


@pytest.mark.slow  # long tier (docs/testing.md)
def test_plugin_collects_the_golden_set_by_default_from_any_folder(
        golden: list[Vector], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "--sm5-impl=oracle", "--collect-only", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(golden)} tests collected" in proc.stdout
