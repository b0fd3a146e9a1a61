"""``sm5 vectors generate`` and ``sm5 vectors check``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sm5.oracle.spec import load_default
from sm5.progress import Progress
from sm5.vectors.check import check
from sm5.vectors.format import VectorError, read_header
from sm5.vectors.generate import DEFAULT_SEED, GOLDEN, PLANS, expected_count, generate

#: Where ``generate --level 2`` writes unless told otherwise (not committed).
LEVEL2_OUT = Path("build") / "vectors-level2"
#: Where regression vectors exported from failing property tests live.
REGRESSIONS = GOLDEN.parent / "regressions"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    vectors = sub.add_parser("vectors", help="generate and check the golden vectors")
    vsub = vectors.add_subparsers(dest="vectors_command", required=True, metavar="SUBCOMMAND")
    gen = vsub.add_parser(
        "generate", help="write one JSON Lines file per instruction and MANIFEST.json",
        description="Level 1 is the committed golden set (vectors/golden/); level 2 is a much "
        "larger set generated on demand. Same spec and seed give byte-identical files.")
    gen.add_argument("--level", type=int, choices=sorted(PLANS), default=1,
                     help="1: the golden set (default); 2: a much larger set, "
                     f"{PLANS[2].random_cases:,} random cases per instruction on top of a "
                     "denser systematic part")
    gen.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="N",
                     help=f"seed of every random choice (default {DEFAULT_SEED}, the golden "
                     "set's); the same seed gives byte-identical files")
    gen.add_argument("--out", type=Path, default=None,
                     help=f"output folder (default: the golden folder for level 1, "
                     f"{LEVEL2_OUT} for level 2)")
    _quiet_option(gen)
    gen.set_defaults(handler=run_generate)
    chk = vsub.add_parser(
        "check", help="validate, re-run through the oracle, compare with the manifest and a "
        "regeneration",
        description="Fails (exit 1) naming the file, line, vector id and reason of each "
        "problem.")
    chk.add_argument("--dir", type=Path, default=GOLDEN, help="golden folder to check")
    chk.add_argument("--no-regenerate", action="store_true",
                     help="skip the byte-identical regeneration")
    chk.add_argument("--regressions", type=Path, default=REGRESSIONS,
                     help="regression vectors to validate and re-run too (if present)")
    _quiet_option(chk)
    chk.set_defaults(handler=run_check)


def _quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on standard error (a bar on a terminal, else a "
                        "status line every few seconds)")


def run_generate(args: argparse.Namespace) -> int:
    out = args.out or (GOLDEN if args.level == 1 else LEVEL2_OUT)
    start = time.monotonic()
    names = load_default().instructions
    with Progress(f"vectors generate level {args.level}", expected_count(len(names),
                  PLANS[args.level]), quiet=args.quiet) as progress:
        reports = generate(out, level=args.level, seed=args.seed,
                           on_progress=progress.advance_to)
    total = sum(r.count for r in reports)
    size = sum(r.bytes for r in reports)
    for r in reports:
        print(f"  {r.path:<24} {r.count:>9} vectors {r.bytes:>12} bytes")
    print(f"{total} vectors, {size} bytes in {out} ({time.monotonic() - start:.1f} s)")
    return 0


def _vector_lines(folder: Path) -> int | None:
    """The vectors the golden folder's headers announce (the regeneration makes as many)."""
    try:
        return sum(read_header(path).count for path in sorted(folder.glob("*.jsonl")))
    except VectorError:
        return None  # the check itself reports the file


def run_check(args: argparse.Namespace) -> int:
    regressions = args.regressions
    extra = sorted(regressions.glob("*.jsonl")) if regressions.is_dir() else []
    with Progress("vectors check: regeneration", _vector_lines(args.dir),
                  quiet=args.quiet or args.no_regenerate) as progress:
        report = check(args.dir, regenerate=not args.no_regenerate, extra=extra,
                       on_progress=progress.advance_to)
    for problem in report.problems:
        print(problem)
    if not report.ok:
        print(f"vectors check failed: {len(report.problems)} problem(s)", file=sys.stderr)
        return 1
    what = "schema, oracle and manifest agree" + ("" if args.no_regenerate else
                                                    "; the regeneration is byte-identical")
    print(f"vectors ok: {report.files} files, {report.vectors} vectors; {what}")
    return 0
