"""How long ``sm5 prove`` takes: every theorem once, per-theorem times, the total and its CPU time.

Usage: ``python benchmarks/prove_time.py [--work UNITS] [--jobs N]``. It prints the CPU time of
the whole run (loading the spec, building the z3 contexts and every theorem, worker processes
included) against the budget of :data:`CPU_BUDGET_SECONDS` CPU-seconds for the whole spec, as
a ratio; the exit code is 1 if a theorem failed, or if the run exceeds that budget or the wall
limit. It also prints the z3 work each theorem took, and how much of the per-theorem budget the
hardest one used.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from sm5.oracle.model.spec import load_default
from sm5.oracle.proofs import DEFAULT_WORK, run_all

#: The run must finish well inside this (seconds).
LIMIT_SECONDS = 60.0
#: The CPU time ``sm5 prove`` may take for the whole spec, as it grows (issue #26).
CPU_BUDGET_SECONDS = 120.0


def cpu_seconds() -> float:
    """User and system time of this process and of its finished worker processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--work", type=int, default=DEFAULT_WORK,
                        help="z3 work per theorem (default: sm5 prove's)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    start, cpu_start = time.perf_counter(), cpu_seconds()
    results = run_all(load_default(), work=args.work, jobs=args.jobs)
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    width = max(len(r.name) for r in results)
    for r in sorted(results, key=lambda r: -r.seconds):
        print(f"{r.name:<{width}}  {r.status:<26}  {r.seconds * 1000:8.1f} ms  "
              f"{r.work:>12,} work")
    slowest = max(results, key=lambda r: r.seconds)
    print(f"{len(results)} theorems; sum {sum(r.seconds for r in results):.2f} s; "
          f"wall {wall:.2f} s (context building included); slowest {slowest.name} "
          f"{slowest.seconds:.2f} s")
    hardest = max(results, key=lambda r: r.work)
    print(f"most work: {hardest.name} {hardest.work:,} z3 units, {hardest.work / args.work:.1%} "
          "of the per-theorem budget")
    print(f"CPU time: {cpu:.1f} CPU-s for the whole spec ({args.jobs} job(s), spec loading "
          f"included); budget {CPU_BUDGET_SECONDS:.0f} CPU-s; ratio "
          f"{cpu / CPU_BUDGET_SECONDS:.2f}")
    bad = [r for r in results if r.status in ("failed", "timeout")]
    return 1 if bad or wall > LIMIT_SECONDS or cpu > CPU_BUDGET_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
