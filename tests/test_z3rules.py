"""The z3 back end of the rule language against the Python evaluator and against hand results."""

from __future__ import annotations

from typing import Any

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_facts import one_per_shape

from sm5.oracle.errors import RuleError
from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import Input, InstructionSpec, Semantics, load_default
from sm5.oracle.proofs.z3rules import (
    Encoding,
    Term,
    constants,
    decode,
    preferred_encoding,
    side_conditions,
    symbols,
    to_z3,
    translate,
)
from sm5.oracle.rulelang.helpers import WORD_TYPES
from sm5.oracle.rulelang.rules import Rule, Value, parse_rule

ENCODINGS: tuple[Encoding, ...] = ("bv", "int")
SPEC = load_default()
INSTRUCTIONS = sorted(SPEC.instructions)
#: The default run checks one instruction per shape of clause groups; the rest are ``slow``.
DEFAULT_RUN = frozenset(one_per_shape(SPEC))


def spec_rules(semantics: Semantics) -> list[Rule]:
    rules = [r for r in (semantics.assume, semantics.address) if r is not None]
    rules += [d.expr for d in semantics.derived]
    for group in semantics.groups:
        rules.append(group.scope)
        rules += [c.when for c in group.clauses]
    return rules


def z3_value(rule: Rule, semantics: Semantics, values: dict[str, Value],
             encoding: Encoding) -> Value | None:
    """z3's value of ``rule`` at ``values`` (None where its side condition is false)."""
    consts = constants(semantics, values, encoding=encoding)
    translation = translate(rule, consts)
    if not z3.is_true(z3.simplify(translation.condition)):
        return None
    return decode(translation.term)


def input_values(semantics: Semantics) -> st.SearchStrategy[dict[str, Value]]:
    def one(i: Input) -> st.SearchStrategy[Any]:
        if i.type == "bool":
            return st.booleans()
        if i.type == "enum":
            return st.sampled_from(i.values)
        low, high = {"u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}.get(
            i.type, (i.min or 0, i.max or 0))
        edges = [low, high, low + 1, high - 1, (low + high) // 2]
        small = st.integers(low, min(high, low + 64))
        return st.one_of(st.sampled_from([e for e in edges if low <= e <= high]), small,
                         st.integers(low, high))
    return st.fixed_dictionaries({i.name: one(i) for i in semantics.inputs})


# --------------------------------------------------------------------------------------------
# (b) agreement on the spec's own expressions, hypothesis-generated inputs


@pytest.mark.parametrize("name", [
    name if name in DEFAULT_RUN else pytest.param(name, marks=pytest.mark.slow)
    for name in INSTRUCTIONS])
def test_spec_expressions_agree_with_python(name: str) -> None:
    instruction: InstructionSpec = SPEC.instruction(name)
    semantics = instruction.semantics

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(input_values(semantics))
    def check(values: dict[str, Value]) -> None:
        env = full_env(semantics, values)
        consts = {e: constants(semantics, values, encoding=e) for e in ENCODINGS}
        for rule in spec_rules(semantics):
            expected = rule.evaluate(env)
            for encoding in ENCODINGS:
                simplified = z3.simplify(to_z3(rule, consts[encoding]))
                # a word decodes in its view (a uword 0xFFFFFFFF is 4294967295, not -1)
                kind = rule.type if rule.type in WORD_TYPES else \
                    "bool" if z3.is_bool(simplified) else "int"
                got = decode(Term(kind, simplified))
                assert got == expected and type(got) is type(expected), (
                    rule.text, encoding, values)

    check()


# --------------------------------------------------------------------------------------------
# Every node type: random expressions over two numbers, a truth value and an enum

_ENUM = ("x", "y", "z")
_PLAYGROUND = Semantics(
    inputs=(Input("a", "int", "a number", -(2**40), 2**40),
            Input("b", "int", "a number", -(2**40), 2**40),
            Input("p", "bool", "a truth value"),
            Input("e", "enum", "an enum", values=_ENUM)),
    derived=(), assume=None, address=None, address_source=None, groups=(), lanes=None)
_KNOWN = frozenset({"a", "b", "p", "e"})


def _numbers() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(["a", "b", "0", "1", "3", "-2", "7", "255",
                                        "4294967296"]),
                       st.integers(-(2**33), 2**33).map(str))

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^"]),
                           inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        shifts = st.tuples(inner, st.sampled_from(["<<", ">>"]),
                           st.sampled_from(["0", "1", "5", "52", "130", "b % 70",
                                            "(a % 9) - 4"])).map(
            lambda t: f"({t[0]} {t[1]} ({t[2]}))")
        unary = st.tuples(st.sampled_from(["-", "~"]), inner).map(lambda t: f"({t[0]}{t[1]})")
        calls = st.one_of(
            st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
                lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            inner.map(lambda t: f"i32({t})"))
        choice = st.tuples(inner, _tests(), inner).map(
            lambda t: f"({t[0]} if {t[1]} else {t[2]})")
        return st.one_of(binary, shifts, unary, calls, choice)

    return st.recursive(leaves, grow, max_leaves=6)


def _truths_leaf() -> st.SearchStrategy[str]:
    return st.sampled_from(["p", "not p", "a < b", "e == 'x'", "e in ('y', 'z')", "e != 'z'",
                            "e < 'y'", "True", "(1 + True == 2)"])


def _tests() -> st.SearchStrategy[str]:
    """Truth values and numbers used as truth values (the test of ``x if c else y``)."""
    return st.one_of(_truths_leaf(), st.sampled_from(["a", "b % 2", "0"]))


def _truths() -> st.SearchStrategy[str]:
    numbers = _numbers()
    compare = st.tuples(numbers, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]),
                        numbers).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
    chain = st.tuples(numbers, numbers, numbers).map(lambda t: f"{t[0]} <= {t[1]} < {t[2]}")
    member = st.tuples(numbers, st.lists(st.integers(0, 3), min_size=1, max_size=3)).map(
        lambda t: f"{t[0]} in ({', '.join(map(str, t[1]))},)")
    base = st.one_of(compare, chain, member, _truths_leaf())

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["and", "or"]), st.one_of(inner, numbers)).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.one_of(inner, numbers).map(lambda t: f"(not {t})"),
            st.tuples(inner, _tests(), inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"))

    return st.recursive(base, grow, max_leaves=4)


_VALUES = st.fixed_dictionaries({
    "a": st.one_of(st.integers(-(2**40), 2**40), st.integers(-5, 5)),
    "b": st.one_of(st.integers(-(2**40), 2**40), st.integers(-5, 5)),
    "p": st.booleans(),
    "e": st.sampled_from(_ENUM),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_numbers(), _truths()), _VALUES)
def test_random_expressions_agree_with_python(text: str, values: dict[str, Value]) -> None:
    rule = parse_rule(text, where="test", known=_KNOWN)
    try:
        expected: Value | None = rule.evaluate(values)
    except RuleError:
        expected = None
    for encoding in ENCODINGS:
        got = z3_value(rule, _PLAYGROUND, values, encoding)
        if expected is None:
            assert got is None, (text, encoding, values)
        elif got is not None:
            assert got == expected and type(got) is type(expected), (text, encoding, values)
        else:  # a bit operation may leave the 128 bits both encodings use for bits
            assert encoding == "bv" or any(op in text for op in ("&", "|", "^", "<<", ">>")), (
                text, values)
    # Without bit operations the Int encoding is exact wherever Python returns a value.
    if expected is not None and not any(op in text for op in ("&", "|", "^", "<<", ">>")):
        assert z3_value(rule, _PLAYGROUND, values, "int") is not None, text


# --------------------------------------------------------------------------------------------
# Hand-computed results


@pytest.mark.parametrize("text", [
    "-7 // 2 == -4", "-7 % 2 == 1", "7 % -2 == -1", "7 // -2 == -4", "-7 // -2 == 3",
    "~5 == -6", "-1 >> 200 == -1", "(1 << 100) >> 99 == 2", "min(3, -2) == -2",
    "max(3, -2) == 3", "i32(4294967295) == -1", "i32(2147483648) == -2147483648",
    "i32(2147483647) == 2147483647", "i32(-1) == -1", "i32(4294967297) == 1",
    "-6 & 7 == 2", "-6 | 1 == -5", "5 ^ -1 == -6", "True + True == 2",
    "(3 if False else 4) == 4", "1 < 2 < 3", "not (1 < 3 < 2)", "2 in (1, 2)",
    "3 not in (1, 2)", "(1 in (1,)) == True", "'u' == 'u'", "'a' < 'b'",
])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_constant_expressions_by_hand(text: str, encoding: Encoding) -> None:
    rule = parse_rule(text, where="test")
    assert z3.is_true(z3.simplify(to_z3(rule, {}, encoding=encoding)))


def test_division_by_zero_is_a_false_side_condition() -> None:
    rule = parse_rule("a // b", where="test", known=_KNOWN)
    values: dict[str, Value] = {"a": 5, "b": 0, "p": False, "e": "x"}
    for encoding in ENCODINGS:
        assert z3_value(rule, _PLAYGROUND, values, encoding) is None


def test_bit_vector_width_is_exact_until_2_127() -> None:
    semantics = Semantics(inputs=(Input("w", "u64", "a word"),), derived=(), assume=None,
                          address=None, address_source=None, groups=(), lanes=None)
    rule = parse_rule("w * 18446744073709551616", where="test", known=frozenset({"w"}))
    syms = symbols(semantics, encoding="bv")
    inexact = z3.Not(side_conditions(rule, syms))
    solver = z3.Solver()
    solver.add(syms.ranges, inexact)
    assert solver.check() == z3.sat
    assert int(syms.read(solver.model())["w"]) >= 2**63  # w * 2**64 >= 2**127: past the width
    solver = z3.Solver()
    solver.add(syms.ranges, inexact, syms["w"] < z3.BitVecVal(2**63, 128))
    assert solver.check() == z3.unsat


# --------------------------------------------------------------------------------------------
# Symbols: ranges and types


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_symbol_ranges(encoding: Encoding) -> None:
    semantics = SPEC.instruction("store_structured").semantics
    syms = symbols(semantics, encoding=encoding)

    def possible(condition: Any) -> bool:
        solver = z3.Solver()
        solver.add(syms.ranges, condition)
        return bool(solver.check() == z3.sat)

    big = 2**32 if encoding == "int" else z3.BitVecVal(2**32, 128)
    assert not possible(syms["addr0"] >= big)
    assert possible(syms["addr0"] == big - 1)
    assert not possible(syms["addr0"] < 0)
    assert not possible(syms["components"] == 0) and not possible(syms["components"] == 5)
    assert possible(syms["components"] == 4)
    # the enum file has two codes, u = 0 and g = 1 (the memory operand's files)
    assert not possible(syms["file"] == 2)
    assert set(syms.enums["file"]) == {"u", "g"}


def test_enum_literal_outside_the_values_never_matches() -> None:
    """A shared formula may name a kind the instruction does not allow (store_structured's
    address names 'typed'): the comparison is false for every value the input can take."""
    semantics = SPEC.instruction("store_structured").semantics
    syms = symbols(semantics)
    equal = to_z3(parse_rule("kind == 'typed'", where="test", known=frozenset({"kind"})), syms)
    differ = to_z3(parse_rule("kind != 'typed'", where="test", known=frozenset({"kind"})), syms)
    solver = z3.Solver()
    solver.add(syms.ranges)
    assert solver.check(equal) == z3.unsat
    assert solver.check(z3.Not(differ)) == z3.unsat


@pytest.mark.parametrize("text", ["file < 3", "file == 1", "file + 1", "not file"])
def test_strings_do_not_mix_with_numbers(text: str) -> None:
    semantics = SPEC.instruction("store_structured").semantics
    rule = parse_rule(text, where="test", known=frozenset({"file"}))
    with pytest.raises(RuleError):
        to_z3(rule, symbols(semantics))


def test_string_valued_branches_are_recoded() -> None:
    semantics = SPEC.instruction("store_structured").semantics
    rule = parse_rule("('g' if addr0 > 3 else file) == 'g'", where="test",
                      known=frozenset({"file", "addr0"}))
    for index, file, expected in ((5, "u", True), (1, "u", False), (1, "g", True)):
        values: dict[str, Value] = {"addr0": index, "addr1": 0, "components": 1, "size": 4,
                                    "stride": 4, "count": 1, "file": file,
                                    "kind": "structured"}
        for encoding in ENCODINGS:
            assert z3_value(rule, semantics, values, encoding) is expected


def test_preferred_encoding_follows_bit_operations() -> None:
    assert preferred_encoding(SPEC.instruction("dmovc").semantics) == "bv"
    assert preferred_encoding(SPEC.instruction("store_structured").semantics) == "int"


_WORDS = Semantics(
    inputs=(Input("w", "u32", "a word"), Input("v", "u32", "a word"),
            Input("n", "int", "a number", -(2**40), 2**40)),
    derived=(), assume=None, address=None, address_source=None, groups=(), lanes=None)


def test_word_bit_operations_keep_the_int_encoding() -> None:
    """AND/OR/XOR of 32-bit words do not force the bv encoding; other bit operations do."""
    def with_rule(text: str) -> Semantics:
        rule = parse_rule(text, where="test")
        return Semantics(inputs=_WORDS.inputs, derived=(), assume=rule, address=None,
                         address_source=None, groups=(), lanes=None)
    assert preferred_encoding(with_rule("(w & v) ^ (w | 255) != 0")) == "int"
    assert preferred_encoding(with_rule("(w & n) != 0")) == "bv"
    assert preferred_encoding(with_rule("w << 1 != 0")) == "bv"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=st.integers(0, 2**32 - 1), v=st.integers(0, 2**32 - 1),
       text=st.sampled_from(["w & v", "w | v", "w ^ v", "(w ^ v) & (w | 7)", "w & v != w",
                             "(w ^ 4294967295) | v", "(w & v) + n"]))
def test_word_bit_operations_agree(w: int, v: int, text: str) -> None:
    rule = parse_rule(text, where="test")
    values: dict[str, Value] = {"w": w, "v": v, "n": -3}
    for encoding in ENCODINGS:
        assert z3_value(rule, _WORDS, values, encoding) == rule.evaluate(values)


def test_read_and_bind_round_trip() -> None:
    semantics = SPEC.instruction("imm_atomic_iadd").semantics
    values: dict[str, Value] = {"addr0": 7, "addr1": 2**32 - 1, "components": 1, "value": 3,
                                "old": 0, "size": 16, "stride": 8, "count": 2, "file": "g",
                                "kind": "typed", "invocation": "helper"}
    for encoding in ENCODINGS:
        syms = symbols(semantics, encoding=encoding)
        solver = z3.Solver()
        solver.add(*[base == value for base, value in syms.bind(values)])
        assert solver.check() == z3.sat
        assert syms.read(solver.model()) == values
