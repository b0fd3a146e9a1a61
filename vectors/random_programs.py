"""Random programs with flow control, drawn from a small grammar (level 2 only; never golden).

A program nests branches (``if_z``/``if_nz`` with or without ``else``), loops with a counter
(each loop tests its own counter first, so a ``continuec`` never skips it and every loop ends),
switches (case labels sharing a block, a default, a ``breakc`` leaving the switch) and
breaks, conditional breaks, continues and returns around integer instructions on ``r0`` and the
conditions in ``r1``, then stores ``r0`` to ``u0``. Conditions are drawn among 0, 1, -0.0
(0x80000000), a NaN pattern and random words, so the raw-bits test is met at its boundaries.
Everything is drawn from one seed; the expectations are the oracle's. The vectors of this file
are about every flow-control instruction of each program (``subject``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from sm5.oracle.asm import parse_program
from sm5.oracle.model.spec import Spec
from sm5.vectors.instances import Case

#: The subject (file name and id prefix) of the random programs.
RANDOM_PROGRAMS = "flow_random"
CATEGORY = "random"
FLAGS = ("program", "random")
#: Nesting of blocks and loops; a loop's counter lives in one component of r2 per loop level.
MAX_DEPTH = 3
COUNTERS = "xyz"
#: Words a condition or a selector is drawn from (0, 1, -0.0, a NaN pattern, all ones).
SPECIAL = (0, 1, 2, 0x80000000, 0x7FC00000, 0xFFFFFFFF)
LITERALS = (0, 1, 2, 3, 0x80000000, 0xFFFFFFFF)


@dataclass
class _Draw:
    rng: random.Random
    lines: list[str] = field(default_factory=list)
    loops: int = 0  # enclosing loops
    selects: int = 0  # enclosing switches
    budget: int = 40  # statements left

    def component(self) -> str:
        return self.rng.choice("xyzw")

    def condition(self) -> str:
        return f"r1.{self.component()}"

    def test(self) -> str:
        return self.rng.choice(("z", "nz"))

    def block(self, depth: int) -> None:
        for _ in range(self.rng.randint(1, 3)):
            if self.budget <= 0:
                return
            self.budget -= 1
            self.statement(depth)

    def statement(self, depth: int) -> None:
        kinds = ["alu", "alu"]
        if depth < MAX_DEPTH:
            kinds += ["if", "loop", "switch"]
        if self.loops:
            kinds += ["breakc", "continuec", "break"]
        if self.selects:
            kinds.append("breakc")
        if depth:
            kinds.append("retc")
        kind = self.rng.choice(kinds)
        getattr(self, f"_{kind}")(depth)

    def _alu(self, depth: int) -> None:
        c, d = self.component(), self.component()
        choice = self.rng.randrange(3)
        if choice == 0:
            self.lines.append(f"iadd r0.{c}, r0.{c}, l({self.rng.randint(1, 9)})")
        elif choice == 1:
            self.lines.append(f"xor r0.{c}, r0.{c}, r1.{d}")
        else:
            self.lines.append(f"mov r1.{c}, r0.{d}")

    def _if(self, depth: int) -> None:
        self.lines.append(f"if_{self.test()} {self.condition()}")
        self.block(depth + 1)
        if self.rng.random() < 0.5:
            self.lines.append("else")
            self.block(depth + 1)
        self.lines.append("endif")

    def _loop(self, depth: int) -> None:
        if self.loops >= len(COUNTERS):
            self._alu(depth)
            return
        counter = f"r2.{COUNTERS[self.loops]}"
        test = f"r3.{COUNTERS[self.loops]}"
        self.lines += [f"mov {counter}, l(0)", "loop", f"uge {test}, {counter}, "
                       f"l({self.rng.randint(1, 3)})", f"breakc_nz {test}",
                       f"iadd {counter}, {counter}, l(1)"]
        self.loops += 1
        saved, self.selects = self.selects, 0  # a break in the body leaves this loop
        self.block(depth + 1)
        self.loops -= 1
        self.selects = saved
        self.lines.append("endloop")

    def _switch(self, depth: int) -> None:
        self.lines.append(f"switch r{self.rng.randint(0, 1)}.{self.component()}")
        self.selects += 1
        labels: list[int | None] = list(self.rng.sample(LITERALS, self.rng.randint(1, 3)))
        if self.rng.random() < 0.5:  # a default, anywhere among the cases
            labels.insert(self.rng.randint(0, len(labels)), None)
        for k, literal in enumerate(labels):
            self.lines.append("default" if literal is None else f"case l({literal})")
            if k + 1 < len(labels) and self.rng.random() < 0.3:
                continue  # an empty label: it shares the next block
            self.block(depth + 1)
            self.lines.append("break")
        self.selects -= 1
        self.lines.append("endswitch")

    def _break(self, depth: int) -> None:
        self.lines.append("break")

    def _breakc(self, depth: int) -> None:
        self.lines.append(f"breakc_{self.test()} {self.condition()}")

    def _continuec(self, depth: int) -> None:
        self.lines.append(f"continuec_{self.test()} {self.condition()}")

    def _retc(self, depth: int) -> None:
        self.lines.append(f"retc_{self.test()} {self.condition()}")


def _word(rng: random.Random) -> int:
    return rng.choice(SPECIAL) if rng.random() < 0.6 else rng.getrandbits(32)


def random_program_cases(spec: Spec, seed: int, count: int
                         ) -> Iterator[tuple[str, Case, tuple[int, ...]]]:
    """(vector id, case, subject positions) of ``count`` random programs from ``seed``."""
    controls = spec.control.instructions
    for k in range(count):
        rng = random.Random(f"{RANDOM_PROGRAMS}/{seed}/{k}")
        draw = _Draw(rng)
        draw.block(0)
        lines = ["dcl_uav_raw u0", *draw.lines, "store_raw u0.xyzw, l(0), r0.xyzw"]
        program = parse_program(lines)
        subject = tuple(i for i, ins in enumerate(program.instructions) if ins.name in controls)
        if not subject:  # a draw of plain arithmetic: give it one branch
            lines.insert(1, "if_nz r1.x")
            lines.insert(len(lines) - 1, "endif")
            program = parse_program(lines)
            subject = tuple(i for i, ins in enumerate(program.instructions)
                            if ins.name in controls)
        state = {"r0": [_word(rng) for _ in range(4)], "r1": [_word(rng) for _ in range(4)],
                 "r2": [0, 0, 0, 0], "r3": [0, 0, 0, 0],
                 "u0": {"kind": "raw", "data": [0xDEAD] * 4}}
        yield (f"{RANDOM_PROGRAMS}/{CATEGORY}/{k:04d}",
               Case(RANDOM_PROGRAMS, tuple(lines), "cs_5_0", "11.0", state, FLAGS, ""),
               subject)
