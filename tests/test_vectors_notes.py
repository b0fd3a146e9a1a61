"""Vector file headers: ``notes`` gives the meaning of every flag the file uses (from the one
table, ``$defs/flag`` of the vector schema), and every reader enforces ``count``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.conformance.run import iter_selected
from sm5.oracle.cli.dxbc import export
from sm5.oracle.errors import Sm5Error
from sm5.oracle.model.spec import load_default
from sm5.vectors.check import check_file
from sm5.vectors.format import read_file
from sm5.vectors.generate import GOLDEN

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "spec" / "schema" / "vector.schema.json").read_text("utf-8"))
TABLE = {entry["const"]: entry["description"] for entry in SCHEMA["$defs"]["flag"]["oneOf"]}


def test_every_flag_has_a_meaning() -> None:
    assert len(TABLE) == len(SCHEMA["$defs"]["flag"]["oneOf"])  # no flag twice
    assert all(len(text) > 10 for text in TABLE.values())


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.jsonl")), ids=lambda p: p.stem)
def test_golden_notes_explain_exactly_the_flags_used(path: Path) -> None:
    with path.open(encoding="utf-8") as handle:
        header = json.loads(handle.readline())
        used = {flag for line in handle for flag in json.loads(line)["flags"]}
    assert used
    assert header["notes"] == {flag: TABLE[flag] for flag in sorted(used)}
    assert list(header["notes"]) == sorted(used)


def test_written_files_carry_notes(tmp_path: Path) -> None:
    vectors = all_vectors()
    path = write_vectors(tmp_path / "cases.jsonl", vectors)
    header, _ = read_file(path)
    assert dict(header.notes) == {f: TABLE[f] for f in sorted({f for v in vectors
                                                              for f in v.flags})}


def _edited(tmp_path: Path, how: str) -> Path:
    path = write_vectors(tmp_path / "cases.jsonl", all_vectors())
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if how == "truncated":
        lines = lines[:-2]
    else:
        extra = json.loads(lines[-1])
        extra["id"] += "-extra"
        lines.append(json.dumps(extra) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _read_all(path: Path) -> None:
    _, vectors = read_file(path)
    list(vectors)


READERS: dict[str, Callable[[Path], object]] = {
    "format.read_file": _read_all,
    "conformance selection": lambda path: list(iter_selected([path])),
    "dxbc export": lambda path: export([path], path.parent / "dxbc"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(("how", "message"), [
    ("truncated", f"the header counts {len(all_vectors())} vectors but the file holds "
                  f"{len(all_vectors()) - 2} lines after it"),
    ("extended", f"the header counts {len(all_vectors())} vectors but the file holds "
                 f"{len(all_vectors()) + 1} lines after it"),
])
def test_every_reader_enforces_count(tmp_path: Path, reader: str, how: str,
                                     message: str) -> None:
    path = _edited(tmp_path, how)
    with pytest.raises(Sm5Error) as caught:
        READERS[reader](path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{path}:1")  # the header's line, before any vector


def test_check_and_conform_report_a_wrong_count(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with (GOLDEN / "store_structured.jsonl").open(encoding="utf-8") as handle:
        header = json.loads(handle.readline())
        body = [handle.readline() for _ in range(18)]
    header["count"] = 20  # two vector lines short
    path = tmp_path / "store_structured.jsonl"
    path.write_text(json.dumps(header, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False) + "\n" + "".join(body), encoding="utf-8")
    problems = [str(p) for p in check_file(path, load_default(), oracle=False)]
    assert problems == ["store_structured.jsonl:1: header count 20 but the file holds 18 "
                        "vectors"]
    assert main(["conform", "--impl", "oracle", "--vectors", str(path), "--quiet"]) == 2
    assert f"{path}:1: the header counts 20 vectors" in capsys.readouterr().err
