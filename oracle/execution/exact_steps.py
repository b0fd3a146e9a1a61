"""Steps of a straight-line program while every word is exact, on one mutable register file.

The interpreter's general step (:func:`sm5.oracle.execution.semantics.run_instruction`) copies
the state into a draft, applies the outcomes and freezes a new state, which is most of what a
step costs when the instruction itself is a few operations. A *register step* (no memory
access, no counter, no element index, one result) is what most ALU instructions are; while every
word is exact it is run here instead: the same lane evaluation
(:func:`sm5.oracle.execution.semantics.lanes.evaluate_lane`), the same result writer, written
into the registers in place once every lane has read its sources.

The general step stays the reference: a step whose fired clauses name anything but the exact
outcome of the whole instruction (an acceptance form, an undefined destination, ...), or that
this module cannot run, is run by it. ``tests/test_exact_steps.py`` checks that both give the
same execution on the golden vectors' instructions and on generated programs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sm5.oracle.execution.bindings import lanes_of
from sm5.oracle.execution.compiled_steps import CompiledStep, compile_step
from sm5.oracle.execution.indexing import has_element_index
from sm5.oracle.execution.semantics import register_result, writes_exact_result
from sm5.oracle.execution.semantics.lanes import evaluate_lane
from sm5.oracle.machine.program import Instruction
from sm5.oracle.machine.state import Accept, MachineState
from sm5.oracle.model.clauses import outcomes_of
from sm5.oracle.model.spec import Clause, InstructionSpec, Model

#: A register file being written: each register's four components.
Registers = dict[str, list[int]]


@dataclass(frozen=True)
class ExactStep:
    """What a register step ran: the outcomes and the clause ids it fired (in the order of the
    general step's execution)."""

    outcomes: tuple[str, ...]
    clauses: tuple[str, ...]


class RegisterPlan:
    """What a register step of one instruction instance needs at every run: its spec, its
    lanes, and its compiled step once it has run often enough to be worth compiling."""

    __slots__ = ("compiled", "instruction", "lanes", "runs", "spec")

    def __init__(self, instruction: Instruction, spec: InstructionSpec,
                 lanes: tuple[int, ...]) -> None:
        self.instruction = instruction
        self.spec = spec
        self.lanes = lanes
        self.runs = 0
        self.compiled: CompiledStep | None = None


#: Runs of an instance before it is compiled (a program run for a few states is not worth it).
COMPILE_AFTER = 8


def register_plan(spec: InstructionSpec, instruction: Instruction) -> RegisterPlan | None:
    """The plan of a register step (the instruction writes one register result and nothing
    else, the shape this module runs), or None for any other instruction. Kept per instance:
    a conformance run executes one program for many states."""
    known = _plans.get(id(instruction))
    if known is None or known[0] is not instruction or known[1] is not spec:
        semantics = spec.semantics
        plan = (RegisterPlan(instruction, spec, lanes_of(spec, instruction))
                if semantics.memory is None and semantics.counter is None
                and len(semantics.results) == 1 and not has_element_index(instruction) else None)
        if len(_plans) > 65536:
            _plans.clear()
        known = _plans[id(instruction)] = (instruction, spec, plan)
    return known[2]


#: Per instruction instance (by identity, kept alive beside its plan): its plan or None.
_plans: dict[int, tuple[Instruction, InstructionSpec, RegisterPlan | None]] = {}


def run_register_step(plan: RegisterPlan, model: Model, state: MachineState
                      ) -> ExactStep | None:
    """The step run on ``state``'s registers in place (a :data:`Registers` file) when every
    clause it fires has the exact outcome of the whole instruction and no acceptance form; None
    (the registers untouched) otherwise."""
    compiled = plan.compiled
    if compiled is None and plan.runs < COMPILE_AFTER:
        plan.runs += 1
        if plan.runs == COMPILE_AFTER:
            plan.compiled = compiled = compile_step(
                plan.spec, plan.instruction, plan.lanes, lambda c: _all_exact((c,), model))
    if compiled is not None:
        ran = compiled.run(state.registers, state.invocation)
        if ran is not None:  # every clause it lets fire is exact
            registers = state.registers
            for register, component, word in ran[0]:
                registers[register][component] = word  # type: ignore[index]
            return _step_of(tuple(ran[1]))
    spec, instruction, lanes = plan.spec, plan.instruction, plan.lanes
    fired: list[Clause] = []
    writes: list[tuple[str, int, Accept]] = []
    put = _collector(writes)
    for lane in lanes:
        env, lane_fired = evaluate_lane(spec, instruction, state, lane)
        if not _all_exact(lane_fired, model):
            return None
        if lane_fired:  # a lane where no clause fires writes nothing (as the general step)
            fired.extend(lane_fired)
            register_result(spec, instruction, put, env, lane_fired, lane)
    registers = state.registers
    for register, component, value in writes:
        registers[register][component] = value  # type: ignore[index]
    if not lanes:  # every destination is null: the vocabulary's first exact outcome
        return ExactStep((model.plain_outcome,), ())
    return _step_of(tuple(fired))


def _step_of(fired: tuple[Clause, ...]) -> ExactStep:
    """The step record of the clauses fired (kept per tuple of clauses, by identity)."""
    key = tuple(map(id, fired))
    known = _steps.get(key)
    if known is None or known[0] != fired:
        if len(_steps) > 65536:
            _steps.clear()
        known = _steps[key] = (fired, ExactStep(outcomes_of(fired),
                                                tuple(dict.fromkeys(c.id for c in fired))))
    return known[1]


#: Per tuple of fired clauses (by identity, the clauses kept alive beside it): its record.
_steps: dict[tuple[int, ...], tuple[tuple[Clause, ...], ExactStep]] = {}


def _collector(writes: list[tuple[str, int, Accept]]) -> Callable[[str, int, Accept], None]:
    def put(register: str, component: int, value: Accept) -> None:
        writes.append((register, component, value))
    return put


def _all_exact(fired: tuple[Clause, ...], model: Model) -> bool:
    for clause in fired:
        known = _exact_clauses.get(id(clause))
        if known is None or known[0] is not clause:
            known = _exact_clauses[id(clause)] = (clause, _exact_clause(clause, model))
        if not known[1]:
            return False
    return True


#: Per clause (by identity, the clause kept alive beside its answer): whether it is exact.
_exact_clauses: dict[int, tuple[Clause, bool]] = {}


def _exact_clause(clause: Clause, model: Model) -> bool:
    """The clause names no acceptance form and only outcomes that write the instruction's exact
    result (the outcome vocabulary's effect ``exact`` with scope ``instruction``)."""
    if clause.accept:
        return False
    outcomes = model.outcomes_by_name
    return all(writes_exact_result(outcomes[name]) for name in clause.outcomes)


def frozen(state: MachineState) -> MachineState:
    """A state of :func:`thawed` as machine states hold registers (a tuple per register)."""
    return MachineState({k: (v[0], v[1], v[2], v[3]) for k, v in state.registers.items()},
                        state.resources, state.invocation)


def thawed(state: MachineState) -> MachineState:
    """``state`` with a mutable copy of its registers (:data:`Registers`), for register steps."""
    registers: Registers = {k: list(v) for k, v in state.registers.items()}
    return MachineState(registers, state.resources, state.invocation)  # type: ignore[arg-type]

