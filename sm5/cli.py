"""``sm5``: the command line. Each package contributes subcommands through ``add_parser``.

Exit codes: 0 success, 1 a check failed, 2 bad input (a malformed spec, vector, asm line, an
unusable option or output path), 3 an internal error (a defect of sm5 itself: one line on standard
error; ``SM5_TRACEBACK=1`` prints the traceback too), 130 interrupted, 143 terminated, 141 standard
output closed by its reader (``sm5 exec FILE | head -1``: the command stops quietly, as one killed
by SIGPIPE does).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from sm5 import pipeline
from sm5.conformance import cli as conformance_cli
from sm5.conformance import offline_cli
from sm5.conformance.d3d11 import cli as d3d11_cli
from sm5.oracle.cli import dxbc as dxbc_cli
from sm5.oracle.cli import exec as exec_cli
from sm5.oracle.cli import prove as prove_cli
from sm5.oracle.cli import spec as spec_cli
from sm5.oracle.errors import Sm5Error, bounded
from sm5.reports import cli as reports_cli
from sm5.vectors import cli as vectors_cli

Registrar = Callable[[argparse._SubParsersAction], None]  # type: ignore[type-arg]

REGISTRARS: tuple[Registrar, ...] = (
    spec_cli.add_parser,
    exec_cli.add_parser,
    conformance_cli.add_parser,
    offline_cli.add_parser,
    dxbc_cli.add_parser,
    d3d11_cli.add_parser,
    prove_cli.add_parser,
    reports_cli.add_parser,
    vectors_cli.add_parser,
    pipeline.add_parser,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sm5", description="Executable specification and conformance suite for Direct3D 11 "
        "Shader Model 5 assembly.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in REGISTRARS:
        register(sub)
    return parser


INTERNAL_ERROR = 3
#: A reader closed standard output: the shell's code of a command killed by SIGPIPE (128 + 13).
CLOSED_PIPE = 141


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread so that ``finally`` blocks clean up (part
    files, worker processes) exactly as on Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if on_main_thread else None
    try:
        return _run(argv)
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(argv: Sequence[str] | None) -> int:
    try:  # a signal while the command line is read interrupts as quietly as one later
        args = build_parser().parse_args(argv)
        code: int = args.handler(args)
        sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
    except BrokenPipeError:
        return _closed_pipe()
    except Sm5Error as exc:
        print(f"sm5: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sm5: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("sm5: terminated", file=sys.stderr)
        return 143
    except Exception as exc:  # a defect of sm5, not of the input: its own exit code
        if os.environ.get("SM5_TRACEBACK"):
            traceback.print_exc()
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
        print(f"sm5: internal error{at}: {type(exc).__name__}: {bounded(str(exc))} (a defect "
              "of sm5; SM5_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return INTERNAL_ERROR
    return code


def _closed_pipe() -> int:
    """Standard output's reader has gone (``| head -1``): stop without a word. Standard output
    is pointed at the null device so that the interpreter's last flush at exit, which would
    meet the closed pipe again, writes nowhere instead of printing an error."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to flush
        pass
    return CLOSED_PIPE
