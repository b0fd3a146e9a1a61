"""Program-state theorems: the element indices of x#, cb# and the icb, on 32-bit words.

For each register file with elements (spec/model.yaml ``register_files`` with ``elements``), over
the variables of ``element_index`` as 32-bit bit-vectors, with the element count within the
file's limit (``max_elements``):

``index``
    the ``index`` rule on 32-bit words is the exact sum of ``base`` and ``offset`` modulo 2^32:
    the interpreter's element (the rule evaluated on Python integers) is the one a 32-bit
    adder gives, ``0xFFFFFFFF + 1`` included.
``classification``
    ``in_range`` and its negation split every (index, count) and each can hold; an in-range
    element's four words lie inside the ``4 * count`` words of the file (exact arithmetic), so
    a read in range never reaches past the data, and a read past the end is what the file's
    ``out_of_range`` says (0, or the program's undefined outcome).
``byte_offset_wrap``
    a counterexample expected: an implementation that bounds-checks the 32-bit *byte* offset
    ``16 * index`` against ``16 * count`` lets an index past the end in (``16 * 0x10000000``
    wraps to 0), so the witness names an index the vectors test.

Witnesses are canonical: the lexicographically smallest model of each query, variables in the
order ``base, offset, count``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from sm5.oracle.model.spec import ElementIndex, Model, RegisterFile
from sm5.oracle.proofs.theorems.base import Budget, Found, new_solver
from sm5.oracle.proofs.z3rules import translate
from sm5.oracle.rulelang.rules import Value

WORD_BITS = 32
#: The bytes of one element (4 components of 32 bits).
ELEMENT_BYTES = 16
#: The order in which witnesses are minimised.
ORDER = ("base", "offset", "count")
#: What a witness shows (its claims): the element is inside the count, past the end, or the
#: sum of base and offset passes 2^32.
INSIDE, PAST_END, WRAPS = "in_range", "past_end", "wraps"


def shown(file: RegisterFile) -> str:
    """How a file is written in the details: ``x#``, ``cb#``, ``icb``."""
    return f"{file.name}#" if file.numbered else file.name


def element_files(model: Model) -> tuple[RegisterFile, ...]:
    """The register files whose operands name an element (x#, cb#, the icb)."""
    return tuple(f for f in model.register_files if f.elements is not None)


def _symbols(rules: ElementIndex) -> dict[str, Any]:
    return {name: z3.BitVec(name, WORD_BITS) for name in rules.variables}


def _index(rules: ElementIndex, env: Mapping[str, Any]) -> Any:
    translation = translate(rules.index, env, encoding="bv")
    return translation.expr


def _inside(rules: ElementIndex, env: Mapping[str, Any], index: Any) -> Any:
    translation = translate(rules.in_range, {**env, "index": index}, encoding="bv")
    return z3.And(translation.condition, translation.expr)


def _wide_sum(env: Mapping[str, Any]) -> Any:
    """The exact sum of base and offset, on 33 bits."""
    return z3.ZeroExt(1, env["base"]) + z3.ZeroExt(1, env["offset"])


def _wraps(env: Mapping[str, Any]) -> Any:
    """The exact sum of base and offset passes 2^32."""
    return z3.Extract(WORD_BITS, WORD_BITS, _wide_sum(env)) == 1


def _count_range(model: Model, file: RegisterFile, count: Any) -> Any:
    limit = model.limits[file.max_elements] if file.max_elements else (1 << WORD_BITS) - 1
    return z3.ULE(count, limit)


def _lexmin(solver: Any, budget: Budget, env: Mapping[str, Any],
            names: Sequence[str]) -> dict[str, Value]:
    """The lexicographically smallest model (``names`` in order) of the solver's query,
    which must be satisfiable; the bounds found are kept as the solver's assertions."""
    found: dict[str, Value] = {}
    solver.push()
    for name in names:
        symbol = env[name]
        low, high = 0, (1 << WORD_BITS) - 1
        while low < high:
            middle = (low + high) // 2
            if budget.check(solver, z3.ULE(symbol, middle)):
                high = middle
            else:
                low = middle + 1
        solver.add(symbol == low)
        found[name] = low
    solver.pop()
    return found


@dataclass(frozen=True)
class _Terms:
    """The rules of ``element_index`` over 32-bit symbols: the element named and whether it
    lies inside ``count`` elements."""

    rules: ElementIndex
    env: Mapping[str, Any]
    index: Any
    count: Any
    inside: Any


def _terms(model: Model) -> _Terms:
    rules = model.element_index
    assert rules is not None
    env = _symbols(rules)
    index = _index(rules, env)
    return _Terms(rules, env, index, env["count"], _inside(rules, env, index))


def index_theorem(model: Model, file: RegisterFile, budget: Budget) -> Found:
    """The index rule is the 32-bit sum: exact sum modulo 2^32 for every base and offset."""
    rules = model.element_index
    assert rules is not None
    env = _symbols(rules)
    index = _index(rules, env)
    exact = z3.Extract(WORD_BITS - 1, 0, _wide_sum(env))  # the exact sum modulo 2^32
    solver = new_solver()
    if budget.check(solver, index != exact):
        model_ = solver.model()
        values = {n: model_.eval(env[n], model_completion=True).as_long() for n in ORDER[:2]}
        return Found("failed", f"the index of {shown(file)} is not the 32-bit sum at {values}",
                     (values,))
    solver.add(_wraps(env))
    if not budget.check(solver):
        return Found("failed", "no base and offset wrap")
    wrap = _lexmin(solver, budget, env, ORDER[:2])
    return Found("proved", f"the element of {shown(file)} is (base + offset) mod 2^32 for every "
                 "32-bit base and offset; the smallest wrapping sum is "
                 f"{wrap['base']:#x} + {wrap['offset']} = element 0", (wrap,), ((WRAPS,),))


def classification_theorem(model: Model, file: RegisterFile, budget: Budget) -> Found:
    """in_range and past the end split every index, each can hold, and an in-range element's
    words lie inside the file's data."""
    terms = _terms(model)
    env, index, count, inside = terms.env, terms.index, terms.count, terms.inside
    solver = new_solver()
    solver.add(_count_range(model, file, count))
    # the element's last word and the file's word count, exactly (on 36 bits)
    last_word = z3.ZeroExt(4, index) * 4 + 3
    if budget.check(solver, inside, z3.UGE(last_word, z3.ZeroExt(4, count) * 4)):
        return Found("failed", f"an in-range element of {shown(file)} reaches past its words")
    witnesses: list[dict[str, Value]] = []
    claims: list[tuple[str, ...]] = []
    for label, query, claim in (("inside", inside, (INSIDE,)),
                                ("past the end", z3.Not(inside), (PAST_END,)),
                                ("inside by a wrap", z3.And(inside, _wraps(env)),
                                 (INSIDE, WRAPS))):
        solver.push()
        solver.add(query)
        if not budget.check(solver):
            solver.pop()
            return Found("failed", f"no index of {shown(file)} is {label}")
        witnesses.append(_lexmin(solver, budget, env, ORDER))
        claims.append(claim)
        solver.pop()
    limit = model.limits.get(file.max_elements or "", 0)
    return Found("proved", f"every 32-bit index of {shown(file)} is inside its count or past its "
                 f"end, never both; both happen for counts up to {limit}; an element inside "
                 "lies within the file's 4 x count words", tuple(witnesses), tuple(claims))


def byte_offset_theorem(model: Model, file: RegisterFile, budget: Budget) -> Found:
    """A counterexample expected: the 32-bit byte offset check admits an index past the end."""
    terms = _terms(model)
    rules, env, index, count, inside = (terms.rules, terms.env, terms.index, terms.count,
                                        terms.inside)
    naive = z3.ULT(index * ELEMENT_BYTES, count * ELEMENT_BYTES)
    solver = new_solver()
    solver.add(_count_range(model, file, count), z3.UGT(count, 0), z3.Not(inside), naive,
               env["base"] == 0)
    if not budget.check(solver):
        return Found("failed", f"a 32-bit byte-offset check of {shown(file)} agrees with the "
                     "element check: the expected counterexample is missing")
    witness = _lexmin(solver, budget, env, ORDER)
    element = rules.element(int(witness["base"]), int(witness["offset"]))
    return Found("counterexample-as-expected",
                 f"checking the 32-bit byte offset 16 * index < 16 * count lets element "
                 f"{element:#x} of {shown(file)} with {witness['count']} element(s) in (16 * "
                 f"{element:#x} wraps to {(16 * element) & 0xFFFFFFFF:#x}): D3D reads it as "
                 f"past the end", (witness,), ((PAST_END,),))
