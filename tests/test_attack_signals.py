"""SIGINT and SIGTERM during ``sm5 vectors generate --level 2`` (worker processes) and
``sm5 report``: the output is complete or absent, no hidden part file stays, and no process of
the run is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from process_group import sm5_group

from sm5.oracle.model.spec import load_default


def _group_gone(pgid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _wait_for_parts(out: Path, seconds: float = 90.0) -> None:
    """Until the workers have written into their part files."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        parts = [p for p in out.rglob(".*part*") if p.is_file() and p.stat().st_size > 0]
        if parts:
            return
        time.sleep(0.2)
    pytest.fail("generation wrote no part file in time")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_generate_level2_interrupted_leaves_nothing(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "level2"
    with sm5_group(["vectors", "generate", "--level", "2", "--out", str(out)], tmp_path,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        _wait_for_parts(out)
        if signum == signal.SIGINT:
            os.killpg(child.pid, signum)  # Ctrl-C reaches the whole foreground group
        else:
            child.send_signal(signum)  # kill(1) reaches the parent only
        _, err = child.communicate(timeout=30)
    assert child.returncode == (143 if signum == signal.SIGTERM else 130), err[-2000:]
    assert "Traceback" not in err
    assert _group_gone(child.pid), "a worker process outlived the run"
    assert sorted(p.name for p in out.iterdir()) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_report_interrupted_leaves_complete_or_nothing(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "report"
    with sm5_group(["report", "--out", str(out)], tmp_path,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        time.sleep(1.5)
        os.killpg(child.pid, signum)
        _, err = child.communicate(timeout=60)
    assert "Traceback" not in err
    assert _group_gone(child.pid)
    names = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert names in ([], ["index.html", "instructions"]), names
    if names:
        assert child.returncode == 0
        written = [out / "index.html", *sorted((out / "instructions").iterdir())]
        assert len(written) == 1 + len(load_default().instructions)  # index, one per instruction
        for page in written:
            assert page.read_text(encoding="utf-8").rstrip().endswith("</html>"), page
    else:
        assert child.returncode == 128 + signum
