"""An instruction is data: no Python module outside tests/, benchmarks/ and the mutants names a
specified instruction (scripts/instruction_python.py prints the per-instruction count)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_names_an_instruction() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "instruction_python.py")],
                         capture_output=True, text=True, timeout=120, check=False)
    rows = [line.split() for line in run.stdout.splitlines()[1:]]
    names = sorted([*(p.stem for p in (ROOT / "spec" / "instructions").glob("*.yaml")),
                    *(p.stem for p in (ROOT / "spec" / "control").glob("*.yaml"))])
    assert [row[0] for row in rows] == names
    named = {row[0]: row[-1] for row in rows if row[1] != "0"}
    assert named == {}, f"Python modules naming an instruction: {named}"
    assert run.returncode == 0, run.stderr
