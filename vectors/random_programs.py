"""Random programs with flow control, drawn from a grammar (level 2 only; never golden).

The grammar is data (``vectors/random_grammar.yaml``): asm templates for arithmetic, branches,
loops with a counter (each loop tests its own counter first, so a conditional continue never
skips it and every loop ends), switches (labels sharing a block, a default anywhere) and the
statements that only stand inside a loop, a switch or a block. A program nests them three deep
and stores ``r0`` to ``u0``; conditions are drawn among 0, 1, -0.0, a NaN pattern and random
words, so the raw-bits test is met at its boundaries. Everything is drawn from one seed; the
expectations are the oracle's. The vectors are about every flow-control instruction of their
program (``subject``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.yamlio import load_yaml
from sm5.oracle.model.spec import Spec
from sm5.vectors.instances import Case
from sm5.vectors.shapes import GenerationError

#: The subject (file name and id prefix) of the random programs.
RANDOM_PROGRAMS = "flow_random"
CATEGORY = "random"
FLAGS = ("program", "random")
GRAMMAR = Path(__file__).resolve().parent / "random_grammar.yaml"
#: Nesting of blocks; a loop's counter is one component of r2 (its test of r3) per loop level.
MAX_DEPTH = 3
COUNTERS = "xyz"
STATEMENTS_PER_PROGRAM = 40
#: The share of condition words drawn among the grammar's special words, and of labels left
#: empty (sharing the next block).
SPECIAL_SHARE = 0.6
EMPTY_LABEL_SHARE = 0.5


@dataclass(frozen=True)
class Grammar:
    declarations: tuple[str, ...]
    end: tuple[str, ...]
    statements: tuple[str, ...]
    branch: Mapping[str, str]
    loop: Mapping[str, Any]
    select: Mapping[str, str]
    in_loop: tuple[str, ...]
    in_select: tuple[str, ...]
    nested: tuple[str, ...]
    literals: tuple[int, ...]
    special_words: tuple[int, ...]


_FIELDS = {"declarations": list, "end": list, "statements": list, "branch": dict, "loop": dict,
           "select": dict, "in_loop": list, "in_select": list, "nested": list,
           "literals": list, "special_words": list}


@cache
def load_grammar(path: Path = GRAMMAR) -> Grammar:
    """The grammar file, each field of the kind it must be (one clear error otherwise)."""
    doc = load_yaml(path)
    if not isinstance(doc, dict):
        raise GenerationError(f"{path}: expected a mapping of the grammar's productions")
    for name, kind in _FIELDS.items():
        if not isinstance(doc.get(name), kind):
            raise GenerationError(f"{path}: field {name}: expected a {kind.__name__}")
    return Grammar(tuple(doc["declarations"]), tuple(doc["end"]), tuple(doc["statements"]),
                   doc["branch"], doc["loop"], doc["select"], tuple(doc["in_loop"]),
                   tuple(doc["in_select"]), tuple(doc["nested"]), tuple(doc["literals"]),
                   tuple(doc["special_words"]))


@dataclass
class _Draw:
    grammar: Grammar
    rng: random.Random
    lines: list[str] = field(default_factory=list)
    loops: int = 0  # enclosing loops
    selects: int = 0  # enclosing switches (since the innermost loop)
    budget: int = STATEMENTS_PER_PROGRAM

    def fill(self, template: str, **given: object) -> str:
        rng = self.rng
        values: dict[str, object] = {
            "c": rng.choice("xyzw"), "d": rng.choice("xyzw"), "k": rng.randint(1, 9),
            "test": rng.choice(("z", "nz")), "cond": f"r1.{rng.choice('xyzw')}",
            "reg": rng.randint(0, 1), "n": rng.randint(1, 3)}
        values.update(given)
        return template.format(**values)

    def emit(self, templates: Sequence[str], **given: object) -> None:
        c = self.rng.choice("xyzw")  # one component for the whole production
        self.lines.extend(self.fill(t, c=c, **given) for t in templates)

    def block(self, depth: int) -> None:
        for _ in range(self.rng.randint(1, 3)):
            if self.budget <= 0:
                return
            self.budget -= 1
            self.statement(depth)

    def statement(self, depth: int) -> None:
        g = self.grammar
        kinds = ["alu", "alu"]
        if depth < MAX_DEPTH:
            kinds += ["branch", "select"]
            if self.loops < len(COUNTERS):
                kinds.append("loop")
        if self.loops:
            kinds.append("in_loop")
        if self.selects:
            kinds.append("in_select")
        if depth:
            kinds.append("nested")
        kind = self.rng.choice(kinds)
        if kind == "alu":
            self.emit([self.rng.choice(g.statements)])
        elif kind in ("in_loop", "in_select", "nested"):
            self.emit([self.rng.choice(getattr(g, kind))])
        else:
            getattr(self, kind)(depth)

    def branch(self, depth: int) -> None:
        self.emit([self.grammar.branch["open"]])
        self.block(depth + 1)
        if self.rng.random() < 0.5:
            self.emit([self.grammar.branch["other"]])
            self.block(depth + 1)
        self.emit([self.grammar.branch["close"]])

    def loop(self, depth: int) -> None:
        g = self.grammar.loop
        level = COUNTERS[self.loops]
        registers = {"counter": f"r2.{level}", "check": f"r3.{level}"}
        self.emit([*g["before"], g["open"], *g["head"]], **registers)
        self.loops += 1
        saved, self.selects = self.selects, 0  # a break in the body leaves this loop
        self.block(depth + 1)
        self.loops -= 1
        self.selects = saved
        self.emit([g["close"]])

    def select(self, depth: int) -> None:
        g = self.grammar.select
        self.emit([g["open"]])
        self.selects += 1
        labels: list[int | None] = list(self.rng.sample(self.grammar.literals,
                                                        self.rng.randint(1, 3)))
        if self.rng.random() < 0.5:  # a fallback entry, anywhere among the others
            labels.insert(self.rng.randint(0, len(labels)), None)
        for k, literal in enumerate(labels):
            self.emit([g["fallback"] if literal is None else g["entry"]], literal=literal)
            if k + 1 < len(labels) and self.rng.random() < EMPTY_LABEL_SHARE:
                continue  # an empty label: it shares the next block
            self.block(depth + 1)
            self.emit([g["leave"]])
        self.selects -= 1
        self.emit([g["close"]])


def _word(rng: random.Random, grammar: Grammar) -> int:
    if rng.random() < SPECIAL_SHARE:
        return rng.choice(grammar.special_words)
    return rng.getrandbits(32)


def random_program_cases(spec: Spec, seed: int, count: int, grammar_path: Path = GRAMMAR
                         ) -> Iterator[tuple[str, Case, tuple[int, ...]]]:
    """(vector id, case, subject positions) of ``count`` random programs from ``seed``."""
    grammar = load_grammar(grammar_path)
    controls = spec.control.instructions
    for k in range(count):
        rng = random.Random(f"{RANDOM_PROGRAMS}/{seed}/{k}")
        draw = _Draw(grammar, rng)
        while not any(line.split()[0].split("_")[0] in controls for line in draw.lines):
            draw.lines.clear()
            draw.budget = STATEMENTS_PER_PROGRAM
            draw.block(0)  # a draw of plain arithmetic is drawn again
        lines = [*grammar.declarations, *draw.lines, *grammar.end]
        try:
            program = parse_program(lines)
        except Sm5Error as exc:
            raise GenerationError(f"{grammar_path}: a drawn program does not parse: {exc}"
                                  ) from None
        subject = tuple(i for i, ins in enumerate(program.instructions) if ins.name in controls)
        state = {"r0": [_word(rng, grammar) for _ in range(4)],
                 "r1": [_word(rng, grammar) for _ in range(4)],
                 "r2": [0, 0, 0, 0], "r3": [0, 0, 0, 0],
                 "u0": {"kind": "raw", "data": [0xDEAD] * 4}}
        yield (f"{RANDOM_PROGRAMS}/{CATEGORY}/{k:04d}",
               Case(RANDOM_PROGRAMS, tuple(lines), "cs_5_0", "11.0", state, FLAGS, ""),
               subject)
