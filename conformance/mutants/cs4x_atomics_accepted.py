"""cs4x_atomics_accepted: a validator that allows atomics on cs_4_0 / cs_4_1.

The imm_atomic_iadd page never mentions cs_4_x while store_structured's remarks allow it there;
FS 18.7.2.5 excludes every atomic downlevel. A validator that extends store_structured's
downlevel allowance to atomics accepts them.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import LegalityRule, load_default
from sm5.vectors.format import Vector


class Cs4xAtomicsAccepted(NaiveTranslator):
    name = "cs4x_atomics_accepted"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        spec = load_default()
        atomic = any(rule.id.startswith(f"{ins.name}.") and ins.family == "atomic"
                     for ins in spec.instructions.values())
        return atomic and rule.check == "target" and spec.model.target(vector.target).model < 50
