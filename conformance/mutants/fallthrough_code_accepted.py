"""fallthrough_code_accepted: a validator that lets a switch case holding code fall through.

D3D10 allowed a case block with code to fall into the next case; D3D11 does not (FS 22.7.18),
and a shader model 5 program doing it is ill-formed. A validator written from C's switch, or
from D3D10, accepts it (DXVK's older compiler also mistranslated such vs_4_0 code). The
must-reject vector of ``structure.fallthrough_with_code`` catches it.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import LegalityRule
from sm5.vectors.format import Vector

RULE = "structure.fallthrough_with_code"


class FallthroughCodeAccepted(NaiveTranslator):
    name = "fallthrough_code_accepted"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        return rule.id == RULE
