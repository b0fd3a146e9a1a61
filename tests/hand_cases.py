"""Hand cases as data: reading and checking ``tests/hand/<instruction>.yaml``.

Each file holds the instances of one instruction with their expected result written by hand
from the cited source (see ``tests/hand/hand.schema.json``). A file may instead be about a
subject of program state (``subject: program_state``, ``tests/hand/program_state.yaml``): the
declarations, register files and element indices of a whole program. Declarations have no
clauses, so its cases name none (``clauses: []``); their rules are declaration and program rules.
A malformed file is reported as one ``HandFileError`` naming the file, the case (by name and
line) and the field. Files under ``tests/hand/pending/`` are not loaded: they hold cases of
instructions the spec does not have yet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from sm5.oracle.asm.parser import parse_line
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.yamlio import SAFE_LOADER, field_path, inline_refs, load_yaml, schema
from sm5.oracle.machine.program import Instruction
from sm5.oracle.model.spec import Spec

HAND_DIR = Path(__file__).resolve().parent / "hand"
PENDING_DIR = HAND_DIR / "pending"
SCHEMA_PATH = HAND_DIR / "hand.schema.json"


class HandFileError(Sm5Error):
    """A hand-case file is malformed (YAML, schema, or a fact the spec contradicts)."""


@dataclass(frozen=True)
class HandCase:
    """One instance with its expected result, as written in a hand file."""

    name: str
    path: Path
    line: int
    #: What the file is about: its instruction, or its program-state subject (its file's name).
    subject: str
    #: The instruction the file exercises; ``None`` in a program-state subject's file.
    instruction: str | None
    clauses: tuple[str, ...]
    program: tuple[str, ...]
    target: str
    runtime: str
    state: Mapping[str, Any]
    outcomes: tuple[str, ...]
    expect_state: Mapping[str, Any] | None
    rule: str | None
    source: tuple[Mapping[str, str], ...]

    @property
    def own_clause_prefix(self) -> str | None:
        """The prefix of the clause ids the case is about (a program-state case has none: the
        clauses its program's instructions fire are their own files')."""
        return None if self.instruction is None else self.instruction + "."

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line} case {self.name!r}"

    @property
    def cite(self) -> str:
        """The citations, for assertion messages."""
        return "; ".join(f"{c['ref']} {c['section']}: {c.get('quote') or c.get('paraphrase')}"
                         for c in self.source)


@cache
def _validator(definition: str | None) -> jsonschema.Draft202012Validator:
    """The hand schema (or one of its definitions) with every ``$ref`` replaced by what it
    points to, in this schema or the vector schema: no registry look-up per word of a state,
    which made reading the hand files most of a test worker's collection time."""
    doc = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    vector = schema("vector")
    docs = {doc["$id"]: doc, vector["$id"]: vector}
    root = doc["$defs"][definition] if definition else {
        k: v for k, v in doc.items() if k != "$defs"}
    return jsonschema.Draft202012Validator(inline_refs(root, docs, doc["$id"]))


def _schema_problem(document: Any, definition: str | None) -> str | None:
    error = jsonschema.exceptions.best_match(_validator(definition).iter_errors(document))
    if error is None:
        return None
    message = error.message
    described = isinstance(error.schema, dict) and "description" in error.schema
    if error.validator in ("oneOf", "anyOf", "not") and described:
        # "{...the whole value...} is not valid under any of the given schemas" says nothing
        text = str(error.schema["description"])
        message = f"expected {text[:1].lower()}{text[1:]}"
    where = field_path(error.absolute_path) if error.absolute_path else (
        "(case)" if definition in ("case", "subject_case") else "(top level)")
    return f"field {where}: {message}"


def _case_lines(path: Path) -> list[int]:
    """The 1-based line of each item of ``cases`` (0 where the file's shape hides it)."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if key.value == "cases" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def load_file(path: Path, spec: Spec | None = None) -> list[HandCase]:
    """Read and check one hand file. With ``spec``, also check it against the spec: the
    instruction exists (a subject is none of the spec's instructions), every clause id and rule
    id is the spec's, every target, runtime and source reference is the model's."""
    try:
        doc = load_yaml(path)
    except Sm5Error as exc:
        raise HandFileError(exc.message, where=exc.where) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        problem = (_schema_problem(doc, None)
                   or "expected a mapping with instruction (or subject) and cases")
        raise HandFileError(problem, where=str(path))
    if "instruction" not in doc and "subject" not in doc:
        raise HandFileError("field (top level): expected instruction (or subject)",
                            where=str(path))
    lines = _case_lines(path)
    definition = "subject_case" if "subject" in doc else "case"
    for i, case in enumerate(doc["cases"]):
        case_problem = _schema_problem(case, definition)
        if case_problem:
            name = case.get("name") if isinstance(case, dict) else None
            line = lines[i] if i < len(lines) else 0
            raise HandFileError(case_problem, where=f"{path}:{line} case #{i + 1}"
                                + (f" {name!r}" if isinstance(name, str) else ""))
    doc_problem = _schema_problem(doc, None)
    if doc_problem:
        raise HandFileError(doc_problem, where=str(path))
    instruction: str | None = doc.get("instruction")
    subject: str = doc["subject"] if instruction is None else instruction
    if path.stem != subject:
        raise HandFileError(f"the file holds cases of {subject!r}; name it "
                            f"{subject}.yaml", where=str(path))
    cases = [_case(path, lines[i] if i < len(lines) else 0, subject, instruction, c)
             for i, c in enumerate(doc["cases"])]
    seen: set[str] = set()
    for case in cases:
        if case.name in seen:
            raise HandFileError("duplicate case name", where=case.where)
        seen.add(case.name)
        _check_case(case)
        if spec is not None:
            _check_against_spec(case, spec)
    return cases


def _case(path: Path, line: int, subject: str, instruction: str | None,
          doc: Mapping[str, Any]) -> HandCase:
    expect = doc["expect"]
    return HandCase(
        name=doc["name"], path=path, line=line, subject=subject, instruction=instruction,
        clauses=tuple(doc.get("clauses", ())), program=tuple(doc["program"]),
        target=doc["target"], runtime=doc["runtime"], state=doc["state"],
        outcomes=tuple(expect["outcomes"]), expect_state=expect.get("state"),
        rule=expect.get("rule"), source=tuple(doc["source"]))


def _mnemonic(line: str) -> str:
    """The instruction a line runs: its parsed name where the spec knows it (suffix flags such
    as ``_uglobal`` removed), else the first word without ``_sat`` (a pending instruction)."""
    try:
        parsed = parse_line(line)
    except Sm5Error:
        return line.split()[0].removesuffix("_sat")
    return parsed.name if isinstance(parsed, Instruction) else ""


def _check_case(case: HandCase) -> None:
    """Facts a schema cannot say: the program runs the file's instruction, the clauses are
    the instruction's (a program-state case names none: the schema says so)."""
    if case.instruction is None:
        return
    mnemonics = [_mnemonic(line) for line in case.program]
    if case.instruction not in mnemonics:
        raise HandFileError(f"the program has no {case.instruction} instruction",
                            where=case.where)
    foreign = [c for c in case.clauses if not c.startswith(case.instruction + ".")]
    if foreign:
        raise HandFileError(f"clause(s) {', '.join(foreign)} are not clauses of "
                            f"{case.instruction}", where=case.where)


def _check_against_spec(case: HandCase, spec: Spec) -> None:
    if case.instruction is None:
        _check_subject(case, spec)
    else:
        _check_clauses(case, case.instruction, spec)
    if case.rule is not None and case.rule not in {r.id for r in spec.legality_rules()}:
        raise HandFileError(f"unknown legality rule {case.rule!r}", where=case.where)
    if case.target not in {t.name for t in spec.model.targets}:
        raise HandFileError(f"unknown target {case.target!r}", where=case.where)
    if case.runtime not in {r.name for r in spec.model.runtimes}:
        raise HandFileError(f"unknown runtime {case.runtime!r}", where=case.where)
    refs = [c["ref"] for c in case.source if c["ref"] not in spec.model.sources]
    if refs:
        raise HandFileError(f"unknown source ref(s) {', '.join(refs)}; expected one of "
                            f"{', '.join(spec.model.sources)} (spec/model.yaml sources)",
                            where=case.where)


def _check_clauses(case: HandCase, instruction: str, spec: Spec) -> None:
    control = spec.control.instructions.get(instruction)
    if instruction not in spec.instructions and control is None:
        raise HandFileError(f"the spec has no instruction {instruction!r}", where=case.where)
    known = ({c.id for c in control.clauses} if control is not None else
             {c.id for g in spec.instruction(instruction).semantics.groups for c in g.clauses})
    unknown = [c for c in case.clauses if c not in known]
    if unknown:
        raise HandFileError(f"unknown clause id(s) {', '.join(unknown)}; "
                            f"{instruction} has {', '.join(sorted(known))}", where=case.where)


def _check_subject(case: HandCase, spec: Spec) -> None:
    """A subject is no instruction of the spec (its cases would hide that instruction's), and
    names no clause (declarations have none; the schema also says so)."""
    if case.subject in spec.instructions or case.subject in spec.control.instructions:
        raise HandFileError(f"{case.subject!r} is an instruction of the spec: write "
                            f"instruction: {case.subject}", where=case.where)
    if case.clauses:
        raise HandFileError(f"clause(s) {', '.join(case.clauses)}: a program-state case names "
                            "no clauses", where=case.where)


def hand_files(folder: Path = HAND_DIR) -> list[Path]:
    """The hand files directly in ``folder`` (``pending/`` is a subfolder: never included)."""
    return sorted(folder.glob("*.yaml"))


@dataclass(frozen=True)
class Loaded:
    """Every hand file read: the cases of the well-formed ones, the error of each other."""

    cases: tuple[HandCase, ...]
    errors: Mapping[Path, HandFileError]


def load_all(spec: Spec, folder: Path = HAND_DIR) -> Loaded:
    """Read every hand file; one malformed file does not hide the cases of the others."""
    cases: list[HandCase] = []
    errors: dict[Path, HandFileError] = {}
    for path in hand_files(folder):
        try:
            cases.extend(load_file(path, spec))
        except HandFileError as exc:
            errors[path] = exc
    return Loaded(tuple(cases), errors)
