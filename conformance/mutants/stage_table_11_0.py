"""stage_table_11_0: a validator that applies the Direct3D 11.0 stage table on runtime 11.1.

On 11.1 sync_uglobal, like UAV stores and atomics, runs in every stage; the 11.0 table has only
the pixel and compute shaders. A validator that knows only the first table on each page rejects
``sync_uglobal`` (and a UAV store) in a vertex shader on 11.1: a conforming program refused.
"""

from __future__ import annotations

from sm5.conformance.guards import request_state
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.oracle.legality import violations
from sm5.oracle.machine.program import Program
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector


class StageTable110(NaiveTranslator):
    name = "stage_table_11_0"
    capabilities = frozenset({"executes", "validates"})

    def also_rejects(self, program: Program, vector: Vector) -> str | None:
        first = load_default().model.runtimes[0].name
        if vector.runtime == first:
            return None
        state = request_state(vector)
        for rule in violations(program, vector.target, first, state):
            if rule.check == "stage":
                return rule.id
        return None
