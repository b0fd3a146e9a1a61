"""How long ``sm5 prove`` takes: every theorem once, per-theorem times and the total.

Usage: ``python benchmarks/prove_time.py [--timeout-ms MS]``. The whole run is meant to stay well
under a minute on two cores; the exit code is 1 if it does not or if a theorem failed.
"""

from __future__ import annotations

import argparse
import sys
import time

from sm5.oracle.proofs import DEFAULT_TIMEOUT_MS, run_all

#: The run must finish well inside this (seconds).
LIMIT_SECONDS = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run_all(timeout_ms=args.timeout_ms)
    wall = time.perf_counter() - start
    width = max(len(r.name) for r in results)
    for r in sorted(results, key=lambda r: -r.seconds):
        print(f"{r.name:<{width}}  {r.status:<26}  {r.seconds * 1000:8.1f} ms")
    slowest = max(results, key=lambda r: r.seconds)
    print(f"{len(results)} theorems; sum {sum(r.seconds for r in results):.2f} s; "
          f"wall {wall:.2f} s (context building included); slowest {slowest.name} "
          f"{slowest.seconds:.2f} s")
    bad = [r for r in results if r.status in ("failed", "timeout")]
    return 1 if bad or wall > LIMIT_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
