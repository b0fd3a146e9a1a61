"""atomic_returns_new: imm_atomic_iadd returns the value after the add.

The functional spec returns the ORIGINAL value (gpuweb issue #1868 quotes it); an emulator that
writes ``*dst += src`` and then reads the word back returns the new one.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class AtomicReturnsNew(NaiveTranslator):
    name = "atomic_returns_new"

    def atomic_returns(self, old: int, new: int) -> int:
        return new
