"""stage_table_11_1: a validator that applies the Direct3D 11.1 stage table on runtime 11.0.

UAV instructions run in every stage only on the 11.1 runtime; on 11.0 only in pixel and compute
shaders. The asm pages print both tables flattened together (an erratum of imm_atomic_iadd's
page), so a validator reading them allows UAV stores and atomics in vertex, hull, domain and
geometry shaders on 11.0.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import LegalityRule
from sm5.vectors.format import Vector


class StageTable111(NaiveTranslator):
    name = "stage_table_11_1"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        return rule.check == "stage"
