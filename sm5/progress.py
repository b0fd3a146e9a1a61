"""Progress of a long step on standard error.

On a terminal: a tqdm bar (count, rate, time left). Elsewhere (a pipe, a CI job): one status line
every ``interval`` seconds (10, or ``SM5_PROGRESS_INTERVAL``), such as
``conform oracle: 2400/8325 vectors (29%), 80/s, 30 s``, and a last line at the end when a status
line was written. ``quiet``: nothing at all. Progress never goes to standard output, which stays
for results.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

#: Seconds between two status lines when standard error is not a terminal (the environment
#: variable ``SM5_PROGRESS_INTERVAL`` overrides it).
STATUS_INTERVAL = 10.0
INTERVAL_VARIABLE = "SM5_PROGRESS_INTERVAL"


# No monitor thread: a bar is redrawn from update() only, and no thread outlives a bar in a
# process that goes on to other work (z3, forked workers).
tqdm.monitor_interval = 0


class Progress:
    """Counts done items of one step; see the module docstring for what it shows."""

    def __init__(self, what: str, total: int | None = None, *, unit: str = "vectors",
                 quiet: bool = False, stream: TextIO | None = None,
                 interval: float | None = None) -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.interval = status_interval() if interval is None else interval
        self.quiet = quiet
        self.started = time.monotonic()
        self._last = self.started
        self._lines = 0
        self._bar: Any = None
        if not quiet and _isatty(self.stream):
            self._bar = tqdm(total=total, desc=what, unit=f" {unit}", file=self.stream,
                             dynamic_ncols=True, leave=False, mininterval=0.2)

    def update(self, count: int = 1) -> None:
        self.advance_to(self.done + count)

    def advance_to(self, done: int) -> None:
        """Set the number of items done (for steps that count elsewhere)."""
        step, self.done = done - self.done, done
        if self.quiet:
            return
        if self._bar is not None:
            if step > 0:
                self._bar.update(step)
            return
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._status(now)

    def status_line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        of = f"/{self.total}" if self.total else ""
        share = f" ({100.0 * self.done / self.total:.0f}%)" if self.total else ""
        return (f"{self.what}: {self.done}{of} {self.unit}{share}, "
                f"{self.done / elapsed:.0f}/s, {elapsed:.0f} s")

    def _status(self, now: float) -> None:
        self.stream.write(self.status_line(now) + "\n")
        self.stream.flush()
        self._lines += 1

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._lines and not self.quiet:
            self._status(time.monotonic())
            self._lines = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def status_interval() -> float:
    """``SM5_PROGRESS_INTERVAL`` when it is a number of seconds >= 0, else the default."""
    try:
        value = float(os.environ.get(INTERVAL_VARIABLE, STATUS_INTERVAL))
    except ValueError:
        return STATUS_INTERVAL
    return value if value >= 0 else STATUS_INTERVAL


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
