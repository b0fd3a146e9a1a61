"""The pytest plugin (``pytest11`` entry point ``sm5``): one test per golden vector.

It loads in every pytest run of every project that has sm5-conformance installed, so it is inert
unless ``--sm5-impl`` is given. With ``--sm5-impl`` the plugin owns collection: its
``pytest_collection`` hook builds the items from the vector files and stops pytest's own file
collection, so the run is the same from any working directory and whatever ``testpaths`` says
(positional path arguments are not collected; choose vectors with ``--sm5-vectors`` and select
with ``-k``). Collection is a pure function of the options, so every pytest-xdist worker collects
the same items in the same order. A test's node id is the vector id.

Options: ``--sm5-impl`` (oracle, mutant:NAME, vkd3d, cmd:"program args", module:factory),
``--sm5-vectors`` (files or folders, repeatable or comma-separated; default: the golden set),
``--sm5-expect`` (known divergences), ``--sm5-shard i/n``, ``--sm5-results PATH`` (the results
JSON of ``sm5 conform``), ``--sm5-timeout`` (seconds per vector for ``cmd:``),
``--sm5-capabilities`` (e.g. ``executes`` for a ``cmd:`` child that does not validate).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sm5.conformance.compare import Verdict
from sm5.conformance.expectations import Expectations, load_expectations
from sm5.conformance.implementations import resolve
from sm5.conformance.interface import CAPABILITIES, Closeable, Implementation
from sm5.conformance.protocol import DEFAULT_BREAKER, DEFAULT_TIMEOUT, ImplementationBroken
from sm5.conformance.run import (
    RunReport,
    Shard,
    display_name,
    iter_selected,
    parse_shard,
    run_vector,
    vector_files,
    verdict_json,
    write_results,
)
from sm5.oracle.errors import Sm5Error
from sm5.oracle.options import count_or_zero, positive_seconds, word_list, writable_file
from sm5.vectors.format import Vector

PROPERTY = "sm5_verdict"  # the user property carrying a verdict from worker to controller
DIFF_LINES_SHOWN = 40


@dataclass
class _Run:
    impl: Implementation
    files: tuple[Path, ...]
    expectations: Expectations
    shard: Shard | None
    results_path: Path | None
    report: RunReport


_RUN = pytest.StashKey[_Run]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sm5", "sm5 conformance run (inert without --sm5-impl)")
    group.addoption("--sm5-impl", default=None, metavar="NAME",
                    help="implementation under test: oracle, mutant:NAME, vkd3d, "
                    "cmd:\"program args\" (JSON Lines child) or module:factory")
    group.addoption("--sm5-vectors", action="append", default=None, metavar="PATHS",
                    help="vector files or folders (repeat or separate with commas); "
                    "default: the golden set")
    group.addoption("--sm5-expect", default=None, metavar="FILE",
                    help="expectations file (YAML) of known divergences")
    group.addoption("--sm5-shard", default=None, metavar="I/N",
                    help="run only shard I of N (1-based; by a hash of the vector id)")
    group.addoption("--sm5-results", default=None, metavar="PATH",
                    help="write the results JSON (the format of sm5 conform --json)")
    group.addoption("--sm5-timeout", default=DEFAULT_TIMEOUT, type=float, metavar="SECONDS",
                    help=f"per-vector time-out of a cmd: implementation (default "
                    f"{DEFAULT_TIMEOUT:g})")
    group.addoption("--sm5-max-consecutive-errors", default=DEFAULT_BREAKER, metavar="K",
                    help="stop a cmd: implementation after K consecutive time-outs or "
                    f"crashes (default {DEFAULT_BREAKER}; 0: never)")
    group.addoption("--sm5-capabilities", default=None, metavar="LIST",
                    help="capabilities of the implementation (comma-separated: executes, "
                    "validates); default: its own, both for cmd:")


def _paths(values: list[str] | None) -> list[Path]:
    return [Path(p) for v in values or () for p in v.split(",") if p.strip()]


def pytest_configure(config: pytest.Config) -> None:
    spec = config.getoption("sm5_impl")
    if not spec:
        given = [name for name in ("sm5_vectors", "sm5_expect", "sm5_shard", "sm5_results",
                                   "sm5_capabilities") if config.getoption(name)]
        if given:
            raise pytest.UsageError(f"--{given[0].replace('_', '-')} needs --sm5-impl")
        return
    try:
        files = vector_files(_paths(config.getoption("sm5_vectors")))
        expect = config.getoption("sm5_expect")
        expectations = load_expectations(Path(expect) if expect else None)
        if expectations.entries:
            expectations.require_used(v for _, _, v in iter_selected(files))
        shard = parse_shard(config.getoption("sm5_shard"))
        caps_text = config.getoption("sm5_capabilities")
        caps = word_list(caps_text, "--sm5-capabilities", CAPABILITIES) \
            if caps_text is not None else None
        timeout = positive_seconds(config.getoption("sm5_timeout"), "--sm5-timeout")
        if config.getoption("sm5_results"):
            writable_file(Path(config.getoption("sm5_results")), "--sm5-results")
        breaker = count_or_zero(config.getoption("sm5_max_consecutive_errors"),
                                "--sm5-max-consecutive-errors")
        impl = resolve(spec, timeout=timeout, capabilities=caps, breaker=breaker)
    except Sm5Error as exc:
        raise pytest.UsageError(f"sm5: {exc}") from None
    results = config.getoption("sm5_results")
    run = _Run(impl, files, expectations, shard, Path(results) if results else None,
               RunReport(impl.name, tuple(display_name(f) for f in files), shard))
    config.stash[_RUN] = run
    config.pluginmanager.register(ConformanceRun(run), "sm5-conformance-run")


class ConformanceRun:
    """The hooks of an active conformance run (registered only with --sm5-impl)."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if session.config.pluginmanager.hasplugin("dsession"):
            return None  # the xdist controller collects nothing; its workers do
        suite = Sm5Suite.from_parent(session, name="sm5", nodeid="sm5", path=session.path)
        hook = session.config.hook
        session.items = list(session.genitems(suite))
        hook.pytest_collection_modifyitems(session=session, config=session.config,
                                           items=session.items)
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return True

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        run = self.run
        lines = [f"sm5: implementation {run.impl.name} "
                 f"({', '.join(sorted(run.impl.capabilities)) or 'no capabilities'}); "
                 f"vectors: {', '.join(run.report.files)}"
                 + (f"; shard {run.shard}" if run.shard else "")
                 + (f"; expectations: {run.expectations.source}"
                    if run.expectations.source else "")]
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            lines.append("sm5: path arguments are not collected in a conformance run; choose "
                         "vectors with --sm5-vectors")
        return lines

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect verdicts (on the xdist controller they arrive with the workers' reports)."""
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == PROPERTY and isinstance(value, dict):
                self.run.report.add(report.nodeid, Verdict(value["status"], value["reason"],
                                                           tuple(value.get("diffs", ()))))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if isinstance(self.run.impl, Closeable):
            self.run.impl.close()
        if self.run.results_path is not None and not hasattr(session.config, "workerinput"):
            write_results(self.run.results_path, self.run.report)

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        counts = ", ".join(f"{n} {status}" for status, n in self.run.report.counts().items()
                           if n)
        terminalreporter.write_line(f"sm5: {self.run.impl.name}: {counts or 'no vectors run'}")


class Sm5Suite(pytest.Collector):
    """All selected vectors of the run, in file order."""

    def collect(self) -> Iterator[pytest.Item]:
        run = self.config.stash[_RUN]
        try:
            selected = list(iter_selected(run.files, run.shard))
        except Sm5Error as exc:
            raise self.CollectError(f"sm5: {exc}") from None
        for file, line, vector in selected:
            yield Sm5Item.from_parent(self, name=vector.id, nodeid=vector.id, vector=vector,
                                      file=file, line=line)


class Sm5Failure(Exception):
    """A vector's verdict is fail or xpass."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


class Sm5Item(pytest.Item):
    """One vector run on the implementation under test."""

    def __init__(self, *, vector: Vector, file: Path, line: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vector = vector
        self.file = file
        self.line = line

    def runtest(self) -> None:
        run = self.config.stash[_RUN]
        try:
            verdict = run_vector(run.impl, self.vector, run.expectations)
        except ImplementationBroken as exc:
            pytest.exit(f"sm5: {exc}", returncode=pytest.ExitCode.TESTS_FAILED)
        self.user_properties.append((PROPERTY, verdict_json(verdict)))
        if verdict.status in ("fail", "xpass"):
            raise Sm5Failure(verdict)
        if verdict.status == "xfail":
            pytest.xfail(verdict.reason)
        if verdict.status != "pass":
            pytest.skip(f"{verdict.status}: {verdict.reason}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, Sm5Failure):
            return failure_text(self.vector, excinfo.value.verdict,
                                f"{display_name(self.file)}:{self.line}")
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.file, self.line - 1, self.vector.id


def failure_text(vector: Vector, verdict: Verdict, where: str) -> str:
    """The failure message: vector, program, target, clauses, reason and the diffs."""
    lines = [f"{verdict.status}: {verdict.reason}", f"vector {vector.id} ({where})", "program:"]
    lines += [f"    {line}" for line in vector.program]
    lines.append(f"target {vector.target}, runtime {vector.runtime}")
    if vector.clauses:
        lines.append(f"clauses: {', '.join(vector.clauses)}")
    outcomes = vector.expect.get("outcomes", [])
    rule = vector.expect.get("rule")
    lines.append(f"expected outcome: {', '.join(outcomes)}" + (f" (rule {rule})" if rule else ""))
    if vector.reason:
        lines.append(f"why: {vector.reason}")
    if verdict.diffs:
        lines.append("values outside their acceptance sets:")
    shown = verdict.diffs[:DIFF_LINES_SHOWN]
    lines += [f"  {d}" for d in shown]
    if len(verdict.diffs) > len(shown):
        lines.append(f"  ... and {len(verdict.diffs) - len(shown)} more")
    return "\n".join(lines)
