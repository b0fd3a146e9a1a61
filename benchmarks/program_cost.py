"""What a straight-line program costs in the oracle run, as a ratio to a one-instruction vector.

Two vector sets go through the oracle as an implementation (``OracleImplementation.run``: the
state decoded, legality memoised per program as in a conformance run, every instruction executed
by the program interpreter, the answer built), ``--count`` vectors each with different register
values:

* one instruction: ``dadd r0.xy, r1.xyxy, r2.xyxy`` (doubles, exact values);
* a program of ``--length`` instructions (default 50): ``dadd``, ``dmul``, ``dmax`` and ``dmin``
  in turn over four registers, each reading what the one before wrote.

Best of ``--repeat`` rounds each, in one process; prints both times per vector and the ratio,
and exits 1 when the ratio exceeds ``--budget`` (default 3, the aim).

    python benchmarks/program_cost.py [--length 50] [--count 2000] [--repeat 3] [--budget 3]
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
import time
from collections.abc import Sequence

from sm5.conformance.oracle_impl import OracleImplementation
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector

DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
KERNELS = ("dadd", "dmul", "dmax", "dmin")


def words(value: float) -> list[int]:
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    return [bits & 0xFFFFFFFF, bits >> 32]


def program(length: int) -> tuple[str, ...]:
    lines = [DOUBLES]
    for k in range(length):
        dst, a, b = f"r{k % 4}", f"r{(k + 1) % 4}", f"r{(k + 2) % 4}"
        lines.append(f"{KERNELS[k % len(KERNELS)]} {dst}.xy, {a}.xyxy, {b}.xyxy")
    return tuple(lines)


def vectors(length: int, count: int, seed: int) -> list[Vector]:
    rng = random.Random(seed)
    lines = program(length)
    out = []
    for n in range(count):
        state = {f"r{k}": [*words(rng.uniform(0.5, 2.0)), 0, 0] for k in range(4)}
        out.append(Vector(f"dadd/program/{n}", lines, "cs_5_0", "11.0", state, {}))
    return out


def best(batch: Sequence[Vector], repeat: int) -> float:
    impl = OracleImplementation()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for vector in batch:
            result = impl.run(vector)
            if result.status != "state":
                raise SystemExit(f"{vector.id}: the oracle answered {result.status}: "
                                 f"{result.detail}")
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=50)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=3.0)
    args = parser.parse_args(argv)
    if args.length < 1 or args.count < 1 or args.repeat < 1:
        parser.error("--length, --count and --repeat must be at least 1")
    load_default()
    one = best(vectors(1, args.count, 0), args.repeat)
    many = best(vectors(args.length, args.count, 0), args.repeat)
    ratio = many / one
    print(f"one instruction:        {one / args.count * 1e6:8.1f} us per vector")
    print(f"{args.length} instructions:        {many / args.count * 1e6:8.1f} us per vector")
    print(f"ratio: {ratio:.2f}x (budget {args.budget:g}x)")
    return 0 if ratio <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
