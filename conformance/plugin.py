"""pytest plugin (``pytest11`` entry point ``sm5``): inert unless ``--sm5-impl`` is given."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sm5", "sm5 conformance run")
    group.addoption("--sm5-impl", default=None, help="implementation under test")
