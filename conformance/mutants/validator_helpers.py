"""What the validating mutants read of a program: declared sizes, and the rules reading a name."""

from __future__ import annotations

import ast

from sm5.conformance.guards import request_state
from sm5.oracle.legality import violations
from sm5.oracle.machine.program import Program
from sm5.oracle.model.spec import LegalityRule, load_default
from sm5.vectors.format import Vector


def reads(rule: LegalityRule, name: str) -> bool:
    """Does the rule's condition read the variable ``name``?"""
    return rule.reject_if is not None and name in rule.reject_if.names


def tests_alignment(rule: LegalityRule) -> bool:
    """Does the rule's condition take a remainder (``stride % 4 != 0``)?"""
    return rule.reject_if is not None and any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
        for node in ast.walk(rule.reject_if.tree))


def declared_numbers(program: Program, name: str) -> list[int]:
    """Every value the program's declarations give the declared number ``name``."""
    spec = load_default()
    out: list[int] = []
    for decl in program.declarations:
        numbers = spec.declarations.declarations[decl.name].numbers
        out.extend(v for n, v in zip(numbers, decl.numbers, strict=False) if n == name)
    return out


def declared_bytes(program: Program, file: str) -> list[int]:
    """The byte size of each declaration of a ``file`` register (``bytes``, or stride x count)."""
    spec = load_default()
    out: list[int] = []
    for decl in program.declarations:
        if decl.register is None or decl.register.file != file:
            continue
        numbers = dict(zip(spec.declarations.declarations[decl.name].numbers, decl.numbers,
                           strict=False))
        out.append(numbers.get("bytes", numbers.get("stride", 0) * numbers.get("count", 0)))
    return out


def rules_broken_elsewhere(program: Program, vector: Vector, *, target: str | None = None,
                           runtime: str | None = None, reading: str) -> list[str]:
    """The rules reading ``reading`` that the program breaks in another context."""
    state = request_state(vector)
    return [r.id for r in violations(program, target or vector.target, runtime or vector.runtime,
                                     state) if reads(r, reading)]
