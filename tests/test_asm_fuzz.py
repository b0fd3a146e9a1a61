"""Fuzzing the asm parser: whatever the text, only AsmError escapes, located on the input.

Arbitrary unicode text, and real lines with characters inserted, deleted or replaced. Anything
that does parse must print and parse back to the same program. Set SM5_FUZZ_EXAMPLES to run
more examples than the default.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sm5.oracle.asm import format_program, parse_line, parse_program
from sm5.oracle.errors import AsmError

EXAMPLES = int(os.environ.get("SM5_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None)

REAL_LINES = [
    "cs_5_0",
    "dcl_globalFlags refactoringAllowed | enableDoublePrecisionFloatOps",
    "dcl_uav_raw_glc u0",
    "dcl_uav_structured_glc_opc u1, 16",
    "dcl_uav_typed_buffer (uint,uint,uint,uint) u2",
    "dcl_tgsm_raw g0, 0x40",
    "dcl_tgsm_structured g1, 16, 4",
    "dcl_temps 4",
    "dcl_thread_group 1, 1, 1",
    "dcl_input vThreadIDInGroupFlattened",
    "imm_atomic_iadd r0.x, u0, r1.xy, l(5)",
    "dmovc_sat r2.xyzw, r0.yxzw, -r1.zwxy, |r3.xyzw|",
    "dmovc r0.zw, l(1.5, -0.0, 0x80000000, -1), -r1_abs.zwzw, r2",
    "store_structured u0.xy, r0.x, l(12), r1.xyzw",
    "store_structured g1.xyzw, vThreadIDInGroupFlattened.x, l(0), r1.wzyx // tail",
    "ld_raw r0.xyzw, l(0), u1.xyzw",
    "store_raw u1.xyzw, l(16), r0.xyzw",
    "mov r4095.y, -|r0.xxxx|",
    "ret",
]

# Characters the grammar gives meaning to, so mutations often produce near-valid lines.
GRAMMAR_CHARS = "rugl0123456789xyzw.,()|-_ \tabs#/\\\x00\n\r\u00e9\u2028\U0001f600eE+"


def check_error(error: AsmError, lines: list[str]) -> None:
    assert error.line >= 1
    assert error.column >= 1
    assert error.line <= len(lines)
    assert error.column <= len(lines[error.line - 1]) + 1
    assert error.message


def check_program(text: str | list[str]) -> None:
    """Parse; on success the canonical text must round-trip, on failure only AsmError."""
    lines = text.split("\n") if isinstance(text, str) else text
    try:
        program = parse_program(text, source="fuzz")
    except AsmError as error:
        check_error(error, lines)
        return
    printed = format_program(program)
    assert parse_program(printed) == program
    assert format_program(parse_program(printed)) == printed


@st.composite
def mutated(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(REAL_LINES))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(line)))
        char = draw(st.sampled_from(GRAMMAR_CHARS) | st.characters())
        operation = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        if operation == "insert":
            line = line[:position] + char + line[position:]
        elif operation == "delete":
            line = line[:position] + line[position + 1:]
        elif operation == "replace":
            line = line[:position] + char + line[position + 1:]
        else:
            end = draw(st.integers(position, len(line)))
            line = line[:end] + line[position:end] + line[end:]
    return line


@FUZZ
@given(st.text())
@example("")
@example("\x00")
@example("mov r0, l(" + "9" * 5000 + ")")
@example("mov r0, " + "|" * 5000)
@example("mov r0, r1" + ", r1" * 5000)
def test_arbitrary_text(text: str) -> None:
    check_program(text)


@FUZZ
@given(st.text(alphabet=GRAMMAR_CHARS, max_size=80))
def test_text_of_grammar_characters(text: str) -> None:
    check_program(text)


@pytest.mark.slow  # minutes: 2,000 programs of up to six mutated lines
@FUZZ
@given(st.lists(mutated(), min_size=1, max_size=6))
def test_mutated_real_programs(lines: list[str]) -> None:
    check_program(lines)
    check_program("\n".join(lines))


@FUZZ
@given(mutated())
def test_mutated_real_lines(line: str) -> None:
    try:
        parsed = parse_line(line, line=3)
    except AsmError as error:
        assert error.line == 3
        assert 1 <= error.column <= len(line) + 1
        return
    assert parsed.line == 3


def test_real_lines_parse() -> None:
    """The mutation corpus itself is valid, so mutations start from real programs."""
    program = parse_program(REAL_LINES)
    assert program.target == "cs_5_0"
    assert len(program.lines) == len(REAL_LINES) - 1
