"""Programs with flow control: the interpreter's program counter, paths and effects.

A program holding a flow-control instruction runs here (``sm5.oracle.execution.run`` sends
it); the other instructions are the interpreter's steps (``sm5.oracle.execution.interpreter``),
exact while every word is exact, on acceptance sets after that. The partners of every control
instruction come from the structure pass, once (``sm5.oracle.legality.structure``); each control
instruction's effect, its test and its clauses are data (``spec/control.yaml``,
``spec/control/<name>.yaml``).

Values flow through branches too. A condition or selector that is exact decides the path. One
that holds a few alternatives splits the run into one *path* per alternative, each with that word
made exact, and the final states of the paths are joined word by word (at most
:data:`~sm5.oracle.execution.interpreter.FANOUT` paths). A condition that cannot be enumerated (a
class, anything) or too many paths *widen* the run: every word an instruction of the program may
write becomes anything. Past the step budget (``limits.steps``) the run ends with the
``unbounded`` outcome and a final state that accepts anything: no verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sm5.oracle.errors import ExecError
from sm5.oracle.execution.indexing import IndexUnknown, register_files, resolve
from sm5.oracle.execution.interpreter import (
    FANOUT,
    WRITING_MODES,
    exact_state,
    facts_of,
    initial_state,
    join,
    members,
    plan_any_element,
    run_step,
    widen,
)
from sm5.oracle.execution.semantics import run_instruction
from sm5.oracle.legality.structure import Structure
from sm5.oracle.machine.operands import components, element_words
from sm5.oracle.machine.program import COMPONENTS, Instruction, Program, storage_name
from sm5.oracle.machine.state import (
    Accept,
    Execution,
    ExpectedResource,
    ExpectedState,
    MachineState,
    Step,
)
from sm5.oracle.model.control import (
    BRANCH,
    DEMOTE,
    ENTER_SUBROUTINE,
    LEAVE,
    LOOP_END,
    NEXT_ITERATION,
    NONZERO_FLAG,
    OTHER_ARM,
    RETURN,
    SELECT,
    ControlInstruction,
)
from sm5.oracle.model.spec import InstructionSpec, Spec
from sm5.oracle.rulelang.rules import Value

#: Where execution goes (the ``goes`` variable of spec/control.yaml).
NEXT, ARM, END, START, ENTRY_GOES, INTO, CALLER, EXIT = (
    "next", "arm", "end", "start", "entry", "subroutine", "caller", "exit")
#: The binding kind of a semantic input read from the invocation's state (spec.Binding).
INVOCATION_BINDING = "invocation"
#: The select's choice (``entered``) and how an instruction was reached (``arrival``).
MATCHED, FALLBACK, NONE = "matched", "fallback", "none"
JUMP, SEQUENCE = "jump", "sequence"


@dataclass
class _Path:
    """One run of the program: where it is, its state, its return stack."""

    pc: int
    concrete: MachineState | None
    current: ExpectedState | None
    returns: list[int] = field(default_factory=list)
    jumped: bool = False

    def copy(self) -> _Path:
        return _Path(self.pc, self.concrete, self.current, list(self.returns), self.jumped)


@dataclass
class _Run:
    program: Program
    spec: Spec
    structure: Structure
    start: MachineState
    #: One record per instruction that ran, over all its executions (in the order each first
    #: ran): a loop of a million iterations keeps as many records as the program has lines.
    steps: dict[int, Step] = field(default_factory=dict)
    finished: list[ExpectedState] = field(default_factory=list)
    paths: list[_Path] = field(default_factory=list)
    executed: int = 0


def run_controlled(program: Program, state: MachineState, spec: Spec, structure: Structure,
                   start: ExpectedState | None = None) -> Execution:
    """Every path of a legal program with flow control, from ``state`` (from ``start`` where
    some of its words are not exact: ``state`` then gives the shapes)."""
    model = spec.model
    limits = spec.control.limits
    if structure.depth > limits.nesting:
        return _anything(state, limits.nesting_outcome)
    first = _Path(0, state, None) if start is None else _Path(0, None, start)
    run = _Run(program, spec, structure, state, paths=[first])
    end_of_main = next((k for k, main in enumerate(structure.in_main) if not main),
                       len(program.instructions))
    while run.paths:
        path = run.paths.pop()
        while True:
            if path.pc >= end_of_main and not path.returns:
                run.finished.append(_expected(path))
                break
            if run.executed >= limits.steps:
                return _anything(state, limits.steps_outcome, list(run.steps.values()))
            run.executed += 1
            if not _advance(run, path):
                break
    steps = tuple(run.steps.values())
    outcomes_seen = {o for s in steps for o in s.outcomes}
    outcomes = tuple(o for o in model.outcomes_by_name if o in outcomes_seen)
    clauses = tuple(dict.fromkeys(c for s in steps for c in s.clauses))
    final = _join_states(run.finished)
    return Execution(outcomes or (model.plain_outcome,), clauses, final, steps=steps,
                     facts=facts_of(steps))


def _advance(run: _Run, path: _Path) -> bool:
    """Run the instruction at ``path.pc``; False when the path has ended (finished, widened or
    split into new paths)."""
    instruction = run.program.instructions[path.pc]
    control = run.spec.control.instructions.get(instruction.name)
    if control is None:
        _compute(run, path, instruction)
        path.pc += 1
        path.jumped = False
        return True
    return _control(run, path, instruction, control)


def _compute(run: _Run, path: _Path, instruction: Instruction) -> None:
    """An ALU or memory instruction: one exact run while the state is exact, else a step of the
    abstract interpreter."""
    spec = run.spec
    ins_spec = spec.instructions[instruction.name]
    _check_demoted_write(run, path, instruction, ins_spec)
    if path.concrete is not None:
        execution = run_instruction(instruction, run.program, path.concrete, ins_spec,
                                    spec.model)
        _record(run, Step(path.pc, instruction.name, instruction.line, execution.outcomes,
                              execution.clauses, 1, False, execution.facts))
        if execution.state is None:
            raise ExecError("a step of a legal program was rejected")
        exact = exact_state(execution.state, run.start)
        path.concrete, path.current = exact, (None if exact is not None else execution.state)
        return
    assert path.current is not None
    path.current, step = run_step(instruction, run.program, path.current, run.start.resources,
                                  ins_spec, spec.model, path.pc)
    _record(run, step)


def _check_demoted_write(run: _Run, path: _Path, instruction: Instruction,
                         ins_spec: InstructionSpec) -> None:
    """A memory write after a demote, by an instruction whose semantics do not read the
    invocation's state: the spec does not say what it does in an inactive invocation (its
    erratum), so the interpreter refuses rather than guess (FS 16.13 drops UAV writes after a
    discard; the atomics model it)."""
    memory = ins_spec.semantics.memory
    if memory is None or memory.mode not in WRITING_MODES:
        return
    now = path.concrete.invocation if path.concrete is not None else (
        path.current.invocation if path.current is not None else run.start.invocation)
    if now == run.start.invocation:
        return
    if any(i.source.kind == INVOCATION_BINDING for i in ins_spec.semantics.inputs):
        return
    raise ExecError(f"line {instruction.line}: {instruction.name} writes memory in a "
                    f"{now} invocation, which its semantics do not model (spec/instructions/"
                    f"{instruction.name}.yaml errata); the interpreter does not guess")


def _control(run: _Run, path: _Path, instruction: Instruction, ins: ControlInstruction) -> bool:
    structure = run.structure
    pc = path.pc
    cond = 0
    position = ins.operand_position("condition")
    if position is not None:
        read, where = _read(run, path, instruction, position)
        if not isinstance(read, int):
            return _split(run, path, instruction, where, read)
        cond = read
    nz = NONZERO_FLAG in instruction.flags
    acts = bool(run.spec.control.test.holds({"cond": cond, "nz": nz})) if ins.test else True
    goes, entered = NEXT, NONE
    arrival = JUMP if path.jumped else SEQUENCE
    depth = len(path.returns)
    path.jumped = False
    next_pc = pc + 1
    effect = ins.effect
    if effect == BRANCH and not acts:
        if pc in structure.other_arm:
            goes, next_pc = ARM, structure.other_arm[pc] + 1
        else:
            goes, next_pc = END, structure.end[pc] + 1
    elif effect == OTHER_ARM:
        goes, next_pc = END, structure.end[pc] + 1
    elif effect == LOOP_END:
        goes, next_pc = START, structure.start[pc] + 1
    elif effect == LEAVE and acts:
        goes, next_pc = END, structure.end[structure.target[pc]] + 1
    elif effect == NEXT_ITERATION and acts:
        goes, next_pc = START, structure.target[pc] + 1
    elif effect == SELECT:
        entries = structure.entries[pc]
        chosen = next((k for k, literal in entries if literal == cond), None)
        entered = MATCHED
        if chosen is None:
            chosen = next((k for k, literal in entries if literal is None), None)
            entered = FALLBACK
        if chosen is None:
            goes, entered, next_pc = END, NONE, structure.end[pc] + 1
        else:
            goes, next_pc, path.jumped = ENTRY_GOES, chosen, True
    elif effect == RETURN and acts:
        if path.returns:
            goes, next_pc = CALLER, path.returns.pop()
        else:
            goes = EXIT
    elif effect == ENTER_SUBROUTINE and acts:
        if depth < run.spec.control.limits.call_depth:
            label = instruction.operands[-1].index
            assert label is not None
            path.returns.append(pc + 1)
            goes, next_pc, path.jumped = INTO, structure.labels[label], True
    elif effect == DEMOTE and acts:
        _demote(path, run.spec.control.demote_to)
    env: dict[str, Value] = {"cond": cond, "nz": nz, "acts": acts, "goes": goes,
                             "within": structure.within.get(pc, NONE), "entered": entered,
                             "arrival": arrival, "depth": depth}
    if not run.spec.control.effects[effect].reach.holds(env):
        raise ExecError(f"line {instruction.line}: the effect {effect} of {ins.name} went "
                        f"where its reach does not allow ({env}; spec/control.yaml)")
    fired = tuple(c.id for c in ins.clauses if c.when.holds(env))
    if len(fired) != 1:
        raise ExecError(f"line {instruction.line}: {ins.name} fired {len(fired)} clauses "
                        f"({', '.join(fired) or 'none'}) in {env}; its clauses must partition "
                        f"every run (spec/control/{ins.name}.yaml)")
    _record(run, Step(pc, instruction.name, instruction.line, (), fired, 1, False))
    if goes == EXIT:
        run.finished.append(_expected(path))
        return False
    path.pc = next_pc
    return True


def _record(run: _Run, step: Step) -> None:
    """Add one execution of an instruction to its record: outcomes and clauses joined, runs
    summed, widened if any execution was."""
    known = run.steps.get(step.index)
    if known is None:
        run.steps[step.index] = step
        return
    run.steps[step.index] = Step(
        step.index, step.instruction, step.line,
        tuple(dict.fromkeys((*known.outcomes, *step.outcomes))),
        tuple(dict.fromkeys((*known.clauses, *step.clauses))),
        known.runs + step.runs, known.widened or step.widened,
        tuple(dict.fromkeys((*known.facts, *step.facts))))


def _read(run: _Run, path: _Path, instruction: Instruction, position: int
          ) -> tuple[Accept, tuple[str, int] | None]:
    """A condition's value, and the register component it lives in (None for a constant,
    an input or an element whose index is not exact: those are never split)."""
    op = instruction.operands[position]
    if op.is_immediate:
        return op.values[0], None
    model = run.spec.model
    if path.concrete is not None:
        concrete = path.concrete
        resolved = resolve(instruction, run.program, model,
                           lambda name, k: concrete.registers[name][k])
        op = resolved.operands[position]
        return components(op, concrete)[0], None
    current = path.current
    assert current is not None
    try:
        resolved = resolve(instruction, run.program, model,
                           lambda name, k: current.registers[name][k])
    except IndexUnknown:
        return None, None
    op = resolved.operands[position]
    component = COMPONENTS.index(op.components) if op.components else 0
    if op.file in register_files(model):
        name = storage_name(op)
        return current.registers[name][component], (name, component)
    constant = current.resources.get(op.register) if op.element is not None else None
    if constant is not None and all(isinstance(w, int) for w in constant.words):
        return element_words(constant.words, op.element or 0)[component], None  # type: ignore[arg-type]
    if op.element is None and op.index is None:
        return components(op, run.start)[0], None  # an input: the same in every run
    return None, None


def _split(run: _Run, path: _Path, instruction: Instruction, where: tuple[str, int] | None,
           value: Accept) -> bool:
    """A condition holding several values: one path per value (that word made exact), or the
    program's writes widened where the values cannot be enumerated or are too many."""
    values = members(value)
    live = len(run.paths) + len(run.finished) + 1
    if values is None or where is None or live - 1 + len(values) > FANOUT:
        _record(run, Step(path.pc, instruction.name, instruction.line, (), (), 0, True))
        assert path.current is not None
        run.finished.append(_widen_program(run, path.current))
        return False
    name, component = where
    assert path.current is not None
    for v in reversed(values):
        branch = path.copy()
        registers = dict(path.current.registers)
        words = list(registers[name])
        words[component] = v
        registers[name] = (words[0], words[1], words[2], words[3])
        refined = ExpectedState(registers, path.current.resources, path.current.invocation)
        exact = exact_state(refined, run.start)
        branch.concrete, branch.current = exact, (None if exact is not None else refined)
        run.paths.append(branch)
    return False


def _demote(path: _Path, invocation: str) -> None:
    if path.concrete is not None:
        path.concrete = replace(path.concrete, invocation=invocation)
    else:
        assert path.current is not None
        path.current = replace(path.current, invocation=invocation)


def _expected(path: _Path) -> ExpectedState:
    if path.concrete is not None:
        return initial_state(path.concrete)
    assert path.current is not None
    return path.current


def _widen_program(run: _Run, state: ExpectedState) -> ExpectedState:
    """Every word an instruction of the program may write becomes anything."""
    spec = run.spec
    for instruction in run.program.instructions:
        ins_spec = spec.instructions.get(instruction.name)
        if ins_spec is not None:
            plan = plan_any_element(instruction, run.program, ins_spec, spec.model)
            state = widen(state, plan, run.start.resources, spec.model.shared_memory_files)
    return state


def _anything(state: MachineState, outcome: str, steps: list[Step] | None = None
              ) -> Execution:
    """No verdict: every register component and every resource accepts anything."""
    registers = {name: (None, None, None, None) for name in state.registers}
    resources: dict[str, ExpectedResource | None] = {name: None for name in state.resources}
    final = ExpectedState(registers, resources, state.invocation)
    clauses = tuple(dict.fromkeys(c for s in steps or () for c in s.clauses))
    return Execution((outcome,), clauses, final, steps=tuple(steps or ()))


def _join_states(states: list[ExpectedState]) -> ExpectedState:
    """The acceptance set of every word over the paths' final states."""
    first = states[0]
    if len(states) == 1:
        return first
    registers = {}
    for name in first.registers:
        registers[name] = tuple(join([s.registers[name][k] for s in states]) for k in range(4))
    resources: dict[str, ExpectedResource | None] = {}
    for name, res in first.resources.items():
        all_res = [s.resources[name] for s in states]
        if res is None or any(r is None for r in all_res):
            resources[name] = None
            continue
        words = tuple(join([r.words[k] for r in all_res if r is not None])
                      for k in range(len(res.words)))
        counter = join([r.counter for r in all_res if r is not None])
        resources[name] = replace(res, words=words, counter=counter)
    invocations = {s.invocation for s in states}
    invocation = first.invocation if len(invocations) == 1 else sorted(invocations)[0]
    return ExpectedState(registers, resources, invocation)  # type: ignore[arg-type]
