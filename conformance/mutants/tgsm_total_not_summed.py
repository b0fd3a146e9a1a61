"""tgsm_total_not_summed: a validator that checks each g# alone against the shared-memory limit.

The limit is on all g# of the program together (FS 18.6.6: 32 KB per thread group); a validator
that tests every declaration on its own accepts 16 KB and 16 KB + 4 bytes on cs_5_0.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.validator_helpers import declared_bytes, reads
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.model.spec import LegalityRule, load_default
from sm5.oracle.rulelang.rules import Value
from sm5.vectors.format import Vector


class TgsmTotalNotSummed(NaiveTranslator):
    name = "tgsm_total_not_summed"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        if rule.reject_if is None or not reads(rule, "tgsm_total"):
            return False
        spec = load_default()
        target = spec.model.target(vector.target)
        sizes = declared_bytes(parse_vector_program(vector.program), "g")
        env: dict[str, Value] = {**spec.model.limits, "stage": target.stage, "model": target.model,
               "runtime": vector.runtime, "tgsm_total": max(sizes, default=0)}
        if not rule.reject_if.names <= env.keys():
            return False
        return not rule.reject_if.holds(env)
