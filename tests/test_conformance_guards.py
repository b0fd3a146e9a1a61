"""Guard words around every view: a write outside a view, or into a register or resource the
request does not have, fails the vector and names the words."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from sm5.conformance.compare import judge
from sm5.conformance.guards import (
    guard_diffs,
    guarded_state,
    request_state,
    request_vector,
    without_guards,
)
from sm5.conformance.interface import Result
from sm5.conformance.mutants import MUTANTS
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.protocol import SubprocessImplementation
from sm5.conformance.run import golden_dir, run_vector
from sm5.oracle.machine.state import MachineState, Resource
from sm5.vectors.format import Vector, read_file

IMPLS = Path(__file__).parent / "impls"


def _vector(program: list[str], state: dict[str, Any], expect: dict[str, Any]) -> Vector:
    return Vector("store_structured/guard/0000", tuple(program), "cs_5_0", "11.0", state,
                  {"outcomes": ["defined"], "state": expect})


STRUCTURED = {"kind": "structured", "stride": 8, "count": 2, "data": [1, 2, 3, 4]}
PAST_END = _vector(["dcl_uav_structured u0, 8", "store_structured u0.x, l(2), l(0), r1.x"],
                   {"r1": [7, 0, 0, 0], "u0": STRUCTURED},
                   {"r1": [7, 0, 0, 0], "u0": STRUCTURED})


def test_guard_words_follow_the_documented_rule() -> None:
    """Values written out from the docs' rule: one element (at least 4 words) each side, the
    word at offset k from the view's first word is 0xC0DE0000 + k mod 2^32."""
    state = guarded_state({
        "u0": STRUCTURED,
        "u1": {"kind": "structured", "stride": 24, "count": 1, "data": [0] * 6},
        "u2": {"kind": "raw", "data": [9, 9]},
        "t0": {"kind": "raw", "data": [5]},
        "g0": {"kind": "raw", "data": [0, 0]},
        "u3": {"kind": "raw", "data": []},
        "r0": [0, 0, 0, 0],
    })
    assert state["u0"]["guard"] == {
        "before": [0xC0DDFFFC, 0xC0DDFFFD, 0xC0DDFFFE, 0xC0DDFFFF],
        "after": [0xC0DE0004, 0xC0DE0005, 0xC0DE0006, 0xC0DE0007]}
    assert state["u1"]["guard"]["before"][0] == 0xC0DDFFFA  # a 24-byte structure: 6 words
    assert state["u1"]["guard"]["after"] == [0xC0DE0006 + i for i in range(6)]
    assert state["u2"]["guard"]["after"] == [0xC0DE0002, 0xC0DE0003, 0xC0DE0004, 0xC0DE0005]
    assert state["t0"]["guard"]["before"] == [0xC0DDFFFC, 0xC0DDFFFD, 0xC0DDFFFE, 0xC0DDFFFF]
    assert "guard" not in state["g0"]  # shared memory: no place beside it
    assert "guard" not in state["u3"]  # a null view
    assert without_guards(state)["u0"] == STRUCTURED


def test_a_write_past_the_end_of_a_view_is_named() -> None:
    sent = guarded_state(PAST_END.state)
    reply = {**sent, "u0": {**sent["u0"], "guard": {
        "before": sent["u0"]["guard"]["before"],
        "after": [7, *sent["u0"]["guard"]["after"][1:]]}}}
    verdict = judge(PAST_END, Result.of_state(reply), request=sent)
    assert verdict.status == "fail"
    assert verdict.diffs == ("u0.guard.after[0]: written outside the view (guard 0xc0de0004, "
                             "observed 0x00000007)",)
    # The view's own words are as the vector expects: only the guard tells.
    assert judge(PAST_END, Result.of_state(without_guards(reply))).status == "pass"


def test_missing_guards_and_extra_registers_fail() -> None:
    sent = guarded_state(PAST_END.state)
    no_guard = judge(PAST_END, Result.of_state(without_guards(sent)), request=sent)
    assert no_guard.status == "fail"
    assert any("u0.guard: missing from the reply" in d for d in no_guard.diffs)
    extra = judge(PAST_END, Result.of_state({**sent, "r9": [0, 0, 0, 0]}), request=sent)
    assert extra.status == "fail"
    assert extra.diffs[0].startswith("r9: the reply has a register or resource the request")
    short = {**sent, "u0": {**sent["u0"], "guard": {"before": [], "after": []}}}
    assert len(guard_diffs(sent, short)) == 2
    assert judge(PAST_END, Result.of_state(sent), request=sent).status == "pass"


def test_a_request_differs_from_its_vector_in_the_state_alone() -> None:
    sent = request_vector(PAST_END)
    assert sent == dataclasses.replace(PAST_END, state=guarded_state(PAST_END.state))
    assert sent.to_json() == {**PAST_END.to_json(), "state": guarded_state(PAST_END.state)}


def test_a_request_carries_the_typed_state_its_vector_was_read_with() -> None:
    read = Vector.from_json(PAST_END.to_json(), "test")
    assert read == PAST_END
    assert read.decoded_state == MachineState({"r1": (7, 0, 0, 0)}, {"u0": Resource(
        "structured", (1, 2, 3, 4), stride=8, count=2)})
    sent = request_vector(read)
    assert sent.decoded_state is read.decoded_state
    assert request_state(sent) is read.decoded_state
    # Another state, or a copy by dataclasses.replace, carries no typed state: it is decoded.
    for other in (read.with_state(guarded_state(read.state)),
                  dataclasses.replace(read, state=read.state)):
        assert other.decoded_state is None
    assert request_state(request_vector(PAST_END)) == read.decoded_state
    changed = read.with_state({**read.state, "r1": [9, 0, 0, 0]})
    assert request_state(changed).registers["r1"] == (9, 0, 0, 0)


def test_the_oracle_and_the_naive_translator_keep_the_guards() -> None:
    sent = request_vector(PAST_END)
    for impl in (OracleImplementation(), NaiveTranslator()):
        result = impl.run(sent)
        assert result.status == "state" and result.state is not None
        assert result.state["u0"]["guard"] == sent.state["u0"]["guard"]
        assert run_vector(impl, PAST_END).status == "pass"


def test_the_index_past_end_mutant_writes_into_the_guard() -> None:
    """The bug that survived when only the view's words were compared."""
    mutant = MUTANTS["index_past_end"]()
    verdict = run_vector(mutant, PAST_END)
    assert verdict.status == "fail"
    assert verdict.diffs == ("u0.guard.after[0]: written outside the view (guard 0xc0de0004, "
                             "observed 0x00000007)",)


def _golden_past_end_vectors() -> list[Vector]:
    _, vectors = read_file(golden_dir() / "store_structured.jsonl")
    return [v for v in vectors if "store_structured.uav_structured.oob_index" in v.clauses]


def test_golden_vectors_kill_index_past_end_through_the_guards() -> None:
    """The golden set has vectors one structure past the end; on the mutant they fail by the
    guard words alone, and the bug-free base passes every one of them."""
    vectors = _golden_past_end_vectors()
    base, mutant = NaiveTranslator(), MUTANTS["index_past_end"]()
    assert all(run_vector(base, v).status in ("pass", "not-applicable") for v in vectors)
    killed = [v for v in vectors if run_vector(mutant, v).status == "fail"]
    assert killed
    for v in killed:
        verdict = run_vector(mutant, v)
        assert all(".guard.after[" in d for d in verdict.diffs), verdict.diffs


@pytest.mark.parametrize("mutant, fails", [(None, False), ("index_past_end", True)])
def test_guards_travel_through_the_json_lines_protocol(mutant: str | None, fails: bool) -> None:
    """A child process answering by the protocol returns the guards it read back; a child with
    the past-the-end bug fails by them."""
    argv = [sys.executable, str(IMPLS / "naive_jsonl.py"), *([mutant] if mutant else [])]
    impl = SubprocessImplementation(argv, name="naive-child")
    try:
        vectors = [PAST_END, *_golden_past_end_vectors()[:40]]
        verdicts = [run_vector(impl, v) for v in vectors]
    finally:
        impl.close()
    failed = [v for v in verdicts if v.status == "fail"]
    assert bool(failed) == fails
    assert all(any(".guard.after[" in d for d in v.diffs) for v in failed)
    if not fails:
        assert {v.status for v in verdicts} <= {"pass", "not-applicable"}
