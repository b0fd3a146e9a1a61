"""``sm5 vectors check`` is incremental: a golden file is re-checked when it, its instruction's
spec, the shared definitions it uses or the code changed since it last passed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sm5.cli import main
from sm5.oracle.model.spec import load_default
from sm5.vectors import incremental
from sm5.vectors.generate import GOLDEN
from sm5.vectors.programs import program_subjects

SPEC = load_default()
ROOT = Path(SPEC.root)
GENERATOR = {"level": 1, "seed": 0}


def test_dependencies_follow_the_templates_and_the_shared_blocks_used() -> None:
    for name, ins in SPEC.instructions.items():
        deps = incremental.dependencies(ROOT, name)
        assert ROOT / "instructions" / f"{name}.yaml" in deps
        assert (ROOT / "shared" / "memory.yaml" in deps) == (ins.semantics.memory is not None)
        assert ROOT / "model.yaml" in deps
        text = (ROOT / "instructions" / f"{name}.yaml").read_text(encoding="utf-8")
        for line in text.splitlines():
            if line.startswith("extends:"):
                assert ROOT / "templates" / f"{line.split()[1]}.yaml" in deps


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _keys(root: Path) -> dict[str, str]:
    return {p.stem: incremental.file_key(p, root, GENERATOR)
            for p in sorted(GOLDEN.glob("*.jsonl"))}


def test_a_change_reaches_exactly_the_files_that_depend_on_it(spec_copy: Path) -> None:
    memory_users = {n for n, i in SPEC.instructions.items() if i.semantics.memory is not None}
    assert memory_users and set(SPEC.instructions) - memory_users
    before = _keys(spec_copy)
    assert _keys(spec_copy) == before  # stable

    def changed_after(path: Path) -> set[str]:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\n# an edit\n")
        after = _keys(spec_copy)
        moved = {n for n in before if after[n] != before[n]}
        before.update(after)
        return moved

    one = sorted(SPEC.instructions)[0]
    programs = set(program_subjects())  # a file of programs may use any instruction
    assert programs
    assert changed_after(spec_copy / "instructions" / f"{one}.yaml") == {one} | programs
    assert changed_after(spec_copy / "shared" / "memory.yaml") == memory_users | programs
    assert changed_after(spec_copy / "model.yaml") == set(SPEC.instructions) | programs
    users = {n for n in SPEC.instructions
             if spec_copy / "templates" / "atomic.yaml" in incremental.dependencies(spec_copy, n)}
    assert users and changed_after(spec_copy / "templates" / "atomic.yaml") == users | programs
    assert incremental.file_key(GOLDEN / f"{one}.jsonl", spec_copy, {"level": 1, "seed": 5}) \
        != before[one]


def test_a_record_that_cannot_be_read_means_a_full_check(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "golden"
    assert incremental.read_record(folder) == {}
    incremental.write_record(folder, {"a.jsonl": "k"})
    assert incremental.read_record(folder) == {"a.jsonl": "k"}
    incremental.record_path(folder).write_text("{not json", encoding="utf-8")
    assert incremental.read_record(folder) == {}


@pytest.mark.slow  # checks the whole golden set once, then only what an edit touches
def test_cli_rechecks_only_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN, folder)
    files = len(list(folder.glob("*.jsonl")))
    assert main(["vectors", "check", "--dir", str(folder), "--quiet"]) == 0
    assert f"vectors ok: {files} files" in capsys.readouterr().out
    assert main(["vectors", "check", "--dir", str(folder), "--quiet"]) == 0
    assert f"0 files, 0 vectors; schema, oracle and manifest agree; the regeneration is " \
           f"byte-identical; {files} unchanged" in capsys.readouterr().out
    # A hand edit of one file: only that file is checked again, and it fails.
    path = sorted(folder.glob("*.jsonl"))[0]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace('"runtime":"11.0"', '"runtime":"11.1"', 1) \
        if '"runtime":"11.0"' in lines[1] else lines[1].replace('"11.1"', '"11.0"', 1)
    path.write_text("".join(lines), encoding="utf-8")
    assert main(["vectors", "check", "--dir", str(folder), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert f"{path.name}:2" in out
    assert all(other.name not in out for other in folder.glob("*.jsonl") if other != path)
