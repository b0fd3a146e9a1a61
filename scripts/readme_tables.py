"""Regenerate (or check) the README tables that come from the spec.

Each table sits between ``<!-- generated: NAME ... -->`` and ``<!-- end: NAME -->``; this script
rewrites the rows from spec/ so they are never kept by hand.

    python scripts/readme_tables.py          # rewrite README.md
    python scripts/readme_tables.py --check  # exit 1 if README.md is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from sm5.oracle.fileio import atomic_write_text
from sm5.oracle.spec import Spec, load_spec

ROOT = Path(__file__).resolve().parents[1]


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


TABLES: dict[str, Callable[[Spec], list[str]]] = {
    "instructions": instructions_table,
    "outcomes": outcomes_table,
    "mutants": mutants_table,
}


def regenerate(text: str, spec: Spec) -> str:
    for name, table in TABLES.items():
        pattern = re.compile(rf"(<!-- generated: {name}\b[^>]*-->\n)(.*?)(<!-- end: {name} -->)",
                             re.DOTALL)
        if not pattern.search(text):
            raise SystemExit(f"README.md: no generated table {name!r}")
        rows = "\n".join(table(spec)) + "\n"
        text = pattern.sub(lambda m, rows=rows: m.group(1) + rows + m.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = parser.parse_args(argv)
    readme = ROOT / "README.md"
    current = readme.read_text(encoding="utf-8")
    fresh = regenerate(current, load_spec(ROOT / "spec"))
    if args.check:
        if fresh != current:
            print("README.md: generated tables are out of date; run scripts/readme_tables.py",
                  file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        atomic_write_text(readme, fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
