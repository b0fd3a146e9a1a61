"""Broken implementations behind the JSON Lines protocol (``tests/impls/oracle_jsonl.py`` in its
misbehaving modes): each attack ends in one clear verdict or error within seconds and bounded
memory, and leaves no process behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from bounded_run import run_sm5
from conformance_cases import all_vectors, write_vectors

from sm5.conformance.protocol import (
    STDERR_KEPT,
    ImplementationBroken,
    StderrTail,
    SubprocessImplementation,
)
from sm5.conformance.run import run_vector

IMPLS = Path(__file__).parent / "impls"
ORACLE_CHILD = [sys.executable, str(IMPLS / "oracle_jsonl.py")]
VECTORS = all_vectors()
VICTIM = "dmovc/zw/cond_from_y"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


def test_stderr_flood_keeps_the_tail_and_counts_the_rest() -> None:
    impl = SubprocessImplementation([*ORACLE_CHILD, "flood-crash", VICTIM], timeout=30)
    try:
        verdicts = {v.id: run_vector(impl, v) for v in VECTORS}
    finally:
        impl.close()
    reason = verdicts[VICTIM].reason
    assert verdicts[VICTIM].status == "crash"
    assert "exited with code 3" in reason
    assert "earlier bytes dropped" in reason and reason.endswith("the last line of the flood")
    assert len(reason) < 2000
    assert {v.status for k, v in verdicts.items() if k != VICTIM} == {"pass"}


def test_stderr_flood_does_not_block_the_reply() -> None:
    """100 MB on stderr before the reply: the client drains it while it waits, in memory
    bounded by the kept tail."""
    impl = SubprocessImplementation([*ORACLE_CHILD, "flood", VICTIM], timeout=30)
    try:
        verdicts = {v.id: run_vector(impl, v) for v in VECTORS}
        tail = impl._stderr
        assert tail.total > 99 * (1 << 20)
        assert len(tail._tail) <= STDERR_KEPT
    finally:
        impl.close()
    assert {v.status for v in verdicts.values()} == {"pass"}
    assert impl.starts == 1


def test_grandchild_holding_stdout_is_killed_and_does_not_stall(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("SM5_TEST_PIDFILE", str(pidfile))
    impl = SubprocessImplementation([*ORACLE_CHILD, "orphan", VICTIM], timeout=20)
    victim = next(v for v in VECTORS if v.id == VICTIM)
    try:
        start = time.monotonic()
        verdict = run_vector(impl, victim)
        elapsed = time.monotonic() - start
        assert verdict.status == "crash"
        assert "exited with code 3" in verdict.reason
        assert elapsed < 15, f"waited {elapsed:.1f} s: the time-out, not the child's exit"
        grandchild = int(pidfile.read_text())
        deadline = time.monotonic() + 5
        while _alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(grandchild), "the grandchild outlived its implementation"
        assert run_vector(impl, VECTORS[0]).status == "pass"  # a fresh child goes on
    finally:
        impl.close()


def test_out_of_order_reply_fails_that_vector() -> None:
    impl = SubprocessImplementation([*ORACLE_CHILD, "out-of-order", VICTIM], timeout=10)
    try:
        verdicts = {v.id: run_vector(impl, v) for v in VECTORS}
    finally:
        impl.close()
    index = [v.id for v in VECTORS].index(VICTIM)
    previous = VECTORS[index - 1].id
    assert verdicts[VICTIM].status == "fail"
    assert f"answers the previous request '{previous}'" in verdicts[VICTIM].reason
    assert {v.status for k, v in verdicts.items() if k != VICTIM} == {"pass"}


@pytest.mark.parametrize(("mode", "what"), [("crash", "exited with code 3"),
                                            ("hang", "time-out: no reply within")])
def test_circuit_breaker_stops_the_run(mode: str, what: str) -> None:
    impl = SubprocessImplementation([*ORACLE_CHILD, mode, "/"], timeout=0.5, startup=5,
                                    breaker=3)
    start = time.monotonic()
    verdicts = []
    try:
        with pytest.raises(ImplementationBroken, match="stopped after 3 consecutive") as caught:
            for vector in VECTORS:
                verdicts.append(run_vector(impl, vector))
    finally:
        impl.close()
    assert len(verdicts) == 2
    assert what in str(caught.value)
    assert time.monotonic() - start < 60


def test_circuit_breaker_counts_only_consecutive_failures() -> None:
    """A crash on one vector in between passes never trips a breaker of 2."""
    impl = SubprocessImplementation([*ORACLE_CHILD, "crash", VICTIM], breaker=2)
    try:
        statuses = [run_vector(impl, v).status for v in VECTORS]
    finally:
        impl.close()
    assert statuses.count("crash") == 1 and statuses.count("pass") == len(VECTORS) - 1


def test_conform_reports_the_breaker_as_one_error(tmp_path: Path) -> None:
    vectors = write_vectors(tmp_path / "cases.jsonl", VECTORS)
    impl = f"cmd:{sys.executable} {IMPLS / 'oracle_jsonl.py'} hang /"
    done = run_sm5(["conform", "--impl", impl, "--vectors", str(vectors), "--timeout", "0.5",
                    "--max-consecutive-errors", "2", "--quiet"], seconds=90)
    assert done.code == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "stopped after 2 consecutive time-outs or crashes" in lines[0]


def test_stderr_tail_arithmetic() -> None:
    tail = StderrTail(keep=10)
    tail.feed(b"0123456789abcdef")
    assert tail.total == 16
    assert tail.since(0) == "; stderr (6 earlier bytes dropped): ...6789abcdef"
    assert tail.since(12) == "; stderr: cdef"
    assert tail.since(16) == ""
