"""Reading source operands (``sm5.oracle.machine.operands.components``), on hand-written operands:
the swizzle widened by its last letter, a select read everywhere, immediates as written."""

from __future__ import annotations

import pytest

from sm5.oracle.errors import ExecError
from sm5.oracle.machine.operands import components
from sm5.oracle.machine.program import Operand
from sm5.oracle.machine.state import MachineState

STATE = MachineState({"r1": (10, 11, 12, 13)}, {})


@pytest.mark.parametrize(("operand", "expected"), [
    (Operand("r", 1, selection="swizzle", components="wzyx"), (13, 12, 11, 10)),
    (Operand("r", 1, selection="swizzle", components="yx"), (11, 10, 10, 10)),
    (Operand("r", 1, selection="swizzle", components="z"), (12, 12, 12, 12)),
    (Operand("r", 1, selection="select", components="w"), (13, 13, 13, 13)),
    (Operand("r", 1), (10, 11, 12, 13)),
    (Operand("l", values=(7,)), (7, 7, 7, 7)),
    (Operand("l", values=(1, 2, 3, 4)), (1, 2, 3, 4)),
    (Operand("d", values=(0x0123456789ABCDEF,)), (0x89ABCDEF, 0x01234567, 0x89ABCDEF, 0x01234567)),
    (Operand("d", values=(1, 2 << 32)), (1, 0, 0, 2)),
    (Operand("vThreadIDInGroupFlattened"), (0, 0, 0, 0)),
])
def test_components(operand: Operand, expected: tuple[int, ...]) -> None:
    assert components(operand, STATE) == expected
    assert components(operand, STATE) == expected  # the derived read order, cached, agrees


@pytest.mark.parametrize(("operand", "message"), [
    (Operand("r", 2, selection="swizzle", components="xyzw"), "the state has no r2"),
    (Operand("u", 0), "cannot read u0 as a source value"),
])
def test_unreadable_sources(operand: Operand, message: str) -> None:
    with pytest.raises(ExecError, match=message):
        components(operand, STATE)
