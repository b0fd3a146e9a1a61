"""Level-2 vector generation: throughput and memory flatness.

Generates the level-2 set into a temporary folder (removed afterwards) and prints vectors/s,
the peak RSS of this process and of the worker processes (``resource.getrusage``), and the
resident memory of the whole process tree after 10% of the vectors and at 100%: equal figures
show that memory does not grow with the vector count (the generator streams).

    python benchmarks/vectors_level2.py [--jobs N] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from sm5.vectors.generate import PLANS, default_jobs, generate

PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def tree_rss_kib(root: int | None = None) -> int:
    """Resident memory of a process and all its descendants, in KiB (Linux /proc)."""
    total, todo = 0, [root or os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KIB
        except OSError:
            continue
        todo += _children(pid)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    plan = PLANS[2]
    expected = plan.random_cases * 3
    marks: dict[str, int] = {}

    def on_progress(count: int) -> None:
        if count >= expected // 10 and "10%" not in marks:
            marks["10%"] = tree_rss_kib()
        marks["last"] = tree_rss_kib()

    with tempfile.TemporaryDirectory(prefix="sm5-level2-") as tmp:
        start = time.perf_counter()
        reports = generate(Path(tmp), level=2, seed=args.seed, jobs=args.jobs,
                           on_progress=on_progress)
        elapsed = time.perf_counter() - start
        size = sum(r.bytes for r in reports)
    total = sum(r.count for r in reports)
    self_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"level 2: {total} vectors, {size / 1e6:.0f} MB in {elapsed:.0f} s with "
          f"{args.jobs} process(es): {total / elapsed:.0f} vectors/s")
    print(f"peak RSS: parent {self_peak / 1024:.0f} MiB, largest worker "
          f"{child_peak / 1024:.0f} MiB")
    print(f"RSS of the process tree: after 10% {marks.get('10%', 0) / 1024:.0f} MiB, "
          f"at 100% {marks.get('last', 0) / 1024:.0f} MiB")
    for r in reports:
        print(f"  {r.path:<24} {r.count:>9} vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
