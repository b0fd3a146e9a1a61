"""``sm5``: the command line. Each package contributes subcommands through ``add_parser``.

Exit codes: 0 success, 1 a check failed, 2 bad input (a malformed spec, vector, asm line, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from sm5 import pipeline
from sm5.conformance import cli as conformance_cli
from sm5.conformance import offline_cli
from sm5.oracle import dxbc_cli, exec_cli, prove_cli, spec_cli
from sm5.oracle.errors import Sm5Error
from sm5.reports import cli as reports_cli
from sm5.vectors import cli as vectors_cli

Registrar = Callable[[argparse._SubParsersAction], None]  # type: ignore[type-arg]

REGISTRARS: tuple[Registrar, ...] = (
    spec_cli.add_parser,
    exec_cli.add_parser,
    conformance_cli.add_parser,
    offline_cli.add_parser,
    dxbc_cli.add_parser,
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except Sm5Error as exc:
        print(f"sm5: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sm5: interrupted", file=sys.stderr)
        return 130
    return code
