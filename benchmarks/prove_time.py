"""How long ``sm5 prove`` takes: every theorem once, per-theorem times and the total.

Usage: ``python benchmarks/prove_time.py [--work UNITS] [--jobs N]``. The whole run is meant to
stay well under a minute on two cores; the exit code is 1 if it does not or if a theorem failed.
It also prints the z3 work each theorem took, and how much of the per-theorem budget the hardest
one used.
"""

from __future__ import annotations

import argparse
import sys
import time

from sm5.oracle.proofs import DEFAULT_WORK, run_all

#: The run must finish well inside this (seconds).
LIMIT_SECONDS = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--work", type=int, default=DEFAULT_WORK,
                        help="z3 work per theorem (default: sm5 prove's)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run_all(work=args.work, jobs=args.jobs)
    wall = time.perf_counter() - start
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
    bad = [r for r in results if r.status in ("failed", "timeout")]
    return 1 if bad or wall > LIMIT_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
