"""typed_defaults_zero: a typed load fills the components its format lacks with 0.

A translator that reads a one-component typed view into a zeroed four-component vector (or a
driver whose null or robust descriptor reads (0, 0, 0, 0)) returns alpha 0 where D3D returns the
format default 1 (1.0f for FLOAT): FS 22.4.6 and 19.1.3.3.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator


class TypedDefaultsZero(NaiveTranslator):
    name = "typed_defaults_zero"

    def typed_element(self, res: dict[str, Any], words: list[int]) -> list[int]:
        element = super().typed_element(res, words)
        return [*element[:1], 0, 0, 0]
