"""Outcome consistency: ``defined`` never meets an outcome that voids or skips the write.

No clause lists ``defined`` with another outcome, and no two clauses of different groups that can
fire together (z3: both firing conditions satisfiable at once) combine ``defined`` with
``no_write``, ``resource_undefined`` or ``tgsm_undefined``.
"""

from __future__ import annotations

import z3

from sm5.oracle.proofs.theorems.base import (
    Budget,
    Context,
    Found,
    new_solver,
    show,
    small_witness,
)


def outcome_consistency(ctx: Context, budget: Budget) -> Found:
    clauses = ctx.spec.clauses
    plain = ctx.model.plain_outcome
    mixed = [c.id for c in clauses if ctx.defines(c) and len(set(c.outcomes)) > 1]
    if mixed:
        return Found("failed", f"clauses list {plain} together with another outcome: "
                     + ", ".join(mixed))
    pairs = [(d, m) for d in clauses if ctx.defines(d)
             for m in clauses if ctx.voids_memory(m) and m.group != d.group]
    if not pairs:
        return Found("proved", f"no clause lists {plain} with another outcome; no group pairs "
                     f"{plain} with a memory outcome")
    solver = new_solver()
    together = [z3.And(ctx.firing[d.id], ctx.firing[m.id]) for d, m in pairs]
    if budget.check(solver, z3.Or(*together)):
        for (d, m), both in zip(pairs, together, strict=True):
            if budget.check(solver, both):
                model = small_witness(ctx, budget, [both])
                assert model is not None
                return Found("failed", f"{d.id} ({plain}) and {m.id} "
                             f"({', '.join(m.outcomes)}) fire together at {show(model)}",
                             (model,), ((d.id, m.id),))
    return Found("proved", f"no clause mixes {plain} with another outcome; {len(pairs)} pairs "
                 f"of a {plain} clause and a memory-voiding clause of another group never fire "
                 "together")
