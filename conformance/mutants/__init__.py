"""The bundled mutants: plausible implementation bugs, used to measure the suite's kill rate.

Each module of this package (but ``base`` and its helpers) holds one mutant, a
:class:`~conformance.mutants.base.NaiveTranslator` with one method overridden; its docstring
names the bug and the real implementation that has (or had) it. ``sm5 mutants`` runs each
against the golden vectors: every mutant must fail on at least one. The registry is found, not
kept: a new module is a new mutant.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from sm5.conformance.mutants.base import NaiveTranslator

#: Modules of this package that are not mutants of their own (sibling_kernels makes one per
#: sibling of the spec).
_SUPPORT = frozenset({"base", "validator_helpers", "sibling_kernels"})


def _discover() -> dict[str, type[NaiveTranslator]]:
    found: dict[str, type[NaiveTranslator]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in _SUPPORT:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                   if issubclass(cls, NaiveTranslator) and cls.__module__ == module.__name__]
        if len(classes) != 1 or classes[0].name != info.name:
            raise ImportError(f"mutant module {info.name} must define exactly one "
                              f"NaiveTranslator subclass named {info.name!r}")
        found[info.name] = classes[0]
    return dict(sorted(found.items()))


def _all() -> dict[str, type[NaiveTranslator]]:
    from sm5.conformance.mutants.sibling_kernels import sibling_mutants

    return dict(sorted({**_discover(), **sibling_mutants()}.items()))


_REGISTRY: dict[str, type[NaiveTranslator]] = {}


def all_mutants() -> dict[str, type[NaiveTranslator]]:
    """Every mutant by name, in name order: one per module, and one per sibling of the spec.
    Built on first use, so that importing the package never loads the spec (a spec error is
    then reported by the command that reads it, not raised while modules import)."""
    if not _REGISTRY:
        _REGISTRY.update(_all())
    return _REGISTRY


def __getattr__(name: str) -> dict[str, type[NaiveTranslator]]:
    """``MUTANTS``: :func:`all_mutants`, built on first use."""
    if name == "MUTANTS":
        return all_mutants()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
