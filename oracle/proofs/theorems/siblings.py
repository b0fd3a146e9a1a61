"""Sibling theorems: z3 finds an input where the instruction and a sibling differ.

For a sibling (``sm5.oracle.model.siblings``) the query is: the inputs lie in both semantics'
regions, some replaced expression takes another value than the instruction's, a clause with the
plain exact outcome fires in one of the two (so the value reaches the final state), and the
sibling's ``visible`` condition holds. The smallest such input is the theorem's witness and becomes
a golden vector (``z3-witness``); the generator then checks, with the interpreter as the judge,
that the sibling's final state on some vector lies outside the acceptance sets. No input at
all: the two are the same kernel where it shows, and the theorem fails.
"""

from __future__ import annotations

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
        return Found("failed", f"no input tells {instruction.name} from its sibling "
                     f"{sibling.id} ({sibling.text}) where a result shows")
    # The clause the witness fires in the instruction itself (one where the result shows, if
    # any): what the golden vector made from it claims.
    fired = [c.id for c in classify(instruction, found)]
    claim = ([c for c in fired if c in plain] or fired)[:1]
    return Found("proved", f"{sibling.text}: told apart at {show(found)}", (found,),
                 (tuple(claim),))
