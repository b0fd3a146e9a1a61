"""The compiled rule evaluator (``Rule.evaluate``, and ``Rule.holds`` for conditions) against the
reference tree walker (``sm5.oracle.rulelang.rules.evaluate``): same values, same errors, on every
rule of the spec and on expressions that reach every node type and every error."""

from __future__ import annotations

import pickle
import random
from collections.abc import Iterator, Mapping

import pytest

from sm5.oracle.errors import RuleError
from sm5.oracle.model.spec import load_default
from sm5.oracle.rulelang.rules import Rule, Value, evaluate, parse_rule


def spec_conditions() -> Iterator[Rule]:
    """The spec's rules read as truth values (``holds``)."""
    spec = load_default()
    for rule in spec.legality_rules():
        if rule.reject_if is not None:
            yield rule.reject_if
    for ins in spec.instructions.values():
        for group in ins.semantics.groups:
            yield group.scope
            yield from (c.when for c in group.clauses)


def spec_rules() -> Iterator[Rule]:
    yield from spec_conditions()
    for ins in load_default().instructions.values():
        sem = ins.semantics
        yield from (d.expr for d in sem.derived)
        yield from (r for r in (sem.assume, sem.address) if r is not None)


def outcome(rule: Rule, env: Mapping[str, Value], compiled: bool) -> tuple[str, object]:
    try:
        value = rule.evaluate(env) if compiled else evaluate(rule.tree, env, rule.text)
    except RuleError as exc:
        return "error", str(exc)
    return "value", value


def truth_outcome(rule: Rule, env: Mapping[str, Value], compiled: bool) -> tuple[str, object]:
    """``rule.holds(env)``, or what it must give: the reference's value when it is a bool."""
    if compiled:
        try:
            return "value", rule.holds(env)
        except RuleError as exc:
            return "error", str(exc)
    kind, value = outcome(rule, env, False)
    if kind == "value" and type(value) is not bool:
        return "error", f"expression {rule.text!r} gives {value!r}, not a truth value"
    return kind, value


SAMPLES: tuple[Value, ...] = (0, 1, 2, 3, 4, 7, 8, 12, 16, 2047, 2048, 0xFFFFFFFF, 1 << 32,
                              1 << 63, -1, True, False, "u", "g", "raw", "structured", "typed",
                              "active", "helper", "compute", "pixel", "cs_5_0", "11.0", "xy",
                              "zw", "")


def test_every_spec_rule_agrees_on_random_environments() -> None:
    rng = random.Random(1234)
    rules = list(spec_rules())
    assert len(rules) > 50
    for rule in rules:
        for _ in range(200):
            env = {name: rng.choice(SAMPLES) for name in rule.names}
            if rng.random() < 0.05 and env:
                env.pop(rng.choice(sorted(env)))  # a missing variable
            assert outcome(rule, env, True) == outcome(rule, env, False), (rule.text, env)


def test_every_spec_condition_holds_as_the_reference_reads_it() -> None:
    rng = random.Random(4321)
    rules = list(spec_conditions())
    assert len(rules) > 50
    kinds = set()
    for rule in rules:
        for _ in range(200):
            env = {name: rng.choice(SAMPLES) for name in rule.names}
            if rng.random() < 0.05 and env:
                env.pop(rng.choice(sorted(env)))
            got = truth_outcome(rule, env, True)
            assert got == truth_outcome(rule, env, False), (rule.text, env)
            kinds.add((got[0], got[1] if got[0] == "value" else None))
    assert kinds == {("value", True), ("value", False), ("error", None)}


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("a + b * c - d // e % f", {"a": 1, "b": 2, "c": 3, "d": 17, "e": 3, "f": 4}, 6),
    ("a & b | c ^ d", {"a": 12, "b": 10, "c": 1, "d": 3}, 10),
    ("a << 40 >> 8", {"a": 3}, 3 << 32),
    ("-a + ~b", {"a": 5, "b": 0}, -6),
    ("not a and b or c", {"a": 0, "b": 1, "c": 0}, True),
    ("a < b <= c < d", {"a": 1, "b": 2, "c": 2, "d": 1}, False),
    ("a < b <= c != d", {"a": 1, "b": 2, "c": 2, "d": 1}, True),
    ("k in ('raw', 'typed') and k not in ('u',)", {"k": "raw"}, True),
    ("1 in (True,)", {}, True),
    ("x if c else y", {"x": 7, "y": 8, "c": 0}, 8),
    ("min(a, b) + max(a, b)", {"a": 9, "b": -2}, 7),
    ("i32(a) + i32(b)", {"a": 0xFFFFFFFF, "b": 0x80000000}, -(2**31) - 1),
    ("s == 'g' and t != 'u'", {"s": "g", "t": "u"}, False),
    ("a", {"a": "text"}, "text"),
    # Python's own operators would keep a bool, or pass an operand through: the rule language
    # gives a number, a truth value.
    ("a & b", {"a": True, "b": True}, 1),
    ("a | b", {"a": True, "b": False}, 1),
    ("-a", {"a": True}, -1),
    ("a and b", {"a": 2, "b": 3}, True),
    ("a or b", {"a": 0, "b": 5}, True),
    ("not a", {"a": 7}, False),
    ("min(a, 2)", {"a": True}, 1),
    ("x if c else y", {"x": 1, "y": 2, "c": 4}, 1),
    ("(a < b) + (c == d)", {"a": 1, "b": 2, "c": 3, "d": 3}, 2),
])
def test_values(text: str, env: dict[str, Value], expected: Value) -> None:
    rule = parse_rule(text, where="test")
    assert rule.evaluate(env) == expected
    assert type(rule.evaluate(env)) is type(expected)
    assert outcome(rule, env, True) == outcome(rule, env, False)


@pytest.mark.parametrize(("text", "env", "message"), [
    ("a // b", {"a": 1, "b": 0}, "division by zero"),
    ("a % b", {"a": 1, "b": 0}, "division by zero"),
    ("a << b", {"a": 1, "b": -1}, "negative shift count"),
    ("a + 1", {}, "variable 'a' has no value"),
    ("a < b", {"a": "g", "b": 1}, "cannot order 'g' and 1"),
    ("a < b < c", {"a": 0, "b": 1, "c": "u"}, "cannot order 1 and 'u'"),
    ("a + 1", {"a": "u"}, "'u' is not a number"),
    ("not a", {"a": "u"}, "'u' is not a truth value"),
    ("a and b", {"a": 1, "b": "u"}, "'u' is not a truth value"),
    ("x if c else y", {"x": 1, "y": 2, "c": "u"}, "'u' is not a truth value"),
    ("a + b", {"a": "u", "b": "g"}, "'u' is not a number"),
    ("a * 2", {"a": "u"}, "'u' is not a number"),
    ("a % b", {"a": "u", "b": 2}, "'u' is not a number"),
    ("min(a, b)", {"a": "u", "b": "g"}, "'u' is not a number"),
    ("i32(a)", {"a": "u"}, "'u' is not a number"),
    ("f64_is_nan(a)", {"a": -1}, "takes 64-bit patterns"),
])
def test_errors(text: str, env: dict[str, Value], message: str) -> None:
    rule = parse_rule(text, where="test")
    with pytest.raises(RuleError, match=message):
        rule.evaluate(env)
    assert outcome(rule, env, True) == outcome(rule, env, False)


def test_short_circuit_matches_the_reference() -> None:
    # The right operand is never evaluated when the left decides: no error for the missing b.
    rule = parse_rule("a == 0 or b > 1", where="test")
    assert rule.evaluate({"a": 0}) is True
    assert outcome(rule, {"a": 0}, True) == outcome(rule, {"a": 0}, False)


@pytest.mark.parametrize(("text", "env", "expected"), [
    ("a < b", {"a": 1, "b": 2}, True),
    ("a and b", {"a": 2, "b": 0}, False),
    ("not a", {"a": 0}, True),
    ("c", {"c": True}, True),
    ("x if c else y", {"x": False, "y": True, "c": 0}, True),
])
def test_holds(text: str, env: dict[str, Value], expected: bool) -> None:
    assert parse_rule(text, where="test").holds(env) is expected


@pytest.mark.parametrize(("text", "env", "message"), [
    ("a + 1", {"a": 1}, "gives 2, not a truth value"),
    ("a", {"a": "u"}, "gives 'u', not a truth value"),
    ("x if c else y", {"x": 1, "y": True, "c": 1}, "gives 1, not a truth value"),
    ("a < b", {"a": "g", "b": 1}, "cannot order 'g' and 1"),
    ("a and b", {"a": 1}, "variable 'b' has no value"),
])
def test_holds_errors(text: str, env: dict[str, Value], message: str) -> None:
    rule = parse_rule(text, where="test")
    with pytest.raises(RuleError, match=message):
        rule.holds(env)


def test_rule_pickles_after_evaluation() -> None:
    rule = parse_rule("a + 1 > b", where="test")
    assert rule.evaluate({"a": 1, "b": 1}) is True
    assert rule.holds({"a": 1, "b": 1}) is True
    again = pickle.loads(pickle.dumps(rule))
    assert again.text == rule.text
    assert again.evaluate({"a": 0, "b": 1}) is False
    assert again.holds({"a": 0, "b": 1}) is False
