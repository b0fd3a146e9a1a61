"""mypy (strict, pyproject.toml's [tool.mypy]) over every module of the ``sm5`` package, each
under its import name.

The top-level folders are mapped into ``sm5`` by ``[tool.setuptools.package-dir]``; mypy finds
modules by folder and does not read that table, so this script names every source file's module
itself (``oracle/model/spec.py`` is ``sm5.oracle.model.spec``) and runs mypy's build on that list.

    python scripts/typecheck.py
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]


def package_folder(root: Path, package: str, folders: dict[str, str]) -> Path:
    """The folder of ``package``: under its longest mapped prefix, else under ``root``."""
    top = max((p for p in folders if package == p or package.startswith(p + ".")), key=len,
              default=None)
    if top is None:
        return root.joinpath(*package.split("."))
    rest = package[len(top):].lstrip(".")
    return root.joinpath(folders[top], *(rest.split(".") if rest else ()))


def sources(root: Path) -> list[BuildSource]:
    """Every ``.py`` file of the packages pyproject.toml lists, named as it is imported."""
    table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    setup = table["tool"]["setuptools"]
    folders: dict[str, str] = setup.get("package-dir", {})
    out = []
    for package in setup["packages"]:
        for file in sorted(package_folder(root, package, folders).glob("*.py")):
            module = package if file.stem == "__init__" else f"{package}.{file.stem}"
            out.append(BuildSource(str(file.relative_to(root)), module, None))
    return out


def main() -> int:
    _, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), "-c", "pass"])
    found = sources(ROOT)
    try:
        result = build.build(found, options)
    except CompileError as error:
        print("\n".join(error.messages))
        return 2
    for line in result.errors:
        print(line)
    if result.errors:
        files = {line.split(":")[0] for line in result.errors}
        print(f"Found errors in {len(files)} file(s) (checked {len(found)} source files)")
        return 1
    print(f"Success: no issues found in {len(found)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
