"""``sm5 vectors check``: passes on the committed set, and names the vector and the reason
when a golden file is edited by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sm5.cli import main
from sm5.oracle.model.spec import load_default
from sm5.vectors.check import (
    check,
    check_file,
    manifest_problems,
    read_manifest,
    regeneration_problems,
    validator,
)
from sm5.vectors.generate import GOLDEN, MANIFEST
from sm5.vectors.programs import program_subjects

SPEC = load_default()
NAME = "store_structured.jsonl"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN, folder)
    return folder


def _edit_line(path: Path, pick: str, edit: object) -> tuple[int, str]:
    """Apply ``edit`` (a function of the parsed vector) to the first line containing
    ``pick``; returns the line number and the vector id."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines[1:], start=2):
        if pick in line:
            doc = json.loads(line)
            edit(doc)  # type: ignore[operator]
            lines[number - 1] = json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"
            path.write_text("".join(lines), encoding="utf-8")
            return number, doc["id"]
    raise AssertionError(f"no line with {pick!r}")


def test_the_committed_golden_set_matches_its_manifest() -> None:
    """Every instruction has its file, and every file the sha256 and count its manifest lists
    (schema, oracle re-run and regeneration are the slow check below)."""
    manifest, problems = read_manifest(GOLDEN)
    assert problems == [] and manifest is not None
    assert manifest_problems(GOLDEN, manifest, SPEC) == []
    assert {p.stem for p in GOLDEN.glob("*.jsonl")} == \
        set(SPEC.instructions) | set(program_subjects())


@pytest.mark.slow  # the oracle re-runs every golden vector and the set is regenerated
def test_the_committed_golden_set_passes_every_check() -> None:
    report = check(GOLDEN)
    assert report.problems == ()
    assert report.files == len(SPEC.instructions) + len(program_subjects())


@pytest.mark.slow  # two minutes: the check with a full regeneration, twice
def test_cli_check_exit_codes(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "check", "--dir", str(copy), "--no-regenerate",
                 "--regressions", str(copy / "none")]) == 0
    number, vid = _edit_line(copy / NAME, '"defined"', lambda d: d["state"].update(
        {k: [1, 2, 3, 4] for k in d["state"] if k.startswith("r")}) or None)
    assert main(["vectors", "check", "--dir", str(copy), "--no-regenerate",
                 "--regressions", str(copy / "none")]) == 1
    out = capsys.readouterr().out
    assert f"{NAME}:{number} {vid}:" in out


def test_a_changed_expected_value_is_reported_with_the_oracle_value(copy: Path) -> None:
    def change(doc: dict) -> None:  # type: ignore[type-arg]
        regs = doc["expect"]["state"]
        first = sorted(k for k in regs if k.startswith("r"))[0]
        regs[first][0] = (regs[first][0] + 1) % 2**32

    number, vid = _edit_line(copy / NAME, '"outcomes":["defined"]', change)
    problems = [str(p) for p in check_file(copy / NAME, SPEC)]
    assert len(problems) == 1
    assert problems[0].startswith(f"{NAME}:{number} {vid}: expected expect.state.r")
    assert "but the oracle gives" in problems[0]
    manifest, _ = read_manifest(copy)
    assert manifest is not None
    assert any("sha256" in str(p) for p in manifest_problems(copy, manifest, SPEC))
    regen = [str(p) for p in regeneration_problems(copy, manifest, SPEC, fresh=GOLDEN)]
    assert regen == [f"{NAME}:{number} {vid}: differs from the regeneration: "
                     f"{regen[0].split(': ', 2)[2]}"]
    assert "expect.state.r" in regen[0]


def test_a_broken_line_is_reported_with_its_id(copy: Path) -> None:
    path = copy / NAME
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    previous, vid = json.loads(lines[4])["id"], json.loads(lines[5])["id"]
    lines[5] = lines[5][:30] + "\n"  # cut before the id field
    path.write_text("".join(lines), encoding="utf-8")
    problems = [str(p) for p in check_file(path, SPEC)]
    assert len(problems) == 1
    assert problems[0].startswith(f"{NAME}:6 (the vector after {previous}): not JSON: ")
    manifest, _ = read_manifest(copy)
    assert manifest is not None
    regen = [str(p) for p in regeneration_problems(copy, manifest, SPEC, fresh=GOLDEN)]
    assert regen[0].startswith(f"{NAME}:6 {vid}: differs from the regeneration")


def test_a_wrong_sha256_is_reported(copy: Path) -> None:
    doc = json.loads((copy / MANIFEST).read_text(encoding="utf-8"))
    doc["files"][NAME]["sha256"] = "0" * 64
    (copy / MANIFEST).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    manifest, problems = read_manifest(copy)
    assert problems == [] and manifest is not None
    assert [str(p) for p in manifest_problems(copy, manifest, SPEC)] == [
        f"{MANIFEST}: {NAME}: sha256 {'0' * 64} but the file has "
        f"{json.loads((GOLDEN / MANIFEST).read_text())['files'][NAME]['sha256']}"]


def test_a_vector_breaking_the_schema_is_reported(copy: Path) -> None:
    number, vid = _edit_line(copy / NAME, '"rejected"',
                             lambda d: d["expect"].update({"state": {}}))
    problems = [str(p) for p in check_file(copy / NAME, SPEC, oracle=False)]
    assert problems and problems[0].startswith(f"{NAME}:{number} {vid}: schema:")


def test_an_unlisted_or_missing_file_is_reported(copy: Path) -> None:
    shutil.copy(copy / NAME, copy / "extra.jsonl")
    (copy / "dmovc.jsonl").unlink()
    manifest, _ = read_manifest(copy)
    assert manifest is not None
    messages = [str(p) for p in manifest_problems(copy, manifest, SPEC)]
    assert f"{MANIFEST}: lists dmovc.jsonl, which does not exist" in messages
    assert f"{MANIFEST}: extra.jsonl is not listed" in messages


def test_schema_rejects_malformed_vectors() -> None:
    vector = validator("vector")
    base = {"id": "dmovc/boundary/0000", "program": ["dmovc r0.xy, r1, r2, r3"],
            "target": "cs_5_0", "runtime": "11.0", "state": {"r0": [0, 0, 0, 0]},
            "expect": {"outcomes": ["defined"], "state": {"r0": [0, 0, 0, 0]}},
            "clauses": ["dmovc.select.src1"], "flags": [], "reason": ""}
    assert vector.is_valid(base)
    undefined = json.loads(json.dumps(base))
    undefined["expect"] = {"outcomes": ["dst_undefined"], "state": {"r0": [None, 0, 0, 0]}}
    assert not vector.is_valid(undefined)  # a non-exact outcome must name its clause
    undefined["expect"]["allowed_by"] = {"r0.x": ["dmovc.select.src1"]}
    assert vector.is_valid(undefined)
    for bad_accept in ({"value": 1}, {"f64": "inf"}, 2**32, -1, "1"):
        broken = json.loads(json.dumps(base))
        broken["expect"]["state"]["r0"][0] = bad_accept
        assert not vector.is_valid(broken), bad_accept
    rejected = json.loads(json.dumps(base))
    rejected["expect"] = {"outcomes": ["rejected"], "rule": "dmovc.legal.doubles_feature"}
    assert vector.is_valid(rejected)
    rejected["expect"]["state"] = {}
    assert not vector.is_valid(rejected)


def test_schema_outcomes_are_the_oracle_vocabulary() -> None:
    OUTCOMES = load_default().model.outcome_names

    defs = validator().schema
    schema_text = json.dumps(defs)
    for outcome in OUTCOMES:
        assert f'"{outcome}"' in schema_text
    executed = validator("vector").schema
    outcome_enum = executed["properties"]["expect"]["anyOf"][0]["properties"]["outcomes"][
        "items"]["enum"]
    assert set(outcome_enum) | {"rejected"} == set(OUTCOMES)
