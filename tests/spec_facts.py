"""Facts about an instruction read from its spec entry, for tests that must not name one.

Each helper reads the YAML's own declarations (operand roles, the address formula) and
evaluates them numerically; none calls the theorem code or the oracle semantics it checks.
"""

from __future__ import annotations

from collections.abc import Mapping

from sm5.oracle.model.spec import InstructionSpec, Spec
from sm5.oracle.rulelang.rules import Value

STRUCTURED = "structured"


def operand_index(instruction: InstructionSpec, role: str) -> int | None:
    """Position of the instruction's operand with this role (the first), or None."""
    return next((i for i, o in enumerate(instruction.operands) if o.role == role), None)


def structured_address(instruction: InstructionSpec, env: Mapping[str, Value]
                       ) -> tuple[str, str]:
    """(structure index input, byte offset input) of a structured access: the index is the
    input whose increment moves the spec's address formula by one stride; the offset the
    input equal to the address minus stride times the index."""
    rule = instruction.semantics.address
    assert rule is not None, f"{instruction.name} has no address formula"
    base = {**env, "kind": STRUCTURED, "stride": 12}  # a stride no other input equals
    numeric = [i.name for i in instruction.semantics.inputs
               if i.type in ("u32", "int") and i.name in base and i.name != "stride"]
    here = int(rule.evaluate(base))
    index = [n for n in numeric
             if int(rule.evaluate({**base, n: int(base[n]) + 1})) - here == 12]
    assert len(index) == 1, (instruction.name, index)
    rest = here - 12 * int(base[index[0]])
    offset = [n for n in numeric if n != index[0]
              and int(rule.evaluate({**base, n: int(base[n]) + 1})) - here == 1
              and int(base[n]) == rest]
    assert len(offset) == 1, (instruction.name, offset)
    return index[0], offset[0]


def instructions_with_address(spec: Spec) -> tuple[InstructionSpec, ...]:
    return tuple(i for i in spec.instructions.values() if i.semantics.address is not None)


def one_per_shape(spec: Spec, also: tuple[str, ...] = ()) -> list[str]:
    """The first instruction (by name) of each set of clause-group ids (the atomics share one
    shape, the double arithmetic another, and so on: 16 of the 48), and those of ``also``: what
    the default test run checks where the whole spec is a ``slow`` test."""
    shapes: dict[tuple[str, ...], str] = {}
    for name in sorted(spec.instructions):
        groups = tuple(sorted(g.id for g in spec.instructions[name].semantics.groups))
        shapes.setdefault(groups, name)
    return sorted({*shapes.values(), *also})
