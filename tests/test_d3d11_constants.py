"""Constant buffers (``cb#``) on the D3D11 runner: how a record carries one (file 2, kind 4, its
words as they are, never read back) and what Wine's d3d11 does with one on each renderer.

The stream tests need nothing but Python. The runs need wine, Xvfb and the runner built with
mingw-w64 (``scripts/setup.sh --d3d11``; ``--dxvk`` for DXVK's DLLs) and skip naming the missing
piece, as ``tests/test_d3d11_conformance.py`` does.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from constant_buffer_cases import BY_HAND, FAMILIES, GOLDEN, WORDS, dynamic, hand_vector
from d3d11_runner import create_runner

from sm5.conformance.compare import judge
from sm5.conformance.d3d11.adapter import D3D11Runner
from sm5.conformance.d3d11.stream import (
    FILE_CODES,
    KIND_CODES,
    MARKER,
    STREAM_MAGIC,
    STREAM_VERSION,
    Record,
    Reply,
    View,
    record_of,
    record_or_result,
    result_of,
    write_stream,
)
from sm5.conformance.expectations import load_expectations
from sm5.conformance.guards import request_vector
from sm5.conformance.run import iter_selected
from sm5.vectors.format import Vector

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- the stream


def _read_stream(data: bytes) -> list[dict[str, Any]]:
    """The records of a stream, read as the module docstring of stream.py (and runner.c)
    documents the format, independently of the code that wrote it."""
    assert data[:8] == STREAM_MAGIC
    at = 8

    def u32() -> int:
        nonlocal at
        (value,) = struct.unpack_from("<I", data, at)
        at += 4
        return value

    def blob() -> bytes:
        nonlocal at
        size = u32()
        at += size
        return data[at - size:at]

    assert u32() == STREAM_VERSION
    records = []
    while at < len(data):
        assert data[at:at + 4] == b"REC1"
        at += 4
        record: dict[str, Any] = {"id": blob().decode(), "digest": blob().decode(),
                                  "dxbc": blob(), "views": []}
        for _ in range(u32()):
            names = ("file", "slot", "kind", "format", "stride", "first_element",
                     "num_elements", "has_counter", "counter")
            view: dict[str, Any] = {name: u32() for name in names}
            view["words"] = [u32() for _ in range(u32())]
            record["views"].append(view)
        records.append(record)
    return records


def test_a_constant_buffer_is_file_2_kind_4_with_its_words_as_they_are() -> None:
    record = record_of(dynamic(1))
    assert [v.register for v in record.views] == ["u0", "cb0", "u1"]
    cb0 = record.views[1]
    assert (FILE_CODES["cb"], KIND_CODES["constant"]) == (2, 4)
    # file 2 (a constant buffer), slot 0, kind 4, no format, stride, first element; 2 elements
    # of 16 bytes, no counter; the 8 words alone: no canaries around a constant buffer
    assert struct.unpack_from("<10I", cb0.encode()) == (2, 0, 4, 0, 0, 0, 2, 0, 0, 8)
    assert cb0.encode()[40:] == struct.pack("<8I", *WORDS)
    assert not cb0.read_back and all(v.read_back for v in record.views if v is not cb0)


def test_a_constant_view_round_trips_through_the_stream() -> None:
    records = [record_of(dynamic(1)), record_of(hand_vector(
        ["dcl_constantBuffer cb3[1], immediateIndexed", "dcl_uav_raw u0",
         "store_raw u0.x, l(0), cb3[0].y"],
        {"cb3": {"kind": "constant", "data": [10, 20, 30, 40]},
         "u0": {"kind": "raw", "data": [0]}}, "hand/cb3"))]
    read = _read_stream(write_stream(records))
    assert [r["id"] for r in read] == ["hand/cb", "hand/cb3"]
    for record, got in zip(records, read, strict=True):
        assert got["digest"] == record.digest and got["dxbc"] == record.dxbc
        assert len(got["views"]) == len(record.views)
        for view, fields in zip(record.views, got["views"], strict=True):
            again = View(view.register, fields["slot"],
                         {c: k for k, c in KIND_CODES.items()}[fields["kind"]],
                         fields["format"], fields["stride"], fields["first_element"],
                         fields["num_elements"], tuple(fields["words"]), view.window,
                         view.guard, fields["counter"] if fields["has_counter"] else None)
            assert again == view
    cb3 = read[1]["views"][1]
    assert (cb3["file"], cb3["slot"], cb3["kind"], cb3["num_elements"], cb3["words"]) == \
        (2, 3, 4, 1, [10, 20, 30, 40])


def test_the_contents_of_a_constant_buffer_are_part_of_the_digest() -> None:
    assert record_of(dynamic(1)).digest != record_of(dynamic(1, [1, 2, 3, 4, 5, 6, 7, 9])).digest


def test_constant_buffers_the_d3d11_api_cannot_bind_are_not_expressible() -> None:
    def store(register: str, words: list[int]) -> Vector:
        return hand_vector([f"dcl_constantBuffer {register}[0], dynamicIndexed", "dcl_uav_raw u0",
                        f"store_raw u0.x, l(0), {register}[0].x"],
                       {register: {"kind": "constant", "data": words},
                        "u0": {"kind": "raw", "data": [0]}})

    cb14 = record_or_result(store("cb14", [1, 2, 3, 4]))
    assert not isinstance(cb14, Record)
    assert cb14.status == "unsupported" and "cb0..cb13" in cb14.reason
    big = record_or_result(store("cb0", [0] * (4 * 4097)))
    assert not isinstance(big, Record)
    assert big.status == "unsupported" and "at most 4096" in big.reason
    empty = record_of(store("cb1", []))
    cb1 = empty.views[1]
    assert struct.unpack_from("<10I", cb1.encode()) == (2, 1, 0, 0, 0, 0, 0, 0, 0, 0)


def _reply(record: Record, read_back: list[tuple[int, ...]]) -> Reply:
    return Reply(record.vector_id, record.digest, "state", "", 1, tuple(read_back))


def test_a_reply_leaves_the_constant_buffer_out_and_so_does_the_state() -> None:
    record = record_of(dynamic(1))
    u0, _, state = record.views
    found_u0 = list(u0.words)
    found_u0[u0.window[0]:u0.window[1]] = [5, 6, 7, 8]
    found_state = list(state.words)
    layout = record.harness.layout
    for reg in layout.registers:
        value = {"r0": [5, 6, 7, 8], "r1": [1, 0, 0, 0]}[reg.name]
        at = state.window[0] + reg.offset
        found_state[at:at + 4] = value
    found_state[state.window[0] + layout.words] = MARKER
    result = result_of(record, _reply(record, [tuple(found_u0), tuple(found_state)]))
    assert result.status == "state", result.reason
    assert result.state is not None and "cb0" not in result.state
    assert result.state["r0"] == [5, 6, 7, 8] and result.state["u0"]["data"] == [5, 6, 7, 8]
    # a reply holding a constant buffer's words is not this runner's reply
    wrong = result_of(record, _reply(record, [tuple(found_u0), tuple(WORDS),
                                              tuple(found_state)]))
    assert wrong.status == "error" and "3 views, the record 2 to read back" in wrong.reason


# --------------------------------------------------------------------------- Wine's d3d11


@pytest.fixture(scope="module", params=["gl", "vulkan", "dxvk"])
def adapter(request: pytest.FixtureRequest) -> Iterator[D3D11Runner]:
    impl = create_runner("" if request.param == "gl" else request.param)
    yield impl
    impl.close()


@pytest.mark.parametrize(("index", "expected"), BY_HAND)
def test_the_runner_binds_the_constant_buffer(adapter: D3D11Runner, index: int,
                                              expected: list[int]) -> None:
    result = adapter.run(request_vector(dynamic(index)))
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r0"] == expected and result.state["u0"]["data"] == expected
    assert "cb0" not in result.state


def test_the_runner_rounds_a_constant_buffer_up_to_16_bytes(adapter: D3D11Runner) -> None:
    """A buffer of 6 words (the stream allows it; a vector's cb# is whole elements) is created
    8 words long, the last two 0s."""
    record = record_of(dynamic(1))
    cb0 = record.views[1]
    short = replace(cb0, words=cb0.words[:6], window=(0, 6))
    result = adapter.run_record(replace(record, views=(record.views[0], short,
                                                       record.views[2])), isolated=False)
    assert result.status == "state", result.reason
    assert result.state is not None and result.state["r0"] == [5, 6, 0, 0]


def test_the_golden_constant_buffer_vectors_run(adapter: D3D11Runner,
                                                request: pytest.FixtureRequest) -> None:
    """Every vector of the two constant-buffer families runs, judged with the request (a cb#
    gets no guard words) and the renderer's expectations file: each passes, but the one whose
    index's 32-bit byte offset wraps back into the buffer (0x10000000, flag constant-past-end),
    which the renderer's byte-offset entry explains (llvmpipe and lavapipe check that offset)."""
    renderer = request.node.callspec.params["adapter"]
    expectations = load_expectations(ROOT / "conformance" / "d3d11" / EXPECTATION_FILES[renderer])
    vectors = [v for _, _, v in iter_selected([GOLDEN]) if v.id.startswith(FAMILIES)]
    assert len(vectors) >= 6
    raw: dict[str, str] = {}
    for vector in vectors:
        sent = request_vector(vector)
        result = adapter.run(sent)
        assert result.status == "state", f"{vector.id}: {result.reason}"
        raw[vector.id] = judge(vector, result, request=sent.state).status
        explained = judge(vector, result, expectations, request=sent.state)
        assert explained.status in ("pass", "xfail"), (vector.id, explained.reason)
    wraps = {v.id for v in vectors if v.state.get("r1", [0])[0] >= 1 << 28
             and v.state["r1"][0] != 0xFFFFFFFF}
    assert wraps
    assert {k for k, status in raw.items() if status != "pass"} == wraps


#: Each renderer's expectations file (conformance/d3d11/).
EXPECTATION_FILES = {"gl": "expectations.yaml", "vulkan": "expectations-vulkan.yaml",
                     "dxvk": "expectations-dxvk.yaml"}


def _launch(adapter: D3D11Runner, stream: Path) -> tuple[int, list[dict[str, Any]]]:
    launch = adapter.host.launch(str(stream))
    proc = subprocess.run(list(launch.argv), env={**os.environ, **launch.env},
                          capture_output=True, timeout=120, check=False)
    return proc.returncode, [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_the_reply_holds_no_constant_buffer(adapter: D3D11Runner, tmp_path: Path) -> None:
    """The runner's own output: views and counters for u0 and the state buffer, none for cb0."""
    record = record_of(dynamic(1))
    stream = tmp_path / "cb.sm5d3d11"
    stream.write_bytes(write_stream([record]))
    code, lines = _launch(adapter, stream)
    assert code == 0
    reply = lines[-1]
    assert (reply["id"], reply["status"]) == ("hand/cb", "state")
    assert [len(v) for v in reply["views"]] == [len(record.views[0].words),
                                                len(record.views[2].words)]
    assert reply["counters"] == [None, None]


def _bad_constant(file: int, slot: int, kind: int, words: list[int]) -> bytes:
    """A stream of one record whose only view is the one described (the DXBC is never used:
    the runner stops while reading the view)."""
    view = struct.pack("<10I", file, slot, kind, 0, 0, 0, len(words) // 4, 0, 0, len(words))
    body = b"".join(struct.pack("<I", len(x)) + x for x in (b"bad", b"0" * 64, b"DXBC"))
    return (STREAM_MAGIC + struct.pack("<I", STREAM_VERSION) + b"REC1" + body
            + struct.pack("<I", 1) + view + struct.pack(f"<{len(words)}I", *words))


@pytest.mark.parametrize(("file", "slot", "kind", "words", "reason"), [
    (2, 0, 1, [1, 2, 3, 4], "a constant buffer (file 2) is of kind 4 or 0"),
    (0, 0, 4, [1, 2, 3, 4], "a constant buffer (file 2) is of kind 4 or 0"),
    (2, 14, 4, [1, 2, 3, 4], "view file, slot or kind out of range"),
    (2, 0, 4, [], "constant buffer of no words"),
    (2, 0, 4, [0] * (4 * 4097), "more than 4096 elements"),
])
def test_a_constant_buffer_the_runner_cannot_bind_is_malformed(
        adapter: D3D11Runner, tmp_path: Path, file: int, slot: int, kind: int,
        words: list[int], reason: str) -> None:
    stream = tmp_path / "bad.sm5d3d11"
    stream.write_bytes(_bad_constant(file, slot, kind, words))
    code, lines = _launch(adapter, stream)
    assert code == 2
    assert lines[-1]["status"] == "malformed" and reason in lines[-1]["reason"]
