"""Print, per specified instruction, the Python lines outside tests/ that name it.

An instruction is data (spec/instructions/<name>.yaml on the shared definitions, and the
flow-control instructions of spec/control/<name>.yaml); the goal is
that no Python module names one, except a kernel module of its own where the rule language
cannot say what it computes. The bundled mutants (conformance/mutants/) model bugs of one
instruction each and are listed apart. Exit status 1 if an instruction is named in more than
one module outside tests/, benchmarks/ and the mutants.

    python scripts/instruction_python.py
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("oracle", "vectors", "conformance", "reports", "sm5", "scripts")
APART = ("conformance/mutants",)
#: Flow-control instructions named by English words (or Python keywords) that code and prose
#: use with other meanings: only their clause ids and vector ids count.
ENGLISH = frozenset({"if", "else", "loop", "break", "continue", "switch", "case", "default",
                     "call", "label", "discard"})
#: Instructions named like Python builtins, library functions, rule-language builtins or common
#: methods (``min``, ``max``, ``set.add``, ``math.sqrt``): only their clause and
#: rule ids (``min.nan.both``) and vector ids count.
BUILTINS = frozenset({"min", "max", "add", "sqrt"})


def pattern(name: str, *, clauses: tuple[str, ...] = ()) -> re.Pattern[str]:
    """Where a line names the instruction: the word itself; for an instruction named like a
    Python keyword (``and``, ``or``, ``not``) or, with ``word_like``, a flow-control instruction
    (``loop``, ``call``, ``label``, ``case``: words of prose and code, attribute names), only the
    forms that can mean nothing else: a string literal of the name (not for a flow-control word:
    ``"call"`` is also pytest's phase), a clause or rule id (``and.result.bits``; for a
    flow-control word, its own ``clauses``, as ``case.selected``), a vector id
    (``and/random/0001``)."""
    n = re.escape(name)
    if clauses:  # a string literal "call" is pytest's phase, "default" an outcome's effect
        ids = "|".join(re.escape(c) for c in clauses)
        return re.compile(rf"""\b(?:{ids})\b|\b{n}/[a-z-]+/\d""")
    if name in BUILTINS:  # "min" is also the rule language's builtin and a YAML field
        return re.compile(rf"\b{n}\.[a-z_]+\.[a-z_]|\b{n}/[a-z-]+/\d")
    if keyword.iskeyword(name):
        return re.compile(rf"""(?<![\w.])(['"]){n}\1|\b{n}\.[a-z_]+\.[a-z_]|\b{n}/[a-z-]+/\d""")
    return re.compile(rf"\b{n}\b")


def _clause_ids(name: str) -> tuple[str, ...]:
    """The clause ids of a flow-control instruction, read from its file (``name.clause``)."""
    text = (ROOT / "spec" / "control" / f"{name}.yaml").read_text(encoding="utf-8")
    return tuple(re.findall(rf"id: ({re.escape(name)}\.[a-z_]+)", text))


def python_files() -> list[Path]:
    seen: set[Path] = set()
    out = []
    for top in CODE:
        for path in sorted((ROOT / top).rglob("*.py")):
            real = path.resolve()
            if real in seen or path.is_symlink() or any(p.is_symlink() for p in path.parents
                                                        if ROOT in p.parents):
                continue
            seen.add(real)
            out.append(path)
    return out


def main() -> int:
    names = sorted(p.stem for p in (ROOT / "spec" / "instructions").glob("*.yaml"))
    control = {p.stem for p in (ROOT / "spec" / "control").glob("*.yaml")}
    names = sorted([*names, *control])
    files = [(f, f.relative_to(ROOT).as_posix(), f.read_text(encoding="utf-8").splitlines())
             for f in python_files() if f.resolve() != Path(__file__).resolve()]
    worst = 0
    print(f"{'instruction':22} {'modules':>7} {'lines':>5}  mutant lines  modules")
    for name in names:
        word = pattern(name, clauses=_clause_ids(name) if name in ENGLISH else ())
        modules: dict[str, int] = {}
        apart = 0
        for _, rel, lines in files:
            hits = sum(1 for line in lines if word.search(line))
            if not hits:
                continue
            if rel.startswith(APART):
                apart += hits
            else:
                modules[rel] = hits
        worst = max(worst, len(modules))
        print(f"{name:22} {len(modules):7} {sum(modules.values()):5}  {apart:12}  "
              + (", ".join(sorted(modules)) or "-"))
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
