"""Oracle executions per second, per instruction, measured in one run.

For each instruction, the executable golden vectors (not the must-reject ones) are parsed once,
then executed through ``sm5.oracle.execution.executor.execute`` for at least ``--seconds`` seconds;
a second figure includes parsing the program text and the state JSON every time (what a caller
holding only vector text pays). This is the baseline later performance work is measured against.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector, iter_vectors
from sm5.vectors.generate import GOLDEN


def rate(body: list[Vector], seconds: float, parse_each_time: bool) -> float:
    spec = load_default()
    parsed = [(parse_program(v.program), state_from_json(v.state), v) for v in body]
    done = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for program, state, v in parsed:
            if parse_each_time:
                program = parse_program(list(v.program))
                state = state_from_json(v.state)
            execute(program, state, v.target, v.runtime, spec)
            done += 1
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--vectors", type=Path, default=GOLDEN)
    args = parser.parse_args()
    by_instruction: dict[str, list[Vector]] = defaultdict(list)
    for _, vector in iter_vectors([args.vectors]):
        if not vector.rejected:
            by_instruction[vector.id.split("/")[0]].append(vector)
    print(f"{'instruction':<18} {'vectors':>8} {'exec/s':>10} {'parse+exec/s':>13}")
    for name in sorted(by_instruction):
        body = by_instruction[name]
        print(f"{name:<18} {len(body):>8} {rate(body, args.seconds, False):>10.0f} "
              f"{rate(body, args.seconds, True):>13.0f}")


if __name__ == "__main__":
    main()
