"""Must-reject ids are stable: the golden file is the id ledger. A case a new rule or register
file adds takes a number after every other, and changes no other vector's id or bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sm5.vectors import generate as gen
from sm5.vectors.ledger import IdLedger, read_ledger
from sm5.vectors.shapes import GenerationError

GOLDEN = Path(gen.__file__).resolve().parent / "golden"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[1:]


def test_a_known_case_keeps_its_number_and_a_new_one_is_appended() -> None:
    ledger = IdLedger({("reject", "a"): [3, 7], ("reject", "b"): [5]}, {"reject": 8})
    assert [ledger.number("reject", r) for r in ("c", "a", "b", "a", "a")] == [8, 3, 5, 7, 9]


def test_a_broken_ledger_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"header": 1}\n{"id": "x/reject/00a1", "reason": "r"}\n', encoding="utf-8")
    with pytest.raises(GenerationError, match=r"x.jsonl line 2"):
        read_ledger(path, "x")


def test_cases_missing_from_the_ledger_come_last_and_change_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "sync"
    golden = _lines(GOLDEN / f"{name}.jsonl")
    rejects = [line for line in golden if f'"{name}/reject/' in line]
    # A ledger from before two cases existed: the golden file without its reject cases 2 and 5
    # (as a file made before the rules or register files that added them).
    dropped = {json.loads(rejects[2])["id"], json.loads(rejects[5])["id"]}
    older = tmp_path / "older"
    older.mkdir()
    kept = [line for line in golden if json.loads(line)["id"] not in dropped]
    (older / f"{name}.jsonl").write_text("{}\n" + "\n".join(kept) + "\n", encoding="utf-8")
    monkeypatch.setattr(gen, "GOLDEN", older)
    out = tmp_path / "out"
    gen.generate(out, instructions=[name], jobs=1)
    made = _lines(out / f"{name}.jsonl")
    made_ids = [json.loads(line)["id"] for line in made]
    # Every vector the older ledger had is made again byte for byte under its id ...
    assert set(kept) <= set(made)
    # ... and the two cases it lacked are numbered after every other, at the section's end.
    last = max(int(i.rsplit("/", 1)[1]) for i in made_ids if "/reject/" in i)
    new = sorted(set(made) - set(kept))
    assert len(new) == 2
    new_ids = sorted(json.loads(line)["id"] for line in new)
    assert new_ids == [f"{name}/reject/{last - 1:04d}", f"{name}/reject/{last:04d}"]
    reject_ids = [i for i in made_ids if "/reject/" in i]
    assert reject_ids[-2:] == new_ids
    # Their contents are those of the golden cases they stand for, under new ids.
    by_reason = {json.loads(r)["reason"]: json.loads(r) for r in rejects
                 if json.loads(r)["id"] in dropped}
    for line in new:
        doc = json.loads(line)
        twin = by_reason[doc["reason"]]
        assert {**doc, "id": twin["id"]} == twin
