"""atomic_ignores_inactive: helper and discarded invocations perform the atomic.

The asm page: an inactive invocation does not alter dst1 memory. A translator that emits the
atomic unconditionally (no helper-invocation test, or a discard that only masks the colour
write) lets helper lanes add to memory.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class AtomicIgnoresInactive(NaiveTranslator):
    name = "atomic_ignores_inactive"

    def atomic_performed(self, invocation: str) -> bool:
        return True
