"""Flow-control theorems: each flow-control instruction's clauses partition what its effect can do.

Over the clause variables of ``spec/control.yaml`` (the condition's 32 bits, the ``_nz`` form,
where execution goes, the enclosing construct, the select's choice, the return stack's depth),
within their ranges, with ``acts`` defined by the instruction's test (or true and no ``_nz``
form without one) and the effect's ``reach`` (every situation it can produce), the clauses are
pairwise disjoint and together total, and each can fire. For ``if`` that is "exactly one arm
runs, or none where there is no else"; for ``switch`` "exactly one entry is entered, or none";
for ``break`` "a break goes to exactly one place". The interpreter checks every run against
the same ``reach`` (``sm5.oracle.execution.control``), so the theorem speaks of what it does.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3

from sm5.oracle.model.control import ControlInstruction, ControlModel
from sm5.oracle.proofs.theorems.base import Budget, Found, new_solver
from sm5.oracle.proofs.z3rules import WIDTH, translate
from sm5.oracle.rulelang.rules import Rule, Value

#: The z3 sort of each clause-variable type in the bit-vector encoding (an enum is a code).
WORD_BITS = 32


def _symbols(control: ControlModel) -> tuple[dict[str, z3.ExprRef], dict[str, tuple[str, ...]],
                                             list[z3.BoolRef]]:
    env: dict[str, z3.ExprRef] = {}
    enums: dict[str, tuple[str, ...]] = {}
    ranges: list[z3.BoolRef] = []
    for v in control.variables:
        if v.type == "uword":
            env[v.name] = z3.BitVec(v.name, WORD_BITS)
        elif v.type == "bool":
            env[v.name] = z3.Bool(v.name)
        else:
            symbol = z3.BitVec(v.name, WIDTH)
            env[v.name] = symbol
            if v.type == "str":
                enums[v.name] = v.values
                ranges.append(z3.ULT(symbol, len(v.values)))
            else:  # the return stack's depth
                ranges.append(z3.And(symbol >= 0, symbol <= control.limits.call_depth))
    return env, enums, ranges


def _term(rule: Rule, env: Mapping[str, z3.ExprRef], enums: Mapping[str, tuple[str, ...]]
          ) -> z3.BoolRef:
    translation = translate(rule, env, enums=enums, encoding="bv")
    return z3.And(translation.condition, translation.expr)


def _model(solver: z3.Solver, env: Mapping[str, z3.ExprRef],
           enums: Mapping[str, tuple[str, ...]]) -> dict[str, Value]:
    model = solver.model()
    out: dict[str, Value] = {}
    for name, symbol in env.items():
        value = model.eval(symbol, model_completion=True)
        if z3.is_bool(value):
            out[name] = z3.is_true(value)
        elif name in enums:
            out[name] = enums[name][value.as_long()]
        else:
            out[name] = value.as_long()
    return out


def _show(model: Mapping[str, Value]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(model.items()))


def clause_partition(control: ControlModel, ins: ControlInstruction, budget: Budget) -> Found:
    """Where the instruction's effect can go, exactly one of its clauses holds, and each can."""
    env, enums, ranges = _symbols(control)
    effect = control.effects[ins.effect]
    acts = env["acts"]
    if ins.test:
        defined = acts == _term(control.test, env, enums)
    else:
        defined = z3.And(acts, z3.Not(env["nz"]), env["cond"] == 0)
    region = z3.And(*ranges, defined, _term(effect.reach, env, enums))
    solver = new_solver()
    solver.add(region)
    if not budget.check(solver):
        return Found("failed", f"the effect {effect.name} can produce nothing: its reach "
                     "contradicts the variables' ranges")
    when = {c.id: _term(c.when, env, enums) for c in ins.clauses}
    witnesses: list[dict[str, Value]] = []
    for clause in ins.clauses:
        if not budget.check(solver, when[clause.id]):
            return Found("failed", f"clause {clause.id} can never fire where the effect "
                         f"{effect.name} can go")
        witnesses.append(_model(solver, env, enums))
    for i, first in enumerate(ins.clauses):
        for second in ins.clauses[i + 1:]:
            if budget.check(solver, z3.And(when[first.id], when[second.id])):
                model = _model(solver, env, enums)
                return Found("failed", f"clauses {first.id} and {second.id} overlap at "
                             f"{_show(model)}", (model,), ((first.id, second.id),))
    if budget.check(solver, z3.Not(z3.Or(*when.values()))):
        model = _model(solver, env, enums)
        return Found("failed", f"no clause of {ins.name} holds at {_show(model)}", (model,),
                     ((),))
    return Found("proved", f"{len(ins.clauses)} clauses: pairwise disjoint, total and each "
                 f"reachable wherever the effect {effect.name} can go",
                 tuple(witnesses), tuple((c.id,) for c in ins.clauses))
