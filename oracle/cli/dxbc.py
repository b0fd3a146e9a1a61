"""``sm5 dxbc``: export golden vectors as self-contained cs_5_0 DXBC harness programs.

For every executable vector of the given JSON Lines files (format ``sm5-vectors/1``) it writes
``<id, "/" replaced by "__">.dxbc`` and one ``index.json`` (canonical JSON) holding, per vector
id, the file name, its sha256, the state buffer (UAV register and initial words), the layout of
the state buffer and the UAVs and SRV buffers (t#) to bind with their initial contents.
Rejected vectors have no program; vectors a compute harness cannot express are listed with the
reason.

The vector file is read through ``sm5.oracle.files.jsonl`` (the ``vectors`` package sits above
``oracle`` in the dependency order); only the fields the export needs are checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sm5.oracle.asm import parse_program
from sm5.oracle.cli.options import writable_folder
from sm5.oracle.dxbc import program_to_dxbc
from sm5.oracle.dxbc.harness import build_harness, harness_to_json
from sm5.oracle.errors import NotExpressible, Sm5Error, StateError
from sm5.oracle.files.atomic import atomic_write_bytes, atomic_write_text
from sm5.oracle.files.jsonl import read_lines
from sm5.oracle.machine.state import state_from_json
from sm5.oracle.model.spec import load_default

INDEX_FORMAT = "sm5-dxbc/1"
INDEX_NAME = "index.json"
SUFFIX = ".dxbc"
_ID = re.compile(r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "dxbc", help="export vectors as cs_5_0 DXBC harness programs",
        description="Write one DXBC container per executable vector plus index.json (state "
        "buffer, layout and UAV and SRV bindings per vector). Rejected vectors are skipped; "
        "vectors a compute harness cannot express are listed in the index with the reason.")
    p.add_argument("--vectors", nargs="+", type=Path, required=True, metavar="PATH",
                   help="vector files (.jsonl) or folders of them")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.set_defaults(handler=run_dxbc)


@dataclass(frozen=True)
class _Entry:
    where: str
    doc: dict[str, Any]


def _files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.glob("*.jsonl"))
        else:
            yield path


def _entries(path: Path) -> Iterator[_Entry]:
    _, lines = read_lines(path, StateError)
    for where, doc in lines:
        if not isinstance(doc, dict):
            raise StateError("expected a JSON object", where=where)
        yield _Entry(where, doc)


def file_name(vector_id: str, where: str = "") -> str:
    """The DXBC file name of a vector id (``a/b/0001`` -> ``a__b__0001.dxbc``)."""
    if not _ID.match(vector_id) or any(part in (".", "..") for part in vector_id.split("/")):
        raise StateError(f"vector id {vector_id!r} is not a safe file name "
                         "(letters, digits, _ . - separated by /)", where=where)
    return vector_id.replace("/", "__") + SUFFIX


def _field(doc: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind):
        raise StateError(f"field {key}: expected {kind.__name__}", where=where)
    return value


def export(paths: list[Path], out: Path, only: Collection[str] | None = None
           ) -> dict[str, Any]:
    """Write the programs and the index; returns the index document. ``only``: export just
    these vector ids (the others are read and checked, not exported)."""
    vectors: dict[str, Any] = {}
    not_expressible: dict[str, str] = {}
    rejected = 0
    rejected_outcome = load_default().model.rejected_outcome
    names: dict[str, str] = {}
    for path in _files(paths):
        for entry in _entries(path):
            doc, where = entry.doc, entry.where
            vector_id = _field(doc, "id", str, where)
            name = file_name(vector_id, where)
            if name in names:
                raise StateError(f"vector id {vector_id!r} repeats (first at {names[name]})",
                                 where=where)
            names[name] = where
            if only is not None and vector_id not in only:
                continue
            expect = _field(doc, "expect", dict, where)
            outcomes = expect.get("outcomes")
            if not isinstance(outcomes, list) or not all(isinstance(o, str) for o in outcomes):
                raise StateError("field outcomes: expected a list of strings", where=where)
            if outcomes == [rejected_outcome]:
                rejected += 1
                continue
            lines = _field(doc, "program", list, where)
            if not all(isinstance(x, str) for x in lines):
                raise StateError("field program: expected a list of asm lines", where=where)
            runtime = _field(doc, "runtime", str, where)
            program = parse_program(lines, source=f"{where}: program")
            state = state_from_json(_field(doc, "state", dict, where), f"{where}: state")
            try:
                harness = build_harness(program, state, runtime=runtime)
            except NotExpressible as exc:
                not_expressible[vector_id] = exc.message
                continue
            dxbc = program_to_dxbc(harness.program)
            atomic_write_bytes(out / name, dxbc)
            vectors[vector_id] = {"file": name, "sha256": hashlib.sha256(dxbc).hexdigest(),
                                  **harness_to_json(harness)}
    index = {"format": INDEX_FORMAT, "vectors": vectors, "not_expressible": not_expressible,
             "rejected_skipped": rejected}
    text = json.dumps(index, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    atomic_write_text(out / INDEX_NAME, text + "\n")
    return index


def run_dxbc(args: argparse.Namespace) -> int:
    writable_folder(args.out, "--out")
    try:
        index = export(list(args.vectors), args.out)
    except OSError as exc:
        raise Sm5Error(f"cannot write: {exc.strerror}", where=str(exc.filename or args.out)) \
            from None
    print(f"wrote {len(index['vectors'])} programs and {INDEX_NAME} to {args.out}; skipped "
          f"{index['rejected_skipped']} rejected and {len(index['not_expressible'])} not "
          "expressible vectors")
    return 0
