"""Classification: which clauses of an instruction fire for given semantic inputs.

This is where the YAML decides outcomes: semantics functions compute the inputs from operands and
state, then every group whose scope holds (and whose required clauses fired) must have exactly one
clause whose condition holds. The proofs check the same property symbolically.
"""

from __future__ import annotations

from collections.abc import Mapping

from sm5.oracle.errors import ExecError
from sm5.oracle.model.spec import Clause, InstructionSpec, Semantics, load_default
from sm5.oracle.rulelang.rules import Value


def full_env(semantics: Semantics, inputs: Mapping[str, Value]) -> dict[str, Value]:
    """The inputs plus every derived value, in declaration order."""
    missing = [i.name for i in semantics.inputs if i.name not in inputs]
    if missing:
        raise ExecError(f"semantic inputs missing: {', '.join(missing)}")
    env = dict(inputs)
    for derived in semantics.derived:
        env[derived.name] = derived.expr.evaluate(env)
    return env


def classify(spec: InstructionSpec, inputs: Mapping[str, Value]) -> tuple[Clause, ...]:
    """The clauses that fire, one per applicable group, in group order."""
    return fired_in(spec, full_env(spec.semantics, inputs))


def fired_in(spec: InstructionSpec, env: Mapping[str, Value]) -> tuple[Clause, ...]:
    """`classify` on the inputs' full environment (`full_env`)."""
    fired: list[Clause] = []
    fired_ids: set[str] = set()
    for group in spec.semantics.groups:
        if group.requires and not fired_ids.intersection(group.requires):
            continue
        if not group.scope.holds(env):
            continue
        hits = [c for c in group.clauses if c.when.holds(env)]
        if len(hits) != 1:
            names = ", ".join(c.id for c in hits) or "none"
            raise ExecError(f"{spec.name}: group {group.id} must have exactly one clause firing, "
                            f"got {names} for inputs {dict(env)}")
        fired.append(hits[0])
        fired_ids.add(hits[0].id)
    return tuple(fired)


def outcomes_of(clauses: tuple[Clause, ...]) -> tuple[str, ...]:
    """The union of the clauses' outcomes in vocabulary order (spec/model.yaml ``outcomes``)."""
    union = {o for c in clauses for o in c.outcomes}
    if len(union) <= 1:
        return tuple(union)
    known = tuple(o for o in load_default().model.outcome_names if o in union)
    if len(known) == len(union):  # every outcome is in the vocabulary (a loaded spec's are)
        return known
    return known + tuple(sorted(union.difference(known)))


def address_of(semantics: Semantics, inputs: Mapping[str, Value]) -> int:
    """The byte address of the access per the source's pseudocode (the YAML ``address``)."""
    if semantics.address is None:
        raise ExecError("the instruction has no address formula")
    env = dict(inputs)
    for derived in semantics.derived:
        if derived.name not in env and all(n in env for n in derived.expr.names):
            env[derived.name] = derived.expr.evaluate(env)
    value = semantics.address.evaluate(env)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExecError(f"the address formula gave {value!r}")
    return value
