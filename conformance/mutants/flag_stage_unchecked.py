"""flag_stage_unchecked: a validator that checks sync's flags only in the compute shader.

Outside the compute shader sync exists only as sync_uglobal (FS 22.17.7): there is no thread
group to wait for (_t), no g# to fence (_g) and no group scope (_ugroup). A validator that
checks the flag combination only where the compute shader allows it lets ``sync_g`` and
``sync_uglobal_t`` through in a pixel shader.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.validator_helpers import reads
from sm5.oracle.model.spec import FLAG_FEATURE, LegalityRule
from sm5.vectors.format import Vector


class FlagStageUnchecked(NaiveTranslator):
    name = "flag_stage_unchecked"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        return reads(rule, "stage") and rule.reject_if is not None and any(
            n.startswith(FLAG_FEATURE) for n in rule.reject_if.names)
