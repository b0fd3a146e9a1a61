"""Legality is linear in the program's length: a program of 100,000 declaration lines is
checked in seconds (it was quadratic: 16,000 lines took 65 s and 100,000 never ended)."""

from __future__ import annotations

import time

import pytest

from sm5.oracle.legality import violations
from sm5.oracle.machine.program import Declaration, Instruction, Operand, Program
from sm5.oracle.model.spec import load_default


def _program(declarations: int) -> Program:
    """``dcl_uav_raw u0 .. uN`` and ``dcl_tgsm_raw g0 .. gN`` then one instruction of the spec
    on ``u0`` (built as values, so only the checker is timed)."""
    spec = load_default()
    lines: list[Declaration | Instruction] = []
    for i in range(declarations // 2):
        lines.append(Declaration("dcl_uav_raw", Operand("u", i)))
        lines.append(Declaration("dcl_tgsm_raw", Operand("g", i), numbers=(4,)))
    name, ins = next(iter(spec.instructions.items()))
    operands = tuple(Operand("u", 0, selection="mask", components="x") if "u" in o.files
                     else Operand("r", 0, selection="swizzle", components="xyzw")
                     for o in ins.operands)
    lines.append(Instruction(name, operands))
    return Program(tuple(lines))


def _checked_in(program: Program) -> float:
    start = time.monotonic()
    broken = violations(program, "cs_5_0", "11.0")
    elapsed = time.monotonic() - start
    ids = {rule.id for rule in broken}
    assert any("slot" in rule_id for rule_id in ids), ids  # 50,000 UAVs break the slot limit
    return elapsed


@pytest.mark.slow  # 10 to 20 s; the growth test below checks linearity in the default run
def test_hundred_thousand_declarations_in_seconds() -> None:
    assert _checked_in(_program(100_000)) < 60


def test_legality_time_grows_linearly() -> None:
    """Four times the lines cost well under sixteen times the time (what quadratic gives)."""
    small = min(_checked_in(_program(5_000)) for _ in range(2))
    large = min(_checked_in(_program(20_000)) for _ in range(2))
    assert large < 8 * small + 0.5, (small, large)
