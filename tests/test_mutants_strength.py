"""Each bug class of the suite-strength issue is killed by named golden vectors: the mutant fails
on each of them while the bug-free naive translator passes it. The vectors are named by id
(stable across regenerations) together with the line they must contain, so a regeneration
that moved them fails here rather than silently testing something else."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from sm5.conformance.mutants import MUTANTS
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.run import run_vector
from sm5.vectors.format import Vector, read_file

GOLDEN = Path(__file__).resolve().parent.parent / "vectors" / "golden"

# mutant -> [(vector id, a program line it holds)]
KILLED_BY: dict[str, list[tuple[str, str]]] = {
    # validators that reject legal programs
    "uav_slots_of_11_0": [("atomic_iadd/limit/0053", "dcl_uav_raw u63")],
    "tgsm_limit_of_cs_4_x": [("imm_atomic_iadd/limit/0041", "dcl_tgsm_raw g1, 32752")],
    # declaration-limit bugs
    "stride_alignment_unchecked": [("imm_atomic_iadd/limit/0016", "dcl_uav_structured u0, 6"),
                                   ("imm_atomic_iadd/limit/0051",
                                    "dcl_tgsm_structured g0, 6, 2")],
    "tgsm_total_not_summed": [("imm_atomic_iadd/limit/0042", "dcl_tgsm_raw g1, 32756")],
    # a store or atomic one element past the end of a view (caught by the guard words)
    "index_past_end": [("store_structured/boundary/0005",
                        "store_structured u0.x, r0.x, r1.x, r2.xyzw"),
                       ("atomic_and/boundary/0031", "atomic_and u0, r0.xyzw, r1.x")],
    # aliasing
    "atomic_dst_written_first": [("imm_atomic_iadd/alias/0002",
                                  "imm_atomic_iadd r0.w, u0, r1.xyzw, r0.w")],
    # 32-bit wrap of byte addresses
    "wrap32_byte_address": [("atomic_iadd/boundary/0116", "dcl_uav_structured u0, 12")],
    # per-32-bit-component dmovc selection
    "dmovc_per_component": [("dmovc/alias/0004", "dmovc r0.xyzw, r1.xyzw, r0.xyxy, r3.xyzw")],
    # operands swapped; index and offset swapped
    "cmp_exch_operands_swapped": [("imm_atomic_cmp_exch/boundary/0019",
                                   "imm_atomic_cmp_exch r0.w, u0, r1.xyzw, r2.x, r3.x")],
    "struct_index_offset_swapped": [("atomic_iadd/boundary/0111",
                                     "dcl_uav_structured u0, 12")],
    # typed loads: the format's default alpha (1.0f) read as 0
    "typed_defaults_zero": [("ld_uav_typed/cell/0002",
                             "dcl_uav_typed_buffer (float,float,float,float) u0")],
    # hidden counters: consume returns the count before the decrement (the page's table)
    # signed minimum and maximum compared unsigned: src0 and the word differ in their sign bit
    "signed_minmax_unsigned": [("atomic_imax/boundary/0016", "atomic_imax u0, r0.xyzw, r1.x"),
                               ("imm_atomic_imin/boundary/0017",
                                "imm_atomic_imin r0.w, u0, r1.xyzw, r2.x")],
    "counter_returns_original": [("imm_atomic_consume/boundary/0000",
                                  "imm_atomic_consume r0.w, u0")],
    # suffix flags: _g accepted in a pixel shader; sync_uglobal refused in a vertex shader on 11.1
    "flag_stage_unchecked": [("sync/cell/0163", "sync_g")],
    "stage_table_11_0": [("sync/cell/0097", "sync_uglobal")],
    # program state: an icb read past its end clamped to the last element (vkd3d on lavapipe)
    "icb_out_of_range_not_zero": [("program_state/icb-dynamic-index/0001",
                                   "mov r0.xyzw, icb[r1.x + 1].xyzw"),
                                  ("program_state/icb-index-in-loop/0000",
                                   "iadd r1.x, r1.x, icb[r0.x + 0].x")],
}


@cache
def _vectors(instruction: str) -> dict[str, Vector]:
    _, vectors = read_file(GOLDEN / f"{instruction}.jsonl")
    return {v.id: v for v in vectors}


def _vector(vector_id: str) -> Vector:
    return _vectors(vector_id.split("/")[0])[vector_id]


@pytest.mark.parametrize(("mutant", "vector_id", "line"),
                         [(m, v, line) for m, pairs in KILLED_BY.items() for v, line in pairs])
def test_named_vector_kills_the_mutant(mutant: str, vector_id: str, line: str) -> None:
    vector = _vector(vector_id)
    assert line in vector.program, f"{vector_id} no longer holds {line!r}: regenerated?"
    base = NaiveTranslator()
    base.capabilities = frozenset({"executes", "validates"})
    assert run_vector(base, vector).status == "pass"
    assert run_vector(MUTANTS[mutant](), vector).status == "fail"


def test_every_mutant_says_what_it_gets_wrong_in_one_line() -> None:
    for name, cls in MUTANTS.items():
        # A mutant module's docstring; a mutant made from a spec sibling carries its own.
        doc = cls.__dict__.get("__doc__") or (
            cls.__module__ and __import__(cls.__module__, fromlist=["_"]).__doc__) or ""
        first = doc.strip().splitlines()[0]
        assert first.startswith(f"{name}: ") and len(first) <= 100, name
