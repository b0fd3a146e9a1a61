"""The program interpreter: the one executor behind every path (``sm5 exec``, the oracle as an
implementation, vector generation, the report).

A program's instructions run in order on an *abstract* machine state: every register component,
memory word and hidden counter is an acceptance set (:data:`sm5.oracle.machine.state.Accept`):
exact, one of a few values, a class (a NaN, a value with free bits) or anything. Each step is the
instruction's semantics from its data (:func:`sm5.oracle.execution.semantics.run_instruction`) run
on concrete states, chosen by what the step reads:

* every word it reads is exact: one run. A one-instruction program on a vector's (exact) state is
  always this case, so it is executed exactly as the single-instruction executor did;
* the words it reads hold a few alternatives (``one_of``, a double ``one_of``, a value with at most
  :data:`MAX_FREE_BITS` free bits): one run per combination, at most :data:`FANOUT`, the results
  joined word by word (equal values stay exact, different values become ``one_of``);
* a word it only moves is tracked, whatever its acceptance set: the value a ``write`` access
  stores (read by no rule), or a register component a register instruction's rules pass
  through without inspecting it (a move without modifiers: checked by evaluating the lanes with
  an opaque value in its place, which raises on any comparison, arithmetic or conversion); the
  words written from it receive its acceptance set;
* otherwise (a class or anything read by a rule, or too many combinations) the step is *widened*:
  everything it may write becomes anything (its destination components, the resources its
  outcomes can reach, its counter).

Words a step does not write are carried from the state before it: an undefined or constrained
value is never replaced by a guess. The final state is the acceptance set of every word.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NoReturn

from sm5.oracle.errors import ExecError
from sm5.oracle.execution.bindings import lanes_of
from sm5.oracle.execution.exact_steps import (
    frozen,
    register_plan,
    run_register_step,
    thawed,
)
from sm5.oracle.execution.indexing import (
    IndexUnknown,
    ProgramUndefined,
    declared_files,
    element_count,
    has_element_index,
    register_files,
    resolve,
)
from sm5.oracle.execution.semantics import run_instruction
from sm5.oracle.execution.semantics.lanes import evaluate_lane
from sm5.oracle.machine.operands import read_order
from sm5.oracle.machine.program import (
    COMPONENTS,
    Instruction,
    Operand,
    Program,
    element_name,
    register_file,
    storage_name,
)
from sm5.oracle.machine.state import (
    PAIR_FORMS,
    U32,
    Accept,
    Execution,
    ExpectedResource,
    ExpectedState,
    F32Range,
    F64OneOf,
    MachineState,
    Masked,
    OneOf,
    Resource,
    Step,
    exact_resource,
    f32_from_order,
    f32_range,
    f32_range_members,
    join64,
    split64,
)
from sm5.oracle.model.spec import InstructionSpec, Model, Spec
from sm5.oracle.rulelang.float64 import f32_is_nan

#: The most concrete runs one step may take over the alternatives it reads.
FANOUT = 16
#: A masked value with at most this many free bits is enumerated (2**4 members).
MAX_FREE_BITS = 4
#: The memory modes that read the accessed resource's words.
READING_MODES = frozenset({"read", "rmw", "rmw_return"})
#: The memory modes that write it.
WRITING_MODES = frozenset({"write", "rmw", "rmw_return"})
#: Two placeholder families for words a step does not read (or only moves): a word that comes
#: out of both runs as its own placeholder was not written; one that comes out as another
#: word's placeholders is a copy of that word.
_PLACEHOLDER_A = 0x5EED0000
_PLACEHOLDER_B = 0xA11C0000

#: A word of the abstract state: ("r", register, component), ("m", resource, word index) or
#: ("c", resource, 0) for a hidden counter.
Word = tuple[str, str, int]


@dataclass(frozen=True)
class StepPlan:
    """What a step reads and may write, from its instruction's data and operands alone."""

    reads: frozenset[Word]  # register components read by a rule
    moved: frozenset[Word]  # register components a write access only stores
    read_resources: frozenset[str]  # resources whose words (all of them) a rule may read
    read_counters: frozenset[str]
    written_components: Mapping[str, tuple[int, ...]]  # destination registers -> components
    written_resources: frozenset[str]  # resources whose words it may write
    widened_resources: frozenset[str]  # resources it may leave undefined as a whole
    widens_shared: bool  # it may leave every shared-memory resource undefined
    written_counters: frozenset[str]


def plan_step(instruction: Instruction, spec: InstructionSpec, model: Model) -> StepPlan:
    """The read and write sets of one instruction instance (conservative: a superset); its
    element indices are resolved (:func:`sm5.oracle.execution.indexing.resolve`)."""
    temps = register_files(model)
    semantics = spec.semantics
    memory = semantics.memory
    bound = {item.source.operand for item in semantics.inputs if item.source.operand}
    reads: set[Word] = set()
    moved: set[Word] = set()
    written: dict[str, tuple[int, ...]] = {}
    read_res: set[str] = set()
    written_res: set[str] = set()
    counters_read: set[str] = set()
    for op_spec, op in zip(spec.operands, instruction.operands, strict=False):
        if op.is_immediate or op.index is None:
            continue
        if op_spec.role == "dst":
            if op.file in temps:
                letters = op.components or COMPONENTS
                written[storage_name(op)] = tuple(COMPONENTS.index(c) for c in letters)
            continue
        if op_spec.role == "memory":
            if memory is not None and memory.operand == op_spec.name:
                if memory.mode in READING_MODES:
                    read_res.add(op.register)
                if memory.mode in WRITING_MODES:
                    written_res.add(op.register)
            continue
        if op.file not in temps:
            continue
        only_moved = (memory is not None and memory.mode == "write"
                      and memory.value == op_spec.name and op_spec.name not in bound)
        for component in set(read_order(op)):
            (moved if only_moved else reads).add(("r", storage_name(op), component))
    counter_written: set[str] = set()
    if semantics.counter is not None:
        position = spec.operand_positions.get(semantics.counter.operand)
        if position is not None and position < len(instruction.operands):
            register = instruction.operands[position].register
            counters_read.add(register)
            counter_written.add(register)
    if memory is not None and memory.returns is not None:
        position = spec.operand_positions.get(memory.returns)
        if position is not None and position < len(instruction.operands):
            op = instruction.operands[position]
            if op.file in temps:
                written[storage_name(op)] = tuple(COMPONENTS.index(c)
                                                  for c in op.components or COMPONENTS)
    scopes = {model.outcomes_by_name[name].scope
              for clause in spec.clauses for name in clause.outcomes}
    widened = set(written_res | read_res) if "resource" in scopes else set()
    return StepPlan(frozenset(reads), frozenset(moved), frozenset(read_res),
                    frozenset(counters_read), written, frozenset(written_res),
                    frozenset(widened), "shared_memory" in scopes, frozenset(counter_written))


# ----------------------------------------------------------------------------------------------
# The abstract state


def initial_state(state: MachineState) -> ExpectedState:
    """The acceptance sets that hold exactly ``state``."""
    return ExpectedState({k: tuple(v) for k, v in state.registers.items()},  # type: ignore[misc]
                         {k: exact_resource(r) for k, r in state.resources.items()},
                         state.invocation)


def _word(state: ExpectedState, word: Word) -> Accept:
    kind, register, index = word
    if kind == "r":
        return state.registers[register][index]
    res = state.resources[register]
    if res is None:
        return None
    return res.counter if kind == "c" else res.words[index]


def members(accept: Accept) -> tuple[int, ...] | None:
    """The 32-bit values of an enumerable acceptance set, or None (a class, or anything)."""
    if isinstance(accept, int):
        return (accept,)
    if isinstance(accept, OneOf):
        return accept.values
    if isinstance(accept, F32Range):
        keys = f32_range_members(accept)
        return tuple(sorted(map(f32_from_order, keys))) if len(keys) <= FANOUT else None
    if isinstance(accept, Masked):
        free = [bit for bit in range(32) if not accept.mask >> bit & 1]
        if len(free) > MAX_FREE_BITS:
            return None
        base = accept.value & accept.mask
        return tuple(sorted({base | sum(1 << free[k] for k in range(len(free)) if n >> k & 1)
                             for n in range(1 << len(free))}))
    return None


@dataclass(frozen=True)
class _Choice:
    """One enumerable variable the step reads: a word, or a register pair holding one of a few
    doubles (both halves chosen together)."""

    words: tuple[Word, ...]
    values: tuple[tuple[int, ...], ...]


def _choices(state: ExpectedState, plan: StepPlan, shapes: Mapping[str, Resource]
             ) -> tuple[list[_Choice], list[Word]] | None:
    """The non-exact variables the step reads, and the register components it reads that
    cannot be enumerated (candidates to pass through); None where a memory word or counter it
    reads cannot be enumerated."""
    out: list[_Choice] = []
    opaque: list[Word] = []
    seen: set[Word] = set()
    read_words: list[Word] = sorted(plan.reads)
    for name in sorted(plan.read_resources):
        res = state.resources[name]
        if res is None:
            return None
        read_words.extend(("m", name, k) for k, w in enumerate(res.words) if not isinstance(w, int))
    for name in sorted(plan.read_counters):
        res = state.resources.get(name)
        if res is None and name in shapes:
            return None
        if res is not None and res.has_counter:
            read_words.append(("c", name, 0))
    for word in read_words:
        if word in seen:
            continue
        accept = _word(state, word)
        if isinstance(accept, int):
            continue
        if isinstance(accept, F64OneOf) and word[0] == "r":
            lo = word[2] & ~1
            pair = (("r", word[1], lo), ("r", word[1], lo + 1))
            seen.update(pair)
            out.append(_Choice(pair, tuple(split64(v) for v in accept.values)))
            continue
        values = members(accept)
        seen.add(word)
        if values is None:
            if word[0] != "r":
                return None
            opaque.append(word)
            continue
        out.append(_Choice((word,), tuple((v,) for v in values)))
    return out, opaque


class Inspected(Exception):
    """An opaque value was compared, computed with or converted."""


class Opaque:
    """A register component whose value the interpreter cannot enumerate, put in its place
    while a step's lanes are evaluated: every operation that would look at its value raises
    :class:`Inspected`, so a lane that completes has only passed it along."""

    __slots__ = ()

    def _inspected(self, *args: object) -> NoReturn:
        raise Inspected

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _inspected
    __bool__ = __int__ = __index__ = __float__ = __hash__ = _inspected
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _inspected
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _inspected
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _inspected
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _inspected
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __invert__ = _inspected
    __format__ = __round__ = __trunc__ = __floor__ = __ceil__ = _inspected


def _passes_through(instruction: Instruction, state: ExpectedState,
                    shapes: Mapping[str, Resource], spec: InstructionSpec,
                    choices: Sequence[_Choice], opaque: Sequence[Word]) -> bool:
    """Whether a register instruction's lanes never look at the ``opaque`` words, for every
    combination of the few-valued words it reads: then each result is an exact value or one of
    those words passed along, and the runs with placeholders tell which."""
    semantics = spec.semantics
    if semantics.memory is not None or semantics.counter is not None:
        return False
    for picked in itertools.product(*(c.values for c in choices)):
        assigned: dict[Word, int] = {}
        for choice, value in zip(choices, picked, strict=True):
            assigned.update(zip(choice.words, value, strict=True))
        concrete = _concrete(state, shapes, assigned)
        registers = dict(concrete.registers)
        for _, name, component in opaque:
            values = list(registers[name])
            values[component] = Opaque()  # type: ignore[call-overload]
            registers[name] = (values[0], values[1], values[2], values[3])
        with_opaque = MachineState(registers, concrete.resources, concrete.invocation)
        try:
            for lane in lanes_of(spec, instruction):
                env, fired = evaluate_lane(spec, instruction, with_opaque, lane)
                for clause in fired:
                    for rule in clause.accept_values:
                        rule.evaluate(env)
                for result in semantics.results:
                    written = env[result.value]
                    if not isinstance(written, Opaque) and type(written) is not int:
                        return False
        except Exception:  # Inspected, or any error the opaque value caused
            return False
    return True


def _tracked(state: ExpectedState, plan: StepPlan) -> list[Word]:
    """Non-exact words the step may write but does not read, and the non-exact words it only
    moves: placeholders tell which come out unchanged, and which are copies of which."""
    words: list[Word] = [w for w in sorted(plan.moved) if not isinstance(_word(state, w), int)]
    for name in sorted(plan.written_resources - plan.read_resources):
        res = state.resources[name]
        if res is not None:
            words.extend(("m", name, k) for k, w in enumerate(res.words)
                         if not isinstance(w, int))
    return words


def _concrete(state: ExpectedState, shapes: Mapping[str, Resource],
              assigned: Mapping[Word, int]) -> MachineState:
    """A concrete state: exact words as they are, assigned words as chosen, any other 0."""
    registers = {}
    for name, accepts in state.registers.items():
        values = [a if isinstance(a, int) else assigned.get(("r", name, k), 0)
                  for k, a in enumerate(accepts)]
        registers[name] = (values[0], values[1], values[2], values[3])
    resources = {}
    for name, shape in shapes.items():
        res = state.resources[name]
        if res is None:
            data = tuple(assigned.get(("m", name, k), 0) for k in range(len(shape.data)))
            counter = None if shape.counter is None else assigned.get(("c", name, 0), 0)
        else:
            data = tuple(w if isinstance(w, int) else assigned.get(("m", name, k), 0)
                         for k, w in enumerate(res.words))
            counter = (None if not res.has_counter else res.counter
                       if isinstance(res.counter, int) else assigned.get(("c", name, 0), 0))
        resources[name] = Resource(shape.kind, data, shape.stride, shape.count, shape.format,
                                   counter)
    return MachineState(registers, resources, state.invocation)


# ----------------------------------------------------------------------------------------------
# Joining runs


def join(values: Sequence[Accept]) -> Accept:
    """The acceptance set of a word over several runs: one value stays, several 32-bit values
    become ``one_of`` (at most :data:`FANOUT`; beyond that, where a float32 range is among them:
    the range spanning them all, which holds each), anything else that differs is anything."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return first
    found: set[int] = set()
    ranged = wide = False
    for value in values:
        if isinstance(value, int):
            found.add(value)
        elif isinstance(value, OneOf):
            found.update(value.values)
        elif isinstance(value, F32Range):
            listed = members(value)
            ranged, wide = True, wide or listed is None
            found.update(listed if listed is not None else (value.lo, value.hi))
        else:
            return None
    if len(found) <= FANOUT and not wide:
        return OneOf(tuple(sorted(found)))
    if not ranged or any(f32_is_nan(v) for v in found):
        return None
    return f32_range(found)


def _join_register(runs: Sequence[tuple[Accept, ...]], written: Sequence[int]) -> list[Accept]:
    """The components of a register over several runs. A written pair (x, y) or (z, w) whose
    halves are exact in every run holds one of the runs' 64-bit values (a double stays one
    double, not a mix of halves); other components are joined one by one."""
    out = [join([r[k] for r in runs]) for k in range(4)]
    for lo in (0, 2):
        a, b = out[lo], out[lo + 1]
        pairs = {(r[lo], r[lo + 1]) for r in runs}
        if (len(pairs) > 1 and lo in written and lo + 1 in written
                and all(isinstance(x, int) and isinstance(y, int) for x, y in pairs)):
            if len(pairs) <= FANOUT:
                both = F64OneOf(tuple(sorted(join64(x, y) for x, y in pairs)))  # type: ignore[arg-type]
                out[lo] = out[lo + 1] = both
            continue
        # a form that judges a pair holds only where both halves agree on it
        if (isinstance(a, PAIR_FORMS) or isinstance(b, PAIR_FORMS)) and a != b:
            out[lo] = out[lo + 1] = None
    return out


def _ordered(names: Iterator[str], order: Sequence[str]) -> tuple[str, ...]:
    found = set(names)
    return tuple(n for n in order if n in found)


# ----------------------------------------------------------------------------------------------
# Steps


def run_step(instruction: Instruction, program: Program, state: ExpectedState,
             shapes: Mapping[str, Resource], spec: InstructionSpec, model: Model, index: int
             ) -> tuple[ExpectedState, Step]:
    """One instruction on the abstract state: the state after it and the step's record."""
    if has_element_index(instruction):
        try:
            instruction = resolve(instruction, program, model,
                                  lambda name, component: _register_word(state, name, component))
        except IndexUnknown:
            widened = _widen_unknown_index(instruction, program, state, shapes, spec, model)
            return widened, Step(index, instruction.name, instruction.line, (), (), 0, True)
    plan = plan_step(instruction, spec, model)
    read = _choices(state, plan, shapes)
    choices, opaque = read if read is not None else ([], [])
    combos = 1
    for choice in choices:
        combos *= len(choice.values)
    if read is None or combos > FANOUT or (opaque and not _passes_through(
            instruction, state, shapes, spec, choices, opaque)):
        widened = widen(state, plan, shapes, model.shared_memory_files)
        return widened, Step(index, instruction.name, instruction.line, (), (), 0, True)
    tracked = _tracked(state, plan) + opaque
    placeholders = ((_PLACEHOLDER_A, _PLACEHOLDER_B) if tracked else (_PLACEHOLDER_A,))
    runs: list[list[Execution]] = []
    for picked in itertools.product(*(c.values for c in choices)):
        assigned: dict[Word, int] = {}
        for choice, value in zip(choices, picked, strict=True):
            assigned.update(zip(choice.words, value, strict=True))
        variants = []
        for base in placeholders:
            for k, word in enumerate(tracked):
                assigned[word] = base + k
            concrete = _concrete(state, shapes, assigned)
            variants.append(run_instruction(instruction, program, concrete, spec, model))
        runs.append(variants)
    executions = [e for variants in runs for e in variants]
    order = list(model.outcomes_by_name)
    outcomes = _ordered((o for e in executions for o in e.outcomes), order)
    clauses = tuple(dict.fromkeys(c for e in executions for c in e.clauses))
    after = _merge(state, plan, runs, tracked)
    facts = tuple(dict.fromkeys(f for e in executions for f in e.facts))
    return after, Step(index, instruction.name, instruction.line, outcomes, clauses,
                       len(executions), False, facts)


def _register_word(state: ExpectedState, name: str, component: int) -> Accept:
    try:
        return state.registers[name][component]
    except KeyError:
        raise ExecError(f"the state has no {name}") from None


def _widen_unknown_index(instruction: Instruction, program: Program, state: ExpectedState,
                         shapes: Mapping[str, Resource], spec: InstructionSpec, model: Model
                         ) -> ExpectedState:
    """A step whose element index is not one exact value: where every value it may take is
    an element of its indexable temp, everything the step may write becomes anything (a
    written temp: every element of it); where it may be past the end, the program is
    undefined (:class:`ProgramUndefined`, raised)."""
    declared = declared_files(model)
    rules = model.element_index
    assert rules is not None
    for op in instruction.operands:
        if op.element is None or op.relative is None or op.file not in declared:
            continue
        index = op.relative
        accept = _register_word(state, storage_name(index), COMPONENTS.index(index.components))
        count = element_count(program, op.register)
        values = members(accept)
        if values is None or any(not rules.inside(rules.element(v, op.element), count)
                                 for v in values):
            outcome = model.files_by_name[op.file].out_of_range
            raise ProgramUndefined(str(outcome), instruction.line)
    return widen(state, plan_any_element(instruction, program, spec, model), shapes,
                 model.shared_memory_files)


def plan_any_element(instruction: Instruction, program: Program, spec: InstructionSpec,
                     model: Model) -> StepPlan:
    """The read and write sets of an instruction whatever element its indices name: an
    indexable temp it writes through an index register may be written in every element."""
    declared = declared_files(model)
    static: list[Operand] = []
    arrays: list[tuple[str, int, tuple[int, ...]]] = []
    for position, op in enumerate(instruction.operands):
        if op.element is None or op.relative is None:
            static.append(op)
            continue
        if op.file in declared and spec.operands[position].role == "dst":
            letters = op.components or COMPONENTS
            arrays.append((op.register, element_count(program, op.register),
                           tuple(COMPONENTS.index(c) for c in letters)))
        static.append(replace(op, element=0 if op.file in declared else op.element,
                              relative=None))
    plan = plan_step(replace(instruction, operands=tuple(static)), spec, model)
    if not arrays:
        return plan
    written = dict(plan.written_components)
    for register, count, components in arrays:
        for element in range(count):
            written[element_name(register, element)] = components
    return replace(plan, written_components=written)


def _resolve(values: Sequence[int], tracked: Sequence[Word], state: ExpectedState) -> Accept:
    """A written word of the A and B runs: the same value is written; a word's own placeholders
    are that word (unchanged or copied); anything else depends on what is only tracked."""
    a, b = values
    if a == b:
        return a
    k = a - _PLACEHOLDER_A
    if 0 <= k < len(tracked) and b == _PLACEHOLDER_B + k:
        return _word(state, tracked[k])
    return None


def _final_word(variants: Sequence[Accept], tracked: Sequence[Word], state: ExpectedState
                ) -> Accept:
    if len(variants) == 1:
        return variants[0]
    if all(isinstance(v, int) for v in variants):
        return _resolve([int(v) for v in variants], tracked, state)  # type: ignore[arg-type]
    return variants[0] if all(v == variants[0] for v in variants) else None


def _merge(state: ExpectedState, plan: StepPlan, runs: Sequence[Sequence[Execution]],
           tracked: Sequence[Word]) -> ExpectedState:
    """The state after the step: written words joined over the runs, the rest carried."""
    registers = dict(state.registers)
    for name, components in plan.written_components.items():
        per_run: list[tuple[Accept, ...]] = []
        for variants in runs:
            regs = [_state(e).registers[name] for e in variants]
            per_run.append(tuple(_final_word([r[k] for r in regs], tracked, state)
                                 for k in range(4)))
        joined = _join_register(per_run, components)
        before = list(state.registers[name])
        for k in components:
            before[k] = joined[k]
        registers[name] = (before[0], before[1], before[2], before[3])
    resources = dict(state.resources)
    for name in state.resources:
        results = [[_state(e).resources[name] for e in variants] for variants in runs]
        if any(r is None for variants in results for r in variants):
            resources[name] = None
            continue
        if name not in plan.written_resources and name not in plan.written_counters:
            continue
        before_res = state.resources[name]
        if before_res is None:
            continue  # undefined before; a write of some words leaves the rest undefined
        words = list(before_res.words)
        if name in plan.written_resources:
            for k in range(len(words)):
                words[k] = join([_final_word([r.words[k] for r in per_run if r is not None],
                                             tracked, state) for per_run in results])
        counter = before_res.counter
        if name in plan.written_counters and before_res.has_counter:
            counter = join([_final_word([r.counter for r in per_run if r is not None],
                                        tracked, state) for per_run in results])
        resources[name] = ExpectedResource(before_res.kind, tuple(words), before_res.stride,
                                           before_res.count, before_res.format,
                                           before_res.has_counter, counter)
    return ExpectedState(registers, resources, state.invocation)


def _state(execution: Execution) -> ExpectedState:
    if execution.state is None:
        raise ExecError("a step of a legal program was rejected")
    return execution.state


def widen(state: ExpectedState, plan: StepPlan, shapes: Mapping[str, Resource],
           shared_files: frozenset[str]
           ) -> ExpectedState:
    """Everything the step may write becomes anything."""
    registers = dict(state.registers)
    for name, components in plan.written_components.items():
        values = list(state.registers[name])
        for k in components:
            values[k] = None
        lo_pairs = {k & ~1 for k in components}
        for lo in lo_pairs:  # a pair form cannot survive a half being rewritten
            if isinstance(values[lo], PAIR_FORMS) or isinstance(values[lo + 1], PAIR_FORMS):
                values[lo] = values[lo + 1] = None
        registers[name] = (values[0], values[1], values[2], values[3])
    resources = dict(state.resources)
    for name in plan.written_resources | plan.widened_resources:
        resources[name] = None
    if plan.widens_shared:
        for name in shapes:
            if register_file(name) in shared_files:
                resources[name] = None
    for name in plan.written_counters:
        res = resources.get(name)
        if res is not None and res.has_counter:
            resources[name] = ExpectedResource(res.kind, res.words, res.stride, res.count,
                                               res.format, True, None)
    return ExpectedState(registers, resources, state.invocation)


# ----------------------------------------------------------------------------------------------
# Programs


def run_straight_line(program: Program, state: MachineState, spec: Spec,
                      start: ExpectedState | None = None) -> Execution:
    """Every instruction of a legal program without flow control in order, from ``state``
    (from ``start`` where some of its words are not exact: ``state`` then gives the shapes).

    The execution's outcomes and clauses are those of the steps in ``subject`` (the instruction
    positions the caller's vector is about; every step when empty), its ``steps`` record every
    step. A one-step program on an exact state is the single-instruction executor's result.
    """
    model = spec.model
    steps: list[Step] = []
    instructions = program.instructions
    if len(instructions) == 1 and start is None:  # the special case: today's executor
        instruction = instructions[0]
        execution = run_instruction(instruction, program, state,
                                    _specified(spec, instruction), model)
        return Execution(execution.outcomes, execution.clauses, execution.state,
                         notes=execution.notes,
                         steps=(Step(0, instruction.name, instruction.line, execution.outcomes,
                                     execution.clauses, 1, False, execution.facts),),
                         facts=execution.facts)
    concrete: MachineState | None = state if start is None else None  # while all is exact
    # While every word is exact, register steps write one mutable register file in place
    # (sm5.oracle.execution.exact_steps): ``thawed`` is that state while it is set.
    thawed_state: MachineState | None = None
    current = start
    for index, instruction in enumerate(instructions):
        ins_spec = _specified(spec, instruction)
        if concrete is not None:
            plan = register_plan(ins_spec, instruction)
            if plan is not None:
                if thawed_state is None:
                    thawed_state = thawed(concrete)
                quick = run_register_step(plan, model, thawed_state)
                if quick is not None:
                    steps.append(Step(index, instruction.name, instruction.line,
                                      quick.outcomes, quick.clauses, 1, False))
                    continue
        if concrete is not None:  # the fast path: one run, no sets to enumerate or join
            if thawed_state is not None:
                concrete = frozen(thawed_state)
                thawed_state = None
            execution = run_instruction(instruction, program, concrete, ins_spec, model)
            steps.append(Step(index, instruction.name, instruction.line, execution.outcomes,
                              execution.clauses, 1, False, execution.facts))
            after = _state(execution)
            concrete = exact_state(after, concrete)
            if concrete is None:
                current = after
            continue
        assert current is not None
        current, step = run_step(instruction, program, current, state.resources, ins_spec,
                                 model, index)
        steps.append(step)
    if current is None:
        assert concrete is not None
        if thawed_state is not None:
            concrete = frozen(thawed_state)
        current = initial_state(concrete)
    order = list(model.outcomes_by_name)
    outcomes = _ordered((o for s in steps for o in s.outcomes), order)
    clauses = tuple(dict.fromkeys(c for s in steps for c in s.clauses))
    return Execution(outcomes or (model.plain_outcome,), clauses, _exact_counters(current),
                     steps=tuple(steps), facts=facts_of(steps))


def facts_of(steps: Sequence[Step]) -> tuple[str, ...]:
    """The facts of every step, each once, in the order first met."""
    return tuple(dict.fromkeys(f for s in steps for f in s.facts))


def exact_state(expected: ExpectedState, before: MachineState) -> MachineState | None:
    """``expected`` as a machine state when every word of it is exact (a resource the step did
    not write is ``before``'s, by identity), else None."""
    registers = expected.registers
    for values in registers.values():
        for value in values:
            if not isinstance(value, int):
                return None
    resources = {}
    for name, res in expected.resources.items():
        old = before.resources[name]
        if res is None:
            return None
        if res.words is not old.data:
            if not all(isinstance(w, int) for w in res.words):
                return None
            old = Resource(old.kind, res.words, old.stride, old.count,  # type: ignore[arg-type]
                           old.format, old.counter)
        if res.has_counter and res.counter != old.counter:
            if not isinstance(res.counter, int):
                return None
            old = Resource(old.kind, old.data, old.stride, old.count, old.format, res.counter)
        resources[name] = old
    return MachineState(registers, resources, expected.invocation)  # type: ignore[arg-type]


def _exact_counters(state: ExpectedState) -> ExpectedState:
    for res in state.resources.values():
        if res is not None and isinstance(res.counter, int) and not 0 <= res.counter <= U32:
            raise ExecError(f"a counter value {res.counter} is not 32-bit")
    return state


def _specified(spec: Spec, instruction: Instruction) -> InstructionSpec:
    try:
        return spec.instructions[instruction.name]
    except KeyError:
        raise ExecError(f"line {instruction.line}: {instruction.name} is not a specified "
                        "instruction (the interpreter executes only the spec's instructions; "
                        f"specified: {len(spec.instructions)})") from None
