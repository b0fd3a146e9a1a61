"""The pytest plugin (``pytest11`` entry point ``sm5``): one test per golden vector.

It loads in every pytest run of every project that has sm5-conformance installed, so at start-up
it only registers its options: it imports nothing of the suite (no oracle, no vectors, no YAML or
JSON Schema) and puts nothing on ``sys.path``, so it costs nothing and can never shadow a module of
the project under test. Only when ``--sm5-impl`` is given does ``pytest_configure`` import the run
(:mod:`sm5.conformance.pytest_run`), which then owns collection.

Options: ``--sm5-impl`` (oracle, mutant:NAME, vkd3d, cmd:"program args", module:factory),
``--sm5-vectors`` (files or folders, repeatable or comma-separated; default: the golden set),
``--sm5-select`` (vector ids or globs), ``--sm5-expect`` (known divergences), ``--sm5-shard i/n``,
``--sm5-results PATH`` (the results JSON of ``sm5 conform``), ``--sm5-timeout`` (seconds per
vector for ``cmd:``), ``--sm5-capabilities`` (e.g. ``executes`` for a ``cmd:`` child that does not
validate).
"""

from __future__ import annotations

import pytest

#: Options that mean nothing without --sm5-impl (their ``dest`` names).
NEEDS_IMPL = ("sm5_vectors", "sm5_select", "sm5_expect", "sm5_shard", "sm5_results",
              "sm5_capabilities", "sm5_max_consecutive_errors")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sm5", "sm5 conformance run (inert without --sm5-impl)")
    group.addoption("--sm5-impl", default=None, metavar="NAME",
                    help="implementation under test: oracle, mutant:NAME, vkd3d, "
                    "cmd:\"program args\" (JSON Lines child) or module:factory (the module is "
                    "looked up on sys.path, then in the invocation directory and the rootdir)")
    group.addoption("--sm5-vectors", action="append", default=None, metavar="PATHS",
                    help="vector files or folders (repeat or separate with commas); "
                    "default: the golden set")
    group.addoption("--sm5-select", action="append", default=None, metavar="IDS",
                    help="only these vector ids or fnmatch globs (repeat or separate with "
                    "commas), e.g. '<instruction>/boundary/*'")
    group.addoption("--sm5-expect", default=None, metavar="FILE",
                    help="expectations file (YAML) of known divergences")
    group.addoption("--sm5-shard", default=None, metavar="I/N",
                    help="run only shard I of N (1-based; by a hash of the vector id)")
    group.addoption("--sm5-results", default=None, metavar="PATH",
                    help="write the results JSON (the format of sm5 conform --json)")
    group.addoption("--sm5-timeout", default=None, type=float, metavar="SECONDS",
                    help="per-vector time-out of a cmd: implementation (default: the "
                    "protocol's)")
    group.addoption("--sm5-max-consecutive-errors", default=None, metavar="K",
                    help="stop a cmd: implementation after K consecutive time-outs or "
                    "crashes (default: the protocol's; 0: never)")
    group.addoption("--sm5-capabilities", default=None, metavar="LIST",
                    help="capabilities of the implementation (comma-separated: executes, "
                    "validates); default: its own, both for cmd:")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("sm5_impl"):
        given = [name for name in NEEDS_IMPL if config.getoption(name)]
        if given:
            raise pytest.UsageError(f"--{given[0].replace('_', '-')} needs --sm5-impl")
        return
    from sm5.conformance.pytest_run import activate  # the suite loads only for a real run

    activate(config)
