"""The DXBC encoder: hand-derived token checks, the container, its checksum, and a round trip
through vkd3d-shader's disassembler (when the library is built: conformance/vkd3d/setup.sh).

Token expectations below are written by hand from the TPF header (reference notes A6), never
computed by the encoder: ``0x0011E012`` for ``u0.x`` is 2 (four components) | 0 << 2 (mask mode)
| 0x10 (mask .x) | 30 << 12 (UAV) | 1 << 20 (1-D index).
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sm5.oracle.dxbc import (
    build_container,
    checksum,
    code_tokens,
    dxbc_md5,
    encode_program,
    program_to_dxbc,
    read_container,
    shader_container,
)
from sm5.oracle.dxbc.container import md5_blocks, md5_compress
from sm5.oracle.errors import ContainerError, EncodeError, Sm5Error
from sm5.oracle.machine.program import Declaration, Instruction, Line, Operand, Program
from sm5.oracle.model.encoding import load_default_encoding
from sm5.oracle.model.spec import load_default

XYZW = "xyzw"


def r(index: int, selection: str = "select", components: str = "x", *, neg: bool = False,
      abs_: bool = False) -> Operand:
    return Operand("r", index, selection=selection, components=components,  # type: ignore[arg-type]
                   neg=neg, abs=abs_)


def lit(*values: int, selection: str = "select") -> Operand:
    return Operand("l", values=values, selection=selection)  # type: ignore[arg-type]


def res(file: str, index: int, mask: str = "") -> Operand:
    return Operand(file, index, selection="mask" if mask else "none", components=mask)


THREAD_X = Operand("vThreadIDInGroupFlattened", selection="select", components="x")


def body(*lines: Line, target: str = "cs_5_0") -> tuple[int, ...]:
    """The tokens after the version and length tokens."""
    tokens = encode_program(Program(tuple(lines), target))
    assert tokens[1] == len(tokens)
    return tokens[2:]


# ----------------------------------------------------------------------------------------------
# Tokens, by hand


def test_version_tokens() -> None:
    # program type << 16 | major << 4 | minor
    assert encode_program(Program((), "cs_5_0"))[:2] == (0x00050050, 2)
    assert encode_program(Program((), "cs_4_1"))[0] == 0x00050041
    assert encode_program(Program((), "ps_5_0"))[0] == 0x00000050
    assert encode_program(Program((), "vs_4_0"))[0] == 0x00010040
    assert encode_program(Program((), "hs_5_0"))[0] == 0x00030050
    assert encode_program(Program(()))[0] == 0x00050050  # no target: cs_5_0


def test_store_structured_tokens() -> None:
    ins = Instruction("store_structured", (res("u", 0, "x"), r(0, "select", "x"),
                                           r(0, "select", "y"), r(0, "select", "z")))
    assert body(ins) == (
        0x090000A8,               # opcode 0xA8, 9 DWORDs
        0x0011E012, 0,            # u0.x: 4 comps, mask mode, mask x, type 30, 1-D
        0x0010000A, 0,            # r0.x: 4 comps, select_1 mode (2 << 2), component 0
        0x0010001A, 0,            # r0.y: select component 1 (1 << 4)
        0x0010002A, 0,            # r0.z: select component 2
    )


def test_store_structured_tgsm_immediates_and_thread_index() -> None:
    ins = Instruction("store_structured", (res("g", 3, "xyzw"), THREAD_X, lit(12),
                                           lit(1, 2, 0x80000000, 0xFFFFFFFF,
                                               selection="swizzle")))
    assert body(ins) == (
        0x0B0000A8,               # 1 + 2 + 1 + 2 + 5 DWORDs
        0x0011F0F2, 3,            # g3.xyzw: mask 0xF0, type 31
        0x00024001,               # vThreadIDInGroupFlattened: 1 component, type 36, 0-D
        0x00004001, 12,           # l(12): 1 component, type 4, 0-D, one value
        0x00004002, 1, 2, 0x80000000, 0xFFFFFFFF,   # l(a, b, c, d): 4 comps, mask mode, mask 0
    )


def test_imm_atomic_iadd_tokens() -> None:
    ins = Instruction("imm_atomic_iadd", (r(1, "mask", "x"), res("u", 0),
                                          r(0, "swizzle", "xyyy"), r(0, "select", "z")))
    assert body(ins) == (
        0x090000B4,
        0x00100012, 1,            # r1.x mask
        0x0011E000, 0,            # u0: 0 components (the resource of an atomic)
        0x00100546, 0,            # r0.xyyy: swizzle mode (1 << 2), selectors 0,1,1,1 -> 0x54
        0x0010002A, 0,            # r0.z
    )


def test_dmovc_sat_and_modifiers_tokens() -> None:
    ins = Instruction("dmovc", (r(3, "mask", "xy"), r(2, "swizzle", "xyxx"),
                                r(0, "swizzle", "xyzw", neg=True),
                                r(1, "swizzle", "zwxy", abs_=True)), sat=True)
    assert body(ins) == (
        0x0B0020C8,               # opcode 0xC8, _sat (1 << 13), 11 DWORDs
        0x00100032, 3,            # r3.xy: mask 0x30
        0x00100046, 2,            # r2.xyxx: selectors 0,1,0,0 -> 0x04
        0x80100E46, 0x00000041, 0,   # -r0.xyzw: extended bit; modifier token type 1, NEG 1 << 6
        0x801004E6, 0x00000081, 1,   # |r1.zwxy|: selectors 2,3,0,1 -> 0x4E; ABS 2 << 6
    )
    both = Instruction("dmovc", (r(0, "mask", "zw"), r(1, "swizzle", "wwww"),
                                 r(2, "swizzle", "zwzw", neg=True, abs_=True),
                                 r(3, "swizzle", "xyxy")))
    assert body(both) == (
        0x0A0000C8,
        0x001000C2, 0,            # r0.zw: mask 0xC0
        0x00100FF6, 1,            # r1.wwww: selectors 3,3,3,3 -> 0xFF
        0x80100EE6, 0x000000C1, 2,   # -|r2.zwzw|: selectors 2,3,2,3 -> 0xEE; ABSNEG 3 << 6
        0x00100446, 3,            # r3.xyxy: selectors 0,1,0,1 -> 0x44
    )


def test_auxiliary_instruction_tokens() -> None:
    lines = (
        Instruction("ld_raw", (r(4, "mask", "xyzw"), lit(16), Operand("u", 1, selection="swizzle",
                                                                    components=XYZW))),
        Instruction("store_raw", (res("u", 1, "xy"), lit(8), r(4, "swizzle", XYZW))),
        Instruction("ld_structured", (r(2, "mask", "x"), lit(1), lit(4),
                                      Operand("g", 0, selection="swizzle", components=XYZW))),
        Instruction("mov", (r(0, "mask", "xyzw"), lit(1, 2, 3, 4, selection="swizzle"))),
        Instruction("ret", ()),
    )
    assert body(*lines) == (
        0x070000A5, 0x001000F2, 4, 0x00004001, 16, 0x0011EE46, 1,   # u1.xyzw swizzle 0xE4
        0x070000A6, 0x0011E032, 1, 0x00004001, 8, 0x00100E46, 4,
        0x090000A7, 0x00100012, 2, 0x00004001, 1, 0x00004001, 4, 0x0011FE46, 0,
        0x08000036, 0x001000F2, 0, 0x00004002, 1, 2, 3, 4,
        0x0100003E,
    )


def test_copy_loop_instruction_tokens() -> None:
    """The harness's copy loop: loop/endloop take no operand; breakc_nz is breakc (3) with the
    test-boolean bit (18) set; uge is 0x50 and iadd 0x1E (D3D10_SB_OPCODE_TYPE order)."""
    lines = (
        Instruction("loop", ()),
        Instruction("uge", (r(4, "mask", "w"), r(4, "swizzle", "xxxx"),
                            lit(24, selection="swizzle"))),
        Instruction("breakc", (r(4, "select", "w"),), flags=("nz",)),
        Instruction("iadd", (r(4, "mask", "x"), r(4, "swizzle", "xxxx"),
                             lit(16, selection="swizzle"))),
        Instruction("endloop", ()),
    )
    assert body(*lines) == (
        0x01000030,
        0x07000050, 0x00100082, 4, 0x00100006, 4, 0x00004001, 24,
        0x0304_0003, 0x0010003A, 4,            # select w: mode 2 << 2, component 3 << 4
        0x0700001E, 0x00100012, 4, 0x00100006, 4, 0x00004001, 16,
        0x01000016,
    )


def test_declaration_tokens() -> None:
    u = res("u", 0)
    lines = (
        Declaration("dcl_globalFlags", flags=("refactoringAllowed",
                                              "enableDoublePrecisionFloatOps")),
        Declaration("dcl_uav_structured", register=u, numbers=(16,)),
        Declaration("dcl_uav_structured", register=res("u", 2), numbers=(8,),
                    flags=("glc", "opc")),
        Declaration("dcl_uav_raw", register=res("u", 1), flags=("glc",)),
        Declaration("dcl_uav_typed_buffer", register=res("u", 3),
                    return_type=("uint", "uint", "uint", "uint")),
        Declaration("dcl_uav_typed_buffer", register=res("u", 4),
                    return_type=("sint", "sint", "sint", "sint")),
        Declaration("dcl_tgsm_raw", register=res("g", 0), numbers=(16,)),
        Declaration("dcl_tgsm_structured", register=res("g", 1), numbers=(8, 4)),
        Declaration("dcl_input", register=Operand("vThreadIDInGroupFlattened")),
        Declaration("dcl_temps", numbers=(5,)),
        Declaration("dcl_thread_group", numbers=(1, 2, 3)),
    )
    assert body(*lines) == (
        0x0100186A,                                   # flags: 1 << 11 | 1 << 12
        0x0400009E, 0x0011E000, 0, 16,
        0x0481009E, 0x0011E000, 2, 8,                 # _glc 1 << 16, _opc 1 << 23
        0x0301009D, 0x0011E000, 1,
        0x0400089C, 0x0011E000, 3, 0x00004444,        # dimension buffer (1 << 11); UINT 4
        0x0400089C, 0x0011E000, 4, 0x00003333,        # SINT 3
        0x0400009F, 0x0011F000, 0, 16,
        0x050000A0, 0x0011F000, 1, 8, 4,
        0x0200005F, 0x00024001,
        0x02000068, 5,
        0x0400009B, 1, 2, 3,
    )


def test_every_spec_declaration_has_an_encoding() -> None:
    spec = load_default()
    encoding = load_default_encoding()
    assert set(spec.declarations.declarations) <= set(encoding.declarations)
    assert set(spec.declarations.return_types) <= set(encoding.return_types)
    for decl in spec.declarations.declarations.values():
        assert set(decl.global_flags) <= set(encoding.global_flags)
        assert set(decl.flags) <= set(encoding.declaration_flags)
    assert {s.name for s in spec.model.stages} <= set(encoding.program_types)
    files = {f.name for f in spec.model.register_files}
    assert files <= set(encoding.operand_types)


@pytest.mark.parametrize("line, message", [
    (Instruction("frobnicate", ()), "no encoding for instruction 'frobnicate'"),
    (Instruction("ret", (r(0),)), "ret takes 0 operands, got 1"),
    (Instruction("mov", (r(0, "mask", "xy"), lit(1, 2, 3))), "1 or 4 values, not 3"),
    (Instruction("mov", (r(0, "mask", "yx"), lit(1))), "not in xyzw order"),
    (Instruction("mov", (r(0, "mask", "xx"), lit(1))), "not in xyzw order"),
    (Instruction("mov", (r(0, "mask", "xq"), lit(1))), "bad components"),
    (Instruction("mov", (r(0, "none", ""), lit(1))), "needs a mask, swizzle or select"),
    (Instruction("mov", (r(0, "mask", "x"), r(1, "swizzle", "xyzwx"))), "longer than 4"),
    (Instruction("mov", (r(0, "mask", "x"), r(1, "select", "xy"))), "one component"),
    (Instruction("mov", (Operand("r", None, selection="mask", components="x"), lit(1))),
     "needs a register number"),
    (Instruction("mov", (r(0, "mask", "x"), Operand("q", 1, selection="select",
                                                   components="x"))), "register file 'q'"),
    (Instruction("mov", (r(0, "mask", "x"), lit(1 << 32))), "does not fit 32 bits"),
    (Instruction("mov", (r(0, "mask", "x"), Operand("vThreadIDInGroupFlattened",
                                                   selection="select", components="y"))),
     "only .x selects it"),
    (Instruction("mov", (r(0, "mask", "x"), Operand("l", values=(1,), components="x",
                                                   selection="select"))), "no components"),
    (Declaration("dcl_bogus"), "no encoding for declaration 'dcl_bogus'"),
    (Declaration("dcl_globalFlags", flags=("fastMath",)), "unknown global flag 'fastMath'"),
    (Declaration("dcl_uav_raw", register=res("u", 0), flags=("opc",)), "takes no flag 'opc'"),
    (Declaration("dcl_uav_raw", register=res("g", 0)), "declares a u register"),
    (Declaration("dcl_uav_structured", register=res("u", 0)), "takes 1 number(s) (stride)"),
    (Declaration("dcl_uav_typed_buffer", register=res("u", 0), return_type=("uint", "bogus",
                                                                           "uint", "uint")),
     "unknown return type 'bogus'"),
    (Declaration("dcl_temps", register=res("u", 0), numbers=(1,)), "declares no register"),
])
def test_unencodable_lines_are_encode_errors(line: Line, message: str) -> None:
    with pytest.raises(EncodeError, match=re.escape(message)):
        encode_program(Program((line,)))


def test_encode_error_names_the_line() -> None:
    bad = Instruction("mov", (r(0, "mask", "x"), lit(1, 2)), line=7)
    with pytest.raises(EncodeError) as info:
        encode_program(Program((Instruction("ret", (), line=6), bad)))
    assert info.value.where.startswith("line 7 operand 2")
    with pytest.raises(EncodeError, match="unknown target"):
        encode_program(Program((), "zz_9_9"))


def test_length_field_counts_immediate_values() -> None:
    wide = lit(1, 2, 3, 4, selection="swizzle")
    ins = Instruction("store_structured", (res("u", 0, "x"), wide, wide, wide))
    assert body(ins)[0] == 0x120000A8   # 1 + 2 + 3 * 5 = 18 DWORDs


# ----------------------------------------------------------------------------------------------
# Checksum and container

# Known answers produced once by vkd3d-shader 1.14's own container writer
# (vkd3d_shader_serialize_dxbc) and copied here; each covers one padding case of the final block.
KNOWN_CONTAINERS = [
    # one SHEX chunk holding "cs_5_0 / dcl_thread_group 1, 1, 1 / ret": 52 hashed bytes (< 56)
    "445842435817f703ff4514e6bb4ee0b42642cdfe01000000480000000100000024000000534845581c0000"
    "0050000500070000009b0000040100000001000000010000003e000001",
    # chunk TEST holding bytes 0..35: 60 hashed bytes (>= 56: an extra final block)
    "44584243488dda741c32709e6060a7f289dacae8010000005000000001000000240000005445535424000000"
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223",
    # chunk TEST holding bytes 0..99: one whole block, then 60 bytes
    "44584243cc9f515b7101c852b987f22760a6bb75010000009000000001000000240000005445535464000000"
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b"
    "2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f5051525354555657"
    "58595a5b5c5d5e5f60616263",
]


def _standard_md5(message: bytes) -> bytes:
    """RFC 1321 MD5 assembled from the module's compression function."""
    state, tail = md5_blocks(message)
    padded = tail + b"\x80" + bytes((55 - len(tail)) % 64) + struct.pack("<Q", 8 * len(message))
    for offset in range(0, len(padded), 64):
        state = md5_compress(state, padded[offset:offset + 64])
    return struct.pack("<4I", *state)


@pytest.mark.parametrize("size", [*range(0, 130), 1000, 4097])
def test_md5_compression_matches_standard_md5(size: int) -> None:
    message = bytes((i * 7 + size) % 256 for i in range(size))
    assert _standard_md5(message) == hashlib.md5(message).digest()


@pytest.mark.parametrize("hex_blob", KNOWN_CONTAINERS)
def test_checksum_known_answers(hex_blob: str) -> None:
    blob = bytes.fromhex(hex_blob)
    assert checksum(blob) == blob[4:20]
    assert dxbc_md5(blob[20:]) == blob[4:20]
    chunks = [(c.fourcc, c.data) for c in read_container(blob).chunks]
    assert build_container(chunks) == blob


def test_minimal_program_container_is_the_known_answer() -> None:
    program = Program((Declaration("dcl_thread_group", numbers=(1, 1, 1)), Instruction("ret", ())),
                      "cs_5_0")
    assert program_to_dxbc(program) == bytes.fromhex(KNOWN_CONTAINERS[0])


def test_checksum_differs_from_plain_md5() -> None:
    blob = bytes.fromhex(KNOWN_CONTAINERS[0])
    assert hashlib.md5(blob[20:]).digest() != blob[4:20]


def _container() -> bytes:
    program = Program((Declaration("dcl_temps", numbers=(2,)),
                       Declaration("dcl_thread_group", numbers=(1, 1, 1)),
                       Instruction("mov", (r(0, "mask", XYZW), lit(1, 2, 3, 4,
                                                                  selection="swizzle"))),
                       Instruction("ret", ())), "cs_5_0")
    return program_to_dxbc(program)


def _refresh(blob: bytearray) -> bytes:
    blob[4:20] = checksum(bytes(blob))
    return bytes(blob)


def test_read_container_round_trip() -> None:
    blob = _container()
    container = read_container(blob)
    assert container.version == 1 and container.checksum == blob[4:20]
    assert [c.fourcc for c in container.chunks] == [b"SHEX"]
    assert code_tokens(container)[:2] == (0x00050050, 2 + 2 + 4 + 8 + 1)
    two = build_container([(b"RDEF", b"\x01\x02\x03"), (b"SHDR", container.chunks[0].data)])
    again = read_container(two)
    assert [(c.fourcc, c.data) for c in again.chunks] == [
        (b"RDEF", b"\x01\x02\x03"), (b"SHDR", container.chunks[0].data)]
    assert again.chunks[1].offset % 4 == 0
    assert code_tokens(again) == code_tokens(container)


def test_truncated_containers_are_rejected() -> None:
    blob = _container()
    for size in range(len(blob)):
        with pytest.raises(ContainerError, match="truncated"):
            read_container(blob[:size])


def test_garbled_bytes_fail_the_checksum() -> None:
    blob = _container()
    for position in range(20, len(blob)):
        garbled = bytearray(blob)
        garbled[position] ^= 0x40
        with pytest.raises(ContainerError) as info:
            read_container(bytes(garbled))
        assert "checksum mismatch" in info.value.message or "total size" in info.value.message
    assert read_container(bytes(blob), verify_checksum=True).chunks


@pytest.mark.parametrize("edit, message", [
    (lambda b: b.__setitem__(slice(0, 4), b"DXBD"), "bad magic"),
    (lambda b: b.__setitem__(slice(20, 24), struct.pack("<I", 2)), "unknown container version"),
    (lambda b: b.__setitem__(slice(28, 32), struct.pack("<I", 1000)), "do not fit"),
    (lambda b: b.__setitem__(slice(32, 36), struct.pack("<I", 4)), "outside the chunk area"),
    (lambda b: b.__setitem__(slice(32, 36), struct.pack("<I", 10_000)), "outside the chunk area"),
    (lambda b: b.__setitem__(slice(40, 44), struct.pack("<I", 10_000)), "claims 10000 bytes"),
])
def test_malformed_headers_are_rejected(edit: object, message: str) -> None:
    blob = bytearray(_container())
    edit(blob)  # type: ignore[operator]
    with pytest.raises(ContainerError, match=message):
        read_container(_refresh(blob))


def test_trailing_bytes_and_bad_code_chunks_are_rejected() -> None:
    blob = _container()
    with pytest.raises(ContainerError, match="trailing bytes"):
        read_container(blob + b"\0\0\0\0")
    no_code = read_container(build_container([(b"RDEF", b"")]))
    with pytest.raises(ContainerError, match="no shader code chunk"):
        code_tokens(no_code)
    short = read_container(shader_container([0x00050050, 5, 0x0100003E]))
    with pytest.raises(ContainerError, match="length token says 5"):
        code_tokens(short)
    with pytest.raises(ContainerError, match="a chunk name is 4 bytes"):
        build_container([(b"SHEX!", b"")])
    with pytest.raises(ContainerError):
        checksum(b"DXBC")


def test_container_errors_are_project_errors() -> None:
    with pytest.raises(Sm5Error) as info:
        read_container(b"\0" * 40)
    assert info.value.where == "byte 0"


# ----------------------------------------------------------------------------------------------
# vkd3d-shader: checksum acceptance and disassembler round trip

def _load_vkd3d() -> object | None:
    try:
        from sm5.conformance.vkd3d.shader import Vkd3dShaderLib, find_library
    except ImportError:
        return None
    path = find_library()
    return Vkd3dShaderLib(path) if path is not None else None


VKD3D = _load_vkd3d()
needs_vkd3d = pytest.mark.skipif(
    VKD3D is None, reason="libvkd3d-shader not built (run conformance/vkd3d/setup.sh)")


def _lib() -> object:
    assert VKD3D is not None
    return VKD3D


@needs_vkd3d
def test_vkd3d_accepts_our_checksum_and_rejects_a_bad_one() -> None:
    from sm5.conformance.vkd3d.shader import Vkd3dError
    lib = _lib()
    blob = _container()
    assert "mov r0.xyzw, l(1, 2, 3, 4)" in lib.disassemble(blob)  # type: ignore[attr-defined]
    bad = bytearray(blob)
    bad[4] ^= 1
    with pytest.raises(Vkd3dError, match="checksum"):
        lib.disassemble(bytes(bad))  # type: ignore[attr-defined]


@needs_vkd3d
@pytest.mark.parametrize("seed", range(4))
def test_checksum_matches_vkd3d_serializer(seed: int) -> None:
    lib = _lib()
    rnd = __import__("random").Random(seed)
    for size in range(seed, 300, 4):
        chunks = [(b"TEST", bytes(rnd.randrange(256) for _ in range(size)))]
        reference = lib.serialize_dxbc(chunks)  # type: ignore[attr-defined]
        assert checksum(reference) == reference[4:20]
        if size % 4 == 0:
            assert build_container(chunks) == reference


# Normalisation applied to both vkd3d's disassembly and the expected text before comparing:
# - white space collapsed, blank lines dropped;
# - every l(...) value rewritten as 0x%08x: vkd3d prints immediates after the operand's data
#   type (signed "-1" for iadd, unsigned for uint operands, "%.8e" floats for mov) and prints
#   0x80000000 of an int operand as "--2147483648";
# - a swizzle of four equal letters written as one letter: vkd3d's IR does not keep select_1
#   apart from a replicated swizzle, so it prints both as ".z";
# - "vThreadIDInGroupFlattened.x" -> "vThreadIDInGroupFlattened": a one-component register, its
#   select is not encoded;
# - return type "int" -> "sint" (vkd3d's name for D3D10_SB_RETURN_TYPE_SINT).
_IMMEDIATE = re.compile(r"\bl\(([^)]*)\)")
_REPLICATE = re.compile(r"\.([xyzw])\1\1\1\b")


def _u32_text(text: str) -> str:
    text = text.strip()
    negative = (len(text) - len(text.lstrip("-"))) % 2 == 1
    text = text.lstrip("-")
    if text.startswith("0x"):
        value = int(text, 16)
    elif re.fullmatch(r"[0-9]+", text):
        value = int(text)
    else:
        value = struct.unpack("<I", struct.pack("<f", float(text)))[0]
    return f"0x{(-value if negative else value) & 0xFFFFFFFF:08x}"


def normalize(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line:
            continue
        line = _IMMEDIATE.sub(
            lambda m: "l(" + ", ".join(_u32_text(v) for v in m.group(1).split(",")) + ")", line)
        line = _REPLICATE.sub(r".\1", line)
        line = line.replace("vThreadIDInGroupFlattened.x", "vThreadIDInGroupFlattened")
        line = re.sub(r"\bint\b", "sint", line)
        out.append(line)
    return out


# Instances: (AST, text) pairs built from the same parameters, the text in vkd3d's spelling.
Case = tuple[Line, str]
MASKS = [m for m in ("x", "y", "xy", "z", "xz", "yz", "xyz", "w", "xw", "yw", "xyw", "zw",
                     "xzw", "yzw", "xyzw")]
SWIZZLES = [a + b + c + d for a in XYZW for b in XYZW for c in XYZW for d in XYZW]
MODIFIERS = [(False, False), (True, False), (False, True), (True, True)]
# vkd3d's IR holds double operands as 64-bit lanes: it widens a dmovc write mask to whole doubles
# and keeps only selectors 0 and 2 of a double source swizzle, so only the spec's legal double
# masks and swizzles print back as written (the others are illegal; their bits are checked by
# the hand-derived token tests above).
_DMOVC = load_default().instruction("dmovc")
DOUBLE_MASKS = list(_DMOVC.operand("dest").masks)
DOUBLE_SWIZZLES = list(_DMOVC.operand("src1").swizzles)
assert list(_DMOVC.operand("src2").swizzles) == DOUBLE_SWIZZLES
U32S = st.one_of(st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x3F800000]),
                 st.integers(0, 0xFFFFFFFF))


def _reg_text(op: Operand) -> str:
    text = op.register + (f".{op.components}" if op.components else "")
    if op.abs:
        text = f"|{text}|"
    return f"-{text}" if op.neg else text


def _text(op: Operand) -> str:
    if op.file == "l":
        return "l(" + ", ".join(str(v) for v in op.values) + ")"
    return _reg_text(op)


def _case(name: str, operands: tuple[Operand, ...], sat: bool = False) -> Case:
    text = f"{name}{'_sat' if sat else ''} " + ", ".join(_text(op) for op in operands)
    return Instruction(name, operands, sat=sat), text


def _select(n: int, c: str) -> Operand:
    return r(n, "select", c)


def _swizzle(n: int, s: str, mods: tuple[bool, bool] = (False, False)) -> Operand:
    return r(n, "swizzle", s, neg=mods[0], abs_=mods[1])


DECLS = (
    "dcl_globalFlags refactoringAllowed | enableDoublePrecisionFloatOps",
    *(f"dcl_uav_structured u{i}, 16" for i in range(4)),
    "dcl_tgsm_structured g0, 16, 4",
    "dcl_tgsm_structured g1, 16, 4",
    "dcl_input vThreadIDInGroupFlattened",
    "dcl_temps 8",
    "dcl_thread_group 1, 1, 1",
)
DECL_LINES: tuple[Line, ...] = (
    Declaration("dcl_globalFlags", flags=("refactoringAllowed", "enableDoublePrecisionFloatOps")),
    *(Declaration("dcl_uav_structured", register=res("u", i), numbers=(16,)) for i in range(4)),
    Declaration("dcl_tgsm_structured", register=res("g", 0), numbers=(16, 4)),
    Declaration("dcl_tgsm_structured", register=res("g", 1), numbers=(16, 4)),
    Declaration("dcl_input", register=Operand("vThreadIDInGroupFlattened")),
    Declaration("dcl_temps", numbers=(8,)),
    Declaration("dcl_thread_group", numbers=(1, 1, 1)),
)


def _exhaustive_cases() -> Iterator[Case]:
    """Every mask, swizzle, select, modifier and _sat value in every position, one at a time."""
    x0, y1, z2 = _select(0, "x"), _select(1, "y"), _select(2, "z")
    src = _swizzle(3, "xyzw")
    for file in "ug":
        for mask in MASKS:
            yield _case("store_structured", (res(file, 1, mask), x0, y1, src))
    for addr in [*(_select(4, c) for c in XYZW), lit(7), THREAD_X]:
        yield _case("store_structured", (res("u", 0, "x"), addr, y1, src))
    for offset in [*(_select(5, c) for c in XYZW), lit(12)]:
        yield _case("store_structured", (res("g", 0, "xy"), x0, offset, src))
    for swz in SWIZZLES:
        yield _case("store_structured", (res("u", 2, "xyzw"), x0, y1, _swizzle(6, swz)))
    yield _case("store_structured", (res("u", 2, "x"), x0, y1, lit(5, selection="swizzle")))
    yield _case("store_structured", (res("u", 2, "xyzw"), x0, y1,
                                     lit(1, 0x80000000, 0xFFFFFFFF, 0x3F800000,
                                         selection="swizzle")))
    for mask in MASKS:
        yield _case("imm_atomic_iadd", (r(1, "mask", mask), res("u", 0), _swizzle(0, "xyyy"), z2))
    for file in "ug":
        yield _case("imm_atomic_iadd", (r(1, "mask", "x"), res(file, 3), _swizzle(0, "xxxx"), z2))
    for swz in SWIZZLES:
        yield _case("imm_atomic_iadd", (r(7, "mask", "w"), res("g", 1), _swizzle(2, swz), z2))
    for addr in (lit(4, selection="swizzle"), lit(1, 2, 3, 4, selection="swizzle")):
        yield _case("imm_atomic_iadd", (r(1, "mask", "y"), res("u", 1), addr, z2))
    for value in [*(_select(6, c) for c in XYZW), lit(0xFFFFFFFF), lit(0x80000000), lit(3)]:
        yield _case("imm_atomic_iadd", (r(1, "mask", "z"), res("u", 2), _swizzle(0, "xyzw"),
                                        value))
    d1, d2 = _swizzle(1, "xyzw"), _swizzle(2, "zwxy")
    for sat in (False, True):
        for mask in DOUBLE_MASKS:
            yield _case("dmovc", (r(3, "mask", mask), _swizzle(0, "xyxx"), d1, d2), sat)
    for swz in SWIZZLES:
        yield _case("dmovc", (r(3, "mask", "xyzw"), _swizzle(0, swz), d1, d2))
    for cond in (lit(1, selection="swizzle"), lit(0, 0x80000000, 2, 3, selection="swizzle")):
        yield _case("dmovc", (r(3, "mask", "xy"), cond, d1, d2))
    for swz in DOUBLE_SWIZZLES:
        for mods in MODIFIERS:
            yield _case("dmovc", (r(4, "mask", "zw"), _swizzle(0, "xyxy"), _swizzle(5, swz, mods),
                                  d2))
            yield _case("dmovc", (r(4, "mask", "xy"), _swizzle(0, "yyyy"), d1,
                                  _swizzle(6, swz, mods)), sat=mods[0])


def _disassembly_matches(cases: list[Case]) -> None:
    lib = _lib()
    program = Program(DECL_LINES + tuple(c[0] for c in cases), "cs_5_0")
    text = lib.disassemble(program_to_dxbc(program))  # type: ignore[attr-defined]
    expected = ["cs_5_0", *DECLS, *(c[1] for c in cases)]
    assert normalize(text) == normalize("\n".join(expected))


EXHAUSTIVE = list(_exhaustive_cases())


def test_exhaustive_case_count() -> None:
    # 30 + 6 + 5 + 258 store_structured; 15 + 2 + 256 + 2 + 7 imm_atomic_iadd;
    # 6 + 256 + 2 + 32 dmovc
    assert len(EXHAUSTIVE) == 299 + 282 + 296


@needs_vkd3d
@pytest.mark.parametrize("start", range(0, len(EXHAUSTIVE), 100))
def test_disassembly_round_trip_exhaustive(start: int) -> None:
    _disassembly_matches(EXHAUSTIVE[start:start + 100])


@needs_vkd3d
def test_declarations_round_trip() -> None:
    lines: list[Case] = []
    for flags in ((), ("glc",), ("glc", "opc"), ("opc",)):
        suffix = "".join(f"_{f}" for f in flags)
        lines.append((Declaration("dcl_uav_structured", register=res("u", 1), numbers=(2048,),
                                  flags=flags), f"dcl_uav_structured{suffix} u1, 2048"))
    for flags in ((), ("glc",)):
        suffix = "".join(f"_{f}" for f in flags)
        lines.append((Declaration("dcl_uav_raw", register=res("u", 5), flags=flags),
                      f"dcl_uav_raw{suffix} u5"))
        for rtype in ("uint", "sint", "float", "unorm", "snorm"):
            lines.append((Declaration("dcl_uav_typed_buffer", register=res("u", 6),
                                      flags=flags, return_type=(rtype,) * 4),
                          f"dcl_uav_typed_buffer{suffix} ({','.join([rtype] * 4)}) u6"))
    lines += [
        (Declaration("dcl_tgsm_raw", register=res("g", 2), numbers=(32768,)),
         "dcl_tgsm_raw g2, 32768"),
        (Declaration("dcl_tgsm_structured", register=res("g", 7), numbers=(4, 8192)),
         "dcl_tgsm_structured g7, 4, 8192"),
        (Declaration("dcl_input", register=Operand("vThreadIDInGroupFlattened")),
         "dcl_input vThreadIDInGroupFlattened"),
        (Declaration("dcl_temps", numbers=(4096,)), "dcl_temps 4096"),
        (Declaration("dcl_thread_group", numbers=(1024, 1, 64)), "dcl_thread_group 1024, 1, 64"),
    ]
    flag_names = load_default().declarations.declarations["dcl_globalFlags"].global_flags
    # vkd3d 1.14 has no name for D3D11_1_SB_GLOBAL_FLAG_ENABLE_SHADER_EXTENSIONS (1 << 18) and
    # prints the flag bits above bit 11: 1 << 7.
    vkd3d_names = {"enable11_1ShaderExtensions": "unknown_flags(0x80)"}
    for flag in flag_names:
        lines.append((Declaration("dcl_globalFlags", flags=(flag,)),
                      f"dcl_globalFlags {vkd3d_names.get(flag, flag)}"))
    lines.append((Declaration("dcl_globalFlags", flags=flag_names[:2]),
                  f"dcl_globalFlags {flag_names[0]} | {flag_names[1]}"))
    lib = _lib()
    blob = program_to_dxbc(Program(tuple(x[0] for x in lines), "cs_5_0"))
    text = lib.disassemble(blob)  # type: ignore[attr-defined]
    assert normalize(text) == normalize("\n".join(["cs_5_0", *(x[1] for x in lines)]))


def _operand_strategy() -> dict[str, st.SearchStrategy[Operand]]:
    u32 = U32S
    select = st.builds(_select, st.integers(0, 7), st.sampled_from(XYZW))
    swizzle = st.builds(_swizzle, st.integers(0, 7), st.sampled_from(SWIZZLES))
    modded = st.builds(_swizzle, st.integers(0, 7), st.sampled_from(DOUBLE_SWIZZLES),
                       st.sampled_from(MODIFIERS))
    lit1 = st.builds(lambda v, s: lit(v, selection=s), u32, st.just("select"))
    lit1s = st.builds(lambda v: lit(v, selection="swizzle"), u32)
    lit4 = st.builds(lambda *v: lit(*v, selection="swizzle"), u32, u32, u32, u32)
    return {
        "select": st.one_of(select, lit1, st.just(THREAD_X)),
        "offset": st.one_of(select, lit1),
        "swizzle": st.one_of(swizzle, lit1s, lit4),
        "double": modded,
        "mask": st.builds(lambda n, m: r(n, "mask", m), st.integers(0, 7), st.sampled_from(MASKS)),
        "double_mask": st.builds(lambda n, m: r(n, "mask", m), st.integers(0, 7),
                                 st.sampled_from(DOUBLE_MASKS)),
        "memory": st.builds(res, st.sampled_from("ug"), st.integers(0, 3), st.sampled_from(MASKS)),
        "resource": st.builds(res, st.sampled_from("ug"), st.integers(0, 3)),
        "value": st.one_of(select, lit1),
    }


OPS = _operand_strategy()
INSTANCES: st.SearchStrategy[Case] = st.one_of(
    st.builds(lambda *ops: _case("store_structured", ops), OPS["memory"], OPS["select"],
              OPS["offset"], OPS["swizzle"]),
    st.builds(lambda *ops: _case("imm_atomic_iadd", ops), OPS["mask"], OPS["resource"],
              OPS["swizzle"], OPS["value"]),
    st.builds(lambda sat, *ops: _case("dmovc", ops, sat), st.booleans(), OPS["double_mask"],
              OPS["swizzle"], OPS["double"], OPS["double"]),
)


@needs_vkd3d
@settings(max_examples=int(os.environ.get("SM5_DXBC_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(INSTANCES, min_size=1, max_size=12))
def test_disassembly_round_trip_random(cases: list[Case]) -> None:
    _disassembly_matches(cases)


def test_normalize_rules() -> None:
    assert normalize("  imm_atomic_iadd r1.x, u0, l(-1), l(--2147483648)\n\n") == [
        "imm_atomic_iadd r1.x, u0, l(0xffffffff), l(0x80000000)"]
    assert normalize("mov r0.xyzw, l(1.00000000e+00, 0x7fc00000, 5, 4294967295)") == [
        "mov r0.xyzw, l(0x3f800000, 0x7fc00000, 0x00000005, 0xffffffff)"]
    assert normalize("store_structured u0.x, vThreadIDInGroupFlattened.x, r0.y, r1.zzzz") == [
        "store_structured u0.x, vThreadIDInGroupFlattened, r0.y, r1.z"]
    assert normalize("dcl_uav_typed_buffer (int,int,int,int) u1") == [
        "dcl_uav_typed_buffer (sint,sint,sint,sint) u1"]
