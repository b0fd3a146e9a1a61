"""``python -m sm5`` as a process group of its own (a terminal's foreground job), for the tests
that signal a run: whatever is left of the group when the test ends is killed with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def sm5_group(args: Sequence[str], cwd: Path, **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """Start ``python -m sm5 ARGS`` in a session of its own; on leaving, kill its group if
    the run is still going (a failed assertion must not leave it behind)."""
    child = subprocess.Popen([sys.executable, "-m", "sm5", *args], cwd=cwd, text=True,
                             start_new_session=True, **popen)
    try:
        yield child
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
