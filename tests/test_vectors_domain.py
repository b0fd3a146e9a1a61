"""Choice sets and boundary tables of vectors.domain, against values worked out by hand."""

from __future__ import annotations

import struct

import pytest
from spec_facts import one_per_shape

from sm5.oracle.model.spec import load_default
from sm5.oracle.rulelang import helpers
from sm5.vectors import domain
from sm5.vectors.points import LEVEL_BUDGETS, Explorer

SPEC = load_default()
U32_MAX = 4294967295


def values(cands: tuple[domain.Candidate, ...]) -> set[int]:
    return {c.value for c in cands}


def test_masks_are_the_15_ordered_masks() -> None:
    masks = domain.all_masks()
    assert len(masks) == 15
    assert masks[:4] == ("x", "y", "z", "w")
    assert masks[-1] == "xyzw"
    assert "xz" in masks and "zx" not in masks


def test_swizzle_classes_are_the_15_equality_patterns() -> None:
    assert len(domain.all_swizzles()) == 256
    classes = domain.by_class(domain.all_swizzles())
    assert len(classes) == 15  # Bell number B4
    assert domain.swizzle_class("xyzw") == "0123"
    assert domain.swizzle_class("wwww") == "0000"
    assert domain.swizzle_class("zwzw") == "0101"
    assert domain.swizzle_class("yxxy") == "0110"
    assert len(classes["0123"]) == 24  # 4! permutations
    assert len(classes["0000"]) == 4


def test_operand_tables_give_legal_and_illegal_choices() -> None:
    dmovc = SPEC.instruction("dmovc")
    dest, _, src1, _ = dmovc.operands
    assert domain.legal_masks(dest) == ("xy", "zw", "xyzw")
    assert "x" in domain.illegal_masks(dest) and "xz" in domain.illegal_masks(dest)
    assert domain.legal_swizzles(src1) == ("xyzw", "xyxy", "zwxy", "zwzw")
    assert len(domain.illegal_swizzles(src1)) == 252
    assert domain.modifier_sets(src1.modifiers) == (
        (False, False), (True, False), (False, True), (True, True))
    store = SPEC.instruction("store_structured")
    assert domain.illegal_modifier_sets(store.operands[1]) == (
        (True, False), (False, True), (True, True))


def test_files_follow_the_stage() -> None:
    store = SPEC.instruction("store_structured")
    assert domain.stage_files(SPEC, store.operands[0], "compute") == ("u", "g")
    assert domain.stage_files(SPEC, store.operands[0], "pixel") == ("u",)
    assert "vThreadIDInGroupFlattened" not in domain.stage_files(SPEC, store.operands[1],
                                                                 "pixel")


def test_cells_cover_every_target_and_runtime() -> None:
    store = SPEC.instruction("store_structured")
    cells = domain.cells(SPEC, store)
    assert len(cells) == len(SPEC.model.targets) * len(SPEC.model.runtimes)
    by_key = {(c.target.name, c.runtime): c.available for c in cells}
    assert by_key[("cs_5_0", "11.0")] and by_key[("cs_4_0", "11.0")]
    assert by_key[("vs_5_0", "11.1")] and not by_key[("vs_5_0", "11.0")]
    assert not by_key[("ps_4_1", "11.1")]
    assert (cells[0].target.name, cells[0].runtime) == ("cs_5_0", "11.0")


def test_store_structured_index_boundaries() -> None:
    sem = SPEC.instruction("store_structured").semantics
    env = {"addr0": 0, "addr1": 0, "components": 2, "size": 0, "stride": 16, "count": 4,
           "file": "u", "kind": "structured"}
    got = values(domain.Boundaries(sem).candidates("addr0", env))
    # count - 1, count, count + 1; 2^32 - 1; where 16 * index crosses 2^32 (naive wrap)
    assert {3, 4, 5, U32_MAX, 0x10000000, 0x0FFFFFFF} <= got


def test_store_structured_offset_boundaries() -> None:
    sem = SPEC.instruction("store_structured").semantics
    env = {"addr0": 0, "addr1": 0, "components": 1, "size": 0, "stride": 16, "count": 4,
           "file": "u", "kind": "structured"}
    cands = domain.Boundaries(sem).candidates("addr1", env)
    got = values(cands)
    # stride - 4 (last aligned in bounds), stride, 2^32 - 4, misalignments 1..3 at 0 and at
    # the boundary
    assert {12, 16, U32_MAX - 3, 1, 2, 3, 13, 14, 15} <= got
    tags = {c.value: c.tags for c in cands}
    assert "misaligned" in tags[13] and "misaligned" not in tags[12]


def test_atomic_add_wrap_boundaries() -> None:
    sem = SPEC.instruction("imm_atomic_iadd").semantics
    env = {"addr0": 0, "addr1": 0, "components": 1, "value": 1, "old": 0, "size": 16,
           "stride": 16, "count": 4, "file": "u", "kind": "raw", "invocation": "active"}
    got = values(domain.Boundaries(sem).candidates("old", env))
    # old + 1 crosses 2^32 at old = 2^32 - 1; signed overflow at 0x7fffffff / 0x80000000
    assert {U32_MAX - 1, U32_MAX, 0x7FFFFFFF, 0x80000000} <= got


def test_dmovc_condition_single_bits() -> None:
    sem = SPEC.instruction("dmovc").semantics
    env = {"cond": 0, "src1": 0, "src2": 0, "neg1": False, "abs1": False, "neg2": False,
           "abs2": False, "sat": False}
    got = values(domain.Boundaries(sem).candidates("cond", env))
    assert {0, 1, 0x80000000, U32_MAX} <= got
    assert all(1 << k in got for k in range(32))


def test_double_specials() -> None:
    def bits(x: float) -> int:
        return int(struct.unpack("<Q", struct.pack("<d", x))[0])

    got = values(domain.special_candidates(helpers.F64))
    assert bits(0.0) in got and 0x8000000000000000 in got  # +0, -0
    assert 1 in got and 0x000FFFFFFFFFFFFF in got  # smallest and largest denormal
    assert 0x7FF0000000000000 in got and 0xFFF0000000000000 in got  # +inf, -inf
    assert 0x7FF8000000000000 in got and 0x7FF0000000000001 in got  # quiet, signalling NaN


def test_declaration_boundaries() -> None:
    env = {"stage": "compute", "model": 50, "runtime": "11.0", "uav_slots": 8, "index": 0,
           "stride": 0, "count": 0, "bytes": 0, "tgsm_total": 0, "temps": 0}
    strides = domain.declaration_candidates(SPEC, "stride", env)
    assert {0, 1, 2, 3, 2048, 2049, 2052} <= set(strides)
    assert {32768, 32769} <= set(domain.declaration_candidates(SPEC, "tgsm_total", env))
    assert {8, 9} <= set(domain.declaration_candidates(SPEC, "index", env))


@pytest.mark.parametrize("scope", ["per-shape", pytest.param("whole", marks=pytest.mark.slow)])
def test_explorer_reaches_every_clause_with_boundaries(scope: str) -> None:
    for name in SPEC.instructions if scope == "whole" else one_per_shape(SPEC):
        points = list(Explorer(SPEC, name, LEVEL_BUDGETS[1]).points())
        fired = {c for p in points for c in p.clauses}
        assert fired == {c.id for c in SPEC.instruction(name).clauses}, name
    store = list(Explorer(SPEC, "store_structured", LEVEL_BUDGETS[1]).points())
    in_bounds = [p.env for p in store if "store_structured.uav_structured.in_bounds" in p.clauses]
    assert any(e["addr0"] == e["count"] - 1 and e["count"] > 1 for e in in_bounds)
