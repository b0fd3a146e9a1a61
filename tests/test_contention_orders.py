"""Contending operations on one word (``sm5.oracle.execution.contention``): the enumeration of
serial orders, the closed form of the order-free kernels and counters, and the search for one
serial order agree on every small case; literal cases written from the FS (7.14.2: one serial
order per address; 22.17.17-18: the counters) hold; large groups are decided quickly."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.oracle.errors import ExecError
from sm5.oracle.execution.contention import (
    MAX_ENUMERATED,
    Contention,
    Operands,
    contention_of,
    fold,
    operands_of,
    run_order,
    serial_order,
    serial_outcomes,
)
from sm5.oracle.model.spec import load_default

SPEC = load_default()
CONTENDING: dict[str, Contention] = {
    name: c for name, ins in sorted(SPEC.instructions.items())
    if (c := contention_of(ins)) is not None}
#: Words where the kernels' edges lie: carries, the signed boundary, all ones.
POOL = (0, 1, 2, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF)


def ops(name: str, *values: dict[str, int]) -> list[Operands]:
    return [operands_of(CONTENDING[name], v) for v in values]


def test_every_atomic_and_counter_instruction_contends() -> None:
    atomics = {n for n in SPEC.instructions if n.startswith(("atomic_", "imm_atomic_"))}
    assert atomics and set(CONTENDING) == atomics
    assert {n for n, c in CONTENDING.items() if not c.order_free} == {
        "atomic_cmp_store", "imm_atomic_cmp_exch", "imm_atomic_exch"}


# Literal cases, from the FS alone -------------------------------------------------------------

def test_two_exchanges_return_the_word_and_the_other_operand() -> None:
    got = serial_outcomes(CONTENDING["imm_atomic_exch"], 7, ops("imm_atomic_exch",
                                                                {"value": 1}, {"value": 2}))
    assert got == {(2, (7, 1)), (1, (2, 7))}


def test_two_increments_wrap_and_return_both_words_before() -> None:
    got = serial_outcomes(CONTENDING["imm_atomic_iadd"], 0xFFFFFFFF,
                          ops("imm_atomic_iadd", {"value": 1}, {"value": 1}))
    assert got == {(1, (0xFFFFFFFF, 0)), (1, (0, 0xFFFFFFFF))}


def test_a_compare_exchange_sees_the_others_store() -> None:
    got = serial_outcomes(CONTENDING["imm_atomic_cmp_exch"], 0, ops(
        "imm_atomic_cmp_exch", {"value": 0, "exchange": 5}, {"value": 5, "exchange": 9}))
    assert got == {(9, (0, 5)), (5, (0, 0))}


def test_allocs_hand_out_each_counter_value_once_across_the_wrap() -> None:
    contention = CONTENDING["imm_atomic_alloc"]
    got = serial_outcomes(contention, 0xFFFFFFFE, [(), (), ()])
    assert {final for final, _ in got} == {1}
    assert {tuple(sorted(r)) for _, r in got} == {(0, 0xFFFFFFFE, 0xFFFFFFFF)}
    assert len(got) == 6


def test_consumes_return_the_values_after_each_decrement() -> None:
    got = serial_outcomes(CONTENDING["imm_atomic_consume"], 1, [(), (), ()])
    assert {final for final, _ in got} == {0xFFFFFFFE}
    assert {tuple(sorted(r)) for _, r in got} == {(0, 0xFFFFFFFE, 0xFFFFFFFF)}


def test_returns_from_two_orders_at_once_are_no_serial_order() -> None:
    """Two increments by 1 and 2 from 0: the returns (0, 0) would need both to see 0."""
    contention = CONTENDING["imm_atomic_iadd"]
    two = ops("imm_atomic_iadd", {"value": 1}, {"value": 2})
    assert serial_order(contention, 0, two, 3, (0, 1)) == (0, 1)
    assert serial_order(contention, 0, two, 3, (2, 0)) == (1, 0)
    assert serial_order(contention, 0, two, 3, (0, 0)) is None
    assert serial_order(contention, 0, two, 2, (0, 1)) is None  # a lost update


# The three readings agree on small cases ------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CONTENDING))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_enumeration_closed_form_and_search_agree(name: str, data: st.DataObject) -> None:
    contention = CONTENDING[name]
    word = st.sampled_from(POOL)
    initial = data.draw(word)
    count = data.draw(st.integers(1, 4))
    drawn = [operands_of(contention, {n: data.draw(word) for n in contention.operand_names})
             for _ in range(count)]
    outcomes = serial_outcomes(contention, initial, drawn)
    finals = {final for final, _ in outcomes}
    if contention.order_free:  # the closed form: one final word, the fold in any order
        assert finals == {fold(contention, initial, drawn)}
        assert finals == {fold(contention, initial, drawn[::-1])}
    for final, returns in outcomes:
        order = serial_order(contention, initial, drawn, final, returns)
        assert order is not None
        assert run_order(contention, initial, drawn, order) == (final, returns)
        # Any other joint outcome is found exactly when some order gives it.
        for other in ((final ^ 1, returns), (final, (returns[0] ^ 1, *returns[1:]))):
            found = serial_order(contention, initial, drawn, *other)
            assert (found is not None) == (other in outcomes), other
    for final in {*finals, *(f ^ 0x80000000 for f in finals)}:  # returns not observed
        found = serial_order(contention, initial, drawn, final, [None] * count)
        assert (found is not None) == (final in finals)


# Many invocations -----------------------------------------------------------------------------

def test_a_thousand_increments_are_decided_from_their_returns() -> None:
    contention = CONTENDING["imm_atomic_iadd"]
    many = ops("imm_atomic_iadd", *({"value": 1} for _ in range(1024)))
    returns = list(range(1024))
    random.Random(5).shuffle(returns)
    order = serial_order(contention, 0, many, 1024, returns)
    assert order is not None and sorted(order) == list(range(1024))
    lost = [*returns]
    lost[lost.index(7)] = 8  # two invocations saw 8: one update lost
    assert serial_order(contention, 0, many, 1024, lost) is None
    assert serial_order(contention, 0, many, 1023, returns) is None


def test_a_thousand_ors_of_few_bits_are_decided() -> None:
    """Most operations change nothing once their bit is set: they go at once."""
    contention = CONTENDING["imm_atomic_or"]
    bits = [1 << (k % 8) for k in range(1024)]
    many = ops("imm_atomic_or", *({"value": b} for b in bits))
    order = list(range(1024))
    random.Random(9).shuffle(order)
    final, returns = run_order(contention, 0, many, order)
    assert final == 0xFF
    found = serial_order(contention, 0, many, final, returns)
    assert found is not None
    assert run_order(contention, 0, many, found) == (final, returns)


def test_the_enumeration_is_bounded_and_serial_kernels_have_no_fold() -> None:
    with pytest.raises(ExecError, match="at most 6"):
        serial_outcomes(CONTENDING["imm_atomic_exch"], 0, [(("value", 1),)] * (MAX_ENUMERATED + 1))
    with pytest.raises(ExecError, match="serial"):
        fold(CONTENDING["imm_atomic_exch"], 0, [(("value", 1),)])
    with pytest.raises(ExecError, match="expected"):
        operands_of(CONTENDING["imm_atomic_exch"], {"exchange": 1})


def test_no_operations_leave_the_word() -> None:
    contention = CONTENDING["imm_atomic_iadd"]
    assert serial_order(contention, 4, [], 4, []) == ()
    assert serial_order(contention, 4, [], 5, []) is None
    assert serial_outcomes(contention, 4, []) == {(4, ())}
