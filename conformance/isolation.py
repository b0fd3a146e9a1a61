"""Which instances a real implementation runs apart from the others, because the oracle says
they leave shared memory undefined (a driver may then read or write outside the g# array and
crash). Both adapters ask the same questions of the outcome vocabulary and the register files
the model declares; neither names an outcome or a file."""

from __future__ import annotations

from sm5.oracle.machine.program import Program, register_file
from sm5.oracle.machine.state import Execution, MachineState
from sm5.oracle.model.spec import Model


def accesses_shared_memory(program: Program, model: Model) -> bool:
    """An operand of the program is in a shared-memory register file (g#)."""
    shared = model.shared_memory_files
    return any(op.file in shared for ins in program.instructions for op in ins.operands)


def names_shared_memory(program: Program, state: MachineState, model: Model) -> bool:
    """The program or its state names a shared-memory register file (g#)."""
    shared = model.shared_memory_files
    return (any(register_file(name) in shared for name in state.resources)
            or accesses_shared_memory(program, model))


def voids_shared_memory(execution: Execution, model: Model) -> bool:
    """The instance is rejected, or one of its outcomes leaves shared memory undefined."""
    voiding = model.outcomes_where(effect="undefined", scopes=("shared_memory",))
    return execution.rejected or not voiding.isdisjoint(execution.outcomes)
