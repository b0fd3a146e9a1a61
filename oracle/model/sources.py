"""Where a fact comes from, and a defect of the sources with the resolution taken: the values
every part of the spec model cites (instructions, flow control, declarations)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceRef:
    """A section of one of the sources listed in ``spec/model.yaml``."""

    ref: str
    section: str


@dataclass(frozen=True)
class Erratum:
    """A defect of the sources (``defect``) and the reading taken (``resolution``)."""

    id: str
    sources: tuple[str, ...]
    defect: str
    resolution: str
