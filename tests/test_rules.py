"""The rule language, by hand: every node type, exact integers, and what it refuses."""

from __future__ import annotations

import pytest

from sm5.oracle.errors import RuleError
from sm5.oracle.rulelang.rules import Value, parse_rule


def value(text: str, **env: Value) -> Value:
    return parse_rule(text, where="test").evaluate(env)


# ------------------------------------------------------------------------------------------------
# Evaluation, one node type at a time


@pytest.mark.parametrize(("text", "env", "expected"), [
    # Constant and Name
    ("7", {}, 7),
    ("'raw'", {}, "raw"),
    ("True", {}, True),
    ("x", {"x": 4294967295}, 4294967295),
    # BinOp: exact big integers, no 32-bit wrap
    ("4294967295 + 1", {}, 4294967296),
    ("x + 1", {"x": 0xFFFFFFFF}, 0x100000000),
    ("0 - 1", {}, -1),
    ("65536 * 65536", {}, 4294967296),
    ("stride * index + offset", {"stride": 2048, "index": 0xFFFFFFFF, "offset": 0xFFFFFFFC},
     2048 * 0xFFFFFFFF + 0xFFFFFFFC),
    ("7 // 2", {}, 3),
    ("-7 // 2", {}, -4),  # floor division
    ("7 % 4", {}, 3),
    ("-7 % 4", {}, 1),
    ("12 & 10", {}, 8),
    ("12 | 3", {}, 15),
    ("12 ^ 10", {}, 6),
    ("1 << 64", {}, 18446744073709551616),
    ("x >> 52", {"x": 0x7FF8000000000000}, 0x7FF),
    ("True + True", {}, 2),
    # UnaryOp
    ("-x", {"x": 5}, -5),
    ("~0", {}, -1),  # not 0xFFFFFFFF: exact integers
    ("~x & 255", {"x": 1}, 254),
    ("not x", {"x": 0}, True),
    ("not flag", {"flag": True}, False),
    # BoolOp
    ("a and b", {"a": True, "b": False}, False),
    ("a or b", {"a": False, "b": True}, True),
    ("x != 0 and 10 // x > 1", {"x": 0}, False),  # short-circuit: no division by zero
    ("x == 0 or 10 // x > 1", {"x": 0}, True),
    # Compare, including chains
    ("x == 4294967296", {"x": 1 << 32}, True),
    ("0 <= x < 4", {"x": 3}, True),
    ("0 <= x < 4", {"x": 4}, False),
    ("0 <= x < 4", {"x": -1}, False),
    ("a == b == c", {"a": 1, "b": 1, "c": 2}, False),
    ("1 < 2 > 0", {}, True),
    ("kind == 'raw'", {"kind": "raw"}, True),
    ("kind != 'raw'", {"kind": "typed"}, True),
    ("'a' == 1", {}, False),
    # in / not in a literal tuple
    ("kind in ('raw', 'structured')", {"kind": "structured"}, True),
    ("kind in ('raw', 'structured')", {"kind": "typed"}, False),
    ("x not in (1, 2)", {"x": 3}, True),
    ("x not in (1, 2)", {"x": 2}, False),
    ("x in ()", {"x": 0}, False),
    # IfExp, evaluated lazily
    ("1 if c else 2", {"c": True}, 1),
    ("1 if c else 2", {"c": 0}, 2),
    ("10 // x if x != 0 else 0", {"x": 0}, 0),
    ("'a' if x > 1 else ('b' if x > 0 else 'c')", {"x": 1}, "b"),
    # min / max
    ("min(a, b)", {"a": 3, "b": -2}, -2),
    ("max(4294967295, 4294967296)", {}, 4294967296),
    ("min(1, max(0, v))", {"v": 7}, 1),
    # i32: the two's-complement reading of a 32-bit word
    ("i32(x)", {"x": 0}, 0),
    ("i32(x)", {"x": 0x7FFFFFFF}, 2147483647),
    ("i32(x)", {"x": 0x80000000}, -2147483648),
    ("i32(x)", {"x": 0xFFFFFFFF}, -1),
    ("i32(x)", {"x": 0x1_0000_0001}, 1),
    ("i32(a) < i32(b)", {"a": 0xFFFFFFFF, "b": 1}, True),
])
def test_evaluates(text: str, env: dict[str, Value], expected: Value) -> None:
    result = value(text, **env)
    assert result == expected
    assert type(result) is type(expected)


def test_names_are_the_variables_read() -> None:
    rule = parse_rule("a + b if True else min(c, 1)", where="test")
    assert rule.names == frozenset({"a", "b", "c"})


def test_holds() -> None:
    rule = parse_rule("offset + 4 * components > stride", where="test")
    assert rule.holds({"offset": 12, "components": 2, "stride": 16}) is True
    assert rule.holds({"offset": 8, "components": 2, "stride": 16}) is False


@pytest.mark.parametrize(("text", "env", "message"), [
    ("1 // 0", {}, "division by zero"),
    ("1 % 0", {}, "division by zero"),
    ("x // y", {"x": 1, "y": 0}, "division by zero"),
    ("1 << x", {"x": -1}, "negative shift"),
    ("y + 1", {}, "'y' has no value"),
    ("'a' < 1", {}, "cannot order"),
    ("'a' + 1", {}, "is not a number"),
    ("-kind", {"kind": "raw"}, "is not a number"),
    ("not kind", {"kind": "raw"}, "not a truth value"),
    ("min(kind, 1)", {"kind": "raw"}, "is not a number"),
])
def test_evaluation_errors(text: str, env: dict[str, Value], message: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(text, where="test").evaluate(env)
    assert message in caught.value.message
    assert text in caught.value.message


def test_holds_needs_a_truth_value() -> None:
    with pytest.raises(RuleError, match="not a truth value"):
        parse_rule("x + 1", where="test").holds({"x": 1})


# ------------------------------------------------------------------------------------------------
# Rejection at parse time: every node outside the whitelist, named with its text


@pytest.mark.parametrize(("text", "offending"), [
    ("__import__('os')", "__import__('os')"),
    ("abs(x)", "abs(x)"),
    ("a.b", "a.b"),
    ("x.__class__", "x.__class__"),
    ("a[0]", "a[0]"),
    ("lambda: 1", "lambda: 1"),
    ("(lambda: 1)()", "(lambda: 1)()"),
    ("[x for x in (1, 2)]", "[x for x in (1, 2)]"),
    ("{x for x in (1, 2)}", "{x for x in (1, 2)}"),
    ("{x: 1 for x in (1, 2)}", "{x: 1 for x in (1, 2)}"),
    ("sum(x for x in (1, 2))", "sum(x for x in (1, 2))"),
    ("[1, 2]", "[1, 2]"),
    ("{'a': 1}", "{'a': 1}"),
    ("(1, 2)", "(1, 2)"),
    ("(y := 1)", "y := 1"),
    ("f'{x}'", "f'{x}'"),
    ("1.5", "1.5"),
    ("None", "None"),
    ("b'x'", "b'x'"),
    ("...", "..."),
    ("x / 2", "x / 2"),
    ("x ** 2", "x ** 2"),
    ("+x", "+x"),
    ("x is None", "x is None"),
    ("x is not y", "x is not y"),
    ("x in y", "y"),
    ("x in (y, 1)", "y"),
    ("x in [1, 2]", "[1, 2]"),
    ("min(1)", "min(1)"),
    ("i32(1, 2)", "i32(1, 2)"),
    ("min(1, 2, 3)", "min(1, 2, 3)"),
    ("max(a=1, b=2)", "max(a=1, b=2)"),
    ("x in (1, 2) != 0", "x in (1, 2) != 0"),  # a chain would compare the tuple itself
])
def test_rejects(text: str, offending: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(text, where="spec/instructions/x.yaml: clause x.y")
    assert caught.value.where == "spec/instructions/x.yaml: clause x.y"
    assert repr(offending) in caught.value.message or offending in caught.value.message
    assert "not allowed" in caught.value.message


@pytest.mark.parametrize("text", ["a +", "x ==", "if", "", "a = 1", "import os"])
def test_rejects_non_expressions(text: str) -> None:
    with pytest.raises(RuleError, match="is not an expression"):
        parse_rule(text, where="test")


def test_rejects_unknown_variables() -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule("index < cnt", where="w", known=frozenset({"index", "count"}))
    assert "cnt" in caught.value.message
    assert "count" in caught.value.message  # the expected names are listed


@pytest.mark.parametrize("text", [
    "+".join(["x"] * 20000),
    "not " * 5000 + "x",
    "-" * 100000 + "x",
])
def test_absurdly_deep_expressions_are_rule_errors(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text, where="test").evaluate({"x": 1})
