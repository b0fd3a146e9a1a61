"""Run vkd3d's SPIR-V compute shaders on Mesa lavapipe (CPU Vulkan) with canaries.

One `VulkanRunner` owns one instance + device on lavapipe (the loader is forced
to lavapipe's ICD before the ``vulkan`` module is imported) and runs a SPIR-V
compute shader against a set of buffer bindings in descriptor set 0::

    with VulkanRunner() as runner:
        [out] = runner.run(spirv, [BufferBinding(binding=0, words=(5, 0), kind="texel")])
        assert out.words == (5, 12) and out.guard_intact

Each binding is a window inside its own host-visible VkBuffer; the words
around the window are canaries (``0xC0DE0000 + word index in the VkBuffer``)
so out-of-bounds writes that escape the descriptor range are detected, the way
a D3D11 UAV with FirstElement/NumElements is a window of a larger resource.

Shader modules, pipelines and descriptor set layouts are cached by
(sha256 of the SPIR-V, entry point, binding layout); buffers and views are
reused. `run_batch` records up to :data:`MAX_BATCH_DISPATCHES` dispatches in one
command buffer, each on buffers and a descriptor set of its own (its *slot*), and
submits them at once: lavapipe's queue thread takes one hand-over per submission,
which costs more than running a one-thread dispatch. Mesa's on-disk shader cache
goes under the sm5-conformance cache root unless ``MESA_SHADER_CACHE_DIR`` is set.
A runner is not thread-safe.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import importlib.util
import itertools
import os
import platform
import time
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Literal, get_args

from sm5.conformance.process_env import set_in_process
from sm5.conformance.vkd3d.shader import (
    SpirvError,
    cache_root,
    spirv_descriptors,
    spirv_entry_points,
)

BindingKind = Literal["texel", "ssbo", "uniform", "uniform_texel"]
"""Descriptor types: storage texel buffer, storage buffer, uniform buffer, uniform texel buffer."""

TexelFormat = Literal["r32_uint", "r32_sint", "r32_float"]
"""Buffer-view format of texel kinds; must match the shader's declared format."""

CANARY_BASE = 0xC0DE0000
FENCE_TIMEOUT_NS = 60 * 10**9
_GLCOMPUTE = 5
_U32_MAX = 0xFFFFFFFF
_ENV_MESA_CACHE = "MESA_SHADER_CACHE_DIR"
_ENV_LP_THREADS = "LP_NUM_THREADS"
_ROBUSTNESS2 = "VK_EXT_robustness2"


class VulkanUnavailable(Exception):
    """No usable lavapipe device: missing ICD, libvulkan, ``vulkan`` module or feature."""


class VulkanRunError(Exception):
    """The Vulkan implementation failed a call while running a shader."""


@dataclass(frozen=True)
class BufferBinding:
    """One descriptor of set 0 and the initial contents of the window it exposes.

    ``words`` are raw u32 values (floats as their bit patterns). Texel kinds
    view the window with ``texel_format``; other kinds ignore it. A ``uniform``
    window (a D3D constant buffer) holds whole 16-byte elements: 4 words each.

    ``null=True`` (with no words) binds a null descriptor instead, the Vulkan form
    of a zero-sized view (VK_EXT_robustness2 ``nullDescriptor``: loads give 0,
    stores and atomics are dropped); see ``VulkanRunner.null_descriptors``.
    """

    binding: int
    words: tuple[int, ...]
    kind: BindingKind = "texel"
    guard_words: int = 64
    texel_format: TexelFormat = "r32_uint"
    null: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.binding, int) or self.binding < 0:
            raise ValueError(f"binding must be an int >= 0, got {self.binding!r}")
        if self.kind not in get_args(BindingKind):
            raise ValueError(f"kind must be one of {get_args(BindingKind)}, got {self.kind!r}")
        if self.texel_format not in get_args(TexelFormat):
            raise ValueError(f"texel_format must be one of {get_args(TexelFormat)}")
        if not isinstance(self.guard_words, int) or self.guard_words < 0:
            raise ValueError(f"guard_words must be an int >= 0, got {self.guard_words!r}")
        if self.null and self.words:
            raise ValueError(f"binding {self.binding}: a null descriptor holds no words")
        if not self.words and not self.null:
            raise ValueError(f"binding {self.binding}: window must hold at least one word")
        if all(type(w) is int and 0 <= w <= _U32_MAX for w in self.words):
            return  # the common case, checked in one pass
        for i, word in enumerate(self.words):
            if not isinstance(word, int) or not 0 <= word <= _U32_MAX:
                raise ValueError(f"binding {self.binding}: words[{i}]={word!r} is not a u32")


@dataclass(frozen=True)
class RunOutput:
    """What one binding's buffer holds after the dispatch.

    ``guard_diff`` lists changed canaries as (offset in words relative to the
    window start, negative before it; expected canary; value found).
    """

    binding: int
    words: tuple[int, ...]
    guard_intact: bool
    guard_diff: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Dispatch:
    """One dispatch of `VulkanRunner.run_batch`: ``groups`` workgroups of ``entry``."""

    spirv: bytes
    bindings: tuple[BufferBinding, ...]
    entry: str = "main"
    groups: tuple[int, int, int] = (1, 1, 1)


# --------------------------------------------------------------------------- environment


def _icd_dirs() -> list[Path]:
    """The loader's standard ICD manifest directories (XDG data dirs + sysconf)."""
    data_dirs = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    dirs = [Path(d) / "vulkan" / "icd.d" for d in data_dirs.split(":") if d]
    return [*dirs, Path("/etc/vulkan/icd.d")]


def find_lavapipe_icd() -> Path | None:
    """lavapipe's ICD manifest (``lvp_icd.<arch>.json``), preferring this machine's arch."""
    found = [p for d in _icd_dirs() if d.is_dir() for p in sorted(d.glob("lvp_icd*.json"))]
    arch = platform.machine()
    return next((p for p in found if arch in p.name), found[0] if found else None)


def _libvulkan_loadable() -> bool:
    name = ctypes.util.find_library("vulkan") or "libvulkan.so.1"
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def vulkan_available() -> tuple[bool, str]:
    """(True, "") if lavapipe, libvulkan and the ``vulkan`` module are all present."""
    if find_lavapipe_icd() is None:
        dirs = ", ".join(str(d) for d in _icd_dirs())
        return False, f"lavapipe ICD lvp_icd.*.json not found in {dirs} (mesa-vulkan-drivers)"
    if not _libvulkan_loadable():
        return False, "libvulkan.so.1 cannot be loaded (libvulkan1)"
    if importlib.util.find_spec("vulkan") is None:
        return False, "python module 'vulkan' is not installed (pip install 'vulkan>=1.3')"
    return True, ""


def _prepare_environment(icd: Path) -> None:
    """Force lavapipe, run its compute work without llvmpipe's worker threads, and keep Mesa's
    shader cache in the project cache root.

    A harness is one workgroup of one thread: llvmpipe's worker threads (``LP_NUM_THREADS``)
    cannot share it out, and handing every dispatch to them and waiting to be woken costs more
    than the dispatch, most of all on a busy machine. (A device still starts lavapipe's queue
    thread, which runs the command buffers, and Mesa's disk-cache thread: a device does not
    survive a fork, so the isolation zygote forks before it opens one.) A value set by the user
    wins.
    """
    set_in_process("VK_ICD_FILENAMES", str(icd))
    set_in_process("VK_DRIVER_FILES", str(icd))
    if _ENV_LP_THREADS not in os.environ:
        set_in_process(_ENV_LP_THREADS, "0")
    if not os.environ.get(_ENV_MESA_CACHE):
        mesa_cache = cache_root() / "mesa-shader-cache"
        mesa_cache.mkdir(parents=True, exist_ok=True)
        set_in_process(_ENV_MESA_CACHE, str(mesa_cache))


#: The ``vulkan`` module once imported (with the environment set): every later device of the
#: process (and of the isolation zygote's forked children) skips the checks, which look the
#: library up with ``ldconfig`` in a subprocess.
_imported: list[ModuleType] = []
#: The extensions of each physical device by name, read once per process (cffi converts each
#: name: a few milliseconds per device, which a forked child inherits instead of paying).
_extensions: dict[str, frozenset[str]] = {}


def _import_vulkan() -> ModuleType:
    if _imported:
        return _imported[0]
    ok, reason = vulkan_available()
    if not ok:
        raise VulkanUnavailable(reason)
    icd = find_lavapipe_icd()
    assert icd is not None
    _prepare_environment(icd)
    try:
        import vulkan  # type: ignore[import-untyped,unused-ignore]  # env must be set first
    except (ImportError, OSError) as exc:
        raise VulkanUnavailable(f"cannot import the vulkan module: {exc}") from exc
    module: ModuleType = vulkan
    _imported.append(module)
    return module


def _new_instance(vk: ModuleType) -> Any:
    app = vk.VkApplicationInfo(
        pApplicationName="sm5-conformance",
        applicationVersion=1,
        pEngineName="sm5-conformance",
        engineVersion=1,
        apiVersion=vk.VK_MAKE_VERSION(1, 1, 0),
    )
    return vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)


def create_instance() -> Any:
    """A Vulkan instance on lavapipe for `VulkanRunner(instance=...)` to share.

    Creating it (and enumerating its devices) starts no thread, so a process may
    create one and then fork children that each open a device on it quickly.
    """
    vk = _import_vulkan()
    try:
        instance = _new_instance(vk)
        vk.vkEnumeratePhysicalDevices(instance)
    except (vk.VkError, vk.VkException, OSError) as exc:
        raise VulkanUnavailable(f"cannot create a Vulkan instance: {exc!r}") from exc
    return instance


# --------------------------------------------------------------------------- internals


@dataclass
class _Limits:
    texel_align: int
    storage_align: int
    uniform_align: int
    max_groups: tuple[int, int, int]
    max_texels: int
    max_storage_range: int
    max_uniform_range: int


@dataclass
class _Layout:
    set_layout: Any
    pipeline_layout: Any
    pool: Any
    #: One descriptor set per slot, allocated when the slot is first used.
    descriptor_sets: list[Any] = field(default_factory=list)
    #: Per slot, what its set was last written with (`_write_descriptors` skips a repeat).
    written: list[tuple[Any, ...] | None] = field(default_factory=list)
    #: Per slot, counts the writes: a command buffer recorded with the set is stale after one.
    generations: list[int] = field(default_factory=list)


@dataclass
class _Pipeline:
    module: Any
    pipeline: Any
    layout: _Layout
    serial: int = 0


@dataclass
class _HostBuffer:
    buffer: Any
    memory: Any
    mapped: Any
    capacity: int
    #: Views by (offset, size, format): the handle and a serial no other view ever gets.
    views: OrderedDict[tuple[int, int, str], tuple[Any, int]] = field(
        default_factory=OrderedDict)
    serial: int = 0


@dataclass(frozen=True)
class _Placement:
    """Where a binding's window sits in its VkBuffer, in words."""

    pre: int
    count: int
    post: int

    @property
    def total(self) -> int:
        return self.pre + self.count + self.post


_LayoutKey = tuple[tuple[int, str], ...]
#: Dispatches `run_batch` records in one command buffer and submits at once.
MAX_BATCH_DISPATCHES = 32
_MAX_VIEWS_PER_BUFFER = 8
#: A uniform buffer window holds whole 16-byte elements (a D3D constant buffer's, vkd3d's vec4s).
UNIFORM_ELEMENT_WORDS = 4
_MIN_BUFFER_BYTES = 4096


@functools.lru_cache(maxsize=256)
def _canary_bytes(start: int, count: int) -> bytes:
    """The canary words of buffer words ``start .. start + count - 1`` (the same few ranges
    recur for every dispatch: built once each)."""
    return array("I", ((CANARY_BASE + i) & _U32_MAX for i in range(start, start + count))
                 ).tobytes()


def _canaries(start: int, count: int) -> array[int]:
    words = array("I")
    words.frombytes(_canary_bytes(start, count))
    return words


def _align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


# --------------------------------------------------------------------------- runner


class VulkanRunner:
    """A lavapipe device that runs compute SPIR-V against canary-guarded buffers."""

    def __init__(
        self,
        *,
        robust_buffer_access: bool = True,
        max_pipelines: int = 256,
        instance: Any = None,
    ) -> None:
        """Create the device; raises VulkanUnavailable with the reason if impossible.

        ``instance`` (from `create_instance`) is shared, not owned: close() leaves it alive.
        """
        self._vk = _import_vulkan()
        self._max_pipelines = max(1, max_pipelines)
        self._pipelines: OrderedDict[tuple[bytes, str, _LayoutKey], _Pipeline] = OrderedDict()
        #: Pipelines lavapipe refused to create, with its error: asked again, the same error
        #: (a refused creation leaves the device as it was; compiling again would only repeat it).
        self._refused: OrderedDict[tuple[bytes, str, _LayoutKey], Exception] = OrderedDict()
        self._layouts: dict[_LayoutKey, _Layout] = {}
        #: Buffers by (slot, binding number).
        self._buffers: dict[tuple[int, int], _HostBuffer] = {}
        self._instance: Any = instance
        self._owns_instance = instance is None
        self._device: Any = None
        self._fence: Any = None
        #: Serials of pipelines, buffers and views: a handle Vulkan reuses never looks the same.
        self._serials = itertools.count(1)
        #: What the command buffer holds: per dispatch (pipeline serial, slot, descriptor
        #: generation, groups).
        self._recorded: tuple[tuple[int, int, int, tuple[int, int, int]], ...] | None = None
        self._command_pool: Any = None
        self._broken = ""
        self.robust_buffer_access = robust_buffer_access
        try:
            self._create_device()
        except BaseException as exc:
            self.close()
            if isinstance(exc, self._vk.VkError | self._vk.VkException | OSError):
                raise VulkanUnavailable(f"cannot create a lavapipe device: {exc!r}") from exc
            raise

    # ----------------------------------------------------------------- device

    def _create_device(self) -> None:
        vk = self._vk
        if self._instance is None:
            self._instance = _new_instance(vk)
        self._physical = self._pick_lavapipe()
        props = vk.vkGetPhysicalDeviceProperties(self._physical)
        name = props.deviceName  # the binding returns str; raw cdata on older versions
        self.device_name: str = name if isinstance(name, str) else vk.ffi.string(name).decode()
        self.api_version: str = _version_string(props.apiVersion)
        self._limits = _read_limits(props.limits)
        features = self._enabled_features()
        family = self._compute_queue_family()
        queue_info = vk.VkDeviceQueueCreateInfo(
            queueFamilyIndex=family, queueCount=1, pQueuePriorities=[1.0]
        )
        self.null_descriptors = _ROBUSTNESS2 in self._device_extensions()
        if self.null_descriptors:
            robustness2 = vk.VkPhysicalDeviceRobustness2FeaturesEXT(nullDescriptor=vk.VK_TRUE)
            create_info = vk.VkDeviceCreateInfo(
                pNext=robustness2,
                pQueueCreateInfos=[queue_info],
                pEnabledFeatures=features,
                ppEnabledExtensionNames=[_ROBUSTNESS2],
            )
        else:
            create_info = vk.VkDeviceCreateInfo(
                pQueueCreateInfos=[queue_info], pEnabledFeatures=features
            )
        self._device = vk.vkCreateDevice(self._physical, create_info, None)
        self._queue = vk.vkGetDeviceQueue(self._device, family, 0)
        self._memory_type = self._host_coherent_memory_type()
        self._command_pool = vk.vkCreateCommandPool(
            self._device,
            vk.VkCommandPoolCreateInfo(
                flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                queueFamilyIndex=family,
            ),
            None,
        )
        self._cmd = vk.vkAllocateCommandBuffers(
            self._device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self._command_pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        self._fence = vk.vkCreateFence(self._device, vk.VkFenceCreateInfo(), None)
        # Built once: every dispatch submits the same command buffer and waits on one fence,
        # through the loader's entry points directly (the binding converts every argument of
        # every call otherwise).
        self._submit_info = vk.VkSubmitInfo(pCommandBuffers=[self._cmd])
        self._submit = vk.ffi.addressof(self._submit_info)
        self._fences = vk.ffi.new("VkFence[1]", [self._fence])

    def _pick_lavapipe(self) -> Any:
        vk = self._vk
        devices = list(vk.vkEnumeratePhysicalDevices(self._instance))
        for dev in devices:
            props = vk.vkGetPhysicalDeviceProperties(dev)
            if props.deviceType == vk.VK_PHYSICAL_DEVICE_TYPE_CPU:
                return dev
        raise VulkanUnavailable(f"no CPU (lavapipe) device among {len(devices)} devices")

    def _device_extensions(self) -> frozenset[str]:
        known = _extensions.get(self.device_name)
        if known is not None:
            return known
        props = self._vk.vkEnumerateDeviceExtensionProperties(self._physical, None)
        names = (p.extensionName for p in props)
        found = frozenset(n if isinstance(n, str) else self._vk.ffi.string(n).decode()
                          for n in names)
        _extensions[self.device_name] = found
        return found

    def _enabled_features(self) -> Any:
        vk = self._vk
        have = vk.vkGetPhysicalDeviceFeatures(self._physical)
        if not have.shaderFloat64:
            raise VulkanUnavailable("device lacks shaderFloat64")
        if self.robust_buffer_access and not have.robustBufferAccess:
            raise VulkanUnavailable("device lacks robustBufferAccess")
        return vk.VkPhysicalDeviceFeatures(
            robustBufferAccess=vk.VK_TRUE if self.robust_buffer_access else vk.VK_FALSE,
            shaderFloat64=vk.VK_TRUE,
            shaderInt64=vk.VK_TRUE if have.shaderInt64 else vk.VK_FALSE,
        )

    def _compute_queue_family(self) -> int:
        vk = self._vk
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self._physical)
        for index, family in enumerate(families):
            if family.queueFlags & vk.VK_QUEUE_COMPUTE_BIT:
                return index
        raise VulkanUnavailable("lavapipe exposes no compute queue")

    def _host_coherent_memory_type(self) -> int:
        vk = self._vk
        wanted = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        mem = vk.vkGetPhysicalDeviceMemoryProperties(self._physical)
        for index in range(mem.memoryTypeCount):
            if mem.memoryTypes[index].propertyFlags & wanted == wanted:
                return index
        raise VulkanUnavailable("no host-visible coherent memory type")

    # ----------------------------------------------------------------- public

    def run(
        self,
        spirv: bytes,
        bindings: Sequence[BufferBinding],
        entry: str = "main",
        groups: tuple[int, int, int] = (1, 1, 1),
    ) -> list[RunOutput]:
        """Dispatch ``groups`` workgroups of ``entry``; one RunOutput per binding, same order.

        Raises ValueError/SpirvError for bad arguments (including a shader whose
        set-0 descriptors are not all supplied with a matching kind) and
        VulkanRunError if Vulkan fails.
        """
        [answer] = self.run_batch([Dispatch(spirv, tuple(bindings), entry, groups)])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def run_batch(self, dispatches: Sequence[Dispatch]) -> list[list[RunOutput] | Exception]:
        """Per dispatch, in order, what `run` returns or the exception it raises for it.

        Up to :data:`MAX_BATCH_DISPATCHES` dispatches go to lavapipe in one submission, each
        on buffers and a descriptor set of its own. A submission that fails breaks the runner
        (`broken`): each of its dispatches, and each after it, answers a VulkanRunError (run
        them again one by one on a new runner to learn which failed). Raises VulkanRunError
        only when the runner was unusable from the start.
        """
        self._check_usable()
        answers: list[list[RunOutput] | Exception | None] = [None] * len(dispatches)
        ready: list[tuple[int, _Pipeline, Dispatch]] = []
        for index, dispatch in enumerate(dispatches):
            try:
                code = self._check_arguments(dispatch.spirv, dispatch.bindings, dispatch.entry,
                                             dispatch.groups)
                for binding in dispatch.bindings:  # a window too large for its kind
                    if not binding.null:
                        self._placement(binding)
                pipeline = self._pipeline(code, dispatch.entry, dispatch.bindings)
            except self._vk.VkError as exc:
                failed = VulkanRunError(f"Vulkan call failed: {exc!r}")
                failed.__cause__ = exc
                answers[index] = failed
                continue
            except (TypeError, ValueError) as exc:  # SpirvError is a ValueError
                answers[index] = exc
                continue
            ready.append((index, pipeline, dispatch))
        for start in range(0, len(ready), MAX_BATCH_DISPATCHES):
            chunk = ready[start:start + MAX_BATCH_DISPATCHES]
            for (index, _, _), answer in zip(chunk, self._submit_chunk(chunk), strict=True):
                answers[index] = answer
        return [a if a is not None else VulkanRunError("the dispatch was not run")
                for a in answers]

    def _submit_chunk(self, chunk: Sequence[tuple[int, _Pipeline, Dispatch]]
                      ) -> list[list[RunOutput] | Exception]:
        """Upload, record, submit and read back up to MAX_BATCH_DISPATCHES dispatches, the
        n-th on slot n."""
        if self._broken:
            return [VulkanRunError(self._broken) for _ in chunk]
        vk = self._vk
        try:
            placements = []
            for slot, (_, pipeline, dispatch) in enumerate(chunk):
                places = [self._upload(b, slot) for b in dispatch.bindings]
                self._write_descriptors(pipeline.layout, slot, dispatch.bindings, places)
                placements.append(places)
        except vk.VkError as exc:
            error = VulkanRunError(f"Vulkan call failed: {exc!r}")
            return [error for _ in chunk]
        try:
            self._dispatch([(pipeline, slot, dispatch.groups)
                            for slot, (_, pipeline, dispatch) in enumerate(chunk)])
        except (vk.VkError, vk.VkException) as exc:  # incl. VK_TIMEOUT of the fence wait
            self._broken = f"dispatch failed with {exc!r}; the runner cannot be reused"
            return [VulkanRunError(self._broken) for _ in chunk]
        return [[self._read_back(b, p, slot)
                 for b, p in zip(dispatch.bindings, places, strict=True)]
                for slot, ((_, _, dispatch), places) in enumerate(zip(chunk, placements,
                                                                      strict=True))]

    def compile(self, spirv: bytes, bindings: Sequence[BufferBinding], entry: str = "main"
                ) -> float:
        """Create (or find cached) the compute pipeline of ``spirv`` without dispatching it;
        the seconds it took (next to nothing when it was cached). Also fills Mesa's disk cache, so
        a child process that compiles the same shader next finds it there."""
        self._check_usable()
        code = self._check_arguments(spirv, bindings, entry, (1, 1, 1))
        started = time.perf_counter()
        try:
            self._pipeline(code, entry, bindings)
        except self._vk.VkError as exc:
            raise VulkanRunError(f"Vulkan call failed: {exc!r}") from exc
        return time.perf_counter() - started

    def close(self) -> None:
        """Destroy every Vulkan object; the runner is unusable afterwards."""
        vk, device = self._vk, self._device
        if device is not None:
            vk.vkDeviceWaitIdle(device)
            for pipe in self._pipelines.values():
                self._destroy_pipeline(pipe)
            for layout in self._layouts.values():
                vk.vkDestroyDescriptorPool(device, layout.pool, None)
                vk.vkDestroyPipelineLayout(device, layout.pipeline_layout, None)
                vk.vkDestroyDescriptorSetLayout(device, layout.set_layout, None)
            for buf in self._buffers.values():
                self._destroy_buffer(buf)
            if self._fence is not None:
                vk.vkDestroyFence(device, self._fence, None)
            if self._command_pool is not None:
                vk.vkDestroyCommandPool(device, self._command_pool, None)
            vk.vkDestroyDevice(device, None)
        if self._instance is not None and self._owns_instance:
            vk.vkDestroyInstance(self._instance, None)
        self._pipelines.clear()
        self._layouts.clear()
        self._buffers.clear()
        self._device = self._instance = None
        self._broken = self._broken or "runner is closed"

    def __enter__(self) -> VulkanRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def cached_pipelines(self) -> int:
        """Number of pipelines currently cached (for tests and benchmarks)."""
        return len(self._pipelines)

    # ----------------------------------------------------------------- checks

    @property
    def broken(self) -> bool:
        """A dispatch failed (or the runner was closed): the device cannot be used again. A
        Vulkan call that failed before the dispatch (a pipeline lavapipe refused) leaves it
        usable."""
        return bool(self._broken)

    def _check_usable(self) -> None:
        if self._broken:
            raise VulkanRunError(self._broken)

    def _check_arguments(
        self,
        spirv: bytes,
        bindings: Sequence[BufferBinding],
        entry: str,
        groups: tuple[int, int, int],
    ) -> bytes:
        """Validate run() arguments; returns the SPIR-V as bytes."""
        if not isinstance(spirv, bytes | bytearray | memoryview):
            raise TypeError(f"spirv must be bytes-like, not {type(spirv).__name__}")
        if not isinstance(entry, str) or not entry:
            raise ValueError(f"entry must be a non-empty str, got {entry!r}")
        for b in bindings:
            if not isinstance(b, BufferBinding):
                raise TypeError(f"bindings must be BufferBinding, not {type(b).__name__}")
        if any(b.null for b in bindings) and not self.null_descriptors:
            raise ValueError(f"null descriptors need {_ROBUSTNESS2}, which the device lacks")
        numbers = [b.binding for b in bindings]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"duplicate binding numbers in {numbers}")
        self._check_groups(groups)
        return bytes(spirv)

    def _check_groups(self, groups: tuple[int, int, int]) -> None:
        if (
            not isinstance(groups, tuple | list)
            or len(groups) != 3
            or not all(isinstance(g, int) for g in groups)
        ):
            raise ValueError(f"groups must be three ints, got {groups!r}")
        for g, limit in zip(groups, self._limits.max_groups, strict=True):
            if not 1 <= g <= limit:
                raise ValueError(f"groups {groups} outside 1..{self._limits.max_groups}")

    def _validate_shader(self, spirv: bytes, entry: str, bindings: Sequence[BufferBinding]) -> None:
        """Refuse what would be undefined behaviour (lavapipe does not validate SPIR-V)."""
        models = spirv_entry_points(spirv)
        if models.get(entry) != _GLCOMPUTE:
            raise SpirvError(f"no GLCompute entry point {entry!r} (found {sorted(models)})")
        given = {b.binding: b for b in bindings}
        for desc in spirv_descriptors(spirv):
            label = desc.name or f"%{desc.variable_id}"
            if desc.set != 0:
                raise SpirvError(f"descriptor {label} uses set {desc.set}; only set 0 is bound")
            binding = given.get(desc.binding)
            if binding is None:
                raise ValueError(f"shader uses binding {desc.binding} ({label}) but none given")
            if binding.kind != desc.kind:
                raise ValueError(
                    f"binding {desc.binding} ({label}) is a {desc.kind} descriptor in the "
                    f"shader but was given as {binding.kind}"
                )

    # ----------------------------------------------------------------- pipelines

    def _pipeline(self, spirv: bytes, entry: str, bindings: Sequence[BufferBinding]) -> _Pipeline:
        layout_key: _LayoutKey = tuple(sorted((b.binding, b.kind) for b in bindings))
        key = (hashlib.sha256(spirv).digest(), entry, layout_key)
        cached = self._pipelines.get(key)
        if cached is not None:
            self._pipelines.move_to_end(key)
            return cached
        refused = self._refused.get(key)
        if refused is not None:
            raise refused
        self._validate_shader(spirv, entry, bindings)
        try:
            pipe = self._create_pipeline(spirv, entry, self._layout(layout_key))
        except self._vk.VkError as exc:
            self._refused[key] = exc
            while len(self._refused) > self._max_pipelines:
                self._refused.popitem(last=False)
            raise
        self._pipelines[key] = pipe
        while len(self._pipelines) > self._max_pipelines:
            _, old = self._pipelines.popitem(last=False)
            self._destroy_pipeline(old)
        return pipe

    def _create_pipeline(self, spirv: bytes, entry: str, layout: _Layout) -> _Pipeline:
        vk = self._vk
        module = vk.vkCreateShaderModule(
            self._device, vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv), None
        )
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry
        )
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout.pipeline_layout)
        try:
            pipeline = vk.vkCreateComputePipelines(self._device, None, 1, [info], None)[0]
        except vk.VkError:
            vk.vkDestroyShaderModule(self._device, module, None)
            raise
        return _Pipeline(module=module, pipeline=pipeline, layout=layout,
                         serial=next(self._serials))

    def _destroy_pipeline(self, pipe: _Pipeline) -> None:
        self._vk.vkDestroyPipeline(self._device, pipe.pipeline, None)
        self._vk.vkDestroyShaderModule(self._device, pipe.module, None)

    def _layout(self, key: _LayoutKey) -> _Layout:
        """Set layout + pipeline layout + a pool for a descriptor set per slot, shared by all
        shaders of the layout."""
        found = self._layouts.get(key)
        if found is not None:
            return found
        vk, dev = self._vk, self._device
        entries = [
            vk.VkDescriptorSetLayoutBinding(
                binding=number,
                descriptorType=self._descriptor_type(kind),
                descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            )
            for number, kind in key
        ]
        set_layout = vk.vkCreateDescriptorSetLayout(
            dev, vk.VkDescriptorSetLayoutCreateInfo(pBindings=entries), None
        )
        pipeline_layout = vk.vkCreatePipelineLayout(
            dev, vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout]), None
        )
        counts: dict[int, int] = {}
        for _, kind in key:
            dtype = self._descriptor_type(kind)
            counts[dtype] = counts.get(dtype, 0) + 1
        sizes = [vk.VkDescriptorPoolSize(type=t, descriptorCount=n * MAX_BATCH_DISPATCHES)
                 for t, n in counts.items()]
        pool = vk.vkCreateDescriptorPool(
            dev,
            vk.VkDescriptorPoolCreateInfo(maxSets=MAX_BATCH_DISPATCHES, pPoolSizes=sizes or None),
            None,
        )
        layout = _Layout(set_layout, pipeline_layout, pool)
        self._layouts[key] = layout
        return layout

    def _descriptor_set(self, layout: _Layout, slot: int) -> Any:
        """The slot's descriptor set of ``layout`` (allocated on first use)."""
        while len(layout.descriptor_sets) <= slot:
            vk = self._vk
            layout.descriptor_sets.append(vk.vkAllocateDescriptorSets(
                self._device,
                vk.VkDescriptorSetAllocateInfo(
                    descriptorPool=layout.pool, descriptorSetCount=1,
                    pSetLayouts=[layout.set_layout]
                ),
            )[0])
            layout.written.append(None)
            layout.generations.append(0)
        return layout.descriptor_sets[slot]

    def _descriptor_type(self, kind: str) -> int:
        vk = self._vk
        types: dict[str, int] = {
            "texel": vk.VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
            "uniform_texel": vk.VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
            "ssbo": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            "uniform": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
        }
        return types[kind]

    # ----------------------------------------------------------------- buffers

    def _placement(self, binding: BufferBinding) -> _Placement:
        limits = self._limits
        align = {
            "texel": limits.texel_align,
            "uniform_texel": limits.texel_align,
            "ssbo": limits.storage_align,
            "uniform": limits.uniform_align,
        }[binding.kind]
        count = len(binding.words)
        max_bytes = {
            "texel": limits.max_texels * 4,
            "uniform_texel": limits.max_texels * 4,
            "ssbo": limits.max_storage_range,
            "uniform": limits.max_uniform_range,
        }[binding.kind]
        if count * 4 > max_bytes:
            raise ValueError(f"binding {binding.binding}: {count} words exceed {max_bytes} bytes")
        if binding.kind == "uniform" and count % UNIFORM_ELEMENT_WORDS:
            raise ValueError(f"binding {binding.binding}: a uniform buffer holds whole 16-byte "
                             f"elements (vkd3d reads a cb# as vec4s), not {count} words")
        pre_bytes = _align_up(binding.guard_words * 4, max(4, align))
        return _Placement(pre=pre_bytes // 4, count=count, post=binding.guard_words)

    def _upload(self, binding: BufferBinding, slot: int) -> _Placement:
        if binding.null:
            return _Placement(pre=0, count=0, post=0)
        place = self._placement(binding)
        buf = self._buffer_for((slot, binding.binding), place.total * 4)
        data = _canaries(0, place.pre)
        data.extend(binding.words)
        data.extend(_canaries(place.pre + place.count, place.post))
        raw = data.tobytes()
        buf.mapped[0 : len(raw)] = raw
        return place

    def _buffer_for(self, number: tuple[int, int], size: int) -> _HostBuffer:
        """Reuse the VkBuffer of (slot, binding) when big enough, else replace it."""
        current = self._buffers.get(number)
        if current is not None and current.capacity >= size:
            return current
        if current is not None:
            self._destroy_buffer(current)
        capacity = max(_MIN_BUFFER_BYTES, 1 << (size - 1).bit_length())
        buf = self._create_buffer(capacity)
        self._buffers[number] = buf
        return buf

    def _create_buffer(self, capacity: int) -> _HostBuffer:
        vk, dev = self._vk, self._device
        usage = (
            vk.VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT
            | vk.VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT
            | vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
            | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
        )
        buffer = vk.vkCreateBuffer(
            dev,
            vk.VkBufferCreateInfo(
                size=capacity, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE
            ),
            None,
        )
        needs = vk.vkGetBufferMemoryRequirements(dev, buffer)
        if not needs.memoryTypeBits & (1 << self._memory_type):
            vk.vkDestroyBuffer(dev, buffer, None)
            raise VulkanRunError("buffer cannot live in host-coherent memory")
        memory = vk.vkAllocateMemory(
            dev,
            vk.VkMemoryAllocateInfo(allocationSize=needs.size, memoryTypeIndex=self._memory_type),
            None,
        )
        vk.vkBindBufferMemory(dev, buffer, memory, 0)
        mapped = vk.vkMapMemory(dev, memory, 0, capacity, 0)
        return _HostBuffer(buffer=buffer, memory=memory, mapped=mapped, capacity=capacity,
                           serial=next(self._serials))

    def _destroy_buffer(self, buf: _HostBuffer) -> None:
        vk, dev = self._vk, self._device
        for view, _ in buf.views.values():
            vk.vkDestroyBufferView(dev, view, None)
        vk.vkUnmapMemory(dev, buf.memory)
        vk.vkDestroyBuffer(dev, buf.buffer, None)
        vk.vkFreeMemory(dev, buf.memory, None)

    def _view_for(self, buf: _HostBuffer, offset: int, size: int, fmt: str) -> tuple[Any, int]:
        """The view of the window and its serial."""
        key = (offset, size, fmt)
        found = buf.views.get(key)
        if found is not None:
            buf.views.move_to_end(key)
            return found
        vk = self._vk
        formats = {
            "r32_uint": vk.VK_FORMAT_R32_UINT,
            "r32_sint": vk.VK_FORMAT_R32_SINT,
            "r32_float": vk.VK_FORMAT_R32_SFLOAT,
        }
        view = vk.vkCreateBufferView(
            self._device,
            vk.VkBufferViewCreateInfo(
                buffer=buf.buffer, format=formats[fmt], offset=offset, range=size
            ),
            None,
        )
        made = buf.views[key] = (view, next(self._serials))
        while len(buf.views) > _MAX_VIEWS_PER_BUFFER:  # idle: every run waits for its fence
            _, (old, _) = buf.views.popitem(last=False)
            vk.vkDestroyBufferView(self._device, old, None)
        return made

    def _write_descriptors(
        self, layout: _Layout, slot: int, bindings: Sequence[BufferBinding],
        places: Sequence[_Placement]
    ) -> None:
        """Point the layout's descriptor set of ``slot`` at the windows, unless it already does
        (the same buffers, views and ranges as the last write: consecutive vectors of one
        shape)."""
        descriptor_set = self._descriptor_set(layout, slot)
        wanted = tuple(self._descriptor_key(b, p, slot)
                       for b, p in zip(bindings, places, strict=True))
        if wanted == layout.written[slot]:
            return
        layout.written[slot] = None  # until the update below has gone through
        # Filled in place through cffi: the binding's struct constructors cost more than the
        # update itself, and most vectors change some window.
        vk, ffi = self._vk, self._vk.ffi
        writes = ffi.new("VkWriteDescriptorSet[]", len(bindings))
        keep: list[Any] = []  # what the writes point at, alive until the update returns
        for write, binding, place in zip(writes, bindings, places, strict=True):
            write.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            write.dstSet = descriptor_set
            write.dstBinding = binding.binding
            write.descriptorCount = 1
            write.descriptorType = self._descriptor_type(binding.kind)
            texel = binding.kind in ("texel", "uniform_texel")
            if binding.null:
                view, buffer, offset, size = ffi.NULL, ffi.NULL, 0, vk.VK_WHOLE_SIZE
            else:
                buf = self._buffers[slot, binding.binding]
                buffer, offset, size = buf.buffer, place.pre * 4, place.count * 4
                if texel:
                    view, _ = self._view_for(buf, offset, size, binding.texel_format)
            if texel:
                views = ffi.new("VkBufferView[1]", [view])
                keep.append(views)
                write.pTexelBufferView = views
            else:
                info = ffi.new("VkDescriptorBufferInfo[1]")
                info[0].buffer, info[0].offset, info[0].range = buffer, offset, size
                keep.append(info)
                write.pBufferInfo = info
        if bindings:
            vk.lib.vkUpdateDescriptorSets(self._device, len(bindings), writes, 0, ffi.NULL)
        layout.written[slot] = wanted
        layout.generations[slot] += 1

    def _descriptor_key(self, binding: BufferBinding, place: _Placement, slot: int
                        ) -> tuple[Any, ...]:
        """What one descriptor write points at: serials of the buffer and view, the range."""
        if binding.null:
            return (binding.binding, binding.kind, None)
        buf = self._buffers[slot, binding.binding]
        offset, size = place.pre * 4, place.count * 4
        if binding.kind in ("texel", "uniform_texel"):
            _, view = self._view_for(buf, offset, size, binding.texel_format)
            return (binding.binding, binding.kind, buf.serial, view)
        return (binding.binding, binding.kind, buf.serial, offset, size)

    # ----------------------------------------------------------------- dispatch

    def _dispatch(self, dispatches: Sequence[tuple[_Pipeline, int, tuple[int, int, int]]]
                  ) -> None:
        """Submit the dispatches (pipeline, slot, groups) at once and wait for them. The
        command buffer is recorded again only when a pipeline, a descriptor set's contents or
        a group count changed since the last recording (a recorded buffer is valid until a
        set bound in it is written)."""
        vk = self._vk
        recorded = tuple((pipe.serial, slot, pipe.layout.generations[slot], groups)
                         for pipe, slot, groups in dispatches)
        if recorded != self._recorded:
            self._recorded = None
            self._record(dispatches)
            self._recorded = recorded
        lib = vk.lib
        _checked(vk, lib.vkQueueSubmit(self._queue, 1, self._submit, self._fence))
        _checked(vk, lib.vkWaitForFences(self._device, 1, self._fences, vk.VK_TRUE,
                                         FENCE_TIMEOUT_NS))
        _checked(vk, lib.vkResetFences(self._device, 1, self._fences))

    def _record(self, dispatches: Sequence[tuple[_Pipeline, int, tuple[int, int, int]]]
                ) -> None:
        """Dispatches on disjoint buffers need no barrier between them; one barrier makes
        every write visible to the host."""
        vk, cmd = self._vk, self._cmd
        lib, ffi = vk.lib, vk.ffi
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(flags=0))
        bound = None
        sets = ffi.new("VkDescriptorSet[1]")
        for pipe, slot, groups in dispatches:
            if pipe is not bound:
                lib.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe.pipeline)
                bound = pipe
            sets[0] = pipe.layout.descriptor_sets[slot]
            lib.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE,
                                        pipe.layout.pipeline_layout, 0, 1, sets, 0, ffi.NULL)
            lib.vkCmdDispatch(cmd, groups[0], groups[1], groups[2])
        barrier = vk.VkMemoryBarrier(
            srcAccessMask=vk.VK_ACCESS_SHADER_WRITE_BIT, dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT
        )
        vk.vkCmdPipelineBarrier(
            cmd,
            vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            vk.VK_PIPELINE_STAGE_HOST_BIT,
            0,
            1,
            [barrier],
            0,
            None,
            0,
            None,
        )
        vk.vkEndCommandBuffer(cmd)

    def _read_back(self, binding: BufferBinding, place: _Placement, slot: int) -> RunOutput:
        if binding.null:
            return RunOutput(binding=binding.binding, words=(), guard_intact=True, guard_diff=())
        buf = self._buffers[slot, binding.binding]
        raw = bytes(buf.mapped[0 : place.total * 4])
        data = array("I")
        data.frombytes(raw)
        window_end = place.pre + place.count
        diff: tuple[tuple[int, int, int], ...] = ()
        # Intact canaries (the common case) compare as two byte strings.
        if raw[: place.pre * 4] != _canary_bytes(0, place.pre):
            diff = tuple(_guard_diff(data, place.pre, range(0, place.pre)))
        if raw[window_end * 4 :] != _canary_bytes(window_end, place.post):
            diff += tuple(_guard_diff(data, place.pre, range(window_end, place.total)))
        return RunOutput(
            binding=binding.binding,
            words=tuple(data[place.pre : window_end]),
            guard_intact=not diff,
            guard_diff=diff,
        )


def _guard_diff(data: array[int], window: int, indices: range) -> Iterator[tuple[int, int, int]]:
    for i in indices:
        expected = (CANARY_BASE + i) & _U32_MAX
        if data[i] != expected:
            yield (i - window, expected, data[i])


def _checked(vk: ModuleType, result: int) -> None:
    """Raise the binding's exception for a result other than VK_SUCCESS, as its wrappers do."""
    if result != vk.VK_SUCCESS:
        raise vk.exception_codes[result]


def _version_string(packed: int) -> str:
    return f"{packed >> 22}.{(packed >> 12) & 0x3FF}.{packed & 0xFFF}"


def _read_limits(limits: Any) -> _Limits:
    return _Limits(
        texel_align=int(limits.minTexelBufferOffsetAlignment),
        storage_align=int(limits.minStorageBufferOffsetAlignment),
        uniform_align=int(limits.minUniformBufferOffsetAlignment),
        max_groups=(
            int(limits.maxComputeWorkGroupCount[0]),
            int(limits.maxComputeWorkGroupCount[1]),
            int(limits.maxComputeWorkGroupCount[2]),
        ),
        max_texels=int(limits.maxTexelBufferElements),
        max_storage_range=int(limits.maxStorageBufferRange),
        max_uniform_range=int(limits.maxUniformBufferRange),
    )
