"""Sibling theorems: z3 finds an input where the instruction and a sibling differ.

For a sibling (``sm5.oracle.model.siblings``) the query is: the inputs lie in both semantics'
regions, some replaced expression takes another value than the instruction's, a clause with the
plain exact outcome fires in one of the two (so the value reaches the final state; failing that,
a clause whose acceptance set holds the computed values: ``one_of``, a tolerance), and the
sibling's ``visible`` condition holds. The smallest such input is the theorem's witness and becomes
a golden vector (``z3-witness``); the generator then checks, with the interpreter as the judge,
that the sibling's final state on some vector lies outside the acceptance sets. No input at
all: the two are the same kernel where it shows, and the theorem fails.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import z3

from sm5.oracle.model.clauses import classify
from sm5.oracle.model.siblings import Sibling
from sm5.oracle.model.spec import InstructionSpec, Model
from sm5.oracle.proofs.theorems.base import (
    Budget,
    Context,
    Found,
    build_context,
    show,
    small_witness,
)
from sm5.oracle.rulelang.rules import Value

#: At most this many witnesses besides the first, one per further clause where the
#: difference shows.
MAX_EXTRA_WITNESSES = 4


def sibling_contexts(instruction: InstructionSpec, sibling: Sibling,
                     model: Model) -> tuple[Context, Context]:
    """Both semantics over the same input symbols, with f64 arithmetic exact (not abstract):
    a rounding sibling differs only in what an f64 operation returns."""
    return (build_context(instruction, model, abstract=False),
            build_context(sibling.spec, model, abstract=False))


def differs(ctx: Context, variant: Context, sibling: Sibling) -> Any:
    """Some replaced expression has another value in the sibling."""
    memory = ctx.spec.semantics.memory
    parts = []
    for key, expr in sibling.replace.items():
        part, _, name = key.partition(".")
        if part == "memory":
            assert memory is not None and memory.kernel is not None
            parts.append(ctx.expr(ctx.rule(memory.kernel.text, "memory kernel"))
                         != ctx.expr(ctx.rule(expr, f"sibling {sibling.id}")))
        elif part == "derived":
            parts.append(ctx.expr(ctx.rule(name, "derived value"))
                         != variant.expr(variant.rule(name, f"sibling {sibling.id}")))
        else:
            parts.append(ctx.expr(ctx.rule(name, "input"))
                         != ctx.expr(ctx.rule(expr, f"sibling {sibling.id}")))
    return z3.Or(*parts)


def sibling_differs(instruction: InstructionSpec, sibling: Sibling, model: Model,
                    budget: Budget) -> Found:
    ctx, variant = sibling_contexts(instruction, sibling, model)
    plain = [c.id for c in instruction.clauses if ctx.defines(c)]
    constraints = [ctx.base, variant.base, differs(ctx, variant, sibling)]
    if sibling.visible is not None:
        # First: where a sibling pins inputs, z3 simplifies every other constraint with them.
        constraints.insert(0, ctx.expr(ctx.rule(sibling.visible,
                                                f"sibling {sibling.id} visible")))
    shows = [z3.Or(ctx.firing[c], variant.firing.get(c, z3.BoolVal(False))) for c in plain]
    found = small_witness(ctx, budget, [*constraints, z3.Or(*shows)]) if shows else None
    if found is None:
        # No exact result shows it: a clause whose acceptance set holds the computed values
        # (one_of, a tolerance) carries the difference into the final state as well, where the
        # generator checks that the sibling's value lies outside the instruction's set.
        plain = [c.id for c in instruction.clauses if c.accept is not None
                 and model.acceptance[c.accept].values]
        shows = [z3.Or(ctx.firing[c], variant.firing.get(c, z3.BoolVal(False))) for c in plain]
        found = small_witness(ctx, budget, [*constraints, z3.Or(*shows)]) if shows else None
    if found is None:
        return Found("failed", f"no input tells {instruction.name} from its sibling "
                     f"{sibling.id} ({sibling.text}) where a result shows")
    witnesses, claims = [found], [_claim(instruction, found, plain)]
    covered = {c.id for c in classify(instruction, found)}
    # Where the difference can show in several places (a UAV and a g#, an inactive and a
    # helper invocation), the first witness moved there: its values with other choices of the
    # enumerated inputs (file, kind, invocation, ...), in order, each that shows the difference
    # while firing a clause, or holding an enumerated value, no witness has yet. Nothing is
    # searched: the moves are substituted and simplified, so the set is the same on every run
    # and costs no z3 work.
    query = z3.And(*constraints, z3.Or(*shows))
    seen = {(name, value) for name, value in found.items()}
    for moved in _moves(ctx, found):
        if len(witnesses) > MAX_EXTRA_WITNESSES:
            break
        # The region first: the Python evaluator only classifies inputs inside it.
        if not z3.is_true(z3.simplify(z3.substitute(query, *ctx.syms.bind(moved)))):
            continue
        fresh = {(name, value) for name, value in moved.items()} - seen
        fired = {c.id for c in classify(instruction, moved)}
        if not fired - covered and not fresh:
            continue
        witnesses.append(moved)
        claims.append(_claim(instruction, moved, sorted(fired - covered) or plain))
        covered |= fired
        seen |= fresh
    places = f" ({len(witnesses)} places)" if len(witnesses) > 1 else ""
    return Found("proved", f"{sibling.text}: told apart at {show(found)}{places}",
                 tuple(witnesses), tuple(claims))


def _moves(ctx: Context, found: Mapping[str, Value]) -> list[dict[str, Value]]:
    """``found`` with every other combination of its enumerated inputs' values, in order."""
    names = [i.name for i in ctx.spec.semantics.inputs if i.type == "enum"]
    choices = [ctx.spec.semantics.input(n).values for n in names]
    return [{**found, **dict(zip(names, combo, strict=True))}
            for combo in itertools.product(*choices)
            if any(found[n] != v for n, v in zip(names, combo, strict=True))]


def _claim(instruction: InstructionSpec, found: Mapping[str, Value],
           plain: list[str]) -> tuple[str, ...]:
    """The clause a witness fires in the instruction itself (one where the result shows, if
    any): what the golden vector made from it claims."""
    fired = [c.id for c in classify(instruction, found)]
    return tuple(([c for c in fired if c in plain] or fired)[:1])
