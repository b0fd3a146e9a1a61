"""Conformance overhead: the golden-set run against the oracle versus merely decoding the files.

Measured in one process, best of ``--repeat`` rounds each (the rounds alternate), every round with
the caches emptied as in a fresh process (``sm5.conformance.oracle_impl.clear_caches``: parsed
lines and programs, legality verdicts, state shapes, guard words):

* decode, JSON: read every vector file and decode each line into a ``sm5.vectors.format.Vector``
  (JSON parse plus field checks);
* decode, typed: the same, plus each vector's program parsed (once per distinct text, as the
  run caches it): every field the run uses is then a typed value (the field checks build the
  initial ``MachineState``, which the vector keeps, and check the ``ExpectedState``, which a run
  reads only to describe a difference); nothing is executed or judged;
* conformance: ``sm5.conformance.run.run`` with the oracle as the implementation: reading, decoding,
  executing every vector and judging the answer.

The spec is loaded once before timing (a run loads it once too); the functions the oracle
generates from it (each rule compiled, each instruction's lane and legality functions) are built
in the first round and kept, as by every later run of a process (a fresh process pays about
0.1 s for them once). Prints the three times, the vectors per second of each and the two ratios;
exits 1 when conformance / typed decode exceeds ``--budget`` (default 2, the aim). ``--parts``
then times one more conformance run with a timer around each part of its path (:data:`PARTS`)
and prints where its time goes and how many calls each part took (the timers add a little time
of their own, so that run is slower than the best one).

    python benchmarks/conformance_overhead.py [--vectors PATH ...] [--repeat 3] [--budget 2]
                                              [--parts]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from sm5.conformance import oracle_impl
from sm5.conformance import run as run_module
from sm5.conformance.oracle_impl import OracleImplementation, clear_caches
from sm5.conformance.run import run, vector_files
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.model.spec import load_default
from sm5.vectors import format as vector_format
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
            if vector.decoded_state is None:
                raise SystemExit(f"{vector.id}: read without its typed state")
            count += 1
    return count


def conform(files: Sequence[Path]) -> int:
    clear_caches()
    report = run(OracleImplementation(), files)
    if report.failed:
        raise SystemExit(f"the oracle failed {len(report.failures())} vectors; "
                         "the measurement would be meaningless")
    return len(report.verdicts)


#: The parts of a conformance run timed by ``--parts``: (module, function, what it does).
PARTS: tuple[tuple[ModuleType | type, str, str], ...] = (
    (vector_format.Vector, "from_json", "checking each line's fields into a vector"),
    (oracle_impl, "_plan", "parsing each program, finding its instruction (the oracle)"),
    (oracle_impl, "rejection", "legality"),
    (oracle_impl, "run_program", "the program's execution (the interpreter)"),
    (run_module, "judge_answer", "judging the answer"),
    (oracle_impl, "request_state", "the request's machine state (the oracle)"),
    (run_module, "request_vector", "adding guard words to the request"),
    (oracle_impl, "_check_shape", "checking the state's shape (the oracle)"),
    (oracle_impl, "representative", "the oracle's representative answer"),
    (run_module, "early_verdict", "deciding whether to send the vector"),
    (oracle_impl, "guards_kept", "the oracle's guard words put back"),
)


def timed_parts(files: Sequence[Path]) -> tuple[float, dict[str, tuple[float, int]]]:
    """One conformance run with a timer around each of :data:`PARTS`: (its time, each part's
    time and number of calls)."""
    spent = dict.fromkeys((what for _, _, what in PARTS), 0.0)
    calls = dict.fromkeys(spent, 0)
    # The attribute as stored (a class keeps its classmethod), to be put back as it was.
    originals = [(owner, name, vars(owner)[name]) for owner, name, _ in PARTS]

    def timer(function: Callable[..., Any], what: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[what] += time.perf_counter() - start
                calls[what] += 1
        timed.cache_clear = getattr(function, "cache_clear", None)  # type: ignore[attr-defined]
        return timed

    try:
        for owner, name, what in PARTS:
            setattr(owner, name, timer(getattr(owner, name), what))
        start = time.perf_counter()
        conform(files)
        return time.perf_counter() - start, {what: (spent[what], calls[what]) for what in spent}
    finally:
        for owner, name, stored in originals:
            setattr(owner, name, stored)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vectors", type=Path, nargs="+", default=None,
                        help="vector files or folders (default: the golden set)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (best of)")
    parser.add_argument("--budget", type=float, default=2.0,
                        help="largest acceptable conformance / typed-decode ratio")
    parser.add_argument("--parts", action="store_true",
                        help="then time one more run part by part")
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
    if args.parts:
        total, spent = timed_parts(files)
        print(f"one run with a timer per part: {total:.3f} s")
        for what, (seconds, calls) in sorted(spent.items(), key=lambda item: -item[1][0]):
            print(f"  {seconds:6.3f} s  {calls:7d} calls  {what}")
        rest = total - sum(seconds for seconds, _ in spent.values())
        print(f"  {rest:6.3f} s  {'':13}  the rest (reading the files, JSON, the engine's "
              "bookkeeping, the timers)")
    return 0 if typed <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
