"""Garbage collection during a conformance run: few young collections, none over old objects.

A run allocates many short-lived containers per vector (decoded JSON, environments, expected
states) that reference counting frees at once, and keeps a growing set of long-lived ones (its
caches, its report). CPython's cyclic collector walks every container that survived since its
last pass: with the default threshold (700 allocations) a run over the golden set made about 900
passes, and with fewer, larger passes each still walked the run's growing long-lived set, about
a twentieth of the oracle's run (``benchmarks/conformance_overhead.py``). So, while a run lasts,
the young threshold is :data:`YOUNG_THRESHOLD` and, every :data:`FREEZE_EVERY` vectors, what has
survived so far is moved out of the collector's way (``gc.freeze``, which costs nothing). Objects
still die by reference counting as always; only cyclic garbage waits for the end of the run (a
run makes almost none), when everything frozen goes back to the collector's oldest generation
and the previous thresholds come back. A process that froze objects of its own is left alone:
the run then only raises the threshold.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Allocations between two young-generation collections while a run lasts.
YOUNG_THRESHOLD = 100_000
#: Vectors between two freezes of what has survived.
FREEZE_EVERY = 1_000


@contextmanager
def run_collections(threshold: int | None = None, freeze_every: int | None = None
                    ) -> Iterator[Callable[[], None]]:
    """The policy for the block (by default :data:`YOUNG_THRESHOLD` and :data:`FREEZE_EVERY`);
    it yields the function to call after each vector."""
    threshold = YOUNG_THRESHOLD if threshold is None else threshold
    freeze_every = FREEZE_EVERY if freeze_every is None else freeze_every
    before = gc.get_threshold()
    gc.set_threshold(max(threshold, before[0]), *before[1:])
    freezing = gc.get_freeze_count() == 0
    done = 0

    def vector_done() -> None:
        nonlocal done
        done += 1
        if freezing and done % freeze_every == 0:
            gc.freeze()

    try:
        yield vector_done
    finally:
        if freezing:
            gc.unfreeze()
        gc.set_threshold(*before)
