"""An active conformance run under pytest (loaded by :mod:`sm5.conformance.plugin` only when
``--sm5-impl`` is given): one test per vector.

The run owns collection: its ``pytest_collection`` hook builds the items from the vector files and
stops pytest's own file collection, so the run is the same from any working directory and whatever
``testpaths`` says (positional path arguments are not collected; choose vectors with
``--sm5-vectors`` and ``--sm5-select``, or ``-k``). Collection is a pure function of the options,
so every pytest-xdist worker collects the same items in the same order. A test's node id is the
vector id; in pytest's JUnit XML (``--junitxml``) its ``classname`` is ``<instruction>.<category>``
and its ``name`` the vector id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sm5.conformance.compare import FAILING, VERDICTS, Verdict
from sm5.conformance.expectations import Expectations, load_expectations
from sm5.conformance.implementations import resolve
from sm5.conformance.interface import CAPABILITIES, Closeable, Implementation
from sm5.conformance.junit import junit_case_names
from sm5.conformance.protocol import DEFAULT_BREAKER, DEFAULT_TIMEOUT, ImplementationBroken
from sm5.conformance.run import (
    RunReport,
    Shard,
    display_name,
    impl_version,
    iter_selected,
    parse_select,
    parse_shard,
    run_vector,
    vector_files,
    write_results,
)
from sm5.oracle.cli.options import count_or_zero, positive_seconds, word_list, writable_file
from sm5.oracle.errors import Sm5Error
from sm5.vectors.format import Vector

#: User properties carrying a verdict from an xdist worker to the controller; plain strings, so
#: they read well in the JUnit XML's <properties> too.
STATUS, REASON, DIFFS = "sm5_status", "sm5_reason", "sm5_diffs"
DIFF_LINES_SHOWN = 40


@dataclass
class _Run:
    impl: Implementation
    files: tuple[Path, ...]
    expectations: Expectations
    shard: Shard | None
    select: tuple[str, ...]
    results_path: Path | None
    report: RunReport


_RUN = pytest.StashKey[_Run]()


def _paths(values: list[str] | None) -> list[Path]:
    return [Path(p) for v in values or () for p in v.split(",") if p.strip()]


def activate(config: pytest.Config) -> None:
    """Set up the run ``--sm5-impl`` asks for and register its hooks (bad options: a usage
    error naming the option's value)."""
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
        timeout_option = config.getoption("sm5_timeout")
        timeout = DEFAULT_TIMEOUT if timeout_option is None else \
            positive_seconds(timeout_option, "--sm5-timeout")
        if config.getoption("sm5_results"):
            writable_file(Path(config.getoption("sm5_results")), "--sm5-results")
        breaker_option = config.getoption("sm5_max_consecutive_errors")
        breaker = DEFAULT_BREAKER if breaker_option is None else \
            count_or_zero(breaker_option, "--sm5-max-consecutive-errors")
        impl = resolve(config.getoption("sm5_impl"), timeout=timeout, capabilities=caps,
                       breaker=breaker,
                       search_path=(config.invocation_params.dir, config.rootpath))
    except Sm5Error as exc:
        raise pytest.UsageError(f"sm5: {exc}") from None
    results = config.getoption("sm5_results")
    run = _Run(impl, files, expectations, shard, parse_select(config.getoption("sm5_select")),
               Path(results) if results else None,
               RunReport(impl.name, tuple(display_name(f) for f in files), shard,
                         version=impl_version(impl)))
    config.stash[_RUN] = run
    config.pluginmanager.register(ConformanceRun(run, config), "sm5-conformance-run")


class ConformanceRun:
    """The hooks of an active conformance run (registered only with --sm5-impl)."""

    def __init__(self, run: _Run, config: pytest.Config) -> None:
        self.run = run
        self.config = config

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

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect verdicts (on the xdist controller they arrive with the workers' reports) and
        name the JUnit test case before pytest's JUnit writer records it."""
        junit_case_names(self.config, report)
        if report.when != "call":
            return
        props = {name: value for name, value in report.user_properties
                 if isinstance(value, str)}
        status = props.get(STATUS)
        if status in VERDICTS:
            diffs = props.get(DIFFS, "")
            self.run.report.record(report.nodeid, Verdict(status, props.get(REASON, ""),
                                                       tuple(diffs.splitlines())))

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
            selected = list(iter_selected(run.files, run.shard, run.select))
        except Sm5Error as exc:
            raise self.CollectError(f"sm5: {exc}") from None
        for file, line, vector in selected:
            yield Sm5Item.from_parent(self, name=vector.id, nodeid=vector.id, vector=vector,
                                      file=file, line=line)


class Sm5Failure(Exception):
    """A vector's verdict is failing (fail, xpass, crash, timeout)."""

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
        self.user_properties.append((STATUS, verdict.status))
        if verdict.reason:
            self.user_properties.append((REASON, verdict.reason))
        if verdict.diffs:
            self.user_properties.append((DIFFS, "\n".join(verdict.diffs)))
        if verdict.status in FAILING:
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
