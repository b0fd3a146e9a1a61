"""SM5 asm text: parse it into the program model and print it back.

``parse_program(text)`` / ``parse_line(text)`` read text (any malformed line raises ``AsmError``
with its 1-based line and column); ``format_program`` / ``format_line`` write one canonical
spelling, and ``parse(format(x)) == x``. The grammar comes from the spec
(``sm5.oracle.model.spec``); see ``sm5.oracle.asm.parser`` for the AST conventions the two
directions share.
"""

from __future__ import annotations

from sm5.oracle.asm.parser import grammar_of, parse_line, parse_program, parse_vector_program
from sm5.oracle.asm.printer import format_line, format_operand, format_program, format_value

__all__ = [
    "format_line",
    "format_operand",
    "format_program",
    "format_value",
    "grammar_of",
    "parse_line",
    "parse_program",
    "parse_vector_program",
]
