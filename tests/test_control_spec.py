"""Bad flow-control data is one clear error naming the file (and the field or clause), never a
traceback: an unknown effect, a clause reading an unknown variable or not a condition, the
effects out of the interpreter's order, a label operand of another file, an unknown erratum,
an outcome the model lacks, a missing folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sm5.oracle.errors import Sm5Error
from sm5.oracle.model.spec import default_root, load_spec


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    copy = tmp_path / "spec"
    shutil.copytree(default_root(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def error(root: Path) -> str:
    with pytest.raises(Sm5Error) as info:
        load_spec(root)
    return str(info.value)


def test_the_real_spec_loads(root: Path) -> None:
    assert len(load_spec(root).control.instructions) == 20


@pytest.mark.parametrize("file, old, new, expected", [
    ("control/breakc.yaml", "effect: leave", "effect: jump", "breakc.yaml: field effect: 'jump'"),
    ("control/breakc.yaml", "when: \"not acts\"", "when: \"not taken\"",
     "reads unknown variable(s) taken"),
    ("control/breakc.yaml", "when: \"not acts\"", "when: \"depth + 1\"",
     "has type int, not bool: not a condition"),
    ("control/call.yaml", "files: [label]", "files: [r]", "a label operand, and only it"),
    ("control/if.yaml", "control.if_test_sense", "control.no_such", "unknown erratum"),
    ("control.yaml", "  - {name: leave,", "  - {name: depart,", "effects: expected"),
    ("control.yaml", "steps_outcome: unbounded", "steps_outcome: forever",
     "'forever' is not an outcome of model.yaml"),
    ("control.yaml", "demote_to: discarded", "demote_to: asleep", "demote_to: 'asleep'"),
    ("control/nop.yaml", "name: nop", "name: noop", "differs from the file name"),
])
def test_bad_flow_control_data_names_the_file(root: Path, file: str, old: str, new: str,
                                              expected: str) -> None:
    edit(root / file, old, new)
    message = error(root)
    assert expected in message
    assert Path(file).name in message or "control" in message


def test_a_missing_control_folder_is_named(root: Path) -> None:
    shutil.rmtree(root / "control")
    (root / "control").mkdir()
    assert "no flow-control instruction files" in error(root)
