"""Siblings: every kernel a real implementation could compute instead of an instruction's is told
apart by a golden vector, judged the way an implementation's answer is judged (the sibling's
final state, computed by the interpreter from the sibling's semantics, fails the vector)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from sm5.conformance.compare import judge
from sm5.conformance.guards import guards_kept
from sm5.conformance.interface import Result
from sm5.conformance.oracle_impl import representative
from sm5.oracle.errors import SpecError
from sm5.oracle.machine.state import ExpectedState, state_from_json
from sm5.oracle.model.siblings import Sibling, variant_document
from sm5.oracle.model.spec import instruction_document, load_default
from sm5.oracle.proofs import run_instruction
from sm5.vectors.format import Vector, read_file
from sm5.vectors.shapes import GenerationError
from sm5.vectors.siblings import (
    check_siblings,
    default_variant,
    sibling_state,
    tells_apart,
    with_sibling,
)

GOLDEN = Path(__file__).resolve().parents[1] / "vectors" / "golden"
#: The pairs an independent implementation's one-bug copies survived on before siblings existed
#: (each stayed indistinguishable on every golden vector), and fused versus double rounding.
SURVIVORS = {
    ("atomic_or", "xor"), ("imm_atomic_or", "xor"), ("dtoi", "nearest"), ("dtou", "nearest"),
    ("atomic_cmp_store", "performed_when_inactive"),
    ("imm_atomic_cmp_exch", "performed_when_inactive"), ("dfma", "double_rounded"),
}


@cache
def golden(name: str) -> tuple[Vector, ...]:
    return tuple(read_file(GOLDEN / f"{name}.jsonl")[1])


def pairs() -> list[tuple[str, Sibling]]:
    spec = load_default()
    return [(name, s) for name, ins in sorted(spec.instructions.items()) for s in ins.siblings]


def answer(vector: Vector, final: ExpectedState) -> Result:
    """The sibling's final state as an implementation would answer it: a word the sibling leaves
    constrained (a NaN of any payload, one of a few values) answered by one member, as the
    oracle answers."""
    return Result.of_state(guards_kept(vector.state,
                                       representative(final, state_from_json(vector.state))))


def test_the_survivors_are_listed_siblings() -> None:
    assert {(name, s.id) for name, s in pairs()} >= SURVIVORS


@pytest.mark.parametrize(("name", "sibling"), pairs(), ids=lambda p: getattr(p, "id", p))
def test_a_golden_vector_tells_each_sibling_apart(name: str, sibling: Sibling) -> None:
    variant = with_sibling(load_default(), name, sibling)
    failing = []
    for vector in golden(name):
        final = sibling_state(vector, variant)
        if final is not None and judge(vector, answer(vector, final)).status == "fail":
            failing.append(vector.id)
    assert failing, f"{name}: no golden vector fails its sibling {sibling.id}"
    # The z3 witness of the sibling's theorem is one of them.
    witnesses = [v.id for v in golden(name) if v.provenance
                 and f"{name}/sibling/{sibling.id}" in v.provenance.get("theorems", ())]
    assert witnesses and set(witnesses) <= set(failing)


def test_a_sibling_that_is_the_same_kernel_fails_its_theorem_and_generation() -> None:
    spec = load_default()
    ins = spec.instruction("atomic_or")
    same = replace(ins.siblings[0], id="same", replace={"memory.kernel": "value | old"},
                   spec=ins)
    twin = replace(spec, instructions={**spec.instructions,
                                       "atomic_or": replace(ins, siblings=(same,))})
    with pytest.raises(GenerationError, match="no vector tells it from its sibling same"):
        check_siblings(twin, "atomic_or", golden("atomic_or"))
    table = {r.name: r for r in run_instruction(twin, "atomic_or")}
    assert table["atomic_or/sibling/same"].status == "failed"


def test_a_replacement_must_name_what_exists() -> None:
    spec = load_default()
    root = Path(spec.root)
    doc = instruction_document(root, root / "instructions" / "dtoi.yaml")
    with pytest.raises(SpecError, match="no derived value 'q'"):
        variant_document(doc, {"derived.q": "0"}, "dtoi.yaml: siblings[0]")
    with pytest.raises(SpecError, match="no memory kernel"):
        variant_document(doc, {"memory.kernel": "0"}, "dtoi.yaml: siblings[0]")
    with pytest.raises(SpecError, match=r"expected memory\.kernel"):
        variant_document(doc, {"groups.x": "0"}, "dtoi.yaml: siblings[0]")


def test_an_input_replacement_rewrites_every_read() -> None:
    spec = load_default()
    root = Path(spec.root)
    doc = instruction_document(root, root / "instructions" / "atomic_cmp_store.yaml")
    variant = variant_document(doc, {"inputs.invocation": "'active'"}, "w")
    scopes = [g["scope"] for g in variant["semantics"]["groups"]]
    assert all("invocation" not in s for s in scopes)
    assert "('active') == 'active'" in scopes[-1]


#: Siblings whose difference shows in more than one place, and the places (a clause, or an
#: enumerated input's value) where a golden vector of their own must show it.
PLACES = {
    ("atomic_or", "xor"): {"atomic_or.uav_raw.in_bounds", "atomic_or.tgsm_raw.in_bounds"},
    ("imm_atomic_or", "xor"): {"imm_atomic_or.uav_raw.in_bounds",
                               "imm_atomic_or.tgsm_raw.in_bounds"},
    ("atomic_cmp_store", "performed_when_inactive"): {"discarded", "helper"},
    ("imm_atomic_cmp_exch", "performed_when_inactive"): {"discarded", "helper"},
}


@pytest.mark.parametrize(("name", "sibling_id"), sorted(PLACES))
def test_a_bug_visible_in_several_places_is_shown_in_each(name: str, sibling_id: str) -> None:
    sibling = next(s for s in load_default().instruction(name).siblings if s.id == sibling_id)
    variant = with_sibling(load_default(), name, sibling)
    theorem = f"{name}/sibling/{sibling_id}"
    places: set[str] = set()
    for vector in golden(name):
        if not vector.provenance or theorem not in vector.provenance.get("theorems", ()):
            continue
        final = sibling_state(vector, variant)
        assert final is not None
        assert judge(vector, answer(vector, final)).status == "fail", vector.id
        places |= set(vector.clauses) | {str(v) for v in vector.provenance["witness"].values()}
    assert PLACES[(name, sibling_id)] <= places


def test_a_sibling_range_outside_an_expected_nan_tells_it_apart() -> None:
    """``log(-1.0)``: D3D gives a NaN (FS 22.10.8); a translator writing ``log2(abs(x))`` gives
    0 within log's tolerance, a range holding no NaN, so the sibling is told apart (and a
    predicate naming it covers the vector); ``log(1.0)`` is 0 for both."""
    def vector(operand: int, expected: object) -> Vector:
        return Vector("log/hand/0", (f"log r0.x, l({operand:#x})",), "cs_5_0", "11.0",
                      {"r0": [7, 7, 7, 7]},
                      {"outcomes": ["defined"], "state": {"r0": [expected, 7, 7, 7]}})

    variant = default_variant("log", "abs_operand")
    assert variant is not None
    assert tells_apart(vector(0xBF800000, {"f32": "nan"}), variant)
    assert not tells_apart(vector(0x3F800000, {"f32_range": [0xB5000000, 0x35000000]}), variant)
