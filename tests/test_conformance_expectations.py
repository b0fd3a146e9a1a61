"""Expectations files: lookup order, and one clear error per malformed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sm5.conformance.expectations import ExpectationError, load_expectations


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_exact_id_wins_over_globs_and_first_glob_wins(tmp_path: Path) -> None:
    path = write(tmp_path, """
- id: "store_structured/*"
  status: xfail
  reason: any store
- id: "store_structured/oob_index/*"
  status: fail
  reason: wrap
  link: https://example.org/wrap
- id: store_structured/oob_index/0003
  status: skip
  reason: crashes
""")
    exp = load_expectations(path)
    assert exp.lookup("store_structured/oob_index/0003").status == "skip"  # type: ignore[union-attr]
    assert exp.lookup("store_structured/oob_index/0004").reason == "any store"  # type: ignore[union-attr]
    assert exp.lookup("dmovc/sat/0001") is None
    assert [e.id for e in exp.unused(["store_structured/a"])] == [
        "store_structured/oob_index/*", "store_structured/oob_index/0003"]


def test_no_file_means_no_expectations() -> None:
    assert load_expectations(None).lookup("anything") is None


@pytest.mark.parametrize(("text", "message"), [
    ("id: x\n", "expect.yaml: expected a list of entries"),
    ("- id: a\n  status: xfail\n", "expect.yaml: entry 1 (id 'a'): field reason: expected a "
     "non-empty string, got None"),
    ("- {id: a, status: xfail, reason: r}\n- {id: b, status: broken, reason: r}\n",
     "expect.yaml: entry 2 (id 'b'): field status: 'broken' is not one of fail, xfail, "
     "unsupported, skip"),
    ("- {id: a, status: xfail, reason: r, url: u}\n",
     "expect.yaml: entry 1 (id 'a'): unknown field(s) url"),
    ("- {id: a, status: xfail, reason: r}\n- {id: a, status: fail, reason: r}\n",
     "expect.yaml: entry 2 (id 'a'): duplicate id"),
    ("- [a, b]\n", "expect.yaml: entry 1: expected a mapping"),
    ("- {id: a, status: xfail, reason: r, link: 3}\n",
     "expect.yaml: entry 1 (id 'a'): field link: expected a string, got 3"),
    ("- id: [\n", "expect.yaml:2:1: YAML syntax error"),
])
def test_malformed_file_names_file_and_entry(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ExpectationError) as info:
        load_expectations(write(tmp_path, text))
    assert message in str(info.value).replace(str(tmp_path) + "/", "")
