"""Choice sets derived from the spec: what an instance or a state may hold, and its boundaries.

Everything here is a pure function of ``sm5.oracle.model.spec`` data. Operand choices (files, masks,
swizzles, selects, modifiers, resource kinds) come from the operand tables and the machine
model; the (target, runtime) cells from the availability tables; boundary values of a semantic
input from the comparisons of the instruction's rules, solved for that input. Nothing about a
particular instruction is written here: adding an instruction to spec/ extends every set.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, Concatenate, ParamSpec, TypeVar

from sm5.oracle.errors import RuleError
from sm5.oracle.machine.program import COMPONENTS
from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import (
    ALL_MODIFIERS,
    InstructionSpec,
    OperandSpec,
    Semantics,
    Spec,
    Target,
)
from sm5.oracle.rulelang import helpers
from sm5.oracle.rulelang.rules import Rule, Value, evaluate

P = ParamSpec("P")
R = TypeVar("R")


def per_spec(maxsize: int | None = None
             ) -> Callable[[Callable[Concatenate[Spec, P], R]], Callable[Concatenate[Spec, P], R]]:
    """Memoize a function of (spec, hashable arguments...) per Spec object.

    A Spec holds mappings, so it cannot be hashed; the key is its identity (the memo keeps the
    Spec alive, so the identity is never reused). ``maxsize`` bounds the memo (oldest first out)
    for functions called on unboundedly many arguments.
    """

    def decorate(fn: Callable[Concatenate[Spec, P], R]) -> Callable[Concatenate[Spec, P], R]:
        memo: OrderedDict[Any, tuple[Spec, R]] = OrderedDict()

        @functools.wraps(fn)
        def wrapper(spec: Spec, /, *args: P.args, **kwargs: P.kwargs) -> R:
            key = (id(spec), args, tuple(sorted(kwargs.items())))
            hit = memo.get(key)
            if hit is not None and hit[0] is spec:
                return hit[1]
            value = fn(spec, *args, **kwargs)
            memo[key] = (spec, value)
            if maxsize is not None and len(memo) > maxsize:
                memo.popitem(last=False)
            return value

        return wrapper

    return decorate


#: Bit widths of the fixed-width semantic input types.
TYPE_BITS: Mapping[str, int] = {"u32": 32, "u64": 64, "uword": 32, "iword": 32}

#: Register numbers used for variety: enough to exercise register decoding without large states.
VARIETY = {"r": 8, "u": 8, "g": 4}

#: "Typical" small values offered next to the boundaries (sizes, indices); a test-design choice.
SMALL_VALUES = (1, 2, 3, 4, 8, 12, 16, 32)

#: Points used to decide whether a comparison is linear in one input.
_PROBES = (0, 1, 2, 5, 1000, 65537)


# ----------------------------------------------------------------------------------------------
# Operand choices


@cache
def all_masks() -> tuple[str, ...]:
    """Every non-empty write mask in xyzw order (15), shortest first."""
    return tuple("".join(c) for n in range(1, 5) for c in itertools.combinations(COMPONENTS, n))


def legal_masks(op: OperandSpec) -> tuple[str, ...]:
    return op.masks if op.masks else all_masks()


def illegal_masks(op: OperandSpec) -> tuple[str, ...]:
    return tuple(m for m in all_masks() if m not in op.masks) if op.masks else ()


@cache
def all_swizzles() -> tuple[str, ...]:
    """The 256 four-letter swizzles in lexical xyzw order."""
    return tuple("".join(p) for p in itertools.product(COMPONENTS, repeat=4))


def swizzle_class(swizzle: str) -> str:
    """The equality pattern of a swizzle: ``xyzw`` -> ``0123``, ``zzxz`` -> ``0010``.

    Two swizzles of one class read the same *shape* of data (which positions repeat); the 15
    classes (Bell number B4) are what a swizzle decoder can get wrong independently of letters.
    """
    first: dict[str, str] = {}
    return "".join(first.setdefault(c, str(len(first))) for c in swizzle)


@cache
def legal_swizzles(op: OperandSpec) -> tuple[str, ...]:
    return op.swizzles if op.swizzles else all_swizzles()


def illegal_swizzles(op: OperandSpec) -> tuple[str, ...]:
    return tuple(s for s in all_swizzles() if s not in op.swizzles) if op.swizzles else ()


def by_class(swizzles: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Swizzles grouped by :func:`swizzle_class`, classes in order of first appearance."""
    groups: dict[str, list[str]] = {}
    for s in swizzles:
        groups.setdefault(swizzle_class(s), []).append(s)
    return {k: tuple(v) for k, v in groups.items()}


def selects() -> tuple[str, ...]:
    return tuple(COMPONENTS)


def default_components(op: OperandSpec) -> str:
    """The components an operand gets unless a choice says otherwise: the widest legal mask, the
    identity swizzle when allowed, ``x`` for a select."""
    if op.selection == "mask":
        return legal_masks(op)[-1]
    if op.selection == "swizzle":
        allowed = legal_swizzles(op)
        return COMPONENTS if COMPONENTS in allowed else allowed[0]
    if op.selection == "select":
        return COMPONENTS[0]
    return ""


def components_choices(op: OperandSpec) -> tuple[str, ...]:
    """Every legal component selection of an operand."""
    if op.selection == "mask":
        return legal_masks(op)
    if op.selection == "swizzle":
        return legal_swizzles(op)
    if op.selection == "select":
        return selects()
    return ("",)


def modifier_sets(allowed: Sequence[str]) -> tuple[tuple[bool, bool], ...]:
    """(neg, abs) pairs using only ``allowed`` modifiers, none first."""
    out = []
    for neg, abs_ in ((False, False), (True, False), (False, True), (True, True)):
        used = {m for m, on in zip(ALL_MODIFIERS, (neg, abs_), strict=True) if on}
        if used <= set(allowed):
            out.append((neg, abs_))
    return tuple(out)


def illegal_modifier_sets(op: OperandSpec) -> tuple[tuple[bool, bool], ...]:
    legal = set(modifier_sets(op.modifiers))
    return tuple(m for m in modifier_sets(ALL_MODIFIERS) if m not in legal)


# ----------------------------------------------------------------------------------------------
# Register files, resources, cells


def stage_files(spec: Spec, op: OperandSpec, stage: str) -> tuple[str, ...]:
    """The files an operand allows that exist in ``stage`` (``g#`` only in compute, ...)."""
    stages = {f.name: f.stages for f in spec.model.register_files}
    return tuple(f for f in op.files if stage in stages[f])






def varied_files(spec: Spec) -> tuple[str, ...]:
    """The register files an instruction's generated vectors move operands into and bind as
    bystanders: every file but those that only stand for another (x#, cb#, the icb, the
    compute ids: spec/model.yaml ``stands_for``). Whether they are taken where an r# is listed
    is one rule of the model, not a fact of each instruction: the program-state families
    (vectors/programs/program_state.yaml) test them in programs."""
    return tuple(f.name for f in spec.model.register_files if not f.stands_for)


def is_resource_file(spec: Spec, name: str) -> bool:
    return any(k.file == name for k in spec.model.resource_kinds)


def is_indexed(name: str) -> bool:
    """``r3``, ``u0``: single-letter files are indexed; longer names are index-less inputs."""
    return len(name) == 1


def kinds_of(spec: Spec, file: str) -> tuple[str, ...]:
    """Resource kinds the model has for a file (``u``: raw, structured, typed)."""
    return tuple(k.kind for k in spec.model.resource_kinds if k.file == file)


def legal_kinds(spec: Spec, op: OperandSpec, file: str) -> tuple[str, ...]:
    return tuple(k for k in kinds_of(spec, file) if not op.kinds or k in op.kinds)


def declaration_of(spec: Spec, file: str, kind: str) -> str:
    for k in spec.model.resource_kinds:
        if k.file == file and k.kind == kind:
            return k.declaration
    raise KeyError((file, kind))


def register_numbers(spec: Spec, file: str, runtime: str) -> tuple[int, ...]:
    """Register numbers used for variety, within the runtime's UAV slots."""
    count = VARIETY.get(file, 1)
    if file == "u":
        count = min(count, spec.model.runtime(runtime).uav_slots)
    return tuple(range(count))


def typed_formats(spec: Spec) -> tuple[str, ...]:
    return tuple(spec.model.typed_formats)


def return_types(spec: Spec) -> tuple[str, ...]:
    return spec.declarations.return_types


def features_read(ins: InstructionSpec, spec: Spec) -> tuple[str, ...]:
    """The global-flag features (``doubles``) the instruction's rules read: a shape declares
    them; features that follow from the context (``uav_stage``) need no declaration."""
    names: set[str] = set()
    for rule in ins.rules:
        if rule.reject_if is not None:
            names |= rule.reject_if.names
    return tuple(f for f, feature in spec.model.features.items()
                 if f in names and feature.global_flag is not None)


def flag_sets(ins: InstructionSpec) -> tuple[tuple[str, ...], ...]:
    """Every subset of the instruction's suffix flags in the spec's order, smallest first (one
    empty set for an instruction without flags); legality decides which are instructions."""
    names = ins.flag_names
    return tuple(c for n in range(len(names) + 1) for c in itertools.combinations(names, n))


@dataclass(frozen=True)
class Cell:
    """A (target, runtime) pair and whether the availability tables allow the instruction."""

    target: Target
    runtime: str
    available: bool


def cells(spec: Spec, ins: InstructionSpec) -> tuple[Cell, ...]:
    """Every (target, runtime) cell, ``cs_5_0`` on the first runtime first, then model order."""
    return _cells(spec, ins.name)


@per_spec()
def _cells(spec: Spec, name: str) -> tuple[Cell, ...]:
    ins = spec.instruction(name)
    out = []
    for target in spec.model.targets:
        for rt in spec.model.runtimes:
            ok = ins.availability.target_supported(target) is True and \
                target.stage in ins.availability.stages_for(rt.name)
            out.append(Cell(target, rt.name, ok))
    first = default_target(spec)
    out.sort(key=lambda c: (c.target.name != first, not c.available))
    return tuple(out)


def default_target(spec: Spec) -> str:
    """The compute target of the highest shader model: every resource file exists there."""
    compute = [t for t in spec.model.targets
               if all(t.stage in f.stages for f in spec.model.register_files)]
    return max(compute, key=lambda t: t.model).name


def default_runtime(spec: Spec) -> str:
    return spec.model.runtimes[0].name


def invocation_states(spec: Spec) -> tuple[str, ...]:
    return spec.model.invocation_states


# ----------------------------------------------------------------------------------------------
# Semantic inputs: contexts and boundary values


def input_width(semantics: Semantics, name: str) -> int | None:
    for i in semantics.inputs:
        if i.name == name:
            return TYPE_BITS.get(i.type)
    return None


def context_choices(semantics: Semantics) -> dict[str, tuple[Value, ...]]:
    """Inputs with a finite domain (enums, booleans, bounded ints) and their values."""
    out: dict[str, tuple[Value, ...]] = {}
    for i in semantics.inputs:
        if i.type == "enum":
            out[i.name] = i.values
        elif i.type == "bool":
            out[i.name] = (False, True)
        elif i.type == "int" and i.min is not None and i.max is not None:
            out[i.name] = tuple(range(i.min, i.max + 1))
    return out


def contexts(semantics: Semantics) -> Iterator[dict[str, Value]]:
    """Every combination of the finite-domain inputs, in declaration order."""
    choices = context_choices(semantics)
    names = list(choices)
    for combo in itertools.product(*(choices[n] for n in names)):
        yield dict(zip(names, combo, strict=True))


#: Bindings of a source modifier or the instruction's ``_sat``: combined pairwise, not in full.
MODIFIER_BINDINGS = frozenset({"modifier", "sat"})


def pairwise(rows: Sequence[dict[str, Value]]) -> list[dict[str, Value]]:
    """Of ``rows`` (combinations of the same names), a subset in which every pair of values of
    every two names that ``rows`` holds appears: greedy, the first row first, then each time the
    first row covering the most pairs not yet covered. Deterministic."""
    def pairs(row: dict[str, Value]) -> set[tuple[tuple[str, Value], tuple[str, Value]]]:
        items = list(row.items())
        return {(a, b) for i, a in enumerate(items) for b in items[i + 1:]} | \
            {(a, a) for a in items}

    keyed = [(row, pairs(row)) for row in rows]
    uncovered = set().union(*(k for _, k in keyed)) if keyed else set()
    chosen: list[dict[str, Value]] = []
    while uncovered:
        best, gain = None, 0
        for row, k in keyed:
            n = len(k & uncovered)
            if n > gain:
                best, gain = (row, k), n
        assert best is not None
        chosen.append(best[0])
        uncovered -= best[1]
    return chosen


def covering_contexts(semantics: Semantics,
                      keep: Callable[[dict[str, Value]], bool] = lambda _: True
                      ) -> list[dict[str, Value]]:
    """The contexts the systematic sections explore: every combination of the inputs that
    choose a code path (memory file and kind, invocation, mask width), crossed with modifier
    combinations (``-``, ``_abs``, ``_sat``) that cover every pair of modifier values. A modifier
    changes an operand's value before the operation, so each one and each two interacting are
    what an implementation can get wrong; the full product (128 contexts for a three-source
    double instruction) repeats the same boundary points under every combination. ``keep``
    filters contexts (e.g. realizable ones) before the covering is chosen."""
    by_name = {i.name: i for i in semantics.inputs}
    choices = context_choices(semantics)
    modifiers = [n for n in choices if by_name[n].source.kind in MODIFIER_BINDINGS]
    kept = [c for c in contexts(semantics) if keep(c)]
    if len(modifiers) < 3:
        return kept
    out: list[dict[str, Value]] = []
    groups: dict[tuple[Value, ...], list[dict[str, Value]]] = {}
    for c in kept:
        groups.setdefault(tuple(v for n, v in c.items() if n not in modifiers), []).append(c)
    for group in groups.values():
        rows = [{n: c[n] for n in modifiers} for c in group]
        for row in pairwise(rows):
            out.append(next(c for c in group if all(c[n] == row[n] for n in modifiers)))
    return out


def dimension_inputs(semantics: Semantics) -> tuple[str, ...]:
    """The inputs the ``assume`` rule constrains: the shape of the accessed resource."""
    if semantics.assume is None:
        return ()
    names = semantics.assume.names
    return tuple(i.name for i in semantics.inputs if i.name in names
                 and i.name not in context_choices(semantics))


def free_inputs(semantics: Semantics) -> tuple[str, ...]:
    """Fixed-width inputs that are neither context nor dimensions: operand and memory values."""
    skip = set(context_choices(semantics)) | set(dimension_inputs(semantics))
    return tuple(i.name for i in semantics.inputs if i.name not in skip)


def semantic_rules(semantics: Semantics) -> tuple[Rule, ...]:
    """Every rule the classification reads: group scopes and clause conditions."""
    out: list[Rule] = []
    for g in semantics.groups:
        out.append(g.scope)
        out.extend(c.when for c in g.clauses)
    return tuple(out)


def depends_on(semantics: Semantics, names: Iterable[str]) -> frozenset[str]:
    """The inputs that ``names`` read, following derived values."""
    derived = {d.name: d.expr.names for d in semantics.derived}
    inputs = {i.name for i in semantics.inputs}
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(derived.get(name, ()))
    return frozenset(seen & inputs)


@dataclass(frozen=True)
class Candidate:
    """A boundary value of one input and why it is interesting (tags become vector flags)."""

    value: int
    tags: frozenset[str]


def _compares(rules: Iterable[Rule]) -> Iterator[tuple[ast.Compare, str]]:
    for rule in rules:
        for node in ast.walk(rule.tree):
            if isinstance(node, ast.Compare):
                yield node, rule.text


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _root_of(difference: Callable[[int], int | None]) -> Fraction | None:
    """The zero of ``difference`` if it is linear (checked at several probes), else None."""
    diffs: list[int] = []
    for x in _PROBES:
        d = difference(x)
        if d is None:
            return None
        diffs.append(d)
    slope = Fraction(diffs[1] - diffs[0])
    if slope == 0 or any(diffs[0] + slope * x != d for x, d in zip(_PROBES, diffs, strict=True)):
        return None
    return -Fraction(diffs[0]) / slope


def _integer_value(node: ast.expr, env: Mapping[str, Value], text: str) -> int | None:
    try:
        value = evaluate(node, env, text)
    except (RuleError, ArithmeticError):
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


@dataclass(frozen=True)
class _Pair:
    """Two adjacent sides of a comparison: their difference crosses zero at a boundary."""

    left: ast.expr
    right: ast.expr
    text: str


class Boundaries:
    """Boundary candidates of the inputs of one instruction's semantics.

    The rule analysis (which comparisons read an input, which moduli and zero tests apply) is
    done once; candidates are memoized per input and the values of the inputs they depend on.

    * ``boundary``: each side of every comparison the input takes part in (``count - 1``,
      ``count``, ``count + 1``, ``stride - 4 * components``, ...), one modulus step further;
    * ``misaligned``: every residue of each modulus the rules test, at 0 and next to each root;
    * ``extreme``: 0, the largest value, the largest aligned value; ``signed``: 2^(w-1) - 1 and
      2^(w-1);
    * ``single-bit``: every power of two when the rules test the input against zero;
    * ``wrap``: where the address formula crosses 2^w (a naive w-bit implementation wraps there).

    64-bit inputs are doubles (the only 64-bit register values of SM5): they get the binary64
    specials (``sm5.oracle.rulelang.helpers.F64``). An input that reaches an argument of a helper
    gets the special values the registry gives that argument (float32 patterns, the float32 edges of
    a narrowing, shift counts, ...).
    """

    def __init__(self, semantics: Semantics, *, with_assume: bool = False,
                 memo_size: int = 1 << 14) -> None:
        self.semantics = semantics
        rules = list(semantic_rules(semantics))
        if with_assume and semantics.assume is not None:
            rules.append(semantics.assume)
        inputs = [i.name for i in semantics.inputs]
        self._pairs: dict[str, list[_Pair]] = {n: [] for n in inputs}
        self._keys: dict[str, tuple[str, ...]] = {}
        self._moduli: dict[str, tuple[int, ...]] = {}
        self._zero: dict[str, bool] = {}
        address = semantics.address
        self._wrap = {n: address is not None and n in depends_on(semantics, address.names)
                      for n in inputs}
        for node, text in _compares(rules):
            if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
                continue
            for left, right in itertools.pairwise([node.left, *node.comparators]):
                for n in depends_on(semantics, _names(left) | _names(right)):
                    self._pairs[n].append(_Pair(left, right, text))
        for n in inputs:
            reads: set[str] = set()
            for pair in self._pairs[n]:
                reads |= _names(pair.left) | _names(pair.right)
            if self._wrap[n] and address is not None:
                reads |= address.names
            self._keys[n] = tuple(sorted(depends_on(semantics, reads) - {n}))
            self._moduli[n] = tuple(sorted(self._find_moduli(rules, n)))
            self._zero[n] = _zero_tested(rules, n)
        self._specials = _special_inputs(semantics)
        self._memo: OrderedDict[tuple[Any, ...], tuple[Candidate, ...]] = OrderedDict()
        self._memo_size = memo_size

    def _find_moduli(self, rules: Iterable[Rule], name: str) -> set[int]:
        out: set[int] = set()
        for rule in rules:
            for node in ast.walk(rule.tree):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
                        isinstance(node.right, ast.Constant) and \
                        isinstance(node.right.value, int) and node.right.value > 1 and \
                        name in depends_on(self.semantics, _names(node.left)):
                    out.add(node.right.value)
        return out

    def _difference(self, left: ast.expr, right: ast.expr, text: str, env: Mapping[str, Value],
                    name: str) -> Callable[[int], int | None]:
        def difference(x: int) -> int | None:
            trial = dict(env)
            trial[name] = x
            try:
                full = full_env(self.semantics, trial)
            except (RuleError, ArithmeticError):
                return None
            a, b = _integer_value(left, full, text), _integer_value(right, full, text)
            return None if a is None or b is None else a - b

        return difference

    def roots(self, name: str, env: Mapping[str, Value]) -> list[Fraction]:
        """Where a comparison changes truth as ``name`` varies (the others held at ``env``)."""
        out = []
        for pair in self._pairs[name]:
            root = _root_of(self._difference(pair.left, pair.right, pair.text, env, name))
            if root is not None:
                out.append(root)
        return out

    def candidates(self, name: str, env: Mapping[str, Value]) -> tuple[Candidate, ...]:
        bits = input_width(self.semantics, name) or 32
        if bits == 64:
            return special_candidates(helpers.F64) + tuple(
                c for s in self._specials.get(name, ()) if s != helpers.F64 and s.width == 64
                for c in special_candidates(s))
        key = (name, tuple(env.get(k) for k in self._keys[name]))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        result = self._compute(name, env, bits)
        self._memo[key] = result
        if len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)
        return result

    def _compute(self, name: str, env: Mapping[str, Value], bits: int) -> tuple[Candidate, ...]:
        top = (1 << bits) - 1
        moduli = self._moduli[name]
        found: dict[int, set[str]] = {}

        def keep(value: int, tag: str) -> None:
            if 0 <= value <= top:
                found.setdefault(value, set()).add(tag)

        keep(0, "extreme")
        keep(top, "extreme")
        keep((1 << (bits - 1)) - 1, "signed")
        keep(1 << (bits - 1), "signed")
        for m in moduli:
            keep(top - top % m, "extreme")
            for k in range(1, m):
                keep(k, "misaligned")
        for root in self.roots(name, env):
            low, high = math.floor(root), math.ceil(root)
            for v in (low - 1, low, high, high + 1):
                keep(v, "boundary")
            for m in moduli:
                keep(low - m, "boundary")
                keep(high + m, "boundary")
                aligned = low - low % m
                for k in range(1, m):
                    keep(aligned + k, "misaligned")
        if self._zero[name]:
            for k in range(bits):
                keep(1 << k, "single-bit")
        address = self.semantics.address
        if self._wrap[name] and address is not None:
            wrap = self._difference(address.tree, ast.Constant(1 << bits), address.text, env,
                                    name)
            crossing = _root_of(wrap)
            if crossing is not None:
                for v in (math.floor(crossing) - 1, math.floor(crossing), math.ceil(crossing),
                          math.ceil(crossing) + 1):
                    keep(v, "wrap")
        for specials in self._specials.get(name, ()):
            if specials.width == bits:
                for special, tag in specials.values:
                    keep(special, tag)
        for value, tags in found.items():
            if any(value % m for m in moduli):
                tags.add("misaligned")
        return tuple(Candidate(v, frozenset(t)) for v, t in sorted(found.items()))

    def dimension(self, name: str, env: Mapping[str, Value], limit: int
                  ) -> tuple[Candidate, ...]:
        """Values of a resource-shape input: its boundaries and small typical values, where
        ``assume`` holds (the others held at ``env``), up to ``limit``."""
        assume = self.semantics.assume
        reads = assume.names if assume is not None else frozenset()
        key = ("dimension", name, limit, tuple(env.get(k) for k in self._keys[name]),
               tuple(env.get(k) for k in sorted(reads - {name})))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        cands = {c.value: c for c in self.candidates(name, env)}
        for v in SMALL_VALUES:
            cands.setdefault(v, Candidate(v, frozenset()))
        out = []
        for value in sorted(cands):
            if value > limit:
                continue
            trial = dict(env)
            trial[name] = value
            if assume is not None and not assume.holds(full_env(self.semantics, trial)):
                continue
            out.append(cands[value])
        result = tuple(out)
        self._memo[key] = result
        return result


def _zero_tested(rules: Iterable[Rule], name: str) -> bool:
    """Is ``name`` compared with 0 by ``==``/``!=`` (an any-bit-set test)?"""
    for node, _ in _compares(rules):
        sides = [node.left, *node.comparators]
        if len(sides) == 2 and all(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            names = [s.id for s in sides if isinstance(s, ast.Name)]
            zeros = [s for s in sides if isinstance(s, ast.Constant) and s.value == 0
                     and not isinstance(s.value, bool)]
            if names == [name] and zeros:
                return True
    return False


def _special_inputs(semantics: Semantics) -> dict[str, tuple[helpers.Specials, ...]]:
    """For each input that reaches an argument of a helper (in a derived value, a scope, a
    clause condition or an accepted value), the special-value sets of the registry for those
    arguments, in the order of :data:`sm5.oracle.rulelang.helpers.SPECIAL_SETS`."""
    rules: list[Rule] = [d.expr for d in semantics.derived]
    for g in semantics.groups:
        rules.append(g.scope)
        for c in g.clauses:
            rules.append(c.when)
            rules.extend(c.accept_values)
    found: dict[str, set[helpers.Specials]] = {}
    for rule in rules:
        for node in ast.walk(rule.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in helpers.REGISTRY:
                entry = helpers.REGISTRY[node.func.id]
                for arg, sets in zip(node.args, entry.specials, strict=True):
                    for name in depends_on(semantics, _names(arg)):
                        found.setdefault(name, set()).update(sets)
    return {name: tuple(s for s in helpers.SPECIAL_SETS if s in sets)
            for name, sets in found.items()}


@cache
def special_candidates(specials: helpers.Specials) -> tuple[Candidate, ...]:
    """A registry's special-value set as candidates, in its order."""
    return tuple(Candidate(v, frozenset({tag})) for v, tag in specials.values)


# ----------------------------------------------------------------------------------------------
# Declaration rules


def declaration_candidates(spec: Spec, name: str, env: Mapping[str, Value]
                           ) -> tuple[int, ...]:
    """Values of a declaration variable (``stride``, ``bytes``, ``tgsm_total``) on each side of
    the declaration rules' comparisons, in the context ``env`` (stage, model, ...), plus every
    residue of the moduli they test."""
    rules = [r.reject_if for r in spec.declarations.rules
             if r.reject_if is not None and name in r.reject_if.names]
    found: set[int] = set()
    for root in _comparison_roots(rules, name, env):
        found.update({math.floor(root), math.ceil(root), math.ceil(root) + 1})
    for m in _name_moduli(rules, name):
        for v in list(found):
            found.update(v + k for k in range(1, m + 1))
    return tuple(sorted(v for v in found if v >= 0))


def _name_moduli(rules: Iterable[Rule], name: str) -> set[int]:
    out: set[int] = set()
    for rule in rules:
        for node in ast.walk(rule.tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
                    isinstance(node.left, ast.Name) and node.left.id == name and \
                    isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
                out.add(node.right.value)
    return out


def declaration_edges(rules: Sequence[Rule], name: str, env: Mapping[str, Value]
                      ) -> tuple[int, ...]:
    """Values of a declaration variable on both sides of every comparison of ``rules`` that
    reads it (``root - 1``, ``root``, ``root + 1``), one modulus step either side of the root
    and every residue in the two steps above it (``stride`` 1, 2, 3 and 5, 6, 7: a check of
    ``stride < 4`` instead of the alignment is caught too), in the context ``env``;
    non-negative, sorted.

    Unlike :func:`declaration_candidates` (first illegal values, for one breaker per rule) this
    keeps the last legal value too, so a vector sits exactly at each limit.
    """
    found: set[int] = set()
    moduli = _name_moduli(rules, name)
    for root in _comparison_roots(rules, name, env):
        low, high = math.floor(root), math.ceil(root)
        found.update({low - 1, low, high, high + 1})
        for m in moduli:
            if m > 1:
                aligned = low - low % m
                found.update({aligned - m, aligned + m})
                found.update(aligned + k for k in range(1, m))
                found.update(aligned + m + k for k in range(1, m))
    return tuple(sorted(v for v in found if v >= 0))


def _comparison_roots(rules: Iterable[Rule], name: str, env: Mapping[str, Value]
                      ) -> Iterator[Fraction]:
    """For every comparison of ``rules`` (each adjacent pair of a chain), the value of ``name``
    where its two sides meet in the context ``env``, when there is one."""
    for node, text in _compares(rules):
        for left, right in itertools.pairwise([node.left, *node.comparators]):

            def difference(x: int, left: ast.expr = left, right: ast.expr = right,
                           text: str = text) -> int | None:
                trial = dict(env)
                trial[name] = x
                a, b = _integer_value(left, trial, text), _integer_value(right, trial, text)
                return None if a is None or b is None else a - b

            root = _root_of(difference)
            if root is not None:
                yield root
