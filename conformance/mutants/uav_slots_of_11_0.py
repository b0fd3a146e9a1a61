"""uav_slots_of_11_0: a validator that enforces 11.0's 8 UAV slots on 11.1 (u8..u63 rejected).

D3D11.0 binds 8 UAVs, D3D11.1 64 (FS 5.3.9). A validator written against the 11.0 constant
(D3D11_PS_CS_UAV_REGISTER_COUNT) rejects legal 11.1 programs declaring u8 and above.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.validator_helpers import rules_broken_elsewhere
from sm5.oracle.machine.program import Program
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector


class UavSlotsOf110(NaiveTranslator):
    name = "uav_slots_of_11_0"
    capabilities = frozenset({"executes", "validates"})

    def also_rejects(self, program: Program, vector: Vector) -> str | None:
        fewest = min(load_default().model.runtimes, key=lambda r: r.uav_slots)
        broken = rules_broken_elsewhere(program, vector, runtime=fewest.name,
                                        reading="uav_slots")
        return broken[0] if broken else None
