"""The generated tables of the README and the docs and the generated instruction reference are
current, and the manual's worked example of adding an instruction
(docs/spec/adding-an-instruction.md: one YAML file on a template) really is enough: loaded into
a copy of spec/, the new instruction checks, executes and generates vectors with no Python
written for it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json
from sm5.oracle.model.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "spec" / "adding-an-instruction.md").read_text(encoding="utf-8")


def test_generated_tables_are_current() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tables.py"), "--check"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr


def _example() -> tuple[int, str]:
    match = re.search(r"is these (\d+) lines\n\(`spec/instructions/\w+\.yaml`\):"
                      r"\n\n```yaml\n(.*?)```", PAGE, re.DOTALL)
    assert match, "the page shows no example instruction file"
    return int(match.group(1)), match.group(2)


def test_the_example_instruction_is_one_file_on_a_template(tmp_path: Path) -> None:
    stated, text = _example()
    assert len(text.splitlines()) == stated
    name = re.search(r"^name: (\w+)$", text, re.MULTILINE)
    assert name is not None
    root = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", root)
    # The page shows the committed file verbatim; it loads on its template alone.
    assert (root / "instructions" / f"{name.group(1)}.yaml").read_text(encoding="utf-8") == text
    spec = load_spec(root)
    ins = spec.instruction(name.group(1))
    assert {c.id for c in ins.clauses} >= {f"{ins.name}.uav_raw.in_bounds",
                                           f"{ins.name}.result.combined"}
    # old 0b0101 | src0 0b0011 = 0b0111 at byte 4 of a raw u#; dst0.z receives the old word
    program = parse_program(["dcl_uav_raw u0", f"{ins.name} r0.z, u0, l(4), l(3)"], spec=spec)
    state = state_from_json({"r0": [9, 9, 9, 9], "u0": {"kind": "raw", "data": [1, 5, 2]}})
    result = execute(program, state, spec=spec)
    assert result.outcomes == ("defined",)
    assert result.state is not None
    assert expected_to_json(result.state) == {
        "r0": [9, 9, 5, 9], "u0": {"kind": "raw", "data": [1, 7, 2]}}


@pytest.mark.slow  # long tier (docs/testing.md)
def test_the_instruction_reference_is_current() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "reference_pages.py"), "--check"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr


def test_every_instruction_has_a_page_listed_in_the_navigation() -> None:
    spec = load_spec(ROOT / "spec")
    folder = ROOT / "docs" / "instructions"
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert {p.stem for p in folder.glob("*.md")} == {*spec.instructions, "index", "flow-control",
                                                    "program-state"}
    # program state: every register file with elements, declaration rule, program rule and
    # erratum is on its page
    state = (folder / "program-state.md").read_text(encoding="utf-8")
    assert "instructions/program-state.md" in config
    assert all(f"`{f.name}`" in state for f in spec.model.register_files if f.stands_for)
    assert all(f"`{r.id}`" in state for r in spec.declarations.program_rules)
    assert all(f"`{e.id}`" in state for e in spec.declarations.errata)
    # the flow-control instructions share one page: every clause, rule and erratum is on it
    page = (folder / "flow-control.md").read_text(encoding="utf-8")
    assert "instructions/flow-control.md" in config
    for ins in spec.control.instructions.values():
        assert f"## {ins.name}" in page
        assert all(f"`{c.id}`" in page for c in ins.clauses), ins.name
    assert all(f"`{r.id}`" in page for r in spec.control_rules)
    assert all(f"`{e.id}`" in page for e in spec.control.errata)
    for name in spec.instructions:
        assert f"instructions/{name}.md" in config, name
        page = (folder / f"{name}.md").read_text(encoding="utf-8")
        # every clause and every erratum of the instruction is on its page
        assert all(f"`{c.id}`" in page for c in spec.instruction(name).clauses), name
        assert all(f"`{e.id}`" in page for e in spec.instruction(name).errata), name


def test_the_reference_names_a_broken_data_file(tmp_path: Path) -> None:
    from sm5.oracle.errors import Sm5Error
    from sm5.reports.reference import pages

    measured = tmp_path / "conformance" / "vkd3d" / "measured.json"
    measured.parent.mkdir(parents=True)
    measured.write_text("{not json", encoding="utf-8")
    try:
        pages(load_spec(ROOT / "spec"), tmp_path)
    except Sm5Error as exc:
        assert str(measured) in str(exc)
    else:
        raise AssertionError("a broken measured.json was read")
