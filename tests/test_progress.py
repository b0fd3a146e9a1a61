"""Progress of long steps: a bar on a terminal, status lines on a pipe, nothing with --quiet."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_lines_on_a_pipe() -> None:
    stream = io.StringIO()
    with Progress("conform oracle", 4, stream=stream, interval=0.0) as progress:
        for _ in range(4):
            progress.update()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 5  # one per update and the last one at the end
    assert re.fullmatch(r"conform oracle: 1/4 vectors \(25%\), \d+/s, \d+ s", lines[0])
    assert lines[-1].startswith("conform oracle: 4/4 vectors (100%)")
    assert "\r" not in stream.getvalue()


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SM5_PROGRESS_INTERVAL", "2.5")
    assert Progress("x", stream=io.StringIO()).interval == 2.5
    monkeypatch.setenv("SM5_PROGRESS_INTERVAL", "often")
    assert Progress("x", stream=io.StringIO()).interval == 10.0


def test_status_lines_wait_for_the_interval() -> None:
    stream = io.StringIO()
    with Progress("mutants", 1000, unit="runs", stream=stream, interval=3600.0) as progress:
        progress.advance_to(999)
    assert stream.getvalue() == ""  # a short step on a pipe prints nothing


def test_a_bar_on_a_terminal() -> None:
    threads = threading.active_count()
    stream = Terminal()
    with Progress("vectors check: regeneration", 50, stream=stream) as progress:
        progress.advance_to(10)
        time.sleep(0.3)  # tqdm redraws at most five times a second
        progress.advance_to(50)
        text = stream.getvalue()
    assert "vectors check: regeneration" in text
    assert "50/50" in text
    assert "\r" in text
    assert threading.active_count() == threads  # no monitor thread left behind


def test_quiet_is_silent_everywhere() -> None:
    for stream in (io.StringIO(), Terminal()):
        with Progress("x", 3, stream=stream, quiet=True, interval=0.0) as progress:
            progress.update(3)
        assert stream.getvalue() == ""


@pytest.mark.slow  # long tier (docs/testing.md)
def test_sm5_conform_status_goes_to_stderr_only(tmp_path: Path) -> None:
    vectors = all_vectors()
    n = len(vectors)
    cases = write_vectors(tmp_path / "cases.jsonl", vectors)
    base = [sys.executable, "-m", "sm5", "conform", "--impl", "oracle", "--vectors", str(cases)]
    env = {**os.environ, "SM5_PROGRESS_INTERVAL": "0"}
    loud = subprocess.run(base, capture_output=True, text=True, timeout=120, check=False,
                          env=env)
    assert loud.returncode == 0, loud.stderr
    assert f"conform oracle: 1/{n} vectors ({100 / n:.0f}%)" in loud.stderr
    assert f"conform oracle: {n}/{n} vectors (100%)" in loud.stderr
    assert "conform oracle:" not in loud.stdout
    quiet = subprocess.run([*base, "--quiet"], capture_output=True, text=True, timeout=120,
                           check=False, env=env)
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    assert quiet.stdout == loud.stdout
