"""store_structured: write 1-4 consecutive 32-bit components into a structured u# or g#."""

from __future__ import annotations

from sm5.oracle.clauses import address_of, classify, outcomes_of
from sm5.oracle.operands import components, scalar
from sm5.oracle.program import Instruction, Program
from sm5.oracle.semantics.common import Draft, resource
from sm5.oracle.spec import InstructionSpec
from sm5.oracle.state import Execution, MachineState


def store_structured(instr: Instruction, program: Program, state: MachineState,
                     spec: InstructionSpec) -> Execution:
    dst, index_op, offset_op, src = instr.operands
    res = resource(state, dst.register)
    inputs: dict[str, int | str] = {
        "index": scalar(index_op, state), "offset": scalar(offset_op, state),
        "components": len(dst.components), "stride": res.stride, "count": res.count,
        "file": dst.file,
    }
    fired = classify(spec, inputs)
    outcomes = outcomes_of(fired)
    draft = Draft.of(state)
    draft.fired.extend(fired)
    if "defined" in outcomes:
        first = address_of(spec, inputs) // 4
        values = components(src, state)
        for i in range(len(dst.components)):
            draft.write_word(dst.register, first + i, values[i])
    if "resource_undefined" in outcomes:
        draft.undefine_resource(dst.register)
    if "tgsm_undefined" in outcomes:
        draft.undefine_tgsm()
    return draft.finish()
