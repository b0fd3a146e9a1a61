"""dmovc_float_compare: the condition is compared as a float (``cond != 0.0``).

Every peer (vkd3d ``spirv_compiler_emit_movc``, DXVK ``emitVectorCmov``, RenderDoc ``DMOVC``)
tests the 32-bit pattern for any bit set; a translator that reads src0 as a float and compares
with 0.0 takes ``0x80000000`` (-0.0f) as false.
"""

from __future__ import annotations

import struct

from sm5.conformance.mutants.base import NaiveTranslator


class DmovcFloatCompare(NaiveTranslator):
    name = "dmovc_float_compare"

    def is_true(self, value: int) -> bool:
        as_float: float = struct.unpack("<f", struct.pack("<I", value))[0]
        return as_float != 0.0
