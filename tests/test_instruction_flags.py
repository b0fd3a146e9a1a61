"""Suffix flags of a mnemonic (``sync_uglobal_g_t``): parsed in the spec's order, printed back,
read by legality rules as ``flag_<name>``, encoded in the opcode token.

The instruction with flags is found in the spec, not named here; the expected token values are
the TPF header's (D3D11_SB_SYNC_* masks), written by hand."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from sm5.cli import main
from sm5.oracle.asm import format_line
from sm5.oracle.asm.parser import parse_line, parse_program
from sm5.oracle.dxbc import encode_program
from sm5.oracle.errors import AsmError, EncodeError
from sm5.oracle.machine.program import Instruction, Program
from sm5.oracle.model.spec import InstructionSpec, load_default, load_spec

#: D3D11_SB_SYNC_THREADS_IN_GROUP, _THREAD_GROUP_SHARED_MEMORY, _UNORDERED_ACCESS_VIEW_MEMORY_GROUP,
#: _UNORDERED_ACCESS_VIEW_MEMORY_GLOBAL: the bits the flags t, g, ugroup, uglobal set.
TPF_FLAG_BITS = {"t": 0x800, "g": 0x1000, "ugroup": 0x2000, "uglobal": 0x4000}


def flagged() -> list[InstructionSpec]:
    return [ins for ins in load_default().instructions.values() if ins.flags]


def subsets(ins: InstructionSpec) -> list[tuple[str, ...]]:
    names = ins.flag_names
    return [c for n in range(len(names) + 1) for c in itertools.combinations(names, n)]


def test_the_spec_has_an_instruction_with_flags() -> None:
    assert flagged(), "no instruction file lists flags:"


@pytest.mark.parametrize("ins", flagged(), ids=lambda i: i.name)
def test_every_subset_in_order_parses_and_prints_back(ins: InstructionSpec) -> None:
    for flags in subsets(ins):
        text = "".join((ins.name, *("_" + f for f in flags)))
        line = parse_line(text)
        assert isinstance(line, Instruction)
        assert (line.name, line.flags, line.sat) == (ins.name, flags, False)
        assert format_line(line) == text
        with_sat = parse_line(text + "_sat")
        assert isinstance(with_sat, Instruction) and with_sat.sat and with_sat.flags == flags


@pytest.mark.parametrize("ins", flagged(), ids=lambda i: i.name)
def test_out_of_order_repeated_and_unknown_flags_are_parse_errors(ins: InstructionSpec) -> None:
    first, second = ins.flag_names[0], ins.flag_names[-1]
    bad = [f"{ins.name}_{second}_{first}", f"{ins.name}_{first}_{first}",
           f"{ins.name}_{first}_bogus", f"{ins.name}_glc"]
    for text in bad:
        with pytest.raises(AsmError) as info:
            parse_program(["cs_5_0", "", text], source="flags.asm")
        assert info.value.line == 3, text
        assert ins.name in info.value.message and "flag" in info.value.message


def test_flags_on_an_instruction_without_flags_are_unknown() -> None:
    with pytest.raises(AsmError, match="unknown instruction"):
        parse_line("mov_uglobal r0.x, r1.x")


@pytest.mark.parametrize("ins", flagged(), ids=lambda i: i.name)
def test_legality_rules_read_each_flag(ins: InstructionSpec) -> None:
    """Every flag is read by some rule, so each can make an instance illegal."""
    read = {n for rule in ins.rules if rule.reject_if is not None for n in rule.reject_if.names}
    assert {f"flag_{f}" for f in ins.flag_names} <= read


@pytest.mark.parametrize("ins", flagged(), ids=lambda i: i.name)
def test_each_flag_sets_its_tpf_bit_in_the_opcode_token(ins: InstructionSpec) -> None:
    assert set(ins.flag_names) <= set(TPF_FLAG_BITS)
    for flags in subsets(ins):
        tokens = encode_program(Program((Instruction(ins.name, (), flags=flags),), "cs_5_0"))
        expected = ins.opcode | (1 << 24) | sum(TPF_FLAG_BITS[f] for f in flags)
        assert tokens[2] == expected, flags


def test_sync_tokens_by_hand() -> None:
    """sync_g_t: 0xBE | 0x1000 | 0x800 | length 1 << 24; sync_uglobal_g_t adds 0x4000."""
    program = parse_program(["cs_5_0", "sync_g_t", "sync_uglobal_g_t"])
    assert encode_program(program)[2:] == (0x010018BE, 0x010058BE)


def test_an_unknown_flag_is_an_encode_error() -> None:
    ins = flagged()[0]
    with pytest.raises(EncodeError, match="_bogus"):
        encode_program(Program((Instruction(ins.name, (), flags=("bogus",)),)))


# ------------------------------------------------------------------------------------------------
# A broken flag list: exit 2, one line naming the file and the problem

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"


@pytest.fixture
def flagged_copy(tmp_path: Path) -> tuple[Path, Path, str]:
    """A copy of the spec, the copied file of the first instruction with flags, its text."""
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    path = root / "instructions" / f"{flagged()[0].name}.yaml"
    return root, path, path.read_text(encoding="utf-8")


def _check_fails(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["spec", "check", "--spec", str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("saturate: false", "saturate: true", "takes no _sat"),
    ("  - name: g\n", "  - name: G\n", "does not match"),
    ("reject_if: \"flag_t and", "reject_if: \"flag_x and", "flag_x"),
    ("  - name: t\n", "  - name: g\n", "listed twice"),
])
def test_broken_flags_are_one_error_naming_the_file(flagged_copy: tuple[Path, Path, str],
                                                    capsys: pytest.CaptureFixture[str],
                                                    old: str, new: str, expected: str) -> None:
    root, path, text = flagged_copy
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    err = _check_fails(root, capsys)
    assert path.name in err and expected in err, err


def test_a_flag_without_an_encoding_field_is_an_encode_error(
        flagged_copy: tuple[Path, Path, str]) -> None:
    root, path, text = flagged_copy
    ins = flagged()[0]
    field = ins.flags[0].encoding
    path.write_text(text.replace(f"encoding: {field}", "encoding: no_such_field", 1),
                    encoding="utf-8")
    spec = load_spec(root)
    program = Program((Instruction(ins.name, (), flags=(ins.flags[0].name,)),), "cs_5_0")
    with pytest.raises(EncodeError, match=f"_{ins.flags[0].name}"):
        encode_program(program, spec=spec)


@pytest.mark.parametrize("ins", flagged(), ids=lambda i: i.name)
def test_sat_sharing_a_flag_bit_is_an_encode_error(ins: InstructionSpec) -> None:
    """sync's _ugroup is the saturate bit (0x2000): ``_sat`` would encode as that flag."""
    shared = [f for f in ins.flag_names if TPF_FLAG_BITS[f] == 0x2000]
    assert shared
    program = Program((Instruction(ins.name, (), sat=True, flags=(ins.flag_names[0],)),))
    with pytest.raises(EncodeError, match=f"_{shared[0]}"):
        encode_program(program)
