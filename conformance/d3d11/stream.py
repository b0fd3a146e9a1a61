"""The D3D11 runner's input stream and its replies (``runners/d3d11/runner.c``).

A vector becomes one *record*: the DXBC of its cs_5_0 harness (the program ``sm5 dxbc``
exports) and the views to create (the UAVs ``u#`` and the SRV buffers ``t#`` the vector binds,
and the state buffer), each as a window inside a larger buffer whose other words are canaries,
exactly as a D3D view with FirstElement/NumElements is a window of its resource, and the
constant buffers ``cb#`` it binds, each a whole buffer of its own. The runner creates the
buffers and views, dispatches one thread group, reads every UAV and SRV buffer back and prints
one JSON line. Little-endian u32 integers throughout::

    stream  b"SM5D3D11" version(=3) record...
    record  b"REC1" len id  len digest  len dxbc  view_count view...
    view    file slot kind format stride first_element num_elements has_counter counter
            word_count words...

``file``: 0 an unordered access view (``u#``, bound with CSSetUnorderedAccessViews), 1 a shader
resource view (``t#``, bound with CSSetShaderResources), 2 a constant buffer (``cb#``, bound with
CSSetConstantBuffers; ``slot`` below 14, D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT).
``kind``: 0 a NULL view (a view without words: every access is out of bounds; for a ``cb#``,
no buffer in its slot), 1 raw, 2 structured, 3 typed (``format`` a DXGI_FORMAT number), 4
constant, the kind of every ``cb#`` with words and of nothing else. A constant buffer has no view
and no canaries: ``words`` are its contents, 4 per 16-byte element (at most 4,096 elements,
D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT), ``num_elements`` counts those elements, and the other
fields are 0. The runner creates it with D3D11_BIND_CONSTANT_BUFFER, its ByteWidth the words'
bytes rounded up to a multiple of 16 (the rest 0s), binds it whole (an element past its end reads
0 in all four components, FS 7.5), and never reads it back: a reply's ``views`` and
``counters`` hold one entry per record view that is not a constant buffer, in record order.
``has_counter`` 1 marks a structured UAV whose view has a hidden counter (created with
D3D11_BUFFER_UAV_FLAG_COUNTER); ``counter`` is then its initial count (CSSetUnorderedAccessViews'
``pUAVInitialCounts``), and the reply's ``counters`` holds its final count (read with
CopyStructureCount); both are 0 otherwise. ``digest`` is the sha256 of the record's program and
views: the runner echoes it, so a reply (or a results file made elsewhere) is tied to exactly the
program and state it answers.

**The marker.** The harness's every store of the state back (at its end, and before each early
return of the main program) ends with one more store: :data:`MARKER` into the word after the
state in the state buffer (initially 0). A reply whose marker is missing did not
run the program to its end, whatever the driver says: Wine's Vulkan renderer drops dispatches
silently, and its pipeline statistics sometimes count 0 invocations for a dispatch that ran, so
the runner's ``invocations`` is reported but the marker decides.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sm5.conformance.guards import GUARD_KEY, request_state
from sm5.conformance.interface import Result
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import (
    Harness,
    ViewBinding,
    build_harness,
    decode_state,
)
from sm5.oracle.errors import NotExpressible, Sm5Error
from sm5.oracle.machine.program import register_file
from sm5.oracle.machine.state import CONSTANT_FILE, CONSTANT_KIND, state_to_json
from sm5.vectors.format import Vector

STREAM_MAGIC = b"SM5D3D11"
STREAM_VERSION = 3
RECORD_TAG = b"REC1"
RESULTS_FORMAT = "sm5-d3d11-results/1"
#: What the runner built from this version's runner.c says it is (its header's ``runner``).
RUNNER_ID = "sm5-d3d11-runner 3"
#: Canary words before and after each window: the least common multiple of 16 and the element's
#: words, so that every window starts on a 64-byte boundary (Wine's GL renderer silently drops
#: the writes of a view whose byte offset is not aligned for its GL buffer range).
GUARD_WORDS = 16
CANARY_BASE = 0xC0DE0000
WORD_BYTES = 4
KIND_CODES: Mapping[str, int] = {"null": 0, "raw": 1, "structured": 2, "typed": 3,
                                 CONSTANT_KIND: 4}
#: Register file codes of a view: which binding call and which view type the runner uses.
FILE_CODES: Mapping[str, int] = {"u": 0, "t": 1, CONSTANT_FILE: 2}
#: Constant buffer slots of the D3D11 API (D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT:
#: cb0..cb13; the shader model's 15th, cb14, has no API slot).
CONSTANT_BUFFER_SLOTS = 14
#: The most 16-byte elements a D3D11 constant buffer holds
#: (D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT).
CONSTANT_BUFFER_ELEMENTS = 4096
#: The words of one constant buffer element.
CONSTANT_ELEMENT_WORDS = 4
#: DXGI_FORMAT numbers of the typed UAV formats a vector may name.
DXGI_FORMATS: Mapping[str, int] = {"R32_FLOAT": 41, "R32_UINT": 42, "R32_SINT": 43}
_SHOWN_CANARIES = 4
#: Written by the harness's last instruction into the word after the state.
MARKER = 0x5E5D3D11
#: The initial count that tells D3D11 to keep a UAV's counter as it is (pUAVInitialCounts).
KEEP_COUNT = 0xFFFFFFFF


class StreamError(Sm5Error):
    """A vector cannot become a record, or a runner reply is malformed."""


@dataclass(frozen=True)
class View:
    """One view (a UAV or an SRV buffer) as the runner creates it: ``words`` is the whole
    buffer, canaries included. A constant buffer (kind ``constant``) is a buffer without a view
    or canaries: ``words`` are its contents, and the runner never reads it back."""

    register: str
    slot: int
    kind: str
    dxgi_format: int
    stride: int
    first_element: int
    num_elements: int
    words: tuple[int, ...]
    window: tuple[int, int]  # words [start, end) of the buffer that the UAV covers
    guard: tuple[int, int] = (0, 0)  # the request's guard words just before and after it
    counter: int | None = None  # the hidden counter's initial count, for a view with one

    @property
    def read_back(self) -> bool:
        """Does the reply hold this view's words (every view but a constant buffer)?"""
        return register_file(self.register) != CONSTANT_FILE

    def encode(self) -> bytes:
        head = struct.pack("<10I", FILE_CODES[register_file(self.register)], self.slot,
                           KIND_CODES[self.kind], self.dxgi_format, self.stride,
                           self.first_element, self.num_elements,
                           int(self.counter is not None), self.counter or 0, len(self.words))
        return head + struct.pack(f"<{len(self.words)}I", *self.words)


@dataclass(frozen=True)
class Record:
    """One vector ready for the runner, and what is needed to read its reply."""

    vector_id: str
    harness: Harness
    dxbc: bytes
    views: tuple[View, ...]
    digest: str

    def encode(self) -> bytes:
        parts = [RECORD_TAG, _text(self.vector_id), _text(self.digest),
                 struct.pack("<I", len(self.dxbc)), self.dxbc,
                 struct.pack("<I", len(self.views))]
        parts.extend(v.encode() for v in self.views)
        return b"".join(parts)


def stream_header() -> bytes:
    return STREAM_MAGIC + struct.pack("<I", STREAM_VERSION)


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack("<I", len(data)) + data


def canaries(count: int, start: int) -> tuple[int, ...]:
    return tuple(CANARY_BASE + start + i for i in range(count))


def _view(register: str, kind: str, fmt: str, stride: int, count: int,
          data: Sequence[int], guard: Mapping[str, Sequence[int]] | None = None,
          counter: int | None = None) -> View:
    """The buffer of one view: canaries, then the request's guard words (when it has some)
    right before and after the window, so the buffer holds the allocation the request
    describes. A view without words is a NULL view, unless it has a hidden counter (a NULL
    view has none): it is then a view of no elements inside a buffer of canaries."""
    if register_file(register) == CONSTANT_FILE:
        return _constant_view(register, kind, data)
    slot = int(register[len(register_file(register)):])
    if counter is not None and (register[:1] != "u" or kind != "structured"):
        raise NotExpressible(f"{register}: only a structured UAV has a hidden counter in D3D11 "
                             f"(D3D11_BUFFER_UAV_FLAG_COUNTER), not a {kind} one")
    if counter == KEEP_COUNT:
        raise NotExpressible(f"{register}: D3D11 cannot start a hidden counter at "
                             f"{KEEP_COUNT:#x}: that initial count (-1) in "
                             "CSSetUnorderedAccessViews' pUAVInitialCounts means keep the "
                             "current count")
    if not data and counter is None:
        return View(register, slot, "null", 0, 0, 0, 0, (), (0, 0))
    if kind == "typed":
        if fmt not in DXGI_FORMATS:
            raise NotExpressible(f"typed view format {fmt} has no DXGI number in the runner")
        dxgi = DXGI_FORMATS[fmt]
    else:
        dxgi = 0
    if kind == "structured" and (stride <= 0 or stride % WORD_BYTES):
        raise NotExpressible(f"{register}: a structured buffer's stride must be a positive "
                             f"multiple of 4 bytes in D3D11 (StructureByteStride), not {stride}")
    element = stride // WORD_BYTES if kind == "structured" else 1
    unit = math.lcm(GUARD_WORDS, element)
    before = tuple(guard["before"]) if guard else ()
    after = tuple(guard["after"]) if guard else ()
    pad = unit * -(-max(len(before), len(after), 1) // unit)
    elements = count if kind == "structured" else len(data)
    words = (canaries(pad - len(before), 0) + before + tuple(data) + after
             + canaries(pad - len(after), pad + len(data) + len(after)))
    return View(register, slot, kind, dxgi, stride if kind == "structured" else 0,
                pad // element, elements if data else 0, words, (pad, pad + len(data)),
                (len(before), len(after)), counter)


def _constant_view(register: str, kind: str, data: Sequence[int]) -> View:
    """A constant buffer: its words as they are, bound whole at its slot (no window, no
    canaries: CSSetConstantBuffers binds a whole buffer, and reading past its end gives 0)."""
    slot = int(register[len(CONSTANT_FILE):])
    if kind != CONSTANT_KIND:
        raise NotExpressible(f"{register} is a {kind} view: a cb# is a constant buffer")
    if slot >= CONSTANT_BUFFER_SLOTS:
        raise NotExpressible(f"{register}: the D3D11 API binds constant buffers cb0.."
                             f"cb{CONSTANT_BUFFER_SLOTS - 1} only "
                             "(D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT)")
    elements = -(-len(data) // CONSTANT_ELEMENT_WORDS)
    if elements > CONSTANT_BUFFER_ELEMENTS:
        raise NotExpressible(f"{register}: {elements} elements; a D3D11 constant buffer holds "
                             f"at most {CONSTANT_BUFFER_ELEMENTS} "
                             "(D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT)")
    if not data:
        return View(register, slot, "null", 0, 0, 0, 0, (), (0, 0))
    return View(register, slot, CONSTANT_KIND, 0, 0, 0, elements, tuple(data), (0, len(data)))


def _binding_view(b: ViewBinding, guard: Mapping[str, Sequence[int]] | None) -> View:
    return _view(b.register, b.kind, b.format, b.stride, b.count, b.data, guard, b.counter)


def record_of(vector: Vector) -> Record:
    """The record of an executable vector. Raises NotExpressible (the harness cannot express
    it; the vector is unsupported) or another Sm5Error (a malformed vector)."""
    program = parse_vector_program(tuple(vector.program))
    state = request_state(vector)
    guards = {name: value[GUARD_KEY] for name, value in vector.state.items()
              if isinstance(value, Mapping) and GUARD_KEY in value}
    harness = build_harness(program, state, runtime=vector.runtime, marker=MARKER)
    views = [_binding_view(b, guards.get(b.register)) for b in harness.bindings]
    views.append(_view(harness.state_register, "raw", "", 0, 0, (*harness.state_words, 0)))
    dxbc = program_to_dxbc(harness.program)
    digest = hashlib.sha256(dxbc + b"".join(v.encode() for v in views)).hexdigest()
    return Record(vector.id, harness, dxbc, tuple(views), digest)


def record_or_result(vector: Vector) -> Record | Result:
    """The record of a vector, or the result that ends it without running: ``unsupported``
    when a harness cannot express it, ``error`` when it is malformed."""
    try:
        return record_of(vector)
    except NotExpressible as exc:
        return Result.unsupported(f"not expressible as a compute harness: {exc.message}")
    except Sm5Error as exc:
        return Result.error(f"cannot build the harness: {exc}")


# ----------------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True)
class Reply:
    """One line the runner printed for a record."""

    vector_id: str
    digest: str
    status: str  # state | error | unsupported | crash
    reason: str = ""
    invocations: int | None = None
    views: tuple[tuple[int, ...], ...] = ()
    #: Per view, the hidden counter's final count; ``None`` for a view without a counter.
    counters: tuple[int | None, ...] = ()


def parse_reply(line: str, where: str) -> Reply:
    """A record line of the runner's output. Raises StreamError naming ``where``."""
    try:
        doc = json.loads(line)
    except json.JSONDecodeError as exc:
        raise StreamError(f"not JSON: {exc.msg} at column {exc.colno}: {line[:120]!r}",
                          where=where) from None
    if not isinstance(doc, dict):
        raise StreamError(f"expected a JSON object: {line[:120]!r}", where=where)
    status = doc.get("status")
    if status == "malformed" or status == "no-device":
        raise StreamError(f"the runner stopped: {doc.get('reason', '')}", where=where)
    vector_id, digest = doc.get("id"), doc.get("digest")
    if not isinstance(vector_id, str) or not isinstance(digest, str):
        raise StreamError("expected string fields id and digest", where=where)
    if status in ("error", "unsupported", "crash"):
        reason = doc.get("reason")
        if not isinstance(reason, str):
            raise StreamError("field reason: expected a string", where=where)
        return Reply(vector_id, digest, status, reason)
    if status != "state":
        raise StreamError(f"field status: {status!r} is not one of state, error, "
                          "unsupported, crash", where=where)
    invocations = doc.get("invocations")
    views = doc.get("views")
    if invocations is not None and (not isinstance(invocations, int)
                                    or isinstance(invocations, bool)):
        raise StreamError("field invocations: expected an integer or null", where=where)
    if not isinstance(views, list) or not all(
            isinstance(v, list) and all(_is_u32(w) for w in v) for v in views):
        raise StreamError("field views: expected lists of u32 words", where=where)
    counters = doc.get("counters", [])
    if not isinstance(counters, list) or not all(c is None or _is_u32(c) for c in counters):
        raise StreamError("field counters: expected a list of u32 counts or null, one per view",
                          where=where)
    return Reply(vector_id, digest, "state", "", invocations, tuple(tuple(v) for v in views),
                 tuple(counters))


def _is_u32(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFFFFFF


def parse_header(line: str, where: str) -> dict[str, Any]:
    """The runner's first line: the device it created."""
    try:
        doc = json.loads(line)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("status") == "no-device":
        raise StreamError(f"the runner has no D3D11 device: {doc.get('reason', '')}",
                          where=where)
    if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
        raise StreamError(f"expected the runner's header line with \"format\": "
                          f"\"{RESULTS_FORMAT}\", got {line[:120]!r}", where=where)
    return doc


def _canary_reason(view: View, found: Sequence[int]) -> str | None:
    """Why the runner's own canaries (the words beyond the request's guard) changed, if so;
    a changed guard word is returned in the state instead, for the judge to name."""
    start, end = view.window[0] - view.guard[0], view.window[1] + view.guard[1]
    diff = [(i - view.window[0], view.words[i], w)  # word offsets from the window's first word
            for i, w in enumerate(found) if not start <= i < end and w != view.words[i]]
    if not diff:
        return None
    shown = ", ".join(f"word {off:+d} {old:#010x} -> {new:#010x}"
                      for off, old, new in diff[:_SHOWN_CANARIES])
    more = f" and {len(diff) - _SHOWN_CANARIES} more" if len(diff) > _SHOWN_CANARIES else ""
    return f"wrote outside {view.register}'s window (D3D never writes outside a UAV): " \
           f"{shown}{more}"


def result_of(record: Record, reply: Reply) -> Result:
    """Judge-ready Result of a reply to ``record`` (the final state, or why there is none)."""
    if reply.vector_id != record.vector_id or reply.digest != record.digest:
        return Result.error(f"the reply answers {reply.vector_id} with digest "
                            f"{reply.digest[:16]}, not this program and state "
                            f"({record.vector_id}, {record.digest[:16]})")
    if reply.status == "unsupported":
        return Result.unsupported(reply.reason)
    if reply.status == "crash":
        return Result.crash(reply.reason)
    if reply.status == "error":
        return Result.error(reply.reason)
    # The reply holds the views read back: every one but the constant buffers.
    views = [v for v in record.views if v.read_back]
    if len(reply.views) != len(views):
        return Result.error(f"the reply holds {len(reply.views)} views, the record "
                            f"{len(views)} to read back")
    with_counter = [v.register for v in views if v.counter is not None]
    if with_counter and len(reply.counters) != len(views):
        return Result.error(f"the reply holds {len(reply.counters)} counters for "
                            f"{len(views)} views; {with_counter[0]} has a hidden counter "
                            "whose final count is needed")
    counters: dict[str, int] = {}
    for view, count in zip(views, reply.counters, strict=False):
        if view.counter is None:
            continue
        if count is None:
            return Result.error(f"{view.register}: the reply holds no final count for the "
                                "view's hidden counter")
        counters[view.register] = count
    contents: dict[str, tuple[int, ...]] = {}
    returned: dict[str, dict[str, list[int]]] = {}
    for view, found in zip(views, reply.views, strict=True):
        if len(found) != len(view.words):
            return Result.error(f"{view.register}: {len(found)} words read back, "
                                f"{len(view.words)} created")
        canary = _canary_reason(view, found)
        if canary is not None:
            return Result.error(canary)
        contents[view.register] = found[view.window[0]:view.window[1]]
        if view.guard != (0, 0):
            start, end = view.window
            returned[view.register] = {"before": list(found[start - view.guard[0]:start]),
                                       "after": list(found[end:end + view.guard[1]])}
    harness = record.harness
    if len(views) != len(record.views):  # the final state holds no constant buffer
        harness = replace(harness, bindings=tuple(b for b in harness.bindings
                                                  if register_file(b.register) != CONSTANT_FILE))
    state_words = contents.pop(harness.state_register, ())
    if state_words[harness.layout.words:] != (MARKER,):
        counted = "" if reply.invocations is None else \
            f"; the pipeline statistics count {reply.invocations} invocation(s)"
        return Result.error(f"the dispatch did not run: the harness's marker word was not "
                            f"written{counted}")
    state_words = state_words[: harness.layout.words]
    try:
        final = decode_state(harness, state_words, contents, counters)
    except Sm5Error as exc:
        return Result.error(f"cannot decode the final state: {exc}")
    state = state_to_json(final)
    for name, guard in returned.items():
        state[name] = {**state[name], GUARD_KEY: guard}
    return Result.of_state(state)


def write_stream(records: Iterable[Record]) -> bytes:
    return stream_header() + b"".join(r.encode() for r in records)
