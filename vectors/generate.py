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
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sm5.oracle.fileio import atomic_write_text
from sm5.oracle.spec import Spec, default_root, load_default, load_spec
from sm5.vectors.build import to_vector
from sm5.vectors.format import FORMAT, Header, canonical
from sm5.vectors.instances import Case
from sm5.vectors.points import LEVEL_BUDGETS, Budget, Explorer, check_coverage
from sm5.vectors.sections import (
    Pool,
    alias_cases,
    boundary_cases,
    cell_cases,
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

GENERATOR = "sm5-vectors"
#: Bumped whenever the generator's output changes for the same spec and seed.
GENERATOR_VERSION = 1
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


RANDOM_BUDGET = Budget(max_words=256)
PLANS = {1: Plan(1, LEVEL_BUDGETS[1], 300, RANDOM_BUDGET),
         2: Plan(2, LEVEL_BUDGETS[2], 340_000, RANDOM_BUDGET)}



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
        out.append(Unit(name, 0))
        for k in range(0, plan.random_cases, chunk):
            out.append(Unit(name, k // chunk + 1, min(chunk, plan.random_cases - k), k))
    return out


def systematic_cases(spec: Spec, name: str, plan: Plan, seed: int
                     ) -> Iterator[tuple[str, Case]]:
    explorer = Explorer(spec, name, plan.budget)
    points = list(explorer.points())
    check_coverage(spec.instruction(name), {c for p in points for c in p.clauses})
    pool = Pool(spec, name, points)
    sections: list[tuple[str, Iterable[Case]]] = [
        ("boundary", boundary_cases(spec, name, points, seed)),
        ("mask-swizzle", mask_swizzle_cases(spec, name, pool, seed)),
        ("registers", register_cases(spec, name, pool, seed)),
        ("cell", cell_cases(spec, name, pool, seed)),
        ("reject", reject_cases(spec, name, seed)),
        ("limit", limit_cases(spec, name, pool, seed)),
        ("alias", alias_cases(spec, name, pool, seed)),
        ("witness", witness_cases(spec, name, load_witnesses(spec, name), seed)),
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


_COUNTERS: Any = None


def _init_worker(counters: Any) -> None:
    global _COUNTERS
    _COUNTERS = counters


def run_unit(spec: Spec, unit: Unit, slot: int, plan: Plan, seed: int, folder: Path
             ) -> UnitResult:
    """Generate one unit into a hidden part file of ``folder``; checks its completeness."""
    name = unit.instruction
    if unit.part == 0:
        cases: Iterator[tuple[str, Case]] = systematic_cases(spec, name, plan, seed)
    else:
        explorer = Explorer(spec, name, plan.random_budget)
        cases = (("random", c) for c in random_cases(spec, name, explorer, unit.random_count,
                                                     seed, chunk=unit.part - 1))
    numbers: Counter[str] = Counter()
    if unit.part > 0:
        numbers["random"] = unit.random_offset
    outcomes: Counter[str] = Counter()
    fired: set[str] = set()
    rules: set[str] = set()
    fd, part = tempfile.mkstemp(dir=folder, prefix=f".{name}.part{unit.part}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            for section, case in cases:
                vector = to_vector(case, f"{name}/{section}/{numbers[section]:04d}", spec)
                numbers[section] += 1
                (rules if vector.rejected else fired).update(vector.clauses)
                outcomes.update(vector.expect.get("outcomes", ()))
                out.write(canonical(vector.to_json()) + "\n")
                if _COUNTERS is not None:
                    _COUNTERS[slot] += 1
        if unit.part == 0:
            check_coverage(spec.instruction(name), fired)
            missing = [r.id for r in spec.instruction(name).rules if r.id not in rules]
            if missing:
                raise GenerationError(f"{name}: no must-reject vector breaks "
                                      f"{', '.join(missing)}")
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return UnitResult(unit, part, sum(numbers.values()) - (unit.random_offset if unit.part else 0),
                      dict(outcomes), frozenset(rules))


def _unit_job(spec_root: str, unit: Unit, slot: int, plan: Plan, seed: int, folder: str
              ) -> UnitResult:
    return run_unit(spec_at(spec_root), unit, slot, plan, seed, Path(folder))


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
    final = Header(header.instruction, header.spec_version, header.generator, count)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write((canonical(final.to_json()) + "\n").encode("utf-8"))
            for p in parts:
                with open(p.path, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        for p in parts:
            Path(p.path).unlink(missing_ok=True)
    sha, size = _sha256(path)
    return FileReport(path.name, count, sha, size, dict(outcomes))


class Progress:
    """A one-line progress bar on a terminal: vectors made, rate, estimated share done."""

    def __init__(self, stream: TextIO, expected: int) -> None:
        self.stream = stream
        self.expected = max(expected, 1)
        self.start = time.monotonic()

    def show(self, count: int, done_files: int, files: int) -> None:
        share = min(count / self.expected, 1.0)
        bar = "#" * int(share * 30)
        rate = count / max(time.monotonic() - self.start, 1e-9)
        self.stream.write(f"\r[{bar:<30}] {count:>9} vectors {rate:>7.0f}/s  "
                          f"{done_files}/{files} files")
        self.stream.flush()

    def finish(self, count: int, files: int) -> None:
        self.expected = count
        self.show(count, files, files)
        self.stream.write("\n")
        self.stream.flush()


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def generate(out: Path, *, level: int = 1, seed: int = DEFAULT_SEED, spec: Spec | None = None,
             instructions: Sequence[str] | None = None, progress: TextIO | None = None,
             jobs: int | None = None, on_progress: Callable[[int], None] | None = None,
             plan: Plan | None = None) -> list[FileReport]:
    """Write one ``<instruction>.jsonl`` per instruction and ``MANIFEST.json`` into ``out``.

    The work is split in units (a file's systematic part, its random chunks) run on ``jobs``
    processes; each unit streams to a part file, and the parts are joined in order, so memory
    stays flat and the output does not depend on ``jobs``.
    """
    spec = spec or load_default()
    plan = plan or PLANS[level]
    names = sorted(spec.instructions) if instructions is None else list(instructions)
    out.mkdir(parents=True, exist_ok=True)
    work = units(spec, names, plan)
    jobs = jobs or default_jobs()
    counters = multiprocessing.RawArray("q", len(work))
    expected = len(names) * SYSTEMATIC_ESTIMATE + plan.random_cases * len(names)
    bar = Progress(progress, expected) if progress is not None else None
    results: dict[Unit, UnitResult] = {}
    try:
        if jobs == 1:
            _init_worker(counters)
            for slot, unit in enumerate(work):
                results[unit] = run_unit(spec, unit, slot, plan, seed, out)
                if bar is not None:
                    bar.show(sum(counters), 0, len(names))
                if on_progress is not None:
                    on_progress(sum(counters))
        else:
            _run_parallel(spec, work, counters, jobs, plan, seed, out, results, bar, names,
                          on_progress)
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
                                             "seed": seed, "level": level}, 0)
        reports.append(assemble_file(out / f"{name}.jsonl", header, parts))
    if bar is not None:
        bar.finish(sum(r.count for r in reports), len(names))
    if instructions is None:
        wanted = {r for name in names for r in rule_ids(spec, name)}
        missing = sorted(wanted - rules)
        if missing:
            raise GenerationError(f"no must-reject vector breaks rule(s) {', '.join(missing)}")
    atomic_write_text(out / MANIFEST, manifest_json(spec, level, seed, reports))
    return reports


def _run_parallel(spec: Spec, work: Sequence[Unit], counters: Any, jobs: int, plan: Plan,
                  seed: int, out: Path, results: dict[Unit, UnitResult],
                  bar: Progress | None, names: Sequence[str],
                  on_progress: Callable[[int], None] | None) -> None:
    context = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                             initargs=(counters,)) as pool:
        futures = {pool.submit(_unit_job, spec.root, unit, slot, plan, seed, str(out)): unit
                   for slot, unit in enumerate(work)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_EXCEPTION)
                for future in done:
                    results[futures[future]] = future.result()
                if bar is not None:
                    finished = sum(1 for n in names if all(
                        u in results for u in work if u.instruction == n))
                    bar.show(sum(counters), finished, len(names))
                if on_progress is not None:
                    on_progress(sum(counters))
        except BaseException:
            for future in pending:
                future.cancel()
            raise
