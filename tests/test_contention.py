"""The contention theorem: every read-modify-write kernel is as its file states, order-free or
serial; the serial ones' counterexamples are the two-operation cases worked out by hand from
the sources; a wrong statement fails, and a missing or unknown one does not load."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.oracle.errors import SpecError
from sm5.oracle.model.spec import default_root, load_default, load_spec
from sm5.oracle.proofs import DEFAULT_WORK
from sm5.oracle.proofs.theorems.base import Budget, build_context
from sm5.oracle.proofs.theorems.contention import contention, counter_steps
from sm5.oracle.rulelang.rules import Rule

SPEC = load_default()
WORDS = st.one_of(st.sampled_from([0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]),
                  st.integers(0, 0xFFFFFFFF))
KERNELS = sorted(name for name, i in SPEC.instructions.items()
                 if i.semantics.memory is not None and i.semantics.memory.kernel is not None)


def contention_of(spec_root: Path | None, name: str) -> tuple[str, str]:
    """The theorem alone (``sm5 prove`` runs it among the instruction's others)."""
    spec = SPEC if spec_root is None else load_spec(spec_root)
    found = contention(build_context(spec.instruction(name), spec.model), Budget(DEFAULT_WORK))
    return found.status, found.detail


def test_every_read_modify_write_states_its_contention() -> None:
    # The 19 kernels of the u#/g# atomics (alloc/consume change a hidden counter, not a word).
    assert len(KERNELS) == 19
    orders = {name: SPEC.instruction(name).semantics.memory.contention  # type: ignore[union-attr]
              for name in KERNELS}
    assert {n for n, o in orders.items() if o == "serial"} == {
        "atomic_cmp_store", "imm_atomic_cmp_exch", "imm_atomic_exch"}
    assert set(orders.values()) == {"free", "serial"}


@pytest.mark.parametrize("name", ["atomic_iadd", "imm_atomic_and", "imm_atomic_or",
                                  "atomic_xor", "imm_atomic_imin", "atomic_imax",
                                  "imm_atomic_umin", "atomic_umax"])
def test_order_free_kernels_are_proved(name: str) -> None:
    status, detail = contention_of(None, name)
    assert status == "proved", detail
    assert detail.startswith("order-free")


def test_two_exchanges_leave_the_later_operand() -> None:
    # imm_atomic_exch writes src0 (FS 22.17.25): on a word holding 0, an exchange with 0 and
    # one with 1 leave 1 when the 1 comes last and 0 otherwise (the smallest such case).
    status, detail = contention_of(None, "imm_atomic_exch")
    assert status == "counterexample-as-expected"
    assert detail.endswith("at old=0, value (a)=0, value (b)=1, a then b leaves 1, "
                           "b then a leaves 0")


@pytest.mark.parametrize("name", ["imm_atomic_cmp_exch", "atomic_cmp_store"])
def test_two_compare_exchanges_depend_on_the_order(name: str) -> None:
    # On a word holding 0: a compares with 1 and writes 0, b compares with 0 and writes 1.
    # b first: b matches (0 -> 1), then a matches (1 -> 0), leaving 0. a first: a misses
    # (0 stays), then b matches (0 -> 1), leaving 1.
    status, detail = contention_of(None, name)
    assert status == "counterexample-as-expected"
    assert detail.endswith("at old=0, exchange (a)=0, value (a)=1, exchange (b)=1, "
                           "value (b)=0, a then b leaves 1, b then a leaves 0")


def copy_with(tmp_path: Path, name: str, old: str, new: str) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root)
    path = root / "instructions" / f"{name}.yaml"
    text = path.read_text("utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), "utf-8")
    return root


def test_a_serial_kernel_stated_free_fails(tmp_path: Path) -> None:
    root = copy_with(tmp_path, "imm_atomic_exch", "contention: serial", "contention: free")
    status, detail = contention_of(root, "imm_atomic_exch")
    assert status == "failed"
    assert "states contention: free" in detail and "a then b leaves 1, b then a leaves 0" in detail


def test_a_free_kernel_stated_serial_fails(tmp_path: Path) -> None:
    root = copy_with(tmp_path, "imm_atomic_iadd", "contention: free", "contention: serial")
    status, detail = contention_of(root, "imm_atomic_iadd")
    assert status == "failed"
    assert "order-free" in detail


def test_a_kernel_made_order_dependent_fails_its_statement(tmp_path: Path) -> None:
    # "The first writer wins": value if old == 0 else old. On a word holding 0, operands 1 and 2
    # leave whichever came first (with 0 among the operands, both orders agree).
    root = copy_with(tmp_path, "atomic_umax", 'kernel: "max(old, value)"',
                     'kernel: "value if old == 0 else old"')
    status, detail = contention_of(root, "atomic_umax")
    assert status == "failed", detail
    assert detail.endswith("states contention: free, but at old=0, value (a)=1, value (b)=2, "
                           "a then b leaves 1, b then a leaves 2")


@pytest.mark.parametrize(("old", "new", "message"), [
    ("    contention: free\n", "", "contention"),
    ("contention: free", "contention: sometimes", "contention"),
])
def test_a_missing_or_unknown_statement_does_not_load(tmp_path: Path, old: str, new: str,
                                                      message: str) -> None:
    root = copy_with(tmp_path, "atomic_and", old, new)
    with pytest.raises(SpecError, match=message) as caught:
        load_spec(root)
    assert "atomic_and" in str(caught.value)


def counter_steps_of(spec_root: Path | None, name: str) -> tuple[str, str]:
    spec = SPEC if spec_root is None else load_spec(spec_root)
    found = counter_steps(build_context(spec.instruction(name), spec.model),
                          Budget(DEFAULT_WORK))
    return found.status, found.detail


@pytest.mark.parametrize(("name", "returns"), [
    # FS 22.17.17: alloc increments and returns the value before; 22.17.18: consume decrements
    # and returns the value after. So N allocs from c0 meet c0 .. c0+N-1, N consumes c0-1 ..
    # c0-N.
    ("imm_atomic_alloc", "steps by 1 modulo 2^32 (odd): any order of N <= 2^32 contending "
                         "operations from c0 leaves c0 + N*(1), and operation k of that order "
                         "returns c0 + k*(1) (k = 0 .. N-1), N distinct values"),
    ("imm_atomic_consume", "steps by -1 modulo 2^32 (odd): any order of N <= 2^32 contending "
                           "operations from c0 leaves c0 + N*(-1), and operation k of that "
                           "order returns c0 + (k+1)*(-1) (k = 0 .. N-1), N distinct values"),
])
def test_counters_step_by_one_and_return_distinct_values(name: str, returns: str) -> None:
    status, detail = counter_steps_of(None, name)
    assert status == "proved", detail
    assert detail == f"the counter {returns}"


@pytest.mark.parametrize(("expr", "message"), [
    ("(old + 2) % 4294967296", "the counter steps by 2, an even step"),
    ("(old * 3 + 1) % 4294967296", "the counter does not step by a constant: from 0 it becomes 1"),
])
def test_a_counter_that_repeats_or_jumps_fails(tmp_path: Path, expr: str, message: str) -> None:
    root = copy_with(tmp_path, "imm_atomic_alloc", 'expr: "(old + 1) % 4294967296"',
                     f'expr: "{expr}"')
    status, detail = counter_steps_of(root, "imm_atomic_alloc")
    assert status == "failed"
    assert detail.startswith(message), detail


@settings(max_examples=60, deadline=None, derandomize=True)
@given(old=WORDS, operations=st.lists(st.tuples(WORDS, WORDS), min_size=2, max_size=4))
def test_enumerated_orders_agree_with_the_statement(old: int, operations: list[tuple[int, int]]
                                                    ) -> None:
    """The Python evaluator of each kernel, over every order of up to 4 operations: a ``free``
    kernel leaves one word whatever the order (the closed form the theorem licenses)."""
    for name in KERNELS:
        spec = SPEC.instruction(name)
        memory = spec.semantics.memory
        assert memory is not None and memory.kernel is not None
        kernel = memory.kernel

        def run(order: tuple[tuple[int, int], ...], kernel: Rule = kernel) -> int:
            word = old
            for value, exchange in order:
                word = int(kernel.evaluate({"old": word, "value": value, "exchange": exchange}))
            return word

        finals = {run(order) for order in itertools.permutations(operations)}
        if memory.contention == "free":
            assert len(finals) == 1, (name, old, operations, finals)


@pytest.mark.parametrize("name", ["imm_atomic_exch", "imm_atomic_cmp_exch", "atomic_cmp_store"])
def test_the_serial_counterexamples_differ_in_the_evaluator(name: str) -> None:
    """The orders of the theorem's counterexample, replayed by the Python evaluator (the
    operands as the detail prints them)."""
    _, detail = contention_of(None, name)
    at = dict(part.split("=") for part in
              detail.split("at ", 1)[1].split(", a then b")[0].split(", "))
    kernel = SPEC.instruction(name).semantics.memory.kernel  # type: ignore[union-attr]

    def step(word: int, who: str) -> int:
        env = {"old": word, "value": int(at[f"value ({who})"], 0),
               "exchange": int(at.get(f"exchange ({who})", "0"), 0)}
        return int(kernel.evaluate(env))  # type: ignore[union-attr]

    start = int(at["old"], 0)
    assert step(step(start, "a"), "b") != step(step(start, "b"), "a")
