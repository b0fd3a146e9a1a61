"""illegal_masks_accepted: a validator that checks no write masks (``.xz``, ``.y``, ``.x``...).

store_structured allows only ``.x``, ``.xy``, ``.xyz``, ``.xyzw``, dmovc only ``.xy``, ``.zw``,
``.xyzw`` and imm_atomic_iadd's dst0 a single component. RenderDoc's store path assumes the mask
is contiguous from x and never checks it; a validator written the same way lets the illegal masks
through and then executes them.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import LegalityRule
from sm5.vectors.format import Vector


class IllegalMasksAccepted(NaiveTranslator):
    name = "illegal_masks_accepted"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        return rule.check == "mask"
