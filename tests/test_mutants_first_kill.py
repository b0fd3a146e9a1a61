"""The pipeline's mutant step: each mutant's first killing vector, in the order given, is the
first of the vectors the whole kill matrix names for it; a mutant nothing kills gets none."""

from __future__ import annotations

from pathlib import Path

from sm5.conformance.cli import first_kills, kill_matrix
from sm5.vectors.format import read_file

GOLDEN = Path(__file__).resolve().parent.parent / "vectors" / "golden"


def test_first_kills_agree_with_the_kill_matrix() -> None:
    # the aliased section of one atomic: it kills a few mutants and leaves most alive
    vectors = [v for v in read_file(GOLDEN / "imm_atomic_iadd.jsonl")[1]
               if v.id.startswith("imm_atomic_iadd/alias/")]
    vectors.reverse()  # an order that is not the file's: "first" is the given order
    whole = kill_matrix(vectors)
    first = first_kills(vectors)
    assert set(first.killing) == set(whole.killing)
    order = [v.id for v in vectors]
    for name, ids in whole.killing.items():
        expected = [min(ids, key=order.index)] if ids else []
        assert first.killing[name] == expected, name
    killed = [name for name, ids in first.killing.items() if ids]
    assert "atomic_returns_new" in killed  # the README's example: the aliased vectors see it
    assert len(killed) < len(first.killing)  # and most mutants live on this section alone
    assert all(ids == [] for ids in first.reaching.values())
