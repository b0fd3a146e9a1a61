"""Offline runs: ``sm5 requests`` writes what the protocol sends, an implementation answers the
file elsewhere, ``sm5 verify`` judges the answers exactly as a live run would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.conformance.guards import request_vector
from sm5.conformance.mutants import MUTANTS
from sm5.conformance.offline import ReplayImplementation, load_replies
from sm5.conformance.run import run

IMPLS = Path(__file__).parent / "impls"
CHILD = [sys.executable, str(IMPLS / "oracle_jsonl.py")]
VECTORS = all_vectors()
REJECTED = sorted(v.id for v in VECTORS if v.rejected)


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    return write_vectors(tmp_path / "cases.jsonl", VECTORS)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("capabilities", ["executes,validates", "executes"])
def test_requests_are_the_bytes_the_protocol_sends(cases: Path, tmp_path: Path,
                                                   capabilities: str) -> None:
    received = tmp_path / "received.jsonl"
    child = " ".join([*CHILD, "record", str(received)])
    assert main(["conform", "--impl", f"cmd:{child}", "--vectors", str(cases),
                 "--capabilities", capabilities, "--quiet"]) == 0
    written = tmp_path / "requests.jsonl"
    assert main(["requests", "--vectors", str(cases), "--out", str(written),
                 "--capabilities", capabilities]) == 0
    assert written.read_bytes() == received.read_bytes()
    ids = [doc["id"] for doc in lines(written)]
    if capabilities == "executes":
        assert sorted(set(v.id for v in VECTORS) - set(ids)) == REJECTED
    else:
        assert ids == [v.id for v in VECTORS]
    assert all(set(doc) == {"id", "program", "target", "runtime", "state"}
               for doc in lines(written))


def test_an_offline_run_gives_the_live_results(cases: Path, tmp_path: Path) -> None:
    requests, replies = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    assert main(["requests", "--vectors", str(cases), "--out", str(requests)]) == 0
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        subprocess.run(CHILD, stdin=stdin, stdout=stdout, check=True, timeout=120)
    name = "cmd:" + " ".join(CHILD)
    assert main(["conform", "--impl", name, "--vectors", str(cases), "--json",
                 str(tmp_path / "live.json"), "--junit", str(tmp_path / "live.xml"),
                 "--quiet"]) == 0
    assert main(["verify", "--results", str(replies), "--name", name, "--vectors", str(cases),
                 "--json", str(tmp_path / "offline.json"), "--junit",
                 str(tmp_path / "offline.xml"), "--quiet"]) == 0
    assert (tmp_path / "offline.json").read_bytes() == (tmp_path / "live.json").read_bytes()
    assert (tmp_path / "offline.xml").read_bytes() == (tmp_path / "live.xml").read_bytes()


def test_failing_replies_give_the_live_verdicts_and_diffs(cases: Path, tmp_path: Path) -> None:
    """Replies recorded from a mutant judge as the mutant run live: same fails, same diffs."""
    mutant = MUTANTS["write_mask_ignored"]()
    replies = tmp_path / "replies.jsonl"
    with replies.open("w", encoding="utf-8") as out:
        for vector in VECTORS:
            result = mutant.run(request_vector(vector))  # what `sm5 requests` sends
            answer = result.state if result.status == "state" else result.reason
            out.write(json.dumps({"id": vector.id, result.status: answer}) + "\n")
    assert main(["conform", "--impl", "mutant:write_mask_ignored", "--vectors", str(cases),
                 "--json", str(tmp_path / "live.json"), "--quiet"]) == 1
    assert mutant.capabilities == frozenset({"executes"})
    assert main(["verify", "--results", str(replies), "--name", mutant.name,
                 "--capabilities", "executes", "--vectors", str(cases), "--json",
                 str(tmp_path / "offline.json"), "--quiet"]) == 1
    live = json.loads((tmp_path / "live.json").read_text(encoding="utf-8"))
    assert live["counts"]["fail"] == 3
    assert (tmp_path / "offline.json").read_bytes() == (tmp_path / "live.json").read_bytes()


def test_missing_wrong_and_recorded_crash_replies(cases: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    by_id = {v.id: v for v in VECTORS}
    legal = [v.id for v in VECTORS if not v.rejected]
    replies = tmp_path / "replies.jsonl"
    docs = [{"id": legal[0], "crash": "killed by signal SIGSEGV"},
            {"id": legal[1], "timeout": "no answer in 10 s"},
            {"id": legal[2], "state": {"r0": [1, 2, 3]}},
            {"id": legal[3], "unsupported": "no UAVs", "rejected": "both"},
            {"id": legal[4], "unsupported": "not yet"},
            {"id": "someone/else/0001", "unsupported": "not ours"}]
    replies.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    assert main(["verify", "--results", str(replies), "--vectors", str(cases), "--json",
                 str(tmp_path / "r.json"), "--quiet"]) == 1
    results = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    assert results[legal[0]] == {"status": "crash", "reason": "killed by signal SIGSEGV"}
    assert results[legal[1]]["status"] == "timeout"
    assert results[legal[2]]["status"] == "fail"
    assert "the reply's state is malformed" in results[legal[2]]["reason"]
    assert results[legal[3]]["status"] == "fail"
    assert "exactly one of" in results[legal[3]]["reason"]
    assert results[legal[4]] == {"status": "unsupported", "reason": "not yet"}
    missing = [i for i in by_id if i not in {d["id"] for d in docs}]
    assert {results[i]["status"] for i in missing} == {"fail"}
    assert all(results[i]["reason"] == f"no reply for this vector in {replies}"
               for i in missing)
    assert "1 replies answer no selected vector (first: someone/else/0001)" in \
        capsys.readouterr().err


@pytest.mark.parametrize(("content", "message"), [
    ('{"id": "a/b/1", "unsupported": "x"}\nnot json\n', ":2: not JSON"),
    ('[1, 2]\n', ":1: expected a reply object with a string \"id\""),
    ('{"id": "a/b/1", "unsupported": "x"}\n{"id": "a/b/1", "unsupported": "y"}\n',
     ":2: a second reply for 'a/b/1' (the first is line 1)"),
])
def test_unreadable_replies_file_is_bad_input(cases: Path, tmp_path: Path, content: str,
                                              message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(content, encoding="utf-8")
    assert main(["verify", "--results", str(replies), "--vectors", str(cases)]) == 2
    err = capsys.readouterr().err
    assert f"{replies}{message}" in err
    assert "Traceback" not in err
    assert main(["verify", "--results", str(tmp_path / "absent.jsonl"), "--vectors",
                 str(cases)]) == 2


def test_replay_is_an_ordinary_implementation(cases: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    requests = tmp_path / "requests.jsonl"
    main(["requests", "--vectors", str(cases), "--out", str(requests),
          "--select", "dmovc/*"])
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        subprocess.run(CHILD, stdin=stdin, stdout=stdout, check=True, timeout=120)
    impl = ReplayImplementation("replayed", load_replies(replies), str(replies))
    report = run(impl, [cases], select=["dmovc/*"])
    assert set(report.verdicts) == {v.id for v in VECTORS if v.id.startswith("dmovc/")}
    assert {v.status for v in report.verdicts.values()} == {"pass"}


def test_requests_with_dxbc_export_only_the_requested_vectors(cases: Path,
                                                              tmp_path: Path) -> None:
    out, whole = tmp_path / "dxbc", tmp_path / "all"
    assert main(["requests", "--vectors", str(cases), "--out", str(tmp_path / "r.jsonl"),
                 "--select", "store_structured/*", "--dxbc", str(out)]) == 0
    assert main(["dxbc", "--vectors", str(cases), "--out", str(whole)]) == 0
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    full = json.loads((whole / "index.json").read_text(encoding="utf-8"))
    wanted = {k: v for k, v in full["vectors"].items() if k.startswith("store_structured/")}
    assert wanted and index["vectors"] == wanted
    for entry in wanted.values():
        assert (out / entry["file"]).read_bytes() == (whole / entry["file"]).read_bytes()
