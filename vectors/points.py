"""Points: assignments of an instruction's semantic inputs, chosen at the clause boundaries.

For every *context* (a combination of the finite-domain inputs: memory file and kind, mask
width, modifiers, invocation) and every clause that can fire there, the generator finds a first
point firing the clause (depth-first over the boundary candidates of each input, candidates
recomputed as earlier inputs are fixed), then varies one input at a time over all its
boundary candidates around that point. Each point is classified with ``sm5.oracle.model.clauses``; a
clause of the spec that no point fires stops generation.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from sm5.oracle.errors import RuleError, Sm5Error
from sm5.oracle.model.clauses import classify, full_env
from sm5.oracle.model.spec import Clause, Group, InstructionSpec, Semantics, Spec
from sm5.oracle.rulelang.rules import Value, evaluate
from sm5.vectors import domain
from sm5.vectors.domain import Boundaries, Candidate
from sm5.vectors.instances import Chooser, Unrealizable
from sm5.vectors.realize import conform, realizer
from sm5.vectors.shapes import GenerationError, default_shape, violations

#: Dimension combinations per context used by random points.
PALETTE = 48

#: Leaves the depth-first search for a clause's first point may visit per context.
SEARCH_BUDGET = 50_000


@dataclass(frozen=True)
class Point:
    """Semantic input values (in input order) and the tags of the candidates they came from."""

    values: tuple[tuple[str, Value], ...]
    tags: frozenset[str]
    clauses: tuple[str, ...]

    @property
    def env(self) -> dict[str, Value]:
        return dict(self.values)

    def context(self, semantics: Semantics) -> tuple[Value, ...]:
        env = self.env
        return tuple(env[n] for n in domain.context_choices(semantics))


@dataclass(frozen=True)
class Budget:
    """How large points may make a state (in 32-bit words of the accessed resource)."""

    max_words: int


LEVEL_BUDGETS = {1: Budget(max_words=1024), 2: Budget(max_words=4096)}


def _ordered(semantics: Semantics, env: Mapping[str, Value]) -> tuple[tuple[str, Value], ...]:
    return tuple((i.name, env[i.name]) for i in semantics.inputs)


def _fired(ins: InstructionSpec, env: Mapping[str, Value]) -> tuple[str, ...] | None:
    sem = ins.semantics
    try:
        if sem.assume is not None and not sem.assume.holds(full_env(sem, env)):
            return None
        return tuple(c.id for c in classify(ins, env))
    except Sm5Error:
        return None


class _Unknown:
    """The value of an expression that reads an input not chosen yet."""


UNKNOWN = _Unknown()
Partial = Value | _Unknown


_NAMES: dict[int, tuple[ast.expr, frozenset[str]]] = {}


def _names_of(node: ast.expr) -> frozenset[str]:
    """The variables an expression reads (memoized per node; the node is kept alive)."""
    hit = _NAMES.get(id(node))
    if hit is None or hit[0] is not node:
        hit = (node, frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name)))
        _NAMES[id(node)] = hit
    return hit[1]


def _partial(node: ast.expr, env: Mapping[str, Value], text: str) -> Partial:
    """Three-valued evaluation: the oracle's evaluator where every name is known, else
    ``UNKNOWN`` unless the known parts decide (``False and ?``, ``c if ? else c``)."""
    names = _names_of(node)
    if names <= env.keys():
        try:
            return evaluate(node, env, text)
        except RuleError:
            return UNKNOWN
    if isinstance(node, ast.BoolOp):
        values = [_partial(v, env, text) for v in node.values]
        decisive = isinstance(node.op, ast.Or)
        if any(not isinstance(v, _Unknown) and bool(v) == decisive for v in values):
            return decisive
        return UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _partial(node.operand, env, text)
        return value if isinstance(value, _Unknown) else not value
    if isinstance(node, ast.IfExp):
        test = _partial(node.test, env, text)
        if not isinstance(test, _Unknown):
            return _partial(node.body if test else node.orelse, env, text)
        body, orelse = _partial(node.body, env, text), _partial(node.orelse, env, text)
        return body if not isinstance(body, _Unknown) and body == orelse else UNKNOWN
    return UNKNOWN


def _partial_env(semantics: Semantics, known: Mapping[str, Value]) -> dict[str, Value]:
    env = dict(known)
    for d in semantics.derived:
        value = _partial(d.expr.tree, env, d.expr.text)
        if not isinstance(value, _Unknown):
            env[d.name] = value
    return env


def _group_of(semantics: Semantics, clause_id: str) -> Group:
    return next(g for g in semantics.groups if any(c.id == clause_id for c in g.clauses))


def possible(semantics: Semantics, clause: Clause, known: Mapping[str, Value], *,
             env: Mapping[str, Value] | None = None) -> bool:
    """False when the known inputs already decide that ``clause`` cannot fire (its scope or
    condition is false, or none of the clauses its group requires can fire)."""
    env = _partial_env(semantics, known) if env is None else env
    group = _group_of(semantics, clause.id)
    for rule in (group.scope, clause.when):
        value = _partial(rule.tree, env, rule.text)
        if not isinstance(value, _Unknown) and not value:
            return False
    if group.requires:
        return any(possible(semantics, _clause(semantics, r), known, env=env)
                   for r in group.requires)
    return True


def _clause(semantics: Semantics, clause_id: str) -> Clause:
    return next(c for c in semantics.clauses if c.id == clause_id)


class Explorer:
    """Boundary points of one instruction under a state budget."""

    def __init__(self, spec: Spec, name: str, budget: Budget, *,
                 every_context: bool = False) -> None:
        self.every_context = every_context  # False: modifier contexts pairwise (domain)
        self.spec = spec
        self.ins = spec.instruction(name)
        self.sem = self.ins.semantics
        self.budget = budget
        self.dims = domain.dimension_inputs(self.sem)
        self.free = domain.free_inputs(self.sem)
        self.realizer = realizer(spec, name)
        self.free_bounds = Boundaries(self.sem)
        self.dim_bounds = Boundaries(self.sem, with_assume=True)
        self._bases: dict[tuple[Value, ...], dict[str, Value]] = {}
        self._palettes: dict[tuple[Value, ...], list[tuple[dict[str, Value], frozenset[str]]]] = {}

    def with_fresh_palettes(self) -> Explorer:
        """This explorer (its memoized boundaries shared) with no dimension palette filled yet:
        a random point then draws the same way whatever was drawn before, as hypothesis needs
        to replay an example."""
        fresh = copy.copy(self)
        fresh._palettes = {}
        return fresh

    # -- candidates ---------------------------------------------------------------------------

    def candidates(self, name: str, env: Mapping[str, Value]) -> tuple[Candidate, ...]:
        if name in self.dims:
            return self.dim_bounds.dimension(name, env, 4 * self.budget.max_words)
        return self.free_bounds.candidates(name, env)

    def base(self, context: Mapping[str, Value]) -> dict[str, Value]:
        """The context, each dimension at the middle of its non-zero candidates (a typical
        size: a structure of several words, several structures), free inputs 0."""
        env: dict[str, Value] = dict(context)
        for name in self.free:
            env[name] = 0
        for name in self.dims:
            env[name] = 0
        for _ in range(2):  # a second pass sees the other dimensions at their typical values
            for name in self.dims:
                values = [c.value for c in self.candidates(name, env)
                          if c.value > 0 and self.fits({**env, name: c.value})]
                env[name] = values[len(values) // 2] if values else 0
        return env

    def fits(self, env: Mapping[str, Value]) -> bool:
        return self.realizer.words(env) <= self.budget.max_words

    def keeps(self, env: Mapping[str, Value]) -> bool:
        """The point fits the budget and makes a legal instance of the default shape (the
        ``assume`` of the semantics allows shapes a declaration rule forbids, such as a
        0-byte g#)."""
        if not self.fits(env):
            return False
        try:
            shape = conform(self.spec, default_shape(self.spec, self.ins.name), [env])
        except Unrealizable:
            return False
        return not violations(self.spec, shape)

    def realizable(self, context: Mapping[str, Value]) -> bool:
        try:
            conform(self.spec, default_shape(self.spec, self.ins.name), [self.base(context)])
        except Unrealizable:
            return False
        return True

    def relevant(self, env: Mapping[str, Value], clause_id: str | None = None
                 ) -> tuple[str, ...]:
        """Inputs read by the groups that apply at ``env`` (or by one clause's group and the
        clauses it requires), in input order."""
        names: set[str] = set()
        fired = set(_fired(self.ins, env) or ())
        context = {n: env[n] for n in domain.context_choices(self.sem)}
        for g in self.sem.groups:
            clause_ids = {c.id for c in g.clauses}
            if clause_id is not None:
                if clause_id not in clause_ids:
                    continue
                for required in g.requires:
                    clause = self.ins.clause(required)
                    if possible(self.sem, clause, context):
                        names |= clause.when.names | _group_of(self.sem, required).scope.names
            elif not fired & clause_ids:
                continue
            names |= g.scope.names
            for c in g.clauses:
                names |= c.when.names
        inputs = domain.depends_on(self.sem, names)
        return tuple(n for n in (*self.dims, *self.free) if n in inputs)

    # -- search -------------------------------------------------------------------------------

    def first_hit(self, base: Mapping[str, Value], clause_id: str
                  ) -> dict[str, Value] | None:
        order = self.relevant(base, clause_id)
        clause = self.ins.clause(clause_id)
        visited = 0

        def walk(env: dict[str, Value], k: int) -> dict[str, Value] | None:
            nonlocal visited
            known = {n: v for n, v in env.items() if n not in order[k:]}
            if not possible(self.sem, clause, known):
                return None
            if k == len(order):
                visited += 1
                fired = _fired(self.ins, env)
                return env if fired and clause_id in fired and self.keeps(env) else None
            cands = self.candidates(order[k], env)  # the base value first, then the others
            cands = tuple(c for c in cands if c.value == env[order[k]]) + \
                tuple(c for c in cands if c.value != env[order[k]])
            for cand in cands:
                if visited >= SEARCH_BUDGET:
                    return None
                trial = dict(env)
                trial[order[k]] = cand.value
                if order[k] in self.dims and not self.fits(trial):
                    continue
                hit = walk(trial, k + 1)
                if hit is not None:
                    return hit
            return None

        return walk(dict(base), 0)

    def from_examples(self, base: Mapping[str, Value], clause_id: str,
                      examples: tuple[tuple[tuple[str, int], ...], ...]
                      ) -> dict[str, Value] | None:
        """The first of the clause's examples that fires it in the base's context."""
        for example in examples:
            env = {**base, **dict(example)}
            fired = _fired(self.ins, env)
            if fired and clause_id in fired and self.keeps(env):
                return env
        return None

    def around(self, base: Mapping[str, Value]) -> Iterator[Point]:
        """The base, then each relevant input varied alone over its candidates."""
        fired = _fired(self.ins, base)
        if fired and self.keeps(base):
            yield Point(_ordered(self.sem, base), frozenset(), fired)
        for name in self.relevant(base):
            for cand in self.candidates(name, base):
                env = dict(base)
                env[name] = cand.value
                fired = _fired(self.ins, env)
                if fired and self.keeps(env):
                    yield Point(_ordered(self.sem, env), cand.tags, fired)

    def points(self) -> Iterator[Point]:
        """Every boundary point of every realizable context (modifier contexts pairwise unless
        ``every_context``), without repeats."""
        seen: set[tuple[tuple[str, Value], ...]] = set()
        if self.every_context:
            chosen = [c for c in domain.contexts(self.sem) if self.realizable(c)]
        else:
            chosen = domain.covering_contexts(self.sem, self.realizable)
        for context in chosen:
            base = self.base(context)
            bases = [base]
            for clause in self.ins.clauses:
                if clause.examples:
                    hit = self.from_examples(base, clause.id, clause.examples)
                else:
                    hit = self.first_hit(base, clause.id)
                if hit is not None and hit not in bases:
                    bases.append(hit)
            for b in bases:
                for point in self.around(b):
                    if point.values not in seen:
                        seen.add(point.values)
                        yield point

    def random_point(self, chooser: Chooser) -> Point | None:
        """A random point: random context and dimensions (among their candidates), each free
        input a boundary candidate (computed with the other free inputs at 0) or a uniform
        value, half and half."""
        context = {name: chooser.pick(values)
                   for name, values in domain.context_choices(self.sem).items()}
        env, tags = self._dimensions(context, chooser)
        anchor = dict(env)
        for name in self.free:
            if chooser.pick((True, False)):
                cand = chooser.pick(self.candidates(name, anchor))
                env[name] = cand.value
                tags |= cand.tags
            else:
                bits = domain.input_width(self.sem, name) or 32
                env[name] = chooser.integer(0, (1 << bits) - 1)
        fired = _fired(self.ins, env)
        if fired is None or not self.keeps(env):
            return None
        return Point(_ordered(self.sem, env), frozenset(tags | {"random"}), fired)

    def _dimensions(self, context: Mapping[str, Value], chooser: Chooser
                    ) -> tuple[dict[str, Value], set[str]]:
        """Random dimensions for a context from a palette of at most ``PALETTE`` combinations
        per context, filled as it is used: the free inputs' boundaries depend on the
        dimensions, and a small palette keeps them memoized."""
        key = tuple(context.values())
        palette = self._palettes.setdefault(key, [])
        if len(palette) < PALETTE:
            env = self._base_of(context)
            tags: set[str] = set()
            for name in self.dims:
                cands = [c for c in self.candidates(name, env)
                         if self.keeps({**env, name: c.value})]
                if cands:
                    cand = chooser.pick(cands)
                    env[name] = cand.value
                    tags |= cand.tags
            palette.append((env, frozenset(tags)))
        else:
            env, frozen = chooser.pick(palette)
            tags = set(frozen)
        return dict(env), set(tags)

    def _base_of(self, context: Mapping[str, Value]) -> dict[str, Value]:
        key = tuple(context.values())
        if key not in self._bases:
            self._bases[key] = self.base(context)
        return dict(self._bases[key])


def check_coverage(ins: InstructionSpec, fired: set[str]) -> None:
    missing = [c.id for c in ins.clauses if c.id not in fired]
    if missing:
        raise GenerationError(f"{ins.name}: no boundary point fires clause(s) "
                              f"{', '.join(missing)}")
