"""Hypothesis strategies derived from the spec, for property tests of any implementation.

They draw through the same builders as the seeded generator (``sm5.vectors.shapes``,
``sm5.vectors.points``, ``sm5.vectors.realize``), with hypothesis making the choices, so every draw
shrinks towards the spec's first (default) choices:

* :func:`legal_instances` - legal shapes: any available cell, register files, kinds, masks,
  swizzles, selects, modifiers, register numbers, typed details, ``_sat``;
* :func:`illegal_instances` - a legal shape with one attribute changed, breaking exactly one
  legality rule;
* :func:`states_for` - cases whose state fires a given clause, drawn from its boundary points;
* :func:`cases` - any of the above as a runnable :class:`~vectors.instances.Case` (program
  lines, target, runtime, state JSON).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from hypothesis import assume
from hypothesis import strategies as st

from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors import domain
from sm5.vectors.instances import Case, Shape, Unrealizable
from sm5.vectors.points import LEVEL_BUDGETS, Explorer, Point
from sm5.vectors.realize import assemble, conform, realize, realizer
from sm5.vectors.shapes import GenerationError, default_shape, moves, random_legal, violations

T = TypeVar("T")


class DrawChooser:
    """A :class:`~vectors.instances.Chooser` backed by hypothesis draws."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def words(self, n: int, bits: int) -> list[int]:
        """Memory contents from one drawn seed: shrinks to all zeros-ish, costs one draw."""
        seed = self.draw(st.integers(0, (1 << 32) - 1))
        rng = random.Random(seed)
        return [rng.getrandbits(bits) for _ in range(n)]


@dataclass(frozen=True)
class Illegal:
    """A shape that breaks exactly ``rule``, reached from a legal one by ``move``."""

    shape: Shape
    rule: str
    move: str


@domain.per_spec()
def _explorer(spec: Spec, name: str) -> Explorer:
    return Explorer(spec, name, LEVEL_BUDGETS[1])


@domain.per_spec()
def _points(spec: Spec, name: str) -> tuple[Point, ...]:
    return tuple(_explorer(spec, name).points())


def clause_points(spec: Spec, name: str, clause_id: str) -> tuple[Point, ...]:
    points = tuple(p for p in _points(spec, name) if clause_id in p.clauses)
    if not points:
        spec.instruction(name).clause(clause_id)  # KeyError for an unknown clause
        raise GenerationError(f"no boundary point fires {clause_id}")
    return points


def legal_instances(name: str, spec: Spec | None = None) -> st.SearchStrategy[Shape]:
    resolved = spec or load_default()
    resolved.instruction(name)

    @st.composite
    def build(draw: st.DrawFn) -> Shape:
        return random_legal(resolved, name, DrawChooser(draw))

    return build()


def illegal_instances(name: str, spec: Spec | None = None) -> st.SearchStrategy[Illegal]:
    resolved = spec or load_default()

    @st.composite
    def build(draw: st.DrawFn) -> Illegal:
        base = draw(legal_instances(name, resolved))
        move = draw(st.sampled_from(list(moves(resolved, base))))
        broken = violations(resolved, move.shape)
        assume(len(broken) == 1 and broken[0] != "<unrealizable>")
        return Illegal(move.shape, broken[0], move.what)

    return build()


def states_for(name: str, clause_id: str, spec: Spec | None = None
               ) -> st.SearchStrategy[Case]:
    """Cases on the default target whose semantic inputs fire ``clause_id`` (lanes beyond the
    first, for multi-lane instructions, come from the same context)."""
    resolved = spec or load_default()
    points = clause_points(resolved, name, clause_id)

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        chooser = DrawChooser(draw)
        first = draw(st.sampled_from(points))
        shape = default_shape(resolved, name)
        lanes = realizer(resolved, name).points(shape)
        sem = resolved.instruction(name).semantics
        same = [p for p in _points(resolved, name) if p.context(sem) == first.context(sem)]
        chosen = [first] + [draw(st.sampled_from(same)) for _ in range(lanes - 1)]
        return realize(resolved, shape, [p.env for p in chosen], chooser,
                       note=f"fires {clause_id}")

    return build()


def cases(name: str, spec: Spec | None = None) -> st.SearchStrategy[Case]:
    """Any case of ``name``: a legal instance with a random point, a clause boundary state, or
    an illegal instance."""
    resolved = spec or load_default()
    clauses = [c.id for c in resolved.instruction(name).clauses]

    @st.composite
    def legal(draw: st.DrawFn) -> Case:
        chooser = DrawChooser(draw)
        shape = draw(legal_instances(name, resolved))
        explorer = _explorer(resolved, name).with_fresh_palettes()
        points: list[Point] = []
        while len(points) < realizer(resolved, name).points(shape):
            point = explorer.random_point(chooser)
            assume(point is not None)
            assert point is not None
            points.append(point)
        try:
            conformed = conform(resolved, shape, [p.env for p in points])
        except Unrealizable:
            assume(False)
            raise
        return realize(resolved, conformed, [p.env for p in points], chooser)

    @st.composite
    def illegal(draw: st.DrawFn) -> Case:
        found = draw(illegal_instances(name, resolved))
        return assemble(resolved, found.shape, DrawChooser(draw), note=found.move)

    boundary = st.sampled_from(clauses).flatmap(lambda c: states_for(name, c, resolved))
    return st.one_of(legal(), boundary, illegal())
