"""Checks of command-line options and output paths, done before any work starts.

A run that would fail only at its end (an unwritable ``--json``, a time-out of ``nan``) fails
at once instead, naming the option. Every check raises :class:`OptionError` (exit code 2).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sm5.oracle.errors import Sm5Error, bounded


class OptionError(Sm5Error):
    """An option's value is unusable."""


def positive_seconds(value: float | str, option: str) -> float:
    """A finite number of seconds greater than zero."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{option} {bounded(str(value))!r}: expected a number of seconds"
                          ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise OptionError(f"{option} {value}: expected a finite number of seconds above 0")
    return seconds


def count_or_zero(value: int | str, option: str) -> int:
    """A whole number of at least 0."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise OptionError(f"{option} {bounded(str(value))!r}: expected a whole number"
                          ) from None
    if number < 0:
        raise OptionError(f"{option} {value}: expected a whole number of at least 0")
    return number


def word_list(text: str, option: str, allowed: Iterable[str]) -> frozenset[str]:
    """A comma-separated, non-empty list drawn from ``allowed``."""
    words = frozenset(w.strip() for w in text.split(",") if w.strip())
    known = sorted(allowed)
    if not words:
        raise OptionError(f"{option} {text!r}: expected one or more of {', '.join(known)}, "
                          "comma-separated")
    unknown = sorted(words - set(known))
    if unknown:
        raise OptionError(f"{option}: unknown {', '.join(map(repr, unknown))}; expected one or "
                          f"more of {', '.join(known)}")
    return words


def writable_folder(path: Path, option: str) -> Path:
    """``path`` is (or can be made) a folder in which a file can be created: made if missing,
    then probed by creating and removing a temporary file in it."""
    if path.exists() and not path.is_dir():
        raise OptionError(f"{option} {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".sm5-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OptionError(f"{option} {path}: cannot write there ({exc.strerror or exc})"
                          ) from None
    return path


def writable_file(path: Path, option: str) -> Path:
    """``path`` can be written as a file: not a folder, and its folder writable."""
    if path.is_dir():
        raise OptionError(f"{option} {path}: is a folder; expected a file path")
    writable_folder(path.parent if str(path.parent) else Path("."), option)
    return path
