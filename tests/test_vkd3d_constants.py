"""Constant buffers (``cb#``) on vkd3d + lavapipe: vkd3d translates a cb# to a uniform buffer,
which the adapter binds holding the state's words (whole 16-byte elements, at least one) and
never decodes into the reply (the spec's final state holds no cb#).

The wire-format and padding tests need nothing but Python; the runs need libvkd3d-shader (or
vkd3d-compiler) and lavapipe (``conformance/vkd3d/setup.sh``) and skip naming the missing one,
as ``tests/test_vkd3d_conformance.py`` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from constant_buffer_cases import (
    BY_HAND,
    DYNAMIC,
    FAMILIES,
    GOLDEN,
    WORDS,
    dynamic,
    hand_vector,
)

import sm5.conformance.vkd3d.adapter as adapter_module
from sm5.conformance.compare import judge
from sm5.conformance.expectations import NONE, load_expectations
from sm5.conformance.guards import GUARD_KEY, request_vector
from sm5.conformance.interface import Result
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.run import iter_selected
from sm5.conformance.vkd3d.adapter import (
    CAPABILITIES,
    EXPECTATIONS_FILE,
    TargetUnavailable,
    Vkd3dLavapipe,
    constant_words,
    create,
)
from sm5.conformance.vkd3d.child import decode_request, request_doc
from sm5.conformance.vkd3d.shader import register_bindings, spirv_descriptors
from sm5.conformance.vkd3d.vulkan_runner import BufferBinding, Dispatch
from sm5.oracle.asm import parse_program
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import build_harness
from sm5.oracle.machine.program import register_file
from sm5.oracle.machine.state import state_from_json
from sm5.vectors.format import Vector

#: The expectations entry of a past-the-end index whose 32-bit byte offset wraps into cb0.
WRAP_ENTRY = "constant-buffer-index-byte-offset-wrap"


def _expected(index: int, read: list[int]) -> dict[str, Any]:
    """The final state of `_dynamic`: r0 and u0 hold what cb0[r1.x] read; no cb0."""
    return {"r0": read, "r1": [index, 0, 0, 0], "u0": {"kind": "raw", "data": read}}


def _without_guards(state: Mapping[str, Any] | None) -> dict[str, Any]:
    assert state is not None
    return {k: ({f: x for f, x in v.items() if f != GUARD_KEY} if isinstance(v, dict) else v)
            for k, v in state.items()}


def _request(vector: Vector) -> dict[str, Any]:
    """The state the vector is sent with, for judging: every view's guard words, but a cb#'s
    (a constant buffer is read-only and never read back, so its guard words, where the request
    gives some, cannot be returned; the reply holds no cb#)."""
    sent = request_vector(vector).state
    return {k: ({f: x for f, x in v.items() if f != GUARD_KEY}
                if register_file(k) == "cb" and isinstance(v, dict) else v)
            for k, v in sent.items()}


# --------------------------------------------------------------------------- no device needed


def test_constant_words_are_whole_elements_at_least_one() -> None:
    assert constant_words(WORDS) == tuple(WORDS)
    assert constant_words([]) == (0, 0, 0, 0)
    assert constant_words([9]) == (9, 0, 0, 0)
    assert constant_words(range(1, 7)) == (1, 2, 3, 4, 5, 6, 0, 0)
    assert all(len(constant_words(range(n))) % 4 == 0 for n in range(20))


def test_a_uniform_binding_survives_the_child_wire_format() -> None:
    """An isolated dispatch reaches its child as JSON: a uniform buffer comes out as it went
    in (kind, words, guard words)."""
    bindings = [BufferBinding(0, tuple(WORDS), "uniform", guard_words=8),
                BufferBinding(1, (0xDEAD,) * 4), BufferBinding(2, (0,), "ssbo")]
    doc = json.loads(json.dumps(request_doc(b"\x03\x02\x23\x07" * 5, bindings, (1, 1, 1),
                                            True, 5.0)))
    spirv, decoded, groups, robust = decode_request(doc)
    assert decoded == bindings
    assert (spirv, groups, robust) == (b"\x03\x02\x23\x07" * 5, (1, 1, 1), True)


# --------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def adapter() -> Iterator[Vkd3dLavapipe]:
    try:
        impl = create()
    except TargetUnavailable as exc:
        pytest.skip(f"vkd3d + lavapipe unavailable: {exc}")
    yield impl
    impl.close()


def test_vkd3d_makes_a_constant_buffer_a_uniform_buffer(adapter: Vkd3dLavapipe) -> None:
    harness = build_harness(parse_program(DYNAMIC), state_from_json(dynamic(1).state))
    assert [(b.register, b.kind) for b in harness.bindings if b.register == "cb0"] == \
        [("cb0", "constant")]
    spirv = adapter.translator.dxbc_to_spirv(program_to_dxbc(harness.program))
    number = register_bindings(spirv)["cb0"]
    assert [d.kind for d in spirv_descriptors(spirv) if d.binding == number] == ["uniform"]


@pytest.mark.parametrize(("index", "read"), BY_HAND)
def test_dynamic_index_by_hand(adapter: Vkd3dLavapipe, index: int, read: list[int]) -> None:
    vector = dynamic(index)
    result = adapter.run(request_vector(vector))
    assert result.status == "state", result.reason
    assert "cb0" not in (result.state or {})  # read-only: never part of the reply
    assert _without_guards(result.state) == _expected(index, read)


def test_immediate_index_by_hand(adapter: Vkd3dLavapipe) -> None:
    """cb0[1].y reads word 5 (20); cb0[0].x (1, non-zero) takes the branch: 20 + 1."""
    vector = hand_vector(["dcl_constantBuffer cb0[2], immediateIndexed", "dcl_uav_raw u0",
                      "mov r0.x, l(0)", "if_nz cb0[0].x", "iadd r0.x, cb0[1].y, l(1)", "endif",
                      "store_raw u0.x, l(0), r0.x"],
                     {"cb0": {"kind": "constant", "data": [1, 0, 0, 0, 10, 20, 30, 40]},
                      "r0": [7, 7, 7, 7], "u0": {"kind": "raw", "data": [0xDEAD]}})
    result = adapter.run(request_vector(vector))
    assert result.status == "state", result.reason
    assert _without_guards(result.state) == {"r0": [21, 7, 7, 7],
                                             "u0": {"kind": "raw", "data": [21]}}


def test_an_empty_constant_buffer_reads_zeros(adapter: Vkd3dLavapipe) -> None:
    """cb0[0] (any number of elements) binding no words: the uniform buffer holds one element
    of 0s, and every element reads 0 as in D3D, the first included."""
    vector = hand_vector(["dcl_constantBuffer cb0[0], dynamicIndexed", *DYNAMIC[1:]],
                     {"cb0": {"kind": "constant", "data": []}, "r0": [7, 7, 7, 7],
                      "r1": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [0xDEAD] * 4}})
    result = adapter.run(request_vector(vector))
    assert result.status == "state", result.reason
    assert _without_guards(result.state) == _expected(0, [0, 0, 0, 0])


def _wraps_inside(vector: Vector) -> bool:
    """Does the vector read cb0[r1.x] with r1.x past the end of cb0 but 16 * r1.x, in 32 bits,
    inside it (the divergence of entry `WRAP_ENTRY`)?"""
    if not vector.id.startswith(FAMILIES[0]):
        return False
    index, elements = vector.state["r1"][0], len(vector.state["cb0"]["data"]) // 4
    return index >= elements and (16 * index) % 2**32 < 16 * elements


def test_the_golden_constant_buffer_vectors_run(adapter: Vkd3dLavapipe) -> None:
    """Every vector of the two constant-buffer families runs for real, its reply holding no
    cb#, and passes (in-range and past-the-end reads alike: indices 2 and 0xFFFFFFFF read 0s),
    but the one whose index's byte offset wraps into the buffer, which entry `WRAP_ENTRY`
    explains."""
    vectors = [v for _, _, v in iter_selected([GOLDEN]) if v.id.startswith(FAMILIES)]
    assert len(vectors) >= 6
    assert sum("constant-past-end" in v.flags and not _wraps_inside(v) for v in vectors) >= 2
    expectations = load_expectations(EXPECTATIONS_FILE)
    raw: dict[str, tuple[str, tuple[str, ...]]] = {}
    for vector in vectors:
        result = adapter.run(request_vector(vector))
        assert result.status == "state", f"{vector.id}: {result.reason}"
        assert not any(register_file(k) == "cb" for k in result.state or {}), vector.id
        verdict = judge(vector, result, NONE, CAPABILITIES, request=_request(vector))
        raw[vector.id] = (verdict.status, verdict.diffs)
        explained = judge(vector, result, expectations, CAPABILITIES, request=_request(vector))
        assert explained.status in ("pass", "xfail"), (vector.id, explained.reason)
        if _wraps_inside(vector):
            entry = expectations.lookup(vector)
            assert entry is not None and entry.label == WRAP_ENTRY, vector.id
    assert {k: v for k, v in raw.items() if v[0] != "pass"} == \
        {v.id: raw[v.id] for v in vectors if _wraps_inside(v)}
    assert {raw[v.id][0] for v in vectors if _wraps_inside(v)} <= {"fail"}


def test_isolated_runs_bind_the_constant_buffer_too(adapter: Vkd3dLavapipe,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The same vectors in the isolation processes (the bindings go to a child as JSON) give
    the same states as in process."""
    vectors = [dynamic(index) for index, _ in BY_HAND]
    in_process = [adapter.run(request_vector(v)) for v in vectors]
    before = adapter.isolated_runs
    monkeypatch.setattr(adapter_module, "needs_isolation", lambda *args: True)
    isolated = adapter.run_batch([request_vector(v) for v in vectors])
    assert adapter.isolated_runs - before == len(vectors)
    assert [r.status for r in isolated] == ["state"] * len(vectors), \
        [r.reason for r in isolated]
    assert [r.state for r in isolated] == [r.state for r in in_process]


def test_a_batch_gives_each_dispatch_its_own_constant_buffer(adapter: Vkd3dLavapipe) -> None:
    """Several vectors of one shader in one submission, each with other words in cb0: each
    reads its own (a slot's uniform buffer is its own)."""
    vectors = [dynamic(1, [k, k, k, k, 10 * k, 10 * k + 1, 10 * k + 2, 10 * k + 3])
               for k in range(1, 6)]
    results = adapter.run_batch([request_vector(v) for v in vectors])
    assert [(r.state or {}).get("r0") for r in results] == \
        [[10 * k, 10 * k + 1, 10 * k + 2, 10 * k + 3] for k in range(1, 6)]


def test_the_runner_refuses_a_partial_uniform_element(adapter: Vkd3dLavapipe) -> None:
    harness = build_harness(parse_program(DYNAMIC), state_from_json(dynamic(1).state))
    spirv = adapter.translator.dxbc_to_spirv(program_to_dxbc(harness.program))
    numbers = register_bindings(spirv)
    bindings = (BufferBinding(numbers["cb0"], (1, 2, 3, 4, 5, 6), "uniform"),
                BufferBinding(numbers["u0"], (0,) * 4),
                BufferBinding(numbers[harness.state_register], harness.state_words))
    [answer] = adapter._runner.run_batch([Dispatch(spirv, bindings)])
    assert isinstance(answer, ValueError)
    assert "whole 16-byte elements" in str(answer)


def test_an_index_whose_byte_offset_wraps_reads_element_zero(adapter: Vkd3dLavapipe) -> None:
    """Measured, not D3D: vkd3d indexes the uniform buffer's vec4 array unchecked and leaves
    the bounds to robustBufferAccess, which lavapipe checks on the byte offset 16 * index in 32
    bits. Index 0x10000000 is far past the end (D3D reads 0s, as the oracle does), but 16 times
    it wraps to 0, so lavapipe reads element 0 (0xFFFFFFFF wraps to 0xFFFFFFF0, still past
    the end, and reads 0s). Entry `WRAP_ENTRY` of the expectations file explains it."""
    vector = dynamic(0x10000000)
    spec = OracleImplementation().run(vector)
    assert spec.status == "state", spec.reason
    assert _without_guards(spec.state)["r0"] == [0, 0, 0, 0]
    result: Result = adapter.run(request_vector(vector))
    assert result.status == "state", result.reason
    assert _without_guards(result.state)["r0"] == [1, 2, 3, 4]
