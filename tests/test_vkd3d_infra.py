"""Infrastructure of the vkd3d-shader + lavapipe target: translator, SPIR-V reader, runner.

Each test needs real components (built libvkd3d-shader, Debian's vkd3d-compiler,
lavapipe) and skips with the precise missing piece otherwise. Install them with
``conformance/vkd3d/setup.sh``.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import struct
import subprocess
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

from sm5.conformance.vkd3d import shader
from sm5.conformance.vkd3d.shader import (
    SpirvError,
    Vkd3dCompilerCli,
    Vkd3dError,
    Vkd3dShaderLib,
    Vkd3dUnavailable,
    dxbc_sections,
    register_bindings,
    spirv_bindings,
    spirv_descriptors,
    spirv_entry_points,
)
from sm5.conformance.vkd3d.vulkan_runner import (
    CANARY_BASE,
    MAX_BATCH_DISPATCHES,
    BufferBinding,
    Dispatch,
    VulkanRunner,
    VulkanUnavailable,
    _guard_diff,
    vulkan_available,
)

ADD7_HLSL = """
RWBuffer<uint> u : register(u0);
[numthreads(1, 1, 1)]
void main() { u[1] = u[0] + 7; }
"""

SCALE_HLSL = """
RWBuffer<uint> u : register(u0);
[numthreads(4, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) { u[id.x] = u[id.x] * 3 + id.x; }
"""

MIXED_HLSL = """
cbuffer c : register(b0) { uint k; uint m; };
Buffer<uint> t : register(t2);
RWBuffer<uint> a : register(u0);
RWByteAddressBuffer r : register(u1);
[numthreads(2, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    a[id.x] = k + t[id.x];
    r.Store(4 * id.x, m * id.x);
}
"""

IADD_OPCODE = 0x1E
DMOVC_OPCODE = 0xC8


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def lib() -> Vkd3dShaderLib:
    try:
        return Vkd3dShaderLib()
    except Vkd3dUnavailable as exc:
        pytest.skip(f"libvkd3d-shader unavailable: {exc}")


@pytest.fixture(scope="module")
def cli() -> Vkd3dCompilerCli:
    try:
        return Vkd3dCompilerCli()
    except Vkd3dUnavailable as exc:
        pytest.skip(f"vkd3d-compiler unavailable: {exc}")


@pytest.fixture(scope="module")
def runner() -> Iterator[VulkanRunner]:
    ok, reason = vulkan_available()
    if not ok:
        pytest.skip(f"Vulkan unavailable: {reason}")
    try:
        with VulkanRunner() as r:
            yield r
    except VulkanUnavailable as exc:
        pytest.skip(f"Vulkan unavailable: {exc}")


@pytest.fixture(scope="module")
def add7_dxbc(lib: Vkd3dShaderLib) -> bytes:
    return lib.compile_hlsl(ADD7_HLSL, "cs_5_0")


def _patch_opcode(lib: Vkd3dShaderLib, dxbc: bytes, old: int, new: int) -> bytes:
    """Replace the first `old` instruction's opcode (same length) and re-checksum."""
    sections = dxbc_sections(dxbc)
    tag = next(t for t, _ in sections if t in (b"SHDR", b"SHEX"))
    code = dict(sections)[tag]
    tokens = list(struct.unpack(f"<{len(code) // 4}I", code))
    pos = 2  # version + length tokens
    while tokens[pos] & 0x7FF != old:
        pos += (tokens[pos] >> 24) & 0x7F
    tokens[pos] = (tokens[pos] & ~0x7FF) | new
    patched = struct.pack(f"<{len(tokens)}I", *tokens)
    return lib.serialize_dxbc([(t, patched if t == tag else d) for t, d in sections])


# --------------------------------------------------------------------------- library


def test_library_version_is_wine_bundled_1_14(lib: Vkd3dShaderLib) -> None:
    assert re.match(r"vkd3d-shader 1\.(1[4-9]|[2-9]\d)", lib.version()), lib.version()


def test_ctypes_layouts_match_c_header(lib: Vkd3dShaderLib, tmp_path: Path) -> None:
    include = lib.path.parent / "include"
    if not (include / "vkd3d_shader.h").is_file():
        pytest.skip(f"{include}/vkd3d_shader.h missing (built by an older setup.sh)")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not installed")
    lines = [
        "#include <stdio.h>",
        "#include <stddef.h>",
        "#include <vkd3d_shader.h>",
        "int main(void){",
    ]
    expected: list[str] = []
    for cname, struct_type in shader.C_LAYOUTS.items():
        lines.append(f'printf("{cname} %zu\\n", sizeof(struct {cname}));')
        expected.append(f"{cname} {ctypes.sizeof(struct_type)}")
        for c_field in struct_type._fields_:
            fname = c_field[0]
            lines.append(f'printf("{cname}.{fname} %zu\\n", offsetof(struct {cname}, {fname}));')
            expected.append(f"{cname}.{fname} {getattr(struct_type, fname).offset}")
    lines.append("return 0;}")
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines))
    subprocess.run([gcc, f"-I{include}", str(src), "-o", str(exe)], check=True)
    actual = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert actual.split("\n")[:-1] == expected


def test_hlsl_compile_error_carries_vkd3d_text(lib: Vkd3dShaderLib) -> None:
    with pytest.raises(Vkd3dError) as info:
        lib.compile_hlsl("[numthreads(1,1,1)] void main() { x = 1; }")
    assert 'Identifier "x" is not declared' in str(info.value)
    assert info.value.result == -4  # VKD3D_ERROR_INVALID_SHADER


def test_bad_dxbc_raises_vkd3d_error(lib: Vkd3dShaderLib) -> None:
    with pytest.raises(Vkd3dError, match="smaller than the DXBC header"):
        lib.dxbc_to_spirv(b"garbage")
    with pytest.raises(TypeError):
        lib.dxbc_to_spirv("not bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="uav must be one of"):
        lib.dxbc_to_spirv(b"DXBC", uav="bogus")  # type: ignore[arg-type]


def test_dxbc_serialize_round_trip_reproduces_checksum(
    lib: Vkd3dShaderLib, add7_dxbc: bytes
) -> None:
    sections = dxbc_sections(add7_dxbc)
    assert b"SHDR" in dict(sections) or b"SHEX" in dict(sections)
    assert lib.serialize_dxbc(sections) == add7_dxbc


def test_disassembly_contains_expected_opcodes(lib: Vkd3dShaderLib, add7_dxbc: bytes) -> None:
    text = lib.disassemble(add7_dxbc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines[0] == "cs_5_0"
    assert "dcl_uav_typed_buffer (uint,uint,uint,uint) u0" in lines
    assert "dcl_thread_group 1, 1, 1" in lines
    body = [line.split()[0] for line in lines if not line.startswith(("cs_", "dcl_"))]
    assert body == ["ld_uav_typed", "iadd", "store_uav_typed", "ret"]
    assert "l(7)" in text


def test_disassembling_junk_raises(lib: Vkd3dShaderLib) -> None:
    with pytest.raises(Vkd3dError, match="DXBC"):
        lib.disassemble(b"DXBC" + b"\0" * 40)


# --------------------------------------------------------------------------- SPIR-V reader


def test_spirv_bindings_of_single_uav(lib: Vkd3dShaderLib, add7_dxbc: bytes) -> None:
    for mode, kind in (("texel", "texel"), ("ssbo", "ssbo")):
        spirv = lib.dxbc_to_spirv(add7_dxbc, uav=mode)  # type: ignore[arg-type]
        assert spirv_bindings(spirv) == {"u0": 0}
        assert [d.kind for d in spirv_descriptors(spirv)] == [kind]
        assert spirv_entry_points(spirv) == {"main": 5}  # GLCompute


def test_spirv_bindings_follow_declaration_order(lib: Vkd3dShaderLib) -> None:
    dxbc = lib.compile_hlsl(MIXED_HLSL)
    declared = re.findall(r"^\s*dcl_\w+.*?\b(cb\d+|t\d+|u\d+)\b", lib.disassemble(dxbc), re.M)
    spirv = lib.dxbc_to_spirv(dxbc)
    by_register = register_bindings(spirv)
    assert sorted(by_register, key=lambda n: by_register[n]) == declared
    assert sorted(by_register.values()) == list(range(len(declared)))
    kinds = {d.name: d.kind for d in spirv_descriptors(spirv)}
    # 1.14 names a constant buffer "cb<id>_<register>"; the others after their register.
    assert kinds == {"cb0_0": "uniform", "t2": "uniform_texel", "u0": "texel", "u1": "texel"}


def test_constant_buffer_names_differ_between_versions(
    lib: Vkd3dShaderLib, cli: Vkd3dCompilerCli
) -> None:
    dxbc = lib.compile_hlsl(
        "cbuffer c : register(b3) { uint k; }; RWBuffer<uint> a : register(u5);"
        "[numthreads(1,1,1)] void main() { a[0] = k; }"
    )
    assert spirv_bindings(lib.dxbc_to_spirv(dxbc)) == {"cb3_3": 0, "u5": 1}
    assert spirv_bindings(cli.dxbc_to_spirv(dxbc)) == {"cb3_0": 0, "u5": 1}
    assert register_bindings(cli.dxbc_to_spirv(dxbc)) == {"cb3": 0, "u5": 1}


def test_spirv_reader_rejects_malformed_input() -> None:
    with pytest.raises(SpirvError, match="multiple of 4"):
        spirv_bindings(b"\x03\x02\x23")
    with pytest.raises(SpirvError, match="magic"):
        spirv_bindings(b"\0" * 20)
    truncated = struct.pack("<6I", 0x07230203, 0x10000, 0, 10, 0, (9 << 16) | 5)
    with pytest.raises(SpirvError, match="truncated"):
        spirv_descriptors(truncated)


# --------------------------------------------------------------------------- runner


def test_guard_diff_reports_changed_canaries() -> None:
    data = array("I", ((CANARY_BASE + i) & 0xFFFFFFFF for i in range(8)))
    data[1] = 7
    data[6] = 9
    assert list(_guard_diff(data, 4, range(0, 4))) == [(-3, CANARY_BASE + 1, 7)]
    assert list(_guard_diff(data, 4, range(5, 8))) == [(2, CANARY_BASE + 6, 9)]


def test_buffer_binding_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="not a u32"):
        BufferBinding(binding=0, words=(1 << 32,))
    with pytest.raises(ValueError, match="at least one word"):
        BufferBinding(binding=0, words=())
    with pytest.raises(ValueError, match="kind"):
        BufferBinding(binding=0, words=(1,), kind="image")  # type: ignore[arg-type]


def test_vulkan_available_names_missing_icd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path))
    if Path("/etc/vulkan/icd.d").is_dir() and any(Path("/etc/vulkan/icd.d").glob("lvp_icd*")):
        pytest.skip("a lavapipe ICD is installed in /etc/vulkan/icd.d")
    ok, reason = vulkan_available()
    assert not ok
    assert "lvp_icd" in reason and str(tmp_path) in reason


@pytest.mark.parametrize("mode", ["texel", "ssbo"])
def test_hlsl_shader_runs_on_lavapipe(
    lib: Vkd3dShaderLib, runner: VulkanRunner, add7_dxbc: bytes, mode: str
) -> None:
    spirv = lib.dxbc_to_spirv(add7_dxbc, uav=mode)  # type: ignore[arg-type]
    binding = spirv_bindings(spirv)["u0"]
    [out] = runner.run(spirv, [BufferBinding(binding, (5, 0, 9), mode)])  # type: ignore[arg-type]
    assert out.words == (5, 12, 9)
    assert out.guard_intact and out.guard_diff == ()
    [wrap] = runner.run(spirv, [BufferBinding(binding, (0xFFFFFFFF, 1, 2), mode)])  # type: ignore[arg-type]
    assert wrap.words == (0xFFFFFFFF, 6, 2)  # u32 wrap-around


def test_out_of_window_store_is_dropped(
    lib: Vkd3dShaderLib, runner: VulkanRunner, add7_dxbc: bytes
) -> None:
    spirv = lib.dxbc_to_spirv(add7_dxbc)
    [out] = runner.run(spirv, [BufferBinding(0, (5,), "texel", guard_words=4)])
    assert out.words == (5,)  # u[1] is past the 1-word UAV: D3D11 discards the write
    assert out.guard_intact


def test_dispatch_groups_and_pipeline_cache(lib: Vkd3dShaderLib, runner: VulkanRunner) -> None:
    spirv = lib.dxbc_to_spirv(lib.compile_hlsl(SCALE_HLSL))
    words = tuple(range(10, 18))
    [out] = runner.run(spirv, [BufferBinding(0, words)], groups=(2, 1, 1))
    assert out.words == tuple(w * 3 + i for i, w in enumerate(words))
    cached = runner.cached_pipelines
    [again] = runner.run(spirv, [BufferBinding(0, words[:4])], groups=(1, 1, 1))
    assert again.words == tuple(w * 3 + i for i, w in enumerate(words[:4]))
    assert runner.cached_pipelines == cached


def test_mixed_descriptors_run(lib: Vkd3dShaderLib, runner: VulkanRunner) -> None:
    spirv = lib.dxbc_to_spirv(lib.compile_hlsl(MIXED_HLSL))
    b = register_bindings(spirv)
    outs = runner.run(
        spirv,
        [
            BufferBinding(b["cb0"], (100, 3, 0, 0), "uniform"),
            BufferBinding(b["t2"], (1, 2), "uniform_texel"),
            BufferBinding(b["u0"], (0, 0)),
            BufferBinding(b["u1"], (0xAA, 0xBB)),
        ],
        groups=(1, 1, 1),
    )
    assert [o.words for o in outs] == [(100, 3, 0, 0), (1, 2), (101, 102), (0, 3)]
    assert all(o.guard_intact for o in outs)


def test_runner_rejects_mismatched_bindings(
    lib: Vkd3dShaderLib, runner: VulkanRunner, add7_dxbc: bytes
) -> None:
    spirv = lib.dxbc_to_spirv(add7_dxbc)
    with pytest.raises(ValueError, match="texel descriptor in the shader but was given as ssbo"):
        runner.run(spirv, [BufferBinding(0, (1, 2), "ssbo")])
    with pytest.raises(ValueError, match=r"uses binding 0 \(u0\) but none given"):
        runner.run(spirv, [])
    with pytest.raises(SpirvError, match="entry point 'other'"):
        runner.run(spirv, [BufferBinding(0, (1, 2))], entry="other")
    with pytest.raises(SpirvError):
        runner.run(b"\0" * 24, [BufferBinding(0, (1, 2))])
    with pytest.raises(ValueError, match="groups"):
        runner.run(spirv, [BufferBinding(0, (1, 2))], groups=(0, 1, 1))
    with pytest.raises(TypeError, match="BufferBinding"):
        runner.run(spirv, [{"binding": 0}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="duplicate"):
        runner.run(spirv, [BufferBinding(0, (1,)), BufferBinding(0, (2,))])
    [still_fine] = runner.run(spirv, [BufferBinding(0, (1, 2))])
    assert still_fine.words == (1, 8)


def test_a_batch_answers_each_dispatch_as_run_would(
    lib: Vkd3dShaderLib, runner: VulkanRunner, add7_dxbc: bytes
) -> None:
    """More dispatches than one submission takes, of three shaders, windows of changing
    size, and bad dispatches among them: each answers on its own, from buffers of its own."""
    add7 = lib.dxbc_to_spirv(add7_dxbc)
    scale = lib.dxbc_to_spirv(lib.compile_hlsl(SCALE_HLSL))
    dispatches: list[Dispatch] = []
    expected: list[tuple[int, ...] | type[Exception]] = []
    for n in range(2 * MAX_BATCH_DISPATCHES + 5):
        if n % 3 == 0:  # u[1] = u[0] + 7, in a window of 1 to 4 words
            words = tuple(range(n, n + 1 + n % 4))
            dispatches.append(Dispatch(add7, (BufferBinding(0, words),)))
            expected.append(words if len(words) == 1 else (n, n + 7, *words[2:]))
        elif n % 3 == 1:  # u[i] = 3 u[i] + i, four threads a group
            groups = 1 + n % 2
            words = tuple(range(100 * n, 100 * n + 4 * groups))
            dispatches.append(Dispatch(scale, (BufferBinding(0, words),),
                                       groups=(groups, 1, 1)))
            expected.append(tuple(3 * w + i for i, w in enumerate(words)))
        elif n % 9 == 2:  # refused before it runs: a kind the shader does not declare
            dispatches.append(Dispatch(add7, (BufferBinding(0, (1, 2), "ssbo"),)))
            expected.append(ValueError)
        else:
            dispatches.append(Dispatch(add7, (BufferBinding(0, (n, 0)),)))
            expected.append((n, n + 7))
    # A window larger than its descriptor kind allows is refused on its own, before any upload.
    mixed = lib.dxbc_to_spirv(lib.compile_hlsl(MIXED_HLSL))
    b = register_bindings(mixed)
    too_many = runner._limits.max_uniform_range // 4 + 1
    dispatches.insert(7, Dispatch(mixed, (
        BufferBinding(b["cb0"], (0,) * too_many, "uniform"),
        BufferBinding(b["t2"], (1, 2), "uniform_texel"),
        BufferBinding(b["u0"], (0, 0)),
        BufferBinding(b["u1"], (0, 0)))))
    expected.insert(7, ValueError)
    for _ in range(2):  # the second time, the same shapes: descriptors and recording reused
        answers = runner.run_batch(dispatches)
        assert len(answers) == len(dispatches)
        for answer, want in zip(answers, expected, strict=True):
            if isinstance(want, type):
                assert isinstance(answer, want)
                continue
            assert not isinstance(answer, Exception)
            [out] = answer
            assert out.words == want and out.guard_intact
    assert not runner.broken
    [alone] = runner.run(add7, [BufferBinding(0, (3, 0))])
    assert alone.words == (3, 10)


# --------------------------------------------------------------------------- CLI (Debian 1.2)


def test_cli_translates_dxbc_from_newer_library(
    lib: Vkd3dShaderLib, cli: Vkd3dCompilerCli, add7_dxbc: bytes, runner: VulkanRunner
) -> None:
    assert cli.version().startswith("vkd3d shader compiler version")
    spirv = cli.dxbc_to_spirv(add7_dxbc)
    assert spirv_bindings(spirv) == {"u0": 0}
    assert spirv_entry_points(spirv) == {"main": 5}
    [out] = runner.run(spirv, [BufferBinding(0, (30, 0))])
    assert out.words == (30, 37) and out.guard_intact


def test_cli_error_text_comes_through(
    lib: Vkd3dShaderLib, cli: Vkd3dCompilerCli, add7_dxbc: bytes
) -> None:
    if re.search(r"version 1\.[0-2]\b", cli.version()) is None:
        pytest.skip(f"dmovc is only unknown to vkd3d-compiler <= 1.2, have {cli.version()!r}")
    patched = _patch_opcode(lib, add7_dxbc, IADD_OPCODE, DMOVC_OPCODE)
    with pytest.raises(Vkd3dError, match="Unrecognized opcode 0xc8"):
        cli.dxbc_to_spirv(patched)
    with pytest.raises(Vkd3dError, match="DXBC"):
        cli.dxbc_to_spirv(b"garbage")


# --------------------------------------------------------------------------- selection


def test_load_translator_prefers_library(lib: Vkd3dShaderLib) -> None:
    shader._probe.cache_clear()
    try:
        translator = shader.load_translator()
        assert isinstance(translator, Vkd3dShaderLib)
        assert shader.unavailable_reason() == ""
    finally:
        shader._probe.cache_clear()


def test_missing_library_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "nope.so"
    monkeypatch.setenv(shader.ENV_LIB, str(missing))
    monkeypatch.setenv("PATH", str(tmp_path))  # hide vkd3d-compiler as well
    shader._probe.cache_clear()
    try:
        assert shader.find_library() is None
        assert shader.load_translator() is None
        reason = shader.unavailable_reason()
        assert str(missing) in reason and "vkd3d-compiler not found" in reason
    finally:
        shader._probe.cache_clear()
