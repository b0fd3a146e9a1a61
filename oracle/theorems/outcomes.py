"""Outcome consistency: ``defined`` never meets an outcome that voids or skips the write.

No clause lists ``defined`` with another outcome, and no two clauses of different groups that can
fire together (z3: both firing conditions satisfiable at once) combine ``defined`` with
``no_write``, ``resource_undefined`` or ``tgsm_undefined``.
"""

from __future__ import annotations

import z3

from sm5.oracle.theorems.base import (
    MEMORY_OUTCOMES,
    Budget,
    Context,
    Found,
    new_solver,
    show,
    small_witness,
)


def outcome_consistency(ctx: Context, budget: Budget) -> Found:
    clauses = ctx.spec.clauses
    mixed = [c.id for c in clauses if "defined" in c.outcomes and len(set(c.outcomes)) > 1]
    if mixed:
        return Found("failed", "clauses list defined together with another outcome: "
                     + ", ".join(mixed))
    pairs = [(d, m) for d in clauses if "defined" in d.outcomes
             for m in clauses if MEMORY_OUTCOMES.intersection(m.outcomes) and m.group != d.group]
    if not pairs:
        return Found("proved", "no clause lists defined with another outcome; no group pairs "
                     "defined with a memory outcome")
    solver = new_solver()
    together = [z3.And(ctx.firing[d.id], ctx.firing[m.id]) for d, m in pairs]
    if budget.check(solver, z3.Or(*together)):
        for (d, m), both in zip(pairs, together, strict=True):
            if budget.check(solver, both):
                model = small_witness(ctx, budget, [both])
                assert model is not None
                return Found("failed", f"{d.id} (defined) and {m.id} "
                             f"({', '.join(m.outcomes)}) fire together at {show(model)}",
                             (model,), ((d.id, m.id),))
    return Found("proved", f"no clause mixes defined with another outcome; {len(pairs)} pairs "
                 "of a defined clause and a memory-voiding clause of another group never fire "
                 "together")
