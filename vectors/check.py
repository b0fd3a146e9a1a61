"""``sm5 vectors check``: the golden files are well formed, agree with the oracle, match their
manifest and are exactly what the generator makes.

Every problem names the file and line, the vector id when one can be read, and the reason. The
checks are independent, so one hand edit is reported by each check it breaks (a changed
expected value: the oracle disagrees, the sha256 differs, the regeneration differs).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.jsonl import decode_line
from sm5.oracle.files.yamlio import inline_refs, schema
from sm5.oracle.machine.state import UNWRITTEN_TEMPS, UNWRITTEN_TEMPS_ERRATUM
from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors import incremental
from sm5.vectors.build import to_vector
from sm5.vectors.format import FORMAT, PROGRAM_FORMAT, Vector, VectorError, canonical
from sm5.vectors.generate import MANIFEST, default_jobs, generate, spec_at
from sm5.vectors.instances import Case
from sm5.vectors.programs import program_subjects

ID_IN_TEXT = re.compile(r'"id"\s*:\s*"([^"]*)"')
#: Problems reported per file before the rest of it is summarized.
MAX_PER_FILE = 20


@dataclass(frozen=True)
class Problem:
    where: str
    message: str
    vector_id: str = ""

    def __str__(self) -> str:
        who = f" {self.vector_id}" if self.vector_id else ""
        return f"{self.where}{who}: {self.message}"


@cache
def validator(definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The vector schema (or one of its definitions: ``header``, ``vector``), compiled once.

    Local ``$ref``s are replaced by what they point to (the definitions are not recursive):
    the same schema, validated about twice as fast, which matters for a million-word golden
    set.
    """
    doc = schema("vector")
    jsonschema.Draft202012Validator.check_schema(doc)
    defs = doc["$defs"]
    root = defs[definition] if definition is not None else {
        k: v for k, v in doc.items() if k != "$defs"}
    return jsonschema.Draft202012Validator(inline_refs(root, {doc["$id"]: doc}, doc["$id"]))


def _schema_problem(doc: Any, definition: str) -> str | None:
    checker = validator(definition)
    if checker.is_valid(doc):
        return None
    error = jsonschema.exceptions.best_match(checker.iter_errors(doc))
    if error is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"schema: {path.lstrip('.') or '(line)'}: {error.message}"


# ----------------------------------------------------------------------------------------------
# Oracle agreement


def first_difference(stored: Any, fresh: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place two JSON values differ: (path, stored part, fresh part)."""
    if isinstance(stored, dict) and isinstance(fresh, dict):
        for key in sorted(set(stored) | set(fresh)):
            if key not in stored or key not in fresh:
                return f"{path}.{key}", stored.get(key, "<absent>"), fresh.get(key, "<absent>")
            found = first_difference(stored[key], fresh[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(stored, list) and isinstance(fresh, list) and len(stored) == len(fresh):
        for i, (a, b) in enumerate(zip(stored, fresh, strict=True)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if stored != fresh or type(stored) is not type(fresh):
        return path, stored, fresh
    return None


def _short(value: Any) -> str:
    text = canonical(value)
    return text if len(text) <= 120 else text[:117] + "..."


def oracle_problems(vector: Vector, spec: Spec) -> list[str]:
    """Where the stored expectation and clauses differ from what the oracle computes now."""
    case = Case(vector.id.split("/", 1)[0], vector.program, vector.target, vector.runtime,
                vector.state)
    try:
        fresh = to_vector(case, vector.id, spec, subject=vector.subject)
    except Sm5Error as exc:
        return [f"the oracle cannot run it: {exc}"]
    out = []
    for name in ("expect", "clauses", "steps"):
        stored_part = vector.to_json().get(name)
        fresh_part = fresh.to_json().get(name)
        found = first_difference(stored_part, fresh_part, name)
        if found is not None:
            path, a, b = found
            out.append(f"expected {path} = {_short(a)} but the oracle gives {_short(b)}")
    return out


def justification_problems(vector: Vector) -> list[str]:
    """Every non-exact acceptance set is named in ``allowed_by`` by a fired clause, or by the
    erratum that leaves temps undefined where the program starts with some (flag
    ``unwritten-temps``)."""
    expect = vector.expect
    if "state" not in expect:
        return []
    because: Mapping[str, Sequence[str]] = expect.get("allowed_by", {})
    allowed = set(vector.clauses)
    if UNWRITTEN_TEMPS in vector.flags:
        allowed.add(UNWRITTEN_TEMPS_ERRATUM)
    out = []
    for location, clauses in because.items():
        stray = [c for c in clauses if c not in allowed]
        if stray:
            out.append(f"allowed_by.{location} names {', '.join(stray)}, which did not fire")
    for location in non_exact_locations(expect["state"]):
        if location not in because:
            out.append(f"{location} is not exact but allowed_by names no clause for it")
    return out


def non_exact_locations(state: Mapping[str, Any]) -> Iterator[str]:
    for name, value in state.items():
        if isinstance(value, list):
            for letter, accept in zip("xyzw", value, strict=False):
                if not isinstance(accept, int):
                    yield f"{name}.{letter}"
        elif value is None:
            yield name
        elif isinstance(value, dict):
            for i, word in enumerate(value.get("data", ())):
                if not isinstance(word, int):
                    yield f"{name}[{i}]"


# ----------------------------------------------------------------------------------------------
# One file


def check_file(path: Path, spec: Spec, *, oracle: bool = True) -> list[Problem]:
    """Schema, canonical form, unique ids, header count and (optionally) the oracle."""
    problems: list[Problem] = []
    try:
        handle = path.open("rb")
    except OSError as exc:
        return [Problem(str(path), f"cannot read: {exc.strerror}")]
    count = 0
    declared: int | None = None
    seen: dict[str, int] = {}
    previous = ""
    with handle:
        for number, raw_bytes in enumerate(handle, start=1):
            where = f"{path.name}:{number}"
            if len(problems) >= MAX_PER_FILE:
                problems.append(Problem(path.name, "too many problems; the rest not shown"))
                break
            try:
                raw = raw_bytes.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(Problem(where, f"not UTF-8: byte 0x{raw_bytes[exc.start]:02x}"))
                count += number > 1
                continue
            line_problems, vid, header_count = _check_line(raw, number, spec, oracle, seen)
            who = vid or (f"(the vector after {previous})" if previous and number > 1 else "")
            problems.extend(Problem(where, p, who) for p in line_problems)
            previous = vid or previous
            if number == 1:
                declared = header_count
            else:
                count += 1
    if count == 0 and declared is None:
        problems.append(Problem(path.name, "empty file; expected a header line"))
    elif declared is not None and declared != count:
        problems.append(Problem(f"{path.name}:1", f"header count {declared} but the file "
                                f"holds {count} vectors"))
    return problems


def _check_line(raw: str, number: int, spec: Spec, oracle: bool, seen: dict[str, int]
                ) -> tuple[list[str], str, int | None]:
    match = ID_IN_TEXT.search(raw)
    vid = match.group(1) if match else ""
    if not raw.endswith("\n"):
        return ["the line does not end in a newline"], vid, None
    try:
        doc = decode_line(raw.encode("utf-8"), "", VectorError)
    except VectorError as exc:
        return [exc.message], vid, None
    if canonical(doc) + "\n" != raw:
        problems = ["not canonical JSON (sorted keys, no spaces, one line)"]
    else:
        problems = []
    if number == 1:
        bad = _schema_problem(doc, "header")
        if bad:
            return [*problems, bad], "", None
        if doc["format"] not in (FORMAT, PROGRAM_FORMAT):
            return [*problems, f"format {doc['format']!r}, expected {FORMAT!r} or "
                    f"{PROGRAM_FORMAT!r}"], "", None
        if doc["spec_version"] != spec.version:
            problems.append(f"spec_version {doc['spec_version']} but the spec is "
                            f"{spec.version}")
        count = doc["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            return [*problems, "header field count: expected a non-negative integer"], "", None
        return problems, "", count
    bad = _schema_problem(doc, "vector")
    if bad:
        return [*problems, bad], vid, None
    if vid in seen:
        problems.append(f"id repeats line {seen[vid]}")
    seen[vid] = number
    try:
        vector = Vector.from_json(doc, str(number))
    except VectorError as exc:
        return [*problems, exc.message], vid, None
    problems.extend(justification_problems(vector))
    if oracle:
        problems.extend(oracle_problems(vector, spec))
    return problems, vid, None


# ----------------------------------------------------------------------------------------------
# Manifest and regeneration


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(folder: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    path = folder / MANIFEST
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return None, [Problem(MANIFEST, f"cannot read: {exc.strerror}")]
    except json.JSONDecodeError as exc:
        return None, [Problem(MANIFEST, f"not JSON: {exc.msg} at line {exc.lineno}")]
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict) or \
            not isinstance(doc.get("generator"), dict):
        return None, [Problem(MANIFEST, "expected an object with 'files' and 'generator'")]
    return doc, []


def manifest_problems(folder: Path, manifest: Mapping[str, Any], spec: Spec) -> list[Problem]:
    problems = []
    if manifest.get("spec_version") != spec.version:
        problems.append(Problem(MANIFEST, f"spec_version {manifest.get('spec_version')} but "
                                f"the spec is {spec.version}"))
    listed = manifest["files"]
    for name, entry in sorted(listed.items()):
        path = folder / name
        if not path.is_file():
            problems.append(Problem(MANIFEST, f"lists {name}, which does not exist"))
            continue
        actual = _sha256(path)
        if actual != entry.get("sha256"):
            problems.append(Problem(MANIFEST, f"{name}: sha256 {entry.get('sha256')} but the "
                                    f"file has {actual}"))
        lines = sum(1 for _ in path.open("rb")) - 1
        if lines != entry.get("count"):
            problems.append(Problem(MANIFEST, f"{name}: count {entry.get('count')} but the file "
                                    f"holds {lines} vectors"))
    for path in sorted(folder.glob("*.jsonl")):
        if path.name not in listed:
            problems.append(Problem(MANIFEST, f"{path.name} is not listed"))
    return problems


def regeneration_problems(folder: Path, manifest: Mapping[str, Any], spec: Spec,
                          fresh: Path | None = None,
                          on_progress: Callable[[int], None] | None = None) -> list[Problem]:
    """Regenerate with the manifest's level and seed (or take ``fresh``, a folder already
    regenerated); every file must be byte-identical."""
    if fresh is not None:
        return _compare_folders(folder, fresh)
    generator = manifest["generator"]
    with tempfile.TemporaryDirectory(prefix="sm5-vectors-") as tmp:
        try:
            generate(Path(tmp), level=int(generator.get("level", 1)),
                     seed=int(generator.get("seed", 0)), spec=spec, on_progress=on_progress)
        except Sm5Error as exc:  # GenerationError included
            return [Problem("regeneration", f"the generator fails: {exc}")]
        return _compare_folders(folder, Path(tmp))


def _compare_folders(folder: Path, fresh: Path) -> list[Problem]:
    problems = []
    names = sorted({p.name for p in folder.glob("*.jsonl")} |
                   {p.name for p in fresh.glob("*.jsonl")} | {MANIFEST})
    for name in names:
        old, new = folder / name, fresh / name
        if not old.is_file() or not new.is_file():
            missing = "committed" if not old.is_file() else "regenerated"
            problems.append(Problem(name, f"no {missing} file; the regeneration differs"))
            continue
        if old.read_bytes() != new.read_bytes():
            problems.extend(_line_differences(old, new))
    return problems


def _line_differences(old: Path, new: Path) -> list[Problem]:
    """Every line that differs from the regeneration (up to ``MAX_PER_FILE``), each named by
    the regenerated vector's id when the committed line is unreadable."""
    problems: list[Problem] = []
    with old.open("r", encoding="utf-8", newline="") as a, \
            new.open("r", encoding="utf-8", newline="") as b:
        number = 0
        while len(problems) < MAX_PER_FILE:
            number += 1
            x, y = a.readline(), b.readline()
            if not x and not y:
                break
            if x == y:
                continue
            match = ID_IN_TEXT.search(x) or ID_IN_TEXT.search(y)
            vid = match.group(1) if match else ""
            where = f"{old.name}:{number}"
            if not x or not y:
                what = "ends early" if not x else "has extra lines"
                problems.append(Problem(where, f"the committed file {what} compared with the "
                                        "regeneration", vid))
                break
            try:
                found = first_difference(json.loads(x), json.loads(y), "")
                detail = "" if found is None else (
                    f": {found[0].lstrip('.')} is {_short(found[1])}, regenerated "
                    f"{_short(found[2])}")
            except json.JSONDecodeError:  # MANIFEST.json is indented JSON; or a broken line
                detail = f": {x.strip()[:100]!r}, regenerated {y.strip()[:100]!r}"
            problems.append(Problem(where, f"differs from the regeneration{detail}", vid))
    if len(problems) >= MAX_PER_FILE:
        problems.append(Problem(old.name, "more lines differ; the rest not shown"))
    return problems


@dataclass(frozen=True)
class Report:
    files: int
    vectors: int
    problems: tuple[Problem, ...]
    #: files not re-checked: unchanged, with everything they depend on, since they last passed
    unchanged: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_incremental(folder: Path, *, spec: Spec | None = None, regenerate: bool = True,
                      extra: Sequence[Path] = (), jobs: int | None = None,
                      on_progress: Callable[[int], None] | None = None) -> Report:
    """:func:`check` on the files whose fingerprint (``sm5.vectors.incremental``) changed since
    they last passed here; the manifest, the extra files and the list of instructions are
    always checked. A passing run records the fingerprints."""
    spec = spec or load_default()
    manifest, problems = read_manifest(folder)
    generator = dict(manifest.get("generator", {})) if manifest else {}
    root = Path(spec.root)
    files = sorted(folder.glob("*.jsonl"))
    keys = {p.name: incremental.file_key(p, root, generator) for p in files}
    passed = incremental.read_record(folder)
    stale = [p for p in files if passed.get(p.name) != keys[p.name]]
    problems = list(problems)
    names = {p.stem for p in files}
    subjects = set(spec.instructions) | set(program_subjects())
    for name in sorted(subjects - names):
        problems.append(Problem(f"{name}.jsonl", "the spec has this instruction (or "
                                "vectors/programs this family file) but the folder has no "
                                "vector file; regenerate the set"))
    for name in sorted(names - subjects):
        problems.append(Problem(f"{name}.jsonl", "a vector file of an instruction the spec "
                                "does not have (nor a family file of vectors/programs)"))
    if manifest is not None:
        problems.extend(manifest_problems(folder, manifest, spec))
    checked = [*stale, *extra]
    vectors = sum(max(sum(1 for _ in path.open("rb")) - 1, 0) for path in checked)
    jobs = jobs or default_jobs()
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_check_file_job, spec.root, str(path), True) for path in checked]
        if regenerate and stale and manifest is not None:
            problems.extend(_regenerate_some(folder, manifest, spec,
                                             [p.stem for p in stale if p.stem in
                                              subjects], on_progress))
        for future in futures:
            problems.extend(future.result())
    report = Report(len(checked), vectors, tuple(problems), unchanged=len(files) - len(stale))
    if report.ok and regenerate:
        incremental.write_record(folder, keys)
    return report


def _regenerate_some(folder: Path, manifest: Mapping[str, Any], spec: Spec,
                     names: Sequence[str], on_progress: Callable[[int], None] | None
                     ) -> list[Problem]:
    """Regenerate only ``names``; each file must be byte-identical to the committed one."""
    if not names:
        return []
    generator = manifest["generator"]
    with tempfile.TemporaryDirectory(prefix="sm5-vectors-") as tmp:
        try:
            generate(Path(tmp), level=int(generator.get("level", 1)),
                     seed=int(generator.get("seed", 0)), spec=spec, instructions=names,
                     on_progress=on_progress)
        except Sm5Error as exc:
            return [Problem("regeneration", f"the generator fails: {exc}")]
        problems: list[Problem] = []
        for name in names:
            old, new = folder / f"{name}.jsonl", Path(tmp) / f"{name}.jsonl"
            if old.read_bytes() != new.read_bytes():
                problems.extend(_line_differences(old, new))
        return problems


def check(folder: Path, *, spec: Spec | None = None, regenerate: bool = True,
          oracle: bool = True, extra: Sequence[Path] = (), jobs: int | None = None,
          on_progress: Callable[[int], None] | None = None) -> Report:
    """Check a golden folder (and extra vector files such as regressions).

    The files are checked in worker processes while this process regenerates the set;
    ``on_progress`` receives the number of vectors regenerated so far.
    """
    spec = spec or load_default()
    problems: list[Problem] = []
    manifest, found = read_manifest(folder)
    problems.extend(found)
    files = [*sorted(folder.glob("*.jsonl")), *extra]
    vectors = sum(max(sum(1 for _ in path.open("rb")) - 1, 0) for path in files)
    jobs = jobs or default_jobs()
    if jobs == 1 or len(files) < 2:
        for path in files:
            problems.extend(check_file(path, spec, oracle=oracle))
        if manifest is not None:
            problems.extend(manifest_problems(folder, manifest, spec))
            if regenerate:
                problems.extend(regeneration_problems(folder, manifest, spec,
                                                      on_progress=on_progress))
        return Report(len(files), vectors, tuple(problems))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_check_file_job, spec.root, str(path), oracle) for path in files]
        late: list[Problem] = []
        if manifest is not None:
            late.extend(manifest_problems(folder, manifest, spec))
            if regenerate:
                late.extend(regeneration_problems(folder, manifest, spec, on_progress=on_progress))
        for future in futures:
            problems.extend(future.result())
    problems.extend(late)
    return Report(len(files), vectors, tuple(problems))


def _check_file_job(spec_root: str, path: str, oracle: bool) -> list[Problem]:
    return check_file(Path(path), spec_at(spec_root), oracle=oracle)
