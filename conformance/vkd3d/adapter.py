"""vkd3d-shader on Mesa lavapipe as an implementation under test (``--sm5-impl=vkd3d``).

Per vector: parse the program, wrap it in the oracle's cs_5_0 harness (state loaded from and
stored back to an extra raw UAV), encode the harness as DXBC, translate it to SPIR-V with
vkd3d-shader, dispatch one thread group on lavapipe, decode the final state.

* **Executes only.** vkd3d-shader does not validate: it translates illegal instances too, so
  must-reject vectors are not applicable to it.
* **Windows and canaries.** Every UAV under test is a window inside a larger buffer filled with
  canary words, as a D3D UAV with FirstElement/NumElements is a window of its resource. D3D never
  writes outside a UAV (an out-of-bounds access leaves at most that UAV undefined), so a changed
  canary is an ``error`` result naming the words, whatever the vector expects of the UAV itself.
  A zero-sized UAV is a null descriptor (VK_EXT_robustness2), where every access is out of
  bounds.
* **Constant buffers.** vkd3d makes each ``cb#`` a uniform buffer (an array of 16-byte
  elements): the runner binds one holding the state's words (whole elements, at least one), with
  canaries around it like every window. It is read-only: the adapter checks that its words and
  canaries are unchanged after the dispatch, and the reply, like the spec's final state, holds no
  ``cb#``. D3D reads 0 past the end of the bound buffer (FS 7.5); vkd3d indexes the array
  unchecked and leaves that to robustBufferAccess, which on lavapipe bounds-checks the byte
  offset ``16 * index`` in 32 bits: an index from 2^28 up can wrap back into the buffer.
* **Isolation.** lavapipe does not bounds-check groupshared memory; an out-of-bounds ``g#``
  access can crash the process. The adapter asks the oracle which clauses an instance fires
  (only to choose where to run it) and runs instances that leave shared memory undefined in a
  child process (`sm5.conformance.vkd3d.child`): a crash becomes a ``crash`` result and the run
  goes on.
* **Unsupported.** A vector a compute harness cannot express (a helper invocation), and an
  opcode the translator does not know (Debian's vkd3d-compiler 1.2 lacks the later double
  opcodes: "Unrecognized opcode 0xc8"; vkd3d 1.14 reads 0xd5 but cannot translate it: "Unhandled
  instruction 0xd5"), give ``unsupported`` with the reason.
* **Batches.** `run_batch` runs many vectors in one call (the conformance engine uses it): the
  isolated ones share child processes; when a child dies, the dispatch it died in runs again
  first in a fresh child, so a crash costs no batch-mate its verdict. The isolated dispatches
  of a batch are packed by shader into units of work (`work_units`: a child compiles each of
  its shaders once) that several isolation processes (one per CPU, at most
  :data:`MAX_ISOLATION_PROCESSES`) take one at a time whenever they are free, so they finish
  together, while this process dispatches the rest, up to
  ``vulkan_runner.MAX_BATCH_DISPATCHES`` to a submission (lavapipe's queue thread takes one
  hand-over per submission, which costs more than a one-thread dispatch).
* **Caches.** DXBC and SPIR-V are cached per harness program (the program text plus the state's
  layout; values travel in the buffers), pipelines by the runner, compiled code by Mesa's disk
  cache; one lavapipe device serves the whole run.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import get_args

from sm5.conformance.guards import GUARD_KEY, request_state
from sm5.conformance.interface import Result
from sm5.conformance.isolation import (
    accesses_shared_memory,
    names_shared_memory,
    voids_shared_memory,
)
from sm5.conformance.vkd3d.child import DEFAULT_TIMEOUT_S, ChildFailed, IsolatedRunner, Job
from sm5.conformance.vkd3d.shader import (
    SpirvError,
    Translator,
    UavMode,
    Vkd3dError,
    Vkd3dUnavailable,
    counter_bindings,
    load_translator,
    register_bindings,
    spirv_descriptors,
    unavailable_reason,
)
from sm5.conformance.vkd3d.vulkan_runner import (
    BindingKind,
    BufferBinding,
    Dispatch,
    RunOutput,
    TexelFormat,
    VulkanRunError,
    VulkanRunner,
    VulkanUnavailable,
)
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.cli.options import positive_seconds
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import Harness, build_harness, decode_state
from sm5.oracle.errors import NotExpressible, Sm5Error
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.program import Program
from sm5.oracle.machine.state import CONSTANT_KIND, MachineState, state_to_json
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector

NAME = "vkd3d"
#: Known divergences of this target (conformance.expectations format).
EXPECTATIONS_FILE = Path(__file__).with_name("expectations.yaml")
CAPABILITIES: frozenset[str] = frozenset({"executes"})

#: vkd3d's message for an opcode its DXBC reader does not know.
UNKNOWN_OPCODE = "Unrecognized opcode"
#: vkd3d's message for an opcode its reader knows and its SPIR-V back end does not translate.
UNHANDLED_INSTRUCTION = "Unhandled instruction"
#: vkd3d's descriptor of a ``cb#``: a uniform buffer (an array of 16-byte elements).
CONSTANT_DESCRIPTOR: BindingKind = "uniform"
#: A constant buffer's element: 4 words, 16 bytes (a uniform buffer is sized in whole elements).
CONSTANT_ELEMENT_WORDS = 4
#: Raw and structured UAVs are R32_UINT buffer views in vkd3d's translation.
UNTYPED_VIEW_FORMAT: TexelFormat = "r32_uint"
_SHOWN_CANARIES = 4
#: Canary words the runner keeps on each side of a window at least (more for a request whose
#: guard is longer: a structure of up to 2,048 bytes).
CANARY_WORDS = 64
#: Translated harness programs kept (a memory bound). Both caches are least recently used, and a
#: run walks its vectors in the same order each pass: a cache smaller than the distinct
#: programs of a pass misses on every vector of the next (the golden set's applicable vectors
#: of 86 instructions have 17,637 distinct harness programs; a test keeps them below these
#: bounds). A translation is a few kilobytes of SPIR-V.
MAX_COMPILED = 32768
#: The execution limit of an isolated dispatch, in seconds (``SM5_VKD3D_TIMEOUT`` sets it).
EXECUTION_LIMIT_S = DEFAULT_TIMEOUT_S
#: A forked child compiles the shader again (from Mesa's disk cache when it can), possibly on a
#: busier machine: its limit adds this many times the compile time measured in process.
COMPILE_MARGIN = 3.0
#: Isolated dispatches sent to one child process at most (one fork and device for them all).
ISOLATED_BATCH = 32
#: Units of isolated work per isolation process a batch is cut into, when its dispatches are
#: few enough (`work_units`): more balance the processes better, fewer save children.
UNITS_PER_PROCESS = 4
#: Isolation processes an adapter runs side by side at most (one per CPU up to this).
MAX_ISOLATION_PROCESSES = 4
#: Pipelines the lavapipe runner keeps (llvmpipe's compiled code; Mesa's disk cache backs it):
#: about 150 KB each (a pipeline per distinct shader, fewer than the harness programs; at this
#: bound about 4.9 GB resident at the most, reached only by a run of the whole golden set).
MAX_PIPELINES = 32768
#: Isolated dispatches remembered as having died first in a fresh child (see `run_batch`).
MAX_REMEMBERED_DEATHS = 4096


@dataclass(frozen=True)
class Compiled:
    """A harness program translated by vkd3d: SPIR-V and the descriptor of each view register
    (``u#``, ``t#``; a ``cb#``'s is a uniform buffer)."""

    spirv: bytes
    descriptors: Mapping[str, tuple[int, BindingKind]]
    counters: Mapping[str, tuple[int, BindingKind]] = field(default_factory=dict)


@dataclass(frozen=True)
class Prepared:
    """One vector ready to run: its harness, its bound buffers and where to run it."""

    harness: Harness
    compiled: Compiled
    bindings: tuple[BufferBinding, ...]
    registers: tuple[str, ...]
    isolated: bool
    guards: Mapping[str, Mapping[str, Sequence[int]]]
    counters: tuple[str, ...] = ()
    #: The cb# bound as uniform buffers, after the counters (read-only: checked, not decoded).
    constants: tuple[str, ...] = ()


@dataclass(frozen=True)
class IsolatedItem:
    """An isolated vector of a batch: where its result goes, its dispatch, and its limit's why."""

    index: int
    prepared: Prepared
    job: Job
    why: str


class _Skip(Exception):
    """Ends one vector early with a finished Result."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.reason)
        self.result = result


def texel_format(kind: str, fmt: str) -> TexelFormat:
    """The Vulkan view format of a UAV of ``kind`` (typed: its DXGI format, e.g. R32_SINT)."""
    if kind != "typed":
        return UNTYPED_VIEW_FORMAT
    name = fmt.lower()
    for known in get_args(TexelFormat):
        if known == name:
            return known  # type: ignore[no-any-return]
    raise _Skip(Result.unsupported(f"typed UAV format {fmt} has no Vulkan texel view here"))


def constant_words(data: Sequence[int]) -> tuple[int, ...]:
    """A constant buffer's words as its uniform buffer holds them: padded with zeros to whole
    16-byte elements, at least one (a uniform buffer range of 0 bytes is invalid in Vulkan). An
    element past the data reads 0 in D3D whether or not a padded one holds it (FS 7.5)."""
    words = tuple(data)
    size = max(CONSTANT_ELEMENT_WORDS, -(-len(words) // CONSTANT_ELEMENT_WORDS)
               * CONSTANT_ELEMENT_WORDS)
    return words + (0,) * (size - len(words))


def needs_isolation(program: Program, state: MachineState, target: str, runtime: str) -> bool:
    """Does this instance leave shared memory undefined (lavapipe may then crash)?

    Instances the oracle cannot classify (it refuses the state or rejects the instance) are
    isolated too: when in doubt, a crash must not take the run down.
    """
    model = load_default().model
    if not names_shared_memory(program, state, model):
        return False
    try:
        execution = execute(program, state, target=target, runtime=runtime)
    except Sm5Error:
        return True
    # A read outside a g# leaves only its result undefined, but lavapipe reads outside the
    # workgroup array all the same: any instance the oracle does not call plainly exact is
    # isolated too.
    return voids_shared_memory(execution, model) or (
        accesses_shared_memory(program, model) and execution.outcomes != (model.plain_outcome,))


def _guard_reach(guard: Mapping[str, Sequence[int]] | None) -> int:
    if guard is None:
        return 0
    return max(len(guard["before"]), len(guard["after"]))


def _in_guard(guard: Mapping[str, Sequence[int]], offset: int, size: int) -> bool:
    """Whether the canary at ``offset`` (words from the window start) is a request guard word."""
    return -len(guard["before"]) <= offset < 0 or size <= offset < size + len(guard["after"])


def _read_back_guard(guard: Mapping[str, Sequence[int]], diff: Sequence[tuple[int, int, int]],
                     size: int) -> dict[str, list[int]]:
    """The request's guard words as the buffer holds them after the dispatch: the runner fills
    the words around a window with its own canaries and reports each changed one, so a word is
    the request's where its canary is intact and the value found where it changed."""
    found = {offset: value for offset, _, value in diff}
    before = list(guard["before"])
    after = list(guard["after"])
    for i in range(len(before)):
        before[i] = found.get(i - len(before), before[i])
    for i in range(len(after)):
        after[i] = found.get(size + i, after[i])
    return {"before": before, "after": after}


def _canary_reason(register: str, diff: Sequence[tuple[int, int, int]]) -> str:
    shown = ", ".join(
        f"word {offset:+d} {expected:#010x} -> {found:#010x}"
        for offset, expected, found in diff[:_SHOWN_CANARIES]
    )
    more = f" and {len(diff) - _SHOWN_CANARIES} more" if len(diff) > _SHOWN_CANARIES else ""
    return f"wrote outside {register}'s window (D3D never writes outside a UAV): {shown}{more}"


class Vkd3dLavapipe:
    """The adapter (see the module docstring). Not thread-safe: one run at a time."""

    name: str = NAME
    capabilities: frozenset[str] = CAPABILITIES

    def __init__(
        self,
        translator: Translator,
        *,
        uav: UavMode = "texel",
        isolation_timeout: float | None = None,
        runner: VulkanRunner | None = None,
        isolation_processes: int | None = None,
    ) -> None:
        self.translator = translator
        self.uav: UavMode = uav
        self._runner = runner if runner is not None else VulkanRunner(max_pipelines=MAX_PIPELINES)
        self.device = self._runner.device_name
        self.version = f"{translator.name} {translator.version()} on {self.device}"
        self.execution_limit = isolation_timeout if isolation_timeout is not None \
            else execution_limit_from_environment()
        processes = isolation_processes if isolation_processes is not None \
            else min(MAX_ISOLATION_PROCESSES, os.cpu_count() or 1)
        self._isolated = [
            IsolatedRunner(robust_buffer_access=self._runner.robust_buffer_access,
                           timeout=self.execution_limit)
            for _ in range(max(1, processes))
        ]
        self._pool: ThreadPoolExecutor | None = None
        self._running: list[Future[list[Done]]] = []
        self._compile_seconds: dict[bytes, float] = {}
        self._compiled: OrderedDict[Program, Compiled | Result] = OrderedDict()
        #: Isolated dispatches whose last run killed a fresh child.
        self._died: OrderedDict[DispatchKey, None] = OrderedDict()
        self.isolated_runs = 0

    # ----------------------------------------------------------------- public

    def run(self, vector: Vector) -> Result:
        [result] = self.run_batch([vector])
        return result

    def run_batch(self, vectors: Sequence[Vector]) -> list[Result]:
        """The results of ``vectors``, in order, as `run` gives them one by one: the isolated
        ones run in the isolation processes, in units of up to :data:`ISOLATED_BATCH` (see
        `work_units`), each unit a batch to a child (a batch that dies costs only the
        dispatch that died its batch-mates' verdicts: see ``child.IsolatedRunner.run_batch``),
        while this process dispatches the others, several to a submission."""
        results: list[Result | None] = [None] * len(vectors)
        isolated: list[IsolatedItem] = []
        in_process: list[tuple[int, Prepared]] = []
        for index, vector in enumerate(vectors):
            try:
                prepared = self._prepare(vector)
                if prepared.isolated:
                    limit, why = self._isolated_limit(prepared.compiled.spirv, prepared.bindings)
                    isolated.append(IsolatedItem(index, prepared, Job(
                        prepared.compiled.spirv, prepared.bindings, timeout=limit), why))
                else:
                    in_process.append((index, prepared))
            except _Skip as skip:
                results[index] = skip.result
        self.isolated_runs += len(isolated)
        self._running = self._start_isolated(isolated)
        outcomes = self._dispatch_many([prepared for _, prepared in in_process])
        for (index, prepared), outcome in zip(in_process, outcomes, strict=True):
            results[index] = outcome if isinstance(outcome, Result) else \
                self._result(prepared, outcome)
        wait(self._running)
        finished, self._running = self._running, []
        for unit, unit_answers in (done for future in finished for done in future.result()):
            for item, answer in zip(unit, unit_answers, strict=True):
                self._remember(item.job, died=isinstance(answer, ChildFailed)
                               and answer.kind in DEATHS)
                if isinstance(answer, ChildFailed):
                    results[item.index] = Result.failed(answer.kind,
                                                        f"{answer.reason} ({item.why})")
                else:
                    results[item.index] = self._result(item.prepared, answer)
        return [r if r is not None else Result.error("the vector was not run") for r in results]

    def _remember(self, job: Job, *, died: bool) -> None:
        """Note how an isolated dispatch ended: one that died first in a fresh child
        (`IsolatedRunner.run_batch` gives no other death as a verdict) runs in a child of its
        own the next time (`isolation_units`)."""
        key = dispatch_key(job)
        if not died:
            self._died.pop(key, None)
            return
        self._died[key] = None
        self._died.move_to_end(key)
        while len(self._died) > MAX_REMEMBERED_DEATHS:
            self._died.popitem(last=False)

    @property
    def quarantined(self) -> int:
        """Isolated dispatches run again first in a fresh child after their batch died."""
        return sum(runner.quarantined for runner in self._isolated)

    @property
    def isolation_children(self) -> tuple[int, int]:
        """Children the isolation processes forked, and how many of them crashed or timed
        out (each death costs a fresh process, device and compile: what isolation costs)."""
        return (sum(runner.children for runner in self._isolated),
                sum(runner.deaths for runner in self._isolated))

    def isolation_cpu_seconds(self) -> float:
        """CPU time of the running isolation processes and the children they reaped."""
        return sum(runner.cpu_seconds() for runner in self._isolated)

    def close(self) -> None:
        """End the isolation processes and the device. A batch still running (the run was
        interrupted) is cancelled: its isolation processes are killed at once."""
        if any(not future.done() for future in self._running):
            for runner in self._isolated:
                runner.cancel()
        self._running = []
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        for runner in self._isolated:
            runner.close()
        self._runner.close()

    def _start_isolated(self, items: Sequence[IsolatedItem]) -> list[Future[list[Done]]]:
        """Run ``items`` in the isolation processes, each driven by a thread of this process
        (the threads only wait on pipes) that takes the next unit of work whenever its
        process is free, so the processes finish together however long each unit takes."""
        if not items:
            return []
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=len(self._isolated),
                                            thread_name_prefix="sm5-isolation")
        units = isolation_units(items, self._died, len(self._isolated))
        queue: SimpleQueue[list[IsolatedItem]] = SimpleQueue()
        for unit in units:
            queue.put(unit)
        return [self._pool.submit(_drain, runner, queue)
                for runner in self._isolated[:len(units)]]

    # ----------------------------------------------------------------- steps

    def _prepare(self, vector: Vector) -> Prepared:
        try:
            program = parse_vector_program(tuple(vector.program))
            state = request_state(vector)
            harness = build_harness(program, state, runtime=vector.runtime)
        except NotExpressible as exc:
            reason = f"not expressible as a compute harness: {exc}"
            raise _Skip(Result.unsupported(reason)) from None
        except Sm5Error as exc:
            raise _Skip(Result.error(f"cannot build the harness: {exc}")) from None
        compiled = self._compile(harness.program)
        guards = {name: value[GUARD_KEY] for name, value in vector.state.items()
                  if isinstance(value, Mapping) and GUARD_KEY in value}
        bindings: list[BufferBinding] = []
        registers: list[str] = []
        uavs = [(b.register, b.data, texel_format(b.kind, b.format)) for b in harness.bindings
                if b.kind != CONSTANT_KIND]
        # The state buffer needs one word even when the layout is empty (a view is never empty).
        state_words = harness.state_words or (0,)
        uavs.append((harness.state_register, state_words, UNTYPED_VIEW_FORMAT))
        for register, words, fmt in uavs:
            if register not in compiled.descriptors:
                continue  # vkd3d dropped an unused declaration: nothing can touch it
            if not words and not self._runner.null_descriptors:
                raise _Skip(Result.unsupported(f"{register} holds no words: a zero-sized UAV "
                                               "needs null descriptors (VK_EXT_robustness2)"))
            number, kind = compiled.descriptors[register]
            bindings.append(BufferBinding(number, tuple(words), kind, texel_format=fmt,
                                          null=not words,
                                          guard_words=max(CANARY_WORDS,
                                                          _guard_reach(guards.get(register)))))
            registers.append(register)
        # Hidden counters follow the views, each a one-word buffer vkd3d reads and writes.
        counters: list[str] = []
        for b in harness.bindings:
            if b.counter is None or b.register not in compiled.counters:
                continue
            number, kind = compiled.counters[b.register]
            bindings.append(BufferBinding(number, (b.counter,), kind,
                                          texel_format=UNTYPED_VIEW_FORMAT))
            counters.append(b.register)
        # Constant buffers come last: uniform buffers vkd3d only reads (never read back).
        constants: list[str] = []
        for b in harness.bindings:
            if b.kind != CONSTANT_KIND or b.register not in compiled.descriptors:
                continue  # not a cb#, or a declaration vkd3d dropped: nothing reads it
            number, kind = compiled.descriptors[b.register]
            if kind != CONSTANT_DESCRIPTOR:
                raise _Skip(Result.error(f"{b.register} became a {kind} descriptor; expected a "
                                         f"{CONSTANT_DESCRIPTOR} buffer"))
            bindings.append(BufferBinding(number, constant_words(b.data), kind))
            constants.append(b.register)
        isolated = needs_isolation(program, state, vector.target, vector.runtime)
        return Prepared(harness, compiled, tuple(bindings), tuple(registers), isolated, guards,
                        tuple(counters), tuple(constants))

    def _compile(self, program: Program) -> Compiled:
        cached = self._compiled.get(program)
        if cached is None:
            cached = self._translate(program)
            self._compiled[program] = cached
            if len(self._compiled) > MAX_COMPILED:
                self._compiled.popitem(last=False)
        else:
            self._compiled.move_to_end(program)
        if isinstance(cached, Result):
            raise _Skip(cached)
        return cached

    def _translate(self, program: Program) -> Compiled | Result:
        try:
            dxbc = program_to_dxbc(program)
        except Sm5Error as exc:
            return Result.error(f"cannot encode the harness as DXBC: {exc}")
        try:
            spirv = self.translator.dxbc_to_spirv(dxbc, self.uav)
        except Vkd3dError as exc:
            message = " ".join(str(exc).split())
            if UNKNOWN_OPCODE in message or UNHANDLED_INSTRUCTION in message:
                return Result.unsupported(f"{self.translator.name} {self.translator.version()}: "
                                          f"{message}")
            return Result.error(f"vkd3d-shader refused the harness: {message}")
        except Vkd3dUnavailable as exc:
            return Result.error(f"translator unavailable: {exc}")
        try:
            numbers = register_bindings(spirv)
            counter_numbers = counter_bindings(spirv)
            kinds = {d.binding: d.kind for d in spirv_descriptors(spirv)}
        except SpirvError as exc:
            return Result.error(f"vkd3d produced unreadable SPIR-V: {exc}")
        found: list[dict[str, tuple[int, BindingKind]]] = [{}, {}]
        for table, source in zip(found, (numbers, counter_numbers), strict=True):
            for register, number in source.items():
                kind = kinds.get(number)
                if kind not in get_args(BindingKind):
                    return Result.error(f"{register} became a {kind} descriptor; expected a "
                                        "buffer")
                table[register] = (number, kind)  # type: ignore[assignment]
        return Compiled(spirv, found[0], found[1])

    def _dispatch_many(self, prepared: Sequence[Prepared]) -> list[list[RunOutput] | Result]:
        """Run vectors in process, several dispatches to a submission (isolated vectors go
        through `run_batch`). When a submission fails, its dispatches (and those after it)
        run again one by one on a fresh device, so a failure is the verdict of the vector
        that fails alone, as in `run`."""
        answers = self._runner.run_batch([Dispatch(p.compiled.spirv, p.bindings)
                                          for p in prepared])
        if not self._runner.broken:
            return [_answer(answer) for answer in answers]
        self._renew_runner()
        results: list[list[RunOutput] | Result] = []
        for p, answer in zip(prepared, answers, strict=True):
            if isinstance(answer, VulkanRunError):
                [answer] = self._runner.run_batch([Dispatch(p.compiled.spirv, p.bindings)])
                if self._runner.broken:
                    self._renew_runner()
            results.append(_answer(answer))
        return results

    def _isolated_limit(self, spirv: bytes, bindings: Sequence[BufferBinding]
                        ) -> tuple[float, str]:
        """The time limit of an isolated dispatch, and how it was made: the execution limit
        plus a margin over the compile time, measured once per shader by compiling it in this
        process (where a compile cannot crash: only running an out-of-bounds ``g#`` access
        can). So a large shader on a busy machine gets the time its compile takes there, and
        the limit measures the work, not the clock."""
        key = hashlib.sha256(spirv).digest()
        seconds = self._compile_seconds.get(key)
        if seconds is None:
            try:
                seconds = self._runner.compile(spirv, list(bindings))
            except (VulkanRunError, SpirvError, ValueError):
                seconds = 0.0  # the child reports the failure itself
            self._compile_seconds[key] = seconds
        limit = self.execution_limit + COMPILE_MARGIN * seconds
        return limit, (f"limit {limit:.0f} s: {self.execution_limit:g} s to execute + "
                       f"{COMPILE_MARGIN:g} x {seconds:.1f} s compile measured in process")

    def _renew_runner(self) -> None:
        """A failed dispatch leaves the device unusable: start the next vector afresh."""
        robust = self._runner.robust_buffer_access
        self._runner.close()
        self._runner = VulkanRunner(robust_buffer_access=robust, max_pipelines=MAX_PIPELINES)

    def _result(self, prepared: Prepared, outputs: Sequence[RunOutput]) -> Result:
        harness = prepared.harness
        contents: dict[str, tuple[int, ...]] = {}
        returned_guards: dict[str, dict[str, list[int]]] = {}
        counters: dict[str, int] = {}
        first_counter = len(prepared.registers)
        first_constant = first_counter + len(prepared.counters)
        views = outputs[:first_counter]
        counter_outputs = outputs[first_counter:first_constant]
        constant_outputs = outputs[first_constant:]
        for register, out in zip(prepared.registers, views, strict=True):
            sent = prepared.guards.get(register)
            beyond = [d for d in out.guard_diff if sent is None or not _in_guard(sent, d[0],
                                                                                len(out.words))]
            if beyond:
                return Result.error(_canary_reason(register, beyond))
            if sent is not None:
                returned_guards[register] = _read_back_guard(sent, out.guard_diff,
                                                             len(out.words))
            contents[register] = out.words
        for register, out in zip(prepared.counters, counter_outputs, strict=True):
            if not out.guard_intact or len(out.words) != 1:
                return Result.error(f"{register}'s counter buffer was written outside its word")
            counters[register] = out.words[0]
        for register, out, sent_words in zip(prepared.constants, constant_outputs,
                                             (b.words for b in prepared.bindings[first_constant:]),
                                             strict=True):
            if not out.guard_intact or out.words != sent_words:
                return Result.error(f"{register} is a constant buffer (read-only), yet its "
                                    "uniform buffer or the canaries around it changed")
        state_words = contents.pop(harness.state_register, ())[: harness.layout.words]
        for b in harness.bindings:
            contents.setdefault(b.register, b.data)
        try:
            final = decode_state(harness, state_words, contents, counters)
        except Sm5Error as exc:
            return Result.error(f"cannot decode the final state: {exc}")
        reply = state_to_json(final)
        for b in harness.bindings:
            if b.kind == CONSTANT_KIND:  # read-only: no part of the final state (nor the spec's)
                reply.pop(b.register, None)
        for register, guard in returned_guards.items():
            reply[register] = {**reply[register], GUARD_KEY: guard}
        return Result.of_state(reply)


Answer = list[RunOutput] | ChildFailed


def _answer(answer: list[RunOutput] | Exception) -> list[RunOutput] | Result:
    """An in-process dispatch's outputs, or the result its failure gives the vector."""
    if isinstance(answer, VulkanRunError):
        return Result.error(f"lavapipe failed: {answer}")
    if isinstance(answer, Exception):  # SpirvError, ValueError
        return Result.error(f"lavapipe refused the shader: {answer}")
    return answer


#: How a child ends that `isolation_units` remembers (a crash, or a time-out that killed it).
DEATHS = frozenset({"crash", "timeout"})


#: What makes two isolated dispatches the same: the shader and the buffers.
DispatchKey = tuple[bytes, tuple[BufferBinding, ...]]


def dispatch_key(job: Job) -> DispatchKey:
    return job.spirv, job.bindings


def isolation_units(items: Sequence[IsolatedItem], died: Mapping[DispatchKey, object],
                    processes: int) -> list[list[IsolatedItem]]:
    """The units of work the isolation processes take ``items`` in. A dispatch (shader and
    buffers) in ``died`` killed a fresh child on its last run: it is a unit of its own, so it
    runs first in a fresh child again, where its death is its verdict, and costs one child,
    not a batch-mate's child and a second to tell it from their damage. The others go in
    `work_units` small enough that each process takes several (so the last ones end
    together), with at most :data:`ISOLATED_BATCH` dispatches; the units of one dispatch
    each come last, so they even out the ends. Only where each item runs changes, never
    whether: every item runs, and its verdict comes from this run. Deterministic."""
    known: list[IsolatedItem] = []
    rest: list[IsolatedItem] = []
    for item in items:
        (known if dispatch_key(item.job) in died else rest).append(item)
    units_wanted = max(processes, UNITS_PER_PROCESS * processes - len(known))
    size = max(1, min(ISOLATED_BATCH, -(-len(rest) // units_wanted)))
    return work_units(rest, size) + [[item] for item in known]


#: A unit of isolated work and its answers, in order.
Done = tuple[list[IsolatedItem], list[Answer]]


def work_units(items: Sequence[IsolatedItem], size: int) -> list[list[IsolatedItem]]:
    """``items`` in units of work for the isolation processes: a shader's items together and
    in order (a child compiles each of its shaders once), the shaders in the order they first
    come, packed into units of at most ``size`` items (a shader with more spans several);
    the largest units first, so that the isolation processes, each taking the next unit when
    it is free, end with the smallest. Deterministic."""
    groups: dict[bytes, list[IsolatedItem]] = {}
    for item in items:
        groups.setdefault(item.job.spirv, []).append(item)
    units: list[list[IsolatedItem]] = []
    current: list[IsolatedItem] = []
    for group in groups.values():
        for start in range(0, len(group), size):
            part = group[start:start + size]
            if current and len(current) + len(part) > size:
                units.append(current)
                current = []
            current.extend(part)
    if current:
        units.append(current)
    return sorted(units, key=len, reverse=True)


def _drain(runner: IsolatedRunner, queue: SimpleQueue[list[IsolatedItem]]) -> list[Done]:
    """Units from ``queue`` run in ``runner``'s isolation process, each a batch to a child,
    until the queue is empty."""
    done: list[Done] = []
    while True:
        try:
            unit = queue.get_nowait()
        except Empty:
            return done
        done.append((unit, runner.run_batch([item.job for item in unit])))


def execution_limit_from_environment() -> float:
    """``SM5_VKD3D_TIMEOUT`` (seconds, finite and above 0), else :data:`EXECUTION_LIMIT_S`."""
    text = os.environ.get("SM5_VKD3D_TIMEOUT", "")
    if not text:
        return EXECUTION_LIMIT_S
    return positive_seconds(text, "SM5_VKD3D_TIMEOUT")


class TargetUnavailable(Sm5Error):
    """A component of the vkd3d + lavapipe target is missing on this machine."""


def create() -> Vkd3dLavapipe:
    """The adapter on this machine's translator (libvkd3d-shader 1.14, else vkd3d-compiler).

    Raises TargetUnavailable naming the missing component (see conformance/vkd3d/setup.sh).
    """
    translator = load_translator()
    if translator is None:
        raise TargetUnavailable(unavailable_reason(), where=NAME)
    try:
        return Vkd3dLavapipe(translator)
    except VulkanUnavailable as exc:
        raise TargetUnavailable(str(exc), where=NAME) from None
