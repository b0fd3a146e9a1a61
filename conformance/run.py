"""The conformance engine shared by the pytest plugin and ``sm5 conform``.

Select the vectors (files, shard), run each on the implementation, judge it, and collect the
verdicts into a results document (JSON, deterministic: sorted, no timings, no timestamps)::

    {"format": "sm5-results/1", "impl": "oracle", "vectors_files": [...], "shard": "1/2",
     "counts": {"pass": 812, "fail": 0, ...},
     "results": {"<vector id>": {"status": "pass", "reason": "", "diffs": [...]}, ...}}

``shard`` appears only for a sharded run; ``diffs`` only when there are some; ``impl_version``
only when the implementation names its version (``version``, e.g. DXVK's).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sm5.conformance.collections_policy import run_collections
from sm5.conformance.compare import (
    FAILING,
    VERDICTS,
    Verdict,
    early_verdict,
    judge_answer,
)
from sm5.conformance.expectations import NONE, Expectation, Expectations
from sm5.conformance.guards import request_vector
from sm5.conformance.interface import Batching, Closeable, Implementation, Result
from sm5.conformance.protocol import ImplementationBroken
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.vectors.format import Vector, VectorError, read_file, read_header

_GLOB = re.compile(r"[*?\[]")

RESULTS_FORMAT = "sm5-results/1"
DIFF_LIMIT = 50  # diff lines kept per vector in the results document


class RunError(Sm5Error):
    """Bad run options: a shard spec, missing vector files, duplicate vector ids."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): a vector belongs to it by a hash of its id."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, vector_id: str) -> bool:
        return shard_of(vector_id, self.count) == self.index - 1


def shard_of(vector_id: str, count: int) -> int:
    """The 0-based shard of a vector id: sha256 of the id modulo ``count`` (stable everywhere)."""
    digest = hashlib.sha256(vector_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str | None) -> Shard | None:
    if text is None or text == "":
        return None
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n:
        raise RunError(f"shard {text!r}: expected i/n with 1 <= i <= n, e.g. 1/4")
    return Shard(i, n)


# ----------------------------------------------------------------------------------------------
# Vector selection


def golden_dir() -> Path:
    """The golden vectors shipped in the ``vectors`` package."""
    return Path(str(resources.files("sm5.vectors") / "golden"))


def vector_files(paths: Sequence[Path] | None) -> tuple[Path, ...]:
    """The ``*.jsonl`` files named (a folder means its files, sorted); default: the golden set."""
    roots = list(paths) if paths else [golden_dir()]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            found = sorted(root.glob("*.jsonl"))
            if not found:
                raise RunError("no *.jsonl vector files in this folder", where=str(root))
            files.extend(found)
        elif root.is_file():
            files.append(root)
        else:
            raise RunError("no such vector file or folder", where=str(root))
    return tuple(dict.fromkeys(files))


def display_name(file: Path) -> str:
    """How a vector file is named in results: package-relative for the golden set, else relative
    to the working directory when below it, else as given."""
    golden = golden_dir()
    try:
        return f"vectors/golden/{file.resolve().relative_to(golden.resolve())}"
    except ValueError:
        pass
    try:
        return str(file.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(file)


def parse_select(values: Iterable[str] | None) -> tuple[str, ...]:
    """Vector ids or fnmatch globs from repeated and/or comma-separated option values."""
    return tuple(p.strip() for v in values or () for p in v.split(",") if p.strip())


def _selector(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Whether a vector id is one of ``patterns`` (exact ids by a set look-up, fnmatch globs);
    no patterns: every vector."""
    if not patterns:
        return lambda _id: True
    exact = frozenset(p for p in patterns if not _GLOB.search(p))
    globs = tuple(p for p in patterns if p not in exact)
    return lambda vector_id: vector_id in exact or any(
        fnmatch.fnmatchcase(vector_id, p) for p in globs)


def planned_count(files: Iterable[Path], shard: Shard | None = None,
                  select: Sequence[str] = ()) -> int | None:
    """How many vectors a run will judge, from the files' header counts; None when a shard or a
    selection makes it unknown before the run."""
    if shard is not None or select:
        return None
    return sum(read_header(file).count for file in files)


def iter_selected(files: Iterable[Path], shard: Shard | None = None,
                  select: Sequence[str] = ()) -> Iterator[tuple[Path, int, Vector]]:
    """(file, line number, vector) of every selected vector, in file order; ids must be unique.
    A ``select`` that matches no vector at all is an error (a mistyped id or glob)."""
    seen: set[str] = set()
    matched = False
    chosen = _selector(select)
    for file in files:
        _, vectors = read_file(file)
        for line, vector in enumerate(vectors, start=2):
            if vector.id in seen:
                raise VectorError(f"duplicate vector id {vector.id!r}", where=f"{file}:{line}")
            seen.add(vector.id)
            if not chosen(vector.id):
                continue
            matched = True
            if shard is None or shard.holds(vector.id):
                yield file, line, vector
    if select and not matched:
        raise RunError(f"no vector id matches {', '.join(select)}", where="--select")


def _selected_from(vectors: Sequence[Vector], shard: Shard | None,
                   select: Sequence[str]) -> Iterator[Vector]:
    """``iter_selected``'s choice among vectors already read (their ids checked then)."""
    chosen = _selector(select)
    matched = False
    for vector in vectors:
        if not chosen(vector.id):
            continue
        matched = True
        if shard is None or shard.holds(vector.id):
            yield vector
    if select and not matched:
        raise RunError(f"no vector id matches {', '.join(select)}", where="--select")


# ----------------------------------------------------------------------------------------------
# Running


def run_vector(impl: Implementation, vector: Vector,
               expectations: Expectations = NONE) -> Verdict:
    """Run one vector (unless skipped or not applicable) and judge the answer."""
    return _run_one(impl, vector, expectations, frozenset(impl.capabilities))


def _run_one(impl: Implementation, vector: Vector, expectations: Expectations,
             capabilities: frozenset[str]) -> Verdict:
    expectation = expectations.lookup(vector)
    early = early_verdict(vector, expectation, capabilities)
    if early is not None:
        return early
    sent = request_vector(vector)
    try:
        result = impl.run(sent)
    except ImplementationBroken:  # the circuit breaker stops the whole run
        raise
    except Exception as exc:  # an implementation's bug is that vector's failure, not the run's
        result = Result.error(f"the implementation raised {type(exc).__name__}: {exc}")
    return judge_answer(vector, _checked(result, "run()"), expectation, capabilities,
                        request=sent.state)


def _checked(result: object, call: str) -> Result:
    if not isinstance(result, Result):
        return Result.error(f"{call} returned {type(result).__name__}, not a Result")
    return result


#: Applicable vectors handed to a batching implementation at a time.
RUN_BATCH = 256


def run_vectors(impl: Implementation, vectors: Iterable[Vector],
                expectations: Expectations = NONE) -> Iterator[tuple[Vector, Verdict]]:
    """Every vector with its verdict, in order: `run_vector` one by one, or through
    ``run_batch`` in runs of up to :data:`RUN_BATCH` applicable vectors when the
    implementation batches (the verdicts are the same)."""
    capabilities = frozenset(impl.capabilities)
    if not isinstance(impl, Batching):
        for vector in vectors:
            yield vector, _run_one(impl, vector, expectations, capabilities)
        return
    pending: list[Vector] = []  # as sent: with guard words
    ready: list[tuple[Vector, Expectation | None, Verdict | None]] = []

    def flush() -> Iterator[tuple[Vector, Verdict]]:
        try:
            results: list[object] = list(impl.run_batch(pending)) if pending else []
        except ImplementationBroken:
            raise
        except Exception as exc:  # a bug of the implementation fails its vectors, not the run
            results = [Result.error(f"the implementation raised {type(exc).__name__}: {exc}")
                       ] * len(pending)
        if len(results) != len(pending):
            results = [Result.error(f"run_batch() answered {len(results)} results for "
                                    f"{len(pending)} vectors")] * len(pending)
        answers = iter(zip(pending, results, strict=True))
        for vector, expectation, early in ready:
            if early is None:
                sent, answer = next(answers)
                early = judge_answer(vector, _checked(answer, "run_batch()"), expectation,
                                     capabilities, request=sent.state)
            yield vector, early
        pending.clear()
        ready.clear()

    for vector in vectors:
        expectation = expectations.lookup(vector)
        early = early_verdict(vector, expectation, capabilities)
        ready.append((vector, expectation, early))
        if early is None:
            pending.append(request_vector(vector))
            if len(pending) >= RUN_BATCH:
                yield from flush()
    yield from flush()


@dataclass
class RunReport:
    """Verdicts of one run, by vector id."""

    impl: str
    files: tuple[str, ...]
    shard: Shard | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    #: The implementation's version when it names one (its ``version`` attribute), else "".
    version: str = ""

    def record(self, vector_id: str, verdict: Verdict) -> None:
        self.verdicts[vector_id] = verdict

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        for verdict in self.verdicts.values():
            counts[verdict.status] += 1
        return counts

    @property
    def failed(self) -> bool:
        return any(v.status in FAILING for v in self.verdicts.values())

    def failures(self) -> list[tuple[str, Verdict]]:
        return sorted((k, v) for k, v in self.verdicts.items() if v.status in FAILING)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": RESULTS_FORMAT, "impl": self.impl,
                               "vectors_files": list(self.files), "counts": self.counts(),
                               "results": {k: verdict_json(self.verdicts[k])
                                           for k in sorted(self.verdicts)}}
        if self.shard is not None:
            doc["shard"] = str(self.shard)
        if self.version:
            doc["impl_version"] = self.version
        return doc


def impl_version(impl: object) -> str:
    """The version an implementation names (a ``version`` string attribute), or ""."""
    version = getattr(impl, "version", "")
    return version if isinstance(version, str) else ""


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {"status": verdict.status, "reason": verdict.reason}
    if verdict.diffs:
        out["diffs"] = list(verdict.diffs[:DIFF_LIMIT])
        if len(verdict.diffs) > DIFF_LIMIT:
            out["diffs"].append(f"... and {len(verdict.diffs) - DIFF_LIMIT} more")
    return out


def results_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_results(path: Path, report: RunReport) -> None:
    atomic_write_text(path, results_text(report.to_json()))


def run(impl: Implementation, paths: Sequence[Path] | None = None,
        expectations: Expectations = NONE, shard: Shard | None = None,
        progress: Callable[[str, Verdict], None] | None = None,
        require_used: bool = True, select: Sequence[str] = (),
        vectors: Sequence[Vector] | None = None) -> RunReport:
    """Run every selected vector on ``impl``; the implementation is closed at the end.

    An expectations entry that decides no vector of the files (whatever the shard) is an
    error, raised before anything runs, unless ``require_used`` is off (``--check-expect``
    reports such entries with the rest). ``vectors``: every vector of the files, already read
    in file order (``iter_selected`` without a shard or selection), so the run reads no file
    again (the pipeline reads the golden set once for all its implementations).
    """
    files = vector_files(paths)
    report = RunReport(impl.name, tuple(display_name(f) for f in files), shard,
                       version=impl_version(impl))
    try:
        if require_used and expectations.entries:
            expectations.require_used(vectors if vectors is not None
                                      else (v for _, _, v in iter_selected(files)))
        selected = (_selected_from(vectors, shard, select) if vectors is not None
                    else (vector for _, _, vector in iter_selected(files, shard, select)))
        with run_collections() as vector_done:
            for vector, verdict in run_vectors(impl, selected, expectations):
                report.record(vector.id, verdict)
                if progress is not None:
                    progress(vector.id, verdict)
                vector_done()
    finally:
        if isinstance(impl, Closeable):
            impl.close()
    return report
