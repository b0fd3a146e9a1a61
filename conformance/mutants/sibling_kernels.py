"""Mutants made from the spec's siblings: for every kernel an instruction lists as a sibling (a
kernel a real implementation could compute instead: ``siblings:`` in spec/instructions), a
translator that computes that sibling for the instruction and is the bug-free base everywhere
else. Its answers come from the interpreter running the sibling's semantics; an undefined word
keeps what the state held. The registry adds one per sibling (``sibling_<instruction>_<id>``),
so a sibling added to the spec is a mutant the vectors must kill."""

from __future__ import annotations

from sm5.conformance.guards import guards_kept, request_state
from sm5.conformance.interface import Result
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.oracle_impl import representative
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.program import subject_of
from sm5.oracle.model.siblings import Sibling
from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors.format import Vector
from sm5.vectors.siblings import default_variant


class SiblingKernel(NaiveTranslator):
    """Computes one instruction as one of its siblings (set by :func:`sibling_mutants`)."""

    instruction = ""
    sibling_id = ""

    def _variant(self) -> Spec:
        variant = default_variant(self.instruction, self.sibling_id)
        assert variant is not None  # the registry makes one mutant per listed sibling
        return variant

    def run(self, vector: Vector) -> Result:
        if subject_of(vector.id) != self.instruction:
            return super().run(vector)
        try:
            program = parse_vector_program(tuple(vector.program))
            state = request_state(vector)
            execution = execute(program, state, vector.target, vector.runtime, self._variant())
        except Sm5Error as exc:
            return Result.error(str(exc))
        if execution.rejected or execution.state is None:
            return Result.error(f"the sibling refused the program: {execution.reason}")
        return Result.of_state(guards_kept(vector.state,
                                           representative(execution.state, state)))


def mutant_name(instruction: str, sibling: Sibling) -> str:
    return f"sibling_{instruction}_{sibling.id}"


def sibling_mutants() -> dict[str, type[NaiveTranslator]]:
    """One mutant class per sibling of the spec, by name."""
    out: dict[str, type[NaiveTranslator]] = {}
    for name, ins in sorted(load_default().instructions.items()):
        for sibling in ins.siblings:
            mutant = mutant_name(name, sibling)
            out[mutant] = type(mutant, (SiblingKernel,), {
                "name": mutant, "instruction": name, "sibling_id": sibling.id,
                "__doc__": f"{mutant}: the sibling kernel.\n\n{name} computed as its "
                           f"sibling {sibling.id}: {sibling.text}.",
                "__module__": __name__})
    return out
