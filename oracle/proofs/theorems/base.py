"""What every theorem shares: the result type, the time budget, the per-instruction z3 context,
and the search for small, canonical models (lexicographic minimum).

Models are canonical: a witness is the lexicographically smallest input assignment (in a fixed
order of inputs) that satisfies its query, so it does not depend on solver heuristics and is as
small as the query allows (small resources make small golden vectors).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import z3

from sm5.oracle.errors import Sm5Error
from sm5.oracle.model.spec import Clause, Group, InstructionSpec, Model
from sm5.oracle.proofs.z3rules import Encoding, Symbols, symbols, translate
from sm5.oracle.rulelang.rules import Rule, Value, parse_rule

Status = Literal["proved", "counterexample-as-expected", "failed", "timeout"]
STATUSES: tuple[Status, ...] = ("proved", "counterexample-as-expected", "failed", "timeout")

#: Outcomes that change or void memory. ``defined`` must never fire together with one of them.

# The resource-shape vocabulary: the memory theorems read a resource's shape from semantic
# inputs with these names (the instruction files share them).
STRIDE, COUNT, SIZE, COMPONENTS, KIND = "stride", "count", "size", "components", "kind"
SHAPE_INPUTS = (STRIDE, COUNT, SIZE, COMPONENTS)

#: Share of the remaining budget given to each attempt of a check (a new random seed each).
RETRY_SHARES = (0.1, 0.25, 1.0)

#: Upper bound on ``count`` in witnesses, so the golden vectors built from them stay small.
WITNESS_MAX_COUNT = 8


@dataclass(frozen=True)
class TheoremResult:
    """One checked theorem.

    ``witnesses`` are input models (every semantic input by name: int, enum value or bool): the
    counterexamples and boundary models. ``claims[i]`` lists the clause ids witness ``i`` makes
    fire in the group the theorem is about (two ids for an overlap, none for a gap).
    """

    name: str
    instruction: str
    kind: str
    status: Status
    seconds: float
    detail: str
    witnesses: tuple[Mapping[str, Value], ...] = ()
    claims: tuple[tuple[str, ...], ...] = ()
    #: z3 work the theorem took (see :class:`Budget`).
    work: int = 0


class TheoremTimeout(Exception):
    """The theorem's budget ran out (or z3 answered unknown)."""


class Budget:
    """A per-theorem budget of z3 *work*, and optionally of wall-clock time.

    Work is z3's resource count (its ``rlimit``: a tally of the solver's basic steps), so a
    theorem's status, and the witnesses it finds, are the same on an idle and on a busy machine:
    a wall-clock limit turned a theorem into a time-out when other work ran beside it. A caller
    may add ``timeout_ms`` as a cap on the clock as well. z3's count also depends a little on
    what the process checked before (its term caches), so a theorem run close to its budget may
    come out either way; the default budget is many times the work any theorem of the spec
    takes (``benchmarks/prove_time.py``).
    """

    def __init__(self, work: int, timeout_ms: int | None = None) -> None:
        self.work = work
        self.remaining_work = work
        self.timeout_ms = timeout_ms
        self.deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000

    def spent(self) -> bool:
        return self.remaining_work <= 0 or (
            self.deadline is not None and time.monotonic() >= self.deadline)

    def describe(self) -> str:
        text = f"the budget of {self.work:,} z3 work units"
        return text if self.timeout_ms is None else f"{text} or {self.timeout_ms} ms"

    def check(self, solver: Any, *assumptions: Any) -> bool:
        """True for sat, False for unsat; raises :class:`TheoremTimeout` otherwise.

        Non-linear arithmetic makes z3's search luck-dependent: a query it answers at once can
        stall under another term order. So a check first gets a slice of the remaining budget
        and, if that runs out, is retried with other random seeds.
        """
        reason = "no budget left"
        for seed, share in enumerate(RETRY_SHARES):
            if self.spent():
                break
            solver.set("rlimit", max(1, int(self.remaining_work * share)))
            if self.deadline is not None:
                left_ms = int((self.deadline - time.monotonic()) * 1000)
                solver.set("timeout", max(1, int(left_ms * share)))
            solver.set("random_seed", seed)
            before = _work_count(solver)
            result = solver.check(*assumptions)
            self.remaining_work -= max(1, _work_count(solver) - before)
            if result == z3.sat:
                return True
            if result == z3.unsat:
                return False
            reason = solver.reason_unknown()
            if reason not in ("timeout", "canceled", "max. resource limit exceeded"):
                break
        raise TheoremTimeout(f"z3 answered unknown ({reason}) within {self.describe()}")


def _work_count(solver: Any) -> int:
    """z3's resource count so far (it counts for the whole context, so only differences mean
    anything)."""
    count: int = solver.statistics().get_key_value("rlimit count")
    return count


def new_solver(bv_solver: int = 0) -> Any:
    """A z3 solver in incremental mode (its SMT core with non-linear arithmetic support).

    A fresh ``z3.Solver`` answers its first ``check`` with a non-incremental tactic, which on
    these non-linear queries regularly stalls for seconds; the SMT core answers in
    milliseconds. Pushing a scope selects it.
    ``bv_solver`` picks z3's bit-vector solver (0: bit-blasting, 2: int-blasting); it only takes
    effect when set before the push.
    """
    solver = z3.Solver()
    if bv_solver:
        solver.set("smt.bv.solver", bv_solver)
    solver.push()
    return solver


@dataclass(frozen=True)
class Found:
    """What a theorem body returns; the runner adds name, timing and catches errors."""

    status: Status
    detail: str
    witnesses: tuple[Mapping[str, Value], ...] = ()
    claims: tuple[tuple[str, ...], ...] = ()


def run_theorem(name: str, instruction: str, kind: str, budget: Budget,
                body: Callable[[Budget], Found]) -> TheoremResult:
    start = time.perf_counter()
    try:
        found = body(budget)
    except TheoremTimeout as exc:
        found = Found("timeout", str(exc))
    except Sm5Error as exc:
        found = Found("failed", f"cannot state the theorem: {exc}")
    return TheoremResult(name, instruction, kind, found.status, time.perf_counter() - start,
                         found.detail, found.witnesses, found.claims,
                         budget.work - budget.remaining_work)


@dataclass
class Context:
    """The z3 reading of one instruction's semantics, shared by its theorems.

    ``base`` holds the input ranges, ``assume`` and the side conditions of every expression (the
    region where the Python evaluator returns values); ``active[g]`` adds group ``g``'s scope
    and, for a group with ``requires``, that one of the required clauses fires; ``firing[c]``
    adds clause ``c``'s condition. ``models`` collects every model a theorem met, for the
    evaluator-agreement theorem.
    """

    spec: InstructionSpec
    syms: Symbols
    base: Any
    when: dict[str, Any]
    active: dict[str, Any]
    firing: dict[str, Any]
    model: Model
    models: list[dict[str, Value]] = field(default_factory=list)

    @property
    def limits(self) -> Mapping[str, int]:
        return self.model.limits

    def defines(self, clause: Clause) -> bool:
        """The clause names the vocabulary's plain exact outcome (the access performed)."""
        return self.model.plain_outcome in clause.outcomes

    def voids_memory(self, clause: Clause) -> bool:
        """The clause names an outcome whose effect is on memory (skipped or undefined)."""
        return not self.model.memory_outcomes.isdisjoint(clause.outcomes)

    @property
    def encoding(self) -> Encoding:
        return self.syms.encoding

    def names(self) -> frozenset[str]:
        return frozenset(self.syms)

    def rule(self, text: str, what: str) -> Rule:
        """A rule-language expression a theorem composes (e.g. from the YAML address)."""
        return parse_rule(text, where=f"{self.spec.name}: {what}", known=self.names())

    def expr(self, rule: Rule) -> Any:
        return translate(rule, self.syms).expr

    @staticmethod
    def expr_in(rule: Rule, syms: Symbols) -> Any:
        return translate(rule, syms).expr

    def group(self, group_id: str) -> Group:
        return next(g for g in self.spec.semantics.groups if g.id == group_id)

    def group_of(self, clause: Clause) -> Group:
        return self.group(clause.group)

    def has_input(self, name: str) -> bool:
        return any(i.name == name for i in self.spec.semantics.inputs)


def build_context(spec: InstructionSpec, model: Model, *,
                  encoding: Encoding | None = None, abstract: bool = True) -> Context:
    semantics = spec.semantics
    syms = symbols(semantics, encoding=encoding, abstract=abstract)
    parts = [syms.ranges, syms.derived_condition]
    if semantics.assume is not None:
        assumed = translate(semantics.assume, syms)
        parts += [assumed.condition, assumed.expr]
    scope: dict[str, Any] = {}
    when: dict[str, Any] = {}
    for g in semantics.groups:
        translated = translate(g.scope, syms)
        scope[g.id] = translated.expr
        parts.append(translated.condition)
        for c in g.clauses:
            translated = translate(c.when, syms)
            when[c.id] = translated.expr
            parts.append(translated.condition)
    base = z3.And(*parts)
    active: dict[str, Any] = {}
    firing: dict[str, Any] = {}
    clause_group = {c.id: g for g in semantics.groups for c in g.clauses}

    def group_active(g: Group, seen: tuple[str, ...] = ()) -> Any:
        if g.id in active:
            return active[g.id]
        if g.id in seen:
            raise Sm5Error(f"{spec.name}: group {g.id} requires itself", where=spec.path)
        condition = z3.And(base, scope[g.id])
        if g.requires:
            condition = z3.And(condition, z3.Or(*[
                z3.And(group_active(clause_group[r], (*seen, g.id)), when[r])
                for r in g.requires]))
        active[g.id] = condition
        return condition

    for g in semantics.groups:
        group_active(g)
        for c in g.clauses:
            firing[c.id] = z3.And(active[g.id], when[c.id])
    return Context(spec, syms, base, when, active, firing, model)


def objective_order(ctx: Context) -> list[str]:
    """Inputs in the order a witness minimises them: the resource shape first (small
    resources), then the rest in declaration order."""
    names = [i.name for i in ctx.spec.semantics.inputs]
    return [n for n in SHAPE_INPUTS if n in names] + [n for n in names if n not in SHAPE_INPUTS]


def lexmin(ctx: Context, budget: Budget, constraints: Sequence[Any],
           names: frozenset[str] | None = None) -> dict[str, Value] | None:
    """The lexicographically smallest model of ``constraints`` (``None`` if there is none).

    Inputs are fixed one at a time (binary search on each, guided by the models found) and
    substituted into the constraints, so a product such as ``stride * index`` becomes linear as
    soon as ``stride`` is fixed. With ``names``, only those inputs are minimised and returned
    (the constraints fix the others).
    """
    current = list(constraints)
    solver = new_solver()
    solver.add(*current)
    if not budget.check(solver):
        return None
    values: dict[str, Value] = {}
    for name in objective_order(ctx):
        if names is not None and name not in names:
            continue
        term, low, _ = ctx.syms.ordinal(name)
        best = _as_int(solver.model().eval(term, model_completion=True))
        probe = low  # most inputs sit at their lower bound: try it first
        while low < best:
            solver.push()
            solver.add(term <= probe)
            if budget.check(solver):
                best = _as_int(solver.model().eval(term, model_completion=True))
            else:
                low = probe + 1
            solver.pop()
            probe = (low + best - 1) // 2
        values[name] = ctx.syms.from_ordinal(name, best)
        pair = ctx.syms.bind_one(name, values[name])
        current = [z3.simplify(z3.substitute(c, pair)) for c in current]
        solver = new_solver()
        solver.add(*current)
        if not budget.check(solver):  # cannot happen: best was seen in a model
            raise TheoremTimeout(f"lost the model while fixing {name}")
    ordered = {i.name: values[i.name] for i in ctx.spec.semantics.inputs if i.name in values}
    if names is None:
        ctx.models.append(ordered)
    return ordered


def witness_constraints(ctx: Context) -> list[Any]:
    """Extra constraints that keep a witness small (when the query allows it)."""
    if ctx.has_input(COUNT):
        return [ctx.expr(ctx.rule(f"{COUNT} <= {WITNESS_MAX_COUNT}", "witness size"))]
    return []


def small_witness(ctx: Context, budget: Budget,
                  constraints: Sequence[Any]) -> dict[str, Value] | None:
    """:func:`lexmin` with the witness-size constraints, or without them if they conflict."""
    extra = witness_constraints(ctx)
    if extra:
        found = lexmin(ctx, budget, [*constraints, *extra])
        if found is not None:
            return found
    return lexmin(ctx, budget, constraints)


def _as_int(value: Any) -> int:
    if z3.is_bv_value(value):
        return int(value.as_signed_long())
    return int(value.as_long())


def show(values: Mapping[str, Value]) -> str:
    """A model as ``name=value`` pairs; large numbers in hex."""
    parts = []
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            parts.append(f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}")
        elif value > 0xFFFF:
            parts.append(f"{name}={value:#x}")
        else:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def fired_in(group: Group, env: Mapping[str, Value]) -> tuple[str, ...]:
    """The clauses of ``group`` whose condition holds (Python evaluator)."""
    return tuple(c.id for c in group.clauses if c.when.holds(env))
