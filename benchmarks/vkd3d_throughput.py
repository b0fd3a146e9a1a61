"""Throughput of the vkd3d-shader + lavapipe adapter over the golden vectors, in one process.

Passes, each over every applicable vector (not must-reject), judged against the expectations:

* cold:        a new adapter and an empty Mesa disk cache: every distinct harness is encoded,
               translated, and compiled by Mesa (batched, as ``sm5 conform`` runs)
* mesa-warm:   a new adapter (in-process caches empty), Mesa's disk cache holding the shaders
* warm-single: the same adapter again, one ``run`` call per vector (the pytest plugin's way)
* warm:        the same adapter, batched through the engine (``run_batch``)
* oracle:      the same vectors on the oracle implementation through the same engine (its
               caches warm from a first pass), for the ratio warm / oracle measured in this run

Rates are vectors per CPU second (this process, the isolation zygotes and their children: on a
busy machine the wall clock measures the neighbours; on an idle one the two agree) and, beside
them, per wall-clock second. Vectors that leave shared memory undefined run in child processes
(isolated); their count, the dispatches run again first in a fresh child after their batch died
(quarantined), the children forked for them, how many died and the CPU time of the
isolation processes (part of the pass's), and the ratio warm / warm-single are printed. Every
pass must judge every vector the same (crashes of isolated vectors aside, which vary between
runs); the script says so when they differ.

Usage: python benchmarks/vkd3d_throughput.py [--every N] [--warm-passes K]
[VECTOR_FILE_OR_DIR ...] (``--every 5``: every fifth vector, for a quick look on a busy
machine; ``--warm-passes 3``: the warm pass three times, best of them reported too).
``LP_NUM_THREADS=N`` in the environment overrides the adapter's 0 (to compare with llvmpipe's
worker threads). Needs conformance/vkd3d/setup.sh to have run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sm5.conformance.compare import Verdict, judge
from sm5.conformance.expectations import load_expectations
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d.adapter import (
    EXPECTATIONS_FILE,
    TargetUnavailable,
    Vkd3dLavapipe,
    create,
)
from sm5.vectors.format import Vector

Pass = Callable[[Vkd3dLavapipe, Sequence[Vector]], dict[str, Verdict]]
EXPECTATIONS = load_expectations(EXPECTATIONS_FILE)


def batched(adapter: Vkd3dLavapipe, vectors: Sequence[Vector]) -> dict[str, Verdict]:
    try:
        from sm5.conformance.run import run_vectors
    except ImportError:  # a checkout from before batching: the engine ran one by one
        return single(adapter, vectors)
    return {v.id: verdict for v, verdict in run_vectors(adapter, vectors, EXPECTATIONS)}


def oracle_rate(vectors: Sequence[Vector]) -> float:
    """Vectors per CPU second of the oracle through the engine (the second of two passes)."""
    from sm5.conformance.run import run_vectors

    oracle = OracleImplementation()
    for _ in run_vectors(oracle, vectors, EXPECTATIONS):
        pass
    start = time.process_time()
    for _ in run_vectors(oracle, vectors, EXPECTATIONS):
        pass
    return len(vectors) / (time.process_time() - start)


def cpu_seconds(adapter: Vkd3dLavapipe) -> float:
    """CPU time of this process, its finished children, and the isolation zygotes with the
    children they reaped: on a busy machine the wall clock measures the neighbours, this the
    work (vectors per CPU second is about the rate of an idle core)."""
    own = os.times()
    total = own.user + own.system + own.children_user + own.children_system
    return total + adapter.isolation_cpu_seconds()


def single(adapter: Vkd3dLavapipe, vectors: Sequence[Vector]) -> dict[str, Verdict]:
    return {v.id: judge(v, adapter.run(v), EXPECTATIONS, adapter.capabilities)
            for v in vectors}


def timed(label: str, adapter: Vkd3dLavapipe, vectors: Sequence[Vector], how: Pass
          ) -> tuple[float, dict[str, Verdict]]:
    adapter.isolated_runs = 0
    quarantined = adapter.quarantined
    children, deaths = adapter.isolation_children
    isolation = adapter.isolation_cpu_seconds()
    cpu = cpu_seconds(adapter)
    start = time.perf_counter()
    verdicts = how(adapter, vectors)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds(adapter) - cpu
    isolation = adapter.isolation_cpu_seconds() - isolation
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    shown = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    rate = len(vectors) / cpu
    print(f"{label:<12} {rate:8.1f} vectors per CPU s ({cpu:7.2f} CPU s; wall "
          f"{len(vectors) / seconds:7.1f} vectors/s, {seconds:7.2f} s; n={len(vectors)}; "
          f"isolated {adapter.isolated_runs}, quarantined {adapter.quarantined - quarantined}; "
          f"children {adapter.isolation_children[0] - children}, "
          f"{adapter.isolation_children[1] - deaths} died, {isolation:.2f} CPU s in isolation); "
          f"{shown}", flush=True)
    return rate, verdicts


def compare(reference: dict[str, Verdict], label: str, other: dict[str, Verdict]) -> None:
    differ = [k for k in reference if reference[k].status != other[k].status
              and "crash" not in (reference[k].reason + other[k].reason)]
    if differ:
        print(f"  {label}: {len(differ)} verdicts differ from the first pass, e.g. "
              f"{', '.join(differ[:5])}")


def main() -> int:
    parser = argparse.ArgumentParser(description="vkd3d + lavapipe adapter throughput")
    parser.add_argument("paths", nargs="*", type=Path, help="vector files (default: golden)")
    parser.add_argument("--every", type=int, default=1, help="take every N-th vector")
    parser.add_argument("--warm-passes", type=int, default=1,
                        help="run the warm pass this many times (best reported)")
    args = parser.parse_args()
    vectors = [v for _, _, v in iter_selected(vector_files(args.paths or None))
               if not v.rejected][::max(1, args.every)]
    with tempfile.TemporaryDirectory(prefix="sm5-mesa-cache-") as mesa_cache:
        os.environ["MESA_SHADER_CACHE_DIR"] = mesa_cache  # cold: nothing compiled yet
        try:
            first = create()
        except TargetUnavailable as exc:
            print(f"skipped: {exc}")
            return 0
        print(f"target: {first.version}; LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS')}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        _, reference = timed("cold", first, vectors, batched)
        first.close()
        second = create()
        _, verdicts = timed("mesa-warm", second, vectors, batched)
        compare(reference, "mesa-warm", verdicts)
        one, verdicts = timed("warm-single", second, vectors, single)
        compare(reference, "warm-single", verdicts)
        best = 0.0
        for _ in range(max(1, args.warm_passes)):
            many, verdicts = timed("warm", second, vectors, batched)
            compare(reference, "warm", verdicts)
            best = max(best, many)
        second.close()
    oracle = oracle_rate(vectors)
    print(f"oracle       {oracle:8.1f} vectors per CPU s (the same vectors and engine)")
    print(f"warm batched / warm one by one (per CPU s): {best / one:.2f}x; best warm "
          f"{best:.1f} vectors per CPU s = {best / oracle:.2f}x the oracle; "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
