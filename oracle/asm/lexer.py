"""Splitting one asm line into tokens, each with its 1-based column.

The token set is small and position-independent: words (instruction names, registers, component
letters, flags), numbers (greedy, validated later so ``12abc`` is reported as one bad number),
punctuation and comments. Any other character is an error at its own column.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sm5.oracle.errors import AsmError

WORD = "word"
NUMBER = "number"
PUNCT = "punct"

# One alternation tried at every position; ``bad`` catches any single character the grammar does
# not know, so scanning never stalls and never skips text silently.
_TOKEN = re.compile(
    r"[ \t\r]*(?:"
    r"(?P<comment>//.*)"
    r"|(?P<number>[-+]?[0-9](?:[0-9A-Za-z_.]|(?<=[eE])[-+])*)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<punct>[,()|.\-\[\]+{}])"
    r"|(?P<bad>.)"
    r"|$)",
    re.ASCII | re.DOTALL)

MAX_SHOWN = 40


class Token(NamedTuple):
    kind: str
    text: str
    column: int  # 1-based

    @property
    def end(self) -> int:
        """The column just after the token."""
        return self.column + len(self.text)


def shown(text: str) -> str:
    """A token for an error message: quoted, escaped, and cut short if very long."""
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + "..."
    return repr(text)


def tokenize(text: str, *, line: int, source: str) -> list[Token]:
    """The tokens of one line, comments and white space dropped."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind is None or kind == "comment":
            continue  # white space at the end of the line
        start = match.start(kind)
        if kind == "bad":
            raise AsmError(f"unexpected character {shown(match.group(kind))}", line=line,
                           column=start + 1, text=text, source=source)
        tokens.append(Token(kind, match.group(kind), start + 1))
    return tokens
