"""One pass over the vector files, keeping only what the report shows: counts and ids.

Vectors are streamed (``sm5.vectors.format.read_file``), so a large golden set costs one id list per
clause, not the vectors themselves.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import AsmError
from sm5.oracle.machine.program import COMPONENTS, Instruction, subject_positions
from sm5.oracle.model.spec import InstructionSpec, OperandSpec, Spec
from sm5.vectors.format import Vector, canonical, read_file

#: The class of a swizzle outside an operand's allowed list.
OTHER_SWIZZLE = "other"
#: The class of an immediate source, which carries no swizzle.
IMMEDIATE = "immediate"


def swizzle_pattern(letters: str) -> str:
    """Which letters of a swizzle repeat: ``xyzw`` -> ``0123``, ``zzxz`` -> ``0010``. Swizzles
    of one pattern read the same shape of data; a decoder bug usually shows per pattern."""
    first: dict[str, str] = {}
    return "".join(first.setdefault(c, str(len(first))) for c in letters)


#: The 15 patterns of a four-letter swizzle, in order of first appearance over xxxx..wwww.
SWIZZLE_PATTERNS = tuple(dict.fromkeys(
    swizzle_pattern("".join(p)) for p in itertools.product(COMPONENTS, repeat=4)))


@dataclass(frozen=True)
class VectorFile:
    name: str
    instruction: str
    count: int
    generator: str


@dataclass(frozen=True)
class MaskSwizzleCount:
    total: int
    rejected: int


@dataclass(frozen=True)
class VectorIndex:
    """What the report needs to know about the vectors it was given."""

    files: tuple[VectorFile, ...]
    total: int
    per_instruction: Mapping[str, int]
    clause_ids: Mapping[str, tuple[str, ...]]  # clause id -> sorted vector ids
    vector_clauses: Mapping[str, tuple[str, ...]]  # vector id -> clause ids
    vector_instruction: Mapping[str, str]
    rejects_by_rule: Mapping[str, int]
    cell_totals: Mapping[tuple[str, str, str], int]  # (instruction, target, runtime)
    availability_rejects: Mapping[tuple[str, str, str], int]
    outcomes: Mapping[tuple[str, str], int]  # (instruction, outcome)
    mask_swizzle: Mapping[tuple[str, str, str, str], MaskSwizzleCount]
    unparsed: Mapping[str, int]


def swizzle_column(operand: OperandSpec, letters: str, *, is_immediate: bool = False) -> str:
    """The column a swizzle falls in: an immediate has none; otherwise the swizzle itself when
    the spec lists the allowed ones, else its letter-equality pattern."""
    if is_immediate:
        return IMMEDIATE
    if operand.swizzles:
        return letters if letters in operand.swizzles else OTHER_SWIZZLE
    return swizzle_pattern(letters)


def mask_operand(ins: InstructionSpec) -> OperandSpec | None:
    return next((op for op in ins.operands if op.selection == "mask"), None)


def swizzle_operands(ins: InstructionSpec) -> tuple[OperandSpec, ...]:
    return tuple(op for op in ins.operands if op.selection == "swizzle")


def _subject(lines: tuple[str, ...], subject: str, spec: Spec, source: str
             ) -> Instruction | None:
    """The instruction the vector is about (its subject, named by its file and id), if the
    program parses and holds it."""
    try:
        program = parse_program(list(lines), source=source, spec=spec)
    except AsmError:
        return None
    positions = subject_positions(program, subject)
    return program.instructions[positions[-1]] if positions else None


def _availability_rules(spec: Spec) -> frozenset[str]:
    """Ids of the rules generated from the availability tables (target and stage checks)."""
    return frozenset(r.id for ins in spec.instructions.values() for r in ins.rules
                     if r.check in ("target", "stage"))


def vector_files(paths: Iterable[Path]) -> list[Path]:
    """Files named directly and the ``*.jsonl`` files of folders, each once, sorted by name
    (the order the paths were given in does not change the report)."""
    files: set[Path] = set()
    for path in paths:
        files.update(path.glob("*.jsonl") if path.is_dir() else [path])
    return sorted(files, key=lambda f: (f.name, str(f)))


def scan(paths: Iterable[Path], spec: Spec) -> VectorIndex:
    files: list[VectorFile] = []
    clause_ids: dict[str, list[str]] = defaultdict(list)
    vector_clauses: dict[str, tuple[str, ...]] = {}
    vector_instruction: dict[str, str] = {}
    per_instruction: Counter[str] = Counter()
    rejects_by_rule: Counter[str] = Counter()
    cell_totals: Counter[tuple[str, str, str]] = Counter()
    availability_rejects: Counter[tuple[str, str, str]] = Counter()
    outcomes: Counter[tuple[str, str]] = Counter()
    mask_swizzle: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    unparsed: Counter[str] = Counter()
    availability = _availability_rules(spec)
    parsed: dict[tuple[tuple[str, ...], str], Instruction | None] = {}
    for file in vector_files(paths):
        header, vectors = read_file(file)
        count = 0
        for vector in vectors:
            count += 1
            name = header.subject
            vector_instruction[vector.id] = name
            vector_clauses[vector.id] = vector.clauses
            per_instruction[name] += 1
            for clause in vector.clauses:
                clause_ids[clause].append(vector.id)
            _count_outcomes(vector, name, outcomes, rejects_by_rule)
            cell = (name, vector.target, vector.runtime)
            cell_totals[cell] += 1
            if vector.rejected and vector.expect.get("rule") in availability:
                availability_rejects[cell] += 1
            if name in spec.instructions:
                key = (vector.program, name)
                if key not in parsed:  # many vectors share one program
                    parsed[key] = _subject(vector.program, name, spec, file.name)
                instruction = parsed[key]
                if instruction is None:
                    unparsed[name] += 1
                else:
                    _count_mask_swizzle(spec.instructions[name], instruction, vector.rejected,
                                        mask_swizzle)
        files.append(VectorFile(file.name, header.subject, count,
                                _generator_text(header.generator)))
    return VectorIndex(
        files=tuple(files), total=len(vector_instruction), per_instruction=dict(per_instruction),
        clause_ids={k: tuple(sorted(v)) for k, v in clause_ids.items()},
        vector_clauses=vector_clauses, vector_instruction=vector_instruction,
        rejects_by_rule=dict(rejects_by_rule), cell_totals=dict(cell_totals),
        availability_rejects=dict(availability_rejects), outcomes=dict(outcomes),
        mask_swizzle={k: MaskSwizzleCount(v[0], v[1]) for k, v in mask_swizzle.items()},
        unparsed=dict(unparsed))


def _generator_text(generator: Mapping[str, object]) -> str:
    """``name report-tests · seed 0 · ...`` in key order."""
    return " · ".join(f"{key} {value if isinstance(value, (str, int)) else canonical(value)}"
                      for key, value in sorted(generator.items()))


def _count_outcomes(vector: Vector, name: str, outcomes: Counter[tuple[str, str]],
                    rejects_by_rule: Counter[str]) -> None:
    listed = vector.expect.get("outcomes", ())
    for outcome in sorted({str(o) for o in listed} if isinstance(listed, list) else set()):
        outcomes[(name, outcome)] += 1
    if vector.rejected and isinstance(vector.expect.get("rule"), str):
        rejects_by_rule[vector.expect["rule"]] += 1


def _count_mask_swizzle(ins: InstructionSpec, instruction: Instruction, rejected: bool,
                        counts: dict[tuple[str, str, str, str], list[int]]) -> None:
    mask_op = mask_operand(ins)
    if mask_op is None:
        return
    position = {op.name: n for n, op in enumerate(ins.operands)}
    if position[mask_op.name] >= len(instruction.operands):
        return
    mask = instruction.operands[position[mask_op.name]].components
    for op in swizzle_operands(ins):
        n = position[op.name]
        if n >= len(instruction.operands):
            continue
        operand = instruction.operands[n]
        cls = swizzle_column(op, operand.components, is_immediate=operand.is_immediate)
        cell = counts[(ins.name, op.name, mask, cls)]
        cell[0] += 1
        cell[1] += int(rejected)
