"""The known divergences of vkd3d-shader on lavapipe (``expectations.yaml`` next to this file)."""

from __future__ import annotations

from sm5.conformance.expectations import Expectations, load_expectations
from sm5.conformance.vkd3d.adapter import EXPECTATIONS_FILE


def vkd3d_expectations() -> Expectations:
    """The expectations file of the ``vkd3d`` implementation, loaded and checked."""
    return load_expectations(EXPECTATIONS_FILE)
