"""doubles_flag_ignored: a validator that accepts double instructions without the doubles flag.

vkd3d and DXVK simply enable the Float64 capability when they meet a double instruction; the
tokenized program format requires ``dcl_globalFlags enableDoublePrecisionFloatOps`` first. A
validator modelled on a translator forgets the global flag.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import LegalityRule
from sm5.vectors.format import Vector


class DoublesFlagIgnored(NaiveTranslator):
    name = "doubles_flag_ignored"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        return rule.reject_if is not None and "doubles" in rule.reject_if.names
