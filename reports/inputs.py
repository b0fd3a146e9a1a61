"""Readers for the report's JSON inputs: proof results, conformance results and mutants.

Each reader accepts the documented shape and a few close variants (a bare list or an object
holding the list), checks the fields it uses, and raises :class:`ReportError` naming the file and
the entry for anything else. Nothing here decides what the report shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sm5.conformance.compare import VERDICTS
from sm5.oracle.errors import Sm5Error

#: Diff lines of a failing vector kept for the page (the results file holds them all).
DIFFS_SHOWN = 3
#: Witnesses of a theorem kept for the page (the proof file holds them all).
WITNESSES_SHOWN = 3


class ReportError(Sm5Error):
    """An input of the report (a JSON file) is missing or malformed."""


@dataclass(frozen=True)
class Theorem:
    """One theorem. ``subject`` is what the name says it is about after ``instruction/kind/``
    (a group id or a clause id; empty for a theorem about the whole instruction)."""

    name: str
    instruction: str
    kind: str
    status: str
    seconds: float | None
    detail: str
    subject: str = ""
    witnesses: tuple[str, ...] = ()
    witness_count: int = 0


@dataclass(frozen=True)
class VectorResult:
    status: str
    reason: str
    diffs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImplResults:
    """One implementation's conformance run (``sm5-results/1``, ``sm5.conformance.run``): a status
    and reason per vector id. ``files`` names the results files merged into it (shards)."""

    impl: str
    files: tuple[str, ...]
    results: Mapping[str, VectorResult]
    #: The implementation's version as its results file names it (``impl_version``), or "".
    version: str = ""


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    killed: bool
    killing: tuple[str, ...]


def load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot read: {exc.strerror}", where=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                          where=str(path)) from None


def _entries(doc: Any, keys: tuple[str, ...], where: str, what: str) -> list[Any]:
    """The list of entries: ``doc`` itself or the first of ``keys`` it holds."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in keys:
            if isinstance(doc.get(key), list):
                return list(doc[key])
    raise ReportError(f"expected a list of {what} or an object with "
                      f"{' or '.join(repr(k) for k in keys)}", where=where)


def _text(entry: Mapping[str, Any], key: str, where: str, *, default: str | None = None) -> str:
    value = entry.get(key, default)
    if value is None:
        raise ReportError(f"field {key!r} missing", where=where)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def _ids(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ReportError("expected a list of vector ids", where=where)
    return tuple(sorted(set(value)))


def _number(value: Any, where: str, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReportError(f"{what} must be a number", where=where)
    return float(value)


def _subject(name: str, instruction: str, kind: str) -> str:
    """``<instruction>/partition/uav_raw`` -> ``uav_raw``."""
    prefix = f"{instruction}/{kind}/"
    return name[len(prefix):] if instruction and kind and name.startswith(prefix) else ""


def read_proofs(path: Path) -> tuple[Theorem, ...]:
    """Theorems of ``sm5-proofs/1`` (``sm5.oracle.proofs.results_to_json``), in file order.

    Times come from the separate ``timings_ms`` map (the theorems themselves carry none).
    """
    where = str(path)
    doc = load_json(path)
    timings = doc.get("timings_ms", {}) if isinstance(doc, dict) else {}
    if not isinstance(timings, dict):
        raise ReportError("field 'timings_ms' must map theorem names to milliseconds",
                          where=where)
    theorems: list[Theorem] = []
    for n, entry in enumerate(_entries(doc, ("theorems",), where, "theorems")):
        at = f"{where}: theorems[{n}]"
        if not isinstance(entry, dict):
            raise ReportError("expected an object", where=at)
        name = _text(entry, "name", at)
        instruction = _text(entry, "instruction", at, default="")
        kind = _text(entry, "kind", at, default="")
        ms = _number(timings.get(name), f"{where}: timings_ms[{name!r}]", "a time")
        witnesses = entry.get("witnesses", [])
        if not isinstance(witnesses, list):
            raise ReportError("field 'witnesses' must be a list", where=at)
        theorems.append(Theorem(
            name=name, instruction=instruction, kind=kind, status=_text(entry, "status", at),
            seconds=None if ms is None else ms / 1000,
            detail=_text(entry, "detail", at, default=""),
            subject=_subject(name, instruction, kind),
            witnesses=tuple(json.dumps(w, sort_keys=True, separators=(", ", ": "))
                            for w in witnesses[:WITNESSES_SHOWN]),
            witness_count=len(witnesses)))
    return tuple(theorems)


def read_results(path: Path) -> ImplResults:
    """``{impl, counts, results: {vector_id: {status, reason}}}`` (or results as a list)."""
    where = str(path)
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise ReportError("expected an object with 'impl' and 'results'", where=where)
    impl = doc.get("impl", doc.get("implementation"))
    if isinstance(impl, dict):
        impl = impl.get("name")
    if not isinstance(impl, str) or not impl:
        raise ReportError("field 'impl' missing or not a name", where=where)
    raw = doc.get("results")
    items: list[tuple[str, Any]]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = []
        for n, entry in enumerate(raw):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise ReportError("expected an object with an 'id'", where=f"{where}: results[{n}]")
            items.append((entry["id"], entry))
    else:
        raise ReportError("field 'results' missing: expected an object keyed by vector id",
                          where=where)
    results: dict[str, VectorResult] = {}
    for vector_id, entry in sorted(items, key=lambda item: item[0]):
        at = f"{where}: results[{vector_id!r}]"
        if isinstance(entry, str):
            results[vector_id] = VectorResult(entry, "")
            continue
        if not isinstance(entry, dict):
            raise ReportError("expected an object with 'status'", where=at)
        diffs = entry.get("diffs", [])
        if not isinstance(diffs, list):
            raise ReportError("field 'diffs' must be a list of lines", where=at)
        results[vector_id] = VectorResult(_text(entry, "status", at),
                                          _text(entry, "reason", at, default=""),
                                          tuple(str(d) for d in diffs[:DIFFS_SHOWN]))
    version = doc.get("impl_version", "")
    if not isinstance(version, str):
        raise ReportError("field 'impl_version' must be a string", where=where)
    return ImplResults(impl, (path.name,), results, version)


def merge_results(runs: list[ImplResults]) -> tuple[ImplResults, ...]:
    """One entry per implementation, sorted by name: the shards of a run are merged; a vector
    judged twice must have the same verdict."""
    merged: dict[str, ImplResults] = {}
    for run in runs:
        previous = merged.get(run.impl)
        if previous is None:
            merged[run.impl] = run
            continue
        results = dict(previous.results)
        for vector_id, result in run.results.items():
            if vector_id in results and results[vector_id] != result:
                raise ReportError(f"vector {vector_id!r} of {run.impl!r} has another verdict in "
                                  f"{', '.join(previous.files)}", where=run.files[0])
            results[vector_id] = result
        merged[run.impl] = ImplResults(run.impl, previous.files + run.files,
                                       dict(sorted(results.items())),
                                       previous.version or run.version)
    return tuple(merged[name] for name in sorted(merged))


def read_mutants(path: Path) -> tuple[Mutant, ...]:
    """Mutants of ``sm5-mutants/1`` (``sm5 mutants --json``: ``mutants`` maps each name to
    ``{killed, killing_vectors, summary}``), or a list of such objects with a ``name``; sorted
    by name."""
    where = str(path)
    doc = load_json(path)
    raw = doc.get("mutants") if isinstance(doc, dict) else doc
    if isinstance(raw, dict):
        entries = [(name, entry) for name, entry in raw.items()]
    elif isinstance(raw, list):
        entries = [(entry.get("name") if isinstance(entry, dict) else None, entry)
                   for entry in raw]
    else:
        raise ReportError("expected 'mutants': an object keyed by mutant name", where=where)
    mutants: list[Mutant] = []
    for n, (name, entry) in enumerate(entries):
        at = f"{where}: mutants[{name if isinstance(name, str) else n}]"
        if not isinstance(entry, dict) or not isinstance(name, str) or not name:
            raise ReportError("expected an object for a named mutant", where=at)
        killing_key = next((k for k in ("killing_vectors", "killing", "killed_by")
                            if k in entry), None)
        killing = _ids(entry.get(killing_key) if killing_key else None, f"{at}: {killing_key}")
        killed = entry.get("killed", bool(killing))
        if not isinstance(killed, bool):
            raise ReportError("field 'killed' must be true or false", where=at)
        description = entry.get("summary", entry.get("description", ""))
        mutants.append(Mutant(name, str(description or ""), killed, killing))
    return tuple(sorted(mutants, key=lambda m: m.name))


def status_order(statuses: set[str] | frozenset[str]) -> tuple[str, ...]:
    """Known verdicts in the conformance engine's order, then any others alphabetically."""
    known = [s for s in VERDICTS if s in statuses]
    return (*known, *sorted(set(statuses) - set(VERDICTS)))
