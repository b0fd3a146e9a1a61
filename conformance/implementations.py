"""Resolving an implementation name (``--sm5-impl`` / ``sm5 conform --impl``) to an object.

Accepted spellings:

* ``oracle``: the executable specification (always passes);
* ``mutant:<name>``: a bundled mutant (``sm5 mutants`` lists them);
* ``vkd3d``: vkd3d-shader on Mesa lavapipe, through ``sm5.conformance.vkd3d.adapter`` (optional);
* ``d3d11``, ``d3d11:vulkan``, ``d3d11:dxvk``, ``d3d11:warp``: the D3D11 API through the runner
  of ``sm5.conformance.d3d11`` (under Wine off Windows; ``dxvk``: DXVK's DLLs; optional);
* ``results:<file>``: replay answers recorded elsewhere: the D3D11 runner's output
  (``sm5.conformance.d3d11.replay``) or replies in the protocol's format
  (``sm5.conformance.offline``), told apart by the file's first line;
* ``cmd:<program args>``: a child process speaking the JSON Lines protocol (shell-style quoting);
* ``<module>:<factory>``: import the module and call ``factory()``. A module that is not on
  ``sys.path`` is looked up in the ``search_path`` folders the caller gives (the invocation
  directory and pytest's rootdir, the working directory of ``sm5 conform``): those are appended to
  ``sys.path``, never put first, so they cannot shadow an installed module.
"""

from __future__ import annotations

import importlib
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from sm5.conformance.interface import CAPABILITIES, Implementation
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.protocol import DEFAULT_BREAKER, DEFAULT_TIMEOUT, SubprocessImplementation
from sm5.oracle.errors import Sm5Error


class ImplementationError(Sm5Error):
    """An implementation name does not resolve, or the object is not an implementation."""


class Unavailable(ImplementationError):
    """A named implementation exists but cannot run here (a missing optional component)."""


def _vkd3d() -> Implementation:
    try:
        module = importlib.import_module("sm5.conformance.vkd3d.adapter")
    except ImportError as exc:
        raise Unavailable(f"the vkd3d adapter cannot be loaded ({exc}); see "
                          "conformance/vkd3d/setup.sh", where="vkd3d") from None
    create = getattr(module, "create", None)
    if not callable(create):
        raise Unavailable("sm5.conformance.vkd3d.adapter has no create()", where="vkd3d")
    try:
        impl = create()
    except Sm5Error as exc:
        raise Unavailable(exc.message, where=exc.where or "vkd3d") from None
    except (OSError, RuntimeError) as exc:
        raise Unavailable(f"{type(exc).__name__}: {exc}", where="vkd3d") from None
    return _checked(impl, "vkd3d")


def _d3d11(text: str) -> Implementation:
    from sm5.conformance.d3d11.adapter import TargetUnavailable, create

    try:
        return _checked(create(text.partition(":")[2]), text)
    except TargetUnavailable as exc:
        raise Unavailable(exc.message, where=exc.where or text) from None


def _replay(text: str) -> Implementation:
    from sm5.conformance.offline import replay_of

    return _checked(replay_of(Path(text.removeprefix("results:"))), text)


#: The variants of ``d3d11[:variant]`` (see ``sm5.conformance.d3d11.adapter.create``).
D3D11_VARIANTS = ("", "vulkan", "dxvk", "warp")
D3D11_NAMES = tuple(f"d3d11:{v}" if v else "d3d11" for v in D3D11_VARIANTS)


#: Implementations known by a plain name.
NAMED: dict[str, Callable[[], Implementation]] = {
    "oracle": OracleImplementation,
    "vkd3d": _vkd3d,
}


def resolve(text: str, *, timeout: float = DEFAULT_TIMEOUT,
            capabilities: frozenset[str] | None = None,
            breaker: int = DEFAULT_BREAKER, search_path: Sequence[Path] = ()
            ) -> Implementation:
    """The implementation ``text`` names. ``capabilities`` overrides those of a ``cmd:`` child
    (default: executes and validates) and narrows those of any other implementation."""
    text = text.strip()
    if capabilities is not None and not capabilities <= CAPABILITIES:
        raise ImplementationError(f"unknown capabilities {sorted(capabilities - CAPABILITIES)}; "
                                  f"expected a subset of {sorted(CAPABILITIES)}")
    if text.startswith("cmd:"):
        return _command(text, timeout, capabilities, breaker)
    impl = _resolve_object(text, search_path)
    if capabilities is not None:
        impl.capabilities = frozenset(impl.capabilities & capabilities)
    return impl


def check_name(text: str) -> None:
    """Fail now when ``text`` cannot name an implementation, without starting one: a known
    name, an existing mutant, a ``cmd:`` program that exists, an importable ``module:factory``.
    Whether a named component (vkd3d) is installed is decided when it is resolved."""
    text = text.strip()
    if text in NAMED:
        return
    if text.startswith("cmd:"):
        _command(text, DEFAULT_TIMEOUT, None)
        return
    if text == "d3d11" or text.startswith("d3d11:"):
        if text.partition(":")[2] not in D3D11_VARIANTS:
            raise ImplementationError(f"unknown D3D11 variant; expected one of "
                                      f"{', '.join(D3D11_NAMES)}", where=text)
        return
    if text.startswith("results:"):
        if not Path(text.removeprefix("results:")).is_file():
            raise ImplementationError("no such results file", where=text)
        return
    if text.startswith("mutant:") or ":" not in text:
        _resolve_object(text, ())
        return
    module_name, _, factory_name = text.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ImplementationError(f"cannot import {module_name}: {exc}", where=text) from None
    if not callable(getattr(module, factory_name, None)):
        raise ImplementationError(f"{module_name} has no callable {factory_name}", where=text)


def _resolve_object(text: str, search_path: Sequence[Path]) -> Implementation:
    if text in NAMED:
        return NAMED[text]()
    if text == "d3d11" or text.startswith("d3d11:"):
        return _d3d11(text)
    if text.startswith("results:"):
        return _replay(text)
    if text.startswith("mutant:"):
        from sm5.conformance.mutants import MUTANTS  # the registry imports every mutant module
        name = text.removeprefix("mutant:")
        if name not in MUTANTS:
            raise ImplementationError(f"no mutant {name!r}; known: {', '.join(sorted(MUTANTS))}",
                                      where=text)
        return MUTANTS[name]()
    if ":" in text:
        return _factory(text, search_path)
    raise ImplementationError(
        f"unknown implementation {text!r}; expected one of {', '.join(sorted(NAMED))}, "
        "d3d11[:vulkan|:dxvk|:warp], results:<file>, mutant:<name>, cmd:<program args> or "
        "<module>:<factory>")


def _command(text: str, timeout: float, capabilities: frozenset[str] | None,
             breaker: int = DEFAULT_BREAKER) -> Implementation:
    try:
        argv = shlex.split(text.removeprefix("cmd:"))
    except ValueError as exc:
        raise ImplementationError(f"cannot split the command line: {exc}", where=text) from None
    if not argv:
        raise ImplementationError("cmd: needs a program", where=text)
    program = argv[0]
    if shutil.which(program) is None and not Path(program).is_file():
        raise ImplementationError(f"program {program!r} not found", where=text)
    return SubprocessImplementation(
        argv, name=text, timeout=timeout, breaker=breaker,
        capabilities=capabilities if capabilities is not None
        else frozenset({"executes", "validates"}))


def import_user_module(name: str, search_path: Sequence[Path]) -> ModuleType:
    """Import ``name``; when its top-level package is not on ``sys.path``, append the
    ``search_path`` folders to ``sys.path`` (after everything already there) and try again."""
    top = name.partition(".")[0]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != top:
            raise  # the module was found; something it imports is missing
    present = {str(Path(p).resolve()) for p in sys.path if p}
    added = [str(d.resolve()) for d in search_path if str(d.resolve()) not in present]
    if not added:
        return importlib.import_module(name)
    sys.path.extend(dict.fromkeys(added))
    importlib.invalidate_caches()
    return importlib.import_module(name)


def _factory(text: str, search_path: Sequence[Path]) -> Implementation:
    module_name, _, factory_name = text.partition(":")
    try:
        module = import_user_module(module_name, search_path)
    except ImportError as exc:
        raise ImplementationError(f"cannot import {module_name}: {exc}", where=text) from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ImplementationError(f"{module_name} has no callable {factory_name}", where=text)
    try:
        impl = factory()
    except Sm5Error:
        raise
    except Exception as exc:  # a user's factory: any failure is reported as such
        raise ImplementationError(f"{factory_name}() raised {type(exc).__name__}: {exc}",
                                  where=text) from None
    return _checked(impl, text)


def _checked(impl: object, where: str) -> Implementation:
    if not isinstance(impl, Implementation):
        raise ImplementationError(
            f"{type(impl).__name__} is not an implementation: it needs name, capabilities and "
            "run(vector)", where=where)
    caps = frozenset(impl.capabilities)
    if not caps <= CAPABILITIES:
        raise ImplementationError(f"unknown capabilities {sorted(caps - CAPABILITIES)}",
                                  where=where)
    return impl
