"""The known divergences of each D3D11 implementation under Wine (the YAML files next to this
module): Wine's d3d11 per renderer, and DXVK."""

from __future__ import annotations

from pathlib import Path

from sm5.conformance.expectations import Expectations, load_expectations

#: The expectations file of each renderer (``d3d11`` is the OpenGL one).
FILES = {
    "gl": Path(__file__).with_name("expectations.yaml"),
    "vulkan": Path(__file__).with_name("expectations-vulkan.yaml"),
    "dxvk": Path(__file__).with_name("expectations-dxvk.yaml"),
}


def d3d11_expectations(renderer: str = "gl") -> Expectations:
    """The expectations file of ``d3d11`` (``gl``), ``d3d11:vulkan`` or ``d3d11:dxvk``, loaded
    and checked."""
    return load_expectations(FILES[renderer])
