"""Every rule, clause, erratum and vector id the README and the manual (docs/, the generated
instruction reference aside) name exists in the spec or the golden set, the expectations example
parses, and the vkd3d, D3D11 and DXVK tables name the files' predicates."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from sm5.conformance.expectations import load_expectations, parse_expectations
from sm5.conformance.run import iter_selected, vector_files
from sm5.conformance.vkd3d.adapter import EXPECTATIONS_FILE
from sm5.oracle.files.yamlio import load_yaml
from sm5.oracle.model.spec import load_default

ROOT = Path(__file__).resolve().parents[1]
#: The hand-written pages: the README and the manual, without the generated reference.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md")
                                     if "instructions" not in p.relative_to(ROOT / "docs").parts)]
SPEC = load_default()
INSTRUCTIONS = "|".join(sorted(SPEC.instructions, key=len, reverse=True))
#: ``<instruction>.<part>[.<part>...]``, not a file name (``dmovc.jsonl``).
DOTTED = re.compile(rf"\b(?:{INSTRUCTIONS})(?:\.[A-Za-z0-9_]+)+\b(?!\.)")
#: ``<instruction>/<category>/<number or glob>``.
SLASHED = re.compile(rf"\b(?:{INSTRUCTIONS})/[a-z0-9_*?-]+/(?:[0-9]{{4,}}|[*?][^\s`\"']*)")
FILE_SUFFIXES = (".jsonl", ".yaml", ".json", ".py")


@pytest.fixture(scope="module")
def text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def spec_ids() -> set[str]:
    ids = {r.id for r in SPEC.legality_rules()} | {c.id for c in SPEC.all_clauses()}
    ids |= {e.id for i in SPEC.instructions.values() for e in i.errata}
    return ids


CATEGORIES = ("boundary", "mask-swizzle", "registers", "cell", "reject", "witness", "random",
              "regression", "limit", "alias", "illegal")


def test_rule_clause_and_erratum_ids_exist(text: str) -> None:
    # JUnit class names (`<instruction>.<category>`) are not spec ids
    named = {m for m in DOTTED.findall(text) if not m.endswith(FILE_SUFFIXES)
             and m.split(".", 1)[1] not in CATEGORIES}
    assert named, "the docs name spec ids"
    assert sorted(named - spec_ids()) == []


def test_vector_ids_exist_in_the_golden_set(text: str) -> None:
    named = set(SLASHED.findall(text))
    assert named, "the docs name vector ids"
    golden = [v.id for _, _, v in iter_selected(vector_files(None))]
    known = set(golden)
    missing = sorted(n for n in named if n not in known
                     and not (any(c in n for c in "*?") and fnmatch.filter(golden, n)))
    assert missing == []


def test_the_expectations_example_parses(tmp_path: Path) -> None:
    section = page("testing/expectations.md")
    example = section[section.index("```yaml\n") + 8:section.index("```\n", 8)]
    path = tmp_path / "example.yaml"
    path.write_text(example, encoding="utf-8")
    entries = parse_expectations(load_yaml(path), str(path)).entries
    assert [e.status for e in entries] == ["xfail", "xfail", "fail"]
    assert all(not e.match.empty for e in entries[:2])


def test_the_vkd3d_table_names_every_predicate_of_the_file() -> None:
    text = page("implementations/vkd3d.md")
    section = text[text.index("**Known divergences** (`conformance/vkd3d/expectations.yaml`"):]
    table = section[:section.index("**Throughput**")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = [re.match(r"\| `([^`]+)`", row).group(1) for row in rows]  # type: ignore[union-attr]
    assert named == [e.label for e in load_expectations(EXPECTATIONS_FILE).entries]


def test_the_d3d11_table_names_every_predicate_of_both_files() -> None:
    from sm5.conformance.d3d11.expectations_file import FILES

    text = page("implementations/d3d11.md")
    section = text[text.index("**Known divergences** (`conformance/d3d11/expectations.yaml`"):]
    table = section[:section.index("**What runs where.**")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = sorted(re.match(r"\| `([^`]+)`", row).group(1) for row in rows)  # type: ignore[union-attr]
    labels = {e.label for renderer in ("gl", "vulkan")
              for e in load_expectations(FILES[renderer]).entries}
    assert named == sorted(labels)


def test_the_dxvk_table_names_every_predicate_of_its_file() -> None:
    from sm5.conformance.d3d11.expectations_file import FILES

    text = page("implementations/dxvk.md")
    section = text[text.index("**Known divergences** (`conformance/d3d11/expectations-dxvk.yaml`"):]
    table = section[:section.index("**Throughput")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = [re.match(r"\| `([^`]+)`", row).group(1) for row in rows]  # type: ignore[union-attr]
    assert named == [e.label for e in load_expectations(FILES["dxvk"]).entries]
