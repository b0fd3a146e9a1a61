"""Run the ``sm5`` command line in a child with a time limit and an address-space limit.

Each attack test runs through :func:`run_sm5`: the command must end within ``seconds`` and
inside ``memory`` bytes of address space, so "one clear error within seconds and bounded memory"
is checked, not assumed. The limit is generous for a Python process with z3 loaded and small
beside what the attacks reached before they were bounded (gigabytes).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MEMORY_LIMIT = 3 * 1024**3
TIME_LIMIT = 60.0


@dataclass(frozen=True)
class Completed:
    code: int
    stdout: str
    stderr: str


def _limit_memory(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_sm5(args: Sequence[str], *, cwd: Path | None = None, seconds: float = TIME_LIMIT,
            memory: int = MEMORY_LIMIT, env: dict[str, str] | None = None) -> Completed:
    """``python -m sm5 ARGS`` under the limits; a time-out fails the calling test."""
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONFAULTHANDLER", "1")
    done = subprocess.run([sys.executable, "-m", "sm5", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=seconds, env=child_env, check=False,
                          preexec_fn=lambda: _limit_memory(memory))
    return Completed(done.returncode, done.stdout, done.stderr)


def one_error_line(done: Completed, prefix: str = "sm5: error: ") -> str:
    """The single ``sm5: error:`` line of a failed run; no traceback anywhere."""
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(prefix), lines[0]
    assert len(lines[0]) < 2000, lines[0][:300]
    return lines[0]
