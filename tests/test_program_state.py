"""Program state in the interpreter: indexable temps, constant buffers, the icb, the compute
inputs and temps the state does not give (spec/model.yaml ``register_files``, ``element_index``;
spec/declarations.yaml). Expectations are worked out from the sources, never by the oracle."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.run import run_vector
from sm5.oracle.asm import parse_program
from sm5.oracle.dxbc.tokens import encode_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.operands import element_words
from sm5.oracle.machine.state import CONSTANT_PAST_END, expected_to_json, state_from_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import read_file

SPEC = load_default()
GOLDEN = Path(__file__).resolve().parent.parent / "vectors" / "golden"
U32 = 0xFFFFFFFF


def _run(lines: list[str], state: dict[str, object], target: str = "cs_5_0"):  # type: ignore[no-untyped-def]
    return execute(parse_program(lines), state_from_json(state), target=target)


def test_an_element_index_wraps_at_32_bits() -> None:
    """x0[r1.x + 1] with r1.x = 0xFFFFFFFF names element 0 (FS 7.8.6: unsigned 32 bits)."""
    result = _run(["dcl_indexableTemp x0[2], 4", "mov x0[0].xyzw, l(1, 2, 3, 4)",
                   "mov r0.xyzw, x0[r1.x + 1].xyzw"],
                  {"r0": [0, 0, 0, 0], "r1": [U32, 0, 0, 0]})
    assert result.outcomes == ("defined",)
    assert expected_to_json(result.state)["r0"] == [1, 2, 3, 4]  # type: ignore[arg-type]


def test_an_index_past_an_indexable_temp_leaves_the_program_undefined() -> None:
    """Decision D9: the rest of the invocation is undefined, every word accepted."""
    result = _run(["dcl_uav_raw u0", "dcl_indexableTemp x0[2], 4", "mov r0.x, x0[r1.x + 0].x",
                   "store_raw u0.x, l(0), l(5)"],
                  {"r0": [0, 0, 0, 0], "r1": [2, 0, 0, 0], "u0": {"kind": "raw", "data": [9]}})
    assert result.outcomes == ("index_undefined",)
    doc = expected_to_json(result.state)  # type: ignore[arg-type]
    assert doc == {"r0": [None] * 4, "r1": [None] * 4, "u0": None}


def test_an_unknown_index_that_may_be_past_the_end_is_undefined() -> None:
    """An index read from a temp the state does not give could be any element, the end
    included: the program is undefined."""
    result = _run(["dcl_indexableTemp x0[2], 4", "mov r0.x, x0[r5.x + 0].x"],
                  {"r0": [0, 0, 0, 0]})
    assert result.outcomes == ("index_undefined",)


def test_constant_reads_past_the_end_are_zero_and_flagged() -> None:
    for index, want in ((0, [1, 2, 3, 4]), (1, [5, 6, 7, 8]), (2, [0, 0, 0, 0]),
                        (0x10000000, [0, 0, 0, 0]), (U32, [0, 0, 0, 0])):
        result = _run(["dcl_constantBuffer cb0[2], dynamicIndexed",
                       "mov r0.xyzw, cb0[r1.x + 0].xyzw"],
                      {"r0": [7, 7, 7, 7], "r1": [index, 0, 0, 0],
                       "cb0": {"kind": "constant", "data": [1, 2, 3, 4, 5, 6, 7, 8]}})
        doc = expected_to_json(result.state)  # type: ignore[arg-type]
        assert doc["r0"] == want
        assert "cb0" not in doc  # a constant buffer is no part of the final state
        assert (CONSTANT_PAST_END in result.facts) == (want == [0, 0, 0, 0])


def test_an_icb_read_past_the_end_is_zero() -> None:
    result = _run(["dcl_immediateConstantBuffer { { 1, 2, 3, 4 } }", "mov r0.xyzw, icb[1].wzyx"],
                  {"r0": [7, 7, 7, 7]})
    assert expected_to_json(result.state) == {"r0": [0, 0, 0, 0]}  # type: ignore[arg-type]


def test_a_temp_the_state_does_not_give_is_undefined_until_written() -> None:
    result = _run(["mov r0.x, r5.x", "mov r5.y, l(7)", "iadd r0.y, r5.y, l(1)"],
                  {"r0": [0, 0, 0, 0]})
    doc = expected_to_json(result.state)  # type: ignore[arg-type]
    assert doc == {"r0": [None, 8, 0, 0], "r5": [None, 7, None, None]}


def test_the_compute_inputs_of_a_vector_are_thread_zero() -> None:
    result = _run(["dcl_input vThreadID.xyz", "dcl_input vThreadGroupID.xyz",
                   "iadd r0.xy, vThreadID.yzyy, vThreadGroupID.xxxx"], {"r0": [9, 9, 9, 9]})
    assert expected_to_json(result.state) == {"r0": [0, 0, 9, 9]}  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, U32), st.integers(0, 64))
def test_constant_reads_classify_as_the_model_rule(index: int, count: int) -> None:
    """The words a constant read returns are zero exactly where the model's in_range rule says
    the element is past the end (the rule sm5 prove proves on 32-bit words)."""
    words = tuple(range(1, 4 * count + 1))
    rules = SPEC.model.element_index
    assert rules is not None
    inside = rules.inside(index, count)
    got = element_words(words, index)
    assert got == (words[4 * index:4 * index + 4] if inside else (0, 0, 0, 0))


def test_dxbc_of_constant_buffers_and_inputs_is_fxc_s() -> None:
    """Token streams as fxc writes them (Wine's d3d11 tests: if_nz cb0[0].x is 0x0404001f,
    0x0020800a, 0, 0; the icb is a custom-data block 0x00001835 with its DWORD count)."""
    tokens = encode_program(parse_program([
        "cs_5_0", "dcl_constantBuffer cb0[1], immediateIndexed",
        "dcl_immediateConstantBuffer { { 1, 2, 3, 4 } }", "dcl_input vThreadID.xyz",
        "dcl_indexableTemp x0[2], 4", "if_nz cb0[0].x", "endif",
        "mov x0[r1.x + 2].xy, icb[r0.y + 0].zwww"]))
    words = [f"{t:08x}" for t in tokens]
    text = " ".join(words)
    assert "04000059 00208e46 00000000 00000001" in text  # dcl_constantBuffer cb0[1]
    assert "00001835 00000006 00000001 00000002 00000003 00000004" in text
    assert "0200005f 00020072" in text  # dcl_input vThreadID.xyz
    assert "04000069 00000000 00000002 00000004" in text  # dcl_indexableTemp x0[2], 4
    assert "0404001f 0020800a 00000000 00000000" in text  # if_nz cb0[0].x
    # x0[r1.x + 2].xy: indexable temp, mask xy, two indices, the second immediate + relative
    assert "06203032 00000000 00000002 0010000a 00000001" in text


def test_a_translator_that_zero_fills_temps_conforms() -> None:
    """D3D leaves a temp undefined until written (FS 7.3); DXVK zero-fills its private
    variables. A translator that does so must pass every program-state vector: no vector may
    encode a guess of 0 (or of any value) for an unwritten temp."""

    class ZeroFilled(NaiveTranslator):
        def unwritten(self) -> int:
            return 0

    _, vectors = read_file(GOLDEN / "program_state.jsonl")
    ran = 0
    for vector in vectors:
        for impl in (NaiveTranslator(), ZeroFilled()):
            verdict = run_vector(impl, vector)
            assert verdict.status == "pass", f"{vector.id}: {verdict.reason}"
        ran += 1
    assert ran > 20


def test_element_indices_past_32_bits_are_one_clear_error() -> None:
    import pytest

    from sm5.oracle.errors import AsmError

    assert parse_program(["mov r0, icb[4294967295].x"]).instructions[0].operands[1].element == U32
    for text, fragment in (("mov r0, icb[4294967296].x", "out of range: at most 4294967295"),
                           ("mov r0, x0[r1.x + 4294967296].x", "out of range"),
                           ("mov r0, r1[2].x", "takes no element index"),
                           ("mov r0, cb0.x", "expected '[' and an element index"),
                           ("mov r0, x0[r1.xy].x", "is a number or one component")):
        with pytest.raises(AsmError) as info:
            parse_program([text])
        assert fragment in info.value.message, text


def test_an_undecided_branch_widens_every_element_an_index_may_write() -> None:
    """A condition read from a temp the state does not give cannot be split: every word the
    program may write becomes anything, every element of an x# written through an index
    register included (and the program still ends with a verdict on the rest)."""
    result = _run(["dcl_indexableTemp x0[2], 4", "dcl_uav_raw u0",
                   "mov x0[r1.x + 0].x, l(5)", "if_nz r7.x", "mov r0.x, x0[1].x", "endif",
                   "store_raw u0.x, l(0), r0.x"],
                  {"r0": [3, 3, 3, 3], "r1": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [9]}})
    assert result.outcomes == ("defined",)
    doc = expected_to_json(result.state)  # type: ignore[arg-type]
    assert doc["r0"] == [None, 3, 3, 3]
    assert doc["r1"] == [1, 0, 0, 0]
    assert doc["u0"] is None  # a store of the widened program: the whole view
    assert doc["r7"] == [None] * 4
