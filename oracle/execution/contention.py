"""Many invocations contending for one word: what some serial order of their operations leaves.

Atomic read-modify-writes of one address, and the counter operations of one view, are serialised
in an order D3D leaves undefined (FS 7.14.2; 22.17.17-18). What an implementation may leave is
therefore the result of *some* serial order: the final word, and every value an immediate form
returns, taken from that same order (each operation returns the word as it found it, or for a
counter what its result names). An instruction's *contention step* is read from its data:

* a memory kernel (``semantics.memory.kernel``): the word before (the input the memory operand
  binds) becomes the kernel's value; the operation returns the word before;
* a hidden counter (``semantics.counter``): the counter before becomes the derived value the
  file writes to it; the operation returns its result's value.

Three readings of "some serial order", each exact:

* :func:`serial_outcomes` enumerates every order (at most :data:`MAX_ENUMERATED` operations);
* :func:`fold` is the closed form of the final word where the file states ``contention: free``
  (every order leaves the same word, proved by ``sm5 prove``), and of a counter (every step is
  the same);
* :func:`serial_order` decides whether an observed final word and returns come from one order,
  and gives that order: a search over which operation goes next, where operations with equal
  operands and equal returns are tried once, and an operation that returned the word as it is
  now and leaves it so goes at once (every valid order runs it on this very word, where it
  changes nothing, so moving it here changes nothing else).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sm5.oracle.errors import ExecError
from sm5.oracle.model.spec import InstructionSpec
from sm5.oracle.rulelang.rules import Value

#: The most operations :func:`serial_outcomes` enumerates (6! = 720 orders).
MAX_ENUMERATED = 6
#: The most search states :func:`serial_order` visits before it gives up.
SEARCH_BUDGET = 1_000_000

#: One invocation's operands, by the kernel's names (sorted pairs).
Operands = tuple[tuple[str, int], ...]
#: (word before, operands) -> (word after, the value the operation returns).
StepFunction = Callable[[int, Operands], tuple[int, int]]


class Undecided(ExecError):
    """The search ran past :data:`SEARCH_BUDGET` states without deciding."""


@dataclass(frozen=True)
class Contention:
    """How one instruction's operations contend: its step and the names of its operands."""

    instruction: str
    operand_names: tuple[str, ...]
    step: StepFunction
    #: The file states that every order leaves the same word (a counter: always).
    order_free: bool
    #: An operation returns the word as it found it (a memory kernel; a counter returns its
    #: result's value).
    returns_before: bool


def contention_of(spec: InstructionSpec) -> Contention | None:
    """The instruction's contention step, or None for an instruction that has no kernel and
    writes no counter."""
    semantics = spec.semantics
    memory = semantics.memory
    if memory is not None and memory.kernel is not None:
        word = next((i.name for i in semantics.inputs if i.source.kind == "memory"), None)
        if word is None:
            raise ExecError(f"{spec.name}: a kernel without an input bound to its memory word")
        kernel = memory.kernel.evaluate
        names = tuple(sorted(memory.kernel.names - {word}))

        def kernel_step(before: int, operands: Operands) -> tuple[int, int]:
            return _word(spec, kernel({**dict(operands), word: before})), before

        return Contention(spec.name, names, kernel_step, memory.contention == "free", True)
    counter = semantics.counter
    if counter is not None and len(semantics.results) == 1:
        before_name = next((i.name for i in semantics.inputs
                            if i.source.kind == "resource" and i.source.field == "counter"), None)
        if before_name is None:
            raise ExecError(f"{spec.name}: a counter update without an input bound to the "
                            "counter before it")
        derived = semantics.derived
        returned = semantics.results[0].value

        def counter_step(before: int, operands: Operands) -> tuple[int, int]:
            env: dict[str, Value] = {**dict(operands), before_name: before}
            for item in derived:
                if item.expr.names <= env.keys():
                    env[item.name] = item.expr.evaluate(env)
            return _word(spec, env[counter.value]), _word(spec, env[returned])

        return Contention(spec.name, (), counter_step, True, False)
    return None


def _word(spec: InstructionSpec, value: Value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise ExecError(f"{spec.name}: a contention step gave {value!r}, not a 32-bit word")
    return value


def operands_of(contention: Contention, values: Mapping[str, int]) -> Operands:
    """One operation's operands as :data:`Operands` (every name the step reads, nothing else)."""
    missing = set(contention.operand_names) - values.keys()
    extra = values.keys() - set(contention.operand_names)
    if missing or extra:
        raise ExecError(f"{contention.instruction}: operands {sorted(values)}, expected "
                        f"{list(contention.operand_names)}")
    return tuple(sorted(values.items()))


def run_order(contention: Contention, initial: int, ops: Sequence[Operands],
              order: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """The final word and each operation's returned value (by operation) for one order."""
    word = initial
    returns = [0] * len(ops)
    for k in order:
        word, returns[k] = contention.step(word, ops[k])
    return word, tuple(returns)


def serial_outcomes(contention: Contention, initial: int, ops: Sequence[Operands]
                    ) -> frozenset[tuple[int, tuple[int, ...]]]:
    """Every (final word, returns by operation) some serial order gives."""
    if len(ops) > MAX_ENUMERATED:
        raise ExecError(f"{contention.instruction}: {len(ops)} contending operations; the "
                        f"enumeration takes at most {MAX_ENUMERATED}")
    return frozenset(run_order(contention, initial, ops, order)
                     for order in itertools.permutations(range(len(ops))))


def fold(contention: Contention, initial: int, ops: Sequence[Operands]) -> int:
    """The final word every order leaves, in closed form (the operations in the order given);
    only where the instruction's contention is order-free."""
    if not contention.order_free:
        raise ExecError(f"{contention.instruction}: its contention is serial: the final word "
                        "depends on the order (serial_outcomes, serial_order)")
    return run_order(contention, initial, ops, range(len(ops)))[0]


def serial_order(contention: Contention, initial: int, ops: Sequence[Operands], final: int,
                 returns: Sequence[int | None]) -> tuple[int, ...] | None:
    """An order of the operations that leaves ``final`` and returns ``returns`` (by operation;
    None: the value is not observed, as for an operation without a return), or None when no
    order does. Raises :class:`Undecided` past :data:`SEARCH_BUDGET` search states."""
    if len(returns) != len(ops):
        raise ExecError(f"{contention.instruction}: {len(returns)} returns for {len(ops)} "
                        "operations")
    if contention.order_free:
        if fold(contention, initial, ops) != final:
            return None
        if all(r is None for r in returns):  # every order leaves the fold: any order will do
            return tuple(range(len(ops)))
    step = contention.step
    everyone = range(len(ops))
    by_return: dict[int | None, list[int]] = {}
    for k, value in enumerate(returns):
        by_return.setdefault(value, []).append(k)
    unobserved = by_return.get(None, [])

    def candidates(remaining: int, word: int) -> list[tuple[int, int]]:
        """The operations that may go next on ``word``, each with the word it leaves."""
        # An operation returning the word before can go only where that word is now.
        pool = ([*by_return.get(word, []), *unobserved] if contention.returns_before
                else everyone)
        tried: set[tuple[Operands, int | None]] = set()
        found = []
        for k in pool:
            if not remaining >> k & 1 or (ops[k], returns[k]) in tried:
                continue
            after, value = step(word, ops[k])
            if returns[k] is not None and returns[k] != value:
                continue
            if after == word and returns[k] is not None and contention.returns_before:
                # It returned this word, so any valid order runs it on this word, where it
                # changes nothing: it may go now, and nothing else need be tried here.
                return [(k, after)]
            tried.add((ops[k], returns[k]))
            found.append((k, after))
        return found

    # Depth-first, with an explicit stack (a thousand operations are a thousand levels).
    failed: set[tuple[int, int]] = set()
    full = (1 << len(ops)) - 1
    order: list[int] = []
    stack = [(full, initial, iter(candidates(full, initial)))]
    visited = 1
    while stack:
        remaining, word, options = stack[-1]
        chosen = None if remaining == 0 else next(options, None)
        if remaining == 0 and word == final:
            return tuple(order)
        if chosen is None:  # this frame is done: back to the one before (order: one shorter)
            failed.add((remaining, word))
            stack.pop()
            if stack:
                order.pop()
            continue
        k, after = chosen
        rest = remaining & ~(1 << k)
        if (rest, after) in failed:
            continue
        visited += 1
        if visited > SEARCH_BUDGET:
            raise Undecided(f"{contention.instruction}: no decision within {SEARCH_BUDGET} "
                            f"search states ({len(ops)} operations)")
        order.append(k)
        stack.append((rest, after, iter(candidates(rest, after) if rest else ())))
    return None
