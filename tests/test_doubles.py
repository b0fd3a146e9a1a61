"""The double operands as the spec declares them (erratum immediate32_double), read from the
spec: an operand an instruction reads as doubles takes r# or a 64-bit immediate d(...), never a
32-bit l(...), and the legality checker rejects l(...) there."""

from __future__ import annotations

import pytest

from sm5.oracle.asm import parse_program
from sm5.oracle.legality import violations
from sm5.oracle.machine.state import MachineState
from sm5.oracle.model.spec import load_default

SPEC = load_default()
DOUBLE_OPERANDS = sorted(
    (ins.name, i.source.operand) for ins in SPEC.instructions.values()
    for i in ins.semantics.inputs if i.source.kind == "lane")


def test_there_are_double_operands() -> None:
    assert len({name for name, _ in DOUBLE_OPERANDS}) >= 13


@pytest.mark.parametrize(("name", "operand"), DOUBLE_OPERANDS)
def test_a_double_operand_takes_d_not_l(name: str, operand: str) -> None:
    op = next(o for o in SPEC.instruction(name).operands if o.name == operand)
    assert "d" in op.files
    assert "l" not in op.files


@pytest.mark.parametrize(("name", "operand"), DOUBLE_OPERANDS)
def test_l_in_a_double_operand_is_rejected(name: str, operand: str) -> None:
    ins = SPEC.instruction(name)
    texts = []
    for op in ins.operands:
        if op.name == operand:
            texts.append("l(1, 2, 3, 4)")
        elif op.role == "dst":
            texts.append("r0." + op.masks[0] if op.masks else "r0")
        else:
            texts.append("r1")
    flags = "enableDoublePrecisionFloatOps | enable11_1DoubleExtensions"
    program = parse_program(["cs_5_0", f"dcl_globalFlags {flags}",
                             f"{name} {', '.join(texts)}"])
    state = MachineState({"r0": (0, 0, 0, 0), "r1": (0, 0, 0, 0)}, {})
    broken = [rule.id for rule in violations(program, "cs_5_0", "11.1", state)]
    assert f"{name}.operand.{operand}.file" in broken
