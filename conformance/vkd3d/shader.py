"""Locate and drive vkd3d-shader, the DXBC -> SPIR-V translator under test.

Two translators share one small interface (`Translator`):

* `Vkd3dShaderLib`: ctypes wrapper of ``libvkd3d-shader.so`` 1.14, built from
  Debian trixie's wine source by ``conformance/vkd3d/setup.sh``. Also offers the
  disassembler, the HLSL front end (smoke tests only: it miscompiles some
  structured atomics) and DXBC serialisation (the container checksum).
* `Vkd3dCompilerCli`: Debian's ``vkd3d-compiler`` 1.2. Only DXBC -> SPIR-V, and
  it lacks some later opcodes (doubles); its error text is passed through.

Without interface info vkd3d puts every descriptor in set 0 and numbers the
bindings in declaration order; `spirv_bindings` reads the real numbers back
from the SPIR-V (names such as ``"u0"``, ``"cb0"``) so callers never guess.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

ENV_LIB = "SM5_VKD3D_LIB"
ENV_DIR = "SM5_VKD3D_DIR"
LIB_NAME = "libvkd3d-shader.so"
CLI_NAME = "vkd3d-compiler"
SETUP_HINT = "run conformance/vkd3d/setup.sh"

UavMode = Literal["texel", "ssbo"]
"""How UAV buffers are translated: R32_UINT storage texel buffers or uint[] SSBOs."""

_CLI_TIMEOUT_S = 60


class Vkd3dError(Exception):
    """vkd3d-shader rejected its input. ``messages`` holds vkd3d's own message text."""

    def __init__(self, message: str, *, messages: str = "", result: int | None = None) -> None:
        super().__init__(message)
        self.messages = messages
        self.result = result


class Vkd3dUnavailable(Exception):
    """The library or the command-line compiler cannot be found or loaded."""


class SpirvError(ValueError):
    """The bytes are not a well-formed SPIR-V module."""


# --------------------------------------------------------------------------- locating


def cache_root() -> Path:
    """Per-user cache root shared by setup.sh, the library build and Mesa's cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sm5-conformance"


def vkd3d_dir() -> Path:
    """Where setup.sh puts the built library (``$SM5_VKD3D_DIR`` overrides)."""
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else cache_root() / "vkd3d"


def find_library() -> Path | None:
    """Path of libvkd3d-shader: ``$SM5_VKD3D_LIB`` if set, else the setup.sh output."""
    env = os.environ.get(ENV_LIB)
    path = Path(env) if env else vkd3d_dir() / LIB_NAME
    return path if path.is_file() else None


def _library_missing_reason() -> str:
    env = os.environ.get(ENV_LIB)
    if env:
        return f"${ENV_LIB}={env} does not exist"
    return f"{vkd3d_dir() / LIB_NAME} not built ({SETUP_HINT})"


# --------------------------------------------------------------------------- C ABI
# Mirrors of vkd3d_shader.h (vkd3d 1.14). Enums are 32-bit (VKD3D_FORCE_32_BIT_ENUM).

_STYPE_COMPILE_INFO = 0
_STYPE_SPIRV_TARGET_INFO = 4
_STYPE_HLSL_SOURCE_INFO = 6

_SOURCE_DXBC_TPF = 1
_SOURCE_HLSL = 2
_TARGET_SPIRV_BINARY = 1
_TARGET_D3D_ASM = 3
_TARGET_DXBC_TPF = 5

_LOG_INFO = 3
_SPIRV_ENV_VULKAN_1_0 = 2

_OPT_BUFFER_UAV = 0x2
_OPT_FORMATTING = 0x3
_OPT_API_VERSION = 0x4
_OPT_FEATURE = 0xA

_BUFFER_UAV = {"texel": 0, "ssbo": 1}
_FORMATTING_INDENT = 0x2
_API_VERSION_1_14 = 14
_FEATURE_INT64 = 0x1
_FEATURE_FLOAT64 = 0x2

_VKD3D_RESULTS = {
    -1: "VKD3D_ERROR",
    -2: "VKD3D_ERROR_OUT_OF_MEMORY",
    -3: "VKD3D_ERROR_INVALID_ARGUMENT",
    -4: "VKD3D_ERROR_INVALID_SHADER",
    -5: "VKD3D_ERROR_NOT_IMPLEMENTED",
    -6: "VKD3D_ERROR_KEY_ALREADY_EXISTS",
    -7: "VKD3D_ERROR_NOT_FOUND",
    -8: "VKD3D_ERROR_MORE_DATA",
}


class _Code(ctypes.Structure):
    """struct vkd3d_shader_code."""

    _fields_ = [("code", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class _CompileOption(ctypes.Structure):
    """struct vkd3d_shader_compile_option."""

    _fields_ = [("name", ctypes.c_uint32), ("value", ctypes.c_uint32)]


class _CompileInfo(ctypes.Structure):
    """struct vkd3d_shader_compile_info."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("next", ctypes.c_void_p),
        ("source", _Code),
        ("source_type", ctypes.c_uint32),
        ("target_type", ctypes.c_uint32),
        ("options", ctypes.POINTER(_CompileOption)),
        ("option_count", ctypes.c_uint),
        ("log_level", ctypes.c_uint32),
        ("source_name", ctypes.c_char_p),
    ]


class _SpirvTargetInfo(ctypes.Structure):
    """struct vkd3d_shader_spirv_target_info."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("next", ctypes.c_void_p),
        ("entry_point", ctypes.c_char_p),
        ("environment", ctypes.c_uint32),
        ("extensions", ctypes.c_void_p),
        ("extension_count", ctypes.c_uint),
        ("parameters", ctypes.c_void_p),
        ("parameter_count", ctypes.c_uint),
        ("dual_source_blending", ctypes.c_bool),
        ("output_swizzles", ctypes.c_void_p),
        ("output_swizzle_count", ctypes.c_uint),
    ]


class _HlslSourceInfo(ctypes.Structure):
    """struct vkd3d_shader_hlsl_source_info."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("next", ctypes.c_void_p),
        ("entry_point", ctypes.c_char_p),
        ("secondary_code", _Code),
        ("profile", ctypes.c_char_p),
    ]


class _DxbcSectionDesc(ctypes.Structure):
    """struct vkd3d_shader_dxbc_section_desc."""

    _fields_ = [("tag", ctypes.c_uint32), ("data", _Code)]


# Exposed so a test can compare them against the C header with offsetof().
C_LAYOUTS: dict[str, type[ctypes.Structure]] = {
    "vkd3d_shader_code": _Code,
    "vkd3d_shader_compile_option": _CompileOption,
    "vkd3d_shader_compile_info": _CompileInfo,
    "vkd3d_shader_spirv_target_info": _SpirvTargetInfo,
    "vkd3d_shader_hlsl_source_info": _HlslSourceInfo,
    "vkd3d_shader_dxbc_section_desc": _DxbcSectionDesc,
}


@dataclass(frozen=True)
class CompileResult:
    """Output of one vkd3d_shader_compile call.

    ``messages`` are vkd3d's compiler messages (warnings/info); ``debug_log``
    its ``err:``/``fixme:`` debug channel, captured instead of going to stderr.
    """

    code: bytes
    messages: str
    debug_log: str = ""


class _DebugLog:
    """Captures vkd3d's debug channel (vkd3d_shader_set_log_callback).

    The callback gets a C ``va_list``; on x86-64 SysV that is a pointer which
    libc's vsnprintf accepts as is. Elsewhere vkd3d keeps printing to stderr.
    The callback is process-global, so compiles are serialised by one lock.
    """

    _BUF_SIZE = 2048
    lock = threading.Lock()

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.callback: object | None = None
        libc_name = ctypes.util.find_library("c")
        supported = sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")
        if not (supported and libc_name):
            return
        libc = ctypes.CDLL(libc_name)
        vsnprintf = libc.vsnprintf
        vsnprintf.restype = ctypes.c_int
        vsnprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]
        buf = ctypes.create_string_buffer(self._BUF_SIZE)

        def on_log(fmt: bytes | None, args: int | None) -> None:
            if fmt is None:
                return
            vsnprintf(buf, self._BUF_SIZE, fmt, args)
            self.lines.append(buf.value.decode("utf-8", "replace"))

        self.callback = _LOG_PFN(on_log)

    def take(self) -> str:
        text = "".join(self.lines)
        self.lines.clear()
        return text


_LOG_PFN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)
_DEBUG_LOG = _DebugLog()


def _as_bytes(data: object, what: str) -> bytes:
    """Accept any bytes-like input; reject everything else with a clear TypeError."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"{what} must be bytes-like, not {type(data).__name__}")


def _check_uav(uav: str) -> None:
    if uav not in _BUFFER_UAV:
        raise ValueError(f"uav must be one of {sorted(_BUFFER_UAV)}, not {uav!r}")


class Vkd3dShaderLib:
    """ctypes binding of libvkd3d-shader (1.14 from wine 10.0; newer ones work too).

    SPIR-V is produced for a Vulkan 1.0 environment with entry point ``main``,
    FLOAT64 and INT64 enabled (the runner enables shaderFloat64/shaderInt64),
    and API version 1.14 semantics.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        resolved = Path(path) if path is not None else find_library()
        if resolved is None:
            raise Vkd3dUnavailable(_library_missing_reason())
        try:
            self._lib = ctypes.CDLL(str(resolved))
            self._bind()
        except (OSError, AttributeError) as exc:
            raise Vkd3dUnavailable(f"cannot load {resolved}: {exc}") from exc
        self.path = resolved

    def _bind(self) -> None:
        lib = self._lib
        lib.vkd3d_shader_get_version.restype = ctypes.c_char_p
        lib.vkd3d_shader_get_version.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.vkd3d_shader_compile.restype = ctypes.c_int
        lib.vkd3d_shader_compile.argtypes = [
            ctypes.POINTER(_CompileInfo),
            ctypes.POINTER(_Code),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.vkd3d_shader_free_messages.restype = None
        lib.vkd3d_shader_free_messages.argtypes = [ctypes.c_void_p]
        lib.vkd3d_shader_free_shader_code.restype = None
        lib.vkd3d_shader_free_shader_code.argtypes = [ctypes.POINTER(_Code)]
        lib.vkd3d_shader_serialize_dxbc.restype = ctypes.c_int
        lib.vkd3d_shader_serialize_dxbc.argtypes = [
            ctypes.c_size_t,
            ctypes.POINTER(_DxbcSectionDesc),
            ctypes.POINTER(_Code),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        if _DEBUG_LOG.callback is not None:
            lib.vkd3d_shader_set_log_callback.restype = None
            lib.vkd3d_shader_set_log_callback.argtypes = [_LOG_PFN]
            lib.vkd3d_shader_set_log_callback(_DEBUG_LOG.callback)

    @property
    def name(self) -> str:
        return "libvkd3d-shader"

    def version(self) -> str:
        """vkd3d's own version string, e.g. ``"vkd3d-shader 1.14 (Wine bundled)"``."""
        raw: bytes | None = self._lib.vkd3d_shader_get_version(None, None)
        return raw.decode("utf-8", "replace") if raw else "unknown"

    # ----------------------------------------------------------------- core call

    def compile(
        self,
        source: bytes,
        source_type: int,
        target_type: int,
        options: Sequence[tuple[int, int]] = (),
        chain: ctypes.Structure | None = None,
    ) -> CompileResult:
        """One vkd3d_shader_compile call; raises Vkd3dError with vkd3d's messages.

        Low level: prefer dxbc_to_spirv / disassemble / compile_hlsl.
        """
        src = _as_bytes(source, "source")
        src_buf = ctypes.create_string_buffer(src, len(src))
        opts = (_CompileOption * max(1, len(options)))(*[_CompileOption(n, v) for n, v in options])
        info = _CompileInfo(
            type=_STYPE_COMPILE_INFO,
            next=ctypes.cast(ctypes.pointer(chain), ctypes.c_void_p) if chain else None,
            source=_Code(ctypes.cast(src_buf, ctypes.c_void_p), len(src)),
            source_type=source_type,
            target_type=target_type,
            options=opts,
            option_count=len(options),
            log_level=_LOG_INFO,
            source_name=b"<sm5-conformance>",
        )
        out = _Code()
        messages = ctypes.c_void_p()
        with _DebugLog.lock:
            _DEBUG_LOG.take()
            result = self._lib.vkd3d_shader_compile(
                ctypes.byref(info), ctypes.byref(out), ctypes.byref(messages)
            )
            debug_log = _DEBUG_LOG.take()
        text = self._take_messages(messages)
        code = self._take_code(out)
        if result < 0:
            raise _error("vkd3d_shader_compile", result, text + debug_log)
        return CompileResult(code=code, messages=text, debug_log=debug_log)

    def _take_messages(self, messages: ctypes.c_void_p) -> str:
        if not messages.value:
            return ""
        text = ctypes.string_at(messages.value).decode("utf-8", "replace")
        self._lib.vkd3d_shader_free_messages(messages)
        return text

    def _take_code(self, out: _Code) -> bytes:
        if not out.code:
            return b""
        data = ctypes.string_at(out.code, out.size)
        self._lib.vkd3d_shader_free_shader_code(ctypes.byref(out))
        return data

    # ----------------------------------------------------------------- public API

    def dxbc_to_spirv(self, dxbc: bytes, uav: UavMode = "texel") -> bytes:
        """Translate a DXBC-TPF container to a SPIR-V binary (set 0, entry ``main``)."""
        _check_uav(uav)
        target = _SpirvTargetInfo(
            type=_STYPE_SPIRV_TARGET_INFO,
            entry_point=b"main",
            environment=_SPIRV_ENV_VULKAN_1_0,
        )
        options = [
            (_OPT_API_VERSION, _API_VERSION_1_14),
            (_OPT_BUFFER_UAV, _BUFFER_UAV[uav]),
            (_OPT_FEATURE, _FEATURE_INT64 | _FEATURE_FLOAT64),
        ]
        code = self.compile(dxbc, _SOURCE_DXBC_TPF, _TARGET_SPIRV_BINARY, options, target).code
        if len(code) < 20 or len(code) % 4:
            raise Vkd3dError(f"vkd3d returned {len(code)} bytes, not a SPIR-V module")
        return code

    def disassemble(self, dxbc: bytes) -> str:
        """vkd3d's d3d-asm text of a DXBC-TPF container (indented, no header)."""
        options = [
            (_OPT_API_VERSION, _API_VERSION_1_14),
            (_OPT_FORMATTING, _FORMATTING_INDENT),
        ]
        code = self.compile(dxbc, _SOURCE_DXBC_TPF, _TARGET_D3D_ASM, options).code
        return code.decode("utf-8", "replace")

    def compile_hlsl(self, source: str, profile: str = "cs_5_0", entry: str = "main") -> bytes:
        """HLSL -> DXBC-TPF with vkd3d's own front end.

        Only for smoke tests: it cannot emit many SM5 instructions and it
        miscompiles structured InterlockedAdd (address operand = idx).
        """
        if not isinstance(source, str):
            raise TypeError(f"source must be str, not {type(source).__name__}")
        info = _HlslSourceInfo(
            type=_STYPE_HLSL_SOURCE_INFO,
            entry_point=entry.encode(),
            profile=profile.encode(),
        )
        options = [(_OPT_API_VERSION, _API_VERSION_1_14)]
        return self.compile(source.encode(), _SOURCE_HLSL, _TARGET_DXBC_TPF, options, info).code

    def serialize_dxbc(self, sections: Sequence[tuple[bytes, bytes]]) -> bytes:
        """Build a DXBC container (with vkd3d's checksum) from (4-byte tag, data) pairs."""
        descs = (_DxbcSectionDesc * max(1, len(sections)))()
        keep: list[ctypes.Array[ctypes.c_char]] = []
        for i, (tag, data) in enumerate(sections):
            tag_b = _as_bytes(tag, "section tag")
            if len(tag_b) != 4:
                raise ValueError(f"DXBC section tag must be 4 bytes, got {tag_b!r}")
            raw = _as_bytes(data, "section data")
            buf = ctypes.create_string_buffer(raw, len(raw))
            keep.append(buf)
            descs[i].tag = int.from_bytes(tag_b, "little")
            descs[i].data = _Code(ctypes.cast(buf, ctypes.c_void_p), len(raw))
        out = _Code()
        messages = ctypes.c_void_p()
        with _DebugLog.lock:
            _DEBUG_LOG.take()
            result = self._lib.vkd3d_shader_serialize_dxbc(
                len(sections), descs, ctypes.byref(out), ctypes.byref(messages)
            )
            debug_log = _DEBUG_LOG.take()
        text = self._take_messages(messages) + debug_log
        code = self._take_code(out)
        if result < 0:
            raise _error("vkd3d_shader_serialize_dxbc", result, text)
        return code


def _error(call: str, result: int, text: str) -> Vkd3dError:
    name = _VKD3D_RESULTS.get(result, str(result))
    detail = text.strip() or "no message"
    return Vkd3dError(f"{call} failed ({name}): {detail}", messages=text, result=result)


# --------------------------------------------------------------------------- CLI


class Vkd3dCompilerCli:
    """Debian's ``vkd3d-compiler`` (1.2): DXBC-TPF -> SPIR-V only.

    1.2 does not know some later opcodes (doubles among them); its stderr (e.g.
    ``Unrecognized opcode 0xc8``) becomes the Vkd3dError message.
    """

    def __init__(self, exe: str | Path | None = None) -> None:
        found = shutil.which(str(exe) if exe is not None else CLI_NAME)
        if found is None:
            raise Vkd3dUnavailable(
                f"{exe or CLI_NAME} not found on PATH (apt-get install {CLI_NAME})"
            )
        self.path = Path(found)
        self._version: str | None = None

    @property
    def name(self) -> str:
        return CLI_NAME

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                [str(self.path), *args], capture_output=True, timeout=_CLI_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Vkd3dUnavailable(f"cannot run {self.path}: {exc}") from exc

    def version(self) -> str:
        """First line of ``vkd3d-compiler --version`` (asked once per instance)."""
        if self._version is None:
            proc = self._run(["--version"])
            text = (proc.stdout or proc.stderr).decode("utf-8", "replace").strip()
            self._version = text.splitlines()[0] if text else "unknown"
        return self._version

    def dxbc_to_spirv(self, dxbc: bytes, uav: UavMode = "texel") -> bytes:
        """Translate with the CLI; files, not pipes, so binary I/O is exact."""
        _check_uav(uav)
        data = _as_bytes(dxbc, "dxbc")
        mode = "buffer-texture" if uav == "texel" else "storage-buffer"
        with tempfile.TemporaryDirectory(prefix="sm5-vkd3d-") as tmp:
            src, dst = Path(tmp) / "in.dxbc", Path(tmp) / "out.spv"
            src.write_bytes(data)
            args = ["-x", "dxbc-tpf", "-b", "spirv-binary", f"--buffer-uav={mode}"]
            proc = self._run([*args, "-o", str(dst), str(src)])
            text = proc.stderr.decode("utf-8", "replace")
            spirv = dst.read_bytes() if dst.exists() else b""
        if proc.returncode != 0 or len(spirv) < 20:
            detail = text.strip() or f"exit status {proc.returncode}, no message"
            raise Vkd3dError(f"{CLI_NAME} failed: {detail}", messages=text, result=proc.returncode)
        return spirv


# --------------------------------------------------------------------------- selection


class Translator(Protocol):
    """What the conformance adapter needs from either translator."""

    @property
    def name(self) -> str: ...

    def version(self) -> str: ...

    def dxbc_to_spirv(self, dxbc: bytes, uav: UavMode = "texel") -> bytes: ...


@functools.cache
def _probe() -> tuple[Translator | None, str]:
    reasons: list[str] = []
    try:
        return Vkd3dShaderLib(), ""
    except Vkd3dUnavailable as exc:
        reasons.append(f"library: {exc}")
    try:
        return Vkd3dCompilerCli(), ""
    except Vkd3dUnavailable as exc:
        reasons.append(f"cli: {exc}")
    return None, "; ".join(reasons)


def load_translator() -> Translator | None:
    """The library if built, else Debian's CLI, else None (see unavailable_reason).

    Probed once per process; ``_probe.cache_clear()`` forces a new look.
    """
    return _probe()[0]


def unavailable_reason() -> str:
    """Why load_translator() returned None ("" when a translator is available)."""
    return _probe()[1]


# --------------------------------------------------------------------------- DXBC


def dxbc_sections(dxbc: bytes) -> list[tuple[bytes, bytes]]:
    """Split a DXBC container into (tag, data) pairs (no checksum verification)."""
    data = _as_bytes(dxbc, "dxbc")
    if len(data) < 32 or data[:4] != b"DXBC":
        raise ValueError("not a DXBC container (missing 'DXBC' magic)")
    total, count = struct.unpack_from("<II", data, 24)
    if total != len(data) or 32 + 4 * count > len(data):
        raise ValueError(f"DXBC header says {total} bytes / {count} chunks, got {len(data)} bytes")
    sections: list[tuple[bytes, bytes]] = []
    for offset in struct.unpack_from(f"<{count}I", data, 32):
        if offset + 8 > len(data):
            raise ValueError(f"DXBC chunk offset {offset} out of range")
        tag = data[offset : offset + 4]
        (size,) = struct.unpack_from("<I", data, offset + 4)
        if offset + 8 + size > len(data):
            raise ValueError(f"DXBC chunk {tag!r} overruns the container")
        sections.append((tag, data[offset + 8 : offset + 8 + size]))
    return sections


# --------------------------------------------------------------------------- SPIR-V

_SPIRV_MAGIC = 0x07230203
_OP_NAME = 5
_OP_ENTRY_POINT = 15
_OP_TYPE_IMAGE = 25
_OP_TYPE_SAMPLER = 26
_OP_TYPE_SAMPLED_IMAGE = 27
_OP_TYPE_ARRAY = 28
_OP_TYPE_RUNTIME_ARRAY = 29
_OP_TYPE_STRUCT = 30
_OP_TYPE_POINTER = 32
_OP_VARIABLE = 59
_OP_DECORATE = 71
_TYPE_OPS = frozenset(
    (
        _OP_TYPE_IMAGE,
        _OP_TYPE_SAMPLER,
        _OP_TYPE_SAMPLED_IMAGE,
        _OP_TYPE_ARRAY,
        _OP_TYPE_RUNTIME_ARRAY,
        _OP_TYPE_STRUCT,
        _OP_TYPE_POINTER,
    )
)
_DEC_BLOCK = 2
_DEC_BUFFER_BLOCK = 3
_DEC_BINDING = 33
_DEC_DESCRIPTOR_SET = 34
_SC_UNIFORM_CONSTANT = 0
_SC_UNIFORM = 2
_SC_STORAGE_BUFFER = 12
_DIM_BUFFER = 5

DescriptorKind = Literal[
    "texel",
    "uniform_texel",
    "ssbo",
    "uniform",
    "storage_image",
    "sampled_image",
    "sampler",
    "combined_image_sampler",
    "other",
]


@dataclass(frozen=True)
class SpirvDescriptor:
    """One descriptor variable of a SPIR-V module.

    ``kind`` uses the runner's vocabulary: "texel" = storage texel buffer,
    "ssbo" = storage buffer, "uniform" = uniform buffer.
    """

    variable_id: int
    name: str | None
    set: int
    binding: int
    kind: DescriptorKind


def _spirv_words(spirv: bytes) -> array[int]:
    data = _as_bytes(spirv, "spirv")
    if len(data) < 20 or len(data) % 4:
        raise SpirvError(f"SPIR-V must be a multiple of 4 bytes and >= 20, got {len(data)}")
    words = array("I")
    words.frombytes(data)
    if words[0] != _SPIRV_MAGIC:
        words.byteswap()
        if words[0] != _SPIRV_MAGIC:
            raise SpirvError("bad SPIR-V magic number")
    return words


def _instructions(words: array[int]) -> list[tuple[int, array[int]]]:
    out: list[tuple[int, array[int]]] = []
    pos = 5
    while pos < len(words):
        count, opcode = words[pos] >> 16, words[pos] & 0xFFFF
        if count == 0 or pos + count > len(words):
            raise SpirvError(f"truncated SPIR-V instruction at word {pos}")
        out.append((opcode, words[pos + 1 : pos + count]))
        pos += count
    return out


def _literal_string(operands: array[int]) -> str:
    raw = operands.tobytes() if sys.byteorder == "little" else _swapped(operands)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _swapped(operands: array[int]) -> bytes:
    copy = array("I", operands)
    copy.byteswap()
    return copy.tobytes()


@dataclass
class _Module:
    names: dict[int, str]
    decorations: dict[int, dict[int, int]]
    types: dict[int, tuple[int, array[int]]]
    variables: list[tuple[int, int, int]]  # (id, pointer type, storage class)
    entry_points: dict[str, int]


def _parse(spirv: bytes) -> _Module:
    mod = _Module({}, {}, {}, [], {})
    for opcode, ops in _instructions(_spirv_words(spirv)):
        if opcode == _OP_NAME and len(ops) >= 2:
            mod.names[ops[0]] = _literal_string(ops[1:])
        elif opcode == _OP_DECORATE and len(ops) >= 2:
            mod.decorations.setdefault(ops[0], {})[ops[1]] = ops[2] if len(ops) > 2 else 1
        elif opcode == _OP_ENTRY_POINT and len(ops) >= 3:
            mod.entry_points[_literal_string(ops[2:])] = ops[0]
        elif opcode == _OP_VARIABLE and len(ops) >= 3:
            mod.variables.append((ops[1], ops[0], ops[2]))
        elif opcode in _TYPE_OPS and ops:
            mod.types[ops[0]] = (opcode, ops[1:])
    return mod


def _descriptor_kind(mod: _Module, pointer_type: int, storage: int) -> DescriptorKind:
    pointee = mod.types.get(pointer_type, (0, array("I")))[1]
    type_id = pointee[1] if len(pointee) >= 2 else 0
    opcode, ops = mod.types.get(type_id, (0, array("I")))
    while opcode in (_OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY) and ops:
        opcode, ops = mod.types.get(ops[0], (0, array("I")))
    if storage == _SC_UNIFORM_CONSTANT:
        if opcode == _OP_TYPE_IMAGE and len(ops) >= 6:
            storage_image = ops[5] == 2
            if ops[1] == _DIM_BUFFER:
                return "texel" if storage_image else "uniform_texel"
            return "storage_image" if storage_image else "sampled_image"
        if opcode == _OP_TYPE_SAMPLER:
            return "sampler"
        if opcode == _OP_TYPE_SAMPLED_IMAGE:
            return "combined_image_sampler"
        return "other"
    if opcode != _OP_TYPE_STRUCT:
        return "other"
    decorations = mod.decorations.get(type_id, {})
    if storage == _SC_STORAGE_BUFFER or _DEC_BUFFER_BLOCK in decorations:
        return "ssbo"
    return "uniform" if storage == _SC_UNIFORM else "other"


def spirv_descriptors(spirv: bytes) -> tuple[SpirvDescriptor, ...]:
    """Every variable with a Binding decoration, sorted by (set, binding)."""
    mod = _parse(spirv)
    found: list[SpirvDescriptor] = []
    for var_id, pointer_type, storage in mod.variables:
        decorations = mod.decorations.get(var_id, {})
        if _DEC_BINDING not in decorations:
            continue
        found.append(
            SpirvDescriptor(
                variable_id=var_id,
                name=mod.names.get(var_id),
                set=decorations.get(_DEC_DESCRIPTOR_SET, 0),
                binding=decorations[_DEC_BINDING],
                kind=_descriptor_kind(mod, pointer_type, storage),
            )
        )
    return tuple(sorted(found, key=lambda d: (d.set, d.binding)))


def spirv_bindings(spirv: bytes) -> dict[str, int]:
    """Map vkd3d's descriptor variable names to binding numbers in set 0.

    vkd3d names UAVs/SRVs/samplers after their register (``"u0"``, ``"t2"``,
    ``"s0"``) and constant buffers ``"cb<id>_<register>"``: ``"cb3_3"`` from
    1.14 but ``"cb3_0"`` from 1.2 (use `register_bindings` to ignore that).
    A variable without a name (debug info stripped) is keyed ``"%<id>"``;
    vkd3d still numbers bindings in declaration order, so sorting by value
    recovers the mapping. Raises SpirvError if a descriptor is outside set 0.
    """
    result: dict[str, int] = {}
    for desc in spirv_descriptors(spirv):
        if desc.set != 0:
            raise SpirvError(f"descriptor {desc.name or desc.variable_id} is in set {desc.set}")
        key = desc.name or f"%{desc.variable_id}"
        # A UAV with a hidden counter has two descriptors of its name: its own, the lower
        # binding, and the counter's (see counter_bindings).
        result[key] = min(desc.binding, result.get(key, desc.binding))
    return result


def counter_bindings(spirv: bytes) -> dict[str, int]:
    """UAV counter descriptors by register (``"u0"``): vkd3d gives a UAV whose
    hidden counter the program uses a second descriptor named after the same
    register, the one-word buffer holding its hidden counter, declared after
    the UAV's own descriptor (so numbered next in declaration order)."""
    seen: dict[str, list[int]] = {}
    for desc in spirv_descriptors(spirv):
        if desc.name:
            seen.setdefault(desc.name, []).append(desc.binding)
    return {name: max(numbers) for name, numbers in seen.items() if len(numbers) == 2}


def register_bindings(spirv: bytes) -> dict[str, int]:
    """Like spirv_bindings, keyed by D3D register (``"cb3"``, ``"u0"``), any vkd3d version."""
    result: dict[str, int] = {}
    for name, binding in spirv_bindings(spirv).items():
        register = name.split("_", 1)[0] if name.startswith("cb") else name
        if register in result:
            raise SpirvError(f"register {register} bound twice ({result[register]}, {binding})")
        result[register] = binding
    return result


def spirv_entry_points(spirv: bytes) -> dict[str, int]:
    """Entry point names mapped to their SPIR-V ExecutionModel (5 = GLCompute)."""
    return dict(_parse(spirv).entry_points)
