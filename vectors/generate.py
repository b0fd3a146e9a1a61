"""The vector generator: level 1 (the committed golden set) and level 2 (large, on demand).

A file is made of units: its systematic part (the sections of ``sm5.vectors.sections``, complete by
construction: generation fails if a clause or a rule of the instruction is left without a
vector) and chunks of its random part. Units run in worker processes, each streaming to a part
file; the parts are joined in order under the header, so memory stays flat and the bytes do
not depend on the number of processes. Same spec and seed: byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sm5.oracle.files.atomic import atomic_write_text, publish
from sm5.oracle.model.spec import Spec, default_root, load_default, load_spec
from sm5.vectors.build import to_vector
from sm5.vectors.flags import notes_for
from sm5.vectors.format import FORMAT, PROGRAM_FORMAT, Header, Vector, canonical
from sm5.vectors.instances import Case
from sm5.vectors.ledger import LEDGERED, IdLedger, read_ledger
from sm5.vectors.points import LEVEL_BUDGETS, Budget, Explorer, check_coverage
from sm5.vectors.programs import program_subjects, program_vectors, random_program_vectors
from sm5.vectors.random_programs import RANDOM_PROGRAMS
from sm5.vectors.sections import (
    BOUNDARY_PER_CLASS,
    Pool,
    alias_cases,
    boundary_cases,
    cell_cases,
    declaration_flag_cases,
    limit_cases,
    load_witnesses,
    mask_swizzle_cases,
    random_cases,
    register_cases,
    reject_cases,
    witness_cases,
)
from sm5.vectors.shapes import (
    GenerationError,
    rule_ids,
)
from sm5.vectors.siblings import check_siblings

GENERATOR = "sm5-vectors"
#: Bumped whenever the generator's output changes for the same spec and seed.
GENERATOR_VERSION = 2
DEFAULT_SEED = 0
MANIFEST = "MANIFEST.json"
GOLDEN = Path(__file__).resolve().parent / "golden"
#: Rough size of a file's systematic part, for the progress bar only.
SYSTEMATIC_ESTIMATE = 2500



@dataclass(frozen=True)
class Plan:
    """What a level generates: the state budget of its systematic part, how many random cases
    per instruction and their (smaller) state budget."""

    level: int
    budget: Budget
    random_cases: int
    random_budget: Budget
    random_chunk: int = 25_000
    boundary_per_class: int | None = BOUNDARY_PER_CLASS  # None: every boundary point
    every_context: bool = False  # True: every modifier combination, not pairwise
    random_programs: int = 0  # random programs with flow control (vectors.random_programs)


RANDOM_BUDGET = Budget(max_words=256)
PLANS = {1: Plan(1, LEVEL_BUDGETS[1], 80, RANDOM_BUDGET),
         2: Plan(2, LEVEL_BUDGETS[2], 340_000, RANDOM_BUDGET, boundary_per_class=None,
                      every_context=True, random_programs=20_000)}


def expected_count(instructions: int, plan: Plan) -> int:
    """A rough count of the vectors a level makes (progress only; the real count may differ)."""
    return instructions * (SYSTEMATIC_ESTIMATE + plan.random_cases)



# ----------------------------------------------------------------------------------------------
# Work units: the systematic part of a file, then chunks of its random part


@dataclass(frozen=True)
class Unit:
    """One piece of one file, generated independently (own random streams, own numbering)."""

    instruction: str
    part: int  # 0: the systematic sections; k >= 1: random chunk k - 1
    random_count: int = 0

    random_offset: int = 0


def units(spec: Spec, names: Sequence[str], plan: Plan) -> list[Unit]:
    out = []
    chunk = plan.random_chunk
    for name in names:
        if name == RANDOM_PROGRAMS:  # random programs: one unit of them
            out.append(Unit(name, 0, plan.random_programs))
            continue
        out.append(Unit(name, 0))
        if name not in spec.instructions:  # a file of program vectors: no random part
            continue
        for k in range(0, plan.random_cases, chunk):
            out.append(Unit(name, k // chunk + 1, min(chunk, plan.random_cases - k), k))
    return out


def systematic_cases(spec: Spec, name: str, plan: Plan, seed: int
                     ) -> Iterator[tuple[str, Case]]:
    explorer = Explorer(spec, name, plan.budget, every_context=plan.every_context)
    points = list(explorer.points())
    check_coverage(spec.instruction(name), {c for p in points for c in p.clauses})
    pool = Pool(spec, name, points)
    sections: list[tuple[str, Iterable[Case]]] = [
        ("boundary", boundary_cases(spec, name, points, seed, plan.boundary_per_class)),
        ("mask-swizzle", mask_swizzle_cases(spec, name, pool, seed)),
        ("registers", register_cases(spec, name, pool, seed)),
        ("cell", cell_cases(spec, name, pool, seed)),
        ("reject", reject_cases(spec, name, seed)),
        ("limit", limit_cases(spec, name, pool, seed)),
        ("alias", alias_cases(spec, name, pool, seed)),
        ("witness", witness_cases(spec, name, load_witnesses(spec, name), seed)),
        ("declaration-flags", declaration_flag_cases(spec, name, pool, seed)),
    ]
    for section, cases in sections:
        for case in cases:
            yield section, case


@dataclass(frozen=True)
class UnitResult:
    unit: Unit
    path: str
    count: int
    outcomes: Mapping[str, int]
    rules: frozenset[str]
    flags: frozenset[str] = frozenset()


_COUNTERS: Any = None


def _init_worker(counters: Any) -> None:
    global _COUNTERS
    _COUNTERS = counters


def run_unit(spec: Spec, unit: Unit, slot: int, plan: Plan, seed: int, folder: Path
             ) -> UnitResult:
    """Generate one unit into a hidden part file of ``folder``; checks its completeness."""
    name = unit.instruction
    if name not in spec.instructions:
        return _program_unit(spec, unit, slot, folder, seed)
    if unit.part == 0:
        cases: Iterator[tuple[str, Case]] = systematic_cases(spec, name, plan, seed)
    else:
        explorer = Explorer(spec, name, plan.random_budget)
        cases = (("random", c) for c in random_cases(spec, name, explorer, unit.random_count,
                                                     seed, chunk=unit.part - 1))
    numbers: Counter[str] = Counter()
    if unit.part > 0:
        numbers["random"] = unit.random_offset
    ledger = read_ledger(GOLDEN / f"{name}.jsonl", name) if _is_default(spec) else IdLedger()
    count = 0
    outcomes: Counter[str] = Counter()
    fired: set[str] = set()
    rules: set[str] = set()
    flags: set[str] = set()
    fd, part = tempfile.mkstemp(dir=folder, prefix=f".{name}.part{unit.part}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            held: list[tuple[int, str]] = []  # a ledgered section, written in id order
            made: list[Vector] = []  # the systematic part, for the sibling check
            for section, case in cases:
                vector = to_vector(case, f"{name}/{section}/{numbers[section]:04d}", spec)
                if unit.part == 0 and not vector.rejected:
                    made.append(vector)
                doc = vector.to_json()
                if section not in LEDGERED:
                    _flush(out, held)
                    out.write(canonical(doc) + "\n")
                else:
                    number = ledger.number(section, vector.reason)
                    doc["id"] = f"{name}/{section}/{number:04d}"
                    held.append((number, canonical(doc)))
                numbers[section] += 1
                count += 1
                (rules if vector.rejected else fired).update(vector.clauses)
                outcomes.update(vector.expect.get("outcomes", ()))
                flags.update(vector.flags)
                if _COUNTERS is not None:
                    _COUNTERS[slot] += 1
            _flush(out, held)
        if unit.part == 0:
            check_coverage(spec.instruction(name), fired)
            check_siblings(spec, name, made)
            missing = [r.id for r in spec.instruction(name).rules if r.id not in rules]
            if missing:
                raise GenerationError(f"{name}: no must-reject vector breaks "
                                      f"{', '.join(missing)}")
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return UnitResult(unit, part, count, dict(outcomes), frozenset(rules), frozenset(flags))


def _flush(out: Any, held: list[tuple[int, str]]) -> None:
    """Write a ledgered section's vectors in id order: a case a new rule adds, numbered after
    every other, goes to the end of its section."""
    for _, line in sorted(held):
        out.write(line + "\n")
    held.clear()


def _program_unit(spec: Spec, unit: Unit, slot: int, folder: Path, seed: int) -> UnitResult:
    """A file of program vectors (``sm5.vectors.programs``; the random programs of
    ``sm5.vectors.random_programs`` at level 2), streamed to a part file."""
    outcomes: Counter[str] = Counter()
    flags: set[str] = set()
    rules: set[str] = set()
    count = 0
    fd, part = tempfile.mkstemp(dir=folder, prefix=f".{unit.instruction}.part0.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            vectors = (random_program_vectors(spec, seed, unit.random_count)
                       if unit.instruction == RANDOM_PROGRAMS
                       else program_vectors(spec, unit.instruction))
            for vector in vectors:
                outcomes.update(vector.expect.get("outcomes", ()))
                flags.update(vector.flags)
                if "rule" in vector.expect:  # a must-reject program: the rule it breaks
                    rules.add(str(vector.expect["rule"]))
                out.write(canonical(vector.to_json()) + "\n")
                count += 1
                if _COUNTERS is not None:
                    _COUNTERS[slot] += 1
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return UnitResult(unit, part, count, dict(outcomes), frozenset(rules), frozenset(flags))


def _unit_job(spec_root: str, unit: Unit, slot: int, plan: Plan, seed: int, folder: str
              ) -> UnitResult:
    return run_unit(spec_at(spec_root), unit, slot, plan, seed, Path(folder))


def _is_default(spec: Spec) -> bool:
    """The spec of this package: its golden files are the id ledger (another spec has none)."""
    return Path(spec.root).resolve() == default_root().resolve()


def spec_at(root: str) -> Spec:
    if Path(root).resolve() == default_root().resolve():
        return load_default()
    return load_spec(Path(root))


# ----------------------------------------------------------------------------------------------
# Files and manifest


@dataclass(frozen=True)
class FileReport:
    path: str
    count: int
    sha256: str
    bytes: int
    outcomes: Mapping[str, int]


def _sha256(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def manifest_json(spec: Spec, level: int, seed: int, files: Sequence[FileReport]) -> str:
    doc = {
        "format": FORMAT,
        "spec_version": spec.version,
        "generator": {"name": GENERATOR, "version": GENERATOR_VERSION, "seed": seed,
                      "level": level},
        "files": {f.path: {"sha256": f.sha256, "count": f.count, "bytes": f.bytes,
                           "outcomes": dict(sorted(f.outcomes.items()))} for f in files},
        "total": sum(f.count for f in files),
    }
    return json.dumps(doc, sort_keys=True, indent=2) + "\n"


def assemble_file(path: Path, header: Header, parts: Sequence[UnitResult]) -> FileReport:
    """Header, then the parts in order, written atomically; the parts are removed."""
    count = sum(p.count for p in parts)
    outcomes: Counter[str] = Counter()
    for p in parts:
        outcomes.update(p.outcomes)
    final = Header(header.subject, header.spec_version, header.generator, count,
                   notes_for(f for p in parts for f in p.flags), header.format)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write((canonical(final.to_json()) + "\n").encode("utf-8"))
            for p in parts:
                with open(p.path, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        for p in parts:
            Path(p.path).unlink(missing_ok=True)
    sha, size = _sha256(path)
    return FileReport(path.name, count, sha, size, dict(outcomes))


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def generate(out: Path, *, level: int = 1, seed: int = DEFAULT_SEED, spec: Spec | None = None,
             instructions: Sequence[str] | None = None,
             jobs: int | None = None, on_progress: Callable[[int], None] | None = None,
             plan: Plan | None = None) -> list[FileReport]:
    """Write one ``<instruction>.jsonl`` per instruction and ``MANIFEST.json`` into ``out``.

    The work is split in units (a file's systematic part, its random chunks) run on ``jobs``
    processes; each unit streams to a part file, and the parts are joined in order, so memory
    stays flat and the output does not depend on ``jobs``. ``on_progress`` receives the number
    of vectors made so far, a few times a second.
    """
    spec = spec or load_default()
    plan = plan or PLANS[level]
    names = (sorted([*spec.instructions, *program_subjects(),
                     *([RANDOM_PROGRAMS] if plan.random_programs else [])])
             if instructions is None else list(instructions))
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".generate."))
    try:
        reports = _generate_into(staging, spec, plan, names, level, seed, instructions,
                                 jobs, on_progress)
        _move_in(staging, out, [f"{name}.jsonl" for name in names] + [MANIFEST])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return reports


def _move_in(staging: Path, out: Path, names: Sequence[str]) -> None:
    """Move the finished files from ``staging`` into ``out``, the manifest last, with SIGINT
    and SIGTERM held back meanwhile: an interrupted run leaves every file or none."""
    held = {signal.SIGINT, signal.SIGTERM}
    blocked = threading.current_thread() is threading.main_thread()
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        for name in names:
            publish(str(staging / name), out / name)
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _generate_into(out: Path, spec: Spec, plan: Plan, names: list[str], level: int, seed: int,
                   instructions: Sequence[str] | None,
                   jobs: int | None, on_progress: Callable[[int], None] | None
                   ) -> list[FileReport]:
    work = units(spec, names, plan)
    jobs = jobs or default_jobs()
    counters = multiprocessing.RawArray("q", len(work))
    results: dict[Unit, UnitResult] = {}
    try:
        if jobs == 1:
            _init_worker(counters)
            for slot, unit in enumerate(work):
                results[unit] = run_unit(spec, unit, slot, plan, seed, out)
                if on_progress is not None:
                    on_progress(sum(counters))
        else:
            _run_parallel(spec, work, counters, jobs, plan, seed, out, results, on_progress)
    except BaseException:
        for r in results.values():
            Path(r.path).unlink(missing_ok=True)
        raise
    finally:
        _init_worker(None)
    reports = []
    rules: set[str] = set()
    for name in names:
        parts = [results[u] for u in work if u.instruction == name]
        for p in parts:
            rules |= p.rules
        header = Header(name, spec.version, {"name": GENERATOR, "version": GENERATOR_VERSION,
                                             "seed": seed, "level": level}, 0,
                        format=FORMAT if name in spec.instructions else PROGRAM_FORMAT)
        reports.append(assemble_file(out / f"{name}.jsonl", header, parts))
    if instructions is None:
        wanted = {r for name in names if name in spec.instructions for r in rule_ids(spec, name)}
        missing = sorted(wanted - rules)
        if missing:
            raise GenerationError(f"no must-reject vector breaks rule(s) {', '.join(missing)}")
    atomic_write_text(out / MANIFEST, manifest_json(spec, level, seed, reports))
    return reports


def _init_pool_worker(counters: Any) -> None:
    """A worker leaves Ctrl-C to its parent (which stops the pool) and dies on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _init_worker(counters)


def _run_parallel(spec: Spec, work: Sequence[Unit], counters: Any, jobs: int, plan: Plan,
                  seed: int, out: Path, results: dict[Unit, UnitResult],
                  on_progress: Callable[[int], None] | None) -> None:
    """Run the units on a pool of ``jobs`` processes. On any exception (a failed unit, Ctrl-C,
    SIGTERM) the workers are terminated and joined before it propagates, so none is left
    behind; the caller removes the folder holding their part files."""
    context = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else "spawn")
    pool = context.Pool(processes=jobs, initializer=_init_pool_worker, initargs=(counters,))
    try:
        pending = {unit: pool.apply_async(_unit_job, (spec.root, unit, slot, plan, seed,
                                                      str(out)))
                   for slot, unit in enumerate(work)}
        while pending:
            for unit, job in list(pending.items()):
                if job.ready():
                    results[unit] = job.get()
                    del pending[unit]
            if pending:
                next(iter(pending.values())).wait(0.25)
            if on_progress is not None:
                on_progress(sum(counters))
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
