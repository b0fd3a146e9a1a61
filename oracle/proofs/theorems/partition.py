"""Partition: wherever a group applies, exactly one of its clauses holds.

Under the input ranges, ``assume``, the group's scope and (for a group with ``requires``) one of
the required clauses firing, the clauses' conditions are pairwise disjoint and their
disjunction is total. Each clause must also be reachable (a clause that can never fire is dead
text). A counterexample is reported as the smallest model, with the clauses it fires.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3

from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import Group
from sm5.oracle.proofs.theorems.base import (
    Budget,
    Context,
    Found,
    fired_in,
    new_solver,
    show,
    small_witness,
)
from sm5.oracle.rulelang.rules import Value


def partition(ctx: Context, group: Group, budget: Budget) -> Found:
    region = ctx.active[group.id]
    solver = new_solver()
    solver.add(region)
    if not budget.check(solver):
        return Found("failed", f"group {group.id} never applies: its scope (and requires) "
                     "contradict the input ranges and assume")
    for clause in group.clauses:
        model = _reach(ctx, solver, region, ctx.when[clause.id], budget)
        if model is None:
            return Found("failed", f"clause {clause.id} can never fire inside group {group.id}")
        ctx.models.append(model)
    clauses = group.clauses
    for i, first in enumerate(clauses):
        for second in clauses[i + 1:]:
            both = z3.And(ctx.when[first.id], ctx.when[second.id])
            if budget.check(solver, both):
                model = small_witness(ctx, budget, [region, both])
                assert model is not None
                fired = _fired(ctx, group, model)
                return Found("failed", f"clauses {first.id} and {second.id} overlap: both hold "
                             f"at {show(model)} (Python evaluator: {', '.join(fired) or 'none'} "
                             "fire)", (model,), (fired,))
    gap = z3.Not(z3.Or(*[ctx.when[c.id] for c in clauses]))
    if budget.check(solver, gap):
        model = small_witness(ctx, budget, [region, gap])
        assert model is not None
        return Found("failed", f"no clause of {group.id} holds at {show(model)}", (model,),
                     (_fired(ctx, group, model),))
    return Found("proved", f"{len(clauses)} clauses: pairwise disjoint, total and each "
                 f"reachable where group {group.id} applies")


def _reach(ctx: Context, solver: z3.Solver, region: z3.BoolRef, condition: z3.BoolRef,
           budget: Budget) -> dict[str, Value] | None:
    """A model of ``condition`` inside ``region`` (the solver holds ``region``), or ``None``.

    The inputs' simplest values are tried first: every input at the value nearest 0 that its
    range allows, then every input at the low end of its range; each is substituted and
    simplified, so nothing is searched. Only then does z3 search: a free search for, say, a
    product that fits 32 bits took from a few hundred thousand to tens of millions of z3 work
    units depending on what the process had checked before, where all-zero inputs show it at
    once.
    """
    query = z3.And(region, condition)
    for values in _candidates(ctx):
        if z3.is_true(z3.simplify(z3.substitute(query, *ctx.syms.bind(values)))):
            return values
    if not budget.check(solver, condition):
        return None
    return ctx.syms.read(solver.model())


def _candidates(ctx: Context) -> list[dict[str, Value]]:
    near_zero: dict[str, Value] = {}
    low_end: dict[str, Value] = {}
    for spec in ctx.spec.semantics.inputs:
        _, low, high = ctx.syms.ordinal(spec.name)
        near_zero[spec.name] = ctx.syms.from_ordinal(spec.name, min(max(0, low), high))
        low_end[spec.name] = ctx.syms.from_ordinal(spec.name, low)
    return [near_zero, low_end]


def _fired(ctx: Context, group: Group, model: Mapping[str, Value]) -> tuple[str, ...]:
    return fired_in(group, full_env(ctx.spec.semantics, model))
