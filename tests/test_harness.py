"""Harness programs, the state-buffer layout, decoding, the ``sm5 dxbc`` export, and (when
vkd3d-shader and lavapipe are installed: conformance/vkd3d/setup.sh) a translation and a real
run of harnesses compared with the oracle."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sm5.cli import main
from sm5.oracle.asm import format_program, parse_program
from sm5.oracle.dxbc import program_to_dxbc, read_container
from sm5.oracle.dxbc.harness import (
    Harness,
    RegisterSlot,
    StateLayout,
    TgsmSlot,
    ViewBinding,
    build_harness,
    decode_state,
    harness_to_json,
)
from sm5.oracle.errors import NotExpressible, StateError
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import MachineState, register_accepts, state_from_json

UAV = "unordered access view"
SAMPLE_PROGRAM = [
    "dcl_globalFlags enableDoublePrecisionFloatOps",
    "dcl_uav_structured u0, 16",
    "dcl_tgsm_raw g0, 24",
    "dcl_tgsm_structured g1, 8, 2",
    "dcl_temps 2",
    "dcl_thread_group 4, 1, 1",
    "store_structured u0.xy, r0.x, l(12), r1.xyzw",
    "imm_atomic_iadd r2.x, g0, l(4), r0.y",
    "store_structured g1.x, vThreadIDInGroupFlattened.x, l(4), r0.z",
    "dmovc r3.xyzw, r2.xyxx, r0.xyzw, r1.xyzw",
]
SAMPLE_STATE: dict[str, Any] = {
    "r0": [5, 0, 0, 0], "r1": [1, 2, 3, 4],
    "u0": {"kind": "structured", "stride": 16, "count": 2, "data": [0, 1, 2, 3, 4, 5, 6, 7]},
    "g0": {"kind": "raw", "data": [11, 12, 13, 14, 15, 16]},
    "g1": {"kind": "structured", "stride": 8, "count": 2, "data": [21, 22, 23, 24]},
}

# Written by hand from the layout rule: registers r0..r3 at 16-byte steps (r2, r3 are used by
# the program but absent from the state: they start as zero), then g0 (6 words at word 16), then
# g1 (4 words at word 22); the state buffer is u1 (u0 is the vector's); r4 holds the copy loops'
# counters (x: g# byte or structure, y: byte in the structure, z: state-buffer byte, w: the
# test) and r5 the words moved, two a step (6 words of g0 and 2 per structure of g1 are even,
# not multiples of 4). The program's instructions are copied unchanged (printed canonically:
# r0.z as swizzle r0.zzzz).
_G0_IN = """mov r4.x, l(0)
mov r4.z, l(64)
loop
uge r4.w, r4.xxxx, l(24)
breakc_nz r4.w
ld_raw r5.xy, r4.z, u1.xyzw
store_raw g0.xy, r4.x, r5.xyzw
iadd r4.x, r4.xxxx, l(8)
iadd r4.z, r4.zzzz, l(8)
endloop"""
_G1_IN = """mov r4.x, l(0)
mov r4.z, l(88)
loop
uge r4.w, r4.xxxx, l(2)
breakc_nz r4.w
mov r4.y, l(0)
loop
uge r4.w, r4.yyyy, l(8)
breakc_nz r4.w
ld_raw r5.xy, r4.z, u1.xyzw
store_structured g1.xy, r4.x, r4.y, r5.xyzw
iadd r4.y, r4.yyyy, l(8)
iadd r4.z, r4.zzzz, l(8)
endloop
iadd r4.x, r4.xxxx, l(1)
endloop"""
_G0_OUT = _G0_IN.replace("""ld_raw r5.xy, r4.z, u1.xyzw
store_raw g0.xy, r4.x, r5.xyzw""", """ld_raw r5.xy, r4.x, g0.xyzw
store_raw u1.xy, r4.z, r5.xyzw""")
_G1_OUT = _G1_IN.replace("""ld_raw r5.xy, r4.z, u1.xyzw
store_structured g1.xy, r4.x, r4.y, r5.xyzw""", """ld_structured r5.xy, r4.x, r4.y, g1.xyzw
store_raw u1.xy, r4.z, r5.xyzw""")
SAMPLE_HARNESS = f"""cs_5_0
dcl_globalFlags refactoringAllowed | enableDoublePrecisionFloatOps
dcl_uav_structured u0, 16
dcl_tgsm_raw g0, 24
dcl_tgsm_structured g1, 8, 2
dcl_uav_raw u1
dcl_input vThreadIDInGroupFlattened
dcl_temps 6
dcl_thread_group 1, 1, 1
ld_raw r0.xyzw, l(0), u1.xyzw
ld_raw r1.xyzw, l(16), u1.xyzw
ld_raw r2.xyzw, l(32), u1.xyzw
ld_raw r3.xyzw, l(48), u1.xyzw
{_G0_IN}
{_G1_IN}
store_structured u0.xy, r0.x, l(12), r1.xyzw
imm_atomic_iadd r2.x, g0, l(4), r0.y
store_structured g1.x, vThreadIDInGroupFlattened.x, l(4), r0.zzzz
dmovc r3.xyzw, r2.xyxx, r0.xyzw, r1.xyzw
store_raw u1.xyzw, l(0), r0.xyzw
store_raw u1.xyzw, l(16), r1.xyzw
store_raw u1.xyzw, l(32), r2.xyzw
store_raw u1.xyzw, l(48), r3.xyzw
{_G0_OUT}
{_G1_OUT}
ret"""


def sample() -> Harness:
    return build_harness(parse_program(SAMPLE_PROGRAM), state_from_json(SAMPLE_STATE))


def test_sample_harness_program() -> None:
    h = sample()
    assert h.program == parse_program(SAMPLE_HARNESS)
    assert h.program.target == "cs_5_0"
    assert format_program(h.program) == SAMPLE_HARNESS.splitlines()


def test_sample_harness_layout_words_and_bindings() -> None:
    h = sample()
    assert h.state_slot == 1 and h.state_register == "u1"
    assert h.layout == StateLayout(
        registers=(RegisterSlot("r0", 0), RegisterSlot("r1", 4), RegisterSlot("r2", 8),
                   RegisterSlot("r3", 12)),
        tgsm=(TgsmSlot("g0", 16, 6, "raw"), TgsmSlot("g1", 22, 4, "structured", 8, 2)),
        words=26)
    assert h.state_words == (5, 0, 0, 0, 1, 2, 3, 4, *(0,) * 8, 11, 12, 13, 14, 15, 16,
                             21, 22, 23, 24)
    assert h.bindings == (ViewBinding("u0", "structured", "UNKNOWN", 16, 2,
                                      (0, 1, 2, 3, 4, 5, 6, 7), UAV),)


def test_decode_initial_words_gives_back_the_state() -> None:
    h = sample()
    state = state_from_json(SAMPLE_STATE)
    decoded = decode_state(h, h.state_words, {"u0": (0, 1, 2, 3, 4, 5, 6, 7)})
    assert decoded.resources == state.resources
    assert decoded.registers == {**state.registers, "r2": (0, 0, 0, 0), "r3": (0, 0, 0, 0)}
    assert decoded.invocation == "active"


def test_decode_final_words() -> None:
    h = sample()
    final = list(range(100, 126))
    decoded = decode_state(h, final, {"u0": [9] * 8, "u1": final})
    assert decoded.registers["r3"] == (112, 113, 114, 115)
    assert decoded.resources["g0"].data == (116, 117, 118, 119, 120, 121)
    assert decoded.resources["g1"].data == (122, 123, 124, 125)
    assert decoded.resources["g1"].stride == 8 and decoded.resources["g1"].count == 2
    assert decoded.resources["u0"].data == (9,) * 8


@pytest.mark.parametrize("words, uavs, message", [
    ([0] * 25, {"u0": [0] * 8}, "holds 25 words, the layout 26"),
    ([0] * 26, {}, "no contents for u0"),
    ([0] * 26, {"u0": [0] * 7}, "7 words, the binding holds 8"),
    ([0] * 26, {"u0": [0] * 8, "u5": [1]}, "unbound view(s) u5"),
    ([0] * 25 + [1 << 32], {"u0": [0] * 8}, "expected a u32 word"),
    ([0] * 26, {"u0": [0] * 7 + [-1]}, "expected a u32 word"),
])
def test_decode_errors(words: list[int], uavs: dict[str, list[int]], message: str) -> None:
    with pytest.raises(StateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_state(sample(), words, uavs)


def harness_of(lines: list[str], state: dict[str, Any], runtime: str = "11.0") -> Harness:
    return build_harness(parse_program(lines), state_from_json(state), runtime=runtime)


def test_typed_and_raw_bindings_and_no_tgsm() -> None:
    h = harness_of(["dcl_uav_typed_buffer (sint,sint,sint,sint) u2", "dcl_uav_raw_glc u0",
                    "imm_atomic_iadd r0.y, u2, l(1), l(7)"],
                   {"r0": [1, 2, 3, 4],
                    "u2": {"kind": "typed", "format": "R32_SINT", "data": [1, 2, 3]},
                    "u0": {"kind": "raw", "data": [5, 6]}})
    assert h.state_slot == 1
    assert h.bindings == (ViewBinding("u0", "raw", "R32_TYPELESS", 0, 2, (5, 6), UAV),
                          ViewBinding("u2", "typed", "R32_SINT", 0, 3, (1, 2, 3), UAV))
    text = format_program(h.program)
    assert text[:6] == ["cs_5_0", "dcl_globalFlags refactoringAllowed",
                        "dcl_uav_typed_buffer (sint,sint,sint,sint) u2", "dcl_uav_raw_glc u0",
                        "dcl_uav_raw u1", "dcl_temps 2"]
    assert "dcl_input vThreadIDInGroupFlattened" not in text
    decoded = decode_state(h, h.state_words, {"u0": (5, 6), "u2": (1, 2, 3)})
    assert decoded == state_from_json({"r0": [1, 2, 3, 4],
                                       "u2": {"kind": "typed", "format": "R32_SINT",
                                              "data": [1, 2, 3]},
                                       "u0": {"kind": "raw", "data": [5, 6]}})


def test_scratch_register_follows_the_highest_register() -> None:
    h = harness_of(["dcl_uav_raw u0", "imm_atomic_iadd r7.w, u0, l(0), r0.x"],
                   {"r0": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [0]}})
    assert [r.name for r in h.layout.registers] == ["r0", "r7"]
    assert "dcl_temps 9" in format_program(h.program)


def test_state_slot_avoids_every_used_uav() -> None:
    state = {"r0": [0, 0, 0, 0], **{f"u{i}": {"kind": "raw", "data": [0]} for i in (0, 1, 3)}}
    h = harness_of(["dcl_uav_raw u0", "dcl_uav_raw u1", "imm_atomic_iadd r0.x, u1, l(0), l(1)"],
                   state)
    assert h.state_slot == 2
    full = {"r0": [0, 0, 0, 0], **{f"u{i}": {"kind": "raw", "data": [0]} for i in range(8)}}
    lines = ["dcl_uav_raw u7", "imm_atomic_iadd r0.x, u7, l(0), l(1)"]
    with pytest.raises(NotExpressible, match="no free UAV slot"):
        harness_of(lines, full)
    assert harness_of(lines, full, runtime="11.1").state_slot == 8


@pytest.mark.parametrize("lines, state, message", [
    (["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0]}, "invocation": "helper"},
     "invocation is 'helper'"),
    (["mov r0.x, l(1)", "discard_nz r0.x"],
     {"r0": [0, 0, 0, 0]}, "discard does not exist in the compute stage"),
    (["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"], {"r0": [0, 0, 0, 0]},
     "u0 is declared but the state holds no contents"),
    (["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0]},
      "g0": {"kind": "raw", "data": [0]}}, "does not declare it"),
    (["dcl_tgsm_raw g0, 8", "imm_atomic_iadd r0.x, g0, l(0), l(1)"],
     {"r0": [0, 0, 0, 0], "g0": {"kind": "raw", "data": [0]}}, "do not fit the declaration"),
    (["dcl_tgsm_structured g0, 8, 2", "imm_atomic_iadd r0.x, g0, l(0, 0, 0, 0), l(1)"],
     {"r0": [0, 0, 0, 0], "g0": {"kind": "raw", "data": [0, 0, 0, 0]}},
     "do not fit the declaration"),
])
def test_not_expressible(lines: list[str], state: dict[str, Any], message: str) -> None:
    with pytest.raises(NotExpressible, match=message):
        harness_of(lines, state)


def test_program_target_does_not_change_the_harness() -> None:
    lines = ["dcl_uav_structured u0, 4", "store_structured u0.x, l(0), l(0), r0.x"]
    state = {"r0": [7, 0, 0, 0], "u0": {"kind": "structured", "stride": 4, "count": 1,
                                        "data": [0]}}
    a = harness_of(lines, state)
    b = build_harness(parse_program(["ps_5_0", *lines]), state_from_json(state))
    assert a == b and b.program.target == "cs_5_0"


def test_harness_json() -> None:
    doc = harness_to_json(sample())
    assert doc["state_buffer"] == {"register": "u1", "words": list(sample().state_words)}
    assert doc["layout"]["registers"] == {"r0": 0, "r1": 4, "r2": 8, "r3": 12}
    assert doc["layout"]["tgsm"]["g1"] == {"offset": 22, "words": 4, "kind": "structured",
                                           "stride": 8, "count": 2}
    assert doc["bindings"] == {"u0": {"kind": "structured", "format": "UNKNOWN", "stride": 16,
                                      "count": 2, "data": [0, 1, 2, 3, 4, 5, 6, 7],
                                      "view": UAV}}
    json.dumps(doc)


# ----------------------------------------------------------------------------------------------
# sm5 dxbc


def _vector(vid: str, program: list[str], state: dict[str, Any],
            outcomes: list[str]) -> dict[str, Any]:
    return {"id": vid, "program": program, "target": "cs_5_0", "runtime": "11.0",
            "state": state, "expect": {"outcomes": outcomes}, "clauses": [], "flags": [],
            "reason": ""}


def _write_vectors(path: Path, vectors: list[dict[str, Any]]) -> None:
    header = {"format": "sm5-vectors/1", "instruction": "store_structured", "spec_version": "0",
              "generator": {}, "count": len(vectors)}
    path.write_text("\n".join(json.dumps(x) for x in [header, *vectors]) + "\n")


VECTORS = [
    _vector("dmovc/x/0001", SAMPLE_PROGRAM, SAMPLE_STATE, ["defined"]),
    _vector("dmovc/x/0002", ["dmovc r0.xy, r0.xyxx, r0.xyzw, r0.xyzw"], {"r0": [0, 0, 0, 0]},
            ["rejected"]),
    _vector("imm_atomic_iadd/helper/0001",
            ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
            {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0]}, "invocation": "helper"},
            ["no_write", "dst_undefined"]),
]


def test_dxbc_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vectors = tmp_path / "in" / "a.jsonl"
    vectors.parent.mkdir()
    _write_vectors(vectors, VECTORS)
    out = tmp_path / "out"
    assert main(["dxbc", "--vectors", str(vectors.parent), "--out", str(out)]) == 0
    assert "wrote 1 programs" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["dmovc__x__0001.dxbc", "index.json"]
    blob = (out / "dmovc__x__0001.dxbc").read_bytes()
    read_container(blob)
    assert blob == program_to_dxbc(sample().program)
    index = json.loads((out / "index.json").read_text())
    entry = index["vectors"]["dmovc/x/0001"]
    assert entry["file"] == "dmovc__x__0001.dxbc"
    assert entry["sha256"] == hashlib.sha256(blob).hexdigest()
    assert entry["state_buffer"]["register"] == "u1"
    assert index["not_expressible"] == {
        "imm_atomic_iadd/helper/0001": "the invocation is 'helper'; a compute harness runs only "
                                       "active invocations"}
    assert index["rejected_skipped"] == 1
    first = (out / "index.json").read_bytes()
    assert main(["dxbc", "--vectors", str(vectors), "--out", str(out)]) == 0
    assert (out / "index.json").read_bytes() == first
    assert first.decode() == json.dumps(index, sort_keys=True, separators=(",", ":")) + "\n"


def _file(*lines: str) -> str:
    """A vector file: a complete header (the readers enforce its count), then ``lines``."""
    header = {"format": "sm5-vectors/1", "instruction": "x", "spec_version": "0",
              "generator": {}, "count": len(lines)}
    return "".join(line + "\n" for line in (json.dumps(header), *lines))


@pytest.mark.parametrize("content, message", [
    ('{"format": "other"}\n', "first line must be a header"),
    (_file("not json"), "not JSON"),
    (_file(json.dumps(_vector("../x", ["ret"], {}, ["defined"]))), "not a safe file name"),
    (_file(json.dumps(_vector("a", ["bogus r0"], {}, ["defined"]))), "bogus"),
    (_file(json.dumps(VECTORS[0]), json.dumps(VECTORS[0])), "repeats"),
    (_file(json.dumps(VECTORS[0]), json.dumps(VECTORS[0]))[:-1], "cut short"),
])
def test_dxbc_export_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                               message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    assert main(["dxbc", "--vectors", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err


# ----------------------------------------------------------------------------------------------
# vkd3d-shader and lavapipe

def _vkd3d() -> Any:
    from sm5.conformance.vkd3d.shader import Vkd3dShaderLib, find_library
    path = find_library()
    return Vkd3dShaderLib(path) if path is not None else None


VKD3D = _vkd3d()
needs_vkd3d = pytest.mark.skipif(
    VKD3D is None, reason="libvkd3d-shader not built (run conformance/vkd3d/setup.sh)")


@needs_vkd3d
def test_vkd3d_disassembles_and_translates_the_harness() -> None:
    from sm5.conformance.vkd3d.shader import spirv_bindings

    h = sample()
    blob = program_to_dxbc(h.program)
    text = VKD3D.disassemble(blob)
    lines = [" ".join(x.split()) for x in text.splitlines() if x.strip()]
    # the differences: vkd3d prints the one-component thread index without its ".x", a select
    # or replicated swizzle as its single letter (r0.z, not the parsed swizzle's r0.zzzz), and
    # breakc under its own name for it (breakp)
    expected = SAMPLE_HARNESS.replace("vThreadIDInGroupFlattened.x", "vThreadIDInGroupFlattened")
    expected = expected.replace("r0.zzzz", "r0.z")
    for letter in "xyz":  # the copy loops' counters, read as a replicated swizzle
        expected = expected.replace(f"r4.{letter * 4}", f"r4.{letter}")
    expected = expected.replace("breakc_nz", "breakp_nz")
    assert lines == expected.splitlines()
    spirv = VKD3D.dxbc_to_spirv(blob)
    assert spirv_bindings(spirv) == {"u0": 0, "u1": 1}


def _vulkan_reason() -> str:
    if VKD3D is None:
        return "libvkd3d-shader not built (run conformance/vkd3d/setup.sh)"
    from sm5.conformance.vkd3d.vulkan_runner import vulkan_available
    ok, reason = vulkan_available()
    return "" if ok else reason


VULKAN_REASON = _vulkan_reason()

# In-bounds instances whose oracle outcome is "defined": the harness run on lavapipe must give
# back exactly the oracle's final state.
RUN_CASES = [
    (["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(4), r1.zwxy"],
     {"r0": [1, 0, 0, 0], "r1": [1, 2, 3, 4],
      "u0": {"kind": "structured", "stride": 16, "count": 2, "data": list(range(100, 108))}}),
    (["dcl_tgsm_structured g1, 8, 2", "imm_atomic_iadd r2.y, g1, r0.xyyy, r0.z"],
     {"r0": [1, 4, 7, 0], "r2": [9, 9, 9, 9],
      "g1": {"kind": "structured", "stride": 8, "count": 2, "data": [10, 11, 12, 13]}}),
    (["dcl_tgsm_raw g0, 24", "imm_atomic_iadd r0.w, g0, l(20), l(0xffffffff)"],
     {"r0": [0, 0, 0, 0], "g0": {"kind": "raw", "data": [1, 2, 3, 4, 5, 6]}}),
    (["dcl_uav_raw u2", "imm_atomic_iadd r1.z, u2, r0.y, r0.x"],
     {"r0": [5, 8, 0, 0], "r1": [0, 0, 0, 0], "u2": {"kind": "raw", "data": [1, 2, 3, 4]}}),
    (["dcl_globalFlags enableDoublePrecisionFloatOps",
      "dmovc_sat r3.xyzw, r2.xyxx, -r0.xyzw, |r1.zwxy|"],
     {"r0": [0, 0x3FF00000, 0, 0xBFF00000], "r1": [1, 0x40000000, 0, 0x3FE00000],
      "r2": [1, 0, 0, 0], "r3": [0, 0, 0, 0]}),
    (["dcl_globalFlags enableDoublePrecisionFloatOps", "dmovc r3.zw, r2.zwxy, r0.zwzw, r1.xyxy"],
     {"r0": [1, 2, 3, 0x7FF00001], "r1": [5, 6, 7, 8], "r2": [0, 0, 0, 1], "r3": [9, 9, 9, 9]}),
]


@pytest.mark.skipif(bool(VULKAN_REASON), reason=VULKAN_REASON or "available")
def test_harness_runs_on_lavapipe_like_the_oracle() -> None:
    from sm5.conformance.vkd3d.shader import spirv_bindings
    from sm5.conformance.vkd3d.vulkan_runner import BufferBinding, VulkanRunner

    with VulkanRunner() as runner:
        for lines, state_doc in RUN_CASES:
            program, state = parse_program(lines), state_from_json(state_doc)
            expected = execute(program, state)
            assert expected.outcomes == ("defined",) and expected.state is not None
            h = build_harness(program, state)
            spirv = VKD3D.dxbc_to_spirv(program_to_dxbc(h.program))
            slots = spirv_bindings(spirv)
            buffers = [BufferBinding(slots[h.state_register], h.state_words)]
            buffers += [BufferBinding(slots[b.register], b.data) for b in h.bindings]
            outputs = runner.run(spirv, buffers)
            assert all(o.guard_intact for o in outputs)
            final = decode_state(h, outputs[0].words,
                                 {b.register: o.words for b, o in zip(h.bindings, outputs[1:],
                                                                       strict=True)})
            _assert_accepted(final, expected.state, lines)


def _assert_accepted(final: MachineState, expected: Any, lines: list[str]) -> None:
    for name, want in expected.registers.items():
        assert not register_accepts(want, final.registers[name]), (lines, name)
    for name, res in expected.resources.items():
        assert res is not None and final.resources[name].data == res.words, (lines, name)


@pytest.mark.parametrize("kind", ["raw", "structured"])
def test_harness_size_does_not_grow_with_tgsm(kind: str) -> None:
    """g# is copied in and out by a loop: 16 bytes and 32 KB of g# make harnesses of the same
    number of tokens (only the loop bounds differ)."""
    def blob(words: int) -> bytes:
        decl = (f"dcl_tgsm_raw g0, {4 * words}" if kind == "raw"
                else f"dcl_tgsm_structured g0, 16, {words // 4}")
        program = parse_program([decl, "ld_raw r0.x, l(0), g0.xxxx"] if kind == "raw" else
                                [decl, "ld_structured r0.x, l(0), l(0), g0.xxxx"])
        resource: dict[str, Any] = {"kind": kind, "data": list(range(words))}
        if kind == "structured":
            resource.update(stride=16, count=words // 4)
        return program_to_dxbc(build_harness(program, state_from_json({"g0": resource})).program)

    assert len(blob(4)) == len(blob(8192))
