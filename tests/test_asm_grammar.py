"""docs/asm-grammar.md against the parser: every line of an ``accept`` block parses (one program
per block), every line of a ``reject`` block fails with an error naming its line and column."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sm5.oracle.asm import format_line
from sm5.oracle.asm.parser import parse_line, parse_program
from sm5.oracle.errors import AsmError

GRAMMAR = Path(__file__).resolve().parent.parent / "docs" / "asm-grammar.md"
_BLOCK = re.compile(r"^```(accept|reject)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks(kind: str) -> list[list[str]]:
    text = GRAMMAR.read_text(encoding="utf-8")
    return [body.splitlines() for k, body in _BLOCK.findall(text) if k == kind]


ACCEPT = _blocks("accept")
REJECT = [line for block in _blocks("reject") for line in block]


def test_the_document_has_examples_of_every_production() -> None:
    text = GRAMMAR.read_text(encoding="utf-8")
    sections = re.findall(r"^#{2,3} (.+)$", text, re.MULTILINE)
    assert len(ACCEPT) >= 6 and len(REJECT) >= 30
    # every section after the notation holds both kinds of example
    for title in sections:
        if title == "Notation":
            continue
        body = text.split(title, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        assert "```accept" in body and "```reject" in body, title


def _code(line: str) -> str:
    return line.split("//", 1)[0].strip()


@pytest.mark.parametrize("block", ACCEPT, ids=lambda b: b[-1][:40])
def test_accepted_examples_parse(block: list[str]) -> None:
    program = parse_program(block, source="asm-grammar.md")
    code = [c for c in map(_code, block) if c]
    assert len(program.lines) == len(code) - (1 if program.target else 0)
    for line in program.lines:  # the printer writes it back in a form that parses to the same
        assert parse_line(format_line(line), line=line.line) == line


@pytest.mark.parametrize("line", REJECT)
def test_rejected_examples_fail_with_a_position(line: str) -> None:
    with pytest.raises(AsmError) as info:
        parse_program(["cs_5_0", line], source="asm-grammar.md")
    assert info.value.line == 2
    assert info.value.column is not None and 1 <= info.value.column <= len(line) + 1


def test_each_accepted_instruction_line_parses_alone() -> None:
    for block in ACCEPT:
        for number, line in enumerate(block, 1):
            code = line.split("//", 1)[0].strip()
            if code and not re.fullmatch(r"[a-z]+_[0-9]_[0-9]", code):
                parse_line(line, line=number)
