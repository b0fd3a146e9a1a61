"""Gathering an instruction's semantic inputs from an instance and a state, by their bindings.

Each input of an instruction file says where it comes from (``from:``, see
:class:`sm5.oracle.model.spec.Binding`); this module reads it. The vector generator inverts the same
declarations (``sm5.vectors.realize``), so neither side is written per instruction.
"""

from __future__ import annotations

from collections.abc import Mapping

from sm5.oracle.errors import ExecError
from sm5.oracle.machine.operands import components
from sm5.oracle.machine.program import COMPONENTS, NULL_FILE, Instruction, Operand
from sm5.oracle.machine.state import MachineState, Resource, join64
from sm5.oracle.model.clauses import address_of
from sm5.oracle.model.spec import LANE_COMPONENT, Binding, InstructionSpec, Semantics
from sm5.oracle.rulelang.rules import Value

#: The components of each double lane: lane 0 is .xy, lane 1 is .zw (FS 3.1.4).
F64_LANES = ("xy", "zw")


def operand_named(spec: InstructionSpec, instruction: Instruction, name: str) -> Operand:
    """The instance's operand in the position the spec gives ``name``."""
    try:
        return instruction.operands[spec.operand_positions[name]]
    except (KeyError, IndexError):
        raise ExecError(f"{spec.name} has no operand {name!r}") from None


def resource_of(state: MachineState, op: Operand) -> Resource:
    try:
        return state.resources[op.register]
    except KeyError:
        raise ExecError(f"the state has no {op.register}") from None


def lanes_of(spec: InstructionSpec, instruction: Instruction) -> tuple[int, ...]:
    """The lanes an instruction evaluates: the union of its lane destinations' lanes (a
    ``null`` destination has none), or (0,) for an instruction without lanes."""
    lanes = spec.semantics.lanes
    if lanes is None:
        return (0,)
    masks = [op.components for op in (operand_named(spec, instruction, name)
                                      for name in lanes.operands) if op.file != NULL_FILE]
    if len(masks) == 1:
        return lanes_in_mask(lanes.type, masks[0])
    return tuple(sorted({lane for mask in masks for lane in lanes_in_mask(lanes.type, mask)}))


def lanes_in_mask(kind: str, mask: str) -> tuple[int, ...]:
    """The lanes a write mask holds: its components by position (``component``), its doubles
    (``f64``) or its components by rank (``u32``, the k-th result for the k-th double)."""
    if kind == "component":
        return tuple(COMPONENTS.index(c) for c in mask)
    if kind == "u32":
        return tuple(range(len(mask)))
    return tuple(k for k, letters in enumerate(F64_LANES) if letters in mask)


def lane_components(kind: str, mask: str, lane: int) -> str:
    """The components of ``mask`` a lane writes: its own (``component``), its double's pair
    (``f64``), the mask's ``lane``-th component (``u32``); "" where the mask lacks them."""
    if kind == "component":
        letter = COMPONENTS[lane]
        return letter if letter in mask else ""
    if kind == "u32":
        return mask[lane] if lane < len(mask) else ""
    return F64_LANES[lane] if F64_LANES[lane] in mask else ""


def reach(memory: Operand, mask: str) -> int:
    """How many consecutive words a memory operand's swizzle reads for the masked components."""
    letters = memory.components or "xyzw"
    picked = [letters[COMPONENTS.index(c)] if COMPONENTS.index(c) < len(letters) else letters[-1]
              for c in mask]
    return 1 + max(COMPONENTS.index(c) for c in picked)


def gather(spec: InstructionSpec, instruction: Instruction, state: MachineState,
           lane: int = 0) -> dict[str, Value]:
    """Every semantic input of one evaluation (one lane), from its binding."""
    semantics = spec.semantics
    inputs: dict[str, Value] = {}
    deferred = []
    read: dict[str, tuple[int, int, int, int]] = {}  # each source operand's components, once
    for item in semantics.inputs:
        if item.source.kind == "memory":
            deferred.append(item)
            continue
        inputs[item.name] = _read(item.source, spec, instruction, state, lane, read)
    for item in deferred:
        inputs[item.name] = memory_word(semantics, inputs, resource_of(
            state, operand_named(spec, instruction, item.source.operand)))
    return inputs


def memory_word(semantics: Semantics, inputs: Mapping[str, Value], res: Resource) -> int:
    """The word at the access's address, or 0 where the address names no word of ``res``."""
    byte = address_of(semantics, inputs)
    if byte % 4 == 0 and 0 <= byte < res.size:
        return res.data[byte // 4]
    return 0


def _read(binding: Binding, spec: InstructionSpec, instruction: Instruction,
          state: MachineState, lane: int, read: dict[str, tuple[int, int, int, int]]) -> Value:
    kind = binding.kind
    if kind == "constant":
        return binding.value
    if kind == "sat":
        return instruction.sat
    if kind == "invocation":
        return state.invocation
    op = operand_named(spec, instruction, binding.operand)
    if kind in ("operand", "lane"):
        values = read.get(binding.operand)
        if values is None:
            values = read[binding.operand] = components(op, state)
        if kind == "lane":
            return join64(values[2 * lane], values[2 * lane + 1])
        return values[lane if binding.component == LANE_COMPONENT else binding.component]
    if kind == "modifier":
        return op.neg if binding.field == "neg" else op.abs
    if kind == "mask":
        return len(op.components)
    if kind == "reach":
        return reach(op, operand_named(spec, instruction, binding.mask).components)
    if kind == "resource":
        if binding.field == "file":
            return op.file
        res = resource_of(state, op)
        value: Value = getattr(res, binding.field)
        return value
    raise ExecError(f"{spec.name}: unknown binding {kind!r}")
