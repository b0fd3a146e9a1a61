"""Reading operand values from a machine state: swizzles, selects and immediates."""

from __future__ import annotations

from functools import cache

from sm5.oracle.errors import ExecError
from sm5.oracle.machine.program import COMPONENTS, IMMEDIATE_BITS, Operand, element_name
from sm5.oracle.machine.state import MachineState


def components(op: Operand, state: MachineState) -> tuple[int, int, int, int]:
    """The four 32-bit components of a source after its swizzle (no modifiers applied).

    A one-value immediate ``l(v)`` reads as v in every component (``d(v)``: the double v in
    both lanes, low word first); a select reads its component
    everywhere, so ``components(op)[0]`` is the selected value.
    """
    if op.is_immediate:
        values = op.values if len(op.values) == 4 else op.values * 4
        if IMMEDIATE_BITS[op.file] == 64:
            # d(a) reads as the double a in both lanes; d(a, b) as a in .xy, b in .zw.
            pair = op.values if len(op.values) == 2 else op.values * 2
            values = tuple(w for v in pair for w in (v & 0xFFFFFFFF, v >> 32))
        raw = (values[0], values[1], values[2], values[3])
        return raw
    a, b, c, d = read_order(op)
    if op.element is not None:
        if op.relative is not None:
            raise ExecError(f"{op.register}: an element index not resolved before the read")
        constant = state.resources.get(op.register)
        if constant is not None:  # a constant buffer or the icb: 0 past its end
            reg = element_words(constant.data, op.element)
            return (reg[a], reg[b], reg[c], reg[d])
        name = element_name(op.register, op.element)
        try:
            reg = state.registers[name]
        except KeyError:
            raise ExecError(f"the state has no {name}") from None
        return (reg[a], reg[b], reg[c], reg[d])
    if op.index is None:
        # Index-less inputs: the single invocation of a vector is thread 0 of group 0.
        return (0, 0, 0, 0)
    if op.file != "r":
        raise ExecError(f"cannot read {op.register} as a source value")
    try:
        reg = state.registers[op.register]
    except KeyError:
        raise ExecError(f"the state has no {op.register}") from None
    return (reg[a], reg[b], reg[c], reg[d])


def element_words(words: tuple[int, ...], element: int) -> tuple[int, int, int, int]:
    """The four words of ``element`` of a constant buffer's data, or 0s past its end (FS 7.5;
    the icb likewise, erratum state.icb_out_of_range)."""
    first = 4 * element
    if first + 4 > len(words):
        return (0, 0, 0, 0)
    return (words[first], words[first + 1], words[first + 2], words[first + 3])


def read_order(op: Operand) -> tuple[int, int, int, int]:
    """The register components a source reads, in order: its swizzle (a shorter one widened by
    repeating its last letter), its selected component four times, or ``xyzw``."""
    return _read_order(op.selection, op.components)


@cache  # the grammar allows a few hundred (selection, components) pairs at the most
def _read_order(selection: str, components: str) -> tuple[int, int, int, int]:
    letters = components or COMPONENTS
    if selection == "select":
        letters = letters * 4
    elif len(letters) < 4:
        letters = letters + letters[-1] * (4 - len(letters))
    a, b, c, d = (COMPONENTS.index(letter) for letter in letters[:4])
    return (a, b, c, d)


def scalar(op: Operand, state: MachineState) -> int:
    """The selected (first post-swizzle) component."""
    return components(op, state)[0]
