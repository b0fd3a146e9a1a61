"""Every command and every vector the README and the documentation site show is run or checked,
so none can drift from the code:

- an ``sm5`` command is parsed by the real command line (a synopsis with ``[--option ...]`` has
  each option checked against the subcommand); the README's tour is run and its output is the
  block under it;
- a ``pytest`` command names only options the plugin or pytest has; ``bash scripts/...`` and
  ``python benchmarks/...`` name files and options that exist;
- a request and a reply of the JSON Lines protocol are what ``sm5 requests`` sends and a passing
  answer;
- a JSON block holding a ``program`` is a vector: valid against the vector schema and equal to
  the golden vector of its id; a YAML block holding a hand case is valid against the hand schema
  and equal to the case of that name in ``tests/hand/``.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hand_cases import _schema_problem

from sm5.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: Programs shown only as stand-ins for the reader's own (an implementation, a file viewer).
STAND_INS = {"node", "cat"}
#: Options of pytest itself and of pytest-xdist that the docs use.
PYTEST_OPTIONS = {"-n", "-m", "-q", "-k", "--junitxml"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> Iterator[Block]:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            yield Block(page, text.count("\n", 0, match.start()) + 1, match.group(1),
                        match.group(2))


BLOCKS = list(blocks())


def commands(block: Block) -> Iterator[str]:
    """The commands of a shell block (every line) or of a transcript (lines after ``$ ``),
    continuation lines joined and ``&&`` chains split."""
    lines = block.text.splitlines()
    joined: list[str] = []
    for raw in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + raw.strip()
        else:
            joined.append(raw.strip())
    for line in joined:
        if block.lang == "sh":
            command = line
        elif line.startswith("$ "):
            command = line[2:]
        else:
            continue
        for part in command.split("&&"):
            if part.strip() and not part.strip().startswith("#"):
                yield part.strip()


COMMANDS = [(block, command) for block in BLOCKS if block.lang in ("sh", "")
            for command in commands(block)]


def words(command: str) -> list[str]:
    """The command's words up to its first redirection, without comments."""
    out = []
    for word in shlex.split(command, comments=True):
        if word in ("<", ">", ">>", "|"):
            break
        out.append(word)
    return out


@cache
def subcommands() -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found[" ".join(path)] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*path, name))

    walk(build_parser(), ())
    return found


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings}


def check_sm5(argv: list[str], where: str) -> None:
    if any(w.startswith("[") for w in argv):  # a synopsis: every option it names exists
        path = [w for w in argv[:2] if not w.startswith(("-", "["))]
        while " ".join(path) not in subcommands():
            path.pop()
        known = options_of(subcommands()[" ".join(path)])
        named = {m for w in argv for m in re.findall(r"--[a-z][a-z0-9-]*", w)}
        assert named <= known, f"{where}: sm5 {' '.join(path)} has no {sorted(named - known)}"
        return
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: sm5 {' '.join(argv)} does not parse (exit {exc.code})")


@cache
def plugin_options() -> set[str]:
    from sm5.conformance import plugin

    class Group:
        def __init__(self) -> None:
            self.names: set[str] = set()

        def addoption(self, *names: str, **_: Any) -> None:
            self.names.update(names)

    group = Group()

    class Parser:
        def getgroup(self, *_: Any, **__: Any) -> Group:
            return group

        def addini(self, *_: Any, **__: Any) -> None:
            pass

    plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    return group.names


@pytest.mark.parametrize(("block", "command"), COMMANDS,
                         ids=[f"{b}:{c[:40]}" for b, c in COMMANDS])
def test_every_command_is_real(block: Block, command: str) -> None:
    argv = words(command)
    assert argv, f"{block}: an empty command"
    program, args = argv[0], argv[1:]
    where = str(block)
    if program in ("sm5", ".venv/bin/sm5"):
        check_sm5(args, where)
    elif program in ("pytest", ".venv/bin/pytest") or argv[:3] in (
            [".venv/bin/python", "-m", "pytest"], ["python", "-m", "pytest"]):
        if program.endswith("python"):
            args = args[2:]
        named = {w.split("=")[0] for w in args if w.startswith("-")}
        unknown = named - plugin_options() - PYTEST_OPTIONS
        assert not unknown, f"{where}: pytest has no option {sorted(unknown)}"
    elif program == "bash":
        script = ROOT / args[0]
        assert script.is_file(), f"{where}: no {args[0]}"
        source = script.read_text(encoding="utf-8")
        for option in args[1:]:
            assert f"{option})" in source, f"{where}: {args[0]} takes no {option}"
    elif program in ("python", ".venv/bin/python") and args[0].startswith("benchmarks/"):
        script = ROOT / args[0]
        assert script.is_file(), f"{where}: no {args[0]}"
        source = script.read_text(encoding="utf-8")
        for option in re.findall(r"--[a-z][a-z0-9-]*", command):
            assert f'"{option}"' in source, f"{where}: {args[0]} has no {option}"
    else:
        assert program in STAND_INS, f"{where}: an unknown command {program!r}"


def test_the_readme_tour_prints_what_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """The tour's conformance runs are run, and print exactly the block under them."""
    readme = [b for b in BLOCKS if b.page.name == "README.md"]
    tour = next(i for i, b in enumerate(readme) if "sm5 conform" in b.text)
    printed = []
    for command in commands(readme[tour]):
        code = main(words(command)[1:])
        printed.append((code, capsys.readouterr().out))
    assert [code for code, _ in printed] == [0, 1]  # the mutant fails
    assert "".join(out for _, out in printed) == readme[tour + 1].text


@cache
def vector_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "spec" / "schema" / "vector.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


@cache
def golden_line(vector_id: str) -> Any:
    path = ROOT / "vectors" / "golden" / f"{vector_id.split('/')[0]}.jsonl"
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if f'"id":"{vector_id}"' in line:
                return json.loads(line)
    raise AssertionError(f"{vector_id} is not in {path.name}")


VECTOR_BLOCKS = [b for b in BLOCKS if b.lang == "json" and '"program"' in b.text]


@pytest.mark.parametrize("block", VECTOR_BLOCKS, ids=str)
def test_every_vector_shown_is_valid_and_golden(block: Block) -> None:
    doc = json.loads(block.text)
    problems = [e.message for e in vector_validator().iter_errors(doc)]
    assert problems == [], f"{block}: {problems[:3]}"
    assert doc == golden_line(doc["id"]), f"{block}: differs from the golden {doc['id']}"


def test_the_docs_show_vectors() -> None:
    pages = {b.page.name for b in VECTOR_BLOCKS}
    assert {"README.md", "vectors.md"} <= pages
    assert len(VECTOR_BLOCKS) > 48  # the worked examples and each instruction page's


@cache
def hand_cases() -> dict[str, Any]:
    """Every committed hand case by name (names are unique across the hand files)."""
    return {case["name"]: case for path in sorted((ROOT / "tests" / "hand").glob("*.yaml"))
            for case in yaml.safe_load(path.read_text("utf-8"))["cases"]}


HAND_BLOCKS = [b for b in BLOCKS if b.lang == "yaml" and re.search(r"^- name: ", b.text, re.M)
               and "expect:" in b.text]


@pytest.mark.parametrize("block", HAND_BLOCKS, ids=str)
def test_every_hand_case_shown_is_valid_and_committed(block: Block) -> None:
    for case in yaml.safe_load(block.text):
        assert _schema_problem(case, "case") is None, f"{block}: {_schema_problem(case, 'case')}"
        assert case == hand_cases().get(case["name"]), f"{block}: {case['name']}"


def test_the_docs_show_hand_cases() -> None:
    assert len(HAND_BLOCKS) > 48


@pytest.mark.slow  # long tier (docs/testing.md)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs build --strict: a broken link, an unknown anchor or a page left out fails."""
    pytest.importorskip("mkdocs", reason="mkdocs-material is not installed "
                        "(pip install -e '.[docs]', which scripts/setup.sh does)")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=False,
                         env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "site" / "instructions" / "dmovc.html").is_file()


EXCHANGES = [b for b in BLOCKS if re.search(r"^> \{", b.text, re.MULTILINE)]


@pytest.mark.parametrize("block", EXCHANGES, ids=str)
def test_every_protocol_exchange_shown_is_real(block: Block) -> None:
    """A request shown (``> ``) is byte for byte what ``sm5 requests`` and a live run send for
    its vector; the reply shown (``< ``) passes that vector."""
    from sm5.conformance.compare import judge
    from sm5.conformance.interface import Result
    from sm5.conformance.offline import requests_bytes
    from sm5.vectors.format import Vector

    lines = block.text.splitlines()
    request = next(line[2:] for line in lines if line.startswith("> "))
    reply = json.loads(next(line[2:] for line in lines if line.startswith("< ")))
    vector_id = json.loads(request)["id"]
    vector = Vector.from_json(golden_line(vector_id), str(block))
    assert requests_bytes([vector]).decode("utf-8") == request + "\n", f"{block}: the request"
    assert reply["id"] == vector_id
    verdict = judge(vector, Result.of_state(reply["state"]), request=json.loads(request)["state"])
    assert verdict.status == "pass", f"{block}: {verdict.reason} {verdict.diffs}"


def test_the_docs_show_an_exchange() -> None:
    assert EXCHANGES
