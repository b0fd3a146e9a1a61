"""The executor: legality first, then the instruction's semantics function.

A program holds declarations and exactly one specified instruction (harness instructions such as
``mov`` are not executed). The state must provide every register and resource the instruction
reads or writes, matching its declaration.
"""

from __future__ import annotations

from sm5.oracle.errors import ExecError, StateError
from sm5.oracle.legality import declared_kind, first_violation
from sm5.oracle.program import Program
from sm5.oracle.semantics import run_instruction
from sm5.oracle.spec import Spec, load_default
from sm5.oracle.state import Execution, MachineState


def execute(program: Program, state: MachineState, target: str = "cs_5_0",
            runtime: str = "11.0", spec: Spec | None = None) -> Execution:
    """Run the program's instruction on ``state``; a rejected instance names the rule it breaks."""
    spec = spec or load_default()
    under_test = [i for i in program.instructions if i.name in spec.instructions]
    if len(under_test) != 1:
        raise ExecError(f"a program holds exactly one specified instruction "
                        f"({', '.join(sorted(spec.instructions))}); found {len(under_test)}")
    rule = first_violation(program, target, runtime, state, spec)
    if rule is not None:
        return Execution(("rejected",), (), None, rule=rule.id, reason=rule.text)
    instruction = under_test[0]
    check_state(program, state, spec, spec.model.target(target).stage)
    return run_instruction(instruction, program, state, spec.instruction(instruction.name),
                           spec.model)


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
        if kind == "typed" and res.format not in spec.model.typed_formats:
            raise StateError(f"{name}: unknown format {res.format!r}; expected one of "
                             f"{', '.join(spec.model.typed_formats)}", where=where)
    for instruction in program.instructions:
        for op in instruction.operands:
            if op.file == "r" and op.register not in state.registers:
                raise StateError(f"{instruction.name} uses {op.register} but the state has no "
                                 f"{op.register}", where=f"state.{op.register}")
