"""Theorems about the memory address: in-bounds containment and the naive 32-bit wraps.

All formulas are composed in the rule language from the YAML ``address`` expression and the
resource-shape inputs (``stride``, ``count``, ``size``, ``components``), so z3 and the Python
evaluator read them the same way and every witness is re-checked by the Python evaluator.

* in-bounds containment: where a clause of a bounds group says ``defined``, the written bytes
  ``[address, address + 4 * components)`` lie inside the resource: inside structure ``index``
  and below ``stride * count`` (structured), below ``size`` (raw), below ``count`` elements
  (typed). The structure index is found, not named: it is the input ``v`` for which z3 proves
  ``address(v + 1) == address(v) + stride``.
* naive wraps (counterexamples expected): a naive implementation computes the address modulo
  2**32, in bytes (``address % 2**32``) or in dwords (``(address // 4) % 2**32``, which is
  ``index * (stride / 4) + offset / 4`` as vkd3d and DXVK compute it), and bounds-checks the
  result against ``stride * count``; or it checks the byte offset as
  ``(offset + 4 * components) % 2**32 <= stride``. z3 finds inputs where the spec's clause
  voids or skips the access and the exact access is out of bounds, but the naive check accepts
  it; then canonical boundary models (fixed strides, the smallest wrapping index or offset).
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from sm5.oracle.errors import Sm5Error
from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import Clause, Group
from sm5.oracle.proofs.theorems.base import (
    COMPONENTS,
    COUNT,
    KIND,
    SIZE,
    STRIDE,
    Budget,
    Context,
    Found,
    fired_in,
    lexmin,
    new_solver,
    objective_order,
    show,
    small_witness,
)
from sm5.oracle.rulelang.rules import Rule, Value, evaluate

#: Strides of the boundary models (plus the model's largest structure stride).
BOUNDARY_STRIDES = (4, 16)
#: Structure count of the boundary models.
BOUNDARY_COUNT = 4
#: The naive implementation's word: addresses are reduced modulo 2**32.
WRAP = 1 << 32

STRUCTURED = "structured"


def bounds_groups(ctx: Context) -> tuple[Group, ...]:
    """Groups that decide an access: a ``defined`` clause and a memory-voiding clause, in an
    instruction with an address formula."""
    if ctx.spec.semantics.address is None:
        return ()
    return tuple(g for g in ctx.spec.semantics.groups
                 if any(ctx.defines(c) for c in g.clauses)
                 and any(ctx.voids_memory(c) for c in g.clauses))


def resource_kinds(ctx: Context, region: Any, budget: Budget) -> tuple[str, ...]:
    """The resource kinds possible in ``region``: from the ``kind`` input when there is one,
    otherwise from the memory operand's declared kinds."""
    if ctx.has_input(KIND):
        kind_input = next(i for i in ctx.spec.semantics.inputs if i.name == KIND)
        solver = new_solver()
        solver.add(region)
        return tuple(k for k in kind_input.values
                     if budget.check(solver, ctx.expr(kind_is(ctx, k))))
    kinds: list[str] = []
    for operand in ctx.spec.operands:
        if operand.role == "memory":
            kinds += [k for k in operand.kinds if k not in kinds]
    return tuple(kinds)


def kind_is(ctx: Context, kind: str) -> Rule:
    return ctx.rule(f"{KIND} == {kind!r}" if ctx.has_input(KIND) else "True", "resource kind")


def components(ctx: Context) -> str:
    return COMPONENTS if ctx.has_input(COMPONENTS) else "1"


def address(ctx: Context, kind: str, region: Any, budget: Budget) -> Rule:
    """The YAML address for one resource kind: branches on ``kind`` folded away (for readable
    formulas), with z3's proof that the folded formula equals the YAML one in ``region``."""
    original = ctx.spec.semantics.address
    assert original is not None
    if not ctx.has_input(KIND):
        return original
    folded = ctx.rule(fold_branches(original, {KIND: kind}), f"address for {kind}")
    solver = new_solver()
    solver.add(region)
    if budget.check(solver, ctx.expr(folded) != ctx.expr(original)):
        raise Sm5Error(f"folding the address for kind {kind!r} changed it: {folded.text!r}")
    return folded


def fold_branches(rule: Rule, fixed: Mapping[str, Value]) -> str:
    """``rule``'s text with each ``x if c else y`` whose test reads only ``fixed`` names
    replaced by the branch taken."""

    class Fold(ast.NodeTransformer):
        def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
            self.generic_visit(node)
            names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            if not names <= set(fixed):
                return node
            test = evaluate(node.test, fixed, rule.text)
            if isinstance(test, str):  # not a truth value: leave it to the evaluators
                return node
            return node.body if test else node.orelse

    return ast.unparse(Fold().visit(copy.deepcopy(rule.tree)))


def _numeric_inputs(ctx: Context, rule: Rule, exclude: Sequence[str]) -> list[str]:
    return [i.name for i in ctx.spec.semantics.inputs
            if i.name in rule.names and i.type in ("u32", "u64", "int")
            and i.name not in (STRIDE, COUNT, SIZE, COMPONENTS, *exclude)]


def struct_index(ctx: Context, addr: Rule, region: Any, budget: Budget) -> str | None:
    """The input that numbers the structure: ``address(v + 1) == address(v) + stride``."""
    here = ctx.expr(addr)
    found = []
    for name in _numeric_inputs(ctx, addr, ()):
        shifted = ctx.syms.with_input(name, ctx.syms[name] + 1)
        solver = new_solver()
        solver.add(region)
        if not budget.check(solver, ctx.expr_in(addr, shifted) - here != ctx.syms[STRIDE]):
            found.append(name)
    return found[0] if len(found) == 1 else None


def struct_offset(ctx: Context, addr: Rule, index: str, region: Any, budget: Budget) -> str:
    """The byte offset inside the structure: the input equal to ``address - stride * index``
    if there is one, else that expression."""
    offset = f"(({addr.text}) - {STRIDE} * {index})"
    expr = ctx.expr(ctx.rule(offset, "offset in the structure"))
    for name in _numeric_inputs(ctx, addr, (index,)):
        solver = new_solver()
        solver.add(region)
        if not budget.check(solver, expr != ctx.syms[name]):
            return name
    return offset


# --------------------------------------------------------------------------------------------
# In-bounds containment


def in_bounds(ctx: Context, clause: Clause, budget: Budget) -> Found:
    comps = components(ctx)
    kinds = resource_kinds(ctx, ctx.firing[clause.id], budget)
    if not kinds:
        return Found("failed", f"cannot tell the resource kind of {clause.id}")
    proved: list[str] = []
    for kind in kinds:
        region = z3.And(ctx.firing[clause.id], ctx.expr(kind_is(ctx, kind)))
        address_rule = address(ctx, kind, region, budget)
        addr = f"({address_rule.text})"
        end = f"{addr} + 4 * {comps}"
        if kind == STRUCTURED:
            index = struct_index(ctx, address_rule, region, budget)
            if index is None:
                return Found("failed", f"{clause.id}: no input numbers the structure in the "
                             f"address {addr}")
            goal = (f"{addr} >= 0 and {STRIDE} * {index} <= {addr} and "
                    f"{end} <= {STRIDE} * ({index} + 1) and {end} <= {STRIDE} * {COUNT}")
            said = (f"structured, at address {address_rule.text}: inside structure {index}, "
                    f"[{STRIDE} * {index}, {STRIDE} * ({index} + 1)), and below "
                    f"{STRIDE} * {COUNT}")
        elif kind == "raw":
            goal = f"{addr} >= 0 and {end} <= {SIZE}"
            said = f"raw, at address {address_rule.text}: below {SIZE} bytes"
        else:  # typed: 32-bit elements (the model's typed formats are all R32)
            goal = f"{addr} >= 0 and {end} <= 4 * {COUNT}"
            said = f"{kind}: below 4 * {COUNT} bytes ({COUNT} 32-bit elements)"
        outside = z3.And(region, z3.Not(ctx.expr(ctx.rule(goal, "in-bounds goal"))))
        solver = new_solver()
        if budget.check(solver, outside):
            model = small_witness(ctx, budget, [outside])
            assert model is not None
            return Found("failed", f"{clause.id} says defined, yet the bytes [{addr}, {end}) "
                         f"leaves the resource ({kind}) at {show(model)}", (model,),
                         (fired_in(ctx.group_of(clause), full_env(ctx.spec.semantics, model)),))
        proved.append(said)
    return Found("proved", f"where {clause.id} fires, the bytes [address, address + 4 * {comps}) "
                 "of the YAML pseudocode address (exact) lie " + "; ".join(proved))


# --------------------------------------------------------------------------------------------
# Naive 32-bit wraps


@dataclass(frozen=True)
class WrapQuery:
    """A naive implementation against the spec: ``frame`` fixes what is out of bounds,
    ``exact`` says the exact access is out of bounds, ``naive`` that the naive check accepts."""

    targets: tuple[Clause, ...]
    frame: Rule
    exact: Rule
    naive: Rule
    boundaries: tuple[tuple[str, Rule], ...]


def structured_wrap_groups(ctx: Context, budget: Budget) -> tuple[Group, ...]:
    return tuple(g for g in bounds_groups(ctx)
                 if STRUCTURED in resource_kinds(ctx, ctx.active[g.id], budget))


def wrap_queries(ctx: Context, group: Group, budget: Budget) -> dict[str, WrapQuery] | str:
    """The three naive-wrap queries of a structured bounds group (or why there are none)."""
    region = z3.And(ctx.active[group.id], ctx.expr(kind_is(ctx, STRUCTURED)))
    address_rule = address(ctx, STRUCTURED, region, budget)
    index = struct_index(ctx, address_rule, region, budget)
    if index is None:
        return f"no input numbers the structure in the address {address_rule.text}"
    addr, comps = f"({address_rule.text})", components(ctx)
    offset = struct_offset(ctx, address_rule, index, region, budget)
    total = f"{STRIDE} * {COUNT}"
    model = ctx.model
    # A naive wrap would write where these clauses leave memory unchanged (or all shared
    # memory undefined), and read where they leave the resource or shared memory undefined.
    skips = (model.outcomes_where(effect="unchanged", scopes=("memory",))
             | model.outcomes_where(effect="undefined", scopes=("shared_memory",)))
    voids = model.outcomes_where(effect="undefined", scopes=("resource", "shared_memory"))
    skipped = tuple(c for c in group.clauses if not skips.isdisjoint(c.outcomes))
    voided = tuple(c for c in group.clauses if not voids.isdisjoint(c.outcomes))

    def rule(text: str) -> Rule:
        return ctx.rule(text, f"naive wrap in {group.id}")

    strides = [*BOUNDARY_STRIDES]
    largest = ctx.limits.get("max_structure_stride")
    if largest is not None and largest not in strides:
        strides.append(largest)
    by_stride = tuple((f"{STRIDE} {s}, {COUNT} {BOUNDARY_COUNT}",
                       rule(f"{STRIDE} == {s} and {COUNT} == {BOUNDARY_COUNT}")) for s in strides)
    by_components: list[tuple[str, Rule]] = []
    if ctx.has_input(COMPONENTS):
        spec_input = next(i for i in ctx.spec.semantics.inputs if i.name == COMPONENTS)
        low, high = spec_input.min or 1, spec_input.max or 1
        by_components = [(f"{COMPONENTS} {k}", rule(f"{COMPONENTS} == {k}"))
                         for k in range(low, high + 1)]
    misaligned = (f"{offset} not a multiple of 4", rule(f"{offset} % 4 != 0"))
    in_struct = rule(f"{offset} + 4 * {comps} <= {STRIDE}")
    past_end = rule(f"{addr} + 4 * {comps} > {total}")
    return {
        "naive_wrap_bytes": WrapQuery(
            skipped, in_struct, past_end,
            rule(f"{addr} % {WRAP} + 4 * {comps} <= {total}"), by_stride),
        "naive_wrap_dwords": WrapQuery(
            skipped, in_struct, past_end,
            rule(f"({addr} // 4) % {WRAP} + {comps} <= {total} // 4"), by_stride),
        "offset_wrap": WrapQuery(
            voided, rule(f"{index} < {COUNT}"), rule(f"{offset} + 4 * {comps} > {STRIDE}"),
            rule(f"({offset} + 4 * {comps}) % {WRAP} <= {STRIDE}"),
            (*by_components, misaligned)),
    }


def naive_wrap(ctx: Context, group: Group, query: WrapQuery, budget: Budget) -> Found:
    region = z3.And(ctx.active[group.id], ctx.expr(kind_is(ctx, STRUCTURED)))
    fooled = [region, z3.Or(*[ctx.when[c.id] for c in query.targets]),
              *(ctx.expr(r) for r in (query.frame, query.exact, query.naive))]
    memory = ctx.spec.semantics.memory
    visible: list[Any] = []
    kernel_names: frozenset[str] = frozenset()
    if memory is not None and memory.kernel is not None:
        # A witness worth a vector changes the word it reaches: the kernel's new word differs
        # from the old one, so a naive implementation's stray write is visible.
        rule = ctx.rule(f"({memory.kernel.text}) != old", f"visible write in {group.id}")
        visible.append(ctx.expr(rule))
        kernel_names = rule.names
    target_ids = ", ".join(c.id for c in query.targets)
    primary = _visible_witness(ctx, budget, fooled, visible, kernel_names, small_witness)
    if primary is None:
        return Found("failed", f"expected a counterexample, found none: the naive check "
                     f"`{query.naive.text}` never accepts what {target_ids} reject "
                     f"(with `{query.frame.text}`)")
    witnesses: list[Mapping[str, Value]] = [primary]
    notes = [f"smallest: {show(primary)}"]
    for label, extra in query.boundaries:
        boundary = _visible_witness(ctx, budget, [*fooled, ctx.expr(extra)], visible,
                                    kernel_names, lexmin)
        if boundary is None:
            notes.append(f"{label}: none")
        elif boundary not in witnesses:
            witnesses.append(boundary)
            notes.append(f"{label}: {show(boundary)}")
    claims = []
    for model in witnesses:
        problem = _python_disagrees(ctx, group, query, model)
        if problem:
            return Found("failed", f"z3 and the Python evaluator disagree on {show(model)}: "
                         f"{problem}", tuple(witnesses))
        claims.append(fired_in(group, full_env(ctx.spec.semantics, model)))
    return Found("counterexample-as-expected",
                 f"naive `{query.naive.text}` accepts accesses the spec rejects ({target_ids}; "
                 f"with `{query.frame.text}` and `{query.exact.text}`); " + "; ".join(notes),
                 tuple(witnesses), tuple(claims))


def _visible_witness(ctx: Context, budget: Budget, constraints: Sequence[Any],
                     visible: Sequence[Any], kernel_names: frozenset[str],
                     find: Callable[[Context, Budget, Sequence[Any]], dict[str, Value] | None],
                     ) -> dict[str, Value] | None:
    """``find`` over ``constraints`` and ``visible`` together, in two steps where it can.

    The visibility of a write reads only the kernel's inputs (``old``, ``value``...), which
    the address constraints do not: the address inputs are found first without it, then the
    kernel inputs with the address fixed. The kernel inputs come last in the witness order, so
    the result is the one the joint query gives, without asking z3 to mix the bit operations of
    a kernel with the products of the address formula.
    """
    if not visible:
        return find(ctx, budget, constraints)
    address = find(ctx, budget, constraints)
    if address is not None:
        fixed = [ctx.syms.bind_one(name, value) for name, value in address.items()
                 if name not in kernel_names]
        narrowed = [z3.substitute(c, *fixed) if fixed else c for c in (*constraints, *visible)]
        kernel = _small_kernel_values(ctx, narrowed, kernel_names) or \
            lexmin(ctx, budget, narrowed, kernel_names)
        if kernel is not None:
            found = {i.name: {**address, **kernel}[i.name] for i in ctx.spec.semantics.inputs}
            ctx.models.append(found)
            return found
    return find(ctx, budget, [*constraints, *visible])


#: The kernel inputs tried first, each in 0 .. KERNEL_BOX - 1, before asking z3.
KERNEL_BOX = 4


def _small_kernel_values(ctx: Context, constraints: Sequence[Any],
                         kernel_names: frozenset[str]) -> dict[str, Value] | None:
    """The first kernel inputs (in witness order, each below ``KERNEL_BOX``) that satisfy the
    constraints once every other input is fixed: a plain evaluation, where z3 would be slow on
    the 32-bit bit operations of a kernel."""
    names = [n for n in objective_order(ctx) if n in kernel_names and
             next(i for i in ctx.spec.semantics.inputs if i.name == n).type == "u32"]
    if len(names) != len(kernel_names & {i.name for i in ctx.spec.semantics.inputs}):
        return None
    for combo in itertools.product(range(KERNEL_BOX), repeat=len(names)):
        values = dict(zip(names, combo, strict=True))
        pairs = [ctx.syms.bind_one(n, v) for n, v in values.items()]
        if all(z3.is_true(z3.simplify(z3.substitute(c, *pairs))) for c in constraints):
            return dict(values)
    return None


def _python_disagrees(ctx: Context, group: Group, query: WrapQuery,
                      model: Mapping[str, Value]) -> str:
    env = full_env(ctx.spec.semantics, model)
    if not group.scope.holds(env):
        return f"the scope of {group.id} does not hold"
    fired = fired_in(group, env)
    if len(fired) != 1 or fired[0] not in {c.id for c in query.targets}:
        return f"clauses fired: {', '.join(fired) or 'none'}"
    for rule in (query.frame, query.exact, query.naive):
        if not rule.holds(env):
            return f"`{rule.text}` is false"
    return ""


def naive_wrap_theorems(ctx: Context, budget: Budget) -> Sequence[tuple[str, Group]]:
    """(kind, group) pairs of the wrap theorems of an instruction."""
    return [(kind, g) for g in structured_wrap_groups(ctx, budget)
            for kind in ("naive_wrap_bytes", "naive_wrap_dwords", "offset_wrap")]
