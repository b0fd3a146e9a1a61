"""atomic_dst_broadcast: the returned value is written to all four components of dst0.

RenderDoc's atomic case writes the original value "broadcast to all components" of dst0, and
dxbc-spirv broadcasts the scalar result (``broadcastScalar``); unless the write honours dst0's
single-component mask, the other components of the register are clobbered.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import Machine, NaiveTranslator
from sm5.oracle.machine.program import Operand


class AtomicDstBroadcast(NaiveTranslator):
    name = "atomic_dst_broadcast"

    def write_scalar(self, dst: Operand, value: int, m: Machine) -> None:
        m.registers[dst.register][:] = [value] * 4
