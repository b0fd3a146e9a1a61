"""The program-state theorems (``sm5.oracle.proofs.theorems.state``): they hold for the spec's
element-index rules and fail for rules a reader could get wrong."""

from __future__ import annotations

from dataclasses import replace

from sm5.oracle.model.spec import ElementIndex, Model, load_default
from sm5.oracle.proofs.theorems.base import Budget
from sm5.oracle.proofs.theorems.state import (
    byte_offset_theorem,
    classification_theorem,
    element_files,
    index_theorem,
)
from sm5.oracle.rulelang.rules import parse_rule

SPEC = load_default()
WORK = 50_000_000


def _model(index: str | None = None, in_range: str | None = None) -> Model:
    rules = SPEC.model.element_index
    assert rules is not None
    types = dict(rules.variables)
    known = frozenset(types)
    changed = ElementIndex(
        rules.variables,
        parse_rule(index, where="test", known=known, types=types) if index else rules.index,
        parse_rule(in_range, where="test", known=known, types=types) if in_range
        else rules.in_range, rules.source)
    return replace(SPEC.model, element_index=changed)


def test_every_element_file_has_its_three_theorems_as_expected() -> None:
    files = element_files(SPEC.model)
    assert [f.name for f in files] == ["x", "cb", "icb"]
    for file in files:
        assert index_theorem(SPEC.model, file, Budget(WORK)).status == "proved"
        assert classification_theorem(SPEC.model, file, Budget(WORK)).status == "proved"
        found = byte_offset_theorem(SPEC.model, file, Budget(WORK))
        assert found.status == "counterexample-as-expected"
        # the smallest index whose 32-bit byte offset wraps to 0: 16 * 2^28 = 2^32
        assert found.witnesses == ({"base": 0, "offset": 0x10000000, "count": 1},)


def test_an_index_that_does_not_wrap_at_32_bits_fails() -> None:
    """An index one past the sum is not the 32-bit sum."""
    found = index_theorem(_model(index="uword(base + offset + 1)"), element_files(SPEC.model)[0],
                          Budget(WORK))
    assert found.status == "failed"


def test_an_off_by_one_bound_fails() -> None:
    """index <= count lets the element one past the end in: its words lie past the data."""
    found = classification_theorem(_model(in_range="index <= count"),
                                   element_files(SPEC.model)[1], Budget(WORK))
    assert found.status == "failed"
    assert "reaches past its words" in found.detail
