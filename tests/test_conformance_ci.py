"""Results CI systems read: JUnit XML from ``sm5 conform --junit`` and from the plugin under
pytest's ``--junitxml``, the ``crash`` and ``timeout`` verdicts, and ``--select``."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.conformance.compare import apply_expectation, judge
from sm5.conformance.expectations import load_expectations
from sm5.conformance.interface import Result

IMPLS = Path(__file__).parent / "impls"
VECTORS = all_vectors()
IDS = [v.id for v in VECTORS]
CHILD = f"{sys.executable} {IMPLS / 'oracle_jsonl.py'}"
VICTIM = "dmovc/zw/cond_from_y"
MASK_BUG_FAILS = ["store_structured/in_bounds/xy_offset4", "store_structured/in_bounds/xyz_offset0"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_vectors(tmp_path / "cases.jsonl", VECTORS)
    (tmp_path / "expect.yaml").write_text(
        "- id: store_structured/tgsm/*\n  status: xfail\n  reason: flaky tgsm\n"
        "- id: imm_atomic_iadd/helper/*\n  status: unsupported\n  reason: no helper lanes\n",
        encoding="utf-8")
    return tmp_path


def cases_of(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {c.get("name", ""): c for c in root.iter("testcase")}


def results(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["results"]
    return doc


def test_sm5_conform_junit_failures_skips_and_classnames(folder: Path) -> None:
    junit, out = folder / "r.xml", folder / "r.json"
    code = main(["conform", "--impl", "mutant:write_mask_ignored", "--vectors",
                 str(folder / "cases.jsonl"), "--expect", str(folder / "expect.yaml"),
                 "--junit", str(junit), "--json", str(out), "--quiet"])
    assert code == 1
    cases = cases_of(junit)
    assert list(cases) == IDS  # run order
    assert {n: c.get("classname") for n, c in cases.items()} == {
        i: i.rsplit("/", 1)[0].replace("/", ".") for i in IDS}
    verdicts = results(out)
    for name in MASK_BUG_FAILS:
        failure = cases[name].find("failure")
        assert failure is not None
        assert failure.get("type") == "fail"
        assert failure.get("message") == f"fail: {verdicts[name]['reason']}"
        assert failure.text is not None
        assert failure.text.splitlines() == verdicts[name]["diffs"]
        assert all(": expected 0x" in line and "observed 0x" in line
                   for line in failure.text.splitlines())
    xfail = cases["store_structured/tgsm/in_bounds_index1"].find("skipped")
    assert xfail is not None and xfail.get("type") == "xfail"
    assert "flaky tgsm" in xfail.get("message", "")
    unsupported = cases["imm_atomic_iadd/helper/no_write"].find("skipped")
    assert unsupported is not None and unsupported.get("type") == "unsupported"
    assert "no helper lanes" in unsupported.get("message", "")
    passing = [n for n, v in verdicts.items() if v["status"] == "pass"]
    assert passing and all(len(cases[n]) == 0 for n in passing)
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "2" and root.get("errors") == "0"
    assert root.get("tests") == str(len(IDS))


def test_sm5_conform_junit_is_deterministic(folder: Path) -> None:
    for name in ("a.xml", "b.xml"):
        main(["conform", "--impl", "mutant:write_mask_ignored", "--vectors",
              str(folder / "cases.jsonl"), "--junit", str(folder / name), "--quiet"])
    assert (folder / "a.xml").read_bytes() == (folder / "b.xml").read_bytes()


@pytest.mark.parametrize(("mode", "status", "text"), [
    ("segfault", "crash", "killed by signal SIGSEGV"),
    ("crash", "crash", "exited with code 3"),
    ("hang", "timeout", "time-out: no reply within"),
])
def test_crash_and_timeout_are_verdicts_of_their_own(folder: Path, mode: str, status: str,
                                                     text: str) -> None:
    junit, out = folder / "r.xml", folder / "r.json"
    # Only the hanging child needs a short limit; the others keep the default, so that a busy
    # machine never turns an honest vector into a time-out.
    limit = ["--timeout", "4"] if mode == "hang" else []
    code = main(["conform", "--impl", f"cmd:{CHILD} {mode} {VICTIM}", *limit,
                 "--vectors", str(folder / "cases.jsonl"), "--select", "dmovc/*",
                 "--junit", str(junit), "--json", str(out), "--quiet"])
    assert code == 1
    verdicts = results(out)
    assert sorted(verdicts) == sorted(i for i in IDS if i.startswith("dmovc/"))
    assert verdicts[VICTIM]["status"] == status
    assert text in verdicts[VICTIM]["reason"]
    assert {v["status"] for k, v in verdicts.items() if k != VICTIM} == {"pass"}
    error = cases_of(junit)[VICTIM].find("error")
    assert error is not None and error.get("type") == status
    assert text in error.get("message", "")


def test_a_listed_crash_is_an_expected_failure(folder: Path) -> None:
    vector = next(v for v in VECTORS if v.id == VICTIM)
    expect = folder / "crash.yaml"
    expect.write_text(f"- id: {VICTIM}\n  status: fail\n  reason: known crash\n",
                      encoding="utf-8")
    expectations = load_expectations(expect)
    verdict = judge(vector, Result.crash("killed by signal SIGSEGV"), expectations)
    assert verdict.status == "xfail"
    assert "crash: killed by signal SIGSEGV" in verdict.reason
    timeout = apply_expectation(judge(vector, Result.timeout("no reply")),
                                expectations.lookup(vector))
    assert timeout.status == "xfail"


def test_select_by_id_and_glob(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = folder / "r.json"
    assert main(["conform", "--impl", "oracle", "--vectors", str(folder / "cases.jsonl"),
                 "--select", "store_structured/oob_*/*,dmovc/sat/clamps", "--json", str(out),
                 "--quiet"]) == 0
    assert sorted(results(out)) == ["dmovc/sat/clamps", "store_structured/oob_index/just_past",
                                    "store_structured/oob_index/wraps_to_zero",
                                    "store_structured/oob_offset/undefined"]
    capsys.readouterr()
    assert main(["conform", "--impl", "oracle", "--vectors", str(folder / "cases.jsonl"),
                 "--select", "nothing/like/this*"]) == 2
    assert "no vector id matches nothing/like/this*" in capsys.readouterr().err


def test_plugin_junitxml(folder: Path) -> None:
    junit = folder / "pytest.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(folder),
         "--sm5-impl=mutant:write_mask_ignored", "--sm5-vectors=cases.jsonl",
         "--sm5-expect=expect.yaml", "--sm5-select=store_structured/*,imm_atomic_iadd/helper/*",
         f"--junitxml={junit}", "-q"],
        cwd=folder, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cases = cases_of(junit)
    wanted = [i for i in IDS if i.startswith(("store_structured/", "imm_atomic_iadd/helper/"))]
    assert list(cases) == wanted
    assert all(c.get("classname") == n.rsplit("/", 1)[0].replace("/", ".")
               for n, c in cases.items())
    for name in MASK_BUG_FAILS:
        failure = cases[name].find("failure")
        assert failure is not None and failure.text is not None
        assert f"vector {name} (cases.jsonl:" in failure.text
        assert "values outside their acceptance sets:" in failure.text
        props = {p.get("name"): p.get("value") for p in cases[name].iter("property")}
        assert props["sm5_status"] == "fail"
        assert props["sm5_reason"].endswith("value(s) outside the acceptance sets")
    xfail = cases["store_structured/tgsm/in_bounds_index1"].find("skipped")
    assert xfail is not None and "flaky tgsm" in xfail.get("message", "")
    skipped = cases["imm_atomic_iadd/helper/no_write"].find("skipped")
    assert skipped is not None
    assert skipped.get("message", "").startswith("unsupported: ")
    assert "no helper lanes" in skipped.get("message", "")
