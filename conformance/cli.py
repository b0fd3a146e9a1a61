"""``sm5 conform`` (run the suite on one implementation) and ``sm5 mutants`` (the kill rate)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sm5.conformance.compare import Verdict
from sm5.conformance.expect_check import check_expectations, per_vector
from sm5.conformance.expectations import ExpectationError, load_expectations
from sm5.conformance.implementations import resolve
from sm5.conformance.interface import CAPABILITIES
from sm5.conformance.junit import write_junit
from sm5.conformance.mutants import all_mutants
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.protocol import DEFAULT_BREAKER, DEFAULT_TIMEOUT
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
from sm5.oracle.cli.options import count_or_zero, positive_seconds, word_list, writable_file
from sm5.oracle.files.atomic import atomic_write_text
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
    conform.add_argument("--check-expect", action="store_true",
                         help="check the expectations file against this run: fail, naming "
                         "them, on every failure no entry explains and on every entry that "
                         "matches no vector or explains no divergence")
    conform.add_argument("--show-matches", action="store_true",
                         help="print the per-vector view: every vector an entry decides or "
                         "that fails, with its verdict and the entry")
    conform.add_argument("--max-consecutive-errors", type=int, default=DEFAULT_BREAKER,
                         metavar="K", help="stop a cmd: implementation after K consecutive "
                         f"time-outs or crashes (default {DEFAULT_BREAKER}; 0: never)")
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
    timeout = positive_seconds(args.timeout, "--timeout")
    breaker = count_or_zero(args.max_consecutive_errors, "--max-consecutive-errors")
    caps = word_list(args.capabilities, "--capabilities", CAPABILITIES) \
        if args.capabilities is not None else None
    if args.json is not None:
        writable_file(args.json, "--json")
    expectations = load_expectations(args.expect)
    if (args.check_expect or args.show_matches) and args.expect is None:
        raise ExpectationError("--check-expect and --show-matches need --expect FILE")
    shard = parse_shard(args.shard)
    files = vector_files(args.vectors)
    impl = resolve(args.impl, timeout=timeout, capabilities=caps, breaker=breaker,
                   search_path=(Path.cwd(),))
    select = parse_select(args.select)
    with Progress(f"conform {impl.name}", planned_count(files, shard, select),
                  quiet=args.quiet) as progress:
        report = run(impl, files, expectations, shard,
                     progress=lambda _id, _verdict: progress.update(),
                     require_used=not args.check_expect, select=select)
    if args.json is not None:
        write_results(args.json, report)
    if args.junit is not None:
        write_junit(args.junit, report)
    vectors: list[Vector] = []
    if args.check_expect or args.show_matches:
        vectors = [v for _, _, v in iter_selected(files, shard, select)]
    if args.show_matches:
        print("\n".join(per_vector(expectations, vectors, report.verdicts)))
    print(summary(report))
    if not args.check_expect:
        return 1 if report.failed else 0
    check = check_expectations(expectations, vectors, report.verdicts)
    print(check.table())
    problems = check.problems()
    for line in problems:
        print(f"CHECK {line}")
    print(f"expectations {expectations.source}: "
          + (f"{len(problems)} problem(s)" if problems else "every entry holds"))
    return 1 if problems or report.failed else 0


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


@dataclass(frozen=True)
class KillMatrix:
    """Per mutant: the vectors that kill it, and the vectors where its answer differs from the
    bug-free naive translator's (where the bug is reachable at all)."""

    killing: dict[str, list[str]]
    reaching: dict[str, list[str]]

    def per_instruction(self) -> dict[str, tuple[int, int]]:
        """instruction -> (mutants killed by its vectors, mutants its vectors reach)."""
        out: dict[str, tuple[int, int]] = {}
        names = {v.split("/")[0] for ids in self.reaching.values() for v in ids}
        names |= {v.split("/")[0] for ids in self.killing.values() for v in ids}
        for ins in sorted(names):
            reached = [m for m, ids in self.reaching.items() if any(_of(v, ins) for v in ids)]
            killed = [m for m, ids in self.killing.items() if any(_of(v, ins) for v in ids)]
            out[ins] = (len(killed), len(set(reached) | set(killed)))
        return out


def _of(vector_id: str, instruction: str) -> bool:
    return vector_id.startswith(instruction + "/")


def first_kills(vectors: Sequence[Vector], progress: Progress | None = None) -> KillMatrix:
    """For every mutant, the first vector of ``vectors`` (in their order) that kills it, and
    nothing about reach: the kill rate of :func:`kill_matrix` at a fraction of its cost, since
    a mutant stops at its first failing vector (``sm5 pipeline`` puts the representative
    subset first)."""
    killing: dict[str, list[str]] = {}
    for name, cls in all_mutants().items():
        mutant = cls()
        killing[name] = []
        for v in vectors:
            if _kills(run_vector(mutant, v)):
                killing[name] = [v.id]
                break
        if progress is not None:
            progress.update(1)
    return KillMatrix(killing, {name: [] for name in killing})


def kill_matrix(vectors: Sequence[Vector], progress: Progress | None = None) -> KillMatrix:
    """For every mutant, the ids of the vectors that fail on it and that it answers differently
    from the bug-free base (sorted)."""
    base = NaiveTranslator()
    answers = {v.id: base.run(v) for v in vectors}
    killing: dict[str, list[str]] = {}
    reaching: dict[str, list[str]] = {}
    for name, cls in all_mutants().items():
        mutant = cls()
        killed, reached = [], []
        for v in vectors:
            verdict = run_vector(mutant, v)
            if _kills(verdict):
                killed.append(v.id)
            elif verdict.status not in ("not-applicable", "skip") and \
                    mutant.run(v) != answers[v.id]:
                reached.append(v.id)
        killing[name] = sorted(killed)
        reaching[name] = sorted(reached)
        if progress is not None:
            progress.update(len(vectors))
    return KillMatrix(killing, reaching)


def _kills(verdict: Verdict) -> bool:
    return verdict.status == "fail"


def mutants_json(matrix: KillMatrix, files: Sequence[str]) -> dict[str, Any]:
    killed = sum(1 for ids in matrix.killing.values() if ids)
    return {"format": MUTANTS_FORMAT, "vectors_files": list(files),
            "killed": killed, "total": len(matrix.killing),
            "per_instruction": {ins: {"killed": k, "reached": r}
                                for ins, (k, r) in matrix.per_instruction().items()},
            "mutants": {name: {"killed": bool(ids), "killing_vectors": ids,
                               "summary": _first_line(all_mutants()[name].__doc__)}
                        for name, ids in sorted(matrix.killing.items())}}


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if doc else ""


def run_mutants(args: argparse.Namespace) -> int:
    if args.json is not None:
        writable_file(args.json, "--json")
    files = vector_files(args.vectors)
    vectors = [v for _, _, v in iter_selected(files)]
    with Progress("mutants", len(vectors) * len(all_mutants()), unit="runs",
                  quiet=args.quiet) as progress:
        matrix = kill_matrix(vectors, progress)
    killing = matrix.killing
    width = max(len(n) for n in killing)
    print(f"{'mutant':<{width}}  killed  vectors  first killing vectors")
    for name, ids in sorted(killing.items()):
        first = ", ".join(ids[:KILLERS_SHOWN]) + (", ..." if len(ids) > KILLERS_SHOWN else "")
        print(f"{name:<{width}}  {'yes' if ids else 'NO':<6}  {len(ids):>7}  {first}")
    print("per instruction: mutants killed by its vectors / mutants whose answers differ on them")
    for ins, (k, r) in matrix.per_instruction().items():
        print(f"  {ins:<{width}}  {k}/{r}" + (f" ({100.0 * k / r:.1f}%)" if r else ""))
    killed = sum(1 for ids in killing.values() if ids)
    rate = 100.0 * killed / len(killing) if killing else 0.0
    print(f"kill rate: {killed}/{len(killing)} ({rate:.1f}%) over {len(vectors)} vectors")
    if args.json is not None:
        doc = mutants_json(matrix, [display_name(f) for f in files])
        atomic_write_text(args.json, results_text(doc))
    return 0 if killed == len(killing) else 1
