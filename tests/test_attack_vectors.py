"""Malformed vector files against every reader: ``sm5 conform``, ``sm5 dxbc``, ``sm5 report``
and the pytest plugin. Each defect ends in one clear error naming the file and line, within
seconds and bounded memory, with no traceback; ``sm5 vectors check`` reports it as a problem.

The files are a valid file (two hand-picked vectors) with one edit each, the defects found by
fuzzing the readers: bytes that are not UTF-8, an integer of 4,301 digits, a float where the
header's count belongs, 2,000 nested brackets, fields of the wrong type, a header count that is
wrong or negative, a file cut at a line boundary or in the middle of a line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bounded_run import Completed, one_error_line
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.oracle.files.jsonl import read_lines
from sm5.vectors.format import VectorError, read_file

Edit = Callable[[list[bytes]], list[bytes]]


def _vector_field(line: int, path: tuple[str, ...], value: Any) -> Edit:
    def edit(lines: list[bytes]) -> list[bytes]:
        doc = json.loads(lines[line])
        here = doc
        for key in path[:-1]:
            here = here[key]
        here[path[-1]] = value
        return [*lines[:line], json.dumps(doc).encode() + b"\n", *lines[line + 1:]]
    return edit


def _replace_line(line: int, raw: bytes) -> Edit:
    return lambda lines: [*lines[:line], raw + b"\n", *lines[line + 1:]]


def _header(**fields: Any) -> Edit:
    return _vector_field(0, tuple(fields), next(iter(fields.values())))


def _first_structured(lines: list[bytes]) -> int:
    return next(i for i, x in enumerate(lines) if b'"structured"' in x and i > 0)


def _stride(value: Any) -> Edit:
    def edit(lines: list[bytes]) -> list[bytes]:
        i = _first_structured(lines)
        return _vector_field(i, ("state", "u0", "stride"), value)(lines)
    return edit


ATTACKS: dict[str, tuple[Edit, str]] = {
    "invalid-utf8": (_replace_line(1, b'{"id": "\xff\xfe"}'), "not UTF-8"),
    "4301-digit-integer": (_replace_line(1, b'{"id": ' + b"9" * 4301 + b"}"),
                           "not JSON this reader accepts"),
    "count-1e999": (lambda lines: [lines[0].replace(b'"count":', b'"count":1e999,"x":'),
                                   *lines[1:]], "header field count"),
    "nested-brackets": (_replace_line(1, b"[" * 2000 + b"]" * 2000), "nested too deeply"),
    "clauses-5": (_vector_field(1, ("clauses",), 5), "field clauses"),
    "outcomes-5": (_vector_field(1, ("expect", "outcomes"), 5), "field outcomes"),
    "stride-object": (_stride({}), "stride"),
    "stride-string": (_stride("x"), "stride"),
    "count-wrong": (_header(count=1), "the header counts 1 vectors"),
    "count-negative": (_header(count=-3), "header field count"),
    "cut-at-line": (lambda lines: lines[:-1], "the header counts"),
    "cut-in-line": (lambda lines: [*lines[:-1], lines[-1][:40]], "cut short"),
    "subject-past-the-program": (_vector_field(1, ("subject",), [7]), "field subject"),
    "subject-text": (_vector_field(1, ("subject",), "dadd"), "field subject"),
    "steps-not-objects": (_vector_field(1, ("steps",), [1, 2]), "field steps"),
    "format-3": (_header(format="sm5-vectors/3"), "sm5-vectors/2"),
    "format-list": (_header(format=[]), "sm5-vectors/2"),
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    path = write_vectors(tmp_path_factory.mktemp("clean") / "clean.jsonl", all_vectors())
    return path.read_bytes().splitlines(keepends=True)


def _attacked(tmp_path: Path, clean: list[bytes], name: str) -> Path:
    edit, _ = ATTACKS[name]
    path = tmp_path / "attacked.jsonl"
    path.write_bytes(b"".join(edit(list(clean))))
    return path


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_read_file_raises_one_vector_error(tmp_path: Path, clean: list[bytes],
                                           name: str) -> None:
    path = _attacked(tmp_path, clean, name)
    with pytest.raises(VectorError) as caught:
        _, vectors = read_file(path)
        for _ in vectors:
            pass
    assert ATTACKS[name][1] in str(caught.value)
    assert str(path) in str(caught.value)


# sm5 dxbc reads only the fields it needs: the types of clauses, subject and steps cannot matter
DXBC_IGNORES = {"clauses-5", "steps-not-objects", "subject-past-the-program", "subject-text"}
READER_CASES = [(command, name) for command in ("conform", "dxbc", "report")
                for name in sorted(ATTACKS) if command != "dxbc" or name not in DXBC_IGNORES]


@pytest.mark.parametrize(("command", "name"), READER_CASES)
def test_cli_readers_give_one_clear_error(tmp_path: Path, clean: list[bytes], name: str,
                                          command: str, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    """In process (the subprocess limits are exercised by the bomb tests): exit 2 and one
    error line, within seconds."""
    path = _attacked(tmp_path, clean, name)
    args = {"conform": ["conform", "--impl", "oracle", "--vectors", str(path)],
            "dxbc": ["dxbc", "--vectors", str(path), "--out", str(tmp_path / "dxbc")],
            "report": ["report", "--vectors", str(path), "--out", str(tmp_path / "report")],
            }[command]
    start = time.monotonic()
    code = main(args)
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert code == 2, err[-2000:]
    line = one_error_line(Completed(code, "", err))
    assert "attacked.jsonl" in line
    if command != "dxbc":  # dxbc words its field errors its own way
        assert ATTACKS[name][1] in line, line


# One pytest process per attack: the default run keeps two (the reader layer is shared, and the
# command-line readers above meet every attack); -m slow runs them all.
PLUGIN_DEFAULT = {"invalid-utf8", "count-wrong"}


@pytest.mark.parametrize("name", [
    name if name in PLUGIN_DEFAULT else pytest.param(name, marks=pytest.mark.slow)
    for name in sorted(ATTACKS)])
def test_plugin_reports_a_collection_error(tmp_path: Path, clean: list[bytes],
                                           name: str) -> None:
    path = _attacked(tmp_path, clean, name)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "--sm5-impl=oracle", f"--sm5-vectors={path}", "-q"], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert ATTACKS[name][1] in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_vectors_check_reports_a_problem(tmp_path: Path, clean: list[bytes], name: str) -> None:
    from sm5.oracle.model.spec import load_default
    from sm5.vectors.check import check_file
    path = _attacked(tmp_path, clean, name)
    problems = check_file(path, load_default(), oracle=False)
    assert problems


def test_read_lines_checks_count_before_reading(tmp_path: Path) -> None:
    """A header that promises more vectors than the file holds fails before any line is read."""
    path = tmp_path / "short.jsonl"
    path.write_bytes(b'{"count":5,"format":"sm5-vectors/1","generator":{},"instruction":"x",'
                     b'"spec_version":"0"}\n{}\n')
    with pytest.raises(Exception, match="counts 5 vectors but the file holds 1"):
        read_lines(path)
