"""Options and output paths are checked before any work starts; an internal error has its own
exit code and one line; files are written with ordinary permissions; generation never replaces
the golden set unless asked with ``--golden`` in a source checkout."""

from __future__ import annotations

import argparse
import os
import stat
import time
from pathlib import Path

import pytest
from bounded_run import Completed, one_error_line, run_sm5

from sm5.cli import INTERNAL_ERROR, main
from sm5.vectors import cli as vectors_cli
from sm5.vectors.generate import GOLDEN, MANIFEST, generate

DMOVC = str(GOLDEN / "dmovc.jsonl")


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    start = time.monotonic()
    code = main(args)
    assert time.monotonic() - start < 20, "the option was checked only after the work"
    err = capsys.readouterr().err
    return code, one_error_line(Completed(code, "", err))


def _unwritable(tmp_path: Path) -> Path:
    """A path below a regular file: no user, root included, can create it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    return blocker / "results.json"


@pytest.mark.parametrize("command", [
    ["conform", "--impl", "oracle", "--vectors", DMOVC, "--json"],
    ["mutants", "--vectors", DMOVC, "--json"],
    ["prove", "--json"],
])
def test_unwritable_json_fails_before_the_run(tmp_path: Path, command: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _main([*command, str(_unwritable(tmp_path))], capsys)
    assert code == 2 and "--json" in line and str(tmp_path) in line


@pytest.mark.parametrize("command", [
    ["report", "--out"],
    ["dxbc", "--vectors", DMOVC, "--out"],
    ["vectors", "generate", "--out"],
    ["pipeline", "--out"],
])
def test_unwritable_out_fails_before_the_run(tmp_path: Path, command: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _main([*command, str(_unwritable(tmp_path))], capsys)
    assert code == 2 and "--out" in line


@pytest.mark.parametrize("value", [",", " , ", "executes,flies"])
def test_capabilities_must_name_something_known(value: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _main(["conform", "--impl", "oracle", "--vectors", DMOVC,
                        "--capabilities", value], capsys)
    assert code == 2 and "--capabilities" in line


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf"])
def test_timeout_must_be_positive_and_finite(value: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _main(["conform", "--impl", "oracle", "--vectors", DMOVC, "--timeout", value],
                       capsys)
    assert code == 2 and "--timeout" in line


def test_pipeline_unknown_impl_fails_at_once(tmp_path: Path) -> None:
    done = run_sm5(["pipeline", "--out", str(tmp_path / "build"), "--impl", "nosuch"],
                   seconds=30)
    assert done.code == 2
    assert "[pipeline]" not in done.stdout  # no step ran
    assert "nosuch" in one_error_line(done)


def test_internal_error_exits_3_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from sm5.oracle.cli import spec as spec_cli

    def broken(args: argparse.Namespace) -> int:
        raise ZeroDivisionError("a defect")

    monkeypatch.setattr(spec_cli, "run_check", broken)
    monkeypatch.delenv("SM5_TRACEBACK", raising=False)
    code = main(["spec", "check"])
    err = capsys.readouterr().err
    assert code == INTERNAL_ERROR == 3
    line = one_error_line(Completed(code, "", err), prefix="sm5: internal error")
    assert "internal error" in line and "ZeroDivisionError: a defect" in line


def test_generated_files_have_ordinary_permissions(tmp_path: Path) -> None:
    """The parallel path (worker processes, part files from mkstemp) under umask 022."""
    old = os.umask(0o022)
    try:
        generate(tmp_path, instructions=["dmovc"], jobs=2)
    finally:
        os.umask(old)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == [MANIFEST, "dmovc.jsonl"]
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o644, file


def test_level1_needs_out_or_golden(capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _main(["vectors", "generate", "--seed", "5"], capsys)
    assert code == 2 and "--golden" in line


def test_golden_refused_in_an_installed_package(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(vectors_cli, "source_checkout_golden", lambda: None)
    before = (GOLDEN / MANIFEST).read_bytes()
    code, line = _main(["vectors", "generate", "--golden"], capsys)
    assert code == 2 and "installed package" in line
    code, line = _main(["vectors", "generate", "--out", str(GOLDEN)], capsys)
    assert code == 2 and "never replaced" in line
    assert (GOLDEN / MANIFEST).read_bytes() == before


def test_golden_allowed_in_this_checkout() -> None:
    assert vectors_cli.source_checkout_golden() == GOLDEN
