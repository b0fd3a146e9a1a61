"""counter_returns_original: a hidden-counter decrement returns the count before it.

The imm_atomic_consume page's operand table says dest receives "the original counter value",
while FS 22.17.18 and 18.6.8.6 say the new, decremented one; an implementation written from the
table returns the wrong one.
"""

from __future__ import annotations

from typing import Any

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.model.spec import InstructionSpec


class CounterReturnsOriginal(NaiveTranslator):
    name = "counter_returns_original"

    def query_value(self, ins: InstructionSpec, env: dict[str, Any], value: str) -> int:
        counter = ins.semantics.counter
        if counter is not None:
            original = [i.name for i in ins.semantics.inputs
                        if i.source.kind == "resource" and i.source.field == "counter"]
            return int(env[original[0]])
        return super().query_value(ins, env, value)
