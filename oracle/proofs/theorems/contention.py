"""Contention: what contending read-modify-writes of one word, or of a hidden counter, leave.

Atomics of several invocations on one address are serialised in an order D3D leaves undefined
(FS 7.14.2); what an implementation may leave in memory is therefore the result of *some*
serial order. An instruction file states which reading of that applies to its kernel
(``semantics.memory.contention``):

``free``
    every serial order leaves the same word: for every word ``w`` and any two operations ``a``
    and ``b`` (each with its own operands), ``kernel(kernel(w, a), b) == kernel(kernel(w, b),
    a)``. By induction over adjacent swaps, the final word of any number of contending
    operations is then the fold of the kernel over them in any order: a closed form.
``serial``
    some two operations leave different words in the two orders (the theorem's counterexample,
    the lexicographically smallest one), so contention is judged by the orders themselves.

The memory word is the input bound to the memory operand (a kernel need not read it: an exchange
does not); the operations' own operands are the kernel's inputs bound to operands, each taken
twice (once per operation). Witnesses are written into the detail, not as instruction inputs:
the second operation's operands are not inputs of one instruction.

A hidden counter (the counter atomics that allocate and consume) needs no statement:
``counter_steps`` proves that it moves by a constant odd step modulo 2^32, from which the
closed forms of many contending operations follow (FS 22.17.17-18).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import z3

from sm5.oracle.model.spec import InstructionSpec
from sm5.oracle.proofs.theorems.base import (
    Budget,
    Context,
    Found,
    build_context,
    new_solver,
    show,
)
from sm5.oracle.proofs.z3rules import Symbols, translate
from sm5.oracle.rulelang.rules import Rule

#: The readings a file may state (``semantics.memory.contention``).
CONTENTION_ORDERS = ("free", "serial")


def contention_claim(spec: InstructionSpec) -> str | None:
    """The reading the instruction states for its kernel (``None``: no kernel)."""
    memory = spec.semantics.memory
    return None if memory is None or memory.kernel is None else memory.contention


def contention(ctx: Context, budget: Budget) -> Found:
    memory = ctx.spec.semantics.memory
    assert memory is not None and memory.kernel is not None
    claim = memory.contention
    kernel = memory.kernel
    if ctx.encoding != "bv" and _bitwise(kernel):
        # Nested AND/OR/XOR of words: bit-blasted, z3 answers at once; the int encoding
        # converts at every step and its search is slow and luck-dependent.
        ctx = build_context(ctx.spec, ctx.model, encoding="bv")
    inputs = {i.name: i for i in ctx.spec.semantics.inputs}
    words = [i.name for i in ctx.spec.semantics.inputs if i.source.kind == "memory"]
    operands = [n for n in sorted(kernel.names) if inputs[n].source.kind == "operand"]
    if len(words) != 1 or not operands:
        return Found("failed", f"cannot state the theorem: {len(words)} inputs are the memory "
                     f"word and the kernel reads {len(operands)} operands (expected one word "
                     "and some operands)")
    [word] = words
    syms = ctx.syms
    second = {n: z3.FreshConst(syms.bases[n].sort(), f"{n}_b") for n in operands}
    renamed = [(syms.bases[n], second[n]) for n in operands]
    syms_b = syms
    for n in operands:
        syms_b = syms_b.with_input(n, z3.substitute(syms[n], *renamed))
    first_a = _kernel(kernel, syms)
    first_b = _kernel(kernel, syms_b)
    a_then_b = _kernel(kernel, syms_b.with_input(word, first_a[0]))
    b_then_a = _kernel(kernel, syms.with_input(word, first_b[0]))
    region = z3.And(ctx.base, z3.substitute(syms.ranges, *renamed),
                    first_a[1], first_b[1], a_then_b[1], b_then_a[1])
    inhabited = new_solver()
    inhabited.add(region)
    if not budget.check(inhabited):  # no two operations at all: nothing would be proved
        return Found("failed", "cannot state the theorem: no word and operands satisfy the "
                     "instruction's ranges and assumptions")
    differ = z3.And(region, a_then_b[0] != b_then_a[0])
    solver = new_solver()
    solver.add(differ)
    found = budget.check(solver)
    terms = [(word, syms[word])] + [(f"{n} (a)", syms[n]) for n in operands] + \
        [(f"{n} (b)", z3.substitute(syms[n], *renamed)) for n in operands]
    if not found:
        if claim == "free":
            return Found("proved", f"order-free: kernel(kernel({word}, a), b) == "
                         f"kernel(kernel({word}, b), a) for every {word} and operands "
                         f"{', '.join(operands)} of a and b; the final word of any number of "
                         "contending operations is the fold of the kernel in any order")
        return Found("failed", "the kernel is order-free (every two operations commute), but "
                     "the file states contention: serial; state free, so that contention is "
                     "judged by the closed form")
    values = _smallest(budget, differ, [t for _, t in terms])
    said = show({name: value for (name, _), value in zip(terms, values, strict=True)})
    env = z3.And(*[t == v for (_, t), v in zip(terms, values, strict=True)])
    model = _model(env, [a_then_b[0], b_then_a[0]])
    orders = f"a then b leaves {_word(model[0])}, b then a leaves {_word(model[1])}"
    if claim == "serial":
        return Found("counterexample-as-expected",
                     f"order-dependent, as stated: at {said}, {orders}")
    return Found("failed", f"the file states contention: free, but at {said}, {orders}")


def _bitwise(rule: Rule) -> bool:
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr |
                                                            ast.BitXor)
               for node in ast.walk(rule.tree))


def _kernel(kernel: Rule, syms: Symbols) -> tuple[Any, Any]:
    """The kernel's z3 value over ``syms`` and its side condition."""
    translated = translate(kernel, syms)
    return translated.expr, translated.condition


def _smallest(budget: Budget, query: Any, terms: Sequence[Any]) -> list[int]:
    """The lexicographically smallest values of ``terms`` (as unsigned numbers) in a model of
    ``query``: canonical, whatever the solver's heuristics."""
    values: list[int] = []
    fixed: list[Any] = [query]
    for term in terms:
        number = z3.BV2Int(term) if z3.is_bv(term) else term
        solver = new_solver()
        solver.add(*fixed)
        budget.check(solver)
        best = solver.model().eval(number, model_completion=True).as_long()
        low = 0
        while low < best:
            probe = (low + best) // 2
            solver.push()
            solver.add(number <= probe)
            if budget.check(solver):
                best = solver.model().eval(number, model_completion=True).as_long()
            else:
                low = probe + 1
            solver.pop()
        values.append(best)
        fixed.append(number == best)
    return values


def _model(env: Any, exprs: Sequence[Any]) -> list[int]:
    solver = z3.Solver()
    solver.add(env)
    assert solver.check() == z3.sat
    out = []
    for e in exprs:
        value = solver.model().eval(z3.BV2Int(e) if z3.is_bv(e) else e, model_completion=True)
        out.append(value.as_long())
    return out


def _word(value: int) -> str:
    return f"{value:#x}" if value > 0xFFFF else str(value)


def counter_steps(ctx: Context, budget: Budget) -> Found:
    """A hidden counter steps by a constant odd ``d`` modulo 2^32 (``new == (old + d) % 2^32``
    for every counter value): so contending operations commute, and N <= 2^32 of them from
    ``c0`` leave ``c0 + N*d`` and meet the N distinct values ``c0 + k*d`` (FS 22.17.17-18:
    each operation changes the counter atomically; an odd step has period 2^32)."""
    semantics = ctx.spec.semantics
    counter = semantics.counter
    assert counter is not None
    olds = [i.name for i in semantics.inputs
            if i.source.kind == "resource" and i.source.field == "counter"]
    if len(olds) != 1:
        return Found("failed", f"cannot state the theorem: {len(olds)} inputs read the counter "
                     "(expected one)")
    [old] = olds
    solver = new_solver()
    solver.add(ctx.base, ctx.expr(ctx.rule(f"{old} == 0", "counter at 0")))
    if not budget.check(solver):
        return Found("failed", "cannot state the theorem: the counter cannot be 0")
    value = ctx.syms[counter.value]
    step = solver.model().eval(z3.BV2Int(value) if z3.is_bv(value) else value,
                               model_completion=True).as_long() % (1 << 32)
    goal = ctx.expr(ctx.rule(f"{counter.value} == ({old} + {step}) % 4294967296",
                             "counter step"))
    outside = new_solver()
    outside.add(ctx.base, z3.Not(goal))
    if budget.check(outside):
        at = outside.model().eval(ctx.syms[old], model_completion=True)
        return Found("failed", f"the counter does not step by a constant: from 0 it becomes "
                     f"{_word(step)}, but not {old} + {_word(step)} at {old}={at}")
    if step % 2 == 0:
        return Found("failed", f"the counter steps by {_word(step)}, an even step: it meets "
                     "fewer than 2^32 values, so contending operations can return one twice")
    returned = semantics.result.value if semantics.result is not None else None
    shown = f"{step}" if step < 1 << 31 else f"-{(1 << 32) - step}"
    said = {old: f"c0 + k*({shown})", counter.value: f"c0 + (k+1)*({shown})"}.get(
        returned or "", "nothing")
    return Found("proved", f"the counter steps by {shown} modulo 2^32 (odd): any order of N <= "
                 f"2^32 contending operations from c0 leaves c0 + N*({shown}), and operation k "
                 f"of that order returns {said} (k = 0 .. N-1), N distinct values")
