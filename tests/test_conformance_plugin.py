"""The pytest plugin, run as a user runs it: ``python -m pytest --sm5-impl=...`` in a fresh folder.

Each test starts pytest in a subprocess (the plugin is installed through its ``pytest11`` entry
point) inside a temporary folder holding the hand-picked vectors and a decoy test file that must
never be collected by a conformance run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance_cases import all_vectors, write_vectors

IMPLS = Path(__file__).parent / "impls"
VECTORS = all_vectors()
IDS = sorted(v.id for v in VECTORS)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_vectors(tmp_path / "cases.jsonl", VECTORS)
    (tmp_path / "test_decoy.py").write_text("def test_decoy():\n    assert False\n")
    return tmp_path


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(folder),
         *args], cwd=folder, capture_output=True, text=True, timeout=600, check=False)


def results(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def test_inert_without_sm5_impl(folder: Path) -> None:
    proc = pytest_run(folder, "-q")
    assert proc.returncode == 1  # the decoy ran and failed: ordinary collection is untouched
    assert "1 failed" in proc.stdout
    assert "sm5:" not in proc.stdout


def test_sm5_options_need_sm5_impl(folder: Path) -> None:
    proc = pytest_run(folder, "--sm5-shard=1/2")
    assert proc.returncode == 4
    assert "--sm5-shard needs --sm5-impl" in proc.stderr


def test_oracle_passes_and_node_ids_are_vector_ids(folder: Path) -> None:
    proc = pytest_run(folder, "--sm5-impl=oracle", "--sm5-vectors=cases.jsonl",
                      "--collect-only", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = [line for line in proc.stdout.splitlines() if "/" in line and " " not in line]
    assert collected == [v.id for v in VECTORS]
    proc = pytest_run(folder, "--sm5-impl=oracle", "--sm5-vectors=cases.jsonl", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(VECTORS)} passed" in proc.stdout
    assert f"sm5: oracle: {len(VECTORS)} pass" in proc.stdout


def test_failure_names_vector_program_clause_and_diff(folder: Path) -> None:
    proc = pytest_run(folder, "--sm5-impl=mutant:atomic_returns_new",
                      "--sm5-vectors=cases.jsonl", "-q", "-k", "iadd and raw")
    assert proc.returncode == 1
    out = proc.stdout
    for text in ("fail: 1 value(s) outside the acceptance sets",
                 "vector imm_atomic_iadd/raw/wraps (cases.jsonl:11)",
                 "    imm_atomic_iadd r0.y, u0, r1.x, l(5)",
                 "target cs_5_0, runtime 11.0",
                 "clauses: imm_atomic_iadd.invocation.active, imm_atomic_iadd.uav_raw.in_bounds, "
                 "imm_atomic_iadd.result.wrap",
                 "  r0.y: expected 0xfffffffe, observed 0x00000003",
                 "1 failed"):
        assert text in out, out


@pytest.mark.slow  # long tier (docs/testing.md)
def test_serial_xdist_and_shards_give_the_same_verdicts(folder: Path) -> None:
    common = ["--sm5-impl=mutant:write_mask_ignored", "--sm5-vectors=cases.jsonl", "-q"]
    serial = pytest_run(folder, *common, "--sm5-results=serial.json")
    assert serial.returncode == 1  # the mutant is killed
    parallel = pytest_run(folder, *common, "-n", "2", "--sm5-results=parallel.json")
    assert parallel.returncode == 1, parallel.stdout + parallel.stderr
    assert (folder / "serial.json").read_bytes() == (folder / "parallel.json").read_bytes()
    merged: dict[str, Any] = {}
    for i in (1, 2):
        shard = pytest_run(folder, *common, f"--sm5-shard={i}/2", f"--sm5-results=s{i}.json")
        assert shard.returncode in (0, 1)
        part = results(folder / f"s{i}.json")
        assert part["shard"] == f"{i}/2"
        assert not set(part["results"]) & set(merged)  # shards are disjoint
        merged.update(part["results"])
    whole = results(folder / "serial.json")
    assert merged == whole["results"]
    assert sorted(whole["results"]) == IDS
    failing = sorted(k for k, v in whole["results"].items() if v["status"] == "fail")
    assert failing == ["store_structured/in_bounds/xy_offset4",
                       "store_structured/in_bounds/xyz_offset0",
                       "store_structured/tgsm/in_bounds_index1"]


def test_expectations_xfail_and_stale_entries(folder: Path) -> None:
    (folder / "expect.yaml").write_text(
        "- id: store_structured/in_bounds/*\n  status: fail\n  reason: known mask bug\n"
        "  link: https://example.org/bug\n"
        "- id: store_structured/tgsm/*\n  status: xfail\n  reason: flaky\n", encoding="utf-8")
    proc = pytest_run(folder, "--sm5-impl=mutant:write_mask_ignored",
                      "--sm5-vectors=cases.jsonl", "--sm5-expect=expect.yaml", "-q",
                      "--sm5-results=r.json")
    # in_bounds/swizzled passes on this mutant although listed as a strict failure: xpass.
    assert proc.returncode == 1
    done = results(folder / "r.json")["results"]
    # The naive translator behind the mutants says which instructions it does not implement.
    assert all("does not implement" in v["reason"] for v in done.values()
               if v["status"] == "unsupported")
    got = {k: v["status"] for k, v in done.items()
           if v["status"] not in ("pass", "not-applicable", "unsupported")}
    assert got == {"store_structured/in_bounds/swizzled": "xpass",
                   "store_structured/in_bounds/xy_offset4": "xfail",
                   "store_structured/in_bounds/xyz_offset0": "xfail",
                   "store_structured/tgsm/in_bounds_index1": "xfail"}


def test_subprocess_crash_through_the_plugin_does_not_stop_the_run(folder: Path) -> None:
    child = f"{sys.executable} {IMPLS / 'oracle_jsonl.py'} crash imm_atomic_iadd/typed"
    proc = pytest_run(folder, f"--sm5-impl=cmd:{child}", "--sm5-vectors=cases.jsonl", "-q",
                      "--sm5-results=r.json")
    assert proc.returncode == 1
    doc = results(folder / "r.json")
    failed = sorted(k for k, v in doc["results"].items() if v["status"] != "pass")
    assert failed == ["imm_atomic_iadd/typed/index2", "imm_atomic_iadd/typed/oob"]
    assert {doc["results"][k]["status"] for k in failed} == {"crash"}
    assert doc["counts"]["crash"] == 2
    assert doc["counts"]["pass"] == len(VECTORS) - 2
    assert "exited with code 3" in doc["results"]["imm_atomic_iadd/typed/oob"]["reason"]


@pytest.mark.parametrize(("option", "message"), [
    ("--sm5-impl=nonsense", "sm5: unknown implementation 'nonsense'"),
    ("--sm5-impl=mutant:nope", "sm5: mutant:nope: no mutant 'nope'"),
    ("--sm5-impl=oracle --sm5-shard=3/2", "sm5: shard '3/2': expected i/n"),
    ("--sm5-impl=oracle --sm5-vectors=missing.jsonl", "sm5: missing.jsonl: no such vector file"),
    ("--sm5-impl=oracle --sm5-expect=missing.yaml", "sm5: missing.yaml: cannot read"),
])
def test_bad_options_are_usage_errors(folder: Path, option: str, message: str) -> None:
    proc = pytest_run(folder, "--sm5-vectors=cases.jsonl", *option.split())
    assert proc.returncode == 4
    assert message in proc.stderr
