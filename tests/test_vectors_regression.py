"""Regression export: a failing property test leaves its shrunk case as a vector."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import Phase, find, given, settings

from sm5.oracle.model.spec import load_default
from sm5.vectors.check import check_file
from sm5.vectors.format import read_file
from sm5.vectors.instances import Case
from sm5.vectors.regression import export_regression, exports_regressions
from sm5.vectors.strategies import states_for

SPEC = load_default()
CLAUSE = "store_structured.uav_structured.in_bounds"


def test_a_failing_property_exports_its_shrunk_case(tmp_path: Path) -> None:
    @exports_regressions("tests.example.index_is_zero", folder=tmp_path)
    @settings(max_examples=200, deadline=None, print_blob=True, database=None)
    @given(states_for("store_structured", CLAUSE))
    def index_is_zero(case: Case) -> None:
        assert case.state["r0"][0] == 0  # false for index = count - 1 > 0

    with pytest.raises(AssertionError):
        index_is_zero()
    path = tmp_path / "store_structured.jsonl"
    header, vectors = read_file(path)
    exported = list(vectors)
    assert header.subject == "store_structured" and len(exported) == 1
    vector = exported[0]
    assert vector.id == "store_structured/regression/0000"
    assert "regression" in vector.flags
    assert vector.state["r0"][0] != 0  # the failing case, not a passing one
    provenance = vector.provenance
    assert provenance is not None
    assert provenance["test"] == "tests.example.index_is_zero"
    assert provenance["reproduction"].startswith("@reproduce_failure(")
    assert provenance["spec_version"] == SPEC.version
    assert provenance["decision_path"] == [CLAUSE]
    assert check_file(path, SPEC) == []


# Drawing a case, not searching for a minimal one: no shrink phase (shrinking an example that
# every draw satisfies took minutes), and derandomized so every run draws the same cases.
DRAW = settings(phases=[Phase.generate], derandomize=True, database=None, max_examples=1)


def test_export_appends_once(tmp_path: Path) -> None:
    case = find(states_for("dmovc", "dmovc.value.modified_nan"), lambda c: True, settings=DRAW)
    first = export_regression(case, "t", "repro", seed=7, folder=tmp_path)
    again = export_regression(case, "t", "repro", seed=7, folder=tmp_path)
    assert first == again
    other = find(states_for("dmovc", "dmovc.value.saturate_nan"), lambda c: True,
                 settings=DRAW)
    second = export_regression(other, "t", folder=tmp_path)
    assert second.id == "dmovc/regression/0001"
    _, vectors = read_file(tmp_path / "dmovc.jsonl")
    assert [v.id for v in vectors] == ["dmovc/regression/0000", "dmovc/regression/0001"]
    assert check_file(tmp_path / "dmovc.jsonl", SPEC) == []
