"""What a golden file's check depends on, and the record of the files already checked.

``sm5 vectors check`` re-checks a file (schema, oracle re-run, byte-identical regeneration) only
when something it depends on changed since it last passed:

* the file itself (its bytes);
* its instruction's spec file and the templates of its ``extends`` chain;
* the shared definitions (``spec/shared/*.yaml``) it uses: a shared file named after a
  ``semantics`` block (``memory.yaml`` for ``semantics.memory``) is used by the instructions
  whose expanded document has that block; any other shared file counts as used by every one;
* what every instruction reads: ``model.yaml``, ``declarations.yaml``, ``encoding.yaml``,
  ``auxiliary.yaml``, the JSON Schemas;
* the code that reads and makes vectors (every ``.py`` file of the oracle and the generator),
  and the level and seed the manifest names.

The record lives in the user's cache folder (``$XDG_CACHE_HOME/sm5-conformance``), one file per
checked folder, written atomically; a missing or unreadable record means everything is checked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.files.yamlio import load_yaml
from sm5.vectors.programs import PROGRAMS

RECORD_FORMAT = "sm5-vectors-check/1"
#: Spec files every instruction reads.
COMMON_SPEC = ("model.yaml", "declarations.yaml", "encoding.yaml", "auxiliary.yaml")
#: Package folders whose code decides what a vector file must hold.
CODE_FOLDERS = ("oracle", "vectors")


def _digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


@cache
def code_fingerprint() -> str:
    """sha256 over the oracle's and the generator's source files (names and contents)."""
    package = Path(__file__).resolve().parent.parent
    files = sorted(p for folder in CODE_FOLDERS for p in (package / folder).rglob("*.py")
                   if "__pycache__" not in p.parts)
    return _digest(part for p in files for part in
                   (str(p.relative_to(package)).encode(), p.read_bytes()))


def _template_chain(spec_root: Path, doc: Mapping[str, Any]) -> list[Path]:
    chain: list[Path] = []
    name = doc.get("extends")
    while isinstance(name, str) and len(chain) < 8:
        path = spec_root / "templates" / f"{name}.yaml"
        if not path.is_file():
            break  # the spec check reports an unknown template
        chain.append(path)
        name = load_yaml(path).get("extends")
    return chain


def dependencies(spec_root: Path, instruction: str) -> list[Path]:
    """The spec files the vectors of ``instruction`` depend on (see the module docstring)."""
    own = spec_root / "instructions" / f"{instruction}.yaml"
    files = [own] if own.is_file() else []
    blocks: set[str] = set()
    if not own.is_file() and (PROGRAMS / f"{instruction}.yaml").is_file():
        # a file of programs: any instruction may be in them
        files = sorted((spec_root / "instructions").glob("*.yaml"))
        files += sorted((spec_root / "templates").glob("*.yaml"))
        files += sorted((spec_root / "shared").glob("*.yaml"))
        files += [spec_root / name for name in COMMON_SPEC if (spec_root / name).is_file()]
        return files + sorted((spec_root / "schema").glob("*.json"))
    if own.is_file():
        doc = load_yaml(own)
        templates = _template_chain(spec_root, doc)
        files += templates
        for source in [doc, *(load_yaml(t) for t in templates)]:
            semantics = source.get("semantics")
            if isinstance(semantics, Mapping):
                blocks |= set(semantics)
    semantics_keys = _semantics_keys(spec_root)
    for shared in sorted((spec_root / "shared").glob("*.yaml")):
        if shared.stem in blocks or shared.stem not in semantics_keys:
            files.append(shared)
    files += [spec_root / name for name in COMMON_SPEC if (spec_root / name).is_file()]
    files += sorted((spec_root / "schema").glob("*.json"))
    return files


def _semantics_keys(spec_root: Path) -> set[str]:
    """Names an instruction's ``semantics`` may hold (from the instruction schema)."""
    schema_path = spec_root / "schema" / "instruction.schema.json"
    try:
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            semantics = node.get("properties", {}).get("semantics") \
                if isinstance(node.get("properties"), dict) else None
            if isinstance(semantics, dict) and isinstance(semantics.get("properties"), dict):
                found.update(semantics["properties"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    if isinstance(defs.get("semantics"), dict):
        found.update(defs["semantics"].get("properties", {}))
    return found


def file_key(vector_file: Path, spec_root: Path, generator: Mapping[str, Any]) -> str:
    """The fingerprint of one golden file's check: equal fingerprints, equal verdicts."""
    instruction = vector_file.stem
    parts = [RECORD_FORMAT.encode(), code_fingerprint().encode(),
             json.dumps(dict(generator), sort_keys=True).encode(), vector_file.read_bytes()]
    try:
        deps = dependencies(spec_root, instruction)
    except Sm5Error:
        deps = []  # a broken spec file: the key changes with it, and the check reports it
    for dep in deps:
        parts += [str(dep.relative_to(spec_root)).encode(), dep.read_bytes()]
    family = PROGRAMS / f"{instruction}.yaml"
    if family.is_file():  # a file of program vectors: its family file too
        parts += [family.name.encode(), family.read_bytes()]
    return _digest(parts)


def record_path(folder: Path) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return base / "sm5-conformance" / "vectors-check" / f"{name}.json"


def read_record(folder: Path) -> dict[str, str]:
    """file name -> fingerprint of its last passing check (empty when there is no record)."""
    try:
        doc = json.loads(record_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT or \
            not isinstance(doc.get("passed"), dict):
        return {}
    return {k: v for k, v in doc["passed"].items() if isinstance(k, str) and isinstance(v, str)}


def write_record(folder: Path, passed: Mapping[str, str]) -> None:
    """Record the fingerprints of the files that passed; a cache that cannot be written is
    skipped (the next check is then a full one)."""
    path = record_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"format": RECORD_FORMAT, "folder": str(folder),
                                            "passed": dict(sorted(passed.items()))},
                                           indent=1, sort_keys=True) + "\n")
    except (OSError, Sm5Error):
        pass
