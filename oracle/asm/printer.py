"""Writing the program model back as canonical SM5 asm text.

One spelling per AST: ``-|r1.zwxy|`` (never ``_abs``), ``, `` between operands, immediates as
``l(5)`` / ``l(1, 2, 3, 4)`` with values below 0x80000000 in decimal and the others as
``0x%08x``; 64-bit immediates as ``d(1.5, -0.0)``, each double in Python's shortest
round-trip spelling, infinities and NaNs as their 16-digit bit pattern ``0x7ff8000000000000``.
The output parses back to an equal AST (``sm5.oracle.asm.parser``).
"""

from __future__ import annotations

import math
import struct

from sm5.oracle.asm.parser import SAT_SUFFIX
from sm5.oracle.machine.program import (
    IMMEDIATE_BITS,
    LABEL_FILE,
    LABEL_SPELLING,
    Declaration,
    Instruction,
    Line,
    Operand,
    Program,
)
from sm5.oracle.model.spec import Spec, load_default

SIGN_BIT = 0x80000000


def format_value(value: int) -> str:
    """An immediate or number: decimal below the sign bit, eight hex digits from it on."""
    return str(value) if value < SIGN_BIT else f"0x{value:08x}"


def format_double(bits: int) -> str:
    """A 64-bit immediate value: the finite double it is (exactly), else its bit pattern."""
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return repr(value) if math.isfinite(value) else f"0x{bits:016x}"


def format_operand(op: Operand) -> str:
    if op.file == LABEL_FILE:
        return f"{LABEL_SPELLING}{op.index}"
    if op.is_immediate:
        spell = format_double if IMMEDIATE_BITS[op.file] == 64 else format_value
        text = f"{op.file}({', '.join(spell(v) for v in op.values)})"
    else:
        text = op.register
        if op.element is not None:
            text = f"{text}[{_element_text(op)}]"
        if op.components:
            text = f"{text}.{op.components}"
    if op.abs:
        text = f"|{text}|"
    if op.neg:
        text = f"-{text}"
    return text


def _element_text(op: Operand) -> str:
    """``2``, ``r1.x`` or ``r1.x + 2`` (the number is left out when it is 0)."""
    assert op.element is not None
    if op.relative is None:
        return format_value(op.element)
    index = format_operand(op.relative)
    return f"{index} + {format_value(op.element)}" if op.element else index


def _format_instruction(ins: Instruction) -> str:
    name = "".join((ins.name, *("_" + f for f in ins.flags)))
    name = name + SAT_SUFFIX if ins.sat else name
    if not ins.operands:
        return name
    return f"{name} {', '.join(format_operand(op) for op in ins.operands)}"


def _format_declaration(decl: Declaration, spec: Spec) -> str:
    decl_spec = spec.declarations.declarations.get(decl.name)
    global_flags = decl_spec.global_flags if decl_spec is not None else ()
    access = decl_spec.access if decl_spec is not None else ()
    suffixes = "".join(f"_{f}" for f in decl.flags if f not in global_flags and f not in access)
    text = decl.name + suffixes
    if decl.return_type:
        text += f" ({','.join(decl.return_type)})"
    arguments = []
    numbers = list(decl.numbers)
    if decl_spec is not None and decl_spec.listed:
        elements = [numbers[k:k + 4] for k in range(0, len(numbers), 4)]
        inner = ", ".join("{ " + ", ".join(format_value(v) for v in e) + " }" for e in elements)
        return f"{text} {{ {inner} }}" if inner else f"{text} {{ }}"
    if decl.register is not None:
        register = format_operand(decl.register)
        if decl_spec is not None and decl_spec.sized and numbers:
            register = f"{register}[{numbers.pop(0)}]"
        arguments.append(register)
    arguments.extend(str(n) for n in numbers)
    access = decl_spec.access if decl_spec is not None else ()
    arguments.extend(f for f in decl.flags if f in access)
    if arguments:
        text += " " + ", ".join(arguments)
    listed = [f for f in decl.flags if f in global_flags]
    if listed:
        text += " " + " | ".join(listed)
    return text


def format_line(x: Line, *, spec: Spec | None = None) -> str:
    """One instruction or declaration as canonical text (the spec tells flag placement)."""
    if isinstance(x, Instruction):
        return _format_instruction(x)
    return _format_declaration(x, load_default() if spec is None else spec)


def format_program(p: Program, *, spec: Spec | None = None) -> list[str]:
    """The lines of a program, the target header (``cs_5_0``) first when set."""
    header = [p.target] if p.target is not None else []
    return header + [format_line(x, spec=spec) for x in p.lines]
