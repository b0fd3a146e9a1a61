"""``benchmarks/conformance_overhead.py`` runs and times what it names: every part it wraps is a
function of the run's path today (a renamed one would silently time nothing)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conformance_cases import all_vectors, write_vectors

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "conformance_overhead", ROOT / "benchmarks" / "conformance_overhead.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_part_is_a_function_of_the_run() -> None:
    bench = load_benchmark()
    for owner, name, _ in bench.PARTS:
        assert callable(getattr(owner, name)), (owner, name)


def test_the_parts_are_timed_and_put_back(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark()
    before = [vars(owner)[name] for owner, name, _ in bench.PARTS]
    cases = write_vectors(tmp_path / "cases.jsonl", all_vectors())
    status = bench.main(["--vectors", str(cases), "--repeat", "1", "--budget", "1000",
                         "--parts"])
    out = capsys.readouterr().out
    assert status == 0
    assert f"vectors: {len(all_vectors())} in 1 files" in out
    parts = out.split("one run with a timer per part:", 1)[1].splitlines()[1:]
    calls = {line.split(" calls  ", 1)[1]: int(line.split(" s  ", 1)[1].split()[0])
             for line in parts if " calls  " in line}
    assert {what for _, _, what in bench.PARTS} == set(calls)
    assert calls["legality"] > 0 and calls["the program's execution (the interpreter)"] > 0
    assert calls["judging the answer"] == len(all_vectors())
    assert [vars(owner)[name] for owner, name, _ in bench.PARTS] == before
