"""Availability consistency: the tables decide every (target, runtime) cell exactly once.

A finite table, so plain enumeration: for every target of the model and every runtime, the
instruction's availability gives exactly one verdict. No target override or model row is listed
twice with different values, every target's model has a row (or the target an override), every
runtime has exactly one stage row, and every stage named exists.
"""

from __future__ import annotations

from collections import defaultdict

from sm5.oracle.model.spec import InstructionSpec, Model
from sm5.oracle.proofs.theorems.base import Found


def availability(spec: InstructionSpec, model: Model) -> Found:
    table = spec.availability
    problems: list[str] = []
    for label, rows in (
            ("target", [(row.target, row.supported) for row in table.targets]),
            ("model", [(str(row.model), row.supported) for row in table.models])):
        verdicts: dict[str, set[bool]] = defaultdict(set)
        for key, supported in rows:
            verdicts[key].add(supported)
        problems += [f"{label} {key} is both supported and unsupported"
                     for key, values in sorted(verdicts.items()) if len(values) > 1]
    stages = {s.name for s in model.stages}
    for runtime in model.runtimes:
        stage_rows = [r for r in table.runtimes if r.runtime == runtime.name]
        if len(stage_rows) != 1:
            problems.append(f"runtime {runtime.name} has {len(stage_rows)} stage rows, not one")
        for stage_row in stage_rows:
            problems += [f"runtime {runtime.name} names unknown stage {s}"
                         for s in stage_row.stages if s not in stages]
    available = rejected = 0
    for target in model.targets:
        verdict = table.target_supported(target)
        if verdict is None:
            problems.append(f"target {target.name}: no model row and no override")
            continue
        for runtime in model.runtimes:
            if verdict and target.stage in table.stages_for(runtime.name):
                available += 1
            else:
                rejected += 1
    if problems:
        return Found("failed", "; ".join(problems))
    cells = len(model.targets) * len(model.runtimes)
    return Found("proved", f"{cells} cells ({len(model.targets)} targets x "
                 f"{len(model.runtimes)} runtimes) each decided once: {available} available, "
                 f"{rejected} rejected")
