"""The D3D11 runner's stream and replies, without Wine: records, windows, replies, replay files,
the ``sm5 d3d11 stream`` command."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sm5.cli import main
from sm5.conformance.d3d11.replay import ReplayError, load_replay
from sm5.conformance.d3d11.stream import (
    CANARY_BASE,
    MARKER,
    Record,
    Reply,
    StreamError,
    parse_reply,
    record_of,
    result_of,
    write_stream,
)
from sm5.conformance.guards import GUARD_KEY, guard_diffs, request_vector
from sm5.conformance.implementations import resolve
from sm5.conformance.interface import Result
from sm5.conformance.run import iter_selected, vector_files
from sm5.oracle.asm import format_line
from sm5.vectors.format import Vector

HEADER = {"format": "sm5-d3d11-results/1", "runner": "sm5-d3d11-runner 3",
          "driver": "hardware", "feature_level": "11_1", "adapter": "test adapter",
          "vendor_id": 1, "device_id": 2, "doubles": False}


def _vector(program: list[str], state: Mapping[str, Any], vid: str = "hand/0") -> Vector:
    return Vector(vid, tuple(program), "cs_5_0", "11.0", dict(state), {})


STORE = _vector(["dcl_uav_structured u0, 12", "store_structured u0.x, r0.x, l(4), r1.x"],
                {"r0": [1, 0, 0, 0], "r1": [77, 0, 0, 0],
                 "u0": {"kind": "structured", "stride": 12, "count": 2,
                        "data": [1, 2, 3, 4, 5, 6]}})


def _ran(record: Record, change: Mapping[tuple[int, int], int] | None = None,
         invocations: int | None = 1, marker: bool = True) -> Reply:
    """A reply that returns every buffer as created, with ``change`` {(view, word): value} and
    (unless ``marker`` is False) the marker the harness writes after the state."""
    views = [list(v.words) for v in record.views]
    if marker:
        state = record.views[-1]
        views[-1][state.window[0] + record.harness.layout.words] = MARKER
    for (view, word), value in (change or {}).items():
        views[view][word] = value
    return Reply(record.vector_id, record.digest, "state", "", invocations,
                 tuple(tuple(v) for v in views))


def test_record_windows_are_aligned_and_fenced_by_canaries() -> None:
    record = record_of(STORE)
    u0, state = record.views
    assert (u0.register, u0.slot, u0.kind, u0.stride) == ("u0", 0, "structured", 12)
    # 48 canary words (lcm of 16 and the 3 words of a structure) = 16 structures = 192 bytes
    assert u0.first_element == 16 and u0.num_elements == 2
    assert u0.window == (48, 54)
    assert u0.words[48:54] == (1, 2, 3, 4, 5, 6)
    assert u0.words[:48] == tuple(CANARY_BASE + i for i in range(48))
    assert u0.words[54:] == tuple(CANARY_BASE + 54 + i for i in range(48))
    assert (state.register, state.kind, state.first_element) == ("u1", "raw", 16)
    assert (4 * state.window[0]) % 64 == 0


def test_record_bytes_follow_the_stream_format() -> None:
    record = record_of(STORE)
    data = write_stream([record])
    assert data[:12] == b"SM5D3D11" + struct.pack("<I", 3)
    at = 12
    assert data[at:at + 4] == b"REC1"
    at += 4
    (size,) = struct.unpack_from("<I", data, at)
    assert data[at + 4:at + 4 + size] == b"hand/0"
    at += 4 + size
    (size,) = struct.unpack_from("<I", data, at)
    assert data[at + 4:at + 4 + size] == record.digest.encode()
    at += 4 + size
    (size,) = struct.unpack_from("<I", data, at)
    assert data[at + 4:at + 4 + size] == record.dxbc and record.dxbc[:4] == b"DXBC"
    at += 4 + size
    assert struct.unpack_from("<I", data, at) == (2,)
    fields = struct.unpack_from("<10I", data, at + 4)
    # file 0 (a UAV), slot 0, kind 2 (structured), no format, stride 12, first element 16,
    # 2 elements, no hidden counter (has_counter 0, count 0), 48 + 6 + 48 words
    assert fields == (0, 0, 2, 0, 12, 16, 2, 0, 0, 102)


ALLOC = _vector(["dcl_uav_structured u2, 8", "imm_atomic_alloc r0.x, u2"],
                {"r0": [9, 9, 9, 9],
                 "u2": {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4],
                        "counter": 41}})


def _counted(record: Record, counts: Mapping[str, int | None]) -> Reply:
    """``_ran`` with the final counts of the views named in ``counts``."""
    reply = _ran(record)
    per_view = tuple(counts.get(v.register) if v.register in counts else None
                     for v in record.views)
    return Reply(reply.vector_id, reply.digest, "state", "", 1, reply.views, per_view)


def test_a_hidden_counter_travels_with_its_view() -> None:
    """A view with a hidden counter carries has_counter 1 and its initial count; the others
    0 and 0 (FS 5.3.10: the count is D3D's UAV initial count)."""
    record = record_of(ALLOC)
    u2, state = record.views
    assert (u2.register, u2.kind, u2.counter) == ("u2", "structured", 41)
    assert state.counter is None
    assert struct.unpack_from("<10I", u2.encode()) == (0, 2, 2, 0, 8, 8, 2, 1, 41,
                                                       len(u2.words))
    assert struct.unpack_from("<10I", state.encode())[7:9] == (0, 0)
    other = record_of(_vector(list(ALLOC.program),
                              {**ALLOC.state, "u2": {**ALLOC.state["u2"], "counter": 42}}))
    assert other.digest != record.digest  # the initial count is part of what a reply answers


def test_the_final_count_becomes_the_state_counter() -> None:
    record = record_of(ALLOC)
    result = result_of(record, _counted(record, {"u2": 42}))
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["u2"]["counter"] == 42
    assert result.state["u2"]["data"] == [1, 2, 3, 4]
    line = json.dumps({"id": record.vector_id, "digest": record.digest, "status": "state",
                       "invocations": 1, "views": [list(v) for v in _ran(record).views],
                       "counters": [42, None]})
    assert parse_reply(line, "here:2").counters == (42, None)  # the runner's own line


def test_a_reply_without_the_final_count_is_an_error() -> None:
    record = record_of(ALLOC)
    no_field = result_of(record, _ran(record))
    assert no_field.status == "error"
    assert "0 counters for 2 views; u2 has a hidden counter" in no_field.reason
    null = result_of(record, _counted(record, {"u2": None}))
    assert null == Result.error("u2: the reply holds no final count for the view's hidden "
                                "counter")


def test_a_counter_on_a_view_of_no_elements_is_not_a_null_view() -> None:
    """A NULL view has no counter: a counted view without words is a structured view of no
    elements inside a buffer of canaries, so its counter exists."""
    vector = _vector(["dcl_uav_structured u0, 4", "imm_atomic_consume r1.y, u0"],
                     {"r1": [0, 0, 0, 0],
                      "u0": {"kind": "structured", "stride": 4, "count": 0, "data": [],
                             "counter": 7}})
    record = record_of(vector)
    u0 = record.views[0]
    assert (u0.kind, u0.num_elements, u0.counter) == ("structured", 0, 7)
    assert u0.window[0] == u0.window[1] and u0.words
    result = result_of(record, _counted(record, {"u0": 6}))
    assert result.state is not None and result.state["u0"]["counter"] == 6


def test_a_counter_starting_at_all_ones_is_not_expressible() -> None:
    """D3D11 reads an initial count of 0xffffffff (-1) as: keep the current count."""
    from sm5.oracle.errors import NotExpressible

    vector = _vector(list(ALLOC.program),
                     {**ALLOC.state, "u2": {**ALLOC.state["u2"], "counter": 0xFFFFFFFF}})
    with pytest.raises(NotExpressible, match="keep the current count"):
        record_of(vector)


def test_srv_buffers_are_views_of_their_own_file() -> None:
    vector = _vector(["dcl_resource_structured t3, 8", "dcl_resource_raw t1",
                      "ld_structured r0.x, r1.x, l(4), t3.x"],
                     {"r0": [0, 0, 0, 0], "r1": [1, 0, 0, 0],
                      "t1": {"kind": "raw", "data": [9]},
                      "t3": {"kind": "structured", "stride": 8, "count": 2,
                             "data": [1, 2, 3, 4]}})
    record = record_of(vector)
    t1, t3, state = record.views
    assert (t1.register, t1.slot, t1.kind, t1.first_element, t1.num_elements) == \
        ("t1", 1, "raw", 16, 1)
    assert (t3.register, t3.slot, t3.kind, t3.stride, t3.first_element, t3.num_elements) == \
        ("t3", 3, "structured", 8, 8, 2)
    assert state.register == "u0"
    assert struct.unpack_from("<2I", t3.encode()) == (1, 3)  # file 1: a shader resource view
    assert struct.unpack_from("<2I", state.encode()) == (0, 0)
    # the final state holds the SRVs read back (unchanged) and the loaded word
    views = [list(v.words) for v in record.views]
    views[2][state.window[0] + record.harness.layout.words] = MARKER
    reg = record.harness.layout.registers
    r0 = next(r.offset for r in reg if r.name == "r0")
    views[2][state.window[0] + r0] = 4
    reply = Reply(record.vector_id, record.digest, "state", "", 1, tuple(map(tuple, views)))
    result = result_of(record, reply)
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["r0"][0] == 4
    assert result.state["t3"]["data"] == [1, 2, 3, 4]


def test_typed_and_null_views() -> None:
    vector = _vector(["dcl_uav_typed_buffer (sint,sint,sint,sint) u0", "dcl_uav_raw u2",
                      "imm_atomic_iadd r1.x, u0, r0.x, r0.y"],
                     {"r0": [0, 1, 0, 0], "r1": [0, 0, 0, 0],
                      "u0": {"kind": "typed", "format": "R32_SINT", "data": [5]},
                      "u2": {"kind": "raw", "data": []}})
    u0, u2, state = record_of(vector).views
    assert (u0.kind, u0.dxgi_format, u0.first_element, u0.num_elements) == ("typed", 43, 16, 1)
    assert (u2.kind, u2.words) == ("null", ())
    assert state.register == "u1"


def test_the_digest_ties_a_reply_to_program_and_state() -> None:
    record = record_of(STORE)
    other = record_of(_vector(list(STORE.program), {**STORE.state, "r1": [78, 0, 0, 0]}))
    assert record.digest != other.digest
    assert record_of(STORE).digest == record.digest
    result = result_of(record, _ran(other))
    assert result.status == "error" and "not this program and state" in result.reason


def test_a_reply_becomes_the_final_state() -> None:
    record = record_of(STORE)
    u0 = record.views[0]
    result = result_of(record, _ran(record, {(0, u0.window[0] + 4): 77}))
    assert result.status == "state", result.reason
    assert result.state is not None
    assert result.state["u0"]["data"] == [1, 2, 3, 4, 77, 6]
    assert result.state["r1"] == [77, 0, 0, 0]


def test_a_write_outside_a_window_is_an_error() -> None:
    record = record_of(STORE)
    end = record.views[0].window[1]
    result = result_of(record, _ran(record, {(0, end): 7}))
    assert result.status == "error"
    assert result.reason.startswith("wrote outside u0's window")
    assert f"word +6 {CANARY_BASE + end:#010x} -> 0x00000007" in result.reason


def test_a_dispatch_that_did_not_run_is_an_error() -> None:
    """The marker decides; the pipeline statistics are only quoted (they can be wrong)."""
    record = record_of(STORE)
    dropped = result_of(record, _ran(record, invocations=0, marker=False))
    assert dropped == Result.error("the dispatch did not run: the harness's marker word was "
                                   "not written; the pipeline statistics count 0 invocation(s)")
    assert result_of(record, _ran(record, invocations=None, marker=False)).status == "error"
    assert result_of(record, _ran(record, invocations=0)).status == "state"


def test_the_marker_is_the_harness_last_store() -> None:
    record = record_of(STORE)
    program = record.harness.program
    assert format_line(program.lines[-2]) == (
        f"store_raw u1.x, l({4 * record.harness.layout.words}), l({MARKER})")
    assert format_line(program.lines[-1]) == "ret"
    # A program that returns early stores the state and the marker before each return.
    early = record_of(_vector(["dcl_uav_raw u0", "retc_nz r0.x", "store_raw u0.x, l(0), r0.x"],
                              {"r0": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [5]}}))
    lines = [format_line(x) for x in early.harness.program.lines]
    marker = f"store_raw u1.x, l({4 * early.harness.layout.words}), l({MARKER})"
    assert lines.count(marker) == 2
    assert lines[lines.index("if_nz r0.x") + 2] == marker
    state = record.views[-1]
    assert state.words[state.window[0]:state.window[1]] == (*record.harness.state_words, 0)


def test_runner_statuses_become_results() -> None:
    record = record_of(STORE)
    for status, expected in (("unsupported", "unsupported"), ("error", "error"),
                             ("crash", "crash")):
        reply = Reply(record.vector_id, record.digest, status, "why")
        assert result_of(record, reply).status == expected


@pytest.mark.parametrize("line, message", [
    ("nope", "not JSON"),
    ("[]", "expected a JSON object"),
    ('{"id":"a","digest":"b","status":"odd"}', "field status"),
    ('{"id":"a","digest":"b","status":"state","views":[[-1]]}', "field views"),
    ('{"id":"a","digest":"b","status":"state","views":[],"invocations":true}',
     "field invocations"),
    ('{"id":"a","status":"state","views":[]}', "id and digest"),
    ('{"id":"a","digest":"b","status":"state","views":[],"counters":[-1]}', "field counters"),
    ('{"id":"a","digest":"b","status":"state","views":[],"counters":{}}', "field counters"),
    ('{"status":"malformed","reason":"bad tag"}', "the runner stopped: bad tag"),
])
def test_malformed_replies_are_named(line: str, message: str) -> None:
    with pytest.raises(StreamError, match=message):
        parse_reply(line, "here:3")


def _results_file(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_replay_answers_from_the_file(tmp_path: Path) -> None:
    record = record_of(STORE)
    reply = _ran(record, {(0, record.views[0].window[0] + 4): 77})
    stale = {"id": "hand/0", "digest": record.digest, "status": "error", "reason": "first try"}
    line = {"id": reply.vector_id, "digest": reply.digest, "status": "state",
            "invocations": 1, "views": [list(v) for v in reply.views]}
    path = _results_file(tmp_path / "results.jsonl", [HEADER, stale, HEADER, line])
    impl = resolve(f"results:{path}")
    assert impl.name == "d3d11 results (test adapter, feature level 11_1)"
    result = impl.run(STORE)
    assert result.status == "state" and result.state is not None  # the last line counts
    assert result.state["u0"]["data"] == [1, 2, 3, 4, 77, 6]
    missing = impl.run(_vector(list(STORE.program), STORE.state, "hand/1"))
    assert missing.status == "error" and "holds no reply" in missing.reason


def test_replay_file_errors_name_the_line(tmp_path: Path) -> None:
    garbled = tmp_path / "r.jsonl"
    garbled.write_text(json.dumps(HEADER) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ReplayError, match=r"r\.jsonl:2: not JSON"):
        load_replay(garbled)
    with pytest.raises(ReplayError, match="header line first"):
        load_replay(_results_file(tmp_path / "h.jsonl", [{"id": "a", "digest": "b",
                                                          "status": "error", "reason": "x"}]))
    with pytest.raises(ReplayError, match="cannot read"):
        load_replay(tmp_path / "absent.jsonl")
    old = _results_file(tmp_path / "old.jsonl", [{**HEADER, "runner": "sm5-d3d11-runner 2"}])
    with pytest.raises(ReplayError, match=r"old\.jsonl:1: made by 'sm5-d3d11-runner 2', not "
                                          "'sm5-d3d11-runner 3'"):
        load_replay(old)


def test_cli_stream_writes_every_executable_vector(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    golden = vector_files(None)
    store = next(f for f in golden if f.name.startswith("store_structured"))
    out = tmp_path / "programs.sm5d3d11"
    assert main(["d3d11", "stream", "--vectors", str(store), "--out", str(out)]) == 0
    vectors = [v for _, _, v in iter_selected([store])]
    executable = [v for v in vectors if not v.rejected]
    text = capsys.readouterr().out
    rejected = len(vectors) - len(executable)
    assert f"left out {rejected} rejected" in text
    data = out.read_bytes()
    assert data.count(b"REC1") >= int(text.split()[1])
    first = record_of(request_vector(executable[0]))  # the stream holds what a run sends
    assert data[12:12 + len(first.encode())] == first.encode()
    again = tmp_path / "again.sm5d3d11"
    assert main(["d3d11", "stream", "--vectors", str(store), "--out", str(again)]) == 0
    assert again.read_bytes() == data


def test_cli_stream_bad_input_is_exit_2(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n", encoding="utf-8")
    assert main(["d3d11", "stream", "--vectors", str(bad), "--out",
                 str(tmp_path / "x")]) == 2
    assert str(bad) in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_structured_stride_d3d11_cannot_create_is_not_expressible() -> None:
    """D3D11 takes a structured buffer's StructureByteStride in multiples of 4 bytes: a t# of
    stride 1 cannot be created as the vector describes it."""
    from sm5.oracle.errors import NotExpressible

    vector = _vector(["dcl_resource_structured t0, 1", "ld_structured r0.x, r1.x, l(0), t0.x"],
                     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0],
                      "t0": {"kind": "structured", "stride": 1, "count": 4, "data": [7]}})
    with pytest.raises(NotExpressible, match="multiple of 4"):
        record_of(vector)


def test_sm5_verify_judges_the_runner_output_and_protocol_replies_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``sm5 verify --results`` tells the runner's output (its header line first) from protocol
    replies, and judges both: the same vector, the same final state, the same verdict."""
    from conformance_cases import vector as oracle_vector
    from conformance_cases import write_vectors

    vector = oracle_vector("store_structured/hand/0001", list(STORE.program), "cs_5_0", "11.0",
                           dict(STORE.state))
    vectors = write_vectors(tmp_path / "v.jsonl", [vector])
    record = record_of(request_vector(vector))  # what sm5 d3d11 stream writes and a run sends
    reply = _ran(record, {(0, record.views[0].window[0] + 4): 77})  # the word the store writes
    runner = _results_file(tmp_path / "runner.jsonl", [HEADER, {
        "id": reply.vector_id, "digest": reply.digest, "status": "state", "invocations": 1,
        "views": [list(v) for v in reply.views]}])
    protocol = tmp_path / "replies.jsonl"
    state = result_of(record, reply).state
    protocol.write_text(json.dumps({"id": vector.id, "state": state}) + "\n", encoding="utf-8")
    for path in (runner, protocol):
        code = main(["verify", "--results", str(path), "--vectors", str(vectors), "--quiet"])
        assert code == 0, capsys.readouterr()
        assert "1 pass" in capsys.readouterr().out


def test_d3d11_names_are_checked_without_starting_anything(tmp_path: Path) -> None:
    from sm5.conformance.implementations import ImplementationError, check_name

    for name in ("d3d11", "d3d11:vulkan", "d3d11:dxvk", "d3d11:warp"):
        check_name(name)
    with pytest.raises(ImplementationError, match="unknown D3D11 variant"):
        check_name("d3d11:metal")
    with pytest.raises(ImplementationError, match="no such results file"):
        check_name(f"results:{tmp_path / 'absent.jsonl'}")


def test_dxvk_without_its_dlls_is_one_clear_error(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing DXVK is named with the setup that installs it, before Wine or Xvfb start."""
    from sm5.conformance.d3d11.host import Host, HostUnavailable, dxvk_version

    runner = tmp_path / "sm5-d3d11-runner.exe"
    runner.write_bytes(b"MZ")
    monkeypatch.setenv("SM5_DXVK_DIR", str(tmp_path / "dxvk"))
    with pytest.raises(HostUnavailable, match=r"DXVK is not installed: no d3d11\.dll, dxgi\.dll "
                       r".*scripts/setup\.sh --dxvk"):
        Host("dxvk", runner=runner)
    assert dxvk_version() == ""


def test_the_request_guard_words_sit_beside_the_window_and_come_back() -> None:
    """The guard words of the request are the buffer's words right before and after the view;
    the reply returns them as read back, so a write just past the view shows in the judge."""
    sent = request_vector(STORE)
    record = record_of(sent)
    u0 = record.views[0]
    guard = sent.state["u0"][GUARD_KEY]
    start, end = u0.window
    assert u0.words[start - len(guard["before"]):start] == tuple(guard["before"])
    assert u0.words[end:end + len(guard["after"])] == tuple(guard["after"])
    assert (4 * start) % 64 == 0
    fine = result_of(record, _ran(record))
    assert fine.state is not None and guard_diffs(sent.state, fine.state) == ()
    past_end = result_of(record, _ran(record, {(0, end): 5}))
    assert past_end.state is not None
    assert guard_diffs(sent.state, past_end.state) == (
        f"u0.guard.after[0]: written outside the view (guard 0x{guard['after'][0]:08x}, "
        "observed 0x00000005)",)
    beyond = result_of(record, _ran(record, {(0, end + len(guard["after"])): 5}))
    assert beyond.status == "error" and "wrote outside u0's window" in beyond.reason
