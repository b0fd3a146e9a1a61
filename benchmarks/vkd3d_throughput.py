"""Throughput of the vkd3d-shader + lavapipe adapter over the golden vectors, in one process.

* cold:       a new adapter and an empty Mesa disk cache: every distinct harness is encoded,
              translated, and compiled by Mesa
* mesa-warm:  a new adapter (in-process caches empty), Mesa's disk cache holding the shaders
* warm:       the same adapter again: DXBC, SPIR-V and pipelines all cached

Each pass runs every applicable (non-rejected) vector once and judges it. Vectors that leave
shared memory undefined run in a child process each (a fresh lavapipe device, ~0.2 s); their
count and the rate without them are shown separately.

Usage: python benchmarks/vkd3d_throughput.py [VECTOR_FILE_OR_DIR ...]
Needs conformance/vkd3d/setup.sh to have run (library + lavapipe + vulkan module).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sm5.conformance.compare import judge
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d.adapter import TargetUnavailable, Vkd3dLavapipe, create
from sm5.vectors.format import Vector


def _pass(label: str, adapter: Vkd3dLavapipe, vectors: list[Vector]) -> None:
    before = adapter.isolated_runs
    isolated_seconds = 0.0
    statuses: dict[str, int] = {}
    start = time.perf_counter()
    for vector in vectors:
        t0 = time.perf_counter()
        result = adapter.run(vector)
        if adapter.isolated_runs != before:
            isolated_seconds += time.perf_counter() - t0
            before = adapter.isolated_runs
        status = judge(vector, result, capabilities=adapter.capabilities).status
        statuses[status] = statuses.get(status, 0) + 1
    seconds = time.perf_counter() - start
    isolated = adapter.isolated_runs
    in_process = len(vectors) - isolated
    in_rate = in_process / max(seconds - isolated_seconds, 1e-9)
    counts = " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
    print(f"{label:<10} {len(vectors) / seconds:8.1f} vectors/s  ({seconds:6.2f} s, "
          f"n={len(vectors)}); in-process {in_rate:8.1f} vectors/s (n={in_process}); "
          f"isolated n={isolated} {isolated_seconds:5.2f} s; {counts}")
    adapter.isolated_runs = 0


def main() -> int:
    parser = argparse.ArgumentParser(description="vkd3d + lavapipe adapter throughput")
    parser.add_argument("paths", nargs="*", type=Path, help="vector files (default: golden)")
    args = parser.parse_args()
    vectors = [v for _, _, v in iter_selected(vector_files(args.paths or None))
               if not v.rejected]
    with tempfile.TemporaryDirectory(prefix="sm5-mesa-cache-") as mesa_cache:
        os.environ["MESA_SHADER_CACHE_DIR"] = mesa_cache  # cold: nothing compiled yet
        try:
            first = create()
        except TargetUnavailable as exc:
            print(f"skipped: {exc}")
            return 0
        print(f"target: {first.version}")
        _pass("cold", first, vectors)
        first.close()
        second = create()
        _pass("mesa-warm", second, vectors)
        _pass("warm", second, vectors)
        second.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
