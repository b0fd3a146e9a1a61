"""Conformance overhead: the golden-set run against the oracle versus merely decoding the files.

Measured in one process, best of ``--repeat`` rounds each (the rounds alternate):

* decode: read every vector file and decode each line into a ``vectors.format.Vector`` (JSON
  parse plus field checks), nothing else;
* conformance: ``conformance.run.run`` with the oracle as the implementation: the same reading and
  decoding, then executing every vector and judging the answer. The program and legality caches
  are emptied before each round, so every round pays for filling them.

The spec is loaded once before timing (a run loads it once too). Prints both times, their ratio
and the vectors per second of each; exits 1 when the ratio exceeds ``--budget`` (default 4).

    python benchmarks/conformance_overhead.py [--vectors PATH ...] [--repeat 3] [--budget 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from conformance.oracle_impl import OracleImplementation, parsed, rejection
from conformance.run import run, vector_files
from oracle.spec import load_default
from vectors.format import read_file


def decode(files: Sequence[Path]) -> int:
    count = 0
    for file in files:
        _, vectors = read_file(file)
        for _ in vectors:
            count += 1
    return count


def conform(files: Sequence[Path]) -> int:
    parsed.cache_clear()
    rejection.cache_clear()
    report = run(OracleImplementation(), files)
    if report.failed:
        raise SystemExit(f"the oracle failed {len(report.failures())} vectors; "
                         "the measurement would be meaningless")
    return len(report.verdicts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vectors", type=Path, nargs="+", default=None,
                        help="vector files or folders (default: the golden set)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (best of)")
    parser.add_argument("--budget", type=float, default=4.0,
                        help="largest acceptable conformance / decode ratio")
    args = parser.parse_args(argv)
    files = vector_files(args.vectors)
    load_default()
    best_decode = best_conform = float("inf")
    count = 0
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        count = decode(files)
        best_decode = min(best_decode, time.perf_counter() - start)
        start = time.perf_counter()
        judged = conform(files)
        best_conform = min(best_conform, time.perf_counter() - start)
        assert judged == count
    ratio = best_conform / best_decode
    print(f"vectors: {count} in {len(files)} files")
    print(f"decode only:      {best_decode:8.3f} s  {count / best_decode:10.0f} vectors/s")
    print(f"conformance run:  {best_conform:8.3f} s  {count / best_conform:10.0f} vectors/s")
    print(f"ratio conformance / decode: {ratio:.2f}x (budget {args.budget:g}x)")
    return 0 if ratio <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
