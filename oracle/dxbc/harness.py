"""Harness programs: one vector as a self-contained, single-thread cs_5_0 compute shader.

The harness loads the machine state from an extra raw UAV (the *state buffer*), runs the
program's instructions unchanged, stores the state back and returns::

    dcl_globalFlags refactoringAllowed [| the program's own flags]
    <the program's UAV, SRV and TGSM declarations>
    dcl_uav_raw u<S>                      S: the first UAV slot the vector does not use
    dcl_input vThreadIDInGroupFlattened   only when the program reads it
    dcl_temps N                           the state's and program's registers + one scratch
                                          (+ one more when there is g#)
    dcl_thread_group 1, 1, 1
    <raw load> rK.xyzw, l(16 * k'), u<S>.xyzw           every register (k': its slot)
    <g# words: state buffer -> scratch -> g#, in a loop>
    <the main program's instructions>                  each return (untested or tested) of
                                                       the main program stores the state back
    <raw store> u<S>.xyzw, l(16 * k'), rK.xyzw        every register
    <g# words: g# -> scratch -> state buffer, in a loop>
    <exit>
    <the program's subroutines, unchanged>

A g# copy is a ``loop`` over an index register (``breakc_nz`` leaves it), up to four words a
step, so the harness has the same size whatever the size of g#: a 32 KB g# compiles as fast
as a 16-byte one. The instructions of every move are named by ``harness:`` in
``spec/auxiliary.yaml``.

The UAVs and SRV buffers (``t#``) under test are bound directly with the state's contents
(``Harness.bindings``); the program's ``dcl_resource_*`` declarations are copied like the UAVs'.
An SRV is read-only: its contents are read back after the run like a UAV's, so a run that
changed them shows in the final state.

The harness is always cs_5_0, whatever the vector's target: the specified semantics of the
instructions do not depend on the stage or shader model (those only decide legality, which the
oracle settles before a vector is exported; rejected vectors have no harness). What a compute
shader cannot express raises :class:`NotExpressible`: a helper or discarded invocation (pixel
shader states), a register file or instruction the compute stage lacks (discard), a vector
that leaves no free UAV slot.

A register the program uses but the state omits starts as zero and is stored back like the rest.
A single thread has flattened thread id 0, as the oracle assumes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sm5.oracle.errors import NotExpressible, StateError
from sm5.oracle.machine.program import (
    COMPONENTS,
    Declaration,
    Instruction,
    Line,
    Operand,
    Program,
    Selection,
    register_file,
)
from sm5.oracle.machine.state import MachineState, Resource
from sm5.oracle.model.control import NONZERO_FLAG, RETURN, SUBROUTINE
from sm5.oracle.model.encoding import Encoding, load_default_encoding
from sm5.oracle.model.spec import Spec, load_default

HARNESS_TARGET = "cs_5_0"
HARNESS_STAGE = "compute"
HARNESS_GLOBAL_FLAG = "refactoringAllowed"
ACTIVE = "active"
THREAD_INDEX_FILE = "vThreadIDInGroupFlattened"
#: The declaration of the compute inputs the program reads (one per input, written by the
#: harness itself).
INPUT_DECLARATION = "dcl_input"
WORD_BYTES = 4
REGISTER_WORDS = 4
# Declarations the harness writes itself (with its own values) instead of copying the program's.
OWN_DECLARATIONS = ("dcl_globalFlags", "dcl_input", "dcl_temps", "dcl_thread_group")
_NUMBERED = re.compile(r"^([a-z]+)(\d+)$")


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


#: Register files whose resources the harness binds directly: UAVs, SRV buffers and constant
#: buffers (a binding of kind ``constant``).
VIEW_FILES = ("u", "t", "cb")


@dataclass(frozen=True)
class ViewBinding:
    """A UAV (``u#``) or SRV buffer (``t#``) under test, bound directly: its view and its initial
    contents. ``view`` is the title of the register file in the model ("unordered access view",
    "shader resource view").

    ``count`` counts 32-bit elements for raw and typed views, structures for structured views.
    ``counter`` is the initial value of the view's hidden counter (a structured UAV created with
    a counter: D3D's UAV initial count), ``None`` for a view without one.
    """

    register: str
    kind: str
    format: str
    stride: int
    count: int
    data: tuple[int, ...]
    view: str = ""
    counter: int | None = None


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
    """Every operand of the program, the registers its element indices read included."""
    for line in program.lines:
        if isinstance(line, Instruction):
            for op in line.operands:
                current: Operand | None = op
                while current is not None:
                    yield current
                    current = current.relative
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
    for ins in program.instructions:
        control = spec.control.instructions.get(ins.name)
        if control is not None and HARNESS_STAGE not in control.stages:
            raise NotExpressible(f"{ins.name} does not exist in the compute stage")


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
        for name in sorted((n for n in state.resources if register_file(n) == file),
                           key=_number):
            res = state.resources[name]
            fmt = encoding.view_formats.get(res.kind) or res.format
            count = res.count if res.kind == "structured" else len(res.data)
            out.append(ViewBinding(name, res.kind, fmt, res.stride, count, res.data,
                                   titles.get(file, ""), res.counter))
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
                  spec: Spec | None = None, encoding: Encoding | None = None,
                  marker: int | None = None) -> Harness:
    """The cs_5_0 harness of ``program`` on ``state`` (see the module docstring). With
    ``marker``, every store of the state back ends by writing that value to the word after the
    state (``layout.words``): a runner that finds it there knows the dispatch ran to an end."""
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
    return Harness(_harness_program(program, layout, slot, scratch, spec, marker), slot,
                   tuple(initial), layout, bindings)


#: Harness programs built, by (program, layout, state slot, scratch register): the vectors of
#: one program and state shape share one (its values travel in the buffers), the same object.
_built: dict[tuple[Program, StateLayout, int, int, int | None], tuple[Spec, Program]] = {}
_MAX_BUILT = 4096


def _harness_program(program: Program, layout: StateLayout, slot: int, scratch: int,
                     spec: Spec, marker: int | None) -> Program:
    key = (program, layout, slot, scratch, marker)
    found = _built.get(key)
    if found is not None and found[0] is spec:
        return found[1]
    built = Program(tuple(_program_lines(program, layout, slot, scratch, spec, marker)),
                    HARNESS_TARGET)
    if len(_built) >= _MAX_BUILT:
        _built.clear()
    _built[key] = (spec, built)
    return built


def _program_lines(program: Program, layout: StateLayout, slot: int, scratch: int,
                   spec: Spec, marker: int | None) -> list[Line]:
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
    inputs = spec.declarations.declarations[INPUT_DECLARATION].registers
    files = spec.model.files_by_name
    read = {op.file for op in _operands(program)}
    for name in inputs:
        if name in read:
            mask = COMPONENTS[:files[name].components] if files[name].components > 1 else ""
            lines.append(Declaration(INPUT_DECLARATION, register=Operand(
                name, selection="mask" if mask else "none", components=mask)))
    # One scratch register, and one more for the words a g# copy loop moves.
    lines.append(Declaration("dcl_temps", numbers=(scratch + (2 if layout.tgsm else 1),)))
    lines.append(Declaration("dcl_thread_group", numbers=(1, 1, 1)))

    whole = Operand("u", slot, selection="swizzle", components=COMPONENTS)
    for reg in layout.registers:
        lines.append(Instruction(spec.harness["raw_load"], (
            _r(_number(reg.name), "mask", COMPONENTS), _lit(WORD_BYTES * reg.offset, "select"),
            whole)))
    for t in layout.tgsm:
        lines.extend(_tgsm_copy(t, slot, scratch, spec, to_tgsm=True))
    store_back: list[Line] = []
    for reg in layout.registers:
        store_back.append(Instruction(spec.harness["raw_store"], (
            Operand("u", slot, selection="mask", components=COMPONENTS),
            _lit(WORD_BYTES * reg.offset, "select"),
            _r(_number(reg.name), "swizzle", COMPONENTS))))
    for t in layout.tgsm:
        store_back.extend(_tgsm_copy(t, slot, scratch, spec, to_tgsm=False))
    if marker is not None:
        store_back.append(Instruction(spec.harness["raw_store"], (
            Operand("u", slot, selection="mask", components="x"),
            _lit(WORD_BYTES * layout.words, "select"), _lit(marker, "swizzle"))))
    exit_ = Instruction(spec.harness["exit"], ())
    instructions = program.instructions
    first_label = next((k for k, ins in enumerate(instructions)
                        if spec.control.effect_of(ins.name) == SUBROUTINE), len(instructions))
    for ins in instructions[:first_label]:
        if spec.control.effect_of(ins.name) != RETURN:
            lines.append(ins)
        elif not ins.operands:  # untested: the state is stored before the invocation ends
            lines.extend([*store_back, exit_])
        else:  # tested: stored inside a branch on the same test, where it returns
            lines.extend([Instruction(spec.harness["branch"], ins.operands, flags=ins.flags),
                          *store_back, exit_, Instruction(spec.harness["branch_end"], ())])
    lines.extend([*store_back, exit_])
    lines.extend(instructions[first_label:])
    return lines


def _chunk_words(words: int) -> int:
    """Words moved per copy step: 4, 2 or 1, whichever divides ``words`` (no tail to copy)."""
    return next(c for c in (REGISTER_WORDS, 2, 1) if words % c == 0)


def _sel(index: int, component: str) -> Operand:
    return _r(index, "select", component)


def _tgsm_copy(t: TgsmSlot, slot: int, scratch: int, spec: Spec, *, to_tgsm: bool
               ) -> list[Instruction]:
    """Copy g# ``t`` between the state buffer and g# with a loop, so the harness does not grow
    with g#. ``scratch`` holds the counters (x: g# byte or struct index, y: byte in the struct,
    z: byte in the state buffer, w: the loop test); ``scratch + 1`` the words moved.

    A raw g# is one loop over its bytes; a structured g# a loop over its structures around a
    loop over the bytes of one.
    """
    move = spec.harness
    g, data = _number(t.name), scratch + 1
    per_struct = t.words if t.kind == "raw" else t.stride // WORD_BYTES
    chunk = _chunk_words(per_struct)
    mask = COMPONENTS[:chunk]
    step = WORD_BYTES * chunk
    state_at = _sel(scratch, "z")
    if to_tgsm:
        body = [Instruction(move["raw_load"], (_r(data, "mask", mask), state_at,
                                               Operand("u", slot, selection="swizzle",
                                                       components=COMPONENTS)))]
        dst = Operand("g", g, selection="mask", components=mask)
        src = _r(data, "swizzle", COMPONENTS)
        if t.kind == "raw":
            body.append(Instruction(move["raw_store"], (dst, _sel(scratch, "x"), src)))
        else:
            body.append(Instruction(move["structured_store"], (
                dst, _sel(scratch, "x"), _sel(scratch, "y"), src)))
    else:
        whole_g = Operand("g", g, selection="swizzle", components=COMPONENTS)
        if t.kind == "raw":
            load = Instruction(move["raw_load"], (_r(data, "mask", mask), _sel(scratch, "x"),
                                                  whole_g))
        else:
            load = Instruction(move["structured_load"], (
                _r(data, "mask", mask), _sel(scratch, "x"), _sel(scratch, "y"), whole_g))
        body = [load, Instruction(move["raw_store"], (
            Operand("u", slot, selection="mask", components=mask), state_at,
            _r(data, "swizzle", COMPONENTS)))]

    def counter(component: str, value: int) -> Instruction:
        return Instruction(move["move"], (_r(scratch, "mask", component),
                                          _lit(value, "swizzle")))

    def bump(component: str, by: int) -> Instruction:
        return Instruction(move["step"], (_r(scratch, "mask", component),
                                         _r(scratch, "swizzle", component * 4),
                                         _lit(by, "swizzle")))

    def loop(component: str, end: int, inner: list[Instruction]) -> list[Instruction]:
        return [Instruction(move["loop"], ()),
                Instruction(move["at_least"], (_r(scratch, "mask", "w"),
                                               _r(scratch, "swizzle", component * 4),
                                               _lit(end, "swizzle"))),
                Instruction(move["break_nonzero"], (_sel(scratch, "w"),),
                            flags=(NONZERO_FLAG,)),
                *inner,
                Instruction(move["loop_end"], ())]

    state_byte = WORD_BYTES * t.offset
    if t.kind == "raw":
        # x walks g#'s bytes; z = x + the g#'s first byte in the state buffer.
        return [counter("x", 0), counter("z", state_byte),
                *loop("x", WORD_BYTES * t.words, [*body, bump("x", step), bump("z", step)])]
    inner = loop("y", t.stride, [*body, bump("y", step), bump("z", step)])
    return [counter("x", 0), counter("z", state_byte),
            *loop("x", t.count, [counter("y", 0), *inner, bump("x", 1)])]


# ----------------------------------------------------------------------------------------------
# Reading the results back


def decode_state(harness: Harness, state_words: tuple[int, ...] | list[int],
                 uav_contents: Mapping[str, tuple[int, ...] | list[int]],
                 counters: Mapping[str, int] | None = None) -> MachineState:
    """The final machine state from the state buffer and the UAVs under test after a run.

    ``uav_contents`` maps each bound view (``u0``, ``t0``) to its words; the state buffer's own
    slot may be present and is ignored. ``counters`` maps each view bound with a hidden counter
    to the counter's final value (read back after the run, e.g. with CopyStructureCount); a
    view whose counter is missing from it is an error.
    """
    counters = counters or {}
    layout = harness.layout
    if len(state_words) != layout.words:
        raise StateError(f"the state buffer holds {len(state_words)} words, the layout "
                         f"{layout.words}", where=harness.state_register)
    words = _words(state_words, harness.state_register)
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
        counter = None
        if binding.counter is not None:
            if name not in counters:
                raise StateError("no final value for the view's hidden counter", where=name)
            counter = _word(counters[name], f"{name}.counter")
        resources[name] = Resource(binding.kind, _words(data, name),
                                   binding.stride,
                                   binding.count if binding.kind != "raw" else 0,
                                   binding.format if binding.kind == "typed" else "", counter)
    return MachineState(registers, resources, ACTIVE)


def _words(values: Iterable[int], where: str) -> tuple[int, ...]:
    """The words as a tuple, each checked (one pass; a location is built only for a bad one)."""
    words = tuple(values)
    if all(type(w) is int and 0 <= w <= 0xFFFFFFFF for w in words):
        return words
    return tuple(_word(w, f"{where}[{i}]") for i, w in enumerate(words))


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
        "bindings": {b.register: _binding_json(b) for b in harness.bindings},
    }


def _binding_json(b: ViewBinding) -> dict[str, Any]:
    """One view to bind; ``counter`` (only for a view with a hidden counter) is its initial
    count, which a runner passes as the UAV's initial count and reads back after the run."""
    out: dict[str, Any] = {"kind": b.kind, "format": b.format, "stride": b.stride,
                           "count": b.count, "data": list(b.data), "view": b.view}
    if b.counter is not None:
        out["counter"] = b.counter
    return out
