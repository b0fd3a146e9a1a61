"""Harness programs: one vector as a self-contained, single-thread cs_5_0 compute shader.

The harness loads the machine state from an extra raw UAV (the *state buffer*), runs the
program's instructions unchanged, stores the state back and returns::

    dcl_globalFlags refactoringAllowed [| the program's own flags]
    <the program's UAV, SRV and TGSM declarations>
    dcl_uav_raw u<S>                      S: the first UAV slot the vector does not use
    dcl_input vThreadIDInGroupFlattened   only when the program reads it
    dcl_temps N                           the state's and program's registers + one scratch
    dcl_thread_group 1, 1, 1
    <raw load> rK.xyzw, l(16 * k'), u<S>.xyzw       every register (k': its slot)
    <g# words: state buffer -> scratch -> g#>
    <the program's instructions>
    <raw store> u<S>.xyzw, l(16 * k'), rK.xyzw      every register
    <g# words: g# -> scratch -> state buffer>
    ret

The raw load and store are the instructions spec/auxiliary.yaml names under ``harness``. The
UAVs and SRV buffers (``t#``) under test are bound directly with the state's contents
(``Harness.bindings``); the program's ``dcl_resource_*`` declarations are copied like the UAVs'.
An SRV is read-only: its contents are read back after the run like a UAV's, so a run that
changed them shows in the final state.

The harness is always cs_5_0, whatever the vector's target: the specified semantics of the
instructions do not depend on the stage or shader model (those only decide legality, which the
oracle settles before a vector is exported; rejected vectors have no harness). What a compute
shader cannot express raises :class:`NotExpressible`: a helper or discarded invocation (pixel
shader states), a register file the compute stage lacks, a program that returns early, a vector
that leaves no free UAV slot.

A register the program uses but the state omits starts as zero and is stored back like the rest.
A single thread has flattened thread id 0, as the oracle assumes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sm5.oracle.encoding_spec import Encoding, load_default_encoding
from sm5.oracle.errors import NotExpressible, StateError
from sm5.oracle.program import (
    COMPONENTS,
    Declaration,
    Instruction,
    Line,
    Operand,
    Program,
    Selection,
)
from sm5.oracle.spec import Spec, load_default
from sm5.oracle.state import MachineState, Resource

HARNESS_TARGET = "cs_5_0"
HARNESS_STAGE = "compute"
HARNESS_GLOBAL_FLAG = "refactoringAllowed"
ACTIVE = "active"
THREAD_INDEX_FILE = "vThreadIDInGroupFlattened"
WORD_BYTES = 4
REGISTER_WORDS = 4
# Declarations the harness writes itself (with its own values) instead of copying the program's.
OWN_DECLARATIONS = ("dcl_globalFlags", "dcl_input", "dcl_temps", "dcl_thread_group")
_NUMBERED = re.compile(r"^([a-z])(\d+)$")


@dataclass(frozen=True)
class RegisterSlot:
    """Temp register ``name`` lives at words ``offset .. offset + 3`` of the state buffer."""

    name: str
    offset: int


@dataclass(frozen=True)
class TgsmSlot:
    """All ``words`` words of g# ``name`` live from word ``offset`` of the state buffer."""

    name: str
    offset: int
    words: int
    kind: str
    stride: int = 0
    count: int = 0


@dataclass(frozen=True)
class StateLayout:
    registers: tuple[RegisterSlot, ...]
    tgsm: tuple[TgsmSlot, ...]
    words: int


#: Register files whose resources the harness binds directly as views (UAVs, SRV buffers).
VIEW_FILES = ("u", "t")


@dataclass(frozen=True)
class ViewBinding:
    """A UAV (``u#``) or SRV buffer (``t#``) under test, bound directly: its view and its initial
    contents. ``view`` is the title of the register file in the model ("unordered access view",
    "shader resource view").

    ``count`` counts 32-bit elements for raw and typed views, structures for structured views.
    """

    register: str
    kind: str
    format: str
    stride: int
    count: int
    data: tuple[int, ...]
    view: str = ""


@dataclass(frozen=True)
class Harness:
    program: Program
    state_slot: int
    state_words: tuple[int, ...]
    layout: StateLayout
    bindings: tuple[ViewBinding, ...]

    @property
    def state_register(self) -> str:
        return f"u{self.state_slot}"


# ----------------------------------------------------------------------------------------------
# Building


def _number(name: str) -> int:
    match = _NUMBERED.match(name)
    return int(match.group(2)) if match else -1


def _operands(program: Program) -> Iterable[Operand]:
    for line in program.lines:
        if isinstance(line, Instruction):
            yield from line.operands
        elif line.register is not None:
            yield line.register


def _r(index: int, selection: Selection, components: str) -> Operand:
    return Operand("r", index, selection=selection, components=components)


def _lit(value: int, selection: Selection) -> Operand:
    return Operand("l", values=(value,), selection=selection)


def _check_expressible(program: Program, state: MachineState, spec: Spec) -> None:
    if state.invocation != ACTIVE:
        raise NotExpressible(f"the invocation is {state.invocation!r}; a compute harness runs "
                             "only active invocations")
    files = {f.name: f for f in spec.model.register_files}
    for op in _operands(program):
        file = files.get(op.file)
        if file is not None and HARNESS_STAGE not in file.stages:
            raise NotExpressible(f"register file {op.file!r} does not exist in the compute stage")
    exit_name = spec.harness["exit"]
    if any(ins.name == exit_name for ins in program.instructions):
        raise NotExpressible(f"the program contains {exit_name!r}: it would return before the "
                             "harness stores the state back")


def _state_slot(program: Program, state: MachineState, runtime: str, spec: Spec) -> int:
    used = {op.index for op in _operands(program) if op.file == "u" and op.index is not None}
    used |= {_number(name) for name in state.resources if name.startswith("u")}
    slot = next(i for i in range(len(used) + 1) if i not in used)
    limit = spec.model.runtime(runtime).uav_slots
    if slot >= limit:
        raise NotExpressible(f"no free UAV slot for the state buffer: runtime {runtime} has "
                             f"{limit} and the vector uses u0..u{limit - 1}")
    return slot


def _bindings(program: Program, state: MachineState, encoding: Encoding, spec: Spec
              ) -> tuple[ViewBinding, ...]:
    titles = {f.name: f.title for f in spec.model.register_files}
    out: list[ViewBinding] = []
    for file in VIEW_FILES:
        for name in sorted((n for n in state.resources if n[:1] == file), key=_number):
            res = state.resources[name]
            fmt = encoding.view_formats.get(res.kind) or res.format
            count = res.count if res.kind == "structured" else len(res.data)
            out.append(ViewBinding(name, res.kind, fmt, res.stride, count, res.data,
                                   titles.get(file, "")))
    for decl in program.declarations:
        reg = decl.register
        if reg is not None and reg.file in VIEW_FILES and reg.register not in state.resources:
            raise NotExpressible(f"{reg.register} is declared but the state holds no contents "
                                 "for it")
    return tuple(out)


def _tgsm_slots(program: Program, state: MachineState, first: int, spec: Spec
                ) -> tuple[TgsmSlot, ...]:
    slots: list[TgsmSlot] = []
    offset = first
    for name in sorted((n for n in state.resources if n.startswith("g")), key=_number):
        res = state.resources[name]
        decl = program.declaration_of(name)
        dspec = spec.declarations.declarations.get(decl.name) if decl else None
        if decl is None or dspec is None:
            raise NotExpressible(f"the state holds {name} but the program does not declare it")
        kind = dspec.declares or ""
        numbers = dict(zip(dspec.numbers, decl.numbers, strict=False))
        if kind == "raw":
            size, stride, count = numbers.get("bytes", 0), 0, 0
        else:
            stride, count = numbers.get("stride", 0), numbers.get("count", 0)
            size = stride * count
        if res.kind != kind or size % WORD_BYTES or size != res.size or (
                kind == "structured" and (stride % WORD_BYTES or stride == 0)):
            raise NotExpressible(f"{name}: the state's {res.kind} contents of {res.size} bytes "
                                 f"do not fit the declaration {decl.name}")
        slots.append(TgsmSlot(name, offset, len(res.data), kind, stride, count))
        offset += len(res.data)
    return tuple(slots)


def build_harness(program: Program, state: MachineState, *, runtime: str = "11.0",
                  spec: Spec | None = None, encoding: Encoding | None = None) -> Harness:
    """The cs_5_0 harness of ``program`` on ``state`` (see the module docstring)."""
    spec = spec or load_default()
    encoding = encoding or load_default_encoding()
    _check_expressible(program, state, spec)
    slot = _state_slot(program, state, runtime, spec)
    bindings = _bindings(program, state, encoding, spec)
    numbers = {op.index for op in _operands(program) if op.file == "r" and op.index is not None}
    numbers |= {_number(name) for name in state.registers}
    registers = tuple(RegisterSlot(f"r{n}", REGISTER_WORDS * i)
                      for i, n in enumerate(sorted(numbers)))
    tgsm = _tgsm_slots(program, state, REGISTER_WORDS * len(registers), spec)
    words = REGISTER_WORDS * len(registers) + sum(t.words for t in tgsm)
    layout = StateLayout(registers, tgsm, words)
    initial: list[int] = []
    for reg in registers:
        initial.extend(state.registers.get(reg.name, (0, 0, 0, 0)))
    for t in tgsm:
        initial.extend(state.resources[t.name].data)
    scratch = max(numbers, default=-1) + 1
    lines = _program_lines(program, layout, slot, scratch, spec)
    return Harness(Program(tuple(lines), HARNESS_TARGET), slot, tuple(initial), layout, bindings)


def _program_lines(program: Program, layout: StateLayout, slot: int, scratch: int,
                   spec: Spec) -> list[Line]:
    state_uav = Operand("u", slot)
    known_flags = spec.declarations.declarations["dcl_globalFlags"].global_flags
    wanted = {HARNESS_GLOBAL_FLAG}
    for decl in program.declarations:
        if decl.name == "dcl_globalFlags":
            wanted.update(decl.flags)
    flags = tuple(sorted(wanted, key=lambda f: (known_flags.index(f) if f in known_flags
                                                else len(known_flags), f)))
    lines: list[Line] = [Declaration("dcl_globalFlags", flags=flags)]
    lines.extend(d for d in program.declarations if d.name not in OWN_DECLARATIONS)
    lines.append(Declaration("dcl_uav_raw", register=state_uav))
    if any(op.file == THREAD_INDEX_FILE for op in _operands(program)):
        lines.append(Declaration("dcl_input", register=Operand(THREAD_INDEX_FILE)))
    lines.append(Declaration("dcl_temps", numbers=(scratch + 1,)))
    lines.append(Declaration("dcl_thread_group", numbers=(1, 1, 1)))

    whole = Operand("u", slot, selection="swizzle", components=COMPONENTS)
    for reg in layout.registers:
        lines.append(Instruction(spec.harness["raw_load"], (
            _r(_number(reg.name), "mask", COMPONENTS), _lit(WORD_BYTES * reg.offset, "select"),
            whole)))
    for t in layout.tgsm:
        lines.extend(_tgsm_copy(t, slot, scratch, spec, to_tgsm=True))
    lines.extend(program.instructions)
    for reg in layout.registers:
        lines.append(Instruction(spec.harness["raw_store"], (Operand("u", slot, selection="mask",
                                                       components=COMPONENTS),
                                               _lit(WORD_BYTES * reg.offset, "select"),
                                               _r(_number(reg.name), "swizzle", COMPONENTS))))
    for t in layout.tgsm:
        lines.extend(_tgsm_copy(t, slot, scratch, spec, to_tgsm=False))
    lines.append(Instruction(spec.harness["exit"], ()))
    return lines


def _tgsm_pieces(t: TgsmSlot) -> Iterable[tuple[int, int, int, int]]:
    """(word in the state buffer, struct index, byte offset in g#/struct, words) per copy."""
    if t.kind == "raw":
        for word in range(0, t.words, REGISTER_WORDS):
            yield (t.offset + word, 0, WORD_BYTES * word,
                   min(REGISTER_WORDS, t.words - word))
        return
    per_struct = t.stride // WORD_BYTES
    for index in range(t.count):
        for word in range(0, per_struct, REGISTER_WORDS):
            yield (t.offset + index * per_struct + word, index, WORD_BYTES * word,
                   min(REGISTER_WORDS, per_struct - word))


def _tgsm_copy(t: TgsmSlot, slot: int, scratch: int, spec: Spec, *, to_tgsm: bool
               ) -> list[Instruction]:
    g = _number(t.name)
    move = spec.harness
    whole_u = Operand("u", slot, selection="swizzle", components=COMPONENTS)
    whole_g = Operand("g", g, selection="swizzle", components=COMPONENTS)
    out: list[Instruction] = []
    for state_word, index, byte, count in _tgsm_pieces(t):
        mask = COMPONENTS[:count]
        state_at = _lit(WORD_BYTES * state_word, "select")
        if to_tgsm:
            out.append(Instruction(move["raw_load"], (_r(scratch, "mask", mask), state_at,
                                                      whole_u)))
            dst = Operand("g", g, selection="mask", components=mask)
            src = _r(scratch, "swizzle", COMPONENTS)
            if t.kind == "raw":
                out.append(Instruction(move["raw_store"], (dst, _lit(byte, "select"), src)))
            else:
                out.append(Instruction(move["structured_store"], (
                    dst, _lit(index, "select"), _lit(byte, "select"), src)))
        else:
            dst_r = _r(scratch, "mask", mask)
            if t.kind == "raw":
                out.append(Instruction(move["raw_load"], (dst_r, _lit(byte, "select"), whole_g)))
            else:
                out.append(Instruction(move["structured_load"], (
                    dst_r, _lit(index, "select"), _lit(byte, "select"), whole_g)))
            out.append(Instruction(move["raw_store"], (Operand("u", slot, selection="mask",
                                                         components=mask),
                                                 state_at, _r(scratch, "swizzle", COMPONENTS))))
    return out


# ----------------------------------------------------------------------------------------------
# Reading the results back


def decode_state(harness: Harness, state_words: tuple[int, ...] | list[int],
                 uav_contents: Mapping[str, tuple[int, ...] | list[int]]) -> MachineState:
    """The final machine state from the state buffer and the UAVs under test after a run.

    ``uav_contents`` maps each bound view (``u0``, ``t0``) to its words; the state buffer's own
    slot may be present and is ignored.
    """
    layout = harness.layout
    if len(state_words) != layout.words:
        raise StateError(f"the state buffer holds {len(state_words)} words, the layout "
                         f"{layout.words}", where=harness.state_register)
    words = tuple(_word(w, f"{harness.state_register}[{i}]") for i, w in enumerate(state_words))
    registers: dict[str, tuple[int, int, int, int]] = {}
    for reg in layout.registers:
        x, y, z, w = words[reg.offset:reg.offset + REGISTER_WORDS]
        registers[reg.name] = (x, y, z, w)
    resources: dict[str, Resource] = {}
    for t in layout.tgsm:
        resources[t.name] = Resource(t.kind, words[t.offset:t.offset + t.words], t.stride,
                                     t.count)
    bound = {b.register: b for b in harness.bindings}
    unknown = sorted(set(uav_contents) - set(bound) - {harness.state_register})
    if unknown:
        raise StateError(f"contents for unbound view(s) {', '.join(unknown)}")
    for name, binding in bound.items():
        if name not in uav_contents:
            raise StateError(f"no contents for {name}", where=name)
        data = uav_contents[name]
        if len(data) != len(binding.data):
            raise StateError(f"{len(data)} words, the binding holds {len(binding.data)}",
                             where=name)
        resources[name] = Resource(binding.kind,
                                   tuple(_word(w, f"{name}[{i}]") for i, w in enumerate(data)),
                                   binding.stride,
                                   binding.count if binding.kind != "raw" else 0,
                                   binding.format if binding.kind == "typed" else "")
    return MachineState(registers, resources, ACTIVE)


def _word(value: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise StateError(f"expected a u32 word, got {value!r}", where=where)
    return value


# ----------------------------------------------------------------------------------------------
# JSON form (the DXBC export's index)


def harness_to_json(harness: Harness) -> dict[str, Any]:
    """Everything a runner needs besides the DXBC: the state buffer and the bindings."""
    layout = harness.layout
    return {
        "state_buffer": {
            "register": harness.state_register,
            "words": list(harness.state_words),
        },
        "layout": {
            "words": layout.words,
            "registers": {r.name: r.offset for r in layout.registers},
            "tgsm": {t.name: {"offset": t.offset, "words": t.words, "kind": t.kind,
                              "stride": t.stride, "count": t.count} for t in layout.tgsm},
        },
        "bindings": {b.register: {"kind": b.kind, "format": b.format, "stride": b.stride,
                                  "count": b.count, "data": list(b.data), "view": b.view}
                     for b in harness.bindings},
    }
