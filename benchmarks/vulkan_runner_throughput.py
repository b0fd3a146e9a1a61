"""Throughput of VulkanRunner.run on lavapipe: cold vs warm caches, in one process.

* cold:       N distinct programs, empty Mesa disk cache, empty runner cache
              (every run creates a shader module + pipeline and Mesa compiles it)
* mesa-warm:  the same N programs on a new runner (in-process cache empty, Mesa's
              disk cache now holds them)
* warm:       one program repeated (pipeline, layout, buffers and views reused)
* translate+run: warm run plus a fresh vkd3d DXBC->SPIR-V translation each time,
              i.e. the per-vector cost the conformance adapter pays

Usage: python benchmarks/vulkan_runner_throughput.py [--programs N] [--runs M]
Needs conformance/vkd3d/setup.sh to have run (library + lavapipe + vulkan module).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sm5.conformance.vkd3d.shader import Vkd3dShaderLib, Vkd3dUnavailable
from sm5.conformance.vkd3d.vulkan_runner import (
    BufferBinding,
    VulkanRunner,
    VulkanUnavailable,
)

PROGRAM = """
RWBuffer<uint> u : register(u0);
[numthreads(1, 1, 1)]
void main() {{ u[1] = u[0] + {k}; }}
"""


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:8.1f} runs/s  ({1000 * seconds / count:6.2f} ms/run, n={count})"


def _timed(label: str, count: int, body: Callable[[int], None]) -> None:
    start = time.perf_counter()
    for i in range(count):
        body(i)
    print(f"{label:<14} {_rate(count, time.perf_counter() - start)}")


def _check(out_words: tuple[int, ...], expected: tuple[int, ...]) -> None:
    if out_words != expected:
        raise SystemExit(f"wrong result {out_words}, expected {expected}")


def main() -> int:
    parser = argparse.ArgumentParser(description="VulkanRunner.run throughput, cold vs warm")
    parser.add_argument("--programs", type=int, default=40, help="distinct programs (cold)")
    parser.add_argument("--runs", type=int, default=1000, help="repetitions (warm)")
    args = parser.parse_args()

    try:
        lib = Vkd3dShaderLib()
    except Vkd3dUnavailable as exc:
        print(f"skipped: {exc}")
        return 0
    dxbcs = [lib.compile_hlsl(PROGRAM.format(k=k)) for k in range(args.programs)]
    spirvs = [lib.dxbc_to_spirv(d) for d in dxbcs]

    with tempfile.TemporaryDirectory(prefix="sm5-mesa-cache-") as mesa_cache:
        os.environ["MESA_SHADER_CACHE_DIR"] = mesa_cache  # cold: nothing cached yet
        start = time.perf_counter()
        try:
            runner = VulkanRunner()
        except VulkanUnavailable as exc:
            print(f"skipped: {exc}")
            return 0
        print(f"device: {runner.device_name}, Vulkan {runner.api_version}, {lib.version()}")
        print(f"{'device create':<14} {1000 * (time.perf_counter() - start):8.1f} ms")

        def run_program(runner: VulkanRunner, k: int) -> None:
            [out] = runner.run(spirvs[k], [BufferBinding(0, (k, 0))])
            _check(out.words, (k, 2 * k))

        with runner:
            _timed("cold", args.programs, lambda k: run_program(runner, k))
        with VulkanRunner() as second:
            _timed("mesa-warm", args.programs, lambda k: run_program(second, k))
            run_program(second, 1)
            _timed("warm", args.runs, lambda i: run_program(second, 1))

            def translate_and_run(i: int) -> None:
                spirv = lib.dxbc_to_spirv(dxbcs[1])
                [out] = second.run(spirv, [BufferBinding(0, (i, 0))])
                _check(out.words, (i, i + 1))

            _timed("translate+run", args.runs // 2, translate_and_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
