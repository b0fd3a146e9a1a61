"""Recording a measured run (``scripts/readme_tables.py --vkd3d-results``/``--dxvk-results``):
a run of some golden files replaces the rows of the instructions it covers whole and keeps the
others; a partial file or a foreign version is refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "vectors" / "golden"


def tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_tables",
                                                  ROOT / "scripts" / "readme_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden(tmp_path: Path, *names: str) -> Path:
    """A golden folder holding the headers of these real golden files (all a recording reads)."""
    folder = tmp_path / "golden"
    folder.mkdir()
    for name in names:
        with (GOLDEN / f"{name}.jsonl").open(encoding="utf-8") as handle:
            (folder / f"{name}.jsonl").write_text(handle.readline(), encoding="utf-8")
    return folder


def run_file(tmp_path: Path, counts: dict[str, int], version: str = "1.0") -> Path:
    """A results file with ``counts[name]`` passing vectors of each instruction."""
    results = {f"{name}/x/{i:04d}": {"status": "pass"}
               for name, n in counts.items() for i in range(n)}
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"impl": "vkd3d", "impl_version": version, "results": results}),
                    encoding="utf-8")
    return path


def recording(tmp_path: Path, rows: dict[str, object], version: str = "1.0") -> Path:
    path = tmp_path / "measured.json"
    path.write_text(json.dumps({"impl": "vkd3d", "impl_version": version, "vectors": 0,
                                "per_instruction": rows}), encoding="utf-8")
    return path


def header_count(name: str) -> int:
    with (GOLDEN / f"{name}.jsonl").open(encoding="utf-8") as handle:
        count: int = json.loads(handle.readline())["count"]
    return count


def test_a_run_of_some_files_replaces_their_rows_and_keeps_the_others(tmp_path: Path) -> None:
    folder = golden(tmp_path, "div", "log")
    measured = recording(tmp_path, {"div": {"pass": 1, "xfail": 2}, "log": {"fail": 7},
                                    "gone": {"pass": 5}})
    doc = tables().recorded(run_file(tmp_path, {"log": header_count("log")}), measured, folder)
    assert doc["per_instruction"] == {"div": {"pass": 1, "xfail": 2},
                                      "log": {"pass": header_count("log")}}
    assert doc["vectors"] == 3 + header_count("log")
    assert doc["impl_version"] == "1.0"


def test_a_run_of_part_of_a_file_is_refused(tmp_path: Path) -> None:
    folder = golden(tmp_path, "div", "log")
    measured = recording(tmp_path, {})
    with pytest.raises(SystemExit, match=rf"div \(5 of {header_count('div')} vectors\)"):
        tables().recorded(run_file(tmp_path, {"div": 5}), measured, folder)


def test_another_version_is_recorded_only_over_the_whole_set(tmp_path: Path) -> None:
    folder = golden(tmp_path, "div", "log")
    measured = recording(tmp_path, {"div": {"pass": 1}, "log": {"pass": 1}}, version="1.0")
    with pytest.raises(SystemExit, match="not the version of the recorded rows"):
        tables().recorded(run_file(tmp_path, {"div": header_count("div")}, version="2.0"),
                          measured, folder)
    whole = {"div": header_count("div"), "log": header_count("log")}
    doc = tables().recorded(run_file(tmp_path, whole, version="2.0"), measured, folder)
    assert doc["impl_version"] == "2.0"
    assert doc["per_instruction"] == {name: {"pass": n} for name, n in whole.items()}


def test_a_broken_recording_is_named(tmp_path: Path) -> None:
    folder = golden(tmp_path, "div")
    measured = tmp_path / "measured.json"
    measured.write_text("{not json", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"measured\.json: not a recording"):
        tables().recorded(run_file(tmp_path, {"div": header_count("div")}), measured, folder)


def test_a_recording_with_malformed_rows_is_named(tmp_path: Path) -> None:
    folder = golden(tmp_path, "div")
    measured = recording(tmp_path, {"div": ["pass", 3]})
    with pytest.raises(SystemExit, match=r"measured\.json: not a recording \(expected "):
        tables().recorded(run_file(tmp_path, {"div": header_count("div")}), measured, folder)
