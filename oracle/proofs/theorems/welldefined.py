"""Well-definedness: every expression of a semantics evaluates, exactly, in both encodings.

For ``assume`` (under the input ranges) and every derived value, scope, clause condition and the
address (under the ranges and ``assume``), the side conditions of ``sm5.oracle.proofs.z3rules``
hold: no division by zero, no negative shift, and, in the 128-bit bit-vector encoding, no overflow.
This is the machine-checked form of "128 bits are enough for every rule of the spec". Words
(``uword``, ``iword``) are 32-bit bit-vectors in both encodings and wrap by definition: they add
no overflow condition, only the non-zero divisor of a word quotient or remainder.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import z3

from sm5.oracle.model.spec import Semantics
from sm5.oracle.proofs.theorems.base import Budget, Context, Found, new_solver, show
from sm5.oracle.proofs.z3rules import WIDTH, Encoding, encodings_of, symbols, translate
from sm5.oracle.rulelang.rules import Rule


def labelled_rules(semantics: Semantics) -> Iterator[tuple[str, Rule]]:
    """Every expression of a semantics with a label, ``assume`` first."""
    if semantics.assume is not None:
        yield "assume", semantics.assume
    if semantics.address is not None:
        yield "address", semantics.address
    for d in semantics.derived:
        yield f"derived {d.name}", d.expr
    for g in semantics.groups:
        yield f"scope of {g.id}", g.scope
        for c in g.clauses:
            yield f"clause {c.id}", c.when


def well_defined(ctx: Context, budget: Budget) -> Found:
    semantics = ctx.spec.semantics
    rules = list(labelled_rules(semantics))
    encodings: tuple[Encoding, ...] = encodings_of(semantics)
    for encoding in encodings:
        # Side conditions do not depend on what an f64 operation returns: abstract it.
        syms = symbols(semantics, encoding=encoding, abstract=True)
        assumed = z3.BoolVal(True)
        obligations: list[tuple[str, Any, Any]] = []  # (label, region, condition)
        if semantics.assume is not None:
            translated = translate(semantics.assume, syms)
            obligations.append(("assume", syms.ranges, translated.condition))
            assumed = z3.And(translated.condition, translated.expr)
        region = z3.And(syms.ranges, assumed)
        obligations.append(("derived values", region, syms.derived_condition))
        obligations += [(label, region, translate(rule, syms).condition)
                        for label, rule in rules if label != "assume"]
        solver = new_solver()
        broken = z3.Or(*[z3.And(r, z3.Not(c)) for _, r, c in obligations])
        if budget.check(solver, broken):
            for label, r, c in obligations:
                if budget.check(solver, z3.And(r, z3.Not(c))):
                    model = syms.read(solver.model())
                    ctx.models.append(model)
                    return Found("failed", f"{label} is not exact in the {encoding} encoding "
                                 f"({WIDTH}-bit overflow, division by zero or a bad shift) at "
                                 f"{show(model)}", (model,), ((),))
    return Found("proved", f"{len(rules)} expressions evaluate exactly (no division by zero, "
                 f"no negative shift, no {WIDTH}-bit overflow) under the input ranges"
                 + (" and assume" if semantics.assume is not None else ""))
