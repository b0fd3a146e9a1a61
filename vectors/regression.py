"""Regression vectors: shrunk failing cases of property tests, kept as vectors.

Put :func:`exports_regressions` above ``@given`` on a property test whose arguments include a
:class:`~vectors.instances.Case`: when the test fails, hypothesis replays the shrunk example
last, and that case is written to ``vectors/regressions/<instruction>.jsonl`` with its
provenance (test name, hypothesis reproduction, spec version, the oracle's decision path), then
the failure propagates. ``sm5 vectors check`` validates and re-runs those files too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors.build import to_vector
from sm5.vectors.format import Header, Vector, read_file, write_file
from sm5.vectors.instances import Case

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
GENERATOR = {"name": "sm5-regressions", "version": 1}
_REPRODUCE = re.compile(r"@reproduce_failure\([^)]*\)")

F = TypeVar("F", bound=Callable[..., Any])


def export_regression(case: Case, test_name: str, reproduction: str = "",
                      seed: int | str | None = None, *, folder: Path | None = None,
                      failure: str = "", spec: Spec | None = None) -> Vector:
    """Append ``case`` as a regression vector (once: an identical case is not repeated)."""
    spec = spec or load_default()
    folder = folder or REGRESSIONS
    path = folder / f"{case.instruction}.jsonl"
    existing: list[Vector] = []
    if path.is_file():
        _, vectors = read_file(path)
        existing = list(vectors)
    for old in existing:
        if (old.program, old.target, old.runtime, dict(old.state)) == \
                (case.program, case.target, case.runtime, dict(case.state)):
            return old
    probe = to_vector(case, f"{case.instruction}/regression/{len(existing):04d}", spec)
    provenance = {"test": test_name, "reproduction": reproduction, "seed": seed,
                  "spec_version": spec.version, "decision_path": list(probe.clauses)}
    if failure:
        provenance["failure"] = failure[:500]
    vector = Vector(probe.id, probe.program, probe.target, probe.runtime, probe.state,
                    probe.expect, probe.clauses, tuple(sorted({*probe.flags, "regression"})),
                    probe.reason, provenance)
    header = Header(case.instruction, spec.version, GENERATOR, 0)
    write_file(path, header, [*existing, vector])
    return vector


def reproduction_of(exc: BaseException) -> str:
    """The ``@reproduce_failure(...)`` line hypothesis printed, else its falsifying example."""
    notes = [str(n) for n in getattr(exc, "__notes__", ())]
    for note in notes:
        match = _REPRODUCE.search(note)
        if match:
            return match.group(0)
    return next((n for n in notes if n.startswith("Falsifying")), "")


def exports_regressions(test_name: str | None = None, *, folder: Path | None = None
                        ) -> Callable[[F], F]:
    """Decorator for a ``@given`` test: export its shrunk failing case, then re-raise."""

    def decorate(test: F) -> F:
        hypothesis_handle = getattr(test, "hypothesis", None)
        if hypothesis_handle is None:
            raise TypeError("exports_regressions goes above @given")
        inner = hypothesis_handle.inner_test
        last: dict[str, Case] = {}
        name = test_name or f"{test.__module__}.{test.__qualname__}"

        @functools.wraps(inner)
        def recording(*args: Any, **kwargs: Any) -> Any:
            try:
                return inner(*args, **kwargs)
            except BaseException:
                found = [v for v in (*args, *kwargs.values()) if isinstance(v, Case)]
                if found:
                    last["case"] = found[0]
                raise

        hypothesis_handle.inner_test = recording

        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            last.clear()
            try:
                return test(*args, **kwargs)
            except BaseException as exc:
                if "case" in last:
                    export_regression(last["case"], name, reproduction_of(exc), folder=folder,
                                      failure=f"{type(exc).__name__}: {exc}")
                raise

        return wrapper  # type: ignore[return-value]

    return decorate
