"""The representative subset (``sm5.conformance.subset``): the rule on small sets written here,
and its properties on the golden set."""

from __future__ import annotations

from typing import Any

import pytest

from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.subset import PER_KEY, representative
from sm5.vectors.format import Vector


def vec(vid: str, clauses: tuple[str, ...] = (), flags: tuple[str, ...] = (),
        rejected: bool = False) -> Vector:
    expect: dict[str, Any] = {"outcomes": ["rejected"] if rejected else ["defined"]}
    if rejected:
        expect["rule"] = "r"
    return Vector(vid, ("ret",), "cs_5_0", "11.0", {}, expect, clauses, flags)


def test_per_clause_flag_and_section_then_whole_sections() -> None:
    vectors = [
        vec("a/boundary/0001", ("a.x",)),
        vec("a/boundary/0002", ("a.x",)),
        vec("a/boundary/0003", ("a.x",)),            # a.x and a/boundary have 2 already
        vec("a/boundary/0004", ("a.x", "a.y")),      # a.y is new
        vec("a/boundary/0005", ("a.x",), ("nan",)),  # the flag nan is new
        vec("a/alias/0001", ("a.x",)),
        vec("a/alias/0002", ("a.x",)),
        vec("a/alias/0003", ("a.x",)),               # alias: kept whole
        vec("a/cell/0001", rejected=True),           # rejected: never kept
        vec("b/random/0001", ("a.x",)),              # a new (instruction, section)
    ]
    assert PER_KEY == 2
    assert representative(vectors) == (
        "a/boundary/0001", "a/boundary/0002", "a/boundary/0004", "a/boundary/0005",
        "a/alias/0001", "a/alias/0002", "a/alias/0003", "b/random/0001")
    assert representative(vectors, per_key=1) == (
        "a/boundary/0001", "a/boundary/0004", "a/boundary/0005", "a/alias/0001",
        "a/alias/0002", "a/alias/0003", "b/random/0001")


def test_limit_vectors_are_kept_per_declaration() -> None:
    """The same declaration edge under several instructions is kept PER_KEY times, a new one
    always."""
    def limit(vid: str, dcl: str) -> Vector:
        return Vector(vid, (dcl, "op u0"), "cs_5_0", "11.0", {}, {"outcomes": ["defined"]},
                      ("x.c",))

    vectors = [limit("a/limit/0001", "dcl_uav_raw u63"), limit("a/limit/0002", "dcl_uav_raw u7"),
               limit("b/limit/0001", "dcl_uav_raw u63"), limit("b/limit/0002", "dcl_uav_raw u7"),
               limit("c/limit/0001", "dcl_uav_raw u63"), limit("c/limit/0002", "dcl_uav_raw u1")]
    assert representative(vectors) == ("a/limit/0001", "a/limit/0002", "b/limit/0001",
                                       "b/limit/0002", "c/limit/0001", "c/limit/0002")
    assert representative(vectors, per_key=1) == ("a/limit/0001", "a/limit/0002",
                                                  "b/limit/0001", "c/limit/0001",
                                                  "c/limit/0002")


@pytest.mark.slow  # long tier (docs/testing.md)
def test_golden_subset_covers_every_clause_and_is_small() -> None:
    vectors = [v for _, _, v in iter_selected(vector_files(None))]
    subset = representative(vectors)
    assert subset == representative(vectors)  # deterministic
    chosen = set(subset)
    executable = [v for v in vectors if not v.rejected]
    kept = [v for v in executable if v.id in chosen]
    assert {c for v in executable for c in v.clauses} == {c for v in kept for c in v.clauses}
    assert {f for v in executable for f in v.flags} == {f for v in kept for f in v.flags}
    assert len(kept) == len(subset)
    assert len(subset) * 10 < len(executable)
