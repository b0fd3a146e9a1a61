"""The generator: deterministic, independent of the number of processes, streamed in parts
whose ids continue across chunks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sm5.oracle.model.spec import load_default
from sm5.vectors.format import read_file
from sm5.vectors.generate import MANIFEST, PLANS, generate
from sm5.vectors.points import LEVEL_BUDGETS

SPEC = load_default()
SMALL = dataclasses.replace(PLANS[1], random_cases=7, random_chunk=3,
                            budget=LEVEL_BUDGETS[1])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_same_seed_same_bytes_whatever_the_processes(tmp_path: Path) -> None:
    one = generate(tmp_path / "a", instructions=["dmovc"], jobs=1, plan=SMALL)
    two = generate(tmp_path / "b", instructions=["dmovc"], jobs=2, plan=SMALL)
    assert one == two
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    other = generate(tmp_path / "c", instructions=["dmovc"], jobs=1, plan=SMALL, seed=1)
    assert _files(tmp_path / "c")["dmovc.jsonl"] != _files(tmp_path / "a")["dmovc.jsonl"]
    assert other[0].count > 0


def test_random_chunks_continue_the_numbering(tmp_path: Path) -> None:
    generate(tmp_path, instructions=["store_structured"], jobs=2, plan=SMALL)
    header, vectors = read_file(tmp_path / "store_structured.jsonl")
    ids = [v.id for v in vectors]
    assert header.count == len(ids)
    random_ids = [i for i in ids if "/random/" in i]
    assert random_ids == [f"store_structured/random/{k:04d}" for k in range(7)]
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    entry = manifest["files"]["store_structured.jsonl"]
    assert entry["count"] == len(ids)
    assert sum(1 for _ in tmp_path.glob(".*")) == 0  # no part files left behind
