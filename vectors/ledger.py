"""Stable ids for the sections whose cases follow the spec's rules, register files and theorems.

A must-reject vector exists for each illegal shape the spec allows one to build: a new rule or
register file adds shapes in the middle of the section (and a new theorem or sibling adds
witnesses among the others). Numbered in generation order, every id
after the first new shape would move. Instead the checked-in golden file is the ledger: a case
whose description (its ``reason``, which names the rules it breaks and the shape) is in the file
keeps the number it has there, in order when several share a description, and a new case
takes the next number never used. Ids are never reused, so a removed case leaves a gap. Each
case also draws its values from a generator seeded by its own description, so a new case
changes neither the id nor the content of another.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from sm5.vectors.shapes import GenerationError

#: The sections numbered through the ledger: the must-reject cases (rules, register files) and
#: the z3 witnesses (theorems, siblings).
LEDGERED = frozenset({"reject", "witness"})


@dataclass
class IdLedger:
    """The numbers a golden file gave each (section, reason), and the next free number."""

    known: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    next_free: dict[str, int] = field(default_factory=dict)

    def number(self, section: str, reason: str) -> int:
        """The case's number: its number in the ledger, else a number never used before."""
        numbers = self.known.get((section, reason))
        if numbers:
            return numbers.pop(0)
        number = self.next_free.get(section, 0)
        self.next_free[section] = number + 1
        return number


def read_ledger(path: Path, name: str) -> IdLedger:
    """The ledger of instruction ``name`` from its golden file (empty when there is none)."""
    ledger = IdLedger()
    if not path.is_file():
        return ledger
    known: dict[tuple[str, str], list[int]] = defaultdict(list)
    prefix = f"{name}/"
    with path.open(encoding="utf-8") as lines:
        for line_no, line in enumerate(lines, 1):
            if not any(f'"{prefix}{s}/' in line for s in LEDGERED):
                continue
            try:
                doc = json.loads(line)
                _, section, number = doc["id"].split("/")
                reason = doc["reason"]
                value = int(number)
            except (ValueError, KeyError, TypeError, AttributeError):
                raise GenerationError(f"{path.name} line {line_no}: the id ledger expected a "
                                      f"vector with an id '{name}/<section>/<number>' and a "
                                      "reason") from None
            if section in LEDGERED and isinstance(reason, str):
                known[(section, reason)].append(value)
                ledger.next_free[section] = max(ledger.next_free.get(section, 0), value + 1)
    ledger.known = {key: sorted(numbers) for key, numbers in known.items()}
    return ledger
