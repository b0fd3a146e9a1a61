"""The D3D11 adapter for the tests that run Wine's d3d11 for real: the runner is built (or
rebuilt, when runner.c changed) first when mingw-w64 is here and no other runner is named; the
test is skipped, saying why, only where D3D11 under Wine is unavailable."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sm5.conformance.d3d11.adapter import D3D11Runner, TargetUnavailable, create
from sm5.conformance.d3d11.host import runner_path

BUILD_SCRIPT = Path(__file__).resolve().parents[1] / "runners" / "d3d11" / "build.sh"
MINGW_CC = "x86_64-w64-mingw32-gcc"


def create_runner(variant: str = "") -> D3D11Runner:
    if shutil.which(MINGW_CC) and (not runner_path().is_file()
                                   or not os.environ.get("SM5_D3D11_RUNNER")):
        subprocess.run(["bash", str(BUILD_SCRIPT)], check=True, timeout=300,
                       stdout=subprocess.DEVNULL)
    try:
        return create(variant)
    except TargetUnavailable as exc:
        pytest.skip(f"D3D11 under Wine unavailable: {exc}")
