"""Evaluator agreement: z3 and the Python evaluator read every expression the same way.

On every model the other theorems met (reachability models, counterexamples, witnesses), each
expression of the semantics (assume, address, derived values, scopes, clause conditions) is
evaluated by ``Rule.evaluate`` and by z3 (the symbolic term a proof used, evaluated in a z3
model fixing the inputs), in both encodings; the values must be equal and of the same type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sm5.oracle.errors import RuleError
from sm5.oracle.proofs.theorems.base import Budget, Context, Found, TheoremTimeout, new_solver, show
from sm5.oracle.proofs.theorems.welldefined import labelled_rules
from sm5.oracle.proofs.z3rules import (
    Encoding,
    calls_uninterpreted,
    encodings_of,
    evaluate_in,
    symbols,
    translate,
)
from sm5.oracle.rulelang.rules import Value


def agreement(ctx: Context, budget: Budget, models: Sequence[Mapping[str, Value]]) -> Found:
    semantics = ctx.spec.semantics
    rules = [(label, rule) for label, rule in labelled_rules(semantics)]
    unique: list[Mapping[str, Value]] = []
    for model in models:
        if model not in unique:
            unique.append(model)
    if not unique:  # the theorems before met no model (they timed out): find one
        solver = new_solver()
        if not budget.check(solver, ctx.base):
            return Found("failed", "the input ranges and assume have no model at all")
        unique.append(ctx.syms.read(solver.model()))
    encodings: tuple[Encoding, ...] = encodings_of(semantics)
    # A helper without a z3 model reaches a rule through the derived names it reads.
    interpret = calls_uninterpreted([rule for _, rule in rules]
                                    + [d.expr for d in semantics.derived])
    for encoding in encodings:
        syms = symbols(semantics, encoding=encoding)
        translations = [(label, rule, translate(rule, syms)) for label, rule in rules]
        for model in unique:
            if budget.spent():
                raise TheoremTimeout(f"{budget.describe()} spent")
            env: dict[str, Value] = dict(model)
            for d in semantics.derived:
                env[d.name] = d.expr.evaluate(env)
            z3_model = syms.model_at(model)
            for label, rule, translation in translations:
                try:
                    expected: Value | None = rule.evaluate(env)
                except RuleError:
                    expected = None
                got = evaluate_in(translation, z3_model, interpret=interpret)
                if got != expected or type(got) is not type(expected):
                    return Found("failed", f"{label} `{rule.text}` at {show(model)}: Python "
                                 f"gives {expected!r}, z3 ({encoding}) gives {got!r}",
                                 (model,), ((),))
    # The number of models is left out: reachability models are whatever z3 returns, and
    # the detail must not vary between runs.
    return Found("proved", f"{len(rules)} expressions x {len(encodings)} encodings agree with "
                 "the Python evaluator on every model the theorems above met")
