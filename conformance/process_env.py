"""Environment variables an adapter sets in this process for a library it loads here (the Vulkan
loader and lavapipe of the vkd3d adapter), kept out of other implementations' subprocesses.

A library loaded in process reads its settings from ``os.environ``, so the adapter must set them
there; a Wine runner started later by the same process (``sm5 pipeline`` runs vkd3d, then the
D3D11 implementations) would otherwise inherit them: lavapipe's ICD forced, llvmpipe without its
worker threads, Mesa's cache moved. A value the user set is never recorded, so it still reaches
every subprocess.
"""

from __future__ import annotations

import os

_SET: dict[str, str] = {}


def set_in_process(key: str, value: str) -> None:
    """Set ``key`` for this process's own libraries only."""
    os.environ[key] = value
    _SET[key] = value


def setdefault_in_process(key: str, value: str) -> None:
    """:func:`set_in_process` unless the user set ``key``."""
    if not os.environ.get(key):
        set_in_process(key, value)


def subprocess_environ() -> dict[str, str]:
    """``os.environ`` without the values set for this process's own libraries."""
    return {k: v for k, v in os.environ.items() if _SET.get(k) != v}
