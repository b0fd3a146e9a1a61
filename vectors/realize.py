"""Realizers: semantic inputs (a point) -> an instance and a state that make the oracle see them.

This is the inverse of each ``sm5.oracle.execution.semantics`` function, and like those it is the
one instruction-specific piece: which operand carries which input, which inputs shape the resource.
Each realizer has two parts. ``conform`` adjusts a shape to the finite-domain inputs of a point
(memory file and kind, mask width, modifiers, ``_sat``, invocation) and to its resource
dimensions; ``place`` asks the :class:`~vectors.instances.Assembler` for the operand values.
A point the realizer cannot express raises :class:`~vectors.instances.Unrealizable`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sm5.oracle.execution.bindings import lanes_in_mask
from sm5.oracle.machine.program import COMPONENTS, NULL_FILE
from sm5.oracle.machine.state import split64
from sm5.oracle.model.clauses import address_of
from sm5.oracle.model.spec import LANE_COMPONENT, InstructionSpec, Spec
from sm5.oracle.rulelang.rules import Value
from sm5.vectors import domain
from sm5.vectors.instances import Assembler, Case, Chooser, Dims, Shape, Unrealizable
from sm5.vectors.shapes import legal_typed

Point = Mapping[str, Value]



#: The bits of a 32-bit word.
WORD_MASK = 0xFFFFFFFF


def _int(point: Point, name: str) -> int:
    value = point[name]
    assert isinstance(value, int) and not isinstance(value, bool), (name, value)
    return value


def _free_register(shape: Shape) -> int:
    used = {s.index for s in shape.slots if s.file == "r"}
    return min(i for i in range(len(used) + 1) if i not in used)


def _select_slot(spec: Spec, shape: Shape, i: int, value: int) -> Shape:
    """An index-less input (vThreadIDInGroupFlattened reads 0) cannot carry another value."""
    slot = shape.slots[i]
    if not domain.is_indexed(slot.file) and value != 0:
        return shape.with_slot(i, replace(slot, file="r", index=_free_register(shape)))
    return shape


def _memory_slot(spec: Spec, shape: Shape, i: int, file: str, kind: str, dims: Dims) -> Shape:
    slot = shape.slots[i]
    if (file, kind) not in {(k.file, k.kind) for k in spec.model.resource_kinds}:
        raise Unrealizable(f"the model has no {kind} {file}#")
    typed = kind == "typed"
    index = slot.index if slot.file == file else 0
    return shape.with_slot(i, replace(
        slot, file=file, index=index, kind=kind,
        return_type=(slot.return_type or _first_legal(spec, shape, "return")) if typed else "",
        format=(slot.format or _first_legal(spec, shape, "format")) if typed else "",
        dims=dims))


def _first_legal(spec: Spec, shape: Shape, what: str) -> str:
    """The first return type / format the instruction's rules accept (uint, R32_UINT)."""
    rtype, fmt = legal_typed(spec, shape.instruction)
    return rtype if what == "return" else fmt


def _with_mask(spec: Spec, shape: Shape, i: int, components: int) -> Shape:
    op = spec.instruction(shape.instruction).operands[i]
    slot = shape.slots[i]
    if len(slot.components) == components:
        return shape
    fits = [m for m in domain.legal_masks(op) if len(m) == components]
    if not fits:
        raise Unrealizable(f"no legal mask of {components} components")
    return shape.with_slot(i, replace(slot, components=fits[0]))


def _invocation(spec: Spec, shape: Shape, invocation: str) -> Shape:
    if invocation == domain.invocation_states(spec)[0]:
        return replace(shape, invocation=invocation)
    # The stage where such an invocation exists (model.yaml invocation_states: pixel).
    inactive_stage = spec.model.invocation_stages[invocation][0]
    stages = {f.name: f.stages for f in spec.model.register_files}
    for slot in shape.slots:
        if inactive_stage not in stages[slot.file]:
            raise Unrealizable(f"{slot.file}# does not exist in the {inactive_stage} stage")
    stage = spec.model.target(shape.target).stage
    if stage not in spec.model.invocation_stages[invocation]:
        model = spec.model.target(shape.target).model
        targets = [t for t in spec.model.targets if t.stage == inactive_stage and t.model == model]
        if not targets:
            raise Unrealizable(f"no {inactive_stage} target of model {model}")
        shape = replace(shape, target=targets[0].name)
    return replace(shape, invocation=invocation)


# ----------------------------------------------------------------------------------------------
# The realizer of any instruction, derived from its input bindings (``from:`` in its file)


def _position(ins: InstructionSpec, name: str) -> int:
    return [op.name for op in ins.operands].index(name)


def _lanes(spec: Spec, shape: Shape) -> tuple[int, ...]:
    ins = spec.instruction(shape.instruction)
    if ins.semantics.lanes is None:
        return (0,)
    lanes = ins.semantics.lanes
    slots = [shape.slots[_position(ins, name)] for name in lanes.operands]
    return tuple(sorted({lane for slot in slots if slot.file != NULL_FILE
                         for lane in lanes_in_mask(lanes.type, slot.components)}))


def _dims(p: Point, kind: str, fields: Mapping[str, str] | None = None) -> Dims:
    """The resource's shape from a point; ``fields`` maps resource fields to input names (a
    ``counter`` input gives the view its hidden counter)."""
    if kind == "raw":
        return Dims(size=_int(p, "size"))
    if kind == "structured":
        counter = _int(p, fields["counter"]) if fields and "counter" in fields else None
        return Dims(stride=_int(p, "stride"), count=_int(p, "count"), counter=counter)
    return Dims(count=_int(p, "count"), size=4 * _int(p, "count"))


def resource_inputs(ins: InstructionSpec) -> dict[str, dict[str, str]]:
    """operand -> {field: input name} for the inputs read from a resource."""
    out: dict[str, dict[str, str]] = {}
    for item in ins.semantics.inputs:
        if item.source.kind == "resource":
            out.setdefault(item.source.operand, {})[item.source.field] = item.name
    return out


def _with_reach(spec: Spec, shape: Shape, i: int, mask_slot: int, reach: int) -> Shape:
    """A legal swizzle of operand ``i`` whose masked letters reach word ``reach - 1``."""
    ins = spec.instruction(shape.instruction)
    mask = shape.slots[mask_slot].components
    current = shape.slots[i].components or "xyzw"
    for swizzle in (current, *domain.legal_swizzles(ins.operands[i])):
        if _reach_of(swizzle, mask) == reach:
            return shape.with_slot(i, replace(shape.slots[i], components=swizzle))
    raise Unrealizable(f"no legal swizzle of {ins.operands[i].name} reads {reach} words "
                       f"through mask .{mask}")


def _reach_of(swizzle: str, mask: str) -> int:
    return 1 + max(COMPONENTS.index(swizzle[COMPONENTS.index(c)]) for c in mask)


def conform(spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
    """Adjust ``shape`` to the finite-domain inputs of ``points`` (one per lane)."""
    ins = spec.instruction(shape.instruction)
    p = points[0]
    for item in ins.semantics.inputs:
        b = item.source
        if b.kind == "constant" and p[item.name] != b.value:
            raise Unrealizable(f"{item.name} is always {b.value}")
        if b.kind in ("modifier", "sat"):
            if any(other[item.name] != p[item.name] for other in points[1:]):
                raise Unrealizable("the lanes of one instance share its modifiers")
            if b.kind == "sat":
                shape = replace(shape, sat=bool(p[item.name]))
            else:
                i = _position(ins, b.operand)
                slot = shape.slots[i]
                on = bool(p[item.name])
                slot = replace(slot, neg=on) if b.field == "neg" else replace(slot, abs=on)
                shape = shape.with_slot(i, slot)
    for operand, fields in resource_inputs(ins).items():
        kind = str(p[fields["kind"]]) if "kind" in fields else shape.slots[
            _position(ins, operand)].kind
        file = str(p[fields["file"]]) if "file" in fields else shape.slots[
            _position(ins, operand)].file
        shape = _memory_slot(spec, shape, _position(ins, operand), file, kind,
                             _dims(p, kind, fields))
    for item in ins.semantics.inputs:
        b = item.source
        if b.kind == "mask":
            shape = _with_mask(spec, shape, _position(ins, b.operand), _int(p, item.name))
        elif b.kind == "invocation":
            shape = _invocation(spec, shape, str(p[item.name]))
    for item in ins.semantics.inputs:
        b = item.source
        if b.kind == "reach":
            shape = _with_reach(spec, shape, _position(ins, b.operand), _position(ins, b.mask),
                                _int(p, item.name))
        elif b.kind == "operand" and ins.operands[_position(ins, b.operand)].selection == "select":
            shape = _select_slot(spec, shape, _position(ins, b.operand), _int(p, item.name))
    return shape


def place(asm: Assembler, points: Sequence[Point]) -> None:
    """Ask for the operand values and memory words the points' inputs need."""
    ins = asm.ins
    lanes = _lanes(asm.spec, asm.shape)
    for lane, p in zip(lanes, points, strict=False):
        wanted: dict[int, list[int | None]] = {}
        for item in ins.semantics.inputs:
            b = item.source
            if b.kind not in ("operand", "lane"):
                continue
            vector = wanted.setdefault(_position(ins, b.operand), [None] * 4)
            if b.kind == "lane":
                vector[2 * lane], vector[2 * lane + 1] = split64(_int(p, item.name))
            else:
                # An iword input (a z3 witness reads it signed) is placed as its word.
                value = _int(p, item.name) & WORD_MASK if item.type == "iword" \
                    else _int(p, item.name)
                vector[lane if b.component == LANE_COMPONENT else b.component] = value
        for i, vector in wanted.items():
            asm.vector(i, vector)
        for item in ins.semantics.inputs:
            if item.source.kind == "memory":
                i = _position(ins, item.source.operand)
                dims = asm.shape.slots[i].dims
                size = dims.size if asm.shape.slots[i].kind != "structured" \
                    else dims.stride * dims.count
                byte = address_of(ins.semantics, p)
                if byte % 4 == 0 and 0 <= byte < size:
                    asm.write(i, byte // 4, _int(p, item.name))


def words(spec: Spec, name: str, p: Point) -> int:
    """The words of the resources a point's inputs describe."""
    total = 0
    for fields in resource_inputs(spec.instruction(name)).values():
        kind = str(p[fields["kind"]]) if "kind" in fields else "structured"
        dims = _dims(p, kind)
        total += max(dims.size, dims.stride * dims.count) // 4
    return total


def points_per_case(spec: Spec, shape: Shape) -> int:
    """One point per lane the shape's instruction evaluates."""
    return len(_lanes(spec, shape)) or 1


@dataclass(frozen=True)
class Realizer:
    """The realizer of one instruction (the same generic functions for every instruction)."""

    spec: Spec
    name: str

    def conform(self, spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
        return conform(spec, shape, points)

    def place(self, asm: Assembler, points: Sequence[Point]) -> None:
        place(asm, points)

    def words(self, p: Point) -> int:
        return words(self.spec, self.name, p)

    def points(self, shape: Shape) -> int:
        return points_per_case(self.spec, shape)


def realizer(spec: Spec, name: str) -> Realizer:
    spec.instruction(name)
    return Realizer(spec, name)


def realize(spec: Spec, shape: Shape, points: Sequence[Point], chooser: Chooser, *,
            flags: Sequence[str] = (), note: str = "",
            provenance: Mapping[str, object] | None = None) -> Case:
    """The case for ``points`` (one per lane) on ``shape`` adjusted to them."""
    r = realizer(spec, shape.instruction)
    shaped = r.conform(spec, shape, points)
    asm = Assembler(spec, shaped, chooser)
    r.place(asm, points)
    return asm.case(flags=flags, note=note, provenance=provenance)


def assemble(spec: Spec, shape: Shape, chooser: Chooser, *, flags: Sequence[str] = (),
             note: str = "") -> Case:
    """The case for a shape as it stands, every value chosen by ``chooser``."""
    return Assembler(spec, shape, chooser).case(flags=flags, note=note)
