"""Garbage collection during a conformance run: fewer, larger young-generation collections.

A run allocates many short-lived containers per vector (decoded JSON, environments, expected
states) while its caches and its report keep many long-lived ones. With CPython's default
threshold (700 allocations) a run over the golden set triggers about 900 young collections,
whose promotions and the older-generation passes they trigger cost about a tenth of the oracle's
run (``benchmarks/conformance_overhead.py``). Reference counting frees nearly everything a run
drops (it builds almost no cyclic garbage), so collecting young objects in batches of
:data:`YOUNG_THRESHOLD` keeps memory bounded and does the same work in fewer passes. The policy
is the run's alone: the previous thresholds come back when it ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Allocations between two young-generation collections while a run lasts.
YOUNG_THRESHOLD = 100_000


@contextmanager
def young_collections_batched(threshold: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Raise the young-generation threshold to ``threshold`` (never lower it) for the block."""
    before = gc.get_threshold()
    gc.set_threshold(max(threshold, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
