"""A naive, translator-style implementation of the specified instructions: the mutants' base.

It is written the way a DXBC translator or a shader debugger is: plain integer code, one method
per decision a real implementation makes (operand swizzle, write mask, structured address, bounds
check, atomic add and return value, dmovc condition, double modifiers, saturation, legality).
Undefined outcomes get whatever the straightforward code does (out-of-bounds writes are dropped).
The class conforms on the golden set (a test shows it); every mutant overrides one method with a
bug a real implementation has or had, so a mutant that survives points at a gap in the vectors.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

from sm5.conformance.interface import Result
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.legality import violations
from sm5.oracle.program import COMPONENTS, Instruction, Operand, Program
from sm5.oracle.spec import LegalityRule
from sm5.oracle.state import state_from_json
from sm5.vectors.format import Vector

U32 = 0xFFFFFFFF
SIGN64 = 1 << 63
INSTRUCTIONS = ("store_structured", "imm_atomic_iadd", "dmovc")


@dataclass
class Machine:
    """A mutable copy of a state in its JSON form."""

    registers: dict[str, list[int]]
    resources: dict[str, dict[str, Any]]
    invocation: str

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Machine:
        registers = {k: list(v) for k, v in doc.items() if k.startswith("r")}
        resources = {k: {**v, "data": list(v["data"])} for k, v in doc.items()
                     if k[0] in "ug" and isinstance(v, dict)}
        return cls(registers, resources, str(doc.get("invocation", "active")))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.registers, **self.resources}
        if self.invocation != "active":
            out["invocation"] = self.invocation
        return out


def f64(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def bits64(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


class NaiveTranslator:
    """The bug-free base. Subclasses name the bug in their docstring and override one hook."""

    name = "naive"
    capabilities: frozenset[str] = frozenset({"executes"})

    # -- driver --------------------------------------------------------------------------------

    def run(self, vector: Vector) -> Result:
        try:
            program = parse_vector_program(vector.program)
            if "validates" in self.capabilities:
                broken = self.rejects(program, vector)
                if broken is not None:
                    return Result.rejected(broken)
            machine = Machine.of(dict(vector.state))
            instruction = self.instruction(program)
            getattr(self, instruction.name)(instruction, machine)
        except Sm5Error as exc:
            return Result.error(str(exc))
        return Result.of_state(machine.to_json())

    def instruction(self, program: Program) -> Instruction:
        found = [i for i in program.instructions if i.name in INSTRUCTIONS]
        if len(found) != 1:
            raise Sm5Error(f"expected one of {', '.join(INSTRUCTIONS)} in the program")
        return found[0]

    def rejects(self, program: Program, vector: Vector) -> str | None:
        """The first legality rule the instance breaks (the oracle's checker), or None."""
        state = state_from_json(vector.state)
        for rule in violations(program, vector.target, vector.runtime, state):
            if not self.overlooks(rule, vector):
                return rule.id
        return None

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        """Validating mutants overlook some rules."""
        return False

    # -- operands ------------------------------------------------------------------------------

    def swizzled(self, op: Operand, m: Machine) -> list[int]:
        """The four components of a source after its swizzle or select."""
        if op.is_immediate:
            return list(op.values) if len(op.values) == 4 else [op.values[0]] * 4
        if op.index is None:
            return [0, 0, 0, 0]  # vThreadIDInGroupFlattened: thread 0
        reg = m.registers[op.register]
        letters = (op.components or "xyzw").ljust(4, (op.components or "w")[-1])
        return [reg[COMPONENTS.index(c)] for c in letters[:4]]

    def selected(self, op: Operand, m: Machine) -> int:
        return self.swizzled(op, m)[0]

    def write_scalar(self, dst: Operand, value: int, m: Machine) -> None:
        """dst0 of an atomic: the one component its mask names."""
        m.registers[dst.register][COMPONENTS.index(dst.components[0])] = value

    # -- addressing ----------------------------------------------------------------------------

    def store_count(self, mask: str) -> int:
        """How many consecutive words a store writes for its write mask."""
        return len(mask)

    def structured_word(self, res: dict[str, Any], index: int, offset: int) -> int:
        stride: int = res["stride"]
        return (stride * index + offset) // 4

    def structured_in_bounds(self, res: dict[str, Any], index: int, offset: int,
                             words: int) -> bool:
        return offset % 4 == 0 and offset + 4 * words <= res["stride"] and \
            index < res["count"]

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        """The word indices a structured access touches; [] drops it (out of bounds)."""
        if not self.structured_in_bounds(res, index, offset, words):
            return []
        first = self.structured_word(res, index, offset)
        return list(range(first, first + words))

    def raw_word(self, res: dict[str, Any], address: int) -> int | None:
        if address % 4 or address + 4 > 4 * len(res["data"]):
            return None
        return address // 4

    def typed_word(self, res: dict[str, Any], index: int) -> int | None:
        return index if index < len(res["data"]) else None

    def atomic_word(self, res: dict[str, Any], register: str, address: list[int]
                    ) -> int | None:
        if res["kind"] == "raw":
            return self.raw_word(res, address[0])
        if res["kind"] == "typed":
            return self.typed_word(res, address[0])
        words = self.structured_words(res, register, address[0], address[1], 1)
        return words[0] if words else None

    # -- store_structured ----------------------------------------------------------------------

    def store_structured(self, ins: Instruction, m: Machine) -> None:
        dst, index_op, offset_op, src = ins.operands
        res = m.resources[dst.register]
        values = self.swizzled(src, m)
        count = self.store_count(dst.components)
        words = self.structured_words(res, dst.register, self.selected(index_op, m),
                                      self.selected(offset_op, m), count)
        for k, word in enumerate(words):
            if 0 <= word < len(res["data"]):
                res["data"][word] = values[k]

    # -- imm_atomic_iadd -----------------------------------------------------------------------

    def atomic_performed(self, invocation: str) -> bool:
        """Helper and discarded invocations do not touch memory."""
        return invocation == "active"

    def atomic_add(self, old: int, value: int) -> int:
        return (old + value) & U32

    def atomic_returns(self, old: int, new: int) -> int:
        return old

    def imm_atomic_iadd(self, ins: Instruction, m: Machine) -> None:
        dst0, mem, address_op, src = ins.operands
        if not self.atomic_performed(m.invocation):
            return
        res = m.resources[mem.register]
        word = self.atomic_word(res, mem.register, self.swizzled(address_op, m))
        if word is None or not 0 <= word < len(res["data"]):
            return
        old = res["data"][word]
        new = self.atomic_add(old, self.selected(src, m))
        res["data"][word] = new
        self.write_scalar(dst0, self.atomic_returns(old, new), m)

    # -- dmovc ---------------------------------------------------------------------------------

    def dmovc_condition(self, cond: list[int], lane: int, mask: str) -> int:
        """The src0 component deciding double ``lane`` (0 = .xy, 1 = .zw)."""
        return cond[lane]

    def is_true(self, value: int) -> bool:
        return value != 0

    def dmovc_first_component(self, lane: int, mask: str) -> int:
        return 2 * lane

    def modified(self, bits: int, neg: bool, absolute: bool) -> int:
        if absolute:
            bits &= ~SIGN64
        if neg:
            bits ^= SIGN64
        return bits

    def saturated(self, bits: int) -> int:
        value = f64(bits)
        if math.isnan(value):
            return 0
        return bits64(min(1.0, max(0.0, value)))

    def dmovc(self, ins: Instruction, m: Machine) -> None:
        dest, cond_op, src1_op, src2_op = ins.operands
        cond = self.swizzled(cond_op, m)
        src1 = self.swizzled(src1_op, m)
        src2 = self.swizzled(src2_op, m)
        out = m.registers[dest.register]
        results: list[tuple[int, int]] = []
        for lane, letters in enumerate(("xy", "zw")):
            if letters not in dest.components:
                continue
            chosen = self.is_true(self.dmovc_condition(cond, lane, dest.components))
            op, values = (src1_op, src1) if chosen else (src2_op, src2)
            bits = values[2 * lane] | values[2 * lane + 1] << 32
            bits = self.modified(bits, op.neg, op.abs)
            if ins.sat:
                bits = self.saturated(bits)
            results.append((self.dmovc_first_component(lane, dest.components), bits))
        for first, bits in results:
            out[first], out[first + 1] = bits & U32, bits >> 32
