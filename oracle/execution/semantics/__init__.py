"""The semantics of every specified instruction, from its data: one generic interpreter.

An instruction's file says where its inputs come from (bindings), which clauses fire (the rule
language), what each outcome does (the model's outcome vocabulary: effect and scope) and what
the instruction computes: a memory access on the shared definition (read, write, or
read-modify-write with the instruction's kernel), or a value written to a register per lane.
Nothing here is specific to one instruction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

from sm5.oracle.errors import ExecError
from sm5.oracle.execution.bindings import (
    lane_components,
    lanes_of,
    operand_named,
    resource_of,
)
from sm5.oracle.execution.indexing import has_element_index, resolve
from sm5.oracle.execution.semantics.common import Draft
from sm5.oracle.execution.semantics.lanes import evaluate_lane
from sm5.oracle.machine.forms import BUILDERS
from sm5.oracle.machine.operands import components
from sm5.oracle.machine.program import COMPONENTS, NULL_FILE, Instruction, Program, storage_name
from sm5.oracle.machine.state import (
    CONSTANT_LITERAL_PAST_END,
    CONSTANT_PAST_END,
    U32,
    Accept,
    Execution,
    F32Range,
    MachineState,
    OneOf,
    Resource,
    bits_f64,
    f32_range,
    f64_bits,
    one_of,
    split64,
)
from sm5.oracle.model.clauses import address_of, outcomes_of
from sm5.oracle.model.spec import Clause, InstructionSpec, MemoryAccess, Model, Outcome
from sm5.oracle.rulelang.float64 import f32_is_nan
from sm5.oracle.rulelang.rules import Value


def run_instruction(instruction: Instruction, program: Program, state: MachineState,
                    spec: InstructionSpec, model: Model) -> Execution:
    """The expected result of one legal instance, with the clauses that fired.

    Element indices (``x0[r1.x + 2]``) are resolved first, on ``state``
    (:func:`sm5.oracle.execution.indexing.resolve`)."""
    facts: tuple[str, ...] = ()
    if has_element_index(instruction):
        registers = state.registers
        written = instruction
        instruction = resolve(instruction, program, model,
                              lambda name, component: _component(registers, name, component))
        past = [before.relative is None for before, op in zip(written.operands,
                                                              instruction.operands, strict=True)
                if op.element is not None and op.register in state.resources
                and 4 * op.element + 4 > len(state.resources[op.register].data)]
        if past:
            facts = (CONSTANT_PAST_END, *((CONSTANT_LITERAL_PAST_END,) if any(past) else ()))
    draft = Draft.of(state)
    semantics = spec.semantics
    # Several destinations may share a register component: their writes are gathered and
    # resolved once every lane has run (one destination writes straight into the draft).
    writes: Writes | None = None
    if len(semantics.results) > 1:
        writes = Writes(semantics.write_order == "listed")
    lanes = lanes_of(spec, instruction)
    for lane in lanes:
        env, fired = evaluate_lane(spec, instruction, state, lane)
        draft.fired.extend(fired)
        _apply(spec, model, instruction, state, draft, env, fired, lane, writes)
    if writes is not None:
        writes.resolve(draft)
    execution = draft.finish()
    if not lanes:
        # Every destination is the null register: nothing is evaluated or written, and the
        # final state is exactly the initial one (the vocabulary's first exact outcome).
        execution = replace(execution, outcomes=(model.plain_outcome,))
    return replace(execution, facts=facts) if facts else execution


def _component(registers: Mapping[str, tuple[int, int, int, int]], name: str,
               component: int) -> int:
    try:
        return registers[name][component]
    except KeyError:
        raise ExecError(f"the state has no {name}") from None


class Writes:
    """The register writes of an instruction with several destinations, in the order made;
    :meth:`resolve` gives each written component its last value (``listed``) or every value
    written to it (the order of the writes left open)."""

    def __init__(self, listed: bool) -> None:
        self.listed = listed
        self.values: dict[tuple[str, int], list[Accept]] = {}

    def put(self, register: str, component: int, value: Accept) -> None:
        self.values.setdefault((register, component), []).append(value)

    def resolve(self, draft: Draft) -> None:
        for (register, component), values in self.values.items():
            draft.set_component(register, component,
                                values[-1] if self.listed else either(values))


def either(values: list[Accept]) -> Accept:
    """The acceptance set holding each of ``values`` (32-bit words written in an open order):
    the value itself when they agree, ``one_of`` for numbers, any value otherwise (no form holds
    a number and a class such as "some NaN" at once; with a float32 range among them: the range
    spanning them all)."""
    if all(v == values[0] for v in values):
        return values[0]
    numbers: set[int] = set()
    for value in values:
        if isinstance(value, int):
            numbers.add(value)
        elif isinstance(value, OneOf):
            numbers.update(value.values)
        elif isinstance(value, F32Range):
            numbers.update((value.lo, value.hi))
        else:
            return None
    if any(isinstance(v, F32Range) for v in values):
        return None if any(f32_is_nan(n) for n in numbers) else f32_range(numbers)
    return one_of(numbers)


def _apply(spec: InstructionSpec, model: Model, instruction: Instruction, state: MachineState,
           draft: Draft, env: dict[str, Value], fired: tuple[Clause, ...], lane: int,
           writes: Writes | None = None) -> None:
    """Each outcome of the fired clauses on the draft; ``env`` is the lane's `full_env`."""
    outcomes = model.outcomes_by_name
    names = outcomes_of(fired)
    semantics = spec.semantics
    memory = semantics.memory
    put = draft.set_component if writes is None else writes.put
    for name in names:
        outcome = outcomes[name]
        if writes_exact_result(outcome):
            if memory is not None:
                _access(spec, model, instruction, state, draft, env, memory)
            if semantics.results:
                register_result(spec, instruction, put, env, fired, lane)
            if semantics.counter is not None:
                counter = int(env[semantics.counter.value])
                if not 0 <= counter <= U32:
                    raise ExecError(f"{spec.name}: the counter value {counter} is not 32-bit")
                draft.set_counter(
                    operand_named(spec, instruction, semantics.counter.operand).register, counter)
        elif outcome.effect == "undefined" and outcome.scope == "resource" and memory:
            draft.undefine_resource(operand_named(spec, instruction, memory.operand).register)
        elif outcome.effect == "undefined" and outcome.scope == "shared_memory":
            draft.undefine_files(model.shared_memory_files)
        elif outcome.scope == "destination" and outcome.effect == "default" and memory:
            op = operand_named(spec, instruction, memory.operand)
            _read_window(spec, instruction, draft, op.components,
                         _element(model, resource_of(state, op), None))
        elif outcome.scope == "destination" and outcome.effect in ("undefined", "zero"):
            value: Accept = None if outcome.effect == "undefined" else 0
            for register, component in _destination(spec, instruction, lane):
                put(register, component, value)
        elif outcome.effect == "constrained":
            register_result(spec, instruction, put, env, fired, lane)


def _destination(spec: InstructionSpec, instruction: Instruction, lane: int
                 ) -> list[tuple[str, int]]:
    """The register components the instruction writes in this lane (every destination's)."""
    semantics = spec.semantics
    if semantics.memory is not None:
        names: tuple[str, ...] = (() if semantics.memory.returns is None
                                  else (semantics.memory.returns,))
    else:
        names = tuple(r.operand for r in semantics.results)
    return [at for name in names for at in _targets(spec, instruction, lane, name)]


def _targets(spec: InstructionSpec, instruction: Instruction, lane: int, name: str
             ) -> list[tuple[str, int]]:
    """The register components destination ``name`` receives in this lane: none for the null
    register or a lane its mask lacks."""
    op = operand_named(spec, instruction, name)
    if op.file == NULL_FILE:
        return []
    lanes = spec.semantics.lanes
    letters = op.components if lanes is None else lane_components(lanes.type, op.components,
                                                                  lane)
    return [(storage_name(op), COMPONENTS.index(c)) for c in letters]


def _access(spec: InstructionSpec, model: Model, instruction: Instruction,
            state: MachineState, draft: Draft, env: dict[str, Value],
            memory: MemoryAccess) -> None:
    """The in-bounds access: read, write or read-modify-write at the address."""
    op = operand_named(spec, instruction, memory.operand)
    res = resource_of(state, op)
    first = address_of(spec.semantics, env) // 4
    if memory.mode == "write":
        assert memory.value is not None
        values = components(operand_named(spec, instruction, memory.value), state)
        count = (model.format_layouts[res.format].components if res.kind == "typed"
                 else int(env["components"]))
        for k in range(count):
            draft.write_word(op.register, first + k, values[k])
    elif memory.mode in ("rmw", "rmw_return"):
        assert memory.kernel is not None
        new = memory.kernel.evaluate(env)
        if not isinstance(new, int) or isinstance(new, bool) or not 0 <= new <= U32:
            raise ExecError(f"{spec.name}: the kernel gave {new!r}, not a 32-bit word")
        draft.write_word(op.register, first, new)
        if memory.returns is not None:
            for register, component in _destination(spec, instruction, 0):
                draft.set_component(register, component, int(env["old"]))
    elif res.kind == "typed":
        _read_window(spec, instruction, draft, op.components, _element(model, res, first))
    else:
        window = [res.data[first + k] if 0 <= first + k < len(res.data) else 0
                  for k in range(4)]
        _read_window(spec, instruction, draft, op.components, window)


def _element(model: Model, res: Resource, first: int | None) -> list[int]:
    """The four components a typed view returns for the element at word ``first``: its words,
    then the format's defaults; ``None`` is an out-of-range element (0 in the format's words)."""
    layout = model.format_layouts[res.format]
    words = [0 if first is None else res.data[first + k] for k in range(layout.components)]
    return words + list(layout.defaults[layout.components:])


def _read_window(spec: InstructionSpec, instruction: Instruction, draft: Draft, swizzle: str,
                 window: list[int]) -> None:
    """Each written component receives the window word its memory operand's swizzle picks."""
    letters = swizzle or "xyzw"
    for register, component in _destination(spec, instruction, 0):
        word = COMPONENTS.index(letters[component] if component < len(letters)
                                else letters[-1])
        draft.set_component(register, component, window[word])


def writes_exact_result(outcome: Outcome) -> bool:
    """The outcome writes the instruction's exact result (effect ``exact``, scope
    ``instruction`` in the model's vocabulary)."""
    return outcome.effect == "exact" and outcome.scope == "instruction"


def register_result(spec: InstructionSpec, instruction: Instruction,
                    put: Callable[[str, int, Accept], None], env: dict[str, Value],
                    fired: tuple[Clause, ...], lane: int) -> None:
    """Write each result's lane value (a double after ``_sat``), or the acceptance form a fired
    clause names, to its destination; an instruction without lanes writes its 32-bit value to
    every masked component."""
    semantics = spec.semantics
    chosen = next((c for c in fired if c.accept), None)
    accept = chosen.accept if chosen is not None else None
    for result in semantics.results:
        targets = _targets(spec, instruction, lane, result.operand)
        if targets:
            others = [] if chosen is None else [_pattern(spec, rule.evaluate(env))
                                                for rule in chosen.values_for(result.value)]
            _write_result(spec, instruction, put, int(env[result.value]), targets, accept,
                          others)


def _write_result(spec: InstructionSpec, instruction: Instruction,
                  put: Callable[[str, int, Accept], None], value: int,
                  targets: list[tuple[str, int]], accept: str | None, others: list[int]) -> None:
    lanes = spec.semantics.lanes
    if lanes is None or lanes.type != "f64":
        # 32-bit lanes (a component, or a double compared or converted): one component each;
        # no lanes: one 32-bit value (or its acceptance set), received by every masked component.
        if lanes is not None and len(targets) != 1:
            raise ExecError(f"{spec.name}: a 32-bit lane writes one component")
        if not 0 <= value <= U32 or any(v > U32 for v in others):
            raise ExecError(f"{spec.name}: the result {value!r} is not a 32-bit word")
        word: Accept = value
        if accept is not None:
            build = BUILDERS[accept].word
            if build is None:
                raise ExecError(f"{spec.name}: acceptance form {accept} is not for a 32-bit "
                                "lane")
            word = build(value, others)
        for register, component in targets:
            put(register, component, word)
        return
    if instruction.sat:
        value = saturate_f64(value)
        others = [saturate_f64(v) for v in others]
    lo_word, hi_word = split64(value)
    lo_accept: Accept = lo_word
    hi_accept: Accept = hi_word
    if accept is not None:
        pair = BUILDERS[accept].pair
        if pair is None:
            raise ExecError(f"{spec.name}: acceptance form {accept} is not for a double lane")
        lo_accept, hi_accept = pair(value, others)
    (lo_at, hi_at) = targets
    put(lo_at[0], lo_at[1], lo_accept)
    put(hi_at[0], hi_at[1], hi_accept)


def _pattern(spec: InstructionSpec, value: Value) -> int:
    """An ``accept_values`` value: a bit pattern (a 32- or 64-bit word)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise ExecError(f"{spec.name}: an accept_values value {value!r} is not a bit pattern")
    return value


def saturate_f64(bits: int) -> int:
    """``_sat`` of a double: min(1, max(0, v)) with the max/min NaN rules (NaN gives +0)."""
    value = bits_f64(bits)
    if math.isnan(value):
        return 0
    return f64_bits(min(1.0, max(0.0, value)))
