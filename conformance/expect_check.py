"""``--check-expect``: does an expectations file still describe what an implementation does?

From the verdicts of a run with the file, each entry is weighed against the vectors it decides:

* a failing vector (``fail``) that no entry explains is unexplained;
* an entry that decides no vector at all matches nothing (stale, or a typo);
* a ``fail`` or ``xfail`` entry none of whose vectors diverges explains no divergence (the
  implementation was fixed: the entry is stale);
* a ``fail`` entry some of whose vectors pass is too wide (``xpass``): narrow it, or make it
  ``xfail`` when whether a vector shows the divergence depends on its values.

``skip`` and ``unsupported`` entries are not run, so only "matches nothing" applies to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sm5.conformance.compare import Verdict
from sm5.conformance.expectations import Expectation, Expectations
from sm5.vectors.format import Vector

#: Verdicts of a vector that was sent to the implementation (the others were not run).
_RUN = frozenset({"pass", "fail", "xfail", "xpass"})


@dataclass(frozen=True)
class EntryUse:
    """One entry against the run: the vectors it decides, how many ran, how many diverge."""

    number: int  # 1-based position in the file
    entry: Expectation
    decided: tuple[str, ...]
    ran: int
    diverging: int
    passing: tuple[str, ...]

    def problem(self) -> str | None:
        where = f"entry {self.number} ({self.entry.label}, {self.entry.status})"
        if not self.decided:
            return f"{where}: matches no vector"
        if self.entry.status not in ("fail", "xfail") or not self.ran:
            return None
        if not self.diverging:
            return f"{where}: explains no divergence: its {self.ran} vectors all pass (stale)"
        if self.entry.status == "fail" and self.passing:
            return (f"{where}: {len(self.passing)} of its vectors pass (xpass), e.g. "
                    f"{', '.join(self.passing[:3])}: narrow it, or make it xfail")
        return None


@dataclass(frozen=True)
class ExpectCheck:
    uses: tuple[EntryUse, ...]
    unexplained: tuple[tuple[str, Verdict], ...]

    def problems(self) -> list[str]:
        lines = [p for u in self.uses if (p := u.problem()) is not None]
        lines += [f"unexplained failure {vid}: {v.reason}" for vid, v in self.unexplained]
        return lines

    def table(self) -> str:
        """One line per entry: number, label, status, vectors decided, run, diverging."""
        rows = [("#", "entry", "status", "vectors", "run", "diverging")]
        rows += [(str(u.number), u.entry.label, u.entry.status, str(len(u.decided)), str(u.ran),
                  str(u.diverging)) for u in self.uses]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in rows)


def check_expectations(expectations: Expectations, vectors: Iterable[Vector],
                       verdicts: Mapping[str, Verdict]) -> ExpectCheck:
    """Weigh every entry against the verdicts of a run made with ``expectations``."""
    selected = [v for v in vectors if v.id in verdicts]
    decided = expectations.decided(selected)
    uses: list[EntryUse] = []
    for index, entry in enumerate(expectations.entries):
        ids = tuple(decided[index])
        ran = [i for i in ids if verdicts[i].status in _RUN]
        uses.append(EntryUse(index + 1, entry, ids, len(ran),
                             sum(1 for i in ran if verdicts[i].status == "xfail"),
                             tuple(i for i in ran if verdicts[i].status in ("pass", "xpass"))))
    unexplained = tuple(sorted((k, v) for k, v in verdicts.items() if v.status == "fail"))
    return ExpectCheck(tuple(uses), unexplained)


def per_vector(expectations: Expectations, vectors: Iterable[Vector],
               verdicts: Mapping[str, Verdict]) -> list[str]:
    """The per-vector view: ``<id>  <verdict>  <entry>`` for every vector an entry decides or
    that fails, in run order."""
    lines: list[str] = []
    for vector in vectors:
        verdict = verdicts.get(vector.id)
        if verdict is None:
            continue
        entry = expectations.lookup(vector)
        if entry is not None or verdict.status == "fail":
            lines.append(f"{vector.id}  {verdict.status}  {entry.label if entry else '-'}")
    return lines
