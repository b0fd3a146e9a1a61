"""swizzle_ignored: source swizzles are ignored (component i reads register component i).

RenderDoc issue #1619 was a swizzle not applied on RW texture loads; store_structured's pseudocode
applies ``swizzle(src0, src0.swizzle)`` and dmovc's sources are swizzled per double. Selects of a
single component (``r0.y``) are still honoured: only four-letter swizzles are dropped.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import Machine, NaiveTranslator
from sm5.oracle.machine.program import Operand


class SwizzleIgnored(NaiveTranslator):
    name = "swizzle_ignored"

    def swizzled(self, op: Operand, m: Machine) -> list[int]:
        if op.selection == "swizzle" and not op.is_immediate and op.index is not None:
            return list(m.registers[op.register])
        return super().swizzled(op, m)
