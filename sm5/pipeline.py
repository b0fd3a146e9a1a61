"""``sm5 pipeline``: the main job. Spec check, proofs, vector check, conformance of every
available implementation, mutants, then the HTML report.

Every step runs even when an earlier one fails (the report shows what happened); the exit code is 1
when any step failed. Artefacts go to ``--out`` (default ``build/``): ``proofs.json``,
``results/<impl>.json``, ``mutants.json`` and ``report/index.html``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sm5.conformance import cli as conformance_cli
from sm5.conformance.d3d11.expectations_file import d3d11_expectations
from sm5.conformance.expectations import NONE, Expectations
from sm5.conformance.implementations import Unavailable, check_name, resolve
from sm5.conformance.mutants import all_mutants
from sm5.conformance.run import (
    display_name,
    iter_selected,
    planned_count,
    results_text,
    run,
    vector_files,
    write_results,
)
from sm5.conformance.subset import representative
from sm5.conformance.vkd3d.expectations_file import vkd3d_expectations
from sm5.oracle.cli.options import writable_folder
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.model.spec import load_default
from sm5.oracle.proofs import results_to_json, run_all
from sm5.progress import Progress
from sm5.reports import build_report
from sm5.vectors.check import check as check_golden
from sm5.vectors.format import Vector
from sm5.vectors.generate import GOLDEN

IMPLEMENTATIONS = ("oracle", "vkd3d", "d3d11", "d3d11:dxvk")
#: Implementations the pipeline runs on the representative subset of the golden set
#: (``sm5.conformance.subset``) unless ``--whole-set`` is given: a D3D11 implementation under
#: Wine runs a few programs per second, and vkd3d's run of the whole set is most of an hour on
#: a busy two-core machine. ``sm5 conform`` runs the whole set.
SUBSET_BY_DEFAULT = frozenset({"vkd3d", "d3d11", "d3d11:vulkan", "d3d11:dxvk"})


def wine_leaves_out() -> frozenset[str]:
    """The flow-control program files, left out of the D3D11 subset: they run under Wine on
    their own (docs/implementations/d3d11.md), because a run of the subset holding them ended in
    an access violation of Wine's Vulkan renderer on a later, unrelated vector in two of three
    runs. Read when a run starts: importing the pipeline never loads the spec."""
    return frozenset(load_default().control.instructions)


#: The expectations file of each real implementation (its known divergences).
EXPECTATIONS: dict[str, Callable[[], Expectations]] = {
    "vkd3d": vkd3d_expectations,
    "d3d11": d3d11_expectations,
    "d3d11:vulkan": lambda: d3d11_expectations("vulkan"),
    "d3d11:dxvk": lambda: d3d11_expectations("dxvk"),
}


@dataclass(frozen=True)
class StepResult:
    name: str
    ok: bool
    summary: str
    seconds: float


class StepLog:
    """A line on stdout when a step starts and when it ends; the long steps show their own
    progress on stderr (:mod:`sm5.progress`) unless ``quiet``."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def start(self, name: str) -> None:
        print(f"[pipeline] {name} ...", flush=True)

    def progress(self, what: str, total: int | None, unit: str = "vectors") -> Progress:
        return Progress(what, total, unit=unit, quiet=self.quiet)

    def end(self, result: StepResult) -> None:
        mark = "ok" if result.ok else "FAILED"
        print(f"[pipeline] {result.name}: {mark} ({result.seconds:.1f} s) {result.summary}",
              flush=True)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("pipeline", help="the main job: every check, then the HTML report",
                       description="The main job: spec check, proofs, vector check, conformance "
                       "of every available implementation, mutants, then the HTML report. Every "
                       "step runs even when an earlier one fails; exit 1 when any step failed. "
                       "Artefacts go to --out: proofs.json, results/<impl>.json, mutants.json "
                       "and report/index.html.")
    p.add_argument("--out", type=Path, default=Path("build"), help="artefact folder (build/)")
    p.add_argument("--impl", action="append", default=None, metavar="NAME",
                   help="implementations to run (default: oracle, and vkd3d, d3d11 and "
                   "d3d11:dxvk when available)")
    p.add_argument("--whole-set", action="store_true",
                   help="run every implementation on the whole golden set and every mutant on "
                   "every vector (default: vkd3d and the D3D11 implementations on its "
                   "representative subset; each mutant until its first killing vector)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress of the long steps on standard error")
    p.set_defaults(handler=run_pipeline)


def _step(name: str, progress: StepLog, body: Callable[[], tuple[bool, str]]) -> StepResult:
    progress.start(name)
    started = time.perf_counter()
    try:
        ok, summary = body()
    except Sm5Error as exc:
        ok, summary = False, f"error: {exc}"
    result = StepResult(name, ok, summary, time.perf_counter() - started)
    progress.end(result)
    return result


def run_pipeline(args: argparse.Namespace) -> int:
    out: Path = writable_folder(args.out, "--out")
    for name in args.impl or ():  # a name that cannot work fails now, not after the proofs
        check_name(name)
    progress = StepLog(args.quiet)
    steps: list[StepResult] = []
    proofs_json = out / "proofs.json"
    mutants_json = out / "mutants.json"
    results: list[Path] = []

    def spec_check() -> tuple[bool, str]:
        spec = load_default()
        return True, (f"{len(spec.instructions)} instructions, "
                      f"{sum(len(i.clauses) for i in spec.instructions.values())} clauses, "
                      f"{len(list(spec.legality_rules()))} rules")

    def prove() -> tuple[bool, str]:
        theorems = run_all(jobs=os.cpu_count() or 1)  # the same results as a serial run
        doc = results_to_json(theorems)
        atomic_write_text(proofs_json, results_text(doc))
        bad = [t.name for t in theorems if t.status in ("failed", "timeout")]
        return not bad, (f"{len(theorems)} theorems, " + (f"unexpected: {', '.join(bad)}"
                                                          if bad else "all as expected"))

    def check_vectors() -> tuple[bool, str]:
        # Without the per-vector oracle re-run of `sm5 vectors check`: the regeneration runs
        # the oracle on every vector already, so byte-identical files mean the stored
        # expectations are the oracle's (the regeneration is most of the step's time). Schema,
        # canonical form, ids, counts, justifications and the manifest are checked line by line.
        with progress.progress("vectors check: regeneration",
                               planned_count(vector_files(None))) as bar:
            report = check_golden(GOLDEN, oracle=False, on_progress=bar.advance_to)
        for problem in report.problems[:20]:
            print(f"  {problem}")
        return report.ok, (f"{report.files} files, {report.vectors} vectors"
                           + ("; regeneration byte-identical" if report.ok else
                              f"; {len(report.problems)} problem(s)"))

    steps.append(_step("spec check", progress, spec_check))
    steps.append(_step("proofs", progress, prove))
    steps.append(_step("golden vector check", progress, check_vectors))

    golden: list[tuple[Vector, ...]] = []

    def golden_vectors() -> tuple[Vector, ...]:
        """The golden set, read once for every implementation (and the subset's rule)."""
        if not golden:
            golden.append(tuple(v for _, _, v in iter_selected(vector_files(None))))
        return golden[0]

    for name in args.impl or IMPLEMENTATIONS:
        def conform(name: str = name) -> tuple[bool, str]:
            try:
                impl = resolve(name)
            except Unavailable as exc:
                return True, f"skipped: not available here ({exc.message})"
            known = EXPECTATIONS.get(name)
            expectations = known() if known is not None else NONE
            select: tuple[str, ...] = ()
            count = planned_count(vector_files(None))
            if name in SUBSET_BY_DEFAULT and not args.whole_set:
                leave_out = wine_leaves_out() if name.startswith("d3d11") else frozenset()
                select = representative(golden_vectors(), leave_out=leave_out)
                count = len(select)
            with progress.progress(f"conform {name}", count) as bar:
                report = run(impl, None, expectations, None,
                             progress=lambda _id, _v: bar.update(), select=select,
                             vectors=golden_vectors())
            path = out / "results" / f"{name.replace(':', '-')}.json"
            write_results(path, report)
            results.append(path)
            counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts().items()) if v)
            if select:
                counts += f" (the representative subset: {len(select)} vectors)"
            return not report.failed, counts
        steps.append(_step(f"conformance: {name}", progress, conform))

    def mutants() -> tuple[bool, str]:
        files = vector_files(None)
        vectors = list(golden_vectors())
        if args.whole_set:
            with progress.progress("mutants", len(vectors) * len(all_mutants()),
                                   unit="runs") as bar:
                matrix = conformance_cli.kill_matrix(vectors, bar)
            scope = "every vector"
        else:
            # The whole matrix is 137 mutants times every vector (most of an hour on two busy
            # cores); the kill rate needs one killing vector per mutant, looked for in the
            # representative subset first.
            first = set(representative(vectors))
            ordered = [v for v in vectors if v.id in first] + \
                [v for v in vectors if v.id not in first]
            with progress.progress("mutants", len(all_mutants()), unit="mutants") as bar:
                matrix = conformance_cli.first_kills(ordered, bar)
            scope = "the first killing vector of each; sm5 mutants gives the whole matrix"
        doc = conformance_cli.mutants_json(matrix, [display_name(f) for f in files])
        atomic_write_text(mutants_json, results_text(doc))
        killed = sum(1 for ids in matrix.killing.values() if ids)
        return killed == len(matrix.killing), (f"kill rate {killed}/{len(matrix.killing)} "
                                               f"({scope})")

    steps.append(_step("mutants", progress, mutants))

    report_path: list[Path] = []

    def report() -> tuple[bool, str]:
        path = build_report(out / "report",
                            proofs_json=proofs_json if proofs_json.exists() else None,
                            results_jsons=tuple(results),
                            mutants_json=mutants_json if mutants_json.exists() else None)
        report_path.append(path)
        return True, str(path)

    steps.append(_step("report", progress, report))
    failed = [s.name for s in steps if not s.ok]
    if failed:
        print(f"[pipeline] failed steps: {', '.join(failed)}")
    if report_path:
        print(f"report: {report_path[0]}")
    return 1 if failed else 0
