"""Small, hand-picked inputs for the report tests: vectors made by running the oracle; proof,
conformance and mutant JSON files written by the project's own writers (``sm5.oracle.proofs``,
``sm5.conformance.run``, ``sm5 mutants``), plus one hand-written results file.

Some clauses are deliberately left without a vector, so the report's "uncovered" path is real.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sm5.conformance.cli import kill_matrix
from sm5.conformance.cli import mutants_json as cli_mutants_json
from sm5.conformance.implementations import resolve
from sm5.conformance.run import run, write_results
from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json
from sm5.oracle.model.spec import Spec
from sm5.oracle.proofs import TheoremResult, results_to_json
from sm5.vectors.format import Header, Vector, iter_vectors, write_file

STRUCT_U0 = "dcl_uav_structured u0, 16"
STRUCT_STATE = {"r0": [1, 0, 0, 0], "r1": [1, 2, 3, 4],
                "u0": {"kind": "structured", "stride": 16, "count": 4, "data": [0] * 16}}
RAW_U0 = "dcl_uav_raw u0"
RAW_STATE = {"r0": [0, 0, 0, 0], "r1": [4, 0, 0, 0], "r2": [7, 0, 0, 0],
             "u0": {"kind": "raw", "data": [10, 20, 30, 40]}}
DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
DMOVC_STATE = {"r0": [0, 0, 0, 0], "r1": [1, 0, 0, 0], "r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]}


#: A failure reason holding markup; the page must show it as text.
MARKUP_REASON = "<img src=x onerror=alert(1)>"


@dataclass(frozen=True)
class Case:
    program: tuple[str, ...]
    state: dict[str, Any]
    target: str = "cs_5_0"
    runtime: str = "11.0"


CASES: dict[str, tuple[Case, ...]] = {
    "store_structured": (
        Case((STRUCT_U0, "store_structured u0.xy, r0.x, l(4), r1.xyzw"), STRUCT_STATE),
        Case((STRUCT_U0, "store_structured u0.x, l(9), l(0), r1.xxxx"), STRUCT_STATE),
        Case((STRUCT_U0, "store_structured u0.xy, r0.x, l(12), r1.yxwz"), STRUCT_STATE),
        Case((STRUCT_U0, "store_structured u0.xyzw, r0.x, l(2), r1.xyzw"), STRUCT_STATE),
        Case(("dcl_tgsm_structured g0, 16, 4", "store_structured g0.xyzw, l(0), l(0), r1.xyzw"),
             {"r1": [1, 2, 3, 4], "g0": {"kind": "structured", "stride": 16, "count": 4,
                                          "data": [0] * 16}}),
        Case(("dcl_tgsm_structured g0, 16, 4", "store_structured g0.xy, l(4), l(0), r1.xyzw"),
             {"r1": [1, 2, 3, 4], "g0": {"kind": "structured", "stride": 16, "count": 4,
                                          "data": [0] * 16}}),
        # Must-reject: shader model 4 pixel shader, and the vertex stage on runtime 11.0.
        Case((STRUCT_U0, "store_structured u0.xy, r0.x, l(4), r1.xyzw"), STRUCT_STATE,
             target="ps_4_0"),
        Case((STRUCT_U0, "store_structured u0.xy, r0.x, l(4), r1.xyzw"), STRUCT_STATE,
             target="vs_5_0"),
        Case((STRUCT_U0, "store_structured u0.xz, r0.x, l(4), r1.xyzw"), STRUCT_STATE),
    ),
    "imm_atomic_iadd": (
        Case((RAW_U0, "imm_atomic_iadd r0.x, u0, r1.x, r2.x"), RAW_STATE),
        Case((RAW_U0, "imm_atomic_iadd r0.y, u0, l(64), r2.x"), RAW_STATE),
        Case((RAW_U0, "imm_atomic_iadd r0.x, u0, l(0), l(4294967295)"), RAW_STATE),
        Case((RAW_U0, "imm_atomic_iadd r0.x, u0, r1.x, r2.x"),
             {**RAW_STATE, "invocation": "helper"}, target="ps_5_0"),
        Case((RAW_U0, "imm_atomic_iadd r0.x, u0, r1.x, r2.x"), RAW_STATE, target="cs_4_1"),
    ),
    "dmovc": (
        Case((DOUBLES, "dmovc r0.xyzw, r1.xyxx, r2.xyzw, r3.zwxy"), DMOVC_STATE),
        Case((DOUBLES, "dmovc r0.xy, r1.yyyy, r2.xyzw, -r3.xyzw"), DMOVC_STATE),
        Case((DOUBLES, "dmovc_sat r0.zw, r1.xyzw, r2.zwzw, r3.xyxy"), DMOVC_STATE),
        Case(("dmovc r0.xyzw, r1.xyxx, r2.xyzw, r3.zwxy",), DMOVC_STATE),
    ),
}


def write_vectors(folder: Path, spec: Spec) -> list[Path]:
    """One vector file per instruction, each vector's expectation computed by the oracle."""
    paths = []
    for name, cases in CASES.items():
        vectors = []
        for n, case in enumerate(cases):
            program = parse_program(list(case.program), spec=spec)
            result = execute(program, state_from_json(case.state), case.target, case.runtime,
                             spec=spec)
            expect: dict[str, Any] = {"outcomes": list(result.outcomes)}
            if result.rule is not None:
                expect["rule"] = result.rule
            if result.state is not None:
                expect["state"] = expected_to_json(result.state)
            vectors.append(Vector(f"{name}/synthetic/{n:04d}", case.program, case.target,
                                  case.runtime, case.state, expect, result.clauses, ("synthetic",),
                                  result.reason))
        path = folder / f"{name}.jsonl"
        write_file(path, Header(name, spec.version, {"name": "report-tests", "version": "1",
                                                     "seed": 0, "level": "tiny"}, 0), vectors)
        paths.append(path)
    return paths


def vector_ids() -> list[str]:
    return [f"{name}/synthetic/{n:04d}" for name, cases in CASES.items()
            for n in range(len(cases))]


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
    return path


def theorem_results() -> list[TheoremResult]:
    """Theorems named the way ``sm5.oracle.proofs`` names them, with chosen statuses."""
    return [
        TheoremResult("store_structured/well_defined", "store_structured", "well_defined",
                      "proved", 0.25, "11 expressions evaluate exactly"),
        TheoremResult("store_structured/partition/uav_structured", "store_structured", "partition",
                      "proved", 0.42, "4 clauses: pairwise disjoint, total, each reachable"),
        TheoremResult("store_structured/partition/tgsm_structured", "store_structured", "partition",
                      "timeout", 10.0, "budget of 10000 ms spent"),
        TheoremResult("store_structured/naive_wrap_bytes/uav_structured", "store_structured",
                      "naive_wrap_bytes", "counterexample-as-expected", 1.5,
                      "naive 32-bit address accepts accesses the spec rejects",
                      ({"index": 268435456, "offset": 0, "stride": 16, "count": 4,
                        "components": 1, "file": "u"},),
                      (("store_structured.uav_structured.oob_index",),)),
        TheoremResult("imm_atomic_iadd/in_bounds/imm_atomic_iadd.uav_raw.in_bounds",
                      "imm_atomic_iadd", "in_bounds", "proved", 0.1,
                      "where the clause fires, the bytes stay inside the resource"),
        TheoremResult("imm_atomic_iadd/partition/uav_structured", "imm_atomic_iadd",
                      "partition", "proved", 0.2, "4 clauses: pairwise disjoint, total"),
        TheoremResult("dmovc/partition/value", "dmovc", "partition", "failed", 0.3,
                      "clauses overlap"),
    ]


def proofs_json(path: Path) -> Path:
    return write_json(path, results_to_json(theorem_results()))


def results_json(path: Path, impl_name: str, vectors: list[Path]) -> Path:
    """A real conformance run (``sm5.conformance.run``) of a bundled implementation."""
    report = run(resolve(impl_name), vectors)
    write_results(path, report)
    return path


def divergent_results_json(path: Path) -> Path:
    """A hand-written run of a made-up implementation with a failure, an expected divergence
    and reasons holding markup (which the report must show as text)."""
    failing = {
        "store_structured/synthetic/0002": ("fail", f"UAV word 3 written {MARKUP_REASON}"),
        "imm_atomic_iadd/synthetic/0001": ("xfail", "expected divergence: returns 0 out of bounds"),
        "dmovc/synthetic/0002": ("unsupported", "no doubles"),
    }
    results = {vid: {"status": failing.get(vid, ("pass", ""))[0],
                     "reason": failing.get(vid, ("pass", ""))[1]} for vid in vector_ids()}
    results["store_structured/synthetic/0002"]["diffs"] = ["u0[3]: expected any, observed 0x1"]
    return write_json(path, {"format": "sm5-results/1", "impl": "divergent", "results": results})


def mutants_json(path: Path, vectors: list[Path]) -> Path:
    """The real kill matrix (``sm5 mutants --json``) of the bundled mutants on ``vectors``."""
    loaded = [v for _, v in iter_vectors(vectors)]
    return write_json(path, cli_mutants_json(kill_matrix(loaded), [p.name for p in vectors]))


@dataclass(frozen=True)
class Inputs:
    vectors: list[Path]
    proofs: Path
    results: list[Path]
    mutants: Path


def write_inputs(folder: Path, spec: Spec) -> Inputs:
    """Every input of the report, written into ``folder``."""
    vectors = write_vectors(folder, spec)
    return Inputs(vectors, proofs_json(folder / "proofs.json"),
                  [results_json(folder / "sm5.oracle.json", "oracle", vectors),
                   results_json(folder / "atomic_returns_new.json",
                                "mutant:atomic_returns_new", vectors),
                   divergent_results_json(folder / "divergent.json")],
                  mutants_json(folder / "mutants.json", vectors))
