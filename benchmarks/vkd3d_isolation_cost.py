"""What an isolated vector costs the vkd3d + lavapipe adapter, and the floor that sets.

lavapipe (Mesa 22.3) runs a dispatch on a queue thread its device starts, so a device does not
survive a fork: a child that may crash needs a device of its own, and llvmpipe keeps no compiled
code across processes, so the child compiles its shader again. This script runs every N-th
isolated golden vector alone in a forked child (as the adapter's zygote does) and measures, per
child: creating the device, compiling the pipeline, the dispatch, and how often the child dies
(SIGSEGV, or SIGABRT from a damaged heap). From those it prints the CPU seconds the crashes of
the whole golden set cost at the least (one child per crash, with a device and a compile) beside
the CPU seconds a given rate leaves for the whole set.

Usage: python benchmarks/vkd3d_isolation_cost.py [--every N] [--rate R] [--cores C]
(defaults: every 3rd isolated vector, 1,000 vectors/s on 2 cores). Needs
conformance/vkd3d/setup.sh to have run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d.adapter import Prepared, TargetUnavailable, create
from sm5.conformance.vkd3d.vulkan_runner import VulkanRunner, create_instance

STEPS = ("device", "compile", "dispatch")


def child_costs(instance: object, prepared: Prepared) -> tuple[dict[str, float], bool]:
    """One dispatch in a forked child with a device of its own: the seconds of each step that
    finished, and whether the child died."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(read_end)
            start = time.process_time()
            runner = VulkanRunner(instance=instance)
            marks = {"device": time.process_time() - start}
            runner.compile(prepared.compiled.spirv, list(prepared.bindings))
            marks["compile"] = time.process_time() - start - marks["device"]
            os.write(write_end, (json.dumps(marks) + "\n").encode())
            before = time.process_time()
            runner.run(prepared.compiled.spirv, list(prepared.bindings))
            os.write(write_end, (json.dumps({"dispatch": time.process_time() - before})
                                 + "\n").encode())
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 1 << 16):
        data += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    costs: dict[str, float] = {}
    for line in data.splitlines():
        costs.update(json.loads(line))
    return costs, os.WIFSIGNALED(status) or "dispatch" not in costs


def main() -> int:
    parser = argparse.ArgumentParser(description="cost of the vkd3d adapter's isolated vectors")
    parser.add_argument("--every", type=int, default=3, help="take every N-th isolated vector")
    parser.add_argument("--rate", type=float, default=1000.0, help="vectors/s to compare with")
    parser.add_argument("--cores", type=int, default=2, help="cores the rate is for")
    args = parser.parse_args()
    try:
        adapter = create()
    except TargetUnavailable as exc:
        print(f"skipped: {exc}")
        return 0
    applicable = 0
    isolated: list[Prepared] = []
    for _, _, vector in iter_selected(vector_files(None)):
        if vector.rejected:
            continue
        applicable += 1
        try:
            prepared = adapter._prepare(vector)
        except Exception:  # unsupported or refused: not isolated, not counted here
            continue
        if prepared.isolated:
            isolated.append(prepared)
    adapter.close()
    VulkanRunner().close()  # loads lavapipe and LLVM once; the zygote does the same
    instance = create_instance()
    sample = isolated[::max(1, args.every)]
    totals = dict.fromkeys(STEPS, 0.0)
    crashes = 0
    for prepared in sample:
        costs, crashed = child_costs(instance, prepared)
        crashes += crashed
        for step in STEPS:
            totals[step] += costs.get(step, 0.0)
    n = len(sample)
    mean = {step: totals[step] / n * 1000 for step in STEPS}
    crash_share = crashes / n
    expected_crashes = crash_share * len(isolated)
    per_crash = (mean["device"] + mean["compile"] + mean["dispatch"]) / 1000
    floor = expected_crashes * per_crash
    budget = applicable / args.rate * args.cores
    print(f"applicable golden vectors {applicable}; isolated {len(isolated)} "
          f"({len(isolated) / applicable:.1%}); {len(set(p.compiled.spirv for p in isolated))} "
          f"distinct shaders among them")
    print(f"sample: {n} isolated vectors, each alone in a forked child; {crashes} children "
          f"died ({crash_share:.1%})")
    print("CPU ms per child: " + ", ".join(f"{s} {mean[s]:.1f}" for s in STEPS)
          + " (the dispatch of children that died is not counted)")
    print(f"whole set: about {expected_crashes:.0f} crashes x {per_crash * 1000:.1f} ms = "
          f"{floor:.1f} CPU s at the least for the crashes alone; {args.rate:g} vectors/s on "
          f"{args.cores} cores leaves {budget:.1f} CPU s for all {applicable} vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
