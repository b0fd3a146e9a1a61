"""The interface an implementation under test offers the conformance run.

An implementation is anything with a ``name``, a set of ``capabilities`` and a ``run(vector)``
method returning a :class:`Result`. Capabilities:

* ``executes``: it runs legal instruction instances and returns the final machine state;
* ``validates``: it tells legal from illegal instances (answers ``rejected`` for illegal ones).

A vector the implementation cannot judge by its capabilities is *not applicable* to it and is
never sent (an executing-only implementation never sees a must-reject vector).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from sm5.vectors.format import Vector

#: Every capability an implementation may declare.
CAPABILITIES: frozenset[str] = frozenset({"executes", "validates"})

Status = Literal["state", "rejected", "unsupported", "error", "crash", "timeout"]
STATUSES: tuple[Status, ...] = ("state", "rejected", "unsupported", "error", "crash", "timeout")


@dataclass(frozen=True)
class Result:
    """What an implementation answers for one vector.

    * ``state``: it executed the instance; ``state`` is the final machine state in the JSON form
      of the vector format (``{"r0": [u32 x4], "u0": {"kind": ..., "data": [...]}, ...}``).
      A validating-only implementation answers ``state`` with ``state=None`` to accept an instance.
    * ``rejected``: it refuses the instance as illegal; ``reason`` says why (ideally naming the
      spec rule id).
    * ``unsupported``: it cannot run this instance (a missing feature); not a failure.
    * ``error``: the run broke (a malformed answer, an exception); always a failure.
    * ``crash``: the implementation died before answering (exit, signal); a failure of its own.
    * ``timeout``: no answer within the time allowed; a failure of its own.
    """

    status: Status
    state: Mapping[str, Any] | None = None
    reason: str = ""

    @classmethod
    def of_state(cls, state: Mapping[str, Any]) -> Result:
        return cls("state", state)

    @classmethod
    def accepted(cls) -> Result:
        """A validating-only implementation accepts the instance without executing it."""
        return cls("state", None)

    @classmethod
    def rejected(cls, reason: str) -> Result:
        return cls("rejected", None, reason)

    @classmethod
    def unsupported(cls, reason: str) -> Result:
        return cls("unsupported", None, reason)

    @classmethod
    def error(cls, reason: str) -> Result:
        return cls("error", None, reason)

    @classmethod
    def crash(cls, reason: str) -> Result:
        return cls("crash", None, reason)

    @classmethod
    def timeout(cls, reason: str) -> Result:
        return cls("timeout", None, reason)

    @classmethod
    def failed(cls, kind: str, reason: str) -> Result:
        """A run that gave no answer: ``crash`` or ``timeout`` as ``kind`` says, any other
        kind an ``error``."""
        status: Status = "crash" if kind == "crash" else "timeout" if kind == "timeout" \
            else "error"
        return cls(status, None, reason)


@runtime_checkable
class Implementation(Protocol):
    """An implementation under test (see the module docstring)."""

    name: str
    capabilities: frozenset[str]

    def run(self, vector: Vector) -> Result:
        """Run one vector: only ``program``, ``target``, ``runtime`` and ``state`` may be read."""
        ...


@runtime_checkable
class Closeable(Protocol):
    """An implementation holding resources (a child process) the run releases at its end."""

    def close(self) -> None: ...


@runtime_checkable
class Batching(Protocol):
    """An implementation that runs many vectors at a time faster than one by one (shared
    processes, submissions or compiles). ``run_batch`` answers what ``run`` would for each
    vector, in order; the conformance engine sends it runs of consecutive applicable vectors."""

    def run_batch(self, vectors: Sequence[Vector]) -> list[Result]: ...
