"""Instruction instances (shapes) and their assembly into a program plus a machine state.

A :class:`Shape` is everything the program text says except operand values: target, runtime,
per operand the register file, number, components, modifiers and (for u#/g#) the declared kind
and dimensions, plus extra declarations and flags. :class:`Assembler` turns a shape and wanted
operand values into program lines (the oracle's AST, printed by ``sm5.oracle.asm``) and a state in
the vector JSON form. Values nobody asked for come from a :class:`Chooser`, so the same code
serves the seeded generator and the hypothesis strategies.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from sm5.oracle.asm import format_line
from sm5.oracle.machine.program import (
    COMPONENTS,
    IMMEDIATE_BITS,
    NULL_FILE,
    Declaration,
    Instruction,
    Line,
    Operand,
    Program,
)
from sm5.oracle.machine.state import MachineState, Resource, join64
from sm5.oracle.model.spec import InstructionSpec, Spec
from sm5.vectors import domain

T = TypeVar("T")

U32 = 0xFFFFFFFF
#: Resources larger than this many words are filled with 16-bit values to keep vectors small.
SMALL_RESOURCE_WORDS = 64


class Unrealizable(Exception):
    """A point or shape has no program and state (e.g. a g# of a kind the model lacks)."""


class Chooser(Protocol):
    """A source of choices: seeded ``random.Random`` or a hypothesis draw."""

    def pick(self, options: Sequence[T]) -> T: ...

    def integer(self, lo: int, hi: int) -> int: ...

    def words(self, n: int, bits: int) -> list[int]: ...


@dataclass
class RandomChooser:
    rng: random.Random

    def pick(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def words(self, n: int, bits: int) -> list[int]:
        return [self.rng.getrandbits(bits) for _ in range(n)]


class ZeroChooser:
    """Always the first option and zero: for legality checks, where values do not matter."""

    def pick(self, options: Sequence[T]) -> T:
        return options[0]

    def integer(self, lo: int, hi: int) -> int:
        return lo

    def words(self, n: int, bits: int) -> list[int]:
        return [0] * n


@dataclass(frozen=True)
class Dims:
    """Shape of a resource: structure stride and count, raw byte size (typed: count)."""

    stride: int = 0
    count: int = 0
    size: int = 0
    counter: int | None = None  # the view's hidden counter (FS 5.3.10); None: the view has none


DEFAULT_DIMS = Dims(stride=16, count=4, size=16)


@dataclass(frozen=True)
class Slot:
    """One operand of an instance (or an extra declared resource)."""

    file: str
    index: int | None = None
    components: str = ""
    neg: bool = False
    abs: bool = False
    kind: str = ""
    return_type: str = ""
    format: str = ""
    dims: Dims = DEFAULT_DIMS
    #: Suffix flags of the resource's declaration (``dcl_uav_raw_glc``), in the spec's order.
    declaration_flags: tuple[str, ...] = ()

    @property
    def register(self) -> str:
        return self.file if self.index is None else f"{self.file}{self.index}"


@dataclass(frozen=True)
class Shape:
    instruction: str
    target: str
    runtime: str
    slots: tuple[Slot, ...]
    sat: bool = False
    features: tuple[str, ...] = ()
    extras: tuple[Slot, ...] = ()
    undeclared: bool = False
    temps: int | None = None
    invocation: str = "active"
    #: Suffix flags of the instruction (``_uglobal``, ``_t``), in the spec's order.
    flags: tuple[str, ...] = ()
    #: Temp registers the state holds although no operand names them (``r0``): what an
    #: instruction must leave alone.
    bystanders: tuple[str, ...] = ()

    def with_slot(self, i: int, slot: Slot) -> Shape:
        slots = list(self.slots)
        slots[i] = slot
        return replace(self, slots=tuple(slots))


@dataclass(frozen=True)
class Case:
    """A program, a context and a state: what a vector is before the oracle speaks."""

    instruction: str
    program: tuple[str, ...]
    target: str
    runtime: str
    state: Mapping[str, Any]
    flags: tuple[str, ...] = ()
    note: str = ""
    provenance: Mapping[str, Any] | None = None
    parsed: Program | None = field(default=None, compare=False, repr=False)
    machine: MachineState | None = field(default=None, compare=False, repr=False)


# ----------------------------------------------------------------------------------------------
# Program text


def _declaration_spec(spec: Spec, *, register: str | None = None, number: str | None = None,
                      global_flag: str | None = None) -> str | None:
    for decl in spec.declarations.declarations.values():
        if register is not None and register in decl.registers and decl.declares is None:
            return decl.name
        if number is not None and number in decl.numbers and decl.register is None:
            return decl.name
        if global_flag is not None and global_flag in decl.global_flags:
            return decl.name
    return None


def _dims_numbers(spec: Spec, decl_name: str, dims: Dims) -> tuple[int, ...]:
    """The numbers a resource declaration writes, by their names in declarations.yaml."""
    by_name = {"stride": dims.stride, "count": dims.count, "bytes": dims.size}
    return tuple(by_name[n] for n in spec.declarations.declarations[decl_name].numbers)


def resource_declaration(spec: Spec, slot: Slot) -> Declaration:
    try:
        name = domain.declaration_of(spec, slot.file, slot.kind)
    except KeyError:
        raise Unrealizable(f"no {slot.kind} {slot.file}# in the model") from None
    decl = spec.declarations.declarations[name]
    rtype = (slot.return_type,) * 4 if decl.return_type else ()
    return Declaration(name, Operand(slot.file, slot.index), _dims_numbers(spec, name, slot.dims),
                       slot.declaration_flags, rtype)


def declarations(spec: Spec, shape: Shape) -> list[Declaration]:
    """Global flags, resources (operands then extras), index-less inputs, temps."""
    out: list[Declaration] = []
    flags = tuple(str(spec.model.features[f].global_flag) for f in shape.features)
    if flags:
        name = _declaration_spec(spec, global_flag=flags[0])
        assert name is not None
        out.append(Declaration(name, flags=flags))
    if not shape.undeclared:
        for slot in shape.slots:
            if slot.kind and domain.is_resource_file(spec, slot.file):
                out.append(resource_declaration(spec, slot))
    for slot in shape.extras:
        out.append(resource_declaration(spec, slot))
    seen: set[str] = set()
    for slot in shape.slots:
        if not domain.is_indexed(slot.file) and slot.file not in seen:
            name = _declaration_spec(spec, register=slot.file)
            if name is not None:
                seen.add(slot.file)
                out.append(Declaration(name, Operand(slot.file)))
    if shape.temps is not None:
        name = _declaration_spec(spec, number="temps")
        assert name is not None
        out.append(Declaration(name, numbers=(shape.temps,)))
    return out


def operand_of(op_selection: str, slot: Slot, values: Sequence[int]) -> Operand:
    if slot.file == NULL_FILE:  # the null register holds no components: nothing to select
        return Operand(slot.file, None, (), "none", "", slot.neg, slot.abs)
    if slot.file in IMMEDIATE_BITS:
        return Operand(slot.file, None, tuple(values), op_selection, "")  # type: ignore[arg-type]
    return Operand(slot.file, slot.index, (), op_selection,  # type: ignore[arg-type]
                   slot.components if op_selection != "none" else "", slot.neg, slot.abs)


_DECLARATION_TEXT: dict[tuple[int, Declaration], tuple[Spec, str]] = {}


def _format_declaration(spec: Spec, decl: Declaration) -> str:
    """Declarations repeat across cases: print each once per spec."""
    key = (id(spec), decl)
    hit = _DECLARATION_TEXT.get(key)
    if hit is None or hit[0] is not spec:
        if len(_DECLARATION_TEXT) > 1 << 14:
            _DECLARATION_TEXT.clear()
        hit = (spec, format_line(decl, spec=spec))
        _DECLARATION_TEXT[key] = hit
    return hit[1]


# ----------------------------------------------------------------------------------------------
# Assembly


class Assembler:
    """Collects wanted operand values for one shape, then builds the program and the state."""

    def __init__(self, spec: Spec, shape: Shape, chooser: Chooser) -> None:
        self.spec = spec
        self.shape = shape
        self.ins: InstructionSpec = spec.instruction(shape.instruction)
        self.chooser = chooser
        self.registers: dict[str, list[int | None]] = {}
        self.literals: dict[int, list[int | None]] = {}
        self.writes: dict[int, dict[int, int]] = {}
        for slot in shape.slots:
            if slot.file == "r":
                self.registers.setdefault(slot.register, [None, None, None, None])
        for name in shape.bystanders:
            self.registers.setdefault(name, [None, None, None, None])

    def _letters(self, i: int) -> str:
        slot = self.shape.slots[i]
        selection = self.ins.operands[i].selection
        if selection == "select":
            return slot.components * 4
        if selection == "swizzle":
            return slot.components
        return COMPONENTS

    def vector(self, i: int, wanted: Sequence[int | None]) -> None:
        """Operand ``i`` should read ``wanted[k]`` at post-swizzle position k (None: any).

        A register component already claimed keeps its first value (swizzles such as ``.xxxx``
        cannot give two positions different values; the oracle reports what is really read).
        """
        slot = self.shape.slots[i]
        if slot.file in IMMEDIATE_BITS:
            values = self.literals.setdefault(i, [None, None, None, None])
            for k, v in enumerate(wanted):
                if v is not None and values[k] is None:
                    values[k] = v
            return
        if slot.file != "r":
            return
        reg = self.registers[slot.register]
        letters = self._letters(i)
        for k, v in enumerate(wanted):
            if v is None:
                continue
            c = COMPONENTS.index(letters[k])
            if reg[c] is None:
                reg[c] = v

    def scalar(self, i: int, value: int) -> None:
        self.vector(i, [value])

    def write(self, i: int, word: int, value: int) -> None:
        """Memory word ``word`` of operand ``i``'s resource starts as ``value``."""
        self.writes.setdefault(i, {})[word] = value

    def _literal_values(self, i: int) -> tuple[int, ...]:
        selection = self.ins.operands[i].selection
        wanted = self.literals.get(i, [None, None, None, None])
        filled = [self.chooser.integer(0, U32) if v is None else v for v in wanted]
        if IMMEDIATE_BITS[self.shape.slots[i].file] == 64:
            # d(a, b): the words read at .xy and .zw, paired into two doubles (low word first).
            return (join64(filled[0], filled[1]), join64(filled[2], filled[3]))
        if selection in ("select", "none", "mask"):
            return (filled[0],)
        return tuple(filled)

    def _resource(self, slot: Slot, writes: Mapping[int, int]) -> dict[str, Any]:
        dims = slot.dims
        if slot.kind == "structured":
            total = dims.stride * dims.count
            if total % 4:
                raise Unrealizable(f"stride {dims.stride} x count {dims.count} is not whole words")
            n = total // 4
        elif slot.kind == "raw":
            n = (dims.size + 3) // 4
        elif slot.kind == "typed":
            n = dims.count
        else:
            raise Unrealizable(f"{slot.register} has no resource kind")
        bits = 32 if n <= SMALL_RESOURCE_WORDS else 16
        data = self.chooser.words(n, bits)
        for word, value in writes.items():
            if 0 <= word < n:
                data[word] = value
        out: dict[str, Any] = {"kind": slot.kind, "data": data}
        if slot.kind == "structured":
            out["stride"], out["count"] = dims.stride, dims.count
        if slot.kind == "typed":
            out["format"] = slot.format
        if dims.counter is not None:
            out["counter"] = dims.counter
        return out

    def program(self) -> Program:
        """The program AST (literal values chosen now if nobody asked for them)."""
        shape = self.shape
        operands = []
        for i, (op_spec, slot) in enumerate(zip(self.ins.operands, shape.slots, strict=True)):
            values = self._literal_values(i) if slot.file in IMMEDIATE_BITS else ()
            operands.append(operand_of(op_spec.selection, slot, values))
        lines: list[Line] = list(declarations(self.spec, shape))
        lines.append(Instruction(shape.instruction, tuple(operands), shape.sat,
                                 flags=shape.flags))
        return Program(tuple(lines))

    def build(self) -> tuple[Program, tuple[str, ...], dict[str, Any]]:
        """The program (AST and canonical text lines) and the state JSON."""
        shape = self.shape
        program = self.program()
        text = tuple(_format_declaration(self.spec, x) if isinstance(x, Declaration)
                     else format_line(x, spec=self.spec) for x in program.lines)
        state: dict[str, Any] = {}
        for name, reg in self.registers.items():
            state[name] = [self.chooser.integer(0, U32) if v is None else v for v in reg]
        for i, slot in enumerate(shape.slots):
            if slot.kind and domain.is_resource_file(self.spec, slot.file) and \
                    slot.register not in state:
                state[slot.register] = self._resource(slot, self.writes.get(i, {}))
        for slot in shape.extras:
            if slot.register not in state:
                state[slot.register] = self._resource(slot, {})
        if shape.invocation != domain.invocation_states(self.spec)[0]:
            state["invocation"] = shape.invocation
        return program, text, state

    def machine(self, state: Mapping[str, Any]) -> MachineState | None:
        """The oracle's form of ``state``, built directly (the JSON parser would only check
        what the assembler already guarantees); None where a resource is inconsistent."""
        registers = {k: (v[0], v[1], v[2], v[3]) for k, v in state.items()
                     if isinstance(v, list)}
        resources = {}
        for key, doc in state.items():
            if isinstance(doc, dict):
                kind, data = doc["kind"], tuple(doc["data"])
                stride, count = doc.get("stride", 0), doc.get("count", 0)
                if kind == "structured" and stride * count != 4 * len(data):
                    return None
                if kind == "typed":
                    count = len(data)
                resources[key] = Resource(kind, data, stride, count, doc.get("format", ""),
                                          doc.get("counter"))
        return MachineState(registers, resources, str(state.get("invocation", "active")))

    def case(self, *, flags: Sequence[str] = (), note: str = "",
             provenance: Mapping[str, Any] | None = None) -> Case:
        program, text, state = self.build()
        return Case(self.shape.instruction, text, self.shape.target, self.shape.runtime, state,
                    tuple(flags), note, provenance, program, self.machine(state))
