"""Conformance overhead: the golden-set run against the oracle versus merely decoding the files.

Measured in one process, best of ``--repeat`` rounds each (the rounds alternate), every round with
empty caches:

* decode, JSON: read every vector file and decode each line into a ``sm5.vectors.format.Vector``
  (JSON parse plus field checks);
* decode, typed: the same, then every field into the project's typed values, as the run needs
  them: the program (asm parse, once per distinct text, as the run caches it), the initial
  ``MachineState`` and the expected ``ExpectedState``; nothing is executed or judged;
* conformance: ``sm5.conformance.run.run`` with the oracle as the implementation: reading, decoding,
  executing every vector and judging the answer.

The spec is loaded once before timing (a run loads it once too). Prints the three times, the
vectors per second of each and the two ratios; exits 1 when conformance / typed decode exceeds
``--budget`` (default 2, the aim).

    python benchmarks/conformance_overhead.py [--vectors PATH ...] [--repeat 3] [--budget 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sm5.conformance.oracle_impl import OracleImplementation, clear_caches
from sm5.conformance.run import run, vector_files
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.spec import load_default
from sm5.oracle.state import expected_from_json, state_from_json
from sm5.vectors.format import read_file


def decode_json(files: Sequence[Path]) -> int:
    count = 0
    for file in files:
        _, vectors = read_file(file)
        for _ in vectors:
            count += 1
    return count


def decode_typed(files: Sequence[Path]) -> int:
    clear_caches()
    count = 0
    for file in files:
        _, vectors = read_file(file)
        for vector in vectors:
            parse_vector_program(vector.program)
            state_from_json(vector.state)
            if "state" in vector.expect:
                expected_from_json(vector.expect["state"])
            count += 1
    return count


def conform(files: Sequence[Path]) -> int:
    clear_caches()
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
    parser.add_argument("--budget", type=float, default=2.0,
                        help="largest acceptable conformance / typed-decode ratio")
    args = parser.parse_args(argv)
    files = vector_files(args.vectors)
    load_default()
    steps: dict[str, Callable[[Sequence[Path]], int]] = {
        "decode, JSON": decode_json, "decode, typed": decode_typed, "conformance run": conform}
    best = dict.fromkeys(steps, float("inf"))
    counts: set[int] = set()
    for _ in range(max(1, args.repeat)):
        for label, step in steps.items():
            start = time.perf_counter()
            counts.add(step(files))
            best[label] = min(best[label], time.perf_counter() - start)
    (count,) = counts
    print(f"vectors: {count} in {len(files)} files")
    for label, seconds in best.items():
        print(f"{label + ':':<17} {seconds:8.3f} s  {count / seconds:9.0f} vectors/s")
    run_time = best["conformance run"]
    typed = run_time / best["decode, typed"]
    print(f"conformance / decode, JSON:  {run_time / best['decode, JSON']:6.2f}x")
    print(f"conformance / decode, typed: {typed:6.2f}x (budget {args.budget:g}x)")
    return 0 if typed <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
