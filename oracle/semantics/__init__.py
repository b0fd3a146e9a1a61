"""One pure semantics function per specified instruction, looked up by name."""

from __future__ import annotations

from collections.abc import Callable

from sm5.oracle.program import Instruction, Program
from sm5.oracle.semantics.dmovc import dmovc
from sm5.oracle.semantics.imm_atomic_iadd import imm_atomic_iadd
from sm5.oracle.semantics.store_structured import store_structured
from sm5.oracle.spec import InstructionSpec
from sm5.oracle.state import Execution, MachineState

SemanticsFn = Callable[[Instruction, Program, MachineState, InstructionSpec], Execution]

SEMANTICS: dict[str, SemanticsFn] = {
    "store_structured": store_structured,
    "imm_atomic_iadd": imm_atomic_iadd,
    "dmovc": dmovc,
}
