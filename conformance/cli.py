"""``sm5 conform`` (run the suite on one implementation) and ``sm5 mutants`` (the kill rate)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sm5.conformance.compare import Verdict
from sm5.conformance.expectations import load_expectations
from sm5.conformance.implementations import resolve
from sm5.conformance.junit import write_junit
from sm5.conformance.mutants import MUTANTS
from sm5.conformance.protocol import DEFAULT_TIMEOUT
from sm5.conformance.run import (
    RunReport,
    display_name,
    iter_selected,
    parse_select,
    parse_shard,
    planned_count,
    results_text,
    run,
    run_vector,
    vector_files,
    write_results,
)
from sm5.oracle.fileio import atomic_write_text
from sm5.progress import Progress
from sm5.vectors.format import Vector

MUTANTS_FORMAT = "sm5-mutants/1"
FAILURES_SHOWN = 20
DIFFS_SHOWN = 8
KILLERS_SHOWN = 3


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    conform = sub.add_parser(
        "conform", help="run the conformance vectors on an implementation",
        description="Run every vector on an implementation and judge it against the spec's "
        "acceptance sets. Exit 1 when a vector fails, crashes or times out (or an expected "
        "failure passes).")
    conform.add_argument("--impl", required=True, metavar="NAME",
                         help="oracle, mutant:NAME, vkd3d, cmd:\"program args\" or "
                         "module:factory (the module is looked up on sys.path, then in the "
                         "working directory)")
    select_options(conform)
    conform.add_argument("--json", type=Path, default=None, metavar="PATH",
                         help="write the results JSON here")
    conform.add_argument("--junit", type=Path, default=None, metavar="FILE",
                         help="write JUnit XML here (classname: instruction.category, name: "
                         "vector id)")
    conform.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                         help="per-vector time-out of a cmd: implementation")
    capabilities_option(conform)
    quiet_option(conform)
    conform.set_defaults(handler=run_conform)

    mutants = sub.add_parser(
        "mutants", help="run every bundled mutant and print the kill rate",
        description="Run each mutant (a plausible implementation bug) on the vectors. A mutant "
        "is killed when at least one vector fails on it. Exit 1 below 100%.")
    _vectors_option(mutants)
    mutants.add_argument("--json", type=Path, default=None, metavar="PATH",
                         help="write the kill matrix as JSON here")
    quiet_option(mutants)
    mutants.set_defaults(handler=run_mutants)


def select_options(parser: argparse.ArgumentParser) -> None:
    """Which vectors a run judges: files, ids or globs, shard, expectations."""
    _vectors_option(parser)
    parser.add_argument("--select", action="append", default=None, metavar="IDS",
                        help="only these vector ids or fnmatch globs (repeat or separate with "
                        "commas), e.g. '<instruction>/boundary/*'")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="run only shard I of N (1-based)")
    parser.add_argument("--expect", type=Path, default=None, metavar="FILE",
                        help="expectations file (YAML) of known divergences")


def capabilities_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--capabilities", default=None, metavar="LIST",
                        help="capabilities (executes, validates; comma-separated)")


def quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on standard error (a bar on a terminal, else a "
                        "status line every few seconds)")


def _vectors_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vectors", type=Path, nargs="+", default=None, metavar="PATH",
                        help="vector files or folders (default: the golden set)")


def run_conform(args: argparse.Namespace) -> int:
    caps = frozenset(c.strip() for c in args.capabilities.split(",") if c.strip()) \
        if args.capabilities else None
    expectations = load_expectations(args.expect)
    shard = parse_shard(args.shard)
    files = vector_files(args.vectors)
    impl = resolve(args.impl, timeout=args.timeout, capabilities=caps,
                   search_path=(Path.cwd(),))
    select = parse_select(args.select)
    with Progress(f"conform {impl.name}", planned_count(files, shard, select),
                  quiet=args.quiet) as progress:
        report = run(impl, files, expectations, shard, lambda _id, _verdict: progress.update(),
                     select)
    if args.json is not None:
        write_results(args.json, report)
    if args.junit is not None:
        write_junit(args.junit, report)
    print(summary(report))
    return 1 if report.failed else 0


def summary(report: RunReport) -> str:
    lines: list[str] = []
    failures = report.failures()
    for vector_id, verdict in failures[:FAILURES_SHOWN]:
        lines.append(f"{verdict.status.upper()} {vector_id}: {verdict.reason}")
        lines += [f"    {d}" for d in verdict.diffs[:DIFFS_SHOWN]]
        if len(verdict.diffs) > DIFFS_SHOWN:
            lines.append(f"    ... and {len(verdict.diffs) - DIFFS_SHOWN} more")
    if len(failures) > FAILURES_SHOWN:
        lines.append(f"... and {len(failures) - FAILURES_SHOWN} more failing vectors")
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items() if n)
    shard = f" (shard {report.shard})" if report.shard else ""
    lines.append(f"{report.impl}{shard}: {len(report.verdicts)} vectors: {counts or 'none'}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Mutants


def kill_matrix(vectors: Sequence[Vector], progress: Progress | None = None
                ) -> dict[str, list[str]]:
    """For every mutant, the ids of the vectors that fail on it (sorted)."""
    matrix: dict[str, list[str]] = {}
    for name, cls in MUTANTS.items():
        mutant = cls()
        matrix[name] = sorted(v.id for v in vectors if _kills(run_vector(mutant, v)))
        if progress is not None:
            progress.update(len(vectors))
    return matrix


def _kills(verdict: Verdict) -> bool:
    return verdict.status == "fail"


def mutants_json(matrix: dict[str, list[str]], files: Sequence[str]) -> dict[str, Any]:
    killed = sum(1 for ids in matrix.values() if ids)
    return {"format": MUTANTS_FORMAT, "vectors_files": list(files),
            "killed": killed, "total": len(matrix),
            "mutants": {name: {"killed": bool(ids), "killing_vectors": ids,
                               "summary": _first_line(MUTANTS[name].__doc__)}
                        for name, ids in sorted(matrix.items())}}


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if doc else ""


def run_mutants(args: argparse.Namespace) -> int:
    files = vector_files(args.vectors)
    vectors = [v for _, _, v in iter_selected(files)]
    with Progress("mutants", len(vectors) * len(MUTANTS), unit="runs",
                  quiet=args.quiet) as progress:
        matrix = kill_matrix(vectors, progress)
    width = max(len(n) for n in matrix)
    print(f"{'mutant':<{width}}  killed  vectors  first killing vectors")
    for name, ids in sorted(matrix.items()):
        first = ", ".join(ids[:KILLERS_SHOWN]) + (", ..." if len(ids) > KILLERS_SHOWN else "")
        print(f"{name:<{width}}  {'yes' if ids else 'NO':<6}  {len(ids):>7}  {first}")
    killed = sum(1 for ids in matrix.values() if ids)
    rate = 100.0 * killed / len(matrix) if matrix else 0.0
    print(f"kill rate: {killed}/{len(matrix)} ({rate:.1f}%) over {len(vectors)} vectors")
    if args.json is not None:
        doc = mutants_json(matrix, [display_name(f) for f in files])
        atomic_write_text(args.json, results_text(doc))
    return 0 if killed == len(matrix) else 1
