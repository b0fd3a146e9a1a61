"""Guard words: every view under test sits inside a larger allocation, with canaries around it.

D3D never writes outside a view: an out-of-bounds store is dropped, and even the outcomes that
leave memory undefined leave at most the view itself (the UAV) undefined. A view of a resource is
a window of its buffer, so an implementation that writes one element past the end of a view
writes into memory the vector's own words cannot show. The request therefore describes each
``u#`` and ``t#`` view as a window of a larger allocation: ``guard.before`` words precede the
view's first word and ``guard.after`` words follow its last. The implementation keeps them in
memory beside the view (a D3D runner: a buffer with the view at ``FirstElement``), and returns
them in its reply as it reads them back; any changed guard word fails the vector, naming it.

``g#`` has no guards: an out-of-bounds ``g#`` access makes all shared memory undefined, and a
D3D program cannot place memory beside a ``g#``. A view with no words (a null view) has none.

The guard words of a view are a pure function of the view (stable, documented in the docs):
each side holds one element (a structure's words, or 4 words of a raw or typed view), and the
word at offset ``k`` from the view's first word (``k < 0`` before it, ``k >= size`` after it) is
``(0xC0DE0000 + k) mod 2**32``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypeGuard

from sm5.oracle.machine.program import register_file
from sm5.oracle.machine.state import MachineState, state_from_json
from sm5.oracle.model.spec import Model, load_default
from sm5.vectors.format import Vector

GUARD_BASE = 0xC0DE0000
GUARD_KEY = "guard"
RAW_GUARD_WORDS = 4
_U32 = 0xFFFFFFFF


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, without the abstract-class check for the JSON types a
    state is made of (it sits on the path of every view of every request and reply)."""
    kind = value.__class__
    return kind is dict or (kind is not list and kind is not int and isinstance(value, Mapping))


def guard_length(resource: Mapping[str, Any]) -> int:
    """Words on each side of a view: one structure of a structured view, else 4."""
    stride = resource.get("stride")
    if resource.get("kind") == "structured" and isinstance(stride, int) and stride >= 4:
        return max(RAW_GUARD_WORDS, stride // 4)
    return RAW_GUARD_WORDS


def guard_words(resource: Mapping[str, Any]) -> dict[str, list[int]]:
    """The guard of one view: ``{"before": [...], "after": [...]}`` (fresh lists)."""
    before, after = guard_sides(guard_length(resource), len(resource.get("data", ())))
    return {"before": list(before), "after": list(after)}


@lru_cache(maxsize=1024)
def guard_sides(n: int, size: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The words before and after a view of ``size`` words, ``n`` on each side (views of the
    same size recur across a run's requests)."""
    return (tuple((GUARD_BASE + k) & _U32 for k in range(-n, 0)),
            tuple((GUARD_BASE + k) & _U32 for k in range(size, size + n)))


def guarded_files() -> frozenset[str]:
    """Register files whose views get guards: every resource file but shared memory and the
    files that only stand for r# (a constant buffer is bound whole, read-only: an element past
    its end reads 0, so no guard word can sit after it)."""
    model = load_default().model
    known = _guarded.get(id(model))
    if known is None or known[0] is not model:
        standing = frozenset(f.name for f in model.register_files if f.stands_for)
        known = _guarded[id(model)] = (
            model, frozenset(model.resource_files) - frozenset(model.shared_memory_files)
            - standing)
    return known[1]


#: guarded_files by model (asked per view of every request: worked out once per model).
_guarded: dict[int, tuple[Model, frozenset[str]]] = {}


def is_guarded(name: str, value: Any, files: frozenset[str] | None = None) -> bool:
    """Does the view ``name`` get guard words (``files``: `guarded_files`, when known)?"""
    return (is_mapping(value)
            and register_file(name) in (guarded_files() if files is None else files)
            and isinstance(value.get("data"), list) and bool(value["data"]))


def guarded_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The state as a request carries it: every guarded view with its guard words."""
    files = guarded_files()
    return {name: ({**value, GUARD_KEY: guard_words(value)} if is_guarded(name, value, files)
                   else value)
            for name, value in state.items()}


def request_vector(vector: Vector) -> Vector:
    """The vector as an implementation receives it: its state with guard words."""
    # Guard words are no part of the machine state: the vector's typed forms carry over.
    return vector.with_state(guarded_state(vector.state), same_machine_state=True)


def request_state(vector: Vector) -> MachineState:
    """The machine state a request describes (its guard words left out), as typed values: the
    one its field checks built when the vector was read, else decoded now."""
    if vector.decoded_state is not None:
        return vector.decoded_state
    return state_from_json(without_guards(vector.state))


def guard_diffs(sent: Mapping[str, Any], observed: Mapping[str, Any],
                expected: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """What a reply did outside the request: a changed or missing guard word, a register or
    resource neither the request nor the expected state has (a temp the program uses that the
    request does not give is in the expected state: it starts undefined). One line each
    (``u0.guard.after[0]: ...``)."""
    lines: list[str] = []
    known = set(sent) | set(expected or ()) | {"invocation"}
    for name in sorted(set(observed) - known):
        lines.append(f"{name}: the reply has a register or resource the request does not have")
    for name, value in sent.items():
        if not is_mapping(value) or GUARD_KEY not in value:
            continue
        got = observed.get(name)
        got_guard = got.get(GUARD_KEY) if is_mapping(got) else None
        if not is_mapping(got_guard):
            lines.append(f"{name}.{GUARD_KEY}: missing from the reply (the guard words around "
                         f"the view must be returned as read back)")
            continue
        for side in ("before", "after"):
            want = value[GUARD_KEY][side]
            words = got_guard.get(side)
            if words == want and type(words) is list:
                continue  # the common case: every guard word as sent (ints compare exactly)
            if not isinstance(words, list) or len(words) != len(want):
                lines.append(f"{name}.{GUARD_KEY}.{side}: expected {len(want)} words, observed "
                             f"{_show(words)}")
                continue
            for i, (w, g) in enumerate(zip(want, words, strict=True)):
                if w != g:
                    shown = f"0x{g:08x}" if isinstance(g, int) else _show(g)
                    lines.append(f"{name}.{GUARD_KEY}.{side}[{i}]: written outside the view "
                                 f"(guard 0x{w:08x}, observed {shown})")
    return tuple(lines)


def without_guards(state: Mapping[str, Any]) -> dict[str, Any]:
    """A state with the guard words taken off its views (what the vector's own words say)."""
    return {name: ({k: v for k, v in value.items() if k != GUARD_KEY}
                   if is_mapping(value) and GUARD_KEY in value else value)
            for name, value in state.items()}


def guards_kept(sent: Mapping[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
    """``reply`` with the guard words of ``sent`` put back unchanged on its views: the answer of
    an implementation that models the views alone and never touches memory beside them."""
    return {name: ({**value, GUARD_KEY: sent[name][GUARD_KEY]}
                   if is_mapping(value) and is_mapping(sent.get(name))
                   and GUARD_KEY in sent[name] else value)
            for name, value in reply.items()}


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
