"""The project's error types. Every bad input ends in one of these, with a location."""

from __future__ import annotations


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
