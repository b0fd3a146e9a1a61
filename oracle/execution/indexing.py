"""Element indices: the operands of indexable temps (``x0[r1.x + 2]``), constant buffers
(``cb0[3]``) and the immediate constant buffer (``icb[r0.y]``), resolved against a state.

An element index is the number written plus, where one is written, a register component read as
an unsigned 32-bit integer; the sum wraps modulo 2^32 and is then bounds-checked (erratum
``state.relative_index_wrap``): the rules ``index`` and ``in_range`` of spec/model.yaml's
``element_index``, which ``sm5 prove`` proves on 32-bit words. Resolving an instruction
replaces every such index by the element it names, so the semantics and the interpreter see only
numbered elements. What an index past
the end gives is the register file's ``out_of_range`` in spec/model.yaml: ``zero`` (the read
gives 0 in every component, done where the element is read) or an outcome of the whole
program, raised here as :class:`ProgramUndefined`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sm5.oracle.errors import ExecError
from sm5.oracle.machine.program import Instruction, Operand, Program, storage_name
from sm5.oracle.machine.state import Accept
from sm5.oracle.model.spec import ElementIndex, Model

#: An ``out_of_range`` that reads 0 (any other value names an outcome of the program).
ZERO = "zero"


class ProgramUndefined(Exception):
    """An access the sources leave undefined for the rest of the invocation: the program's
    outcome is ``outcome`` (of scope program) and every word it may write accepts anything."""

    def __init__(self, outcome: str, line: int) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.line = line


class IndexUnknown(Exception):
    """An element index whose register component is not one exact value."""


def element_count(program: Program, register: str) -> int:
    """The elements of a declared indexable temp (its declaration's first number)."""
    decl = program.declaration_of(register)
    if decl is None or not decl.numbers:
        raise ExecError(f"{register} is not declared (dcl_indexableTemp)")
    return decl.numbers[0]


def declared_files(model: Model) -> frozenset[str]:
    """The register files whose elements their declaration counts (x#)."""
    return frozenset(f.name for f in model.register_files if f.elements == "declared")


def register_files(model: Model) -> frozenset[str]:
    """The files whose components live in a state's registers: r#, and every file that
    stands for r# as a destination (x#)."""
    return frozenset({"r"} | {f.name for f in model.register_files
                              if f.stands_for.get("dst") == "r"})


def has_element_index(instruction: Instruction) -> bool:
    return any(op.element is not None for op in instruction.operands)


def resolve(instruction: Instruction, program: Program, model: Model,
            read: Callable[[str, int], Accept]) -> Instruction:
    """``instruction`` with every element index replaced by the element it names.

    ``read(register, component)`` gives a register component of the state (``r1``, ``x0[2]``).
    Raises :class:`IndexUnknown` where an index register is not exact, and
    :class:`ProgramUndefined` where an indexable temp's index is past its end."""
    if not has_element_index(instruction):
        return instruction
    declared = declared_files(model)
    rules = model.element_index
    assert rules is not None
    operands = []
    for op in instruction.operands:
        if op.element is None:
            operands.append(op)
            continue
        element = _element(op, read, rules)
        if op.file in declared and not rules.inside(element,
                                                    element_count(program, op.register)):
            out = model.files_by_name[op.file].out_of_range
            if out is None or out == ZERO:
                raise ExecError(f"{op.file}: an out-of-range element has no outcome")
            raise ProgramUndefined(out, instruction.line)
        operands.append(replace(op, element=element, relative=None))
    return replace(instruction, operands=tuple(operands))


def _element(op: Operand, read: Callable[[str, int], Accept], rules: ElementIndex) -> int:
    assert op.element is not None
    index = op.relative
    if index is None:
        return rules.element(0, op.element)
    if index.relative is not None:
        raise ExecError(f"{op.register}: an element index nested twice (program.relative_index)")
    register = storage_name(index)
    value = read(register, "xyzw".index(index.components[0]))
    if not isinstance(value, int):
        raise IndexUnknown(register)
    return rules.element(value, op.element)
