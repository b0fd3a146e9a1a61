"""Throughput of the D3D11 runner (Wine's d3d11 or DXVK here), programs per second in one process.

* batch:    the runner alone, as a Windows user runs it: one process reads a stream file of
            every program and writes the results file (process start-up included)
* adapter:  the same programs through the ``d3d11`` implementation, one record at a time over
            a pipe, judged (the vectors that leave shared memory undefined are left out of both:
            they run in the quarantine process and may crash it)

Mesa keeps compiled shaders in a disk cache between runs, which makes a second run of the same
programs many times faster; ``--cold`` turns that cache off (``MESA_SHADER_CACHE_DISABLE``) so
every program is compiled, as on a first run. Within one run the runner itself reuses the shader
of a program it has just created (its cache of recent shaders).

Several ``--renderer`` options measure each in turn in one run, on the same programs (``gl``:
``d3d11``, ``vulkan``: ``d3d11:vulkan``, ``dxvk``: ``d3d11:dxvk``); ``--subset`` takes the
representative subset of the golden set (``sm5.conformance.subset``, what the pipeline runs).

Usage: python benchmarks/d3d11_throughput.py [--renderer gl|vulkan|dxvk ...] [--subset]
       [--limit N] [--cold] [PATHS...]
Needs scripts/setup.sh --d3d11 (wine, Xvfb, the runner built with mingw-w64); dxvk also
scripts/setup.sh --dxvk.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sm5.conformance.compare import judge
from sm5.conformance.d3d11.adapter import TargetUnavailable, create, needs_isolation
from sm5.conformance.d3d11.stream import Record, record_of, write_stream
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.subset import representative
from sm5.oracle.errors import NotExpressible
from sm5.vectors.format import Vector


def _selected(paths: list[Path], limit: int, subset: bool) -> list[tuple[Vector, Record]]:
    chosen: list[tuple[Vector, Record]] = []
    vectors = [v for _, _, v in iter_selected(vector_files(paths or None))]
    if subset:
        ids = set(representative(vectors))
        vectors = [v for v in vectors if v.id in ids]
    for vector in vectors:
        if vector.rejected or needs_isolation(vector):
            continue
        try:
            chosen.append((vector, record_of(vector)))
        except NotExpressible:
            continue
        if limit and len(chosen) >= limit:
            break
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description="D3D11 runner throughput")
    parser.add_argument("--renderer", action="append", choices=("gl", "vulkan", "dxvk"),
                        help="gl (d3d11), vulkan (d3d11:vulkan) or dxvk (d3d11:dxvk); repeat "
                        "to measure several in one run (default: gl)")
    parser.add_argument("--subset", action="store_true",
                        help="the representative subset of the golden set (the pipeline's)")
    parser.add_argument("--limit", type=int, default=0, help="at most N programs (0: all)")
    parser.add_argument("--cold", action="store_true",
                        help="without Mesa's on-disk shader cache")
    parser.add_argument("paths", nargs="*", type=Path, help="vector files (default: golden)")
    args = parser.parse_args()
    if args.cold:
        os.environ["MESA_SHADER_CACHE_DISABLE"] = "true"
    chosen = _selected(args.paths, args.limit, args.subset)
    for renderer in args.renderer or ["gl"]:
        measure(renderer, chosen)
    return 0


def measure(renderer: str, chosen: list[tuple[Vector, Record]]) -> None:
    """Print the batch and adapter throughput of one renderer on ``chosen``."""
    try:
        impl = create("" if renderer == "gl" else renderer)
    except TargetUnavailable as exc:
        print(f"renderer {renderer}: skipped: {exc}")
        return
    try:
        with tempfile.TemporaryDirectory(prefix="sm5-d3d11-bench-") as tmp:
            stream = Path(tmp) / "programs.sm5d3d11"
            stream.write_bytes(write_stream(record for _, record in chosen))
            results = Path(tmp) / "results.jsonl"
            impl.host.linger_wineserver()
            start = time.perf_counter()
            answered, skipped, processes = 0, 0, 0
            while answered < len(chosen):  # a program that crashes the runner ends its process:
                launch = impl.host.launch("--start", str(answered), str(stream))  # go on after it
                with results.open("ab") as out:
                    done = subprocess.run(list(launch.argv), env={**os.environ, **launch.env},
                                          stdout=out, stderr=subprocess.DEVNULL, check=False)
                processes += 1
                lines = sum(1 for line in results.read_bytes().splitlines()
                            if line.startswith(b'{"id"'))
                if lines + skipped == answered and done.returncode != 0:
                    skipped += 1  # it died without a line for that program: go on after it
                answered = lines + skipped
            seconds = time.perf_counter() - start
            print(f"renderer {renderer} ({impl.name}): {len(chosen)} programs ("
                  f"{len({r.dxbc for _, r in chosen})} distinct shaders), Mesa's disk cache "
                  f"{'off' if os.environ.get('MESA_SHADER_CACHE_DISABLE') else 'on'}")
            print(f"batch    {len(chosen) / seconds:8.1f} programs/s ({seconds:7.2f} s, "
                  f"{processes} runner process(es), start-ups included; {skipped} program(s) "
                  "ended a process without an answer)")
        statuses: dict[str, int] = {}
        start = time.perf_counter()
        for vector, record in chosen:
            result = impl.run_record(record, isolated=False)
            status = judge(vector, result, capabilities=impl.capabilities).status
            statuses[status] = statuses.get(status, 0) + 1
        seconds = time.perf_counter() - start
        counts = " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        print(f"adapter  {len(chosen) / seconds:8.1f} programs/s ({seconds:7.2f} s); {counts}")
        print(f"device: {impl.device}")
    finally:
        impl.close()


if __name__ == "__main__":
    sys.exit(main())
