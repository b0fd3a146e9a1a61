"""32-bit words in the rule language: the word helpers against results written from the sources
(``sm5-alu.md``: the FS examples), Python against z3 per helper, the type rules and their load
errors."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
import z3

from sm5.cli import main
from sm5.oracle.errors import RuleError
from sm5.oracle.model.clauses import full_env
from sm5.oracle.model.spec import Clause, Derived, Group, Input, Semantics, SourceRef
from sm5.oracle.proofs.z3rules import Encoding, decode, evaluate_at, symbols, translate
from sm5.oracle.rulelang.helpers import (
    OPERATORS,
    REGISTRY,
    SPECIAL_SETS,
    WIDTHS,
    WORD_EDGES,
    WORD_TYPES,
)
from sm5.oracle.rulelang.rules import Value, evaluate, parse_rule
from sm5.vectors.domain import Boundaries

ENCODINGS: tuple[Encoding, ...] = ("bv", "int")
SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"


def z3_value(text: str, types: dict[str, str], env: dict[str, int], encoding: Encoding
             ) -> Value | None:
    """z3's value of the rule at ``env`` (words as 32-bit constants); None: side condition."""
    rule = parse_rule(text, where="test", types=types)
    symbols = {name: z3.BitVecVal(value & 0xFFFFFFFF, 32) for name, value in env.items()}
    if not symbols:  # the encoding is read off the environment's sorts
        symbols["_"] = z3.IntVal(0) if encoding == "int" else z3.BitVecVal(0, 128)
    translation = translate(rule, symbols, encoding=encoding)
    if not z3.is_true(z3.simplify(translation.condition)):
        return None
    return decode(translation.term)


U = {"a": "uword", "b": "uword", "c": "uword", "d": "uword"}
S = {"a": "iword", "b": "iword", "c": "uword"}

#: (rule, types, inputs, value): each value written from the FS examples in sm5-alu.md.
FROM_THE_SOURCES: list[tuple[str, dict[str, str], dict[str, int], Value]] = [
    ("a << c", U, {"a": 1, "c": 32}, 1),                      # ishl(1, 32) = 1
    ("a << c", U, {"a": 1, "c": 33}, 2),                      # ishl(1, 33) = 2
    ("a >> c", S, {"a": -(2**31), "c": 31}, -1),              # ishr(0x80000000, 31) = 0xFFFFFFFF
    ("a >> c", U, {"a": 0x80000000, "c": 31}, 1),             # ushr(0x80000000, 31) = 1
    ("a >> c", U, {"a": 0x80000000, "c": 32}, 0x80000000),    # ushr(0x80000000, 32)
    ("field_extract(a, b, c)", U, {"a": 8, "b": 4, "c": 0x12345678}, 0x67),
    ("field_extract(a, b, c)", U, {"a": 8, "b": 28, "c": 0xF1234567}, 0xF),
    # the field 0xF sign-extended
    ("field_extract_signed(a, b, iword(c))", U, {"a": 4, "b": 4, "c": 0xF0}, -1),
    ("field_insert(a, b, c, d)", U, {"a": 8, "b": 4, "c": 0xAB, "d": 0xFFFFFFFF}, 0xFFFFFABF),
    ("field_insert(a, b, c, d)", U, {"a": 8, "b": 28, "c": 0xFF, "d": 0}, 0xF0000000),
    ("bit_reverse(a)", U, {"a": 0x12345678}, 0x1E6A2C48),
    ("bit_count(a)", U, {"a": 0}, 0),
    ("bit_count(a)", U, {"a": 0xFFFFFFFF}, 32),
    ("-a", U, {"a": 0}, 0),                                   # ineg(0) = 0
    ("-a", U, {"a": 1}, 0xFFFFFFFF),                          # ineg(1) = 0xFFFFFFFF
    ("-a", U, {"a": 0x80000000}, 0x80000000),                 # ineg(0x80000000)
    ("imul_hi(a, b)", S, {"a": -1, "b": -1}, 0),              # imul(-1, -1): destHI 0
    ("a * b", S, {"a": -1, "b": -1}, 1),                      # destLO 1
    ("umul_hi(a, b)", U, {"a": 0xFFFFFFFF, "b": 2}, 1),       # umul(0xFFFFFFFF, 2): destHI 1
    ("a * b", U, {"a": 0xFFFFFFFF, "b": 2}, 0xFFFFFFFE),      # destLO 0xFFFFFFFE
    ("a * b + c", U, {"a": 0x10000, "b": 0x10000, "c": 5}, 5),  # imad(0x10000, 0x10000, 5)
    ("a * b + c", U, {"a": 0xFFFFFFFF, "b": 0xFFFFFFFF, "c": 0}, 1),  # umad(...) = 1
    ("a + b", U, {"a": 0xFFFFFFFF, "b": 1}, 0),               # uaddc(0xFFFFFFFF, 1): dest0 0
    ("uadd_carry(a, b)", U, {"a": 0xFFFFFFFF, "b": 1}, 1),    # dest1 1
    ("a - b", U, {"a": 0, "b": 1}, 0xFFFFFFFF),               # usubb(0, 1): dest0
    ("usub_borrow(a, b)", U, {"a": 0, "b": 1}, 1),            # dest1 1
    ("usub_borrow(a, b)", U, {"a": 5, "b": 3}, 0),
]

#: Rules of the language's own reading of words (conversions, comparisons, views).
LANGUAGE: list[tuple[str, dict[str, str], dict[str, int], Value]] = [
    ("a < b", U, {"a": 0xFFFFFFFF, "b": 1}, False),           # unsigned
    ("a < b", S, {"a": -1, "b": 1}, True),                    # signed
    ("exact(a) + exact(b)", U, {"a": 0xFFFFFFFF, "b": 1}, 2**32),
    ("exact(iword(a))", U, {"a": 0xFFFFFFFF}, -1),
    ("exact(uword(a))", S, {"a": -1}, 0xFFFFFFFF),
    ("exact(uword(4294967301))", {}, {}, 5),
    ("exact(uword(-1))", {}, {}, 0xFFFFFFFF),
    ("exact(iword(2147483648))", {}, {}, -(2**31)),
    ("a == 4294967295", U, {"a": -1}, True),                  # a pattern in the environment
    ("a == -1", S, {"a": 0xFFFFFFFF}, True),
    ("a in (0, 4294967295)", U, {"a": 0xFFFFFFFF}, True),
    ("min(a, b)", S, {"a": -1, "b": 1}, -1),
    ("min(a, b)", U, {"a": 0xFFFFFFFF, "b": 1}, 1),
    ("max(a, 7)", U, {"a": 3}, 7),
    ("a if a > b else b", S, {"a": -5, "b": -7}, -5),
    ("a // b", U, {"a": 7, "b": 2}, 3),
    ("a % b", U, {"a": 7, "b": 2}, 1),
    ("~a", U, {"a": 0}, 0xFFFFFFFF),
    ("~a", S, {"a": 0}, -1),
    ("(a ^ b) & 255 | 256", U, {"a": 0xF0F0, "b": 0xFFFF}, 0x10F),
    ("a << b", S, {"a": -1, "b": 33, "c": 0}, -2),            # an iword count: bits [4:0]
    ("a + 1 == 0", S, {"a": 2**31 - 1}, False),
    ("a + 1", S, {"a": 2**31 - 1}, -(2**31)),                 # wraps
]


@pytest.mark.parametrize(("text", "types", "env", "value"), FROM_THE_SOURCES + LANGUAGE)
def test_python_and_z3_give_the_written_value(text: str, types: dict[str, str],
                                              env: dict[str, int], value: Value) -> None:
    rule = parse_rule(text, where="test", types=types)
    assert evaluate(rule.tree, env, text) == value
    assert rule.evaluate(env) == value
    for encoding in ENCODINGS:
        assert z3_value(text, types, env, encoding) == value, encoding


def test_a_zero_divisor_is_an_error_and_a_side_condition() -> None:
    rule = parse_rule("a // b", where="test", types=U)
    with pytest.raises(RuleError):
        rule.evaluate({"a": 1, "b": 0})
    for encoding in ENCODINGS:
        assert z3_value("a // b", U, {"a": 1, "b": 0}, encoding) is None


def test_word_operations_need_no_side_condition() -> None:
    """What took z3 128 bits and overflow conditions is plain 32-bit arithmetic."""
    a, c = z3.BitVecs("a c", 32)
    for text in ("a << c", "(a << c) >> c", "a * c + a - c", "field_extract(c, c, a)", "-a"):
        translation = translate(parse_rule(text, where="test", types=U), {"a": a, "c": c},
                                encoding="bv")
        assert z3.is_true(z3.simplify(translation.condition)), text


def test_z3_proves_the_shift_masks_its_count() -> None:
    a, c = z3.BitVecs("a c", 32)
    env = {"a": a, "c": c}
    shifted = translate(parse_rule("a << c", where="test", types=U), env).expr
    masked = translate(parse_rule("a << (c & 31)", where="test", types=U), env).expr
    solver = z3.Solver()
    solver.set("timeout", 10_000)
    solver.add(shifted != masked)
    assert solver.check() == z3.unsat


def _pool(helper_args: tuple[str, ...], position: int, specials: tuple[object, ...]) -> list[int]:
    values = {v for s in specials for v, _ in s.values}  # type: ignore[attr-defined]
    values |= {v for v, _ in WORD_EDGES.values} | {0x12345678, 0xDEADBEEF}
    if len(helper_args) >= 3:
        values = set(sorted(values)[::2]) | {0, 0xFFFFFFFF}
    return sorted(values)


WORD_HELPERS = sorted(name for name, h in REGISTRY.items() if not h.on_patterns)


@pytest.mark.parametrize("name", WORD_HELPERS)
def test_python_and_z3_agree_per_word_helper(name: str) -> None:
    """Every word helper's Python function (integers) and z3 model (bit-vectors) on the special
    values the generator gives its arguments, both views."""
    helper = REGISTRY[name]
    pools = [_pool(helper.args, k, helper.specials[k]) for k in range(helper.arity)]
    for patterns in itertools.product(*pools):
        args = [p - (1 << 32) if kind == "iword" and p >> 31 else p
                for p, kind in zip(patterns, helper.args, strict=True)]
        if name in ("uword_div", "uword_mod") and patterns[1] == 0:
            continue  # a zero divisor is an error (a side condition in z3), tested above
        got = helper.python(*args)
        term = z3.simplify(helper.z3(*[z3.BitVecVal(p, 32) for p in patterns]))
        if helper.result == "bool":
            assert got == z3.is_true(term), (name, patterns)
        else:
            expected = term.as_signed_long() if helper.result == "iword" else term.as_long()
            assert got == expected, (name, [hex(p) for p in patterns])


def test_the_registry_is_one_table() -> None:
    for name, helper in REGISTRY.items():
        assert helper.name == name
        assert len(helper.specials) == helper.arity
        assert all(kind in WIDTHS for kind in helper.args)
        assert helper.result in (*WIDTHS, "bool")
        assert all(s in SPECIAL_SETS for sets in helper.specials for s in sets)
    for (view, _), name in OPERATORS.items():
        assert view in WORD_TYPES and REGISTRY[name].result == view
    assert {"field_extract", "field_extract_signed", "field_insert", "uword_shl", "uword_shr",
            "iword_shr", "umul_hi"} <= set(REGISTRY)


@pytest.mark.parametrize(("text", "types", "message"), [
    ("a + n", {"a": "uword"}, "mixes a uword and an exact integer"),
    ("a < n", {"a": "uword"}, "mixes a uword and an exact integer"),
    ("a == b", {"a": "uword", "b": "iword"}, "mixes a uword and an iword"),
    ("a + 4294967296", {"a": "uword"}, "the literal 4294967296 is not a uword"),
    ("a == -1", {"a": "uword"}, "the literal -1 is not a uword"),
    ("a == 2147483648", {"a": "iword"}, "is not a iword"),
    ("a and True", {"a": "uword"}, "is not a truth value"),
    ("not a", {"a": "iword"}, "is not a truth value"),
    ("i32(a)", {"a": "uword"}, "takes an exact integer"),
    ("exact(n)", {}, "exact(...) takes a word"),
    ("a // b", {"a": "iword", "b": "iword"}, "FloorDiv is not defined on iword"),
    ("field_extract_signed(a, a, a)", {"a": "uword"}, "field_extract_signed takes a iword here"),
    ("f64_is_nan(a)", {"a": "uword"}, "convert with exact"),
    ("a if n else n", {"a": "uword"}, "mixes a uword and an exact integer"),
    ("a << n", {"a": "uword"}, "mixes a uword and an exact integer"),
    ("uword('u')", {}, "takes an integer or a word"),
])
def test_type_errors_name_the_rule(text: str, types: dict[str, str], message: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(text, where="spec/x.yaml: clause x.y", types=types)
    assert message in str(caught.value)
    assert "spec/x.yaml: clause x.y" in str(caught.value)
    assert repr(text) in str(caught.value)


def test_exact_integers_keep_their_reading() -> None:
    """Without words nothing changes: exact arithmetic, i32 of an exact integer."""
    rule = parse_rule("(old + value) % 4294967296 == 0 and i32(old) < 0", where="test")
    assert rule.type == "bool"
    assert rule.evaluate({"old": 0xFFFFFFFF, "value": 1}) is True
    assert parse_rule("old + value", where="test").evaluate(
        {"old": 0xFFFFFFFF, "value": 1}) == 2**32


def test_a_type_error_in_the_spec_names_file_and_clause(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    path = root / "instructions" / "itod.yaml"
    text = path.read_text(encoding="utf-8")
    derived = '    - {name: r, expr: "f64_from_i32(v)", text: "the integer as a double (exact)"}\n'
    assert derived in text
    word = '    - {name: w, expr: "uword(v) + 1", text: "a word"}\n'
    text = text.replace(derived, derived + word)
    text = text.replace('when: "v >= 2147483648"', 'when: "w >= v"')
    path.write_text(text, encoding="utf-8")
    assert main(["spec", "check", "--spec", str(root)]) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1
    assert "itod.yaml" in err and "itod.value.negative" in err
    assert "mixes a uword and an exact integer" in err


def _word_semantics() -> Semantics:
    types = {"a": "iword", "c": "uword"}
    shifted = parse_rule("a >> c", where="test: derived r", types=types)
    derived = (Derived("r", shifted, "a shifted right"),)
    types["r"] = shifted.type
    source = SourceRef("fs", "test")
    group = Group("sign", parse_rule("True", where="test"), (), "the result's sign", (
        Clause("t.sign.negative", "sign", parse_rule("r < 0", where="test", types=types),
               ("defined",), "negative", source, None),
        Clause("t.sign.other", "sign", parse_rule("r >= 0", where="test", types=types),
               ("defined",), "not negative", source, None)))
    return Semantics(inputs=(Input("a", "iword", "a word"), Input("c", "uword", "a count")),
                     derived=derived, assume=None, address=None, address_source=None,
                     groups=(group,), lanes=None)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_word_inputs_in_symbols_and_models(encoding: Encoding) -> None:
    """Word inputs are 32-bit constants: z3 finds a model, which reads back as the integers of
    the views and which the Python evaluator classifies as z3 did."""
    semantics = _word_semantics()
    syms = symbols(semantics, encoding=encoding)
    negative = translate(semantics.groups[0].clauses[0].when, syms)
    solver = z3.Solver()
    solver.add(syms.ranges, negative.expr, syms["c"] == z3.BitVecVal(33, 32))
    assert solver.check() == z3.sat
    values = syms.read(solver.model())
    assert values["c"] == 33 and isinstance(values["a"], int) and values["a"] < 0
    env = full_env(semantics, values)
    assert env["r"] == values["a"] >> 1  # the count's bits [4:0]: 1
    assert semantics.groups[0].clauses[0].when.holds(env)
    assert evaluate_at(negative, syms, values) is True
    assert evaluate_at(translate(semantics.derived[0].expr, syms), syms, values) == env["r"]


def test_the_generator_gives_a_count_its_special_values() -> None:
    candidates = Boundaries(_word_semantics()).candidates("c", {"a": 0, "c": 0})
    counts = {c.value for c in candidates if "count" in c.tags}
    assert {31, 32, 33, 0xFFFFFFFF} <= counts
    words = {c.value for c in Boundaries(_word_semantics()).candidates("a", {"a": 0, "c": 0})
             if "word" in c.tags}
    assert {0x7FFFFFFF, 0x80000000, 0xFFFFFFFF} <= words
