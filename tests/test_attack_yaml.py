"""YAML attacks on the spec and expectations loaders: alias bombs, deep nesting, huge files,
bytes that are not UTF-8. Each ends in one clear error (exit 2) within seconds and bounded
memory, naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bounded_run import one_error_line, run_sm5

from sm5.oracle.errors import SpecError, bounded
from sm5.oracle.files.yamlio import MAX_YAML_BYTES, load_yaml

SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"

BOMB = "\n".join([
    "a: &a ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol']",
    *(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]"
      for i in range(8)),
])


def _bombed_spec(tmp_path: Path) -> Path:
    """A copy of spec/ whose model.yaml has a string field holding a nine-level alias bomb."""
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    model = root / "model.yaml"
    text = model.read_text(encoding="utf-8")
    model.write_text(BOMB + "\n" + text.replace("version:", "version: *i\nx_version:", 1),
                     encoding="utf-8")
    return root


def test_alias_bomb_in_spec_file_is_refused(tmp_path: Path) -> None:
    root = _bombed_spec(tmp_path)
    done = run_sm5(["spec", "check", "--spec", str(root)], seconds=60)
    assert done.code == 2
    line = one_error_line(done)
    assert "model.yaml" in line and "only scalars may be aliased" in line


BOMB_LIST = "\n".join([
    "- &a ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol']",
    *(f"- &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)),
])


def test_alias_bomb_in_expectations_file_is_refused(tmp_path: Path) -> None:
    expect = tmp_path / "known.yaml"
    expect.write_text(BOMB_LIST + "\n- {id: x, status: fail, reason: *i}\n", encoding="utf-8")
    vectors = Path(__file__).resolve().parents[1] / "vectors" / "golden" / "dmovc.jsonl"
    done = run_sm5(["conform", "--impl", "oracle", "--vectors", str(vectors), "--expect",
                    str(expect)], seconds=60)
    assert done.code == 2
    line = one_error_line(done)
    assert "known.yaml" in line and "only scalars may be aliased" in line


def test_scalar_aliases_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("- {reason: &r text, link: &l x}\n- {reason: *r, link: *l}\n",
                    encoding="utf-8")
    assert load_yaml(path) == [{"reason": "text", "link": "x"}] * 2


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a\n  b: *a\n", encoding="utf-8")
    with pytest.raises(SpecError, match="only scalars may be aliased"):
        load_yaml(path)


@pytest.mark.parametrize("depth", [100, 2000])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    """libyaml stops at 1,000 levels; the loader stops far earlier, at its own limit."""
    path = tmp_path / "deep.yaml"
    path.write_text("[" * depth + "]" * depth + "\n", encoding="utf-8")
    with pytest.raises(SpecError, match="nest") as caught:
        load_yaml(path)
    assert str(path) in str(caught.value)


def test_huge_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as out:
        out.truncate(MAX_YAML_BYTES + 1)
    with pytest.raises(SpecError, match="larger than"):
        load_yaml(path)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bytes.yaml"
    path.write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(SpecError, match="not UTF-8") as caught:
        load_yaml(path)
    assert f"{path}:2" in str(caught.value)


def test_schema_message_is_capped(tmp_path: Path) -> None:
    """A long list where a string belongs: the message quotes a bounded prefix of it."""
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    model = root / "model.yaml"
    text = model.read_text(encoding="utf-8")
    huge = "[" + ", ".join(["lol"] * 50_000) + "]"
    model.write_text(text.replace("kind: functional-spec", f"kind: {huge}", 1),
                     encoding="utf-8")
    done = run_sm5(["spec", "check", "--spec", str(root)], seconds=60)
    assert done.code == 2
    line = one_error_line(done)
    assert "more characters" in line and len(line) < 1000


def test_bounded() -> None:
    assert bounded("abc", 5) == "abc"
    assert bounded("x" * 10, 4) == "xxxx... (6 more characters)"
