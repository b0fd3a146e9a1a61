"""What a vector is, as the predicates of an expectations file see it.

A vector id is ``<instruction>/<category>/<number>`` (the vector format), so the instruction and
the category come from the id; the clauses and flags are the vector's own fields; the operand
forms come from the instruction the vector is about (its subject, named by the id:
``sm5.oracle.machine.program.subject_positions``; the last one where the program holds several),
each operand paired with its spec entry (name, role) and the width of the values it holds.

The width is the spec's, never an instruction name's: an operand is ``double`` when the spec
says it holds doubles, by either of two declarations: a semantic input of 64 bits named after
it (``src1: u64``), or lanes that are whole doubles (more than one write mask or swizzle is
allowed and every one is made of the pairs ``xy`` and ``zw``, as ``.xy, .zw, .xyzw`` or
``.xyzw, .xyxy, .zwxy, .zwzw``; a lone ``.xyzw`` says nothing); any
other operand of a spec instruction is ``32-bit``. An instruction the spec does not know has
operands of unknown width, which no ``type`` predicate matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.machine.program import subject_of, subject_positions
from sm5.oracle.model.spec import InstructionSpec, load_default
from sm5.vectors.format import Vector
from sm5.vectors.siblings import default_variant, tells_apart

#: Semantic input types that hold one double (two 32-bit components).
DOUBLE_INPUT_TYPES = frozenset({"u64", "f64"})
#: The component pairs that hold one double each.
DOUBLE_PAIRS = frozenset({"xy", "zw"})
#: The operand value widths a predicate can name.
OPERAND_TYPES = ("double", "32-bit")


@dataclass(frozen=True)
class OperandFact:
    """One operand of the instruction under test, as written and as the spec declares it."""

    file: str  # as written: r, u, g, l (a 32-bit immediate), or an index-less input name
    name: str  # the spec's operand name (dest, src1, ...); "" when the spec does not know it
    role: str  # dst | memory | src; "" when unknown
    type: str  # double | 32-bit; "" when unknown
    register: str = ""  # the register as written (u3, r0); the file for immediates
    components: str = ""  # the write mask or swizzle letters as written ("" when none)


def id_parts(vector_id: str) -> tuple[str, str]:
    """(instruction, category) of a vector id ``<instruction>/<category>/<number>``."""
    parts = vector_id.split("/")
    return parts[0], parts[1] if len(parts) > 2 else ""


def _whole_doubles(lanes: tuple[str, ...]) -> bool:
    """Every mask or swizzle is made of the pairs xy and zw (a double each)."""
    # One allowed form (a store's .xyzw) says nothing of doubles: it takes a choice of pairs.
    return len(lanes) > 1 and all(
        len(x) % 2 == 0 and all(x[i:i + 2] in DOUBLE_PAIRS for i in range(0, len(x), 2))
        for x in lanes)


def operand_type(instruction: InstructionSpec, operand: str) -> str:
    """``double`` when the spec declares the operand's values 64-bit, else ``32-bit``."""
    for declared in instruction.semantics.inputs:
        if declared.name == operand and declared.type in DOUBLE_INPUT_TYPES:
            return "double"
    spec = instruction.operand(operand)
    lanes = spec.masks if spec.selection == "mask" else \
        spec.swizzles if spec.selection == "swizzle" else ()
    return "double" if _whole_doubles(lanes) else "32-bit"


@cache
def _spec_operands(name: str) -> tuple[tuple[str, str, str], ...] | None:
    """(name, role, type) of each operand of a spec instruction, or None if it is not one."""
    spec = load_default()
    if name not in spec.instructions:
        return None
    instruction = spec.instruction(name)
    return tuple((op.name, op.role, operand_type(instruction, op.name))
                 for op in instruction.operands)


@lru_cache(maxsize=8192)
def operand_facts(program: tuple[str, ...], subject: str) -> tuple[OperandFact, ...]:
    """The operands of the instruction the vector is about (``subject``, the instruction its id
    names; the last of that name); none when the program does not parse (a must-reject vector
    may be malformed on purpose) or holds no such instruction."""
    try:
        parsed = parse_vector_program(program)
    except Sm5Error:
        return ()
    positions = subject_positions(parsed, subject)
    if not positions:
        return ()
    under_test = parsed.instructions[positions[-1]]
    declared = _spec_operands(under_test.name) or ()
    facts: list[OperandFact] = []
    for i, op in enumerate(under_test.operands):
        name, role, width = declared[i] if i < len(declared) else ("", "", "")
        facts.append(OperandFact(op.file, name, role, width, op.register, op.components))
    return tuple(facts)


@lru_cache(maxsize=8192)
def declared_types(program: tuple[str, ...]) -> dict[str, str]:
    """Register (``u0``, ``t1``) -> the element type its declaration names (``uint``, ``sint``,
    ``float``, ...; typed views only, the first of the four); none when the program does not
    parse."""
    try:
        parsed = parse_vector_program(program)
    except Sm5Error:
        return {}
    out: dict[str, str] = {}
    for decl in parsed.declarations:
        if decl.register is not None and decl.return_type:
            out[f"{decl.register.file}{decl.register.index}"] = decl.return_type[0]
    return out



@cache
def known_siblings() -> frozenset[str]:
    """Every sibling id some instruction of the spec lists."""
    return frozenset(s.id for ins in load_default().instructions.values() for s in ins.siblings)


def sibling_tells_apart(vector: Vector, sibling_id: str) -> bool:
    """An implementation computing the vector's instruction as its sibling ``sibling_id``
    fails this vector (False where the instruction has no such sibling). Predicates test it
    after their cheaper fields, so it runs the interpreter only on the vectors they name."""
    variant = default_variant(subject_of(vector.id), sibling_id)
    return variant is not None and tells_apart(vector, variant)
