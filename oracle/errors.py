"""The project's error types. Every bad input ends in one of these, with a location."""

from __future__ import annotations

from typing import Any

MESSAGE_LIMIT = 240
"""Characters of an input's text quoted in a message; the rest is dropped and counted."""


def bounded(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many were dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def shown(value: Any, limit: int = MESSAGE_LIMIT) -> str:
    """A bounded ``repr`` of an input value, however large (the repr itself is cut off early
    for containers, so a huge list costs no more than its first items)."""
    if isinstance(value, list | tuple | dict) and len(value) > limit:
        head = list(value)[:limit] if not isinstance(value, dict) else \
            dict(list(value.items())[:limit])
        return bounded(f"{type(value).__name__} of {len(value)} items, starting {head!r}", limit)
    try:
        return bounded(repr(value), limit)
    except (ValueError, RecursionError):  # an integer beyond the conversion limit, deep nesting
        return f"a {type(value).__name__} too large to show"


class Sm5Error(Exception):
    """Base of every error the project reports to a user (exit code 2 on the command line)."""

    def __init__(self, message: str, *, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class SpecError(Sm5Error):
    """A spec file is malformed: YAML syntax, schema, or a rule that does not parse."""


class RuleError(Sm5Error):
    """A rule-language expression is not allowed or cannot be evaluated."""


class AsmError(Sm5Error):
    """An asm line does not parse. Carries the 1-based line and column."""

    def __init__(self, message: str, *, line: int, column: int, text: str = "",
                 source: str = "") -> None:
        self.line = line
        self.column = column
        self.text = text
        where = f"{source or '<asm>'}:{line}:{column}"
        super().__init__(message, where=where)


class StateError(Sm5Error):
    """A machine state (JSON) does not match the program or the vector format."""


class ExecError(Sm5Error):
    """The program cannot be executed on the given state (e.g. a register the state lacks)."""


class EncodeError(Sm5Error):
    """A program cannot be encoded as DXBC tokens (unknown instruction, malformed operand)."""


class ContainerError(Sm5Error):
    """Bytes are not a well-formed DXBC container (truncated, bad magic, bad checksum)."""


class NotExpressible(Sm5Error):
    """A vector cannot be run as a single-thread cs_5_0 harness; ``message`` says why."""
