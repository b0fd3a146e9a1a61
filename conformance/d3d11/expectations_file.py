"""The known divergences of Wine's d3d11 per renderer (the YAML files next to this module)."""

from __future__ import annotations

from pathlib import Path

from sm5.conformance.expectations import Expectations, load_expectations

#: The expectations file of each renderer (``d3d11`` is the OpenGL one).
FILES = {
    "gl": Path(__file__).with_name("expectations.yaml"),
    "vulkan": Path(__file__).with_name("expectations-vulkan.yaml"),
}


def d3d11_expectations(renderer: str = "gl") -> Expectations:
    """The expectations file of ``d3d11`` (``gl``) or ``d3d11:vulkan``, loaded and checked."""
    return load_expectations(FILES[renderer])
