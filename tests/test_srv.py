"""SRV buffers (``t#``) end to end: the state format and its schema, the executor's state checks,
the harness bindings, the DXBC tokens (written by hand from the TPF header), the ``sm5 dxbc``
export and, where vkd3d-shader and lavapipe are installed (conformance/vkd3d/setup.sh), a real
run that reads raw and structured SRVs with the harness instructions ``ld_raw`` and
``ld_structured``.

Every expected value here is worked out by hand from the sources: FS 22.4.10 (ld_raw), FS
22.4.12 (ld_structured), FS 22.3.47/48 (the declarations) and the TPF header's token layouts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sm5.cli import main
from sm5.oracle.asm import format_program, parse_program
from sm5.oracle.dxbc import code_tokens, encode_program, program_to_dxbc, read_container
from sm5.oracle.dxbc.harness import ViewBinding, build_harness, decode_state
from sm5.oracle.errors import StateError
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json, state_to_json
from sm5.vectors.check import validator
from sm5.vectors.format import Vector

SRV = "shader resource view"
T0_RAW: dict[str, Any] = {"kind": "raw", "data": [10, 11, 12, 13, 14]}
T1_STRUCTURED: dict[str, Any] = {"kind": "structured", "stride": 8, "count": 2,
                                 "data": [20, 21, 22, 23]}


# ----------------------------------------------------------------------------------------------
# State and vector format


def test_state_json_round_trip_with_srvs() -> None:
    doc = {"r0": [1, 2, 3, 4], "t0": T0_RAW, "t1": T1_STRUCTURED}
    state = state_from_json(doc)
    assert state.resources["t0"].kind == "raw" and state.resources["t0"].size == 20
    assert state.resources["t1"].stride == 8 and state.resources["t1"].count == 2
    assert state_to_json(state) == doc


@pytest.mark.parametrize("doc, message", [
    ({"t0": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3]}},
     "data holds 3 words"),
    ({"t0": {"kind": "raw", "data": [1], "stride": 4}}, "a raw resource has only kind and data"),
    ({"t0": {"kind": "raw", "data": [-1]}}, r"state\.t0\.data\[0\]"),
    ({"s0": {"kind": "raw", "data": [1]}}, "expected r#, u#, g#, t#, cb# or invocation"),
])
def test_bad_srv_state_is_one_clear_error(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(StateError, match=message):
        state_from_json(doc)


def _vector_doc(state: dict[str, Any], expect_state: dict[str, Any]) -> dict[str, Any]:
    return {"id": "store_structured/registers/9999",
            "program": ["dcl_uav_structured u0, 4", "dcl_resource_raw t3",
                        "store_structured u0.x, l(0), l(0), r0.x"],
            "target": "cs_5_0", "runtime": "11.0", "state": state,
            "expect": {"outcomes": ["defined"], "state": expect_state},
            "clauses": ["store_structured.uav.in_bounds"], "flags": ["registers"],
            "reason": "an extra t# beside the instruction"}


def test_vector_schema_accepts_srv_resources() -> None:
    u0 = {"kind": "structured", "stride": 4, "count": 1, "data": [0]}
    doc = _vector_doc({"r0": [5, 0, 0, 0], "u0": u0, "t3": T0_RAW},
                      {"r0": [5, 0, 0, 0], "u0": {**u0, "data": [5]}, "t3": T0_RAW})
    assert list(validator("vector").iter_errors(doc)) == []
    bad = _vector_doc({"r0": [5, 0, 0, 0], "u0": u0, "x3": T0_RAW}, {})
    assert list(validator("vector").iter_errors(bad)) != []


# ----------------------------------------------------------------------------------------------
# Parser and printer


def test_srv_lines_parse_and_print_back() -> None:
    lines = ["cs_5_0", "dcl_resource_raw t0", "dcl_resource_structured t127, 2048",
             "ld_raw r0.xyzw, l(4), t0.yxwz", "ld_structured r1.xy, l(1), l(4), t127.xyzw"]
    program = parse_program(lines)
    decl = program.declarations[1]
    assert (decl.register.file, decl.register.index, decl.numbers) == ("t", 127, (2048,))
    assert program.instructions[0].operands[2].components == "yxwz"
    assert format_program(program) == lines
    assert parse_program(format_program(program)) == program


@pytest.mark.parametrize("line, message", [
    ("dcl_resource_structured t0", "stride"),
    ("dcl_resource_raw u0", "t#"),
    ("dcl_resource_raw t0, 4", "end of line"),
])
def test_bad_srv_declarations_are_one_clear_error(line: str, message: str) -> None:
    from sm5.oracle.errors import AsmError
    with pytest.raises(AsmError, match=message):
        parse_program([line])


# ----------------------------------------------------------------------------------------------
# Executor: t# is read-only state the instruction leaves alone


def test_expected_state_keeps_the_srvs() -> None:
    program = parse_program(["dcl_uav_structured u0, 4", "dcl_resource_raw t0",
                             "dcl_resource_structured t1, 8",
                             "store_structured u0.x, l(0), l(0), r0.x"])
    state = state_from_json({"r0": [5, 0, 0, 0], "t0": T0_RAW, "t1": T1_STRUCTURED,
                             "u0": {"kind": "structured", "stride": 4, "count": 1,
                                    "data": [1]}})
    result = execute(program, state)
    assert result.outcomes == ("defined",) and result.state is not None
    expected = expected_to_json(result.state)
    assert expected["t0"] == T0_RAW and expected["t1"] == T1_STRUCTURED
    assert expected["u0"]["data"] == [5]


@pytest.mark.parametrize("srvs, message", [
    ({"t1": T1_STRUCTURED}, "dcl_resource_raw declares t0 but the state has no t0"),
    ({"t0": T1_STRUCTURED, "t1": T1_STRUCTURED}, "t0 is declared raw but the state gives a "
                                                 "structured resource"),
    ({"t0": T0_RAW, "t1": {"kind": "structured", "stride": 4, "count": 4,
                           "data": [1, 2, 3, 4]}},
     "t1 is declared with stride 8, the state gives 4"),
])
def test_state_checks_name_the_srv(srvs: dict[str, Any], message: str) -> None:
    program = parse_program(["dcl_uav_structured u0, 4", "dcl_resource_raw t0",
                             "dcl_resource_structured t1, 8",
                             "store_structured u0.x, l(0), l(0), r0.x"])
    state = state_from_json({"r0": [0, 0, 0, 0], **srvs,
                             "u0": {"kind": "structured", "stride": 4, "count": 1, "data": [0]}})
    with pytest.raises(StateError, match=message):
        execute(program, state)


def test_an_undeclared_srv_is_rejected_by_the_program_rule() -> None:
    program = parse_program(["ld_raw r0.xyzw, l(0), t0.xyzw"])
    state = state_from_json({"r0": [0, 0, 0, 0], "t0": {"kind": "raw", "data": [0]}})
    result = execute(program, state)
    assert result.rule == "program.undeclared_resource"


# ----------------------------------------------------------------------------------------------
# Harness


READ_PROGRAM = ["dcl_resource_raw t0", "dcl_resource_structured t1, 8",
                "ld_raw r0.xyzw, l(4), t0.yxwz",
                "ld_raw r2.xy, l(16), t0.xyzw",
                "ld_structured r1.xyzw, l(1), l(0), t1.yxxy"]
READ_STATE: dict[str, Any] = {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0], "r2": [9, 9, 9, 9],
                              "t0": T0_RAW, "t1": T1_STRUCTURED}
# FS 22.4.10: ld_raw reads the 4 words from byte 4 (11, 12, 13, 14), then swizzles .yxwz.
# At byte 16 only word 4 (14) is in the 20-byte view: "each 32-bit component that is out of
# bounds returns 0" on a t#, and .zw are not written.
# FS 22.4.12: ld_structured reads from byte 8 * 1 + 0 = 8: words 2, 3 (22, 23), swizzled .yxxy.
READ_EXPECTED = {"r0": (12, 11, 14, 13), "r1": (23, 22, 22, 23), "r2": (14, 0, 9, 9)}


def test_harness_binds_srvs_and_copies_their_declarations() -> None:
    h = build_harness(parse_program(READ_PROGRAM), state_from_json(READ_STATE))
    assert h.state_register == "u0"
    assert h.bindings == (ViewBinding("t0", "raw", "R32_TYPELESS", 0, 5, (10, 11, 12, 13, 14),
                                      SRV),
                          ViewBinding("t1", "structured", "UNKNOWN", 8, 2, (20, 21, 22, 23),
                                      SRV))
    text = format_program(h.program)
    assert text[:5] == ["cs_5_0", "dcl_globalFlags refactoringAllowed", "dcl_resource_raw t0",
                        "dcl_resource_structured t1, 8", "dcl_uav_raw u0"]
    decoded = decode_state(h, h.state_words, {"t0": T0_RAW["data"], "t1": [20, 21, 22, 23]})
    assert state_to_json(decoded) == READ_STATE


def test_a_declared_srv_without_contents_is_not_expressible() -> None:
    from sm5.oracle.errors import NotExpressible
    with pytest.raises(NotExpressible, match="t0 is declared but the state holds no contents"):
        build_harness(parse_program(["dcl_resource_raw t0", "ld_raw r0.x, l(0), t0.xxxx"]),
                      state_from_json({"r0": [0, 0, 0, 0]}))


# ----------------------------------------------------------------------------------------------
# DXBC tokens, written by hand from the TPF header
#
# OpcodeToken0: opcode [10:0], length [30:24]. Operand token: component count [1:0] (0: none,
# 1: one, 2: four), selection mode [3:2] (0 mask, 1 swizzle, 2 select 1), mask [7:4] or
# swizzle [11:4] (2 bits per component, x first), operand type [19:12] (TEMP 0, IMMEDIATE32 4,
# RESOURCE 7, UNORDERED_ACCESS_VIEW 30), index dimension [21:20] (1 = 1D), index representation
# [24:22] (0 = immediate32). dcl_resource_raw (0xA1): the t# operand; dcl_resource_structured
# (0xA2): the t# operand, then the stride DWORD. ld_raw 0xA5, ld_structured 0xA7.

T_DECLARED = 0x00107000          # RESOURCE, 1D index, no components
TOKENS_PROGRAM = ["cs_5_0", "dcl_resource_raw t0", "dcl_resource_structured t5, 12",
                  "ld_raw r0.xyzw, l(4), t0.yxwz", "ld_structured r1.xy, l(1), l(4), t5.xyzw"]
TOKENS = [
    0x00050050,                  # version: compute (5) << 16, major 5 << 4, minor 0
    25,                          # length in DWORDs: 2 + 3 + 4 + 7 + 9
    0x030000A1, T_DECLARED, 0,
    0x040000A2, T_DECLARED, 5, 12,
    0x070000A5,
    0x001000F2, 0,               # r0.xyzw: four components, mask 0xF, TEMP, 1D
    0x00004001, 4,               # l(4): one component, IMMEDIATE32, no index
    0x00107B16, 0,               # t0.yxwz: swizzle y=1 x=0 w=3 z=2 -> 0xB1 << 4
    0x090000A7,
    0x00100032, 1,               # r1.xy: mask 0x3
    0x00004001, 1, 0x00004001, 4,
    0x00107E46, 5,               # t5.xyzw: identity swizzle 0xE4 << 4
]


def test_srv_tokens_match_the_tpf_header() -> None:
    program = parse_program(TOKENS_PROGRAM)
    assert list(encode_program(program)) == TOKENS
    container = read_container(program_to_dxbc(program))
    assert list(code_tokens(container)) == TOKENS


def _vkd3d_lib() -> Any:
    from sm5.conformance.vkd3d.shader import Vkd3dShaderLib, Vkd3dUnavailable
    try:
        return Vkd3dShaderLib()
    except Vkd3dUnavailable as exc:
        pytest.skip(f"libvkd3d-shader unavailable: {exc}")


def test_vkd3d_disassembles_the_srv_tokens_back_to_the_text() -> None:
    lib = _vkd3d_lib()
    text = lib.disassemble(program_to_dxbc(parse_program(TOKENS_PROGRAM)))
    assert [line.strip() for line in text.splitlines() if line.strip()] == TOKENS_PROGRAM


def test_vkd3d_maps_raw_and_structured_srvs_to_uniform_texel_buffers() -> None:
    """vkd3d-shader 1.14 declares a raw or structured t# as an R32_UINT buffer image read with
    OpImageFetch (a uniform texel buffer), in both UAV modes: its buffer-uav option is for UAVs."""
    from sm5.conformance.vkd3d.shader import spirv_descriptors
    lib = _vkd3d_lib()
    h = build_harness(parse_program(READ_PROGRAM), state_from_json(READ_STATE))
    dxbc = program_to_dxbc(h.program)
    for mode, uav_kind in (("texel", "texel"), ("ssbo", "ssbo")):
        kinds = {d.name: d.kind for d in spirv_descriptors(lib.dxbc_to_spirv(dxbc, mode))}
        assert kinds == {"t0": "uniform_texel", "t1": "uniform_texel", "u0": uav_kind}, mode


# ----------------------------------------------------------------------------------------------
# sm5 dxbc


def test_dxbc_export_of_a_vector_with_srvs(tmp_path: Path) -> None:
    vectors = tmp_path / "srv.jsonl"
    header = {"format": "sm5-vectors/1", "instruction": "srv", "spec_version": "0.1.0",
              "generator": {"name": "hand", "version": "1", "seed": 0, "level": 1}, "count": 1}
    vector = {"id": "srv/read/0001", "program": READ_PROGRAM, "target": "cs_5_0",
              "runtime": "11.0", "state": READ_STATE, "expect": {"outcomes": ["defined"]}}
    vectors.write_text(json.dumps(header) + "\n" + json.dumps(vector) + "\n")
    out = tmp_path / "out"
    assert main(["dxbc", "--vectors", str(vectors), "--out", str(out)]) == 0
    entry = json.loads((out / "index.json").read_text())["vectors"]["srv/read/0001"]
    assert entry["bindings"] == {
        "t0": {"kind": "raw", "format": "R32_TYPELESS", "stride": 0, "count": 5,
               "data": [10, 11, 12, 13, 14], "view": SRV},
        "t1": {"kind": "structured", "format": "UNKNOWN", "stride": 8, "count": 2,
               "data": [20, 21, 22, 23], "view": SRV}}
    assert entry["state_buffer"]["register"] == "u0"
    tokens = code_tokens(read_container((out / entry["file"]).read_bytes()))
    # version, length, dcl_globalFlags (one token), then the program's declarations in order.
    assert list(tokens[3:10]) == [0x030000A1, T_DECLARED, 0, 0x040000A2, T_DECLARED, 1, 8]


# ----------------------------------------------------------------------------------------------
# A real run: vkd3d-shader on lavapipe reads t# through the adapter


def _adapter(uav: str) -> Any:
    from sm5.conformance.vkd3d.adapter import TargetUnavailable, Vkd3dLavapipe, create
    try:
        adapter = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    if uav == adapter.uav:
        return adapter
    translator = adapter.translator
    adapter.close()
    return Vkd3dLavapipe(translator, uav=uav)  # type: ignore[arg-type]


@pytest.mark.parametrize("uav", ["texel", "ssbo"])
def test_vkd3d_on_lavapipe_reads_raw_and_structured_srvs(uav: str) -> None:
    adapter = _adapter(uav)
    try:
        vector = Vector("srv/read/0001", tuple(READ_PROGRAM), "cs_5_0", "11.0", READ_STATE, {})
        result = adapter.run(vector)
    finally:
        adapter.close()
    assert result.status == "state", result.reason
    assert result.state is not None
    for name, value in READ_EXPECTED.items():
        assert tuple(result.state[name]) == value, name
    # The SRVs come back unchanged (read back from their windows, canaries intact).
    assert result.state["t0"] == T0_RAW and result.state["t1"] == T1_STRUCTURED
