"""dmovc: per-double conditional move, with - / _abs on the sources and _sat on the result."""

from __future__ import annotations

import math

from sm5.oracle.clauses import classify, full_env, outcomes_of
from sm5.oracle.operands import components
from sm5.oracle.program import COMPONENTS, Instruction, Program
from sm5.oracle.semantics.common import Draft
from sm5.oracle.spec import InstructionSpec
from sm5.oracle.state import (
    Accept,
    Execution,
    F64Nan,
    MachineState,
    Masked,
    bits_f64,
    f64_bits,
    join64,
    split64,
)

SIGN_FREE = 0x7FFFFFFF  # every bit of the high word but the sign


def saturate(bits: int) -> int:
    """min(1, max(0, v)) with dmax/dmin NaN rules: a NaN saturates to +0."""
    value = bits_f64(bits)
    if math.isnan(value):
        return 0
    return f64_bits(min(1.0, max(0.0, value)))


def dmovc(instr: Instruction, program: Program, state: MachineState,
          spec: InstructionSpec) -> Execution:
    dest, cond_op, src1_op, src2_op = instr.operands
    cond = components(cond_op, state)
    src1 = components(src1_op, state)
    src2 = components(src2_op, state)
    draft = Draft.of(state)
    for lane, letters in enumerate(("xy", "zw")):
        if letters not in dest.components:
            continue
        inputs = {
            "cond": cond[lane],
            "src1": join64(src1[2 * lane], src1[2 * lane + 1]),
            "src2": join64(src2[2 * lane], src2[2 * lane + 1]),
            "neg1": src1_op.neg, "abs1": src1_op.abs,
            "neg2": src2_op.neg, "abs2": src2_op.abs, "sat": instr.sat,
        }
        fired = classify(spec, inputs)
        draft.fired.extend(fired)
        env = full_env(spec.semantics, inputs)
        after = int(env["after"])
        result = saturate(after) if instr.sat else after
        lo, hi = split64(result)
        lo_accept: Accept = lo
        hi_accept: Accept = hi
        if "dst_constrained" in outcomes_of(fired):
            if env["nan"]:
                lo_accept = hi_accept = F64Nan()
            else:
                hi_accept = Masked(hi, SIGN_FREE)
        first = COMPONENTS.index(letters[0])
        draft.set_component(dest.register, first, lo_accept)
        draft.set_component(dest.register, first + 1, hi_accept)
    return draft.finish()
