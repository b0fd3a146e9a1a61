"""The JSON Lines subprocess protocol: a conforming child passes; a crashing, hanging, garbling or
confused child fails exactly the vector it misbehaves on, and the run goes on."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conformance_cases import all_vectors

from sm5.conformance.compare import Verdict
from sm5.conformance.implementations import ImplementationError, resolve
from sm5.conformance.protocol import DEFAULT_TIMEOUT, SubprocessImplementation
from sm5.conformance.run import run_vector

IMPLS = Path(__file__).parent / "impls"
ORACLE_CHILD = [sys.executable, str(IMPLS / "oracle_jsonl.py")]
VECTORS = all_vectors()
VICTIM = "dmovc/zw/cond_from_y"  # the vector the misbehaving children misbehave on


def run_all(impl: SubprocessImplementation) -> dict[str, Verdict]:
    try:
        return {v.id: run_vector(impl, v) for v in VECTORS}
    finally:
        impl.close()


def test_plain_python_child_passes_every_vector_with_one_process() -> None:
    impl = SubprocessImplementation(ORACLE_CHILD)
    verdicts = run_all(impl)
    assert {v.status for v in verdicts.values()} == {"pass"}
    assert impl.starts == 1


# Only the hanging child needs a short per-vector limit (the test waits it out once); the others
# keep the default, so that a busy machine never turns an honest vector into a time-out.
HANG_LIMIT = 4.0


@pytest.mark.parametrize(("mode", "status", "reason"), [
    ("crash", "crash", "the implementation exited with code 3 before answering; stderr: fatal: "
                       "cannot translate this instruction"),
    ("segfault", "crash", "the implementation was killed by signal SIGSEGV before answering"),
    ("hang", "timeout", "time-out: no reply within 4 s (the per-vector limit 4 s); the "
                        "implementation was stopped"),
    ("garbage", "fail", "the reply is not JSON: 'Segmentation fault (core dumped)?'"),
    ("wrong-id", "fail", f"the reply answers id '{VICTIM}-other', not '{VICTIM}'"),
])
def test_misbehaving_child_fails_that_vector_only(mode: str, status: str, reason: str) -> None:
    impl = SubprocessImplementation([*ORACLE_CHILD, mode, VICTIM],
                                    timeout=HANG_LIMIT if mode == "hang" else DEFAULT_TIMEOUT)
    verdicts = run_all(impl)
    assert verdicts[VICTIM] == Verdict(status, reason)  # type: ignore[arg-type]
    others = {k: v.status for k, v in verdicts.items() if k != VICTIM}
    assert set(others.values()) == {"pass"}
    assert len(others) == len(VECTORS) - 1
    # The victim is not the last vector: a fresh child answered the ones after it.
    assert list(verdicts).index(VICTIM) < len(VECTORS) - 1
    assert impl.starts == 2


def test_extra_reply_line_is_reported_on_the_next_vector() -> None:
    impl = SubprocessImplementation([*ORACLE_CHILD, "chatty", VICTIM])
    verdicts = run_all(impl)
    after = [v.id for v in VECTORS][[v.id for v in VECTORS].index(VICTIM) + 1]
    assert verdicts[VICTIM].status == "pass"
    assert verdicts[after] == Verdict(
        "fail", f"the reply answers the previous request '{VICTIM}', not '{after}': it wrote "
                "more than one line for that one")
    assert sum(v.status == "fail" for v in verdicts.values()) == 1


def test_shell_script_answering_unsupported_fails_nothing() -> None:
    if shutil.which("sh") is None:
        pytest.skip("no POSIX shell on this machine")
    verdicts = run_all(SubprocessImplementation(["sh", str(IMPLS / "unsupported.sh")]))
    assert {v.status for v in verdicts.values()} == {"unsupported"}
    assert verdicts[VICTIM].reason == "a shell script executes nothing"


def test_javascript_child_executes_store_structured() -> None:
    if shutil.which("node") is None:
        pytest.skip("node (JavaScript) is not installed")
    impl = resolve(f"cmd:node {IMPLS / 'store_structured.js'}",
                   capabilities=frozenset({"executes"}))
    assert isinstance(impl, SubprocessImplementation)
    verdicts = run_all(impl)
    statuses = {k: v.status for k, v in verdicts.items()}
    assert statuses["store_structured/in_bounds/swizzled"] == "pass"
    assert statuses["store_structured/oob_index/wraps_to_zero"] == "pass"
    assert statuses["store_structured/illegal/mask_xz"] == "not-applicable"
    assert statuses["dmovc/zw/cond_from_y"] == "unsupported"
    assert "fail" not in statuses.values()


def test_missing_program_is_reported_before_the_run() -> None:
    with pytest.raises(ImplementationError, match="program 'no-such-sm5-impl' not found"):
        resolve("cmd:no-such-sm5-impl --flag")


def test_child_that_cannot_start_fails_each_vector_with_the_reason(tmp_path: Path) -> None:
    impl = SubprocessImplementation([str(tmp_path / "missing")])
    verdict = run_vector(impl, VECTORS[0])
    assert verdict.status == "fail"
    assert verdict.reason.startswith(f"cannot start {tmp_path / 'missing'}: ")
