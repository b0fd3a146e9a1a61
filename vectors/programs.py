"""Program vectors (format ``sm5-vectors/2``): families of programs as data.

Each file ``vectors/programs/<subject>.yaml`` (schema ``spec/schema/programs.schema.json``)
lists families of programs, each with the instructions its vectors are about and the states it
runs on. A vector's id is ``<subject>/<family>/<state position>``: a new family or a new state
never renumbers another vector. Every expectation is the oracle's (``sm5.vectors.build``), and a
golden program vector never depends on the interpreter's widening: generation fails on a step
that was widened, or on a program that ends past the interpreter's limits (the ``program``
outcomes: no verdict), since an expectation of "anything" would test nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.yamlio import load_yaml, validate
from sm5.oracle.model.spec import Spec
from sm5.vectors.build import to_vector
from sm5.vectors.format import Vector
from sm5.vectors.instances import Case
from sm5.vectors.random_programs import random_program_cases
from sm5.vectors.shapes import GenerationError

PROGRAMS = Path(__file__).resolve().parent / "programs"
PROGRAM_FLAG = "program"
#: The scope of the outcomes that give no verdict (past the step budget, nesting past its
#: limit): a golden vector never holds one.
NO_VERDICT_SCOPE = "program"


@dataclass(frozen=True)
class ProgramState:
    note: str
    state: Mapping[str, Any]


@dataclass(frozen=True)
class Family:
    id: str
    text: str
    program: tuple[str, ...]
    subject: tuple[int, ...]
    target: str
    runtime: str
    states: tuple[ProgramState, ...]


@dataclass(frozen=True)
class ProgramFile:
    subject: str
    text: str
    families: tuple[Family, ...]


def program_subjects(folder: Path = PROGRAMS) -> tuple[str, ...]:
    """The subjects of the program files, sorted."""
    return tuple(sorted(p.stem for p in folder.glob("*.yaml")))


@cache
def load_programs(subject: str, folder: Path = PROGRAMS) -> ProgramFile:
    """One family file, checked against its schema, its subject and its programs (each parses
    and each subject position names an instruction)."""
    path = folder / f"{subject}.yaml"
    doc = load_yaml(path)
    validate(doc, "programs", str(path))
    if doc["subject"] != subject:
        raise GenerationError(f"{path}: subject {doc['subject']!r} but the file is named "
                              f"{subject}.yaml")
    families = []
    seen: set[str] = set()
    for k, raw in enumerate(doc["families"]):
        where = f"{path}: families[{k}] ({raw['id']})"
        if raw["id"] in seen:
            raise GenerationError(f"{where}: the id repeats an earlier family's")
        seen.add(raw["id"])
        try:
            program = parse_program(list(raw["program"]), source=where)
        except Sm5Error as exc:
            raise GenerationError(f"{where}: {exc}") from None
        bad = [p for p in raw["subject"] if p >= len(program.instructions)]
        if bad:
            raise GenerationError(f"{where}: subject position {bad[0]} but the program holds "
                                  f"{len(program.instructions)} instructions")
        families.append(Family(raw["id"], raw["text"], tuple(raw["program"]),
                               tuple(raw["subject"]), raw.get("target", "cs_5_0"),
                               raw.get("runtime", "11.0"),
                               tuple(ProgramState(s["note"], s["state"])
                                     for s in raw["states"])))
    return ProgramFile(subject, doc["text"], tuple(families))


def program_cases(subject: str, folder: Path = PROGRAMS
                  ) -> Iterator[tuple[str, Case, tuple[int, ...]]]:
    """(vector id, case, subject positions) of every state of every family, in file order."""
    for family in load_programs(subject, folder).families:
        for k, item in enumerate(family.states):
            yield (f"{subject}/{family.id}/{k:04d}",
                   Case(subject, family.program, family.target, family.runtime,
                        dict(item.state), (PROGRAM_FLAG,), item.note),
                   family.subject)


def program_vectors(spec: Spec, subject: str, folder: Path = PROGRAMS) -> Iterator[Vector]:
    """The vectors of one family file; a widened step is a generation error."""
    yield from _checked(spec, program_cases(subject, folder))


def random_program_vectors(spec: Spec, seed: int, count: int) -> Iterator[Vector]:
    """``count`` random programs with flow control from ``seed`` (level 2), checked alike."""
    yield from _checked(spec, random_program_cases(spec, seed, count))


def _checked(spec: Spec, cases: Iterable[tuple[str, Case, tuple[int, ...]]]
             ) -> Iterator[Vector]:
    for vector_id, case, positions in cases:
        try:
            vector = to_vector(case, vector_id, spec, subject=positions)
        except Sm5Error as exc:
            raise GenerationError(f"{vector_id}: {exc}") from None
        no_verdict = [o for o in vector.expect.get("outcomes", ())
                      if spec.model.outcomes_by_name[o].scope == NO_VERDICT_SCOPE]
        if no_verdict:
            raise GenerationError(
                f"{vector_id}: the program ends with the {no_verdict[0]!r} outcome (every word "
                "accepted: no verdict); a golden vector must end within the limits")
        widened = [s for s in vector.steps or () if s["widened"]]
        if widened:
            raise GenerationError(
                f"{vector_id}: step {widened[0]['step']} ({widened[0]['instruction']}) reads a "
                "value the interpreter cannot enumerate, so its writes are anything; a golden "
                "vector must not depend on that")
        yield vector
