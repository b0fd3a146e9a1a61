"""``sm5 vectors generate`` and ``sm5 vectors check``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sm5.oracle.cli.options import OptionError, writable_folder
from sm5.oracle.model.spec import load_default
from sm5.progress import Progress
from sm5.vectors.check import check, check_incremental
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
                     f"denser systematic part, and {PLANS[2].random_programs:,} random programs "
                     "with flow control (flow_random.jsonl)")
    gen.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="N",
                     help=f"seed of every random choice (default {DEFAULT_SEED}, the golden "
                     "set's); the same seed gives byte-identical files")
    gen.add_argument("--out", type=Path, default=None,
                     help=f"output folder (default for level 2: {LEVEL2_OUT}; level 1 needs "
                     "--out or --golden)")
    gen.add_argument("--golden", action="store_true",
                     help="replace the golden set of this source checkout (vectors/golden/); "
                     "refused in an installed package")
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
    chk.add_argument("--full", action="store_true",
                     help="check every file; by default a file unchanged since it last passed "
                     "here, with its spec, the shared definitions it uses and the code, is "
                     "not checked again")
    chk.add_argument("--regressions", type=Path, default=REGRESSIONS,
                     help="regression vectors to validate and re-run too (if present)")
    _quiet_option(chk)
    chk.set_defaults(handler=run_check)


def source_checkout_golden() -> Path | None:
    """The golden folder when this package runs from a source checkout (the project's
    ``pyproject.toml`` beside ``vectors/``), else None: an installed package's golden set is
    reference data that nothing writes."""
    project = GOLDEN.parent.parent / "pyproject.toml"
    try:
        text = project.read_text(encoding="utf-8")
    except OSError:
        return None
    return GOLDEN if 'name = "sm5-conformance"' in text else None


def output_folder(args: argparse.Namespace) -> Path:
    """Where generation writes; the golden set only when asked for with ``--golden``."""
    if args.golden:
        if args.out is not None or args.level != 1:
            raise OptionError("--golden writes the level-1 golden set; it takes no --out and "
                              "no --level 2")
        golden = source_checkout_golden()
        if golden is None:
            raise OptionError("--golden: this is an installed package, not a source checkout; "
                              "its golden set is never replaced (use --out DIR)")
        return golden
    if args.out is None:
        if args.level == 1:
            raise OptionError("level 1 needs --out DIR, or --golden to replace the golden set "
                              "of a source checkout")
        return LEVEL2_OUT
    if args.out.resolve() == GOLDEN.resolve() and source_checkout_golden() is None:
        raise OptionError(f"--out {args.out}: the installed golden set is never replaced")
    return Path(args.out)


def _quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on standard error (a bar on a terminal, else a "
                        "status line every few seconds)")

def run_generate(args: argparse.Namespace) -> int:
    out = writable_folder(output_folder(args), "--out")
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
        if args.full or args.no_regenerate:
            report = check(args.dir, regenerate=not args.no_regenerate, extra=extra,
                           on_progress=progress.advance_to)
        else:
            report = check_incremental(args.dir, extra=extra, on_progress=progress.advance_to)
    for problem in report.problems:
        print(problem)
    if not report.ok:
        print(f"vectors check failed: {len(report.problems)} problem(s)", file=sys.stderr)
        return 1
    what = "schema, oracle and manifest agree" + ("" if args.no_regenerate else
                                                    "; the regeneration is byte-identical")
    skipped = (f"; {report.unchanged} unchanged since they last passed (--full checks them)"
               if report.unchanged else "")
    print(f"vectors ok: {report.files} files, {report.vectors} vectors; {what}{skipped}")
    return 0
