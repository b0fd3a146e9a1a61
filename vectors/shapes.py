"""Legal and illegal instances of an instruction, found from the spec's tables.

Legal shapes are enumerated per (target, runtime) cell from the operand tables (files that
exist in the stage, declared kinds, typed return types and formats) and kept when the legality
checker accepts them. Illegal shapes are *one move* away from a legal one: every single change
of one attribute (a file, kind, mask, swizzle, modifier, ``_sat``, target, runtime, feature,
return type, format, register number, declared dimension, an extra or missing declaration).
:func:`find_breakers` walks all of them once and keeps, for every legality rule, the first
instance that breaks that rule alone.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from sm5.oracle.errors import Sm5Error
from sm5.oracle.legality import violations as oracle_violations
from sm5.oracle.machine.program import IMMEDIATE_BITS, NULL_FILE
from sm5.oracle.machine.state import MachineState, Resource
from sm5.oracle.model.spec import MEMORY_ALIAS, InstructionSpec, OperandSpec, Spec
from sm5.oracle.rulelang.rules import Value
from sm5.vectors import domain
from sm5.vectors.instances import (
    DEFAULT_DIMS,
    Assembler,
    Chooser,
    Dims,
    Shape,
    Slot,
    Unrealizable,
    ZeroChooser,
    resource_declaration,
)


class GenerationError(Sm5Error):
    """The spec leaves something the generator must cover without an instance (a rule no
    instance breaks, a clause no state reaches). Generation stops: completeness is by
    construction, never by luck."""


# ----------------------------------------------------------------------------------------------
# Legality of a shape


@domain.per_spec(maxsize=1 << 14)
def violations(spec: Spec, shape: Shape) -> tuple[str, ...]:
    """Ids of every rule the shape breaks (empty when legal)."""
    try:
        program = Assembler(spec, shape, ZeroChooser()).program()
    except Unrealizable:
        return ("<unrealizable>",)
    # Legality reads the bound format of typed resources, never their data.
    resources = {s.register: Resource(s.kind, (), s.dims.stride, s.dims.count, s.format,
                                      s.dims.counter)
                 for s in (*shape.slots, *shape.extras) if s.kind}
    machine = MachineState({}, resources, shape.invocation)
    return tuple(r.id for r in oracle_violations(program, shape.target, shape.runtime, machine,
                                                 spec))


def is_legal(spec: Spec, shape: Shape) -> bool:
    return not violations(spec, shape)


# ----------------------------------------------------------------------------------------------
# Enumeration of legal shapes


def _slot_choices(spec: Spec, ins: InstructionSpec, i: int, stage: str,
                  typed: Sequence[tuple[str, str]]) -> list[Slot]:
    op = ins.operands[i]
    out: list[Slot] = []
    for file in domain.stage_files(spec, op, stage):
        components = _components_for(op, file)
        if domain.is_resource_file(spec, file):
            for kind in domain.legal_kinds(spec, op, file):
                if kind == "typed":
                    out.extend(Slot(file, 0, components, kind=kind, return_type=rt, format=fmt,
                                    dims=_default_dims(kind)) for rt, fmt in typed)
                else:
                    out.append(Slot(file, 0, components, kind=kind,
                                    dims=_default_dims(kind, _counts(ins, op.name, kind, file))))
        else:
            index = 0 if domain.is_indexed(file) and file not in IMMEDIATE_BITS else None
            out.append(Slot(file, index, components))
    return out


def _components_for(op: OperandSpec, file: str) -> str:
    if file in IMMEDIATE_BITS or file == NULL_FILE:  # no components to select
        return ""
    if not domain.is_indexed(file) and op.selection == "select":
        return "x"
    return domain.default_components(op)


def _counted(dims: Dims, count: int) -> Dims:
    """Structured dimensions with another structure count (the view's counter kept)."""
    return replace(dims, count=count, size=0)


def _default_dims(kind: str, counter: bool = False) -> Dims:
    if kind == "typed":
        return Dims(count=DEFAULT_DIMS.count, size=4 * DEFAULT_DIMS.count)
    return replace(DEFAULT_DIMS, counter=0) if counter else DEFAULT_DIMS


def _counts(ins: InstructionSpec, operand: str, kind: str, file: str) -> bool:
    """The instruction reads the hidden counter of the operand's (structured) view: its
    default view has one, in the files the operand allows (a view of another file has none)."""
    return kind == "structured" and file in ins.operand(operand).files and any(
        i.source.kind == "resource" and i.source.operand == operand and
        i.source.field == "counter" for i in ins.semantics.inputs)


def _number_registers(slots: Sequence[Slot]) -> tuple[Slot, ...]:
    """Distinct temp registers in operand order: r0, r1, ..."""
    out = []
    n = 0
    for slot in slots:
        if slot.file == "r":
            out.append(replace(slot, index=n))
            n += 1
        else:
            out.append(slot)
    return tuple(out)


@domain.per_spec()
def typed_choices(spec: Spec, name: str) -> tuple[tuple[str, str], ...]:
    """Every (return type, format) pair: those the checker accepts for the instruction first,
    then pairs whose return type matches the format's, in model order."""
    formats = spec.model.typed_formats
    pairs = sorted(itertools.product(domain.return_types(spec), domain.typed_formats(spec)),
                   key=lambda p: (formats[p[1]] != p[0], list(formats).index(p[1])))
    legal = legal_typed_pairs(spec, name)
    return tuple(legal) + tuple(p for p in pairs if p not in legal)


@domain.per_spec()
def legal_typed_pairs(spec: Spec, name: str) -> tuple[tuple[str, str], ...]:
    """The (return type, format) pairs the checker accepts on the instruction's typed operand
    (matching return type and format first); empty when no operand can be typed."""
    ins = spec.instruction(name)
    memory = [i for i, op in enumerate(ins.operands) if "typed" in op.kinds]
    if not memory:
        return ()
    formats = spec.model.typed_formats
    pairs = sorted(itertools.product(domain.return_types(spec), domain.typed_formats(spec)),
                   key=lambda p: (formats[p[1]] != p[0], list(formats).index(p[1])))
    # The operand may also take files without typed views (a query of t# or u#), and the first
    # cells may be stages without UAVs: the first cell where some pair is legal decides.
    typed_files = [f for f in ins.operands[memory[0]].files if "typed" in domain.kinds_of(spec, f)]
    for cell in domain.cells(spec, ins):
        base = first_shape(spec, name, cell.target.name, cell.runtime, typed=tuple(pairs))
        out = []
        for file, (rt, fmt) in itertools.product(typed_files[:1], pairs):
            slot = replace(base.slots[memory[0]], file=file, kind="typed", return_type=rt,
                           format=fmt, dims=_default_dims("typed"))
            if is_legal(spec, base.with_slot(memory[0], slot)):
                out.append((rt, fmt))
        if out:
            return tuple(out)
    return ()


def legal_typed(spec: Spec, name: str) -> tuple[str, str]:
    pairs = legal_typed_pairs(spec, name)
    if not pairs:
        raise Unrealizable(f"{name} has no legal typed resource")
    return pairs[0]


def all_shapes(spec: Spec, name: str, target: str, runtime: str,
               typed: Sequence[tuple[str, str]] | None = None) -> Iterator[Shape]:
    """Every combination of stage-legal files and kinds (default components), legal or not."""
    ins = spec.instruction(name)
    stage = spec.model.target(target).stage
    pairs = tuple(typed) if typed is not None else legal_typed_pairs(spec, name)
    choices = [_slot_choices(spec, ins, i, stage, pairs) for i in range(len(ins.operands))]
    features = domain.features_read(ins, spec)
    for combo in itertools.product(*choices):
        for flags in domain.flag_sets(ins):
            shape = Shape(name, target, runtime, _number_registers(combo), features=features,
                          flags=flags)
            yield shape if ins.operands else _with_bystanders(spec, shape)


def _with_bystanders(spec: Spec, shape: Shape) -> Shape:
    """An instruction without operands names nothing a vector could compare: its state holds
    a temp register and one resource of each file the cell can declare without breaking a
    further rule, all of which the instruction must leave unchanged."""
    shape = replace(shape, bystanders=("r0",))
    stage = spec.model.target(shape.target).stage
    files = {f.name: f.stages for f in spec.model.register_files}
    broken = set(violations(spec, shape))
    seen: set[str] = set()
    varied = domain.varied_files(spec)
    for resource_kind in spec.model.resource_kinds:
        if resource_kind.file in seen or stage not in files[resource_kind.file] or \
                resource_kind.file not in varied:
            continue
        seen.add(resource_kind.file)
        extra = _resource_slot(spec, shape.instruction, resource_kind.file, 0, resource_kind.kind)
        trial = replace(shape, extras=(*shape.extras, extra))
        if set(violations(spec, trial)) <= broken:
            shape = trial
    return shape


def legal_shapes(spec: Spec, name: str, target: str, runtime: str) -> tuple[Shape, ...]:
    return tuple(s for s in all_shapes(spec, name, target, runtime) if is_legal(spec, s))


def first_shape(spec: Spec, name: str, target: str, runtime: str,
                typed: Sequence[tuple[str, str]] | None = None) -> Shape:
    """The first enumerated shape of a cell (legal when the cell has a legal shape at all)."""
    shapes = list(all_shapes(spec, name, target, runtime, typed))
    for shape in shapes:
        if is_legal(spec, shape):
            return shape
    return shapes[0]


@domain.per_spec()
def default_shape(spec: Spec, name: str) -> Shape:
    """The first legal shape on the default target and runtime."""
    shape = first_shape(spec, name, domain.default_target(spec), domain.default_runtime(spec))
    if not is_legal(spec, shape):
        raise GenerationError(f"{name}: no legal instance on {shape.target} / {shape.runtime}: "
                              f"{', '.join(violations(spec, shape))}")
    return shape


@domain.per_spec()
def cell_shapes(spec: Spec, name: str, target: str, runtime: str) -> tuple[Shape, ...]:
    return legal_shapes(spec, name, target, runtime)


# ----------------------------------------------------------------------------------------------
# Random legal shapes


def random_legal(spec: Spec, name: str, chooser: Chooser, *, attempts: int = 4) -> Shape:
    """A legal shape: a legal cell and file/kind combination, then random components,
    modifiers, register numbers, ``_sat`` and typed details, kept when still legal."""
    ins = spec.instruction(name)
    available = [c for c in domain.cells(spec, ins) if c.available]
    cell = chooser.pick(available)
    bases = cell_shapes(spec, name, cell.target.name, cell.runtime)
    if not bases:
        raise GenerationError(f"{name}: cell {cell.target.name} / {cell.runtime} is available "
                              "but no instance is legal there")
    base = chooser.pick(bases)
    for _ in range(attempts):
        shape = _decorate(spec, ins, base, chooser)
        if is_legal(spec, shape):
            return shape
    return base


def _decorate(spec: Spec, ins: InstructionSpec, base: Shape, chooser: Chooser) -> Shape:
    slots = []
    used: list[int] = []
    for op, slot in zip(ins.operands, base.slots, strict=True):
        if slot.file == "r":
            free = [i for i in domain.register_numbers(spec, "r", base.runtime) if i not in used]
            alias = bool(used) and chooser.pick((False, False, False, True))
            index = chooser.pick(tuple(used) if alias else tuple(free))
            used.append(index)
            slot = replace(slot, index=index)
        elif domain.is_resource_file(spec, slot.file):
            slot = replace(slot, index=chooser.pick(
                domain.register_numbers(spec, slot.file, base.runtime)))
            if slot.kind == "typed":
                rt, fmt = chooser.pick(legal_typed_pairs(spec, ins.name))
                slot = replace(slot, return_type=rt, format=fmt)
        if slot.file not in IMMEDIATE_BITS and domain.is_indexed(slot.file):
            slot = replace(slot, components=chooser.pick(domain.components_choices(op)))
        if op.role == "src" and slot.file not in IMMEDIATE_BITS:
            neg, abs_ = chooser.pick(domain.modifier_sets(op.modifiers))
            slot = replace(slot, neg=neg, abs=abs_)
        slots.append(slot)
    sat = chooser.pick((False, True)) if ins.saturate else False
    return replace(base, slots=tuple(slots), sat=sat)


# ----------------------------------------------------------------------------------------------
# Moves: one attribute changed


@dataclass(frozen=True)
class Move:
    what: str
    shape: Shape


def _resource_slot(spec: Spec, name: str, file: str, index: int, kind: str,
                   components: str = "") -> Slot:
    """A u#/g# slot with default dimensions (and the first typed details, when typed)."""
    rt, fmt = typed_choices(spec, name)[0] if kind == "typed" else ("", "")
    ins = spec.instruction(name)
    counts = any(_counts(ins, op.name, kind, file) for op in ins.operands
                 if op.role == "memory")
    return Slot(file, index, components, kind=kind, dims=_default_dims(kind, counts),
                return_type=rt, format=fmt)


def _retarget_slot(spec: Spec, name: str, op: OperandSpec, slot: Slot, file: str) -> Slot:
    components = _components_for(op, file)
    if domain.is_resource_file(spec, file):
        kinds = domain.legal_kinds(spec, op, file) or domain.kinds_of(spec, file)
        return _resource_slot(spec, name, file, 0, kinds[0], components)
    if file in IMMEDIATE_BITS:
        return Slot(file, None, "")
    if not domain.is_indexed(file):
        return Slot(file, None, components)
    return Slot(file, slot.index if slot.file == file else 7, components)


def moves(spec: Spec, shape: Shape) -> Iterator[Move]:
    """Every shape one attribute away from ``shape``, in a fixed order: per operand its register
    file, its resource declaration and its components, then the instruction's own attributes."""
    ins = spec.instruction(shape.instruction)
    kept = domain.varied_files(spec)
    for i, (op, slot) in enumerate(zip(ins.operands, shape.slots, strict=True)):
        for file in kept:
            if file != slot.file:
                slot2 = _retarget_slot(spec, shape.instruction, op, slot, file)
                yield Move(f"{op.name} file {file}", shape.with_slot(i, slot2))
        if domain.is_resource_file(spec, slot.file):
            yield from _resource_moves(spec, shape, i, op)
        if slot.file not in IMMEDIATE_BITS:
            yield from _component_moves(shape, i, op)
    yield from _instruction_moves(spec, ins, shape)
    yield from _declaration_moves(spec, shape)


def _resource_moves(spec: Spec, shape: Shape, i: int, op: OperandSpec) -> Iterator[Move]:
    """Moves of a resource operand's declaration: kind, register, typed details, dimensions."""
    slot = shape.slots[i]
    runtime = spec.model.runtime(shape.runtime)
    target = spec.model.target(shape.target)
    for kind in domain.kinds_of(spec, slot.file):
        if kind != slot.kind:
            yield Move(f"{op.name} declared {kind}", shape.with_slot(i, _resource_slot(
                spec, shape.instruction, slot.file, slot.index or 0, kind, slot.components)))
    numbers = {1, *_slot_limits(spec, slot, runtime.uav_slots)}
    for n in sorted(numbers - {slot.index}):
        yield Move(f"{op.name} register {slot.file}{n}",
                   shape.with_slot(i, replace(slot, index=n)))
    if slot.kind == "typed":
        for rt in domain.return_types(spec):
            if rt != slot.return_type:
                yield Move(f"{op.name} return type {rt}",
                           shape.with_slot(i, replace(slot, return_type=rt)))
        for fmt in domain.typed_formats(spec):
            if fmt != slot.format:
                yield Move(f"{op.name} format {fmt}",
                           shape.with_slot(i, replace(slot, format=fmt)))
    if slot.dims.counter is not None:
        yield Move(f"{op.name} view without a counter", shape.with_slot(
            i, replace(slot, dims=replace(slot.dims, counter=None))))
    yield from _dimension_moves(spec, shape, i, target.stage, target.model)


def _component_moves(shape: Shape, i: int, op: OperandSpec) -> Iterator[Move]:
    """Moves of a register operand's components: write mask, swizzle class, source modifiers."""
    slot = shape.slots[i]
    if op.selection == "mask":
        for mask in domain.all_masks():
            if mask != slot.components:
                yield Move(f"{op.name} mask .{mask}",
                           shape.with_slot(i, replace(slot, components=mask)))
    if op.selection == "swizzle" and op.swizzles:
        for group in domain.by_class(domain.illegal_swizzles(op)).values():
            yield Move(f"{op.name} swizzle .{group[0]}",
                       shape.with_slot(i, replace(slot, components=group[0])))
    if op.role == "src":
        for neg, abs_ in domain.modifier_sets(("neg", "abs")):
            if (neg, abs_) != (slot.neg, slot.abs):
                yield Move(f"{op.name} modifiers neg={neg} abs={abs_}",
                           shape.with_slot(i, replace(slot, neg=neg, abs=abs_)))


def _instruction_moves(spec: Spec, ins: InstructionSpec, shape: Shape) -> Iterator[Move]:
    """Moves of the instruction's own attributes: _sat, flags, target, runtime, features."""
    yield Move("_sat", replace(shape, sat=not shape.sat))
    for flag in ins.flag_names:
        toggled = tuple(f for f in ins.flag_names if (f in shape.flags) != (f == flag))
        yield Move(f"flag _{flag} {'off' if flag in shape.flags else 'on'}",
                   replace(shape, flags=toggled))
    for other in spec.model.targets:
        if other.name != shape.target:
            yield Move(f"target {other.name}", replace(shape, target=other.name))
    for other_runtime in spec.model.runtimes:
        if other_runtime.name != shape.runtime:
            yield Move(f"runtime {other_runtime.name}",
                       replace(shape, runtime=other_runtime.name))
    for feature in shape.features:
        yield Move(f"without {feature}",
                   replace(shape, features=tuple(f for f in shape.features if f != feature)))


def _declaration_moves(spec: Spec, shape: Shape) -> Iterator[Move]:
    """Moves of the program's declarations: extra or duplicate resources, none, dcl_temps."""
    used = {s.register for s in shape.slots}
    varied = domain.varied_files(spec)
    for resource_kind in spec.model.resource_kinds:
        if resource_kind.file not in varied:
            continue
        for n in (0, 1):
            extra = _resource_slot(spec, shape.instruction, resource_kind.file, n,
                                   resource_kind.kind)
            what = "duplicate" if extra.register in used else "extra"
            yield Move(f"{what} {resource_kind.declaration} {extra.register}",
                       replace(shape, extras=(*shape.extras, extra)))
    if any(domain.is_resource_file(spec, s.file) and s.kind for s in shape.slots):
        yield Move("undeclared resource", replace(shape, undeclared=True))
    temps = [s.index for s in shape.slots if s.file == "r" and s.index is not None]
    if temps:
        yield Move(f"dcl_temps {max(temps)}", replace(shape, temps=max(temps)))


def _slot_limits(spec: Spec, slot: Slot, uav_slots: int) -> set[int]:
    """Register numbers at the edge of the slot rules of the slot's declaration: the last legal
    and the first illegal number of every ``index`` comparison (``index >= uav_slots``)."""
    try:
        declaration = resource_declaration(spec, slot).name
    except Unrealizable:
        return set()
    out: set[int] = set()
    for rule in spec.declarations.rules:
        if declaration not in rule.applies or rule.reject_if is None or \
                "index" not in rule.reject_if.names:
            continue
        limits = [n.value for n in ast.walk(rule.reject_if.tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, int)
                  and not isinstance(n.value, bool) and n.value > 1]
        if "uav_slots" in rule.reject_if.names:
            limits.append(uav_slots)
        out |= {n for limit in limits for n in (limit - 1, limit)}
    return out


def _dimension_moves(spec: Spec, shape: Shape, i: int, stage: str, model: int
                     ) -> Iterator[Move]:
    """Declared dimensions at the boundaries of the declaration rules."""
    slot = shape.slots[i]
    runtime = spec.model.runtime(shape.runtime)
    env: dict[str, Value] = {"stage": stage, "model": model, "runtime": runtime.name,
           "uav_slots": runtime.uav_slots, "index": slot.index or 0, "stride": 0, "count": 0,
           "bytes": 0, "tgsm_total": 0, "temps": 0}
    totals = domain.declaration_candidates(spec, "tgsm_total", env)
    if slot.kind == "structured":
        for stride in domain.declaration_candidates(spec, "stride", env):
            count = slot.dims.count if (stride * slot.dims.count) % 4 == 0 else 4
            yield Move(f"stride {stride}",
                       shape.with_slot(i, replace(
                           slot, dims=replace(slot.dims, stride=stride, count=count, size=0))))
        for count in domain.declaration_candidates(spec, "count", env):
            yield Move(f"{count} structures",
                       shape.with_slot(i, replace(slot, dims=_counted(slot.dims, count))))
        if slot.file == "g":
            for total in totals:
                count = math.ceil(total / slot.dims.stride)
                yield Move(f"{count} structures",
                           shape.with_slot(i, replace(slot, dims=_counted(slot.dims, count))))
    if slot.kind == "raw":
        sizes = set(domain.declaration_candidates(spec, "bytes", env))
        if slot.file == "g":
            sizes |= set(totals)
        for size in sorted(sizes):
            yield Move(f"{size} bytes", shape.with_slot(i, replace(slot, dims=Dims(size=size))))


# ----------------------------------------------------------------------------------------------
# Rule breakers


@dataclass(frozen=True)
class Breaker:
    """An instance breaking ``rule``; ``broken`` lists every rule it breaks (``rule`` first
    among them when the checker reports it first)."""

    rule: str
    shape: Shape
    broken: tuple[str, ...]
    move: str

    @property
    def isolated(self) -> bool:
        return self.broken == (self.rule,)


def vector_declarations(spec: Spec) -> frozenset[str]:
    """Declarations whose rules the generator can break: those without a register and those of
    a register file some operand of a specified instruction takes. A declaration of any other
    file (``t#`` until an instruction reads it) appears in vectors only as a legal extra, never
    with its numbers or register varied, so its rules wait for an instruction that reads it."""
    files = {f for ins in spec.instructions.values() for op in ins.operands for f in op.files}
    return frozenset(d.name for d in spec.declarations.declarations.values()
                     if d.register is None or d.register in files)


def rule_ids(spec: Spec, name: str) -> tuple[str, ...]:
    """The rules a vector of ``name`` can break: its own, then the rules of the declarations a
    vector program can hold (`vector_declarations`), then program rules."""
    ins = spec.instruction(name)
    usable = vector_declarations(spec)
    return tuple(r.id for r in ins.rules) + tuple(
        r.id for r in spec.declarations.rules if usable.intersection(r.applies)) + tuple(
        r.id for r in spec.declarations.program_rules)


def _rule_operands(ins: InstructionSpec) -> frozenset[str]:
    """Operands whose attributes some expression rule reads (``dst0_file``, ...)."""
    names: set[str] = set()
    for rule in ins.rules:
        if rule.reject_if is not None:
            names |= rule.reject_if.names
    return frozenset(op.name for op in ins.operands
                     if any(n.startswith(op.name + "_")
                            or (op.role == "memory" and n.startswith(MEMORY_ALIAS + "_"))
                            for n in names))


def _candidates(spec: Spec, ins: InstructionSpec) -> Iterator[Move]:
    """Legal bases of every available cell, one per combination of the operands the
    expression rules read (the others' files only matter to their own table rules, which
    every base exercises), then every move from each."""
    read = _rule_operands(ins)
    for cell in domain.cells(spec, ins):
        if not cell.available:
            continue
        seen: set[tuple[tuple[Slot, ...], tuple[str, ...]]] = set()
        for base in cell_shapes(spec, ins.name, cell.target.name, cell.runtime):
            key = (tuple(s for op, s in zip(ins.operands, base.slots, strict=True)
                         if op.name in read), base.flags)
            if key in seen:
                continue
            seen.add(key)
            yield from moves(spec, base)


@domain.per_spec()
def find_breakers(spec: Spec, name: str) -> tuple[Breaker, ...]:
    """For every rule, the first instance (legal shape of an available cell, then one move)
    that breaks it alone; failing that, one breaking it with the fewest other rules.

    Raises :class:`GenerationError` when a rule of the instruction itself is broken by no
    instance at all (declaration and program rules may belong to other instructions).
    """
    ins = spec.instruction(name)
    wanted = rule_ids(spec, name)
    best: dict[str, Breaker] = {}
    isolated: set[str] = set()
    for move in _candidates(spec, ins):
        broken = violations(spec, move.shape)
        if not broken or broken == ("<unrealizable>",):
            continue
        for rule in broken:
            old = best.get(rule)
            if rule not in isolated and (old is None or len(broken) < len(old.broken)):
                best[rule] = Breaker(rule, move.shape, broken, move.what)
                if len(broken) == 1:
                    isolated.add(rule)
        if isolated.issuperset(wanted):
            break
    missing = [r.id for r in ins.rules if r.id not in best]
    if missing:
        raise GenerationError(f"{name}: no instance breaks rule(s) {', '.join(missing)}")
    return tuple(best[r] for r in wanted if r in best)


# ----------------------------------------------------------------------------------------------
# Declarations at the edges of their rules


#: Declaration-rule variables set by the context of a cell, never by a declaration.
CONTEXT_VARIABLES = frozenset({"stage", "model", "runtime", "uav_slots"})
#: How a declared number of ``declarations.yaml`` maps onto a resource's dimensions.
DIMENSION_OF_NUMBER = {"stride": "stride", "count": "count", "bytes": "size"}


@dataclass(frozen=True)
class Edge:
    """A shape whose declarations put one rule variable at one edge value.

    ``key`` identifies the edge across cells (file, kind, variable, value, rules broken), so a
    limit is tested once per distinct verdict rather than once per cell."""

    what: str
    key: tuple[object, ...]
    shape: Shape


def _declared_bytes(slot: Slot) -> int:
    return slot.dims.size if slot.kind == "raw" else slot.dims.stride * slot.dims.count


def _whole_count(stride: int) -> int:
    """The fewest structures of ``stride`` bytes that fill whole 32-bit words."""
    return 4 // math.gcd(stride, 4) if stride else 1


def _declaration_env(spec: Spec, shape: Shape, slot: Slot, decl: str) -> dict[str, Value]:
    target = spec.model.target(shape.target)
    runtime = spec.model.runtime(shape.runtime)
    env: dict[str, Value] = {"stage": target.stage, "model": target.model,
                             "runtime": runtime.name, "uav_slots": runtime.uav_slots,
                             "index": slot.index or 0}
    for number in spec.declarations.declarations[decl].numbers:
        field = DIMENSION_OF_NUMBER.get(number)
        if field is not None:
            env[number] = getattr(slot.dims, field)
    return env


def _with_number(slot: Slot, number: str, value: int) -> Slot | None:
    field = DIMENSION_OF_NUMBER.get(number)
    if field is None:
        return None
    if field == "stride":
        return replace(slot, dims=replace(slot.dims, stride=value, count=_whole_count(value),
                                           size=0))
    if field == "count":
        return replace(slot, dims=replace(slot.dims, count=value, size=0))
    return replace(slot, dims=Dims(size=value))


def _sum_fillers(spec: Spec, shape: Shape, i: int, total: int, allowed: frozenset[str]
                 ) -> Shape | None:
    """``shape`` plus one more declaration of operand ``i``'s file whose size brings the sum
    of that file's declared bytes to ``total`` (each declaration within its own rules): the
    first resource kind of the file for which only rules in ``allowed`` break, or None."""
    slot = shape.slots[i]
    rest = -(-(total - _declared_bytes(slot)) // 4) * 4  # whole words: 32769 -> 32772
    if rest <= 0:
        return None
    used = {s.index for s in (*shape.slots, *shape.extras) if s.file == slot.file}
    index = min(n for n in range(len(used) + 1) if n not in used)
    for kind in domain.kinds_of(spec, slot.file):
        dims = Dims(size=rest) if kind == "raw" else Dims(stride=4, count=rest // 4)
        extra = replace(_resource_slot(spec, shape.instruction, slot.file, index, kind),
                        dims=dims)
        trial = replace(shape, extras=(*shape.extras, extra))
        if set(violations(spec, trial)) <= allowed:
            return trial
    return None


def edge_shapes(spec: Spec, base: Shape) -> Iterator[Edge]:
    """For every declared resource of ``base`` and every variable its declaration rules
    compare, the shape with that variable at each edge value (:func:`domain.declaration_edges`).

    A variable is a declared number (``stride``, ``count``, ``bytes``: the resource's
    dimensions), the register number (``index``), or, for a variable no single declaration
    writes, the sum of the declared bytes of the resource's file (several declarations, each
    legal on its own, whose sizes add up to the edge value).
    """
    for i, slot in enumerate(base.slots):
        if not (slot.kind and domain.is_resource_file(spec, slot.file)):
            continue
        decl = domain.declaration_of(spec, slot.file, slot.kind)
        rules = [r for r in spec.declarations.rules
                 if decl in r.applies and r.reject_if is not None]
        numbers = spec.declarations.declarations[decl].numbers
        names = sorted(set().union(*(r.reject_if.names for r in rules if r.reject_if))
                       - CONTEXT_VARIABLES)
        env = _declaration_env(spec, base, slot, decl)
        for name in names:
            reading = [r for r in rules if r.reject_if is not None and name in r.reject_if.names]
            allowed = frozenset(r.id for r in reading)
            trial_env = {**env, name: env.get(name, _declared_bytes(slot))}
            for value in domain.declaration_edges([r.reject_if for r in reading if r.reject_if],
                                                  name, trial_env):
                shape: Shape | None
                if name == "index":
                    shape = base.with_slot(i, replace(slot, index=value))
                elif name in numbers:
                    moved = _with_number(slot, name, value)
                    shape = None if moved is None else base.with_slot(i, moved)
                else:
                    shape = _sum_fillers(spec, base, i, value, allowed)
                    if shape is not None:
                        value = sum(_declared_bytes(s) for s in (*shape.slots, *shape.extras)
                                    if s.file == slot.file and s.kind)
                if shape is None:
                    continue
                broken = violations(spec, shape)
                if broken == ("<unrealizable>",):
                    continue
                kind = slot.kind if name == "index" or name in numbers else ""
                yield Edge(f"{slot.register} {slot.kind}: {name} {value}",
                           (slot.file, kind, name, value, broken), shape)
