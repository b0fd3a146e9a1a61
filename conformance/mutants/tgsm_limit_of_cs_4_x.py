"""tgsm_limit_of_cs_4_x: a validator that enforces cs_4_x's 16 KB of g# on cs_5_0 too.

cs_4_x has 16 KB of thread group shared memory, cs_5_0 32 KB (FS 18.6.6, 18.7.2.8); a validator
with one constant for every compute target rejects legal cs_5_0 programs above 16 KB.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.validator_helpers import rules_broken_elsewhere
from sm5.oracle.machine.program import Program
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector


class TgsmLimitOfCs4x(NaiveTranslator):
    name = "tgsm_limit_of_cs_4_x"
    capabilities = frozenset({"executes", "validates"})

    def also_rejects(self, program: Program, vector: Vector) -> str | None:
        model = load_default().model
        stage = model.target(vector.target).stage
        lowest = min((t for t in model.targets if t.stage == stage), key=lambda t: t.model)
        broken = rules_broken_elsewhere(program, vector, target=lowest.name,
                                        reading="tgsm_total")
        return broken[0] if broken else None
