"""Identity theorems: a fact stated apart from the kernel holds for every input.

An identity (``semantics.identities`` of an instruction: a quotient times the divisor plus the
remainder is the dividend) pins the semantics from outside: the kernel may be written
any way, the identity says what it must compute. The query: under the input ranges, ``assume``
and the identity's ``where``, some input breaks ``holds`` (or leaves its exact encoding). No such
input proves it. ``where`` must also be satisfiable, so an identity is never vacuously true.

z3 has no single reading that finishes on every identity, so each is tried in two, first with
a tenth of the budget each, then with the rest shared out: the ``bv`` encoding with z3's
bit-blasting solver (bit fields, masks, shifts),
then the ``int`` encoding with its int-blasting solver (``smt.bv.solver=2``: words read as
integers modulo 2^32, where a quotient and a remainder are related by arithmetic instead of by
two circuits; bit-blasted, a divider against a multiplier does not finish in
minutes). The first answer that is not "unknown" decides; a counterexample is an input in both
readings.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import Identity
from sm5.oracle.proofs.theorems.base import (
    Budget,
    Context,
    Found,
    TheoremTimeout,
    new_solver,
    show,
    small_witness,
)
from sm5.oracle.proofs.z3rules import Encoding, translate
from sm5.oracle.rulelang.rules import Value

#: The encodings an identity is tried in, in order, and z3's bit-vector solver for each (0
#: bit-blasts, 2 int-blasts).
BV_SOLVER = {"bv": 0, "int": 2}
IDENTITY_ENCODINGS: tuple[Encoding, ...] = ("bv", "int")


def identity_holds(readings: Sequence[Context], identity: Identity,
                   models: list[dict[str, Value]], budget: Budget) -> Found:
    """``readings``: the instruction's contexts to try in order (see the module docstring);
    ``models`` collects the model of ``where`` met (for the evaluator-agreement theorem)."""
    reasons = []
    for k, ctx in enumerate([*readings, *readings]):
        # A first round with a tenth of the budget each, then the rest shared out: each
        # reading either answers at once or not at all, and which one does depends on the
        # identity.
        left = 2 * len(readings) - k
        part = budget.work // 10 if k < len(readings) else budget.remaining_work // left
        share = Budget(part, budget.timeout_ms)
        try:
            return _in_reading(ctx, identity, models, share)
        except TheoremTimeout as exc:
            reasons.append(f"{ctx.encoding}: {exc}")
        finally:
            budget.remaining_work -= share.work - share.remaining_work
    raise TheoremTimeout("; ".join(reasons))


def _in_reading(ctx: Context, identity: Identity, models: list[dict[str, Value]],
                budget: Budget) -> Found:
    premise = [ctx.base]
    if identity.where is not None:
        where = translate(identity.where, ctx.syms)
        premise += [where.condition, where.expr]
    solver = new_solver(BV_SOLVER[ctx.encoding])
    solver.add(*premise)
    if not budget.check(solver):
        return Found("failed", f"identity {identity.id}: no input meets its where "
                     f"({identity.where.text if identity.where else 'True'})")
    models.append(ctx.syms.read(solver.model()))
    holds = translate(identity.holds, ctx.syms)
    broken = z3.Not(z3.And(holds.condition, holds.expr))
    if not budget.check(solver, broken):
        return Found("proved", f"{identity.text}: {identity.holds.text}"
                     + (f" wherever {identity.where.text}" if identity.where else "")
                     + f" ({ctx.encoding} encoding)")
    model = small_witness(ctx, budget, [*premise, broken])
    assert model is not None  # the solver has just met one
    env = full_env(ctx.spec.semantics, model)
    return Found("failed", f"identity {identity.id} ({identity.holds.text}) is broken at "
                 f"{show(model)} (Python evaluator: "
                 f"{'holds' if identity.holds.holds(env) else 'broken too'})", (model,))
