"""Print, per specified instruction, the Python lines outside tests/ that name it.

An instruction is data (spec/instructions/<name>.yaml on the shared definitions); the goal is
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


def pattern(name: str) -> re.Pattern[str]:
    """Where a line names the instruction: the word itself; for an instruction named like a
    Python keyword (``and``, ``or``, ``not``), which prose and code use as words, only the forms
    that can mean nothing else: a string literal of the name, a clause or rule id
    (``and.result.bits``), a vector id (``and/random/0001``)."""
    n = re.escape(name)
    if keyword.iskeyword(name):
        return re.compile(rf"""(?<![\w.])(['"]){n}\1|\b{n}\.[a-z_]+\.[a-z_]|\b{n}/[a-z-]+/\d""")
    return re.compile(rf"\b{n}\b")


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
    files = [(f, f.relative_to(ROOT).as_posix(), f.read_text(encoding="utf-8").splitlines())
             for f in python_files() if f.resolve() != Path(__file__).resolve()]
    worst = 0
    print(f"{'instruction':22} {'modules':>7} {'lines':>5}  mutant lines  modules")
    for name in names:
        word = pattern(name)
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
