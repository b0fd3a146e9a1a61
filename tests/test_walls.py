"""The walls between the layers, read from the source files with :mod:`ast`.

The layers are oracle <- vectors <- conformance <- reports: a layer may import the layers to its
left and never one to its right. Inside the oracle, each group of modules may import only the
groups :data:`ORACLE_MAY_IMPORT` names. The package list of pyproject.toml is checked against
the folders too, since every package there is listed by hand.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The layers, lowest first: each may import those before it, none after it.
LAYERS = ("sm5.oracle", "sm5.vectors", "sm5.conformance", "sm5.reports")

#: Groups of the oracle's modules by what they do: a module belongs to the group of the longest
#: prefix of its name listed here.
ORACLE_GROUPS: Mapping[str, str] = {
    "sm5.oracle.errors": "errors",
    "sm5.oracle.files": "files",
    "sm5.oracle.rulelang": "rulelang",
    "sm5.oracle.machine": "machine",
    "sm5.oracle.model": "model",
    "sm5.oracle.asm": "asm",
    "sm5.oracle.legality": "legality",
    "sm5.oracle.execution": "execution",
    "sm5.oracle.proofs": "proofs",
    "sm5.oracle.dxbc": "dxbc",
    "sm5.oracle.cli": "cli",
}

#: Which groups each group may import (its own always). ``cli`` is the oracle's top: the
#: command-line front ends may import every group.
ORACLE_MAY_IMPORT: Mapping[str, frozenset[str]] = {
    "errors": frozenset(),
    "files": frozenset({"errors"}),
    "rulelang": frozenset({"errors"}),
    "machine": frozenset({"errors"}),
    "model": frozenset({"errors", "files", "rulelang", "machine"}),
    "asm": frozenset({"errors", "model", "machine"}),
    "legality": frozenset({"errors", "model", "machine", "rulelang"}),
    "execution": frozenset({"errors", "model", "machine", "rulelang", "legality"}),
    "proofs": frozenset({"errors", "model", "rulelang"}),
    "dxbc": frozenset({"errors", "model", "machine"}),
    "cli": frozenset({"errors", "files", "rulelang", "machine", "model", "asm", "legality",
                      "execution", "proofs", "dxbc"}),
}


@dataclass(frozen=True)
class Import:
    """One imported module name, where it is written."""

    importer: str
    module: str
    file: str
    line: int


def package_folders(root: Path) -> dict[str, Path]:
    """pyproject.toml's ``[tool.setuptools.package-dir]``: package name -> folder."""
    table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = table["tool"]["setuptools"].get("package-dir", {})
    return {name: root / folder for name, folder in mapped.items()}


def modules(folders: Mapping[str, Path]) -> Iterator[tuple[str, Path]]:
    """(module name, file) of every source file of the mapped folders."""
    for package, folder in sorted(folders.items()):
        for file in sorted(folder.rglob("*.py")):
            parts = file.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join((package, *parts)), file


def imports_of(name: str, file: Path, root: Path) -> Iterator[Import]:
    """The ``sm5`` modules ``file`` (module ``name``) imports, relative imports resolved."""
    where = file.relative_to(root).as_posix() if file.is_relative_to(root) else str(file)
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"), filename=str(file))):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - node.level + 1]
                base = ".".join([*up, base]) if base else ".".join(up)
            # ``from a import b`` may import the module a.b: count both names.
            found = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for module in found:
            if module == "sm5" or module.startswith("sm5."):
                yield Import(name, module, where, node.lineno)


def _layer(module: str) -> int | None:
    return next((i for i, top in enumerate(LAYERS)
                 if module == top or module.startswith(top + ".")), None)


def _group(module: str, groups: Mapping[str, str]) -> str | None:
    best = max((p for p in groups if module == p or module.startswith(p + ".")),
               key=len, default=None)
    return groups[best] if best is not None else None


def _package_groups(names: list[str], groups: Mapping[str, str]) -> dict[str, str]:
    """A package of the oracle that no entry names belongs to the one group of its modules."""
    out = {}
    for package in names:
        if package == LAYERS[0] or _group(package, groups) is not None:
            continue
        inside = {_group(n, groups) for n in names if n.startswith(package + ".")}
        if len(inside) == 1 and None not in inside:
            out[package] = str(next(iter(inside)))
    return out


def violations(root: Path, groups: Mapping[str, str] = ORACLE_GROUPS,
               may_import: Mapping[str, frozenset[str]] = ORACLE_MAY_IMPORT) -> list[str]:
    """Every import that crosses a wall the wrong way, as ``file:line: what`` (one per import
    statement and wall)."""
    out: dict[tuple[str, int, str], str] = {}
    found = list(modules(package_folders(root)))
    groups = {**_package_groups([name for name, _ in found], groups), **groups}
    for name, file in found:
        own_layer = _layer(name)
        own_group = _group(name, groups) if own_layer == 0 and name != LAYERS[0] else None
        if own_layer == 0 and name != LAYERS[0] and own_group is None:
            out[(name, 0, "group")] = (f"{file.relative_to(root)}: {name} belongs to no group of "
                                       "the oracle")
            continue
        for imp in imports_of(name, file, root):
            layer = _layer(imp.module)
            if own_layer is not None and layer is not None and layer > own_layer:
                out.setdefault((imp.file, imp.line, "layer"), (
                    f"{imp.file}:{imp.line}: {name} ({LAYERS[own_layer]}) imports "
                    f"{imp.module} ({LAYERS[layer]}), a layer above it"))
            # ``from sm5.oracle import x`` names the package, then x: x decides.
            if own_group is None or layer != 0 or imp.module == LAYERS[0]:
                continue
            group = _group(imp.module, groups)
            if group is None:
                out.setdefault((imp.file, imp.line, "group"), (
                    f"{imp.file}:{imp.line}: {name} imports {imp.module}, which belongs to no "
                    "group of the oracle"))
            elif group != own_group and group not in may_import[own_group]:
                out.setdefault((imp.file, imp.line, "group"), (
                    f"{imp.file}:{imp.line}: {name} ({own_group}) imports {imp.module} "
                    f"({group}); {own_group} may import only "
                    f"{', '.join(sorted(may_import[own_group])) or 'nothing'}"))
    return list(out.values())


def test_no_import_crosses_a_wall() -> None:
    assert violations(ROOT) == []


def test_every_group_is_stated() -> None:
    assert set(ORACLE_GROUPS.values()) == set(ORACLE_MAY_IMPORT)
    for group, allowed in ORACLE_MAY_IMPORT.items():
        assert allowed <= set(ORACLE_MAY_IMPORT) - {group}, group


def test_the_walls_are_read_from_the_sources() -> None:
    """Sanity: the reader finds the imports the oracle is known to make."""
    found = {imp.module for name, file in modules(package_folders(ROOT))
             if name.startswith("sm5.conformance.") for imp in imports_of(name, file, ROOT)}
    assert any(m.startswith("sm5.oracle.") for m in found)
    assert any(m.startswith("sm5.vectors.") for m in found)


def _tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    """A synthetic project: pyproject.toml mapping four folders, and the given files."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"sm5.oracle" = "oracle"\n"sm5.vectors" = "vectors"\n'
        '"sm5.conformance" = "conformance"\n"sm5.reports" = "reports"\n', encoding="utf-8")
    for top in ("oracle", "vectors", "conformance", "reports"):
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("", encoding="utf-8")
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


GROUPS = {"sm5.oracle.low": "low", "sm5.oracle.high": "high"}
MAY = {"low": frozenset[str](), "high": frozenset({"low"})}


@pytest.mark.parametrize(("files", "expected"), [
    ({"oracle/low.py": "from sm5.vectors.x import y\n"}, "a layer above it"),
    ({"vectors/a.py": "import sm5.conformance.run\n"}, "a layer above it"),
    ({"conformance/a.py": "def f():\n    from sm5.reports import render\n"}, "a layer above it"),
    ({"oracle/low.py": "from sm5.oracle import high\n"}, "(low) imports sm5.oracle.high (high)"),
    ({"oracle/low.py": "from . import high\n"}, "(low) imports sm5.oracle.high (high)"),
    ({"oracle/other.py": ""}, "belongs to no group"),
])
def test_a_violating_import_is_caught(tmp_path: Path, files: dict[str, str],
                                      expected: str) -> None:
    root = _tree(tmp_path, {"oracle/low.py": "", "oracle/high.py": "", **files})
    found = violations(root, GROUPS, MAY)
    assert len(found) == 1, found
    assert expected in found[0]


def test_allowed_imports_pass(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "oracle/low.py": "import os\n",
        "oracle/high.py": "from sm5.oracle import low\nfrom .low import x\n",
        "vectors/a.py": "from sm5.oracle.low import x\n",
        "conformance/a.py": "import sm5.vectors.a\nfrom sm5.oracle.high import y\n",
        "reports/a.py": "from sm5.conformance.a import z\n",
        "oracle/pkg/__init__.py": "", "oracle/pkg/b.py": "from sm5.oracle.low import x\n",
    })
    assert violations(root, {**GROUPS, "sm5.oracle.pkg.b": "high"}, MAY) == []


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """setuptools installs only the listed packages: a folder left out would be missing from
    the wheel."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(table["tool"]["setuptools"]["packages"])
    folders = {"sm5"} | {name for name, file in modules(package_folders(ROOT))
                         if file.name == "__init__.py"}
    assert listed == folders
