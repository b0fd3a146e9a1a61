"""The executor: legality first, then the program interpreter
(``sm5.oracle.execution.interpreter``).

A program holds declarations and one or more specified instructions, run in order. The state must
provide every resource the program declares, matching its declarations; a temp register it does
not give starts undefined.
"""

from __future__ import annotations

from sm5.oracle.errors import ExecError, StateError
from sm5.oracle.execution.run import run_program
from sm5.oracle.legality import declared_kind, first_violation
from sm5.oracle.machine.program import Program
from sm5.oracle.machine.state import Execution, MachineState
from sm5.oracle.model.spec import Spec, load_default


def execute(program: Program, state: MachineState, target: str = "cs_5_0",
            runtime: str = "11.0", spec: Spec | None = None) -> Execution:
    """Run the program on ``state``; a rejected program names the rule it breaks."""
    spec = spec or load_default()
    check_instructions(program, spec)
    rule = first_violation(program, target, runtime, state, spec)
    if rule is not None:
        return Execution((spec.model.rejected_outcome,), (), None, rule=rule.id,
                         reason=rule.text)
    check_state(program, state, spec, spec.model.target(target).stage)
    return run_program(program, state, spec)


def check_instructions(program: Program, spec: Spec) -> None:
    """A program the interpreter can run: at least one instruction, each one specified."""
    if not program.instructions:
        raise ExecError("the program has no instruction to execute")
    unknown = [i for i in program.instructions
               if i.name not in spec.instructions and i.name not in spec.control.instructions]
    if unknown:
        first = unknown[0]
        raise ExecError(f"line {first.line}: {first.name} is not specified; the interpreter "
                        f"executes the spec's instructions ({len(spec.instructions)} of them and "
                        f"{len(spec.control.instructions)} flow-control instructions, "
                        "see `sm5 spec check`)")


def check_state(program: Program, state: MachineState, spec: Spec, stage: str) -> None:
    """The state matches the declarations and holds every register the program uses."""
    if state.invocation not in spec.model.invocation_states:
        raise StateError(f"invocation {state.invocation!r} is not one of "
                         f"{', '.join(spec.model.invocation_states)}", where="state.invocation")
    if stage not in spec.model.invocation_stages[state.invocation]:
        raise StateError(f"an invocation in state {state.invocation!r} exists only in the "
                         f"{', '.join(spec.model.invocation_stages[state.invocation])} stage(s), "
                         f"not in {stage}", where="state.invocation")
    for decl in program.declarations:
        if decl.register is None or decl.register.file not in spec.model.resource_files:
            continue
        name = decl.register.register
        kind, _ = declared_kind(program, name, spec)
        res = state.resources.get(name)
        where = f"state.{name}"
        if res is None:
            raise StateError(f"{decl.name} declares {name} but the state has no {name}",
                             where=where)
        if res.kind != kind:
            raise StateError(f"{name} is declared {kind} but the state gives a {res.kind} "
                             "resource", where=where)
        declared = dict(zip(spec.declarations.declarations[decl.name].numbers, decl.numbers,
                            strict=False))
        if "stride" in declared and res.stride != declared["stride"]:
            raise StateError(f"{name} is declared with stride {declared['stride']}, the state "
                             f"gives {res.stride}", where=where)
        if "count" in declared and res.count != declared["count"]:
            raise StateError(f"{name} is declared with {declared['count']} structures, the state "
                             f"gives {res.count}", where=where)
        if "bytes" in declared and res.size != declared["bytes"]:
            raise StateError(f"{name} is declared with {declared['bytes']} bytes, the state gives "
                             f"{res.size}", where=where)
        if "elements" in declared and not _holds_elements(res.data, declared["elements"]):
            raise StateError(f"{name} is declared with {declared['elements']} elements (4 words "
                             f"each; 0: any number), the state binds {len(res.data)} words",
                             where=where)
        if kind == "typed" and res.format not in spec.model.typed_formats:
            raise StateError(f"{name}: unknown format {res.format!r}; expected one of "
                             f"{', '.join(spec.model.typed_formats)}", where=where)
    # A temp register the state does not give starts undefined (erratum
    # state.uninitialised_temps), so the state need not give every register the program uses.


def _holds_elements(words: tuple[int, ...], elements: int) -> bool:
    """A bound constant buffer holds exactly its declared elements (any whole number of them
    where 0 declares an unknown length): words past the declared size would read data the
    sources leave open (FS 7.5), which no vector tests."""
    if elements == 0:
        return len(words) % 4 == 0
    return len(words) == 4 * elements
