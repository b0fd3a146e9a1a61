"""Realizers: semantic inputs (a point) -> an instance and a state that make the oracle see them.

This is the inverse of each ``sm5.oracle.semantics`` function, and like those it is the one
instruction-specific piece: which operand carries which input, which inputs shape the resource.
Each realizer has two parts. ``conform`` adjusts a shape to the finite-domain inputs of a point
(memory file and kind, mask width, modifiers, ``_sat``, invocation) and to its resource
dimensions; ``place`` asks the :class:`~vectors.instances.Assembler` for the operand values.
A point the realizer cannot express raises :class:`~vectors.instances.Unrealizable`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from sm5.oracle.clauses import address_of
from sm5.oracle.rules import Value
from sm5.oracle.spec import Spec
from sm5.oracle.state import split64
from sm5.vectors import domain
from sm5.vectors.instances import Assembler, Case, Chooser, Dims, Shape, Unrealizable
from sm5.vectors.shapes import legal_typed

Point = Mapping[str, Value]

#: The two doubles of a register: lane 0 in .xy, lane 1 in .zw (dmovc ``lanes``).
DOUBLE_LANES = ("xy", "zw")


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
# store_structured: dst0 (memory, mask), dstAddress (select), dstByteOffset (select), src0


def _store_conform(spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
    p = points[0]
    dims = Dims(stride=_int(p, "stride"), count=_int(p, "count"))
    shape = _memory_slot(spec, shape, 0, str(p["file"]), "structured", dims)
    shape = _with_mask(spec, shape, 0, _int(p, "components"))
    shape = _select_slot(spec, shape, 1, _int(p, "index"))
    return _select_slot(spec, shape, 2, _int(p, "offset"))


def _store_place(asm: Assembler, points: Sequence[Point]) -> None:
    p = points[0]
    asm.scalar(1, _int(p, "index"))
    asm.scalar(2, _int(p, "offset"))


def _store_words(p: Point) -> int:
    return _int(p, "stride") * _int(p, "count") // 4


# ----------------------------------------------------------------------------------------------
# imm_atomic_iadd: dst0 (register, one-letter mask), dst1 (memory), dstAddress (swizzle), src0


def _atomic_dims(p: Point) -> Dims:
    kind = p["kind"]
    if kind == "raw":
        return Dims(size=_int(p, "size"))
    if kind == "structured":
        return Dims(stride=_int(p, "stride"), count=_int(p, "count"))
    return Dims(count=_int(p, "count"), size=4 * _int(p, "count"))


def _atomic_conform(spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
    p = points[0]
    shape = _memory_slot(spec, shape, 1, str(p["file"]), str(p["kind"]), _atomic_dims(p))
    return _invocation(spec, shape, str(p["invocation"]))


def _atomic_place(asm: Assembler, points: Sequence[Point]) -> None:
    p = points[0]
    asm.vector(2, [_int(p, "addr0"), _int(p, "addr1")])
    asm.scalar(3, _int(p, "value"))
    dims = asm.shape.slots[1].dims
    size = dims.size if p["kind"] != "structured" else dims.stride * dims.count
    byte = address_of(asm.ins, p)
    if byte % 4 == 0 and 0 <= byte < size:
        asm.write(1, byte // 4, _int(p, "old"))


def _atomic_words(p: Point) -> int:
    dims = _atomic_dims(p)
    return max(dims.size, dims.stride * dims.count) // 4


# ----------------------------------------------------------------------------------------------
# dmovc: dest (mask over doubles), src0 (conditions), src1, src2 (doubles, neg/abs)


def _lanes(mask: str) -> tuple[int, ...]:
    return tuple(k for k, letters in enumerate(DOUBLE_LANES) if letters in mask)


def _dmovc_conform(spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
    p = points[0]
    for other in points[1:]:
        for name in ("neg1", "abs1", "neg2", "abs2", "sat"):
            if other[name] != p[name]:
                raise Unrealizable("lanes of one dmovc share its modifiers")
    src1, src2 = shape.slots[2], shape.slots[3]
    shape = shape.with_slot(2, replace(src1, neg=bool(p["neg1"]), abs=bool(p["abs1"])))
    shape = shape.with_slot(3, replace(src2, neg=bool(p["neg2"]), abs=bool(p["abs2"])))
    return replace(shape, sat=bool(p["sat"]))


def _dmovc_place(asm: Assembler, points: Sequence[Point]) -> None:
    lanes = _lanes(asm.shape.slots[0].components)
    for lane, p in zip(lanes, points, strict=False):
        cond: list[int | None] = [None] * 4
        cond[lane] = _int(p, "cond")
        asm.vector(1, cond)
        for i, name in ((2, "src1"), (3, "src2")):
            wanted: list[int | None] = [None] * 4
            wanted[2 * lane], wanted[2 * lane + 1] = split64(_int(p, name))
            asm.vector(i, wanted)


def _dmovc_points(shape: Shape) -> int:
    return len(_lanes(shape.slots[0].components)) or 1


# ----------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class Realizer:
    conform: Callable[[Spec, Shape, Sequence[Point]], Shape]
    place: Callable[[Assembler, Sequence[Point]], None]
    words: Callable[[Point], int] = lambda p: 0
    points: Callable[[Shape], int] = lambda shape: 1


REALIZERS: Mapping[str, Realizer] = {
    "store_structured": Realizer(_store_conform, _store_place, _store_words),
    "imm_atomic_iadd": Realizer(_atomic_conform, _atomic_place, _atomic_words),
    "dmovc": Realizer(_dmovc_conform, _dmovc_place, points=_dmovc_points),
}


def realizer(spec: Spec, name: str) -> Realizer:
    spec.instruction(name)
    try:
        return REALIZERS[name]
    except KeyError:
        raise Unrealizable(f"no realizer for {name}; add one to vectors.realize") from None


def conform(spec: Spec, shape: Shape, points: Sequence[Point]) -> Shape:
    return realizer(spec, shape.instruction).conform(spec, shape, points)


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
