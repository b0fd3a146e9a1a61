"""Outcome and acceptance-form names are data (spec/model.yaml): no module outside tests/,
benchmarks/ and the mutants writes one as a string literal; every module asks the model
(``Model.plain_outcome``, ``rejected_outcome``, ``outcomes_where``, the forms registry)."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("oracle", "vectors", "conformance", "reports", "sm5")
#: Modules allowed to write a name, and why: the forms registry is where the model's acceptance
#: table is read (checked equal to it at load); the reply kinds of the protocol share the word
#: "rejected" with an outcome but mean a reply ("the implementation refused the program").
ALLOWED = {
    "oracle/model/spec.py": "the model's loader: it reads the tables (the word 'rejected' is an "
                            "effect)",
    "oracle/machine/forms.py": "the builders of the model's acceptance forms, keyed by form name",
    "oracle/machine/state.py": "the JSON encoding of acceptance sets ({'one_of': [...]}), the "
                               "vector "
                       "format that each form's `json` field in the model shows",
    "conformance/protocol.py": "reply kind",
    "conformance/interface.py": "reply status",
    "conformance/compare.py": "reply status",
}


def _vocabulary() -> set[str]:
    model = yaml.safe_load((ROOT / "spec" / "model.yaml").read_text(encoding="utf-8"))
    return {o["name"] for o in model["outcomes"]} | {a["name"] for a in model["acceptance"]}


def _modules() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")
                  if "mutants" not in p.parts and not p.is_symlink()
                  and not any(part.is_symlink() for part in p.parents))


def literals_naming(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """The string literals of a module (docstrings aside) equal to one of ``names``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value in names and id(node) not in docstrings]


def test_no_module_names_an_outcome_or_a_form() -> None:
    names = _vocabulary()
    found = {}
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        hits = literals_naming(path, names)
        if hits:
            found[rel] = hits
    assert found == {}, f"outcome or form names written in Python: {found}"


def test_the_check_sees_a_literal(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""dst_undefined in a docstring is prose."""\n'
                      'X = "dst_undefined"\nY = ("one_of", "other")\n', encoding="utf-8")
    assert literals_naming(module, _vocabulary()) == [(2, "dst_undefined"), (3, "one_of")]
