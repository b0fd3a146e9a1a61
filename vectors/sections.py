"""The sections of a vector file: each a generator of cases, in the order they are written.

``boundary``     every clause, from the boundary points of every context (``sm5.vectors.points``);
``mask-swizzle`` every legal mask x every swizzle class (each mask and each class once per
                 source, paired, for a per-component instruction of several swizzled
                 sources), each letter in each swizzle position, every select;
``registers``    every register number used for variety on every register operand;
``cell``         every (target, runtime) cell x shapes covering every operand's files and
                 kinds and the cell's verdicts: executed where legal, must-reject where not;
``reject``       for every legality rule the first instance breaking it alone (else with the
                 fewest other rules), every illegal mask, swizzle, modifier set, register file
                 and typed return type / format;
``limit``        every declared resource at the edges of its declaration rules (zero, misaligned,
                 the last legal and the first illegal value of every limit, several
                 declarations whose sizes add up to a total limit): executed where legal,
                 must-reject where not;
``alias``        a destination register that is also a source, for every pair of register
                 operands whose roles allow it;
``witness``      every witness of every theorem of ``sm5.oracle.proofs``;
``random``       seeded random legal instances and points.

Each section draws from its own ``random.Random`` seeded with
``"<seed>:<instruction>:<section>"``; everything else is enumerated in spec order.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sm5.oracle.machine.program import IMMEDIATE_BITS
from sm5.oracle.model.spec import InstructionSpec, OperandSpec, Semantics, Spec
from sm5.oracle.rulelang.rules import Value
from sm5.vectors import domain
from sm5.vectors.instances import Case, Chooser, RandomChooser, Shape, Unrealizable
from sm5.vectors.points import Explorer, Point
from sm5.vectors.realize import assemble, conform, realize, realizer, resource_inputs
from sm5.vectors.shapes import (
    GenerationError,
    all_shapes,
    cell_shapes,
    default_shape,
    edge_shapes,
    find_breakers,
    legal_typed_pairs,
    moves,
    random_legal,
    typed_choices,
    violations,
)

#: Random legal shapes drawn per instruction; random cases combine them with random points.
SHAPE_POOL = 512
#: Random points tried per random case for one that keeps the shape legal.
LEGAL_ATTEMPTS = 8
#: Random points of a fitting context tried before the next context.
PICK_ATTEMPTS = 12

Witness = tuple[Mapping[str, Value], tuple[str, ...], tuple[tuple[str, ...], ...]]


# ----------------------------------------------------------------------------------------------
# Helpers


def section_rng(seed: int, instruction: str, section: str) -> RandomChooser:
    return RandomChooser(random.Random(f"{seed}:{instruction}:{section}"))


def envs(points: Iterable[Point]) -> list[dict[str, Value]]:
    return [p.env for p in points]


def _fmt(value: Value) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        return str(value)
    return f"0x{value:x}" if value >= 1 << 16 else str(value)


def describe(points: Sequence[Point]) -> str:
    """The semantic inputs a case was built for (exact: boundary cases use distinct registers
    and identity selections, so the oracle sees these values)."""
    parts = []
    for k, p in enumerate(points):
        text = ", ".join(f"{n}={_fmt(v)}" for n, v in p.values)
        parts.append(f"lane {k}: {text}" if len(points) > 1 else text)
    return "; ".join(parts)


def _same_shape(a: Shape, b: Shape) -> bool:
    """Equal but for resource dimensions (which a point always sets)."""
    def key(s: Shape) -> tuple[Any, ...]:
        return (s.target, s.sat, s.invocation, s.flags, s.bystanders,
                tuple((x.file, x.index, x.components, x.neg, x.abs, x.kind, x.return_type,
                       x.format) for x in s.slots))
    return key(a) == key(b)


class Pool:
    """Boundary points grouped by context, for cases whose shape is fixed first."""

    def __init__(self, spec: Spec, name: str, points: Iterable[Point]) -> None:
        self.spec = spec
        self.sem = spec.instruction(name).semantics
        self.by_context: dict[tuple[Value, ...], list[Point]] = {}
        for p in points:
            self.by_context.setdefault(p.context(self.sem), []).append(p)

    def compatible(self, shape: Shape, chooser: Chooser, lanes: int,
                   prefer: Callable[[Point], bool] = lambda p: True) -> list[Point] | None:
        """``lanes`` points of one context that leave ``shape`` unchanged (preferring those
        ``prefer`` accepts), or None. A context is tried only if its first point fits; then a
        few random points of it are tried."""
        for only_preferred in (True, False):
            for group in self.by_context.values():
                if not self._fits(shape, group[0]):
                    continue
                cands = [p for p in group if prefer(p)] if only_preferred else group
                picked: list[Point] = []
                for _ in range(PICK_ATTEMPTS):
                    if not cands:
                        break
                    p = cands[chooser.integer(0, len(cands) - 1)]
                    if self._fits(shape, p):
                        picked.append(p)
                        if len(picked) == lanes:
                            return picked
        return None

    def _fits(self, shape: Shape, point: Point) -> bool:
        try:
            return _same_shape(conform(self.spec, shape, [point.env]), shape)
        except Unrealizable:
            return False


def _defined_only(spec: Spec, name: str) -> Callable[[Point], bool]:
    ins = spec.instruction(name)
    plain = {spec.model.plain_outcome}
    return lambda p: all(set(ins.clause(c).outcomes) <= plain for c in p.clauses)


# ----------------------------------------------------------------------------------------------
# Sections


#: Boundary points kept per (context, clauses fired, candidate tags): the first ones the
#: explorer finds (the base and the first hit of each clause come first, then one input varied
#: at a time). Further points of a class test what the kept ones test; level 2 keeps them all.
BOUNDARY_PER_CLASS = 2


def representatives(points: Iterable[Point], semantics: Semantics,
                    per_class: int) -> Iterator[Point]:
    """The first ``per_class`` points of each (context, clauses, tags) class, in order."""
    seen: dict[tuple[object, ...], int] = {}
    for p in points:
        key = (p.context(semantics), p.clauses, p.tags)
        if seen.get(key, 0) < per_class:
            seen[key] = seen.get(key, 0) + 1
            yield p


def boundary_cases(spec: Spec, name: str, points: Sequence[Point], seed: int,
                   per_class: int | None = BOUNDARY_PER_CLASS) -> Iterator[Case]:
    ch = section_rng(seed, name, "boundary")
    shape = default_shape(spec, name)
    lanes = realizer(spec, name).points(shape)
    sem = spec.instruction(name).semantics
    groups: dict[tuple[Value, ...], list[Point]] = {}
    kept = points if per_class is None else representatives(points, sem, per_class)
    for p in kept:
        groups.setdefault(p.context(sem), []).append(p)
    for group in groups.values():
        for k in range(0, len(group), lanes):
            chunk = group[k:k + lanes]
            while len(chunk) < lanes:
                chunk.append(group[(k + len(chunk)) % len(group)])
            tags = set().union(*(p.tags for p in chunk))
            try:
                yield realize(spec, shape, envs(chunk), ch, flags=sorted(tags | {"boundary"}),
                              note=describe(chunk))
            except Unrealizable:
                continue


def _with_components(shape: Shape, i: int, components: str) -> Shape:
    return shape.with_slot(i, replace(shape.slots[i], components=components))


def position_sweep(legal: Sequence[str]) -> list[str]:
    """Of the legal swizzles, those that differ from ``.xyzw`` in one position (each letter in
    each position once): a source read from the wrong position shows on one of them, and the
    swizzle classes above cover the patterns; the 256 swizzles of an operand are level 2."""
    allowed = set(legal)
    out: list[str] = []
    for position in range(4):
        for letter in "xyzw":
            swz = "xyzw"[:position] + letter + "xyzw"[position + 1:]
            if swz in allowed and swz not in out:
                out.append(swz)
    return out or list(legal)


def mask_swizzle_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    ch = section_rng(seed, name, "mask-swizzle")
    ins = spec.instruction(name)
    base = default_shape(spec, name)
    lanes = realizer(spec, name).points
    visible = _defined_only(spec, name)

    def make(shape: Shape, note: str) -> Iterator[Case]:
        points = pool.compatible(shape, ch, lanes(shape), visible)
        if points is not None:
            yield realize(spec, shape, envs(points), ch, flags=("mask-swizzle",), note=note)

    def registers(selection: str) -> list[int]:
        return [i for i, (op, s) in enumerate(zip(ins.operands, base.slots, strict=True))
                if op.selection == selection and s.file not in IMMEDIATE_BITS
                and domain.is_indexed(s.file)]

    masks, swizzles, selects = registers("mask"), registers("swizzle"), registers("select")
    mask_slots: list[int | None] = list(masks) or [None]
    paired = pairs_masks(spec, name)
    for i in mask_slots:
        mask_choices = domain.legal_masks(ins.operands[i]) if i is not None else ("",)
        if paired:
            yield from _paired_cases(ins, base, i, mask_choices, swizzles, ch, make)
            continue
        for mask in mask_choices:
            shape = _with_components(base, i, mask) if i is not None else base
            for j in swizzles:
                op = ins.operands[j]
                for cls, members in domain.by_class(domain.legal_swizzles(op)).items():
                    swz = ch.pick(members)
                    yield from make(_with_components(shape, j, swz),
                                    f"mask .{mask}, {op.name} .{swz} (swizzle class {cls})")
    for j in swizzles:
        op = ins.operands[j]
        for k, swz in enumerate(position_sweep(domain.legal_swizzles(op))):
            shape = _with_components(base, j, swz)
            for i in masks:
                allowed = domain.legal_masks(ins.operands[i])
                shape = _with_components(shape, i, allowed[k % len(allowed)])
            yield from make(shape, f"{op.name} .{swz}")
    for j in selects:
        op = ins.operands[j]
        for letter in domain.selects():
            yield from make(_with_components(base, j, letter), f"{op.name} .{letter}")


def pairs_masks(spec: Spec, name: str) -> bool:
    """A per-component instruction of several swizzled sources (a bitwise operation, a
    comparison, a select): each source pairs each mask with each of its swizzle classes once
    (the longer list cycling the shorter) instead of taking their product, which would grow with
    the masks for every source; a source read at the wrong position still shows on the position
    sweep."""
    ins = spec.instruction(name)
    lanes = ins.semantics.lanes
    swizzled = sum(op.selection == "swizzle" for op in ins.operands)
    return lanes is not None and lanes.type == "component" and swizzled > 1


def _paired_cases(ins: InstructionSpec, base: Shape, i: int | None, mask_choices: Sequence[str],
                  swizzles: Sequence[int], ch: Chooser,
                  make: Callable[[Shape, str], Iterator[Case]]) -> Iterator[Case]:
    for j in swizzles:
        op = ins.operands[j]
        classes = list(domain.by_class(domain.legal_swizzles(op)).items())
        for k in range(max(len(mask_choices), len(classes))):
            mask = mask_choices[k % len(mask_choices)]
            cls, members = classes[k % len(classes)]
            shape = _with_components(base, i, mask) if i is not None else base
            swz = ch.pick(members)
            yield from make(_with_components(shape, j, swz),
                            f"mask .{mask}, {op.name} .{swz} (swizzle class {cls})")


def register_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    ch = section_rng(seed, name, "registers")
    ins = spec.instruction(name)
    base = default_shape(spec, name)
    lanes = realizer(spec, name).points
    shapes = [s for s in all_shapes(spec, name, base.target, base.runtime)
              if not violations(spec, s)]
    for i, op in enumerate(ins.operands):
        for file in op.files:
            if not domain.is_indexed(file) or file in IMMEDIATE_BITS:
                continue
            with_file = [s for s in shapes if s.slots[i].file == file]
            if not with_file:
                continue
            shape = with_file[0]
            for n in domain.register_numbers(spec, file, shape.runtime):
                if n == shape.slots[i].index:
                    continue
                trial = shape.with_slot(i, replace(shape.slots[i], index=n))
                others = [s.index for k, s in enumerate(trial.slots)
                          if k != i and s.file == file]
                if n in others:  # keep the operands apart: move the other one
                    k = next(k for k, s in enumerate(trial.slots) if k != i and s.index == n)
                    trial = trial.with_slot(k, replace(trial.slots[k], index=shape.slots[i].index))
                points = pool.compatible(trial, ch, lanes(trial), _defined_only(spec, name))
                if points is not None:
                    yield realize(spec, trial, envs(points), ch, flags=("registers",),
                                  note=f"{op.name} in {file}{n}")


def covering_shapes(spec: Spec, shapes: Iterable[Shape]) -> list[Shape]:
    """Shapes of one cell such that every operand's every file / kind / typed choice appears in
    one of them, and so does each verdict (legal, must-reject) the cell has: greedy, in
    enumeration order. The full product of files and kinds grows as the product of the choices
    (40 shapes per cell for a five-operand atomic) while what a cell tests (its stage and model
    rules, which depend on the memory file and kind, and each operand form once) needs a few."""
    def keys(shape: Shape) -> set[tuple[Any, ...]]:
        found: set[tuple[Any, ...]] = {("legal", not violations(spec, shape)),
                                       ("flags", shape.flags)}
        found |= {(i, slot.file, slot.kind, slot.return_type, slot.format)
                  for i, slot in enumerate(shape.slots)}
        return found

    keyed = [(shape, keys(shape)) for shape in shapes]
    uncovered = set().union(*(k for _, k in keyed)) if keyed else set()
    chosen: list[Shape] = []
    for shape, k in keyed:
        if k & uncovered:
            chosen.append(shape)
            uncovered -= k
    return chosen


def cell_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    ch = section_rng(seed, name, "cell")
    ins = spec.instruction(name)
    lanes = realizer(spec, name).points
    for cell in domain.cells(spec, ins):
        target, runtime = cell.target.name, cell.runtime
        for shape in covering_shapes(spec, all_shapes(spec, name, target, runtime)):
            files = "/".join(s.kind or s.file for s in shape.slots)
            written = "".join("_" + f for f in shape.flags)
            note = f"{target} on {runtime}" + "".join(", " + x for x in (files, written) if x)
            if not violations(spec, shape):
                points = pool.compatible(shape, ch, lanes(shape), _defined_only(spec, name))
                if points is not None:
                    yield realize(spec, shape, envs(points), ch, flags=("cell",), note=note)
                    continue
            yield assemble(spec, shape, ch, flags=("cell",), note=note)


def declaration_flag_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    """Every resource operand declared with each combination of the suffix flags its
    declaration accepts (``glc``, ``opc``), on the first legal shape of the cell section that
    declares it: flags an implementation must accept and that change nothing one invocation
    sees."""
    ch = section_rng(seed, name, "declaration-flags")
    ins = spec.instruction(name)
    lanes = realizer(spec, name).points
    shapes = [shape for cell in domain.cells(spec, ins)
              for shape in covering_shapes(spec, all_shapes(spec, name, cell.target.name,
                                                           cell.runtime))
              if not violations(spec, shape)]
    done: set[tuple[int, str]] = set()
    for shape in shapes:
        for i, slot in enumerate(shape.slots):
            if not slot.kind or not domain.is_resource_file(spec, slot.file):
                continue
            declared = domain.declaration_of(spec, slot.file, slot.kind)
            accepted = spec.declarations.declarations[declared].flags
            if not accepted or (i, declared) in done:
                continue
            done.add((i, declared))
            for count in range(1, len(accepted) + 1):
                for flags in itertools.combinations(accepted, count):
                    flagged = shape.with_slot(i, replace(slot, declaration_flags=flags))
                    note = f"{declared}{''.join('_' + f for f in flags)} {slot.register}"
                    points = pool.compatible(flagged, ch, lanes(flagged),
                                             _defined_only(spec, name))
                    if points is not None:
                        yield realize(spec, flagged, envs(points), ch,
                                      flags=("declaration-flags",), note=note)


def reject_cases(spec: Spec, name: str, seed: int) -> Iterator[Case]:
    """Illegal instances only (a candidate the checker accepts is skipped)."""
    seen: Counter[str] = Counter()
    for shape, note in _reject_shapes(spec, name):
        if violations(spec, shape):
            # Values drawn per case (by its description), never from the section's sequence:
            # a shape added by a new rule or register file changes no other case.
            ch = section_rng(seed, name, f"reject:{note}:{seen[note]}")
            seen[note] += 1
            yield assemble(spec, shape, ch, note=note)


def _reject_shapes(spec: Spec, name: str) -> Iterator[tuple[Shape, str]]:
    ins = spec.instruction(name)
    for breaker in find_breakers(spec, name):
        yield breaker.shape, breaker.move
    base = default_shape(spec, name)
    for i, op in enumerate(ins.operands):
        slot = base.slots[i]
        if op.selection == "mask" and slot.file not in IMMEDIATE_BITS:
            for mask in domain.illegal_masks(op):
                yield _with_components(base, i, mask), f"{op.name} mask .{mask}"
        if op.selection == "swizzle" and slot.file not in IMMEDIATE_BITS:
            for swz in domain.illegal_swizzles(op):
                yield _with_components(base, i, swz), f"{op.name} swizzle .{swz}"
        if op.role == "src" and slot.file not in IMMEDIATE_BITS:
            for neg, abs_ in domain.illegal_modifier_sets(op):
                yield (base.with_slot(i, replace(slot, neg=neg, abs=abs_)),
                       f"{op.name} modifiers neg={neg} abs={abs_}")
    legal_pairs = set(legal_typed_pairs(spec, name))
    for shape in all_shapes(spec, name, base.target, base.runtime, typed_choices(spec, name)):
        typed = [s for s in shape.slots if s.kind == "typed"]
        same_files = all(s.file == b.file for s, b in zip(shape.slots, base.slots, strict=True)
                         if s.kind != "typed")
        if typed and same_files and (typed[0].return_type, typed[0].format) not in legal_pairs:
            yield shape, f"typed {typed[0].return_type} view bound as {typed[0].format}"
    for move in moves(spec, base):
        if " file " in move.what:
            yield move.shape, move.what


def limit_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    """One case per distinct edge (:func:`sm5.vectors.shapes.edge_shapes`) over the legal
    shapes of every available cell: must-reject where a rule breaks, executed where the shape
    is legal (a too strict validator fails those)."""
    ch = section_rng(seed, name, "limit")
    ins = spec.instruction(name)
    lanes = realizer(spec, name).points
    seen: set[tuple[object, ...]] = set()
    for cell in domain.cells(spec, ins):
        if not cell.available:
            continue
        for base in cell_shapes(spec, name, cell.target.name, cell.runtime):
            for edge in edge_shapes(spec, base):
                if edge.key in seen:
                    continue
                seen.add(edge.key)
                note = f"{base.target} on {base.runtime}, {edge.what}"
                if violations(spec, edge.shape):
                    yield assemble(spec, edge.shape, ch, flags=("limit",), note=note)
                    continue
                points = pool.compatible(edge.shape, ch, lanes(edge.shape),
                                         _defined_only(spec, name))
                if points is None:
                    yield assemble(spec, edge.shape, ch, flags=("limit",), note=note)
                    continue
                envs_at = [_at_dimensions(spec, name, edge.shape, p.env) for p in points]
                yield realize(spec, edge.shape, envs_at, ch, flags=("limit",), note=note)


def _at_dimensions(spec: Spec, name: str, shape: Shape, env: dict[str, Value]
                   ) -> dict[str, Value]:
    """``env`` with the resource inputs (stride, count, size) of the shape's declarations, so
    the realizer keeps the edge's dimensions."""
    out = dict(env)
    for operand, fields in resource_inputs(spec.instruction(name)).items():
        slot = shape.slots[[op.name for op in spec.instruction(name).operands].index(operand)]
        for field, input_name in fields.items():
            if field in ("stride", "count", "size"):
                out[input_name] = getattr(slot.dims, field)
    return out


def alias_shapes(spec: Spec, name: str) -> Iterator[tuple[Shape, str]]:
    """Shapes of the default cell where a destination register is also a source: each source
    that can be a temp alone on each destination (reading the component the destination
    writes first, where its selection picks one), then every such source at once."""
    ins = spec.instruction(name)
    base = default_shape(spec, name)
    for d, dst in enumerate(ins.operands):
        dslot = base.slots[d]
        if dst.role != "dst" or dslot.file != "r" or dslot.index is None:
            continue
        sources = [k for k, op in enumerate(ins.operands)
                   if op.role == "src" and "r" in op.files]
        every = base
        for k in sources:
            op = ins.operands[k]
            slot = base.slots[k] if base.slots[k].file == "r" else replace(
                base.slots[k], file="r", components=domain.default_components(op))
            if op.selection == "select":
                slot = replace(slot, components=dslot.components[:1])
            slot = replace(slot, index=dslot.index, neg=False, abs=False)
            every = every.with_slot(k, slot)
            yield base.with_slot(k, slot), f"{op.name} is {dst.name}'s register {dslot.register}"
            if op.selection == "swizzle":
                for swz in _reading_first_written(op, dslot.components):
                    yield (base.with_slot(k, replace(slot, components=swz)),
                           f"{op.name} .{swz} reads what {dst.name} .{dslot.components} writes")
        if len(sources) > 1:
            yield every, f"every source is {dst.name}'s register {dslot.register}"


def _reading_first_written(op: OperandSpec, mask: str) -> tuple[str, ...]:
    """Legal swizzles of ``op`` made only of the first one or two letters ``mask`` writes
    (``.wwww`` on ``.w``, ``.xyxy`` on ``.xyzw``): a source that reads them after an early
    write sees the new value."""
    wanted = (mask[:1] * 4, mask[:2] * 2)
    legal = domain.legal_swizzles(op)
    return tuple(dict.fromkeys(w for w in wanted if len(w) == 4 and w in legal))


def alias_cases(spec: Spec, name: str, pool: Pool, seed: int) -> Iterator[Case]:
    """Executed cases of :func:`alias_shapes` (legal ones only): the oracle reads every source
    before it writes, so the expected state is the one of a machine that does."""
    ch = section_rng(seed, name, "alias")
    lanes = realizer(spec, name).points
    for shape, note in alias_shapes(spec, name):
        if violations(spec, shape):
            continue
        points = pool.compatible(shape, ch, lanes(shape), _defined_only(spec, name))
        if points is not None:
            yield realize(spec, shape, envs(points), ch, flags=("alias",), note=note)


#: The kind of theorem name whose further witnesses may be left out (``<name>/sibling/<id>``).
SIBLING_THEOREM = "/sibling/"


def witness_cases(spec: Spec, name: str, witnesses: Sequence[Witness], seed: int
                  ) -> Iterator[Case]:
    """A vector per witness. A sibling theorem's further witnesses (its first moved to other
    places) may name a place no program reaches (a helper invocation on a g#: a pixel shader
    has no g#); such a witness is left out, but every theorem keeps at least one vector."""
    shape = default_shape(spec, name)
    sem = spec.instruction(name).semantics
    lanes = realizer(spec, name).points(shape)
    realized: set[str] = set()
    missing: dict[str, str] = {}
    for values, theorems, claims in witnesses:
        point = Point(tuple((i.name, values[i.name]) for i in sem.inputs), frozenset(), ())
        provenance = {"theorems": list(theorems), "witness": dict(values),
                      "claims": [list(c) for c in claims]}
        note = describe([point])
        # Values drawn per witness (by its inputs): a new theorem's witness changes no other.
        ch = section_rng(seed, name, f"witness:{note}")
        try:
            case = realize(spec, shape, envs([point] * lanes), ch, flags=("z3-witness",),
                           note=note, provenance=provenance)
        except Unrealizable as exc:
            for theorem in theorems:
                missing.setdefault(theorem, str(exc))
            continue
        realized.update(theorems)
        yield case
    for theorem, reason in sorted(missing.items()):
        if theorem not in realized or SIBLING_THEOREM not in theorem:
            raise GenerationError(f"{name}: witness of {theorem} has no program: {reason}")


def random_cases(spec: Spec, name: str, explorer: Explorer, count: int, seed: int,
                 chunk: int = 0) -> Iterator[Case]:
    """``count`` random cases: random legal shapes (a pool drawn once per seed, shared by the
    chunks) with random points from the chunk's own stream."""
    shape_rng = section_rng(seed, name, "random-shapes")
    shapes = [random_legal(spec, name, shape_rng) for _ in range(SHAPE_POOL)]
    ch = section_rng(seed, name, f"random:{chunk}")
    r = realizer(spec, name)
    sem = spec.instruction(name).semantics
    context = list(domain.context_choices(sem))
    made = 0
    while made < count:
        shape = ch.pick(shapes)
        points = None
        for _ in range(LEGAL_ATTEMPTS):  # a point may move the shape out of legality (g# in a
            points = _random_points(explorer, ch, r.points(shape), context)  # pixel shader)
            if points is not None and _stays_legal(spec, shape, points):
                break
        if points is None:
            continue
        tags = set().union(*(p.tags for p in points))
        try:
            yield realize(spec, shape, envs(points), ch, flags=sorted(tags))
        except Unrealizable:
            continue
        made += 1


def _random_points(explorer: Explorer, ch: Chooser, lanes: int, context: Sequence[str]
                   ) -> list[Point] | None:
    """``lanes`` random points sharing the first one's finite-domain inputs."""
    first = explorer.random_point(ch)
    if first is None:
        return None
    points = [first]
    inputs = explorer.sem.inputs
    while len(points) < lanes:
        other = explorer.random_point(ch)
        if other is not None:
            env = other.env
            env.update({n: first.env[n] for n in context})
            points.append(Point(tuple((i.name, env[i.name]) for i in inputs), other.tags, ()))
    return points


def _stays_legal(spec: Spec, shape: Shape, points: Sequence[Point]) -> bool:
    try:
        return not violations(spec, conform(spec, shape, envs(points)))
    except Unrealizable:
        return False


# ----------------------------------------------------------------------------------------------
# Witnesses from the proofs


def load_witnesses(spec: Spec, name: str) -> list[Witness]:
    """Every witness of every theorem of ``name``, deduplicated and sorted canonically."""
    from sm5.oracle.proofs import run_instruction

    merged: dict[str, tuple[Mapping[str, Value], list[str], list[tuple[str, ...]]]] = {}
    # Only z3's work budget bounds a theorem here, never the wall clock: the witnesses, and so
    # the vectors, must not depend on how busy the machine is. A theorem that runs out of work
    # would drop witnesses and break byte-identical regeneration, so it is an error.
    for result in run_instruction(spec, name):
        if result.status == "timeout":
            raise GenerationError(f"theorem {result.name} ran out of its z3 work budget; its "
                                  "witnesses would be missing from the vectors")
        for k, witness in enumerate(result.witnesses):
            key = json.dumps(witness, sort_keys=True)
            entry = merged.setdefault(key, (witness, [], []))
            entry[1].append(result.name)
            if k < len(result.claims):
                entry[2].append(tuple(result.claims[k]))
    return [(w, tuple(sorted(set(t))), tuple(sorted(set(c))))
            for _, (w, t, c) in sorted(merged.items())]
