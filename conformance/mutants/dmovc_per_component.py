"""dmovc_per_component: dmovc selects each 32-bit half by its own condition component.

dmovc moves whole doubles: src0's .x decides the .xy double and .y the .zw double. A translator
that reuses its movc path selects every 32-bit component by the condition component of the same
position, so a double can be assembled from halves of both sources.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import U32, Machine, NaiveTranslator
from sm5.oracle.machine.program import COMPONENTS, Instruction


class DmovcPerComponent(NaiveTranslator):
    name = "dmovc_per_component"

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
            halves = []
            for k in (2 * lane, 2 * lane + 1):
                chosen = self.is_true(cond[k])
                halves.append((src1_op if chosen else src2_op, (src1 if chosen else src2)[k]))
            bits = halves[0][1] | halves[1][1] << 32
            op = halves[1][0]  # the modifier of the source the high half came from
            bits = self.modified(bits, op.neg, op.abs)
            if ins.sat:
                bits = self.saturated(bits)
            results.append((COMPONENTS.index(letters[0]), bits))
        for first, bits in results:
            out[first], out[first + 1] = bits & U32, bits >> 32
