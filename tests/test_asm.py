"""The asm parser and printer: hand-written ASTs, canonical text, errors, and round trips."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.oracle.asm import format_line, format_program, parse_line, parse_program
from sm5.oracle.errors import AsmError
from sm5.oracle.machine.program import NULL_FILE, Declaration, Instruction, Line, Operand, Program
from sm5.oracle.model.spec import AuxInstruction, AuxOperand, Spec, load_default

SPEC = load_default()


def r(index: int, selection: str, components: str, *, neg: bool = False,
      abs: bool = False) -> Operand:
    return Operand("r", index, (), selection, components, neg, abs)  # type: ignore[arg-type]


def imm(selection: str, *values: int) -> Operand:
    return Operand("l", None, values, selection, "")  # type: ignore[arg-type]


U0 = Operand("u", 0)
G0 = Operand("g", 0)
FLAT = "vThreadIDInGroupFlattened"

# --------------------------------------------------------------------------------------------
# Declarations: text -> hand-written AST -> canonical text

DECLARATIONS = [
    ("dcl_uav_raw u0", Declaration("dcl_uav_raw", U0)),
    ("dcl_uav_raw_glc u0", Declaration("dcl_uav_raw", U0, flags=("glc",))),
    ("dcl_uav_structured u0, 16", Declaration("dcl_uav_structured", U0, (16,))),
    ("dcl_uav_structured_glc u0, 16",
     Declaration("dcl_uav_structured", U0, (16,), ("glc",))),
    ("dcl_uav_structured_glc_opc u7, 2048",
     Declaration("dcl_uav_structured", Operand("u", 7), (2048,), ("glc", "opc"))),
    ("dcl_uav_typed_buffer (uint,uint,uint,uint) u0",
     Declaration("dcl_uav_typed_buffer", U0, return_type=("uint", "uint", "uint", "uint"))),
    ("dcl_uav_typed_buffer_glc (sint,float,unorm,mixed) u3",
     Declaration("dcl_uav_typed_buffer", Operand("u", 3), flags=("glc",),
                 return_type=("sint", "float", "unorm", "mixed"))),
    ("dcl_tgsm_raw g0, 16", Declaration("dcl_tgsm_raw", G0, (16,))),
    ("dcl_tgsm_structured g0, 16, 4", Declaration("dcl_tgsm_structured", G0, (16, 4))),
    ("dcl_temps 4", Declaration("dcl_temps", numbers=(4,))),
    ("dcl_thread_group 1, 1, 1", Declaration("dcl_thread_group", numbers=(1, 1, 1))),
    ("dcl_globalFlags refactoringAllowed | enableDoublePrecisionFloatOps",
     Declaration("dcl_globalFlags",
                 flags=("refactoringAllowed", "enableDoublePrecisionFloatOps"))),
    ("dcl_globalFlags enableDoublePrecisionFloatOps",
     Declaration("dcl_globalFlags", flags=("enableDoublePrecisionFloatOps",))),
    ("dcl_input vThreadIDInGroupFlattened", Declaration("dcl_input", Operand(FLAT))),
]


@pytest.mark.parametrize(("text", "expected"), DECLARATIONS, ids=[t for t, _ in DECLARATIONS])
def test_declaration_parses_to_hand_written_ast(text: str, expected: Declaration) -> None:
    assert parse_line(text) == expected


@pytest.mark.parametrize(("text", "expected"), DECLARATIONS, ids=[t for t, _ in DECLARATIONS])
def test_declaration_prints_canonically(text: str, expected: Declaration) -> None:
    assert format_line(expected) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("dcl_uav_structured u0, 0x10", Declaration("dcl_uav_structured", U0, (16,))),
    ("dcl_tgsm_structured  g2 ,0x0004,  4", Declaration("dcl_tgsm_structured", Operand("g", 2),
                                                        (4, 4))),
    ("dcl_uav_typed_buffer ( uint , uint , uint , uint ) u0 // typed",
     Declaration("dcl_uav_typed_buffer", U0, return_type=("uint",) * 4)),
    ("dcl_globalFlags refactoringAllowed|enableRawAndStructuredBuffers",
     Declaration("dcl_globalFlags",
                 flags=("refactoringAllowed", "enableRawAndStructuredBuffers"))),
    ("dcl_thread_group 1024, 1, 0xffffffff",
     Declaration("dcl_thread_group", numbers=(1024, 1, 4294967295))),
])
def test_declaration_spellings(text: str, expected: Declaration) -> None:
    assert parse_line(text) == expected


# --------------------------------------------------------------------------------------------
# Instructions

INSTRUCTIONS = [
    ("imm_atomic_iadd r0.x, u0, r1.xy, l(5)",
     Instruction("imm_atomic_iadd", (r(0, "mask", "x"), U0, r(1, "swizzle", "xyyy"),
                                     imm("select", 5)))),
    ("dmovc_sat r2.xyzw, r0.yxzw, -r1.zwxy, |r3.xyzw|",
     Instruction("dmovc", (r(2, "mask", "xyzw"), r(0, "swizzle", "yxzw"),
                           r(1, "swizzle", "zwxy", neg=True), r(3, "swizzle", "xyzw", abs=True)),
                 sat=True)),
    ("store_structured u0.xy, r0.x, l(12), r1.xyzw",
     Instruction("store_structured", (Operand("u", 0, (), "mask", "xy"), r(0, "select", "x"),
                                      imm("select", 12), r(1, "swizzle", "xyzw")))),
    ("store_structured g1.xyzw, vThreadIDInGroupFlattened.x, l(0), r1.wzyx",
     Instruction("store_structured", (Operand("g", 1, (), "mask", "xyzw"),
                                      Operand(FLAT, None, (), "select", "x"),
                                      imm("select", 0), r(1, "swizzle", "wzyx")))),
    ("dmovc r0.zw, l(1, 2, 3, 4), -|r1.zwzw|, l(0x80000000, 0, 0, 0xffffffff)",
     Instruction("dmovc", (r(0, "mask", "zw"), imm("swizzle", 1, 2, 3, 4),
                           r(1, "swizzle", "zwzw", neg=True, abs=True),
                           imm("swizzle", 0x80000000, 0, 0, 0xFFFFFFFF)))),
    ("ld_raw r0.xyzw, l(0), u1.xyzw",
     Instruction("ld_raw", (r(0, "mask", "xyzw"), imm("select", 0),
                            Operand("u", 1, (), "swizzle", "xyzw")))),
    ("store_raw u1.xyzw, l(16), r0.xyzw",
     Instruction("store_raw", (Operand("u", 1, (), "mask", "xyzw"), imm("select", 16),
                               r(0, "swizzle", "xyzw")))),
    ("mov r4095.y, r0.xxxx", Instruction("mov", (r(4095, "mask", "y"),
                                                 r(0, "swizzle", "xxxx")))),
    ("ret", Instruction("ret", ())),
]


@pytest.mark.parametrize(("text", "expected"), INSTRUCTIONS, ids=[t for t, _ in INSTRUCTIONS])
def test_instruction_parses_to_hand_written_ast(text: str, expected: Instruction) -> None:
    assert parse_line(text) == expected


def test_canonical_instruction_text() -> None:
    assert format_line(INSTRUCTIONS[0][1]) == "imm_atomic_iadd r0.x, u0, r1.xyyy, l(5)"
    for text, ast in INSTRUCTIONS[1:]:
        assert format_line(ast) == text


def test_defaults_when_no_dot_is_written() -> None:
    ins = parse_line("store_structured u0, r0.x, l(12), r1")
    assert ins == Instruction("store_structured", (
        Operand("u", 0, (), "mask", "xyzw"), r(0, "select", "x"), imm("select", 12),
        r(1, "swizzle", "xyzw")))
    assert parse_line("mov r0, r1") == Instruction("mov", (r(0, "mask", "xyzw"),
                                                           r(1, "swizzle", "xyzw")))


@pytest.mark.parametrize(("written", "widened"), [
    ("x", "xxxx"), ("y", "yyyy"), ("xy", "xyyy"), ("zx", "zxxx"), ("wzy", "wzyy"),
    ("wwzx", "wwzx"),
])
def test_short_swizzles_widen_by_repeating_the_last_letter(written: str, widened: str) -> None:
    ins = parse_line(f"mov r0.x, r1.{written}")
    assert isinstance(ins, Instruction)
    assert ins.operands[1] == r(1, "swizzle", widened)


@pytest.mark.parametrize("spelling", [
    "dmovc r0.xyzw, r1.xyzw, r2_abs.zwxy, -r3_abs.xyxy",
    "dmovc r0.xyzw, r1.xyzw, |r2.zwxy|, -|r3.xyxy|",
    "dmovc r0.xyzw, r1.xyzw, | r2.zwxy |, - | r3.xyxy |",
])
def test_abs_spellings_give_one_ast(spelling: str) -> None:
    assert parse_line(spelling) == Instruction("dmovc", (
        r(0, "mask", "xyzw"), r(1, "swizzle", "xyzw"), r(2, "swizzle", "zwxy", abs=True),
        r(3, "swizzle", "xyxy", neg=True, abs=True)))
    assert format_line(parse_line(spelling)) == \
        "dmovc r0.xyzw, r1.xyzw, |r2.zwxy|, -|r3.xyxy|"


@pytest.mark.parametrize(("literal", "bits"), [
    ("5", 5), ("0", 0), ("-0", 0), ("-1", 0xFFFFFFFF), ("-2147483648", 0x80000000),
    ("4294967295", 0xFFFFFFFF), ("0x10", 16), ("0XfFfFfFfF", 0xFFFFFFFF), ("007", 7),
    ("+3", 3), ("1.5", 0x3FC00000), ("-0.0", 0x80000000), ("1.000000", 0x3F800000),
    ("0.5", 0x3F000000), ("-2.0", 0xC0000000), ("1e3", 0x447A0000),
    ("3.4028234663852886e38", 0x7F7FFFFF), ("1.", 0x3F800000),
])
def test_immediate_literals(literal: str, bits: int) -> None:
    ins = parse_line(f"mov r0.x, l({literal})")
    assert isinstance(ins, Instruction)
    assert ins.operands[1] == imm("swizzle", bits)


@pytest.mark.parametrize(("literal", "bits"), [
    ("1.5", 0x3FF8000000000000),
    ("1", 0x3FF0000000000000),
    ("-0.0", 0x8000000000000000),
    ("5e-324", 0x0000000000000001),
    ("0.1", 0x3FB999999999999A),
    ("0x7ff8000000000001", 0x7FF8000000000001),
    ("0xfff0000000000000", 0xFFF0000000000000),
])
def test_double_immediate_literals(literal: str, bits: int) -> None:
    """d(...): a decimal is the double nearest its value, 0x... the bit pattern itself."""
    op = parse_line(f"dmovc r0.xyzw, r1.xyzw, d({literal}), r2.xyzw").operands[2]
    assert (op.file, op.values) == ("d", (bits,))


@pytest.mark.parametrize(("bits", "text"), [
    ((0x3FF8000000000000, 0x8000000000000000), "d(1.5, -0.0)"),
    ((0x0000000000000001,), "d(5e-324)"),
    ((0x7FF0000000000000, 0x7FF8000000000001), "d(0x7ff0000000000000, 0x7ff8000000000001)"),
])
def test_double_immediate_prints_value_or_bit_pattern(bits: tuple[int, ...], text: str) -> None:
    line = f"dmovc r0.xyzw, r1.xyzw, {text}, r2.xyzw"
    op = parse_line(line).operands[2]
    assert op.values == bits
    assert format_line(parse_line(line)) == line


@pytest.mark.parametrize(("text", "fragment"), [
    ("d(1, 2, 3)", "too many immediate values: d(...) takes 1 or 2 values"),
    ("d(0x10000000000000000)", "out of range: a 64-bit immediate"),
    ("d(1e999)", "out of range: a 64-bit immediate"),
    ("d(-0x1)", "out of range: a 64-bit immediate"),
])
def test_double_immediate_errors(text: str, fragment: str) -> None:
    with pytest.raises(AsmError, match=re.escape(fragment)):
        parse_line(f"dmovc r0.xyzw, r1.xyzw, {text}, r2.xyzw")


def test_immediate_prints_decimal_below_sign_bit_and_hex_from_it() -> None:
    ins = Instruction("mov", (r(0, "mask", "xyzw"),
                              imm("swizzle", 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0)))
    assert format_line(ins) == "mov r0.xyzw, l(2147483647, 0x80000000, 0xffffffff, 0)"


@pytest.mark.parametrize(("text", "expected"), [
    # A register of a file unusual for its position, masks and swizzles outside the spec's
    # lists, _sat where the spec has no saturate, modifiers on any source: all parse, and the
    # legality checker rejects them with a rule id.
    ("store_structured r0.x, r1.x, l(0), r2",
     Instruction("store_structured", (r(0, "mask", "x"), r(1, "select", "x"), imm("select", 0),
                                      r(2, "swizzle", "xyzw")))),
    ("imm_atomic_iadd r0.x, r1, r2.xy, r3.x",
     Instruction("imm_atomic_iadd", (r(0, "mask", "x"), Operand("r", 1), r(2, "swizzle", "xyyy"),
                                     r(3, "select", "x")))),
    ("dmovc u0.xy, g1.yxwz, u2.zwzw, l(7)",
     Instruction("dmovc", (Operand("u", 0, (), "mask", "xy"),
                           Operand("g", 1, (), "swizzle", "yxwz"),
                           Operand("u", 2, (), "swizzle", "zwzw"), imm("swizzle", 7)))),
    ("store_structured u0.xz, r0.x, l(0), r1", Instruction("store_structured", (
        Operand("u", 0, (), "mask", "xz"), r(0, "select", "x"), imm("select", 0),
        r(1, "swizzle", "xyzw")))),
    ("store_structured u0.y, r0.x, l(0), r1", Instruction("store_structured", (
        Operand("u", 0, (), "mask", "y"), r(0, "select", "x"), imm("select", 0),
        r(1, "swizzle", "xyzw")))),
    ("store_structured_sat u0.x, -r0.x, |r0.y|, -r1_abs.yx", Instruction("store_structured", (
        Operand("u", 0, (), "mask", "x"), r(0, "select", "x", neg=True),
        r(0, "select", "y", abs=True), r(1, "swizzle", "yxxx", neg=True, abs=True)), sat=True)),
    ("imm_atomic_iadd l(1), l(2), l(3), l(4)", Instruction("imm_atomic_iadd", (
        imm("mask", 1), imm("none", 2), imm("swizzle", 3), imm("select", 4)))),
    ("dmovc r0.xyzw, r1.xyzw, -vThreadIDInGroupFlattened.x, r2.xyxy", Instruction("dmovc", (
        r(0, "mask", "xyzw"), r(1, "swizzle", "xyzw"),
        Operand(FLAT, None, (), "swizzle", "xxxx", neg=True), r(2, "swizzle", "xyxy")))),
    ("mov r0.x, r99999.x", Instruction("mov", (r(0, "mask", "x"), r(99999, "swizzle", "xxxx")))),
])
def test_illegal_instances_still_parse(text: str, expected: Instruction) -> None:
    assert parse_line(text) == expected
    assert parse_line(format_line(expected)) == expected


# --------------------------------------------------------------------------------------------
# Programs

PROGRAM_TEXT = """\
// a harness-like program
cs_5_0
dcl_globalFlags refactoringAllowed

dcl_uav_structured u0, 16   // the buffer under test
  dcl_temps 2
store_structured u0.xy, r0.x, l(12), r1.xyzw
\t// done
ret
"""

PROGRAM = Program((
    Declaration("dcl_globalFlags", flags=("refactoringAllowed",)),
    Declaration("dcl_uav_structured", U0, (16,)),
    Declaration("dcl_temps", numbers=(2,)),
    INSTRUCTIONS[2][1],
    Instruction("ret", ()),
), target="cs_5_0")


def test_program_with_target_comments_and_blank_lines() -> None:
    program = parse_program(PROGRAM_TEXT)
    assert program == PROGRAM
    assert [x.line for x in program.lines] == [3, 5, 6, 7, 9]


def test_program_from_a_list_of_lines_counts_list_positions() -> None:
    lines = PROGRAM_TEXT.split("\n")
    program = parse_program(lines)
    assert program == PROGRAM
    assert [x.line for x in program.lines] == [3, 5, 6, 7, 9]


def test_program_prints_target_first() -> None:
    assert format_program(PROGRAM) == [
        "cs_5_0",
        "dcl_globalFlags refactoringAllowed",
        "dcl_uav_structured u0, 16",
        "dcl_temps 2",
        "store_structured u0.xy, r0.x, l(12), r1.xyzw",
        "ret",
    ]
    untargeted = Program(PROGRAM.lines)
    assert format_program(untargeted)[0] == "dcl_globalFlags refactoringAllowed"
    assert parse_program(format_program(untargeted)) == untargeted


@pytest.mark.parametrize("target", ["cs_5_0", "ps_4_1", "vs_4_0", "hs_5_0", "ds_5_0", "gs_4_1",
                                    "cs_9_9"])
def test_any_stage_target_header(target: str) -> None:
    assert parse_program([target, "ret"]) == Program((Instruction("ret", ()),), target)


def test_empty_programs() -> None:
    assert parse_program("") == Program(())
    assert parse_program([]) == Program(())
    assert parse_program("// nothing\n\n   \n") == Program(())
    assert parse_program("cs_5_0") == Program((), "cs_5_0")


def test_instruction_line_field_and_crlf() -> None:
    program = parse_program("cs_5_0\r\nmov r0, r1\r\n\r\nret\r\n")
    assert [x.line for x in program.lines] == [2, 4]
    line = parse_line("ret", line=17)
    assert line.line == 17


def test_grammar_comes_from_the_spec() -> None:
    """An instruction added to the spec's data (a made-up name) parses and prints with no code
    change."""
    extra = AuxInstruction("xmax", 0x24, (
        AuxOperand("dst", "dst", "mask"), AuxOperand("a", "src", "swizzle"),
        AuxOperand("b", "src", "select")), SPEC.auxiliary["iadd"].source)
    spec: Spec = dataclasses.replace(SPEC, auxiliary={**SPEC.auxiliary, "xmax": extra})
    ins = parse_line("xmax r0.xy, -r1.yx, l(3)", spec=spec)
    assert ins == Instruction("xmax", (r(0, "mask", "xy"), r(1, "swizzle", "yxxx", neg=True),
                                       imm("select", 3)))
    assert format_line(ins, spec=spec) == "xmax r0.xy, -r1.yxxx, l(3)"
    with pytest.raises(AsmError, match="unknown instruction 'xmax'"):
        parse_line("xmax r0.xy, -r1.yx, l(3)")


# --------------------------------------------------------------------------------------------
# Errors: exact line, column and what was expected

# The known instructions, spec and harness ones, listed in sorted order (the first two here).
_KNOWN = sorted({*load_default().instructions, *load_default().auxiliary})
ERRORS = [
    ("foo r0, r1", 1, f"unknown instruction 'foo'; expected one of {', '.join(_KNOWN[:2])}"),
    ("dcl_uav_rw u0", 1,
     "unknown declaration 'dcl_uav_rw'; expected one of dcl_constantBuffer, dcl_globalFlags"),
    ("store_structured u0.zx, r0.x, l(12), r1", 22, "mask letters must be in xyzw order"),
    ("store_structured u0.xx, r0.x, l(12), r1", 22, "mask letter 'x' repeats"),
    ("store_structured u0.xy, r0, l(12), r1", 25, "expected .x/.y/.z/.w select"),
    ("store_structured u0.xy, r0.xy, l(12), r1", 28, "expected .x/.y/.z/.w select (one letter)"),
    ("mov r0, l(1, 2, 3, 4, 5)", 23, "too many immediate values"),
    ("mov r0, l(1, 2)", 9, "l(...) takes 1 or 4 values, got 2"),
    ("mov r0, l(1, 2", 15, "unterminated l(...): expected ')'"),
    ("mov r0, l(", 11, "unterminated l(...)"),
    ("mov r0, l(12abc)", 11, "bad number '12abc'"),
    ("mov r0, l(0x)", 11, "bad number '0x'"),
    ("mov r0, l(1.5.5)", 11, "bad number '1.5.5'"),
    ("mov r0, l(4294967296)", 11, "out of range"),
    ("mov r0, l(-2147483649)", 11, "out of range"),
    ("mov r0, l(0x100000000)", 11, "out of range"),
    ("mov r0, l(1e39)", 11, "out of range"),
    ("mov r0, l(1e999)", 11, "out of range"),
    ("mov -r0, r1", 5, "modifiers (-, |...|, _abs) are not allowed on operand 1 (dest) of mov"),
    ("mov |r0|, r1", 5, "it is a dst operand"),
    ("mov r0_abs, r1", 7, "not allowed on operand 1 (dest)"),
    ("store_structured -u0.x, r0.x, l(0), r1", 18, "it is a memory operand"),
    ("mov r0, -l(5)", 9, "modifiers (-, |...|, _abs) are not allowed on an immediate"),
    ("mov r0, |l(5)|", 9, "not allowed on an immediate"),
    ("store_structured u0.xy, r0.x, l(12)", 36, "store_structured takes 4 operands, got 3"),
    ("store_structured u0.xy, r0.x, l(12), r1, r2", 42,
     "store_structured takes 4 operands, got 5"),
    ("ret r0", 5, "ret takes 0 operands, got 1"),
    ("imm_atomic_iadd r0.x, u0.x, r1, l(1)", 25, "operand 2 (dst1) of imm_atomic_iadd takes no "
     "component selection"),
    ("mov r0.q, r1", 8, "expected component letters x, y, z, w after '.', got 'q'"),
    ("mov r0.xyzq, r1", 11, "got 'xyzq'"),
    ("mov r0., r1", 8, "expected component letters (x, y, z, w) right after '.', got ','"),
    ("mov r0 .x, r1", 8, "no space allowed before '.'"),
    ("mov r0, r1.xyzwx", 12, "a swizzle has 1 to 4 letters"),
    ("mov r0, r1 r2", 12, "expected ',' or end of line after an operand, got 'r2'"),
    ("mov r0,", 8, "expected an operand, got end of line"),
    ("mov r0, , r1", 9, "expected an operand"),
    ("mov r0, s0", 9, "expected an operand (r#, u#, g#, t#, x#[...], cb#[...], l(...), "
     "d(...), vThreadIDInGroupFlattened, null, icb[...], vThreadID, vThreadGroupID, "
     "vThreadIDInGroup), got 's0'"),
    ("mov r0, r", 10, "expected a register number after 'r'"),
    ("mov r0, r99999999999", 10, "register index '99999999999' of r# out of range"),
    ("mov r0, |r1", 12, "expected '|' closing the absolute value opened at column 9"),
    ("mov r0, |r1_abs|", 12, "absolute value given twice"),
    ("mov r0, l(5).x", 13, "an immediate takes no component selection"),
    ("mov r0, l 5", 11, "expected '(' after 'l'"),
    ("mov r0, l", 10, "expected '(' after 'l'"),
    ("5 r0", 1, "expected an instruction or declaration name, got '5'"),
    ("", 1, "expected an instruction or a declaration, got an empty line"),
    ("mov r0, r1 # comment", 12, "unexpected character '#'"),
    ("mov r0, r1\x00", 11, "unexpected character '\\x00'"),
    ("mov r0, r\u00e9", 10, "unexpected character"),
    ("cs_5_0", 1, "a target line (cs_5_0) is allowed only as the first line"),
    ("dcl_uav_raw r0", 13, "dcl_uav_raw declares a u# register, got 'r0'"),
    ("dcl_uav_raw u0.x", 15, "a declared register takes no component selection"),
    ("dcl_uav_raw u0_abs", 13, "declares a u# register"),
    ("dcl_input r0", 11, "dcl_input declares a vThreadIDInGroupFlattened or vThreadID or "
     "vThreadGroupID or vThreadIDInGroup register, got 'r0'"),
    ("dcl_uav_raw_opc u0", 12, "dcl_uav_raw takes flags glc; got '_opc'"),
    ("dcl_temps_glc 4", 10, "dcl_temps takes no flags; got '_glc'"),
    ("dcl_uav_structured_opc_glc u0, 16", 23, "in the order glc, opc"),
    ("dcl_uav_structured_glc_glc u0, 16", 23, "written once each"),
    ("dcl_uav_structured u0", 22, "expected ',' and a number (stride) for dcl_uav_structured"),
    ("dcl_uav_structured u0, -4", 24, "bad number '-4': expected a non-negative"),
    ("dcl_uav_structured u0, 1.5", 24, "bad number '1.5'"),
    ("dcl_uav_structured u0, 4294967296", 24, "out of range"),
    ("dcl_tgsm_structured g0, 16", 27, "a number (count)"),
    ("dcl_temps 4, 5", 12, "expected end of line after dcl_temps, got ','"),
    ("dcl_uav_typed_buffer u0", 22, "expected '(' starting the return type"),
    ("dcl_uav_typed_buffer (uint,uint) u0", 32, "a return type has 4 components, got 2"),
    ("dcl_uav_typed_buffer (uint,uint,uint,word) u0", 38, "expected a return type (unorm, "
     "snorm, sint, uint, float, mixed), got 'word'"),
    ("dcl_uav_typed_buffer (uint,uint,uint,uint,uint) u0", 42, "a return type has 4 "
     "components"),
    ("dcl_globalFlags", 16, "expected a global flag (refactoringAllowed"),
    ("dcl_globalFlags refactoringAllowed | refactoringAllowed", 38, "repeats"),
    ("dcl_globalFlags refactoringAllowed |", 37, "expected a global flag"),
    ("dcl_globalFlags fastMath", 17, "got 'fastMath'"),
]


@pytest.mark.parametrize(("text", "column", "fragment"), ERRORS, ids=[e[0] for e in ERRORS])
def test_error_location_and_message(text: str, column: int, fragment: str) -> None:
    with pytest.raises(AsmError) as info:
        parse_line(text, line=7, source="case.asm")
    assert (info.value.line, info.value.column) == (7, column)
    assert fragment in info.value.message
    assert str(info.value).startswith(f"case.asm:7:{column}: ")


def test_program_errors_carry_the_input_line() -> None:
    with pytest.raises(AsmError) as info:
        parse_program(["cs_5_0", "", "// c", "mov r0, r1",
                       "store_structured u0.zx, r0.x, l(1), r1"], source="p.asm")
    assert (info.value.line, info.value.column) == (5, 22)
    assert info.value.text == "store_structured u0.zx, r0.x, l(1), r1"
    with pytest.raises(AsmError) as info:
        parse_program("cs_5_0\nret\ncs_5_0\n")
    assert (info.value.line, info.value.column) == (3, 1)
    assert "only as the first line" in info.value.message
    with pytest.raises(AsmError) as info:
        parse_program("cs_5_0 ret")
    assert (info.value.line, info.value.column) == (1, 8)
    assert "expected end of line after target cs_5_0" in info.value.message


@pytest.mark.parametrize(("text", "column"), [
    ("mov r0, l(" + "9" * 5000 + ")", 11),
    ("mov r0, l(0x" + "f" * 5000 + ")", 11),
    ("mov r0, l(" + "1" * 5000 + ".5)", 11),
    ("mov r0, r" + "1" * 5000, 10),
    ("dcl_temps " + "7" * 5000, 11),
    ("mov r0, r1" + ", r1" * 20000, 13),
    ("mov r0, " + "-" * 10000, 10),
    ("mov r0, " + "|" * 10000 + "r1", 10),
], ids=["digits", "hex", "float", "index", "dcl-number", "operands", "minus", "bars"])
def test_huge_input_is_an_asm_error(text: str, column: int) -> None:
    with pytest.raises(AsmError) as info:
        parse_line(text)
    assert info.value.column == column
    assert len(info.value.message) < 300


def test_non_text_lines_are_asm_errors() -> None:
    with pytest.raises(AsmError) as info:
        parse_program(["ret", 5])  # type: ignore[list-item]
    assert (info.value.line, info.value.column) == (2, 1)


# --------------------------------------------------------------------------------------------
# Round trips over every AST the grammar can represent

COMPONENTS = "xyzw"
FILES = SPEC.model.file_names
FILE_KINDS = SPEC.model.files_by_name
SLOTS = {**{a.name: tuple((o.role, o.selection) for o in a.operands)
            for a in SPEC.auxiliary.values()},
         **{i.name: tuple((o.role, o.selection) for o in i.operands)
            for i in SPEC.instructions.values()}}
u32 = st.integers(0, 0xFFFFFFFF)


@st.composite
def operands(draw: st.DrawFn, role: str, selection: str) -> Operand:
    file = draw(st.sampled_from(FILES))
    if file == "l":
        values = draw(st.lists(u32, min_size=1, max_size=1) | st.lists(u32, min_size=4,
                                                                         max_size=4))
        return Operand("l", None, tuple(values), selection, "")  # type: ignore[arg-type]
    if file == "d":
        u64 = st.integers(0, (1 << 64) - 1)
        doubles = draw(st.lists(u64, min_size=1, max_size=2))
        return Operand("d", None, tuple(doubles), selection, "")  # type: ignore[arg-type]
    index = draw(u32) if FILE_KINDS[file].numbered else None
    if file == NULL_FILE:  # the null register holds no components
        return Operand(file, None, (), "none", "")
    element = relative = None
    if FILE_KINDS[file].elements is not None:
        element = draw(u32)
        if draw(st.booleans()):  # x0[r1.x + n], cb0[x1[2].y + n]: the index register's forms
            index_file = draw(st.sampled_from(("r", "x")))
            relative = Operand(index_file, draw(u32), (), "select", draw(st.sampled_from(
                COMPONENTS)), element=draw(u32) if index_file == "x" else None)
    if selection == "mask":
        chosen = draw(st.sets(st.sampled_from(COMPONENTS), min_size=1))
        components = "".join(c for c in COMPONENTS if c in chosen)
    elif selection == "swizzle":
        components = "".join(draw(st.lists(st.sampled_from(COMPONENTS), min_size=4,
                                           max_size=4)))
    elif selection == "select":
        components = draw(st.sampled_from(COMPONENTS))
    else:
        components = ""
    source = role == "src"
    neg = source and draw(st.booleans())
    absolute = source and draw(st.booleans())
    return Operand(file, index, (), selection, components, neg, absolute,  # type: ignore[arg-type]
                   element, relative)


@st.composite
def instructions(draw: st.DrawFn) -> Instruction:
    name = draw(st.sampled_from(sorted(SLOTS)))
    ops = tuple(draw(operands(role, selection)) for role, selection in SLOTS[name])
    return Instruction(name, ops, draw(st.booleans()))


@st.composite
def declarations(draw: st.DrawFn) -> Declaration:
    spec = draw(st.sampled_from(list(SPEC.declarations.declarations.values())))
    register = None
    if spec.registers:
        file = draw(st.sampled_from(spec.registers))
        described = FILE_KINDS[file]
        mask = COMPONENTS[:described.components] if not described.numbered and \
            described.components > 1 and not spec.listed else ""
        register = Operand(file, draw(u32) if described.numbered else None, (),
                           "mask" if mask else "none", mask)
    count = 4 * draw(st.integers(0, 3)) if spec.listed else len(spec.numbers)
    numbers = tuple(draw(u32) for _ in range(count))
    flags = tuple(f for f in spec.flags if draw(st.booleans()))
    if spec.access:
        flags += (draw(st.sampled_from(spec.access)),)
    if spec.global_flags:
        chosen = draw(st.permutations(spec.global_flags))
        flags += tuple(chosen[:draw(st.integers(1, len(chosen)))])
    return_type = tuple(draw(st.sampled_from(SPEC.declarations.return_types))
                        for _ in range(4)) if spec.return_type else ()
    return Declaration(spec.name, register, numbers, flags, return_type)


lines: st.SearchStrategy[Line] = instructions() | declarations()
targets = st.none() | st.builds(
    lambda p, a, b: f"{p}_{a}_{b}", st.sampled_from([s.prefix for s in SPEC.model.stages]),
    st.integers(0, 9), st.integers(0, 9))


@settings(max_examples=1000, deadline=None)
@given(lines)
def test_line_round_trip(x: Line) -> None:
    text = format_line(x)
    assert parse_line(text) == x
    assert format_line(parse_line(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, max_size=12), targets)
def test_program_round_trip(body: list[Line], target: str | None) -> None:
    program = Program(tuple(body), target)
    text = format_program(program)
    parsed = parse_program(text)
    assert parsed == program
    assert [x.line for x in parsed.lines] == list(range(2 if target else 1,
                                                       len(body) + (2 if target else 1)))
    assert parse_program("\n".join(text)) == program
