"""Level 2's random programs with flow control: drawn from one seed (the same seed, the same
programs), legal, ending well within the step budget, never widened, and reaching every clause of
the flow-control instructions they use at their boundaries (-0.0 and NaN conditions)."""

from __future__ import annotations

from collections import Counter

from sm5.oracle.model.spec import load_default
from sm5.vectors.programs import random_program_vectors
from sm5.vectors.random_programs import random_program_cases

SPEC = load_default()


def test_the_same_seed_gives_the_same_programs_and_another_seed_others() -> None:
    first = [(i, c.program, c.state) for i, c, _ in random_program_cases(SPEC, 0, 20)]
    again = [(i, c.program, c.state) for i, c, _ in random_program_cases(SPEC, 0, 20)]
    other = [(i, c.program, c.state) for i, c, _ in random_program_cases(SPEC, 1, 20)]
    assert first == again
    assert [p for _, p, _ in first] != [p for _, p, _ in other]


def test_random_programs_run_and_reach_the_clauses_of_flow_control() -> None:
    vectors = list(random_program_vectors(SPEC, 0, 500))  # raises on a widened or unbounded one
    assert len(vectors) == 500
    assert not any(v.rejected for v in vectors)
    fired = Counter(c for v in vectors for c in v.clauses)
    wanted = {c.id for name in ("if", "else", "endif", "loop", "endloop", "break", "breakc",
                                "continuec", "switch", "case", "default", "retc")
              for c in SPEC.control.instructions[name].clauses}
    wanted.discard("retc.returns")  # no subroutines in the grammar
    assert sorted(wanted - set(fired)) == []
    conditions = {w for v in vectors for w in v.state["r1"]}
    assert {0x80000000, 0x7FC00000} <= conditions
    for v in vectors:  # the vectors are about every flow-control instruction they hold
        code = [line.split()[0] for line in v.program if not line.startswith("dcl_")]
        names = [n.split("_")[0] if n.split("_")[0] in SPEC.control.instructions else n
                 for n in code]
        assert v.subject == tuple(k for k, n in enumerate(names)
                                  if n in SPEC.control.instructions)
