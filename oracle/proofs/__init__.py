"""The theorems about the spec, checked by z3 within a per-theorem budget of work.

Per instruction, in this order:

``well_defined``
    every expression evaluates exactly in both z3 encodings (no 128-bit overflow, no division by
    zero): the translation may stand in for the Python evaluator.
``partition/<group>``
    where a group applies, exactly one of its clauses holds, and each clause can fire.
``outcomes``
    ``defined`` never fires together with ``no_write``/``resource_undefined``/``tgsm_undefined``.
``in_bounds/<clause>``
    a ``defined`` access of a bounds group stays inside its resource (address = the YAML
    pseudocode formula, evaluated exactly).
``naive_wrap_bytes/<group>``, ``naive_wrap_dwords/<group>``, ``offset_wrap/<group>``
    a naive 32-bit implementation is fooled (counterexample expected, with canonical boundary
    models as witnesses).
``word_results``
    a value written to a register without lanes or to a hidden counter is a 32-bit word (a
    counter wraps rather than overflows).
``contention``
    a read-modify-write kernel is as its file states: ``free`` (two contending operations
    leave the same word in either order, so any number of them leave the fold of the kernel)
    or ``serial`` (some two do not: counterexample expected).
``counter_steps``
    a hidden counter steps by a constant odd amount modulo 2^32, so contending ``alloc`` or
    ``consume`` operations return distinct values and leave the same counter in any order.
``availability``
    the availability tables decide every (target, runtime) cell exactly once.
``agreement``
    z3 and the Python evaluator agree on every model met above.

For program state (``program_state/<file>/...``, each register file with elements: x#, cb#,
the icb; ``sm5.oracle.proofs.theorems.state``):

``index``, ``classification``
    the element index rule is the 32-bit sum of the index register and the number (wrapping
    mod 2^32); inside / past the end split every index and each happens; an element inside
    lies within the file's words.
``byte_offset_wrap``
    a 32-bit byte-offset bounds check is fooled (counterexample expected).

Per flow-control instruction (``spec/control/``):

``clauses``
    wherever its effect can go (the effect's ``reach``), exactly one of its clauses holds, and
    each can: exactly one arm of an ``if`` runs, a ``switch`` enters one entry or none, a
    ``break`` goes to one place.

``results_to_json`` is deterministic: the theorems (with witnesses) carry no time; the times are
in a separate ``timings_ms`` map that a consumer hashing the results leaves out.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from sm5.oracle.errors import Sm5Error
from sm5.oracle.model.spec import Spec, load_default
from sm5.oracle.proofs.theorems.agreement import agreement
from sm5.oracle.proofs.theorems.availability import availability
from sm5.oracle.proofs.theorems.base import (
    STATUSES,
    Budget,
    Context,
    Found,
    TheoremResult,
    TheoremTimeout,
    build_context,
    run_theorem,
)
from sm5.oracle.proofs.theorems.contention import contention, contention_claim, counter_steps
from sm5.oracle.proofs.theorems.control import clause_partition
from sm5.oracle.proofs.theorems.identities import IDENTITY_ENCODINGS, identity_holds
from sm5.oracle.proofs.theorems.memory import (
    WrapQuery,
    bounds_groups,
    in_bounds,
    naive_wrap,
    structured_wrap_groups,
    wrap_queries,
)
from sm5.oracle.proofs.theorems.outcomes import outcome_consistency
from sm5.oracle.proofs.theorems.partition import partition
from sm5.oracle.proofs.theorems.siblings import sibling_differs
from sm5.oracle.proofs.theorems.state import (
    byte_offset_theorem,
    classification_theorem,
    element_files,
    index_theorem,
)
from sm5.oracle.proofs.theorems.welldefined import well_defined
from sm5.oracle.proofs.theorems.words import word_results, word_targets

__all__ = ["DEFAULT_WORK", "FORMAT", "TheoremResult", "results_to_json", "run_all",
           "run_instruction"]

#: Per-theorem budget of z3 work (its resource count, see :class:`Budget`) unless the caller
#: gives another: about 15 s of one core here, and many times what the hardest theorem of the
#: spec needs (``benchmarks/prove_time.py`` prints the work each theorem takes).
DEFAULT_WORK = 50_000_000
FORMAT = "sm5-proofs/1"
WRAP_KINDS = ("naive_wrap_bytes", "naive_wrap_dwords", "offset_wrap")
#: The subject of the program-state theorems (one set per register file with elements).
STATE_SUBJECT = "program_state"
STATE_THEOREMS: tuple[tuple[str, Callable[..., Found]], ...] = (
    ("index", index_theorem), ("classification", classification_theorem),
    ("byte_offset_wrap", byte_offset_theorem))


def run_all(spec: Spec | None = None, *, work: int = DEFAULT_WORK, timeout_ms: int | None = None,
            instructions: Iterable[str] | None = None, jobs: int = 1) -> list[TheoremResult]:
    """Check every theorem of every instruction (or of ``instructions``), in a fixed order.

    With ``jobs`` > 1 the instructions are shared out to that many worker processes (each
    instruction's theorems stay in one process, in order); the results are the same list as a
    serial run's, times aside. Processes rather than threads: z3 holds the GIL in long checks."""
    spec = spec or load_default()
    names = ([*sorted([*spec.instructions, *spec.control.instructions]), STATE_SUBJECT]
             if instructions is None else list(instructions))
    if jobs <= 1 or len(names) < 2:
        results: list[TheoremResult] = []
        for name in names:
            results += run_instruction(spec, name, work=work, timeout_ms=timeout_ms)
        return results
    context = multiprocessing.get_context("spawn")  # no fork of a process holding z3 threads
    with ProcessPoolExecutor(max_workers=min(jobs, len(names)), mp_context=context,
                             initializer=_adopt, initargs=(spec,)) as pool:
        parts = list(pool.map(partial(_run_adopted, work=work, timeout_ms=timeout_ms), names))
    return [r for part in parts for r in part]


_ADOPTED: list[Spec] = []


def _adopt(spec: Spec) -> None:
    """Worker start: keep the spec sent once, not once per instruction."""
    _ADOPTED[:] = [spec]


def _run_adopted(name: str, *, work: int, timeout_ms: int | None) -> list[TheoremResult]:
    return run_instruction(_ADOPTED[0], name, work=work, timeout_ms=timeout_ms)


def run_instruction(spec: Spec, name: str, *, work: int = DEFAULT_WORK,
                    timeout_ms: int | None = None) -> list[TheoremResult]:
    if name == STATE_SUBJECT:  # the element indices of x#, cb# and the icb
        return [run_theorem(f"{name}/{file.name}/{kind}", name, kind, Budget(work, timeout_ms),
                            partial(body, spec.model, file))
                for file in element_files(spec.model) for kind, body in STATE_THEOREMS]
    control = spec.control.instructions.get(name)
    if control is not None:  # a flow-control instruction: its clauses partition its effect
        return [run_theorem(f"{name}/clauses", name, "clauses", Budget(work, timeout_ms),
                            partial(clause_partition, spec.control, control))]
    instruction = spec.instruction(name)
    ctx = build_context(instruction, spec.model)
    results: list[TheoremResult] = []

    def run(kind: str, subject: str, body: Callable[[Budget], Found]) -> None:
        label = f"{name}/{kind}" + (f"/{subject}" if subject else "")
        results.append(run_theorem(label, name, kind, Budget(work, timeout_ms), body))

    run("well_defined", "", partial(well_defined, ctx))
    for group in instruction.semantics.groups:
        run("partition", group.id, partial(partition, ctx, group))
    run("outcomes", "", partial(outcome_consistency, ctx))
    if instruction.semantics.identities:
        readings = [ctx if ctx.encoding == encoding else
                    build_context(instruction, spec.model, encoding=encoding)
                    for encoding in IDENTITY_ENCODINGS]
        for identity in instruction.semantics.identities:
            run("identity", identity.id,
                partial(identity_holds, readings, identity, ctx.models))
    for group in bounds_groups(ctx):
        for clause in group.clauses:
            if ctx.defines(clause):
                run("in_bounds", clause.id, partial(in_bounds, ctx, clause))
    for group_id, queries in _wrap_plan(ctx, Budget(work, timeout_ms)):
        for kind in WRAP_KINDS:
            if isinstance(queries, Found):
                run(kind, group_id, partial(_unstated, queries))
            else:
                run(kind, group_id, partial(naive_wrap, ctx, ctx.group(group_id), queries[kind]))
    if word_targets(ctx):
        run("word_results", "", partial(word_results, ctx))
    if contention_claim(instruction) is not None:
        run("contention", "", partial(contention, ctx))
    if instruction.semantics.counter is not None:
        run("counter_steps", "", partial(counter_steps, ctx))
    for sibling in instruction.siblings:
        run("sibling", sibling.id, partial(sibling_differs, instruction, sibling, spec.model))
    run("availability", "", lambda b: availability(instruction, spec.model))
    models = list(ctx.models)
    run("agreement", "", lambda b: agreement(ctx, b, models))
    return results


def _unstated(found: Found, budget: Budget) -> Found:
    return found


def _wrap_plan(ctx: Context,
               budget: Budget) -> list[tuple[str, dict[str, WrapQuery] | Found]]:
    """The structured bounds groups and their wrap queries (or why they cannot be stated)."""
    plan: list[tuple[str, dict[str, WrapQuery] | Found]] = []
    try:
        for group in structured_wrap_groups(ctx, budget):
            queries = wrap_queries(ctx, group, budget)
            plan.append((group.id, queries if isinstance(queries, dict) else
                         Found("failed", f"cannot state the wrap theorems: {queries}")))
    except TheoremTimeout as exc:
        plan.append(("*", Found("timeout", f"finding the structured groups: {exc}")))
    except Sm5Error as exc:
        plan.append(("*", Found("failed", f"cannot state the wrap theorems: {exc}")))
    return plan


def results_to_json(results: Sequence[TheoremResult]) -> dict[str, Any]:
    """A deterministic document: ``theorems`` and ``counts`` carry no time; ``timings_ms``
    (rounded, per theorem name) and ``total_ms`` are kept apart."""
    counts = {status: sum(1 for r in results if r.status == status) for status in STATUSES}
    return {
        "format": FORMAT,
        "theorems": [{
            "name": r.name,
            "instruction": r.instruction,
            "kind": r.kind,
            "status": r.status,
            "detail": r.detail,
            "witnesses": [{"inputs": dict(w), "clauses": list(c)}
                          for w, c in zip(r.witnesses, _claims(r), strict=True)],
        } for r in results],
        "counts": counts,
        "ok": counts["failed"] == 0 and counts["timeout"] == 0,
        "timings_ms": {r.name: round(r.seconds * 1000) for r in results},
        "total_ms": round(sum(r.seconds for r in results) * 1000),
    }


def _claims(result: TheoremResult) -> tuple[tuple[str, ...], ...]:
    if len(result.claims) == len(result.witnesses):
        return result.claims
    return tuple(() for _ in result.witnesses)


def canonical_json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, indent=1) + "\n"
