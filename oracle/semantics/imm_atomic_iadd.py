"""imm_atomic_iadd: atomic 32-bit add to u#/g# memory, returning the value before the add."""

from __future__ import annotations

from sm5.oracle.clauses import address_of, classify, outcomes_of
from sm5.oracle.operands import components, scalar
from sm5.oracle.program import COMPONENTS, Instruction, Program
from sm5.oracle.semantics.common import Draft, resource
from sm5.oracle.spec import InstructionSpec
from sm5.oracle.state import U32, Execution, MachineState


def imm_atomic_iadd(instr: Instruction, program: Program, state: MachineState,
                    spec: InstructionSpec) -> Execution:
    dst0, mem, address_op, src = instr.operands
    res = resource(state, mem.register)
    address = components(address_op, state)
    inputs: dict[str, int | str] = {
        "addr0": address[0], "addr1": address[1], "value": scalar(src, state), "old": 0,
        "size": res.size, "stride": res.stride, "count": res.count, "file": mem.file,
        "kind": res.kind, "invocation": state.invocation,
    }
    byte = address_of(spec, inputs)
    if byte % 4 == 0 and 0 <= byte < res.size:
        inputs["old"] = res.data[byte // 4]
    fired = classify(spec, inputs)
    outcomes = outcomes_of(fired)
    draft = Draft.of(state)
    draft.fired.extend(fired)
    component = COMPONENTS.index(dst0.components[0])
    if "defined" in outcomes:
        old = int(inputs["old"])
        draft.write_word(mem.register, byte // 4, (old + int(inputs["value"])) & U32)
        draft.set_component(dst0.register, component, old)
    if "dst_undefined" in outcomes:
        draft.set_component(dst0.register, component, None)
    if "resource_undefined" in outcomes:
        draft.undefine_resource(mem.register)
    if "tgsm_undefined" in outcomes:
        draft.undefine_tgsm()
    return draft.finish()
