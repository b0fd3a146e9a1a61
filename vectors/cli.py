"""``sm5 vectors generate`` and ``sm5 vectors check``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sm5.vectors.check import check
from sm5.vectors.generate import DEFAULT_SEED, GOLDEN, PLANS, generate

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
    gen.add_argument("--level", type=int, choices=sorted(PLANS), default=1)
    gen.add_argument("--seed", type=int, default=DEFAULT_SEED)
    gen.add_argument("--out", type=Path, default=None,
                     help=f"output folder (default: the golden folder for level 1, "
                     f"{LEVEL2_OUT} for level 2)")
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
    chk.set_defaults(handler=run_check)


def run_generate(args: argparse.Namespace) -> int:
    out = args.out or (GOLDEN if args.level == 1 else LEVEL2_OUT)
    start = time.monotonic()
    reports = generate(out, level=args.level, seed=args.seed,
                       progress=sys.stderr if sys.stderr.isatty() else None)
    total = sum(r.count for r in reports)
    size = sum(r.bytes for r in reports)
    for r in reports:
        print(f"  {r.path:<24} {r.count:>9} vectors {r.bytes:>12} bytes")
    print(f"{total} vectors, {size} bytes in {out} ({time.monotonic() - start:.1f} s)")
    return 0


def run_check(args: argparse.Namespace) -> int:
    regressions = args.regressions
    extra = sorted(regressions.glob("*.jsonl")) if regressions.is_dir() else []
    report = check(args.dir, regenerate=not args.no_regenerate, extra=extra)
    for problem in report.problems:
        print(problem)
    if not report.ok:
        print(f"vectors check failed: {len(report.problems)} problem(s)", file=sys.stderr)
        return 1
    what = "schema, oracle and manifest agree" + ("" if args.no_regenerate else
                                                    "; the regeneration is byte-identical")
    print(f"vectors ok: {report.files} files, {report.vectors} vectors; {what}")
    return 0
