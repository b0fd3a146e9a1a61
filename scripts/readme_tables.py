"""Regenerate (or check) the tables of README.md and docs/ that come from the spec.

Each table sits between ``<!-- generated: NAME ... -->`` and ``<!-- end: NAME -->`` in the file
``FILES`` names for it; this script rewrites the rows from spec/ so they are never kept by hand.

    python scripts/readme_tables.py          # rewrite README.md and the docs pages
    python scripts/readme_tables.py --check  # exit 1 if one of them is out of date
    python scripts/readme_tables.py --vkd3d-results RESULTS.json  # record a vkd3d run, rewrite
    python scripts/readme_tables.py --dxvk-results RESULTS.json   # record a d3d11:dxvk run

The ``vkd3d`` table comes from ``conformance/vkd3d/measured.json``, the per-instruction verdict
counts of one ``sm5 conform --impl vkd3d --expect conformance/vkd3d/expectations.yaml --json``
run over the golden set, recorded with ``--vkd3d-results`` (a measurement, so it is recorded
when it is taken, not recomputed by ``--check``). The ``dxvk`` table is the same for
``sm5 conform --impl d3d11:dxvk --expect conformance/d3d11/expectations-dxvk.yaml --json``,
recorded in ``conformance/d3d11/measured-dxvk.json`` with ``--dxvk-results`` (with the DXVK
version the results file names). A run of some golden files (``--vectors``) is recorded over the
earlier rows: each instruction it covers whole replaces its row, the others stay; a run that
covers only part of a file, or another version of the implementation than the recorded rows',
is refused unless it covers the whole golden set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.model.spec import Spec, load_spec
from sm5.vectors.format import read_header

ROOT = Path(__file__).resolve().parents[1]
MEASURED_VKD3D = ROOT / "conformance" / "vkd3d" / "measured.json"
MEASURED_DXVK = ROOT / "conformance" / "d3d11" / "measured-dxvk.json"
GOLDEN = ROOT / "vectors" / "golden"
VERDICT_COLUMNS = ("pass", "xfail", "fail", "crash", "timeout", "error", "unsupported",
                   "not-applicable")


def instructions_table(spec: Spec) -> list[str]:
    rows = ["| instruction | opcode | family | template | clauses | legality rules | errata "
            "| YAML lines |", "|---|---|---|---|---|---|---|---|"]
    for name, ins in sorted(spec.instructions.items()):
        path = Path(ins.path)
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^extends:\s*(\S+)", text, re.MULTILINE)
        rows.append(f"| `{name}` | 0x{ins.opcode:02X} | {ins.family} | "
                    f"{match.group(1) if match else '-'} | {len(ins.clauses)} | "
                    f"{len(ins.rules)} | {len(ins.errata)} | {len(text.splitlines())} |")
    return rows


def outcomes_table(spec: Spec) -> list[str]:
    rows = ["| outcome | effect | scope | meaning |", "|---|---|---|---|"]
    rows += [f"| `{o.name}` | {o.effect} | {o.scope} | {o.text} |" for o in spec.model.outcomes]
    return rows


def _cell(text: str) -> str:
    """Text inside a Markdown table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def forms_table(spec: Spec) -> list[str]:
    """The acceptance forms a constraining clause may name, and how a reader checks each."""
    rows = ["| form | lanes (bits) | in the expected state | a reader checks |",
            "|---|---|---|---|"]
    rows += [f"| `{f.name}` | {', '.join(map(str, f.widths))} | `{_cell(f.json)}` | "
             f"{_cell(f.check)} |" for f in spec.model.acceptance.values()]
    return rows


def siblings_table(spec: Spec) -> list[str]:
    """Every sibling: the kernel an implementation could compute instead, and what it replaces."""
    rows = ["| instruction | sibling | what it computes instead | replaces |", "|---|---|---|---|"]
    for name, ins in sorted(spec.instructions.items()):
        for s in ins.siblings:
            replaced = ", ".join(f"`{k}` by `{_cell(v)}`" for k, v in s.replace.items())
            rows.append(f"| `{name}` | `{s.id}` | {_cell(s.text)} | {replaced} |")
    return rows


def mutants_table(spec: Spec) -> list[str]:
    """Every bundled mutant with the first line of its docstring (the bug it models)."""
    from sm5.conformance.mutants import MUTANTS

    rows = ["| mutant | kind | the bug |", "|---|---|---|"]
    for name, cls in MUTANTS.items():
        doc = (cls.__module__ and sys.modules[cls.__module__].__doc__) or ""
        summary = " ".join(doc.split("\n\n")[0].split()).removeprefix(f"{name}: ")
        kind = "validator" if "validates" in cls.capabilities else "translator"
        rows.append(f"| `{name}` | {kind} | {summary} |")
    return rows


def measured_vkd3d(results: Path) -> dict[str, object]:
    """Per-instruction verdict counts of a ``sm5 conform --json`` results file (and the
    implementation's version when the file names one)."""
    per: dict[str, Counter[str]] = {}
    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
        for vector_id, result in doc["results"].items():
            per.setdefault(vector_id.split("/")[0], Counter())[result["status"]] += 1
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError,
            AttributeError) as exc:
        raise SystemExit(f"{results}: not a results file of sm5 conform --json "
                         f"({type(exc).__name__}: {exc})") from None
    measured: dict[str, object] = {
        "impl": doc.get("impl", "vkd3d"),
        "vectors": sum(sum(c.values()) for c in per.values()),
        "per_instruction": {name: dict(sorted(c.items())) for name, c in sorted(per.items())}}
    if isinstance(doc.get("impl_version"), str):
        measured["impl_version"] = doc["impl_version"]
    return measured


def golden_counts(golden: Path = GOLDEN) -> dict[str, int]:
    """Vectors per subject (instruction or program family) of the golden set: each file's
    header count."""
    try:
        return {header.subject: header.count
                for header in map(read_header, sorted(golden.glob("*.jsonl")))}
    except Sm5Error as exc:
        raise SystemExit(str(exc)) from None


def recorded(results: Path, measured: Path, golden: Path = GOLDEN) -> dict[str, object]:
    """The recording ``measured`` becomes with the run ``results``: every subject the run covers
    whole replaces its row, rows of subjects it does not run stay (those no longer in the golden
    set are dropped). Refused: a run covering part of a golden file, and a run of another
    implementation version than the recorded rows' that does not cover the whole set."""
    run = measured_vkd3d(results)
    ran = _rows(run, results)
    counts = golden_counts(golden)
    partial = [f"{name} ({sum(c.values())} of {counts.get(name, 0)} vectors)"
               for name, c in ran.items() if sum(c.values()) != counts.get(name)]
    if partial:
        raise SystemExit(f"{results}: the run covers only part of these golden files: "
                         f"{', '.join(partial)}; run every vector of each")
    try:
        old = json.loads(measured.read_text(encoding="utf-8")) if measured.exists() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{measured}: not a recording ({type(exc).__name__}: {exc})") from None
    rows = _rows(old, measured) if old else {}
    whole = set(ran) == set(counts)
    if rows and not whole and old.get("impl_version") != run.get("impl_version"):
        raise SystemExit(f"{results}: {run.get('impl_version')!r} is not the version of the "
                         f"recorded rows ({old.get('impl_version')!r}); record a run of the "
                         "whole golden set instead")
    merged = {name: row for name, row in rows.items() if name in counts and name not in ran}
    merged.update(ran)
    doc: dict[str, object] = {
        "impl": run["impl"], "vectors": sum(sum(row.values()) for row in merged.values()),
        "per_instruction": dict(sorted(merged.items()))}
    if "impl_version" in run:
        doc["impl_version"] = run["impl_version"]
    return doc


def _rows(doc: object, where: Path) -> dict[str, dict[str, int]]:
    """A recording's ``per_instruction``: verdict counts by instruction, checked."""
    rows = doc.get("per_instruction") if isinstance(doc, dict) else None
    if not isinstance(rows, dict) or not all(
            isinstance(name, str) and isinstance(row, dict)
            and all(isinstance(k, str) and isinstance(v, int) for k, v in row.items())
            for name, row in rows.items()):
        raise SystemExit(f"{where}: not a recording (expected per_instruction: an object of "
                         "verdict counts per instruction)")
    return rows


def _count(n: int) -> str:
    return f"{n:,}"


def vkd3d_table(spec: Spec) -> list[str]:
    """The recorded vkd3d run: verdicts per instruction, with a total row."""
    return measured_table(MEASURED_VKD3D)


def dxvk_table(spec: Spec) -> list[str]:
    """The recorded d3d11:dxvk run: verdicts per instruction, with a total row."""
    return measured_table(MEASURED_DXVK)


def measured_table(path: Path) -> list[str]:
    """A recorded run (``measured_vkd3d``'s document): verdicts per instruction and a total."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    per: dict[str, dict[str, int]] = doc["per_instruction"]
    columns = [c for c in VERDICT_COLUMNS if any(c in counts for counts in per.values())]
    rows = ["| instruction | " + " | ".join(columns) + " |",
            "|---|" + "---|" * len(columns)]
    for name, counts in per.items():
        rows.append(f"| `{name}` | " + " | ".join(_count(counts.get(c, 0)) for c in columns)
                    + " |")
    totals = [sum(counts.get(c, 0) for counts in per.values()) for c in columns]
    rows.append(f"| all {len(per)} ({_count(int(doc['vectors']))} vectors) | "
                + " | ".join(_count(t) for t in totals) + " |")
    return rows


def families_table(spec: Spec) -> list[str]:
    """The README's short table: each family, its instructions and clauses; the flow-control
    instructions last (their legality rules: the structure rules and their operand and stage
    rules)."""
    per: dict[str, list[str]] = {}
    for name, ins in sorted(spec.instructions.items()):
        per.setdefault(ins.family, []).append(name)
    rows = ["| family | instructions | clauses | legality rules |", "|---|---|---|---|"]
    for family, names in sorted(per.items()):
        clauses = sum(len(spec.instructions[n].clauses) for n in names)
        rules = sum(len(spec.instructions[n].rules) for n in names)
        rows.append(f"| {family} | {len(names)}: {', '.join(f'`{n}`' for n in names)} | "
                    f"{clauses} | {rules} |")
    control = spec.control.instructions
    rows.append(f"| flow control | {len(control)}: {', '.join(f'`{n}`' for n in sorted(control))}"
                f" | {sum(len(c.clauses) for c in control.values())} | "
                f"{len(spec.control_rules)} |")
    files = [f.name for f in spec.model.register_files if f.stands_for]
    declared = [d.name for d in spec.declarations.declarations.values()
                if set(d.registers) & set(files)]
    state_rules = [r for r in spec.declarations.rules if set(r.applies) & {
        *declared, *(d.name for d in spec.declarations.declarations.values() if not d.registers)}]
    rows.append(f"| program state | register files {', '.join(f'`{f}`' for f in files)}; "
                f"declarations {', '.join(f'`{d}`' for d in declared)} | - | "
                f"{len(state_rules) + len(spec.declarations.program_rules)} |")
    return rows


#: The file of must-reject flow-control programs (vectors/programs/flow_structure.yaml).
FLOW_MUST_REJECT = "flow_structure"


def implementations_table(spec: Spec) -> list[str]:
    """The README's short table: each recorded run of the golden set (vkd3d, d3d11:dxvk),
    verdicts per family; the flow-control files are the family ``flow control``, any other file
    of programs the family ``programs``."""
    runs = (("vkd3d", MEASURED_VKD3D), ("d3d11:dxvk", MEASURED_DXVK))
    per: dict[tuple[str, str], Counter[str]] = {}
    for impl, path in runs:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for name, counts in doc["per_instruction"].items():
            ins = spec.instructions.get(name)
            family = (ins.family if ins else "flow control" if name in spec.control.instructions
                      or name == FLOW_MUST_REJECT else "programs")
            per.setdefault((impl, family), Counter()).update(counts)
    columns = [c for c in VERDICT_COLUMNS if any(c in counts for counts in per.values())]
    rows = ["| implementation | family | " + " | ".join(columns) + " |",
            "|---|---|" + "---|" * len(columns)]
    order = {impl: k for k, (impl, _) in enumerate(runs)}
    for (impl, family), counts in sorted(per.items(), key=lambda x: (order[x[0][0]], x[0][1])):
        rows.append(f"| {impl} | {family} | "
                    + " | ".join(_count(counts.get(c, 0)) for c in columns) + " |")
    return rows


TABLES: dict[str, Callable[[Spec], list[str]]] = {
    "families": families_table,
    "implementations": implementations_table,
    "instructions": instructions_table,
    "outcomes": outcomes_table,
    "forms": forms_table,
    "mutants": mutants_table,
    "siblings": siblings_table,
    "vkd3d": vkd3d_table,
    "dxvk": dxvk_table,
}
#: The file that holds each table, relative to the checkout.
FILES: dict[str, str] = {
    "families": "README.md",
    "implementations": "README.md",
    "instructions": "docs/spec/format.md",
    "outcomes": "docs/spec/rules.md",
    "forms": "docs/spec/rules.md",
    "mutants": "docs/testing/mutants.md",
    "siblings": "docs/spec/format.md",
    "vkd3d": "docs/implementations/vkd3d.md",
    "dxvk": "docs/implementations/dxvk.md",
}


def regenerate(text: str, spec: Spec, names: Iterable[str] = tuple(TABLES),
               where: str = "README.md") -> str:
    for name in names:
        pattern = re.compile(rf"(<!-- generated: {name}\b[^>]*-->\n)(.*?)(<!-- end: {name} -->)",
                             re.DOTALL)
        if not pattern.search(text):
            raise SystemExit(f"{where}: no generated table {name!r}")
        rows = "\n".join(TABLES[name](spec)) + "\n"
        text = pattern.sub(lambda m, rows=rows: m.group(1) + rows + m.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    parser.add_argument("--vkd3d-results", type=Path, metavar="RESULTS",
                        help="record this sm5 conform --json run of vkd3d, then rewrite")
    parser.add_argument("--dxvk-results", type=Path, metavar="RESULTS",
                        help="record this sm5 conform --json run of d3d11:dxvk, then rewrite")
    args = parser.parse_args(argv)
    for results, measured in ((args.vkd3d_results, MEASURED_VKD3D),
                              (args.dxvk_results, MEASURED_DXVK)):
        if results is not None:
            atomic_write_text(measured, json.dumps(recorded(results, measured),
                                                   indent=1, sort_keys=True) + "\n")
    spec = load_spec(ROOT / "spec")
    stale = []
    for relative in sorted(set(FILES.values())):
        path = ROOT / relative
        current = path.read_text(encoding="utf-8")
        fresh = regenerate(current, spec, [n for n, f in FILES.items() if f == relative],
                           relative)
        if fresh == current:
            continue
        stale.append(relative)
        if not args.check:
            atomic_write_text(path, fresh)
    if args.check and stale:
        print(f"{', '.join(stale)}: generated tables are out of date; run "
              "scripts/readme_tables.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
