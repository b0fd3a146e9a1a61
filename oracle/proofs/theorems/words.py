"""Word results: a 32-bit value the instruction writes is a 32-bit word wherever it runs.

For an instruction that writes one derived value to the masked components of a register (a
result without lanes) or to a view's hidden counter, the value lies in [0, 2^32 - 1] under the
input ranges and ``assume``: a counter wraps rather than overflows (its increment from
0xFFFFFFFF gives 0, its decrement from 0 gives 0xFFFFFFFF), and a query's count fits a register.

A value of a word type (``uword``, ``iword``: ``sm5.oracle.rulelang.ruletypes``) is a 32-bit word by
its type, which the type checker proved when the spec loaded; z3 is asked about exact integers only.
"""

from __future__ import annotations

import z3

from sm5.oracle.proofs.theorems.base import Budget, Context, Found, new_solver, show, small_witness
from sm5.oracle.rulelang.helpers import WORD_TYPES

U32_MAX = 0xFFFFFFFF


def word_targets(ctx: Context) -> list[tuple[str, str]]:
    """(what receives it, derived value) for every 32-bit value the instruction writes."""
    semantics = ctx.spec.semantics
    out: list[tuple[str, str]] = []
    if semantics.result is not None and semantics.lanes is None:
        out.append((f"register {semantics.result.operand}", semantics.result.value))
    if semantics.counter is not None:
        out.append((f"the hidden counter of {semantics.counter.operand}",
                    semantics.counter.value))
    return out


def value_type(ctx: Context, value: str) -> str:
    """The rule-language type of a derived value or input (``any`` where it has none)."""
    semantics = ctx.spec.semantics
    for d in semantics.derived:
        if d.name == value:
            return d.expr.type
    for i in semantics.inputs:
        if i.name == value:
            return i.type
    return "any"


def word_results(ctx: Context, budget: Budget) -> Found:
    targets = word_targets(ctx)
    for what, value in targets:
        if value_type(ctx, value) in WORD_TYPES:
            continue  # a word by its type
        goal = ctx.expr(ctx.rule(f"{value} >= 0 and {value} <= {U32_MAX}", "word goal"))
        outside = z3.And(ctx.base, z3.Not(goal))
        if budget.check(new_solver(), outside):
            model = small_witness(ctx, budget, [outside])
            assert model is not None
            ctx.models.append(model)
            return Found("failed", f"{value}, written to {what}, leaves 32 bits at "
                         f"{show(model)}", (model,), ((),))
    said = "; ".join(f"{value} (to {what}"
                     + (f", a {value_type(ctx, value)} by its type)"
                        if value_type(ctx, value) in WORD_TYPES else ")")
                     for what, value in targets)
    return Found("proved", f"always a 32-bit word: {said}")
