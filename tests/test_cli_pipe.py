"""A closed pipe ends a command quietly: ``sm5 exec FILE | head -1`` stops with the shell's code
of a command killed by SIGPIPE (141) and says nothing, never "internal error" (exit 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sm5.cli import main

ROOT = Path(__file__).resolve().parents[1]
SYNC = ROOT / "vectors" / "golden" / "sync.jsonl"


class ClosedPipe:
    """A standard output whose reader has gone: every write and flush fails as a pipe does."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("no file descriptor")

    def isatty(self) -> bool:
        return False


def first_vector(tmp_path: Path) -> Path:
    with SYNC.open(encoding="utf-8") as lines:
        next(lines)  # the header
        path = tmp_path / "vector.json"
        path.write_text(next(lines), encoding="utf-8")
    return path


def test_exec_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """The real thing: the reader end of the pipe is closed before the command writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run([sys.executable, "-m", "sm5", "exec", str(first_vector(tmp_path))],
                             stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                             check=False, cwd=tmp_path)
    finally:
        os.close(write_end)
    assert run.returncode in (0, 141)
    assert run.stderr == ""


@pytest.mark.parametrize("argv", [
    ["spec", "check"],
    ["exec", "VECTOR"],
    ["conform", "--impl", "oracle", "--vectors", str(SYNC), "--quiet"],
    ["requests", "--vectors", str(SYNC), "--out", "OUT/requests.jsonl"],
    ["dxbc", "--vectors", str(SYNC), "--out", "OUT/dxbc"],
    ["d3d11", "stream", "--vectors", str(SYNC), "--out", "OUT/stream.sm5d3d11"],
    ["prove", "--instruction", "sync", "--jobs", "1"],
    ["report", "--vectors", str(SYNC), "--out", "OUT/report"],
], ids=lambda argv: " ".join(argv[:2]))
def test_every_printing_command_stops_quietly(argv: list[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(first_vector(tmp_path)) if a == "VECTOR" else a.replace("OUT", str(tmp_path))
            for a in argv]
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(args) == 141
    assert "error" not in capsys.readouterr().err
