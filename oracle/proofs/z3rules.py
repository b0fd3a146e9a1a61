"""The z3 back end of the rule language: the tree ``Rule.evaluate`` walks, as z3 terms.

Exactness. The Python evaluator computes with unbounded integers, so the translation must too.
Two exact encodings are offered; a theorem picks the one its solver handles best:

``"int"`` (mathematical integers)
    ``+ - * // %`` are exact by construction (floor division and the sign-of-divisor remainder
    of Python are rebuilt from z3's Euclidean division and modulo). Non-linear products such as
    ``stride * index`` go to z3's non-linear arithmetic, which proves monotonicity facts
    (in-bounds containment) that bit-blasting cannot. Bit operations with a constant operand of
    the form ``x & (2**k - 1)``, ``x >> k``, ``x << k`` become a modulo, a division or a product
    by a power of two (exact for every integer, negative ones included); any other bit operation
    goes through ``Int2BV``/``BV2Int`` at :data:`WIDTH` bits, exact while its operands lie in the
    signed ``WIDTH``-bit range (a side condition, see below).
``"bv"`` (signed :data:`WIDTH`-bit two's-complement bit-vectors)
    Every node type is native: ``& | ^ ~`` agree with Python's infinite two's complement for any
    value that fits; ``>>`` is the arithmetic shift (Python's floor shift, for every count);
    ``%`` is ``bvsmod`` (the remainder takes the divisor's sign, as in Python) and ``//`` is
    ``(a - a % b) / b``, an exact division. ``+ - * << -`` are exact as long as they do not
    overflow, which is a side condition. Inputs are zero-extended from their own width (32 bits
    for ``u32``), so a product of two ``u32`` inputs (< 2**64) or of three (< 2**96) is far from
    the 2**127 limit; :func:`side_conditions` states the exact no-overflow conditions, and the
    ``well_defined`` theorem proves them for every expression of the spec under the input
    ranges, so the 128-bit claim is checked by z3 rather than argued on paper. Bit-blasting
    makes this encoding fast for bit-level rules (a double's NaN test) and for model search.

Words. A ``uword`` or ``iword`` (``sm5.oracle.rulelang.ruletypes``) is a 32-bit bit-vector in both
encodings: its operators are helpers of the registry (``sm5.oracle.rulelang.helpers``) whose z3
models are plain 32-bit operations, wrapping by definition, so they add no side condition (but a
zero divisor); comparisons are unsigned on a uword and signed on an iword. ``uword(x)`` of an exact
integer is its low 32 bits (``Extract`` in ``bv``, ``Int2BV`` in ``int``: both exact);
``exact(w)`` extends the word back (zero- or sign-extension, ``BV2Int``).

Types. Booleans are z3 ``Bool``; a boolean used as a number is ``If(b, 1, 0)`` (Python's
``int(True)``); a number used as a truth value is ``!= 0``. ``x if c else y`` with one boolean and
one numeric branch is numeric (Python returns the boolean itself, which is equal to its number
under ``==``, arithmetic and truth). Strings exist only as values of
``enum`` inputs: an enum is an integer code, the index into the input's ``values`` list, and a
string literal compared with it must be one of those values (anything else is a
:class:`~oracle.errors.RuleError`, as is comparing a string with a number, which the Python
evaluator would silently call unequal). Chained comparisons, short-circuit ``and``/``or`` and
the branches of ``x if c else y`` keep Python's evaluation order for the side conditions.

Side conditions. The Python evaluator raises on division by zero and negative shift counts; z3
is total. :func:`translate` therefore also returns the condition (guarded by the path that
reaches each operation) under which the Python evaluator returns a value and the chosen encoding
is exact. Where it holds, both back ends agree; the theorems assume or prove it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import z3

from sm5.oracle.errors import RuleError
from sm5.oracle.model.spec import Input, Semantics
from sm5.oracle.rulelang.helpers import REGISTRY, WIDTHS, WORD_TYPES, Helper
from sm5.oracle.rulelang.rules import Rule, Value

Encoding = Literal["bv", "int"]

#: Width of the bit-vector encoding (and of the Int <-> bit-vector conversions).
WIDTH = 128
_SIGNED_MIN = -(1 << (WIDTH - 1))
_SIGNED_MAX = (1 << (WIDTH - 1)) - 1

#: Node types that make the ``bv`` encoding the better choice for a semantics.
_BIT_NODES = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Invert)


@dataclass(frozen=True)
class Term:
    """A translated sub-expression: a z3 Bool, an integer, or an enum code with its values."""

    kind: Literal["bool", "int", "str", "uword", "iword"]
    expr: Any  # a word is a 32-bit bit-vector in either encoding
    values: tuple[str, ...] = ()
    literal: bool = False  # a string constant of the rule text (not an input's value)
    u32: bool = False  # known to lie in 0 .. 2**32-1 (a u32 input, or a bit operation of such)


@dataclass(frozen=True)
class Translation:
    """A rule as a z3 term plus the condition under which the translation is exact."""

    term: Term
    condition: Any  # z3 BoolRef

    @property
    def expr(self) -> Any:
        return self.term.expr


@dataclass(frozen=True)
class Symbols(Mapping[str, Any]):
    """The z3 value of every input and derived value of a semantics, by name.

    ``bases`` are the z3 constants a model assigns (an input's value expression may be an
    extension of its base); ``constraints`` are the input ranges; ``derived_condition`` is the
    side condition of the derived expressions; ``enums`` gives the values of string-valued names.
    """

    encoding: Encoding
    inputs: tuple[Input, ...]
    exprs: Mapping[str, Any]
    bases: Mapping[str, Any]
    enums: Mapping[str, tuple[str, ...]]
    constraints: tuple[Any, ...]
    derived_condition: Any
    _derive: Callable[[Mapping[str, Any]], tuple[dict[str, Any], dict[str, tuple[str, ...]], Any]] \
        = field(repr=False, compare=False)
    abstract: bool = False  # f64 arithmetic results are free 64-bit patterns (see symbols)

    def __getitem__(self, name: str) -> Any:
        return self.exprs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.exprs)

    def __len__(self) -> int:
        return len(self.exprs)

    @property
    def ranges(self) -> Any:
        """Every input within its declared range (a z3 BoolRef)."""
        return z3.And(*self.constraints) if self.constraints else z3.BoolVal(True)

    def with_input(self, name: str, expr: Any) -> Symbols:
        """The same symbols with input ``name`` replaced by ``expr``; derived values follow."""
        if name not in {i.name for i in self.inputs}:
            raise RuleError(f"no input named {name!r}")
        exprs = {i.name: self.exprs[i.name] for i in self.inputs}
        exprs[name] = expr
        derived, enums, condition = self._derive(exprs)
        return Symbols(self.encoding, self.inputs, derived, self.bases, enums, self.constraints,
                       condition, self._derive, self.abstract)

    def read(self, model: Any) -> dict[str, Value]:
        """The value of every input in a z3 model (unconstrained inputs take their minimum)."""
        return {i.name: decode(Term(_input_kind(i), model.eval(self.exprs[i.name],
                                                               model_completion=True),
                                    i.values))
                for i in self.inputs}

    def bind(self, values: Mapping[str, Value]) -> list[tuple[Any, Any]]:
        """Substitution pairs (base constant, value) that fix every input to ``values``."""
        pairs = []
        for i in self.inputs:
            pairs.append((self.bases[i.name], _base_value(i, values[i.name], self.encoding)))
        return pairs

    def model_at(self, values: Mapping[str, Value]) -> Any:
        """A z3 model in which every input has its value from ``values``."""
        solver = z3.Solver()
        solver.add(*[base == value for base, value in self.bind(values)])
        if solver.check() != z3.sat:  # cannot happen: every base is a distinct constant
            raise RuleError(f"no model fixes the inputs to {dict(values)}")
        return solver.model()

    def bind_one(self, name: str, value: Value) -> tuple[Any, Any]:
        """The substitution pair that fixes input ``name`` to ``value``."""
        spec = next(i for i in self.inputs if i.name == name)
        return self.bases[name], _base_value(spec, value, self.encoding)

    def from_ordinal(self, name: str, number: int) -> Value:
        """The input value whose :meth:`ordinal` is ``number``."""
        spec = next(i for i in self.inputs if i.name == name)
        if spec.type == "bool":
            return bool(number)
        if spec.type == "enum":
            return spec.values[number]
        return number

    def ordinal(self, name: str) -> tuple[Any, int, int]:
        """An integer z3 term ordering the values of input ``name``, with its bounds."""
        spec = next(i for i in self.inputs if i.name == name)
        expr = self.exprs[name]
        one, zero = _int_const(1, self.encoding), _int_const(0, self.encoding)
        if spec.type == "bool":
            return z3.If(expr, one, zero), 0, 1
        low, high = _bounds(spec)
        if spec.type in WORD_TYPES:
            return _exact(expr, spec.type == "iword", self.encoding), low, high
        return expr, low, high


def _uninterpreted(helper: Helper, words: Sequence[Any]) -> Any:
    """A helper without a z3 model as an uninterpreted function of its operands' bits: the same
    operands give the same result, and nothing else is known of it; on constant operands, its
    Python value (what the function is there)."""
    width = WIDTHS[helper.result]
    constant = [z3.simplify(w) for w in words]
    if all(z3.is_bv_value(c) for c in constant):
        value = int(helper.python(*[c.as_long() for c in constant]))
        return lambda *_: z3.BitVecVal(value, width)
    return z3.Function(helper.name, *[w.sort() for w in words], z3.BitVecSort(width))


def preferred_encoding(semantics: Semantics) -> Encoding:
    """``bv`` when a rule of the semantics uses bit operations or f64 helpers, ``int``
    otherwise.

    AND, OR and XOR of 32-bit words (u32 inputs and constants) do not count: the ``int``
    encoding translates them at 32 bits, cheaply, while ``bv`` would make every product of the
    address formula a 128-bit multiplication.
    """
    if uses_f64(semantics):
        return "bv"
    words = {i.name for i in semantics.inputs if i.type == "u32"}
    for rule in _rules_of(semantics):
        for node in ast.walk(rule.tree):
            op = node.op if isinstance(node, ast.BinOp | ast.UnaryOp) else None
            if isinstance(op, _BIT_NODES) and not _word_bits(node, words):
                return "bv"
    return "int"


def _word_bits(node: ast.AST, words: set[str]) -> bool:
    """Whether ``node`` is a 32-bit word: a u32 input, a constant word, or AND/OR/XOR of such."""
    if isinstance(node, ast.Name):
        return node.id in words
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool) and \
            0 <= node.value < 1 << 32
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr | ast.BitXor):
        return _word_bits(node.left, words) and _word_bits(node.right, words)
    return False


def uses_f64(semantics: Semantics) -> bool:
    """Whether a rule of the semantics calls a helper on patterns held as exact integers (the
    ``f64_*`` and ``f32_*`` helpers: :attr:`~sm5.oracle.rulelang.helpers.Helper.on_patterns`)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id in REGISTRY and REGISTRY[n.func.id].on_patterns
               for rule in _rules_of(semantics) for n in ast.walk(rule.tree))


def encodings_of(semantics: Semantics) -> tuple[Encoding, ...]:
    """The encodings a theorem checks a semantics in: both, except that f64 helpers are
    bit-level operations on 64-bit patterns that only the ``bv`` encoding states natively (in
    ``int`` every argument would go through ``Int2BV``, beyond any budget)."""
    return ("bv",) if uses_f64(semantics) else ("bv", "int")


def _rules_of(semantics: Semantics) -> Iterator[Rule]:
    if semantics.assume is not None:
        yield semantics.assume
    if semantics.address is not None:
        yield semantics.address
    for d in semantics.derived:
        yield d.expr
    for g in semantics.groups:
        yield g.scope
        for c in g.clauses:
            yield c.when


def symbols(semantics: Semantics, *, encoding: Encoding | None = None,
            prefix: str = "", abstract: bool = False) -> Symbols:
    """One z3 symbol per input with its range constraint, plus the derived values as terms.

    ``u32``: 0..2**32-1, ``u64``: 0..2**64-1, ``int``: min..max, ``bool``: a Bool, ``enum``: a
    code 0..len(values)-1, ``uword``/``iword``: a 32-bit bit-vector (no constraint). ``prefix``
    names a second, independent copy of the inputs.

    ``abstract``: the result of each f64 arithmetic helper (``f64_add``, ``f64_mul``, ...) is a
    free 64-bit pattern, one per distinct call, instead of the IEEE operation (whose circuits
    take z3 far beyond a proof's budget); the class predicates and comparisons stay exact. A
    partition proved so holds for every result, the IEEE one included; that a clause is
    reachable with the real operation is shown by the golden vectors, and the evaluator
    agreement theorem checks the exact translation.
    """
    enc = encoding or preferred_encoding(semantics)
    exprs: dict[str, Any] = {}
    bases: dict[str, Any] = {}
    constraints: list[Any] = []
    for i in semantics.inputs:
        base, value, constraint = _make_input(i, prefix + i.name, enc)
        bases[i.name], exprs[i.name] = base, value
        if constraint is not None:
            constraints.append(constraint)
    return _with_derived(semantics, enc, exprs, bases, tuple(constraints), abstract)


def constants(semantics: Semantics, values: Mapping[str, Value], *,
              encoding: Encoding | None = None) -> Symbols:
    """Symbols whose inputs are the z3 constants of ``values`` (for evaluation by simplify)."""
    enc = encoding or preferred_encoding(semantics)
    exprs: dict[str, Any] = {}
    for i in semantics.inputs:
        if i.name not in values:
            raise RuleError(f"input {i.name!r} has no value")
        exprs[i.name] = _value_expr(i, values[i.name], enc)
    return _with_derived(semantics, enc, exprs, dict(exprs), ())


def _with_derived(semantics: Semantics, enc: Encoding, exprs: dict[str, Any],
                  bases: dict[str, Any], constraints: tuple[Any, ...],
                  abstract: bool = False) -> Symbols:
    input_enums = {i.name: i.values for i in semantics.inputs if i.type == "enum"}

    def derive(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, tuple[str, ...]],
                                                    Any]:
        env = dict(inputs)
        enums = dict(input_enums)
        conditions = []
        for d in semantics.derived:
            translation = translate(d.expr, env, enums=enums, encoding=enc, abstract=abstract)
            env[d.name] = translation.expr
            if translation.term.kind == "str":
                enums[d.name] = translation.term.values
            conditions.append(translation.condition)
        return env, enums, z3.And(*conditions) if conditions else z3.BoolVal(True)

    env, enums, condition = derive(exprs)
    return Symbols(enc, semantics.inputs, env, bases, enums, constraints, condition, derive,
                   abstract)


def to_z3(rule: Rule, env: Mapping[str, Any], *,
          enums: Mapping[str, tuple[str, ...]] | None = None,
          encoding: Encoding | None = None) -> Any:
    """The z3 term of ``rule`` over ``env`` (a Bool, or an integer; an enum result is its code)."""
    return translate(rule, env, enums=enums, encoding=encoding).expr


def side_conditions(rule: Rule, env: Mapping[str, Any], *,
                    enums: Mapping[str, tuple[str, ...]] | None = None,
                    encoding: Encoding | None = None) -> Any:
    """Where this holds, the Python evaluator returns a value and the translation is exact."""
    return translate(rule, env, enums=enums, encoding=encoding).condition


def translate(rule: Rule, env: Mapping[str, Any], *,
              enums: Mapping[str, tuple[str, ...]] | None = None,
              encoding: Encoding | None = None, abstract: bool | None = None) -> Translation:
    """Translate ``rule``; ``enums``, ``encoding`` and ``abstract`` default to those of a
    :class:`Symbols`."""
    if isinstance(env, Symbols):
        enums = env.enums if enums is None else enums
        encoding = encoding or env.encoding
        abstract = env.abstract if abstract is None else abstract
    words = frozenset(i.name for i in env.inputs if i.type == "u32") if isinstance(env, Symbols) \
        else frozenset()
    translator = _Translator(env, enums or {}, encoding or _infer_encoding(env), rule.text,
                             bool(abstract), words)
    term = translator.term(rule.tree, z3.BoolVal(True))
    condition = z3.And(*translator.conditions) if translator.conditions else z3.BoolVal(True)
    return Translation(term, condition)


def decode(term: Term) -> Value:
    """The Python value of a constant term (after ``z3.simplify`` or ``model.eval``)."""
    expr = z3.simplify(term.expr)
    if term.kind in WORD_TYPES:
        if not z3.is_bv_value(expr):
            raise RuleError(f"{expr} is not a constant word")
        return int(expr.as_signed_long() if term.kind == "iword" else expr.as_long())
    if term.kind == "bool":
        if z3.is_true(expr):
            return True
        if z3.is_false(expr):
            return False
        raise RuleError(f"{expr} is not a constant truth value")
    if z3.is_bv_value(expr):
        number = int(expr.as_signed_long())
    elif z3.is_int_value(expr):
        number = int(expr.as_long())
    else:
        raise RuleError(f"{expr} is not a constant number")
    if term.kind == "str":
        if not 0 <= number < len(term.values):
            raise RuleError(f"enum code {number} outside {term.values}")
        return term.values[number]
    return number


def evaluate_at(translation: Translation, symbols_: Symbols,
                values: Mapping[str, Value]) -> Value | None:
    """z3's value of a symbolic translation at concrete inputs (``None``: side condition false).

    The symbolic term itself is evaluated (in a z3 model fixing every input), so this is z3's
    reading of exactly the expression a proof used.
    """
    return evaluate_in(translation, symbols_.model_at(values), interpret=True)


def evaluate_in(translation: Translation, model: Any, *, interpret: bool = False
                ) -> Value | None:
    """z3's value of a translation in ``model`` (``None`` where its side condition is false);
    with ``interpret`` (the translation may call a helper without a z3 model: see
    :func:`calls_uninterpreted`), such a helper takes its Python value at its operands' values
    there."""
    memo: dict[int, Any] = {}
    condition = interpreted(translation.condition, model, memo) if interpret \
        else translation.condition
    if not z3.is_true(model.eval(condition, model_completion=True)):
        return None
    term = translation.term
    expr = interpreted(term.expr, model, memo) if interpret else term.expr
    return decode(Term(term.kind, model.eval(expr, model_completion=True), term.values))


def calls_uninterpreted(rules: Sequence[Rule]) -> bool:
    """Some rule calls a helper without a z3 model (an uninterpreted function in the proofs)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id in REGISTRY and REGISTRY[node.func.id].z3 is None
               for rule in rules for node in ast.walk(rule.tree))


def interpreted(expr: Any, model: Any, memo: dict[int, Any]) -> Any:
    """``expr`` with every call of a helper that has no z3 model (an uninterpreted function)
    replaced by its Python value at the values its operands take in ``model``, innermost first."""
    key = expr.get_id()
    if key in memo:
        return memo[key]
    out = expr
    if z3.is_app(expr) and expr.num_args() > 0:
        children = [interpreted(c, model, memo) for c in expr.children()]
        decl = expr.decl()
        helper = REGISTRY.get(decl.name())
        if (decl.kind() == z3.Z3_OP_UNINTERPRETED and helper is not None
                and helper.z3 is None):
            operands = [model.eval(c, model_completion=True).as_long() for c in children]
            out = z3.BitVecVal(int(helper.python(*operands)), expr.sort().size())
        elif any(c is not o for c, o in zip(children, expr.children(), strict=True)):
            out = decl(*children)
    memo[key] = out
    return out


# --------------------------------------------------------------------------------------------
# Inputs


def _input_kind(i: Input) -> Literal["bool", "int", "str", "uword", "iword"]:
    if i.type in ("uword", "iword"):
        return "uword" if i.type == "uword" else "iword"
    return "bool" if i.type == "bool" else "str" if i.type == "enum" else "int"


def _bounds(i: Input) -> tuple[int, int]:
    if i.type in ("u32", "uword"):
        return 0, (1 << 32) - 1
    if i.type == "iword":
        return -(1 << 31), (1 << 31) - 1
    if i.type == "u64":
        return 0, (1 << 64) - 1
    if i.type == "enum":
        return 0, len(i.values) - 1
    if i.type == "bool":
        return 0, 1
    if i.min is None or i.max is None or i.min > i.max:
        raise RuleError(f"input {i.name!r} of type int needs min <= max for the proofs")
    return i.min, i.max


def _int_const(value: int, enc: Encoding) -> Any:
    if enc == "int":
        return z3.IntVal(value)
    if not _SIGNED_MIN <= value <= _SIGNED_MAX:
        raise RuleError(f"the constant {value} does not fit the {WIDTH}-bit encoding")
    return z3.BitVecVal(value, WIDTH)


def _make_input(i: Input, name: str, enc: Encoding) -> tuple[Any, Any, Any]:
    """(base constant, value term, range constraint or None)."""
    if i.type == "bool":
        base = z3.Bool(name)
        return base, base, None
    if i.type in WORD_TYPES:
        base = z3.BitVec(name, 32)
        return base, base, None
    low, high = _bounds(i)
    if enc == "int":
        base = z3.Int(name)
        return base, base, z3.And(base >= low, base <= high)
    width = max(1, (high - low).bit_length())
    base = z3.BitVec(name, width)
    value = z3.ZeroExt(WIDTH - width, base)
    if low:
        value = value + _int_const(low, enc)
    full = (1 << width) - 1 == high - low
    return base, value, None if full else z3.ULE(base, high - low)


def _base_value(i: Input, value: Value, enc: Encoding) -> Any:
    number = _number_of(i, value)
    if i.type == "bool":
        return z3.BoolVal(bool(value))
    if i.type in WORD_TYPES:
        return z3.BitVecVal(number & 0xFFFFFFFF, 32)
    if enc == "int":
        return z3.IntVal(number)
    low, high = _bounds(i)
    return z3.BitVecVal(number - low, max(1, (high - low).bit_length()))


def _value_expr(i: Input, value: Value, enc: Encoding) -> Any:
    if i.type == "bool":
        return z3.BoolVal(bool(_number_of(i, value)))
    if i.type in WORD_TYPES:
        return z3.BitVecVal(_number_of(i, value) & 0xFFFFFFFF, 32)
    return _int_const(_number_of(i, value), enc)


def _number_of(i: Input, value: Value) -> int:
    """An input's value as the integer the encodings use (checked against its range)."""
    if i.type == "bool":
        if not isinstance(value, bool):
            raise RuleError(f"input {i.name!r}: {value!r} is not a truth value")
        return int(value)
    if i.type == "enum":
        if value not in i.values:
            raise RuleError(f"input {i.name!r}: {value!r} is not one of {', '.join(i.values)}")
        return i.values.index(str(value))
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleError(f"input {i.name!r}: {value!r} is not an integer")
    if i.type in WORD_TYPES:  # the pattern or the integer of either view
        if not -(1 << 31) <= value < 1 << 32:
            raise RuleError(f"input {i.name!r}: {value} is not a 32-bit word")
        return value
    low, high = _bounds(i)
    if not low <= value <= high:
        raise RuleError(f"input {i.name!r}: {value} outside {low}..{high}")
    return value


def _exact(word: Any, signed: bool, enc: Encoding) -> Any:
    """A 32-bit word's integer in its view, in the encoding."""
    if enc == "int":
        return z3.BV2Int(word, is_signed=signed)
    return z3.SignExt(WIDTH - 32, word) if signed else z3.ZeroExt(WIDTH - 32, word)


def _infer_encoding(env: Mapping[str, Any]) -> Encoding:
    for value in env.values():
        if z3.is_int(value):
            return "int"
        if z3.is_bv(value):
            return "bv"
    return "bv"


# --------------------------------------------------------------------------------------------
# The walker


_CMP: Mapping[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


_UNSIGNED: Mapping[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: z3.ULT, ast.LtE: z3.ULE, ast.Gt: z3.UGT, ast.GtE: z3.UGE,
}


class _Translator:
    """One walk over a rule tree; collects the guarded side conditions on the way."""

    def __init__(self, env: Mapping[str, Any], enums: Mapping[str, tuple[str, ...]],
                 encoding: Encoding, text: str, abstract: bool = False,
                 words: frozenset[str] = frozenset()) -> None:
        self.abstract = abstract
        self.env = env
        self.words = words  # the u32 inputs
        self.enums = enums
        self.enc: Encoding = encoding
        self.text = text
        self.conditions: list[Any] = []

    # -- helpers -------------------------------------------------------------------------

    def error(self, message: str) -> RuleError:
        return RuleError(f"{self.text!r}: {message}")

    def require(self, guard: Any, condition: Any) -> None:
        condition = z3.simplify(condition)
        if not z3.is_true(condition):
            self.conditions.append(z3.Implies(guard, condition))

    def const(self, value: int) -> Any:
        return _int_const(value, self.enc)

    def integer(self, term: Term) -> Any:
        if term.kind == "int":
            return term.expr
        if term.kind in WORD_TYPES:  # the type checker lets no word reach here
            raise self.error(f"a {term.kind} is not an exact integer (convert with exact(...))")
        if term.kind == "bool":
            return z3.If(term.expr, self.const(1), self.const(0))
        raise self.error(f"a string ({'/'.join(term.values)}) is not a number")

    def truth(self, term: Term) -> Any:
        if term.kind == "bool":
            return term.expr
        if term.kind == "int":
            return term.expr != self.const(0)
        raise self.error(f"a {term.kind} is not a truth value")

    def word(self, term: Term) -> Any:
        """``term`` as a 32-bit bit-vector: a word as it is, an integer (a literal the type
        checker let stand for a word) as its low 32 bits."""
        if term.kind in WORD_TYPES:
            return term.expr
        number = self.integer(term)
        if self.enc == "int":
            return z3.Int2BV(number, 32)
        return z3.Extract(31, 0, number)

    def in_signed_range(self, *values: Any) -> Any:
        low, high = self.const(_SIGNED_MIN), self.const(_SIGNED_MAX)
        return z3.And(*[z3.And(v >= low, v <= high) for v in values])

    @staticmethod
    def constant_of(expr: Any) -> int | None:
        simple = z3.simplify(expr)
        if z3.is_bv_value(simple):
            return int(simple.as_signed_long())
        if z3.is_int_value(simple):
            return int(simple.as_long())
        return None

    # -- nodes ---------------------------------------------------------------------------

    def term(self, node: ast.expr, guard: Any) -> Term:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                return Term("bool", z3.BoolVal(value))
            if isinstance(value, int):
                return Term("int", self.const(value), u32=0 <= value < 1 << 32)
            if isinstance(value, str):
                return Term("str", self.const(0), (value,), literal=True)
            raise self.error(f"constant {value!r} is not allowed")
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.BoolOp):
            parts = []
            path = guard
            for operand_node in node.values:
                truth = self.truth(self.term(operand_node, path))
                parts.append(truth)
                path = z3.And(path, truth if isinstance(node.op, ast.And) else z3.Not(truth))
            return Term("bool", z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts))
        if isinstance(node, ast.UnaryOp):
            operand = self.term(node.operand, guard)
            if isinstance(node.op, ast.Not):
                return Term("bool", z3.Not(self.truth(operand)))
            number = self.integer(operand)
            if isinstance(node.op, ast.USub):
                if self.enc == "bv":
                    self.require(guard, z3.BVSNegNoOverflow(number))
                return Term("int", -number)
            if isinstance(node.op, ast.Invert):
                return Term("int", ~number if self.enc == "bv" else -number - 1)
            raise self.error(f"unary {type(node.op).__name__} is not allowed")
        if isinstance(node, ast.BinOp):
            left_term, right_term = self.term(node.left, guard), self.term(node.right, guard)
            left, right = self.integer(left_term), self.integer(right_term)
            if left_term.u32 and right_term.u32 and \
                    isinstance(node.op, ast.BitAnd | ast.BitOr | ast.BitXor):
                return Term("int", self.word_bitwise(node.op, left, right, guard), u32=True)
            return Term("int", self.binop(node.op, left, right, guard))
        if isinstance(node, ast.Compare):
            return self.compare(node, guard)
        if isinstance(node, ast.IfExp):
            test = self.truth(self.term(node.test, guard))
            body = self.term(node.body, z3.And(guard, test))
            orelse = self.term(node.orelse, z3.And(guard, z3.Not(test)))
            return self.choose(test, body, orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in REGISTRY:
            return self.helper(node.func.id, [self.term(arg, guard) for arg in node.args],
                               guard)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in WORD_TYPES:
                view: Literal["uword", "iword"] = \
                    "uword" if node.func.id == "uword" else "iword"
                return Term(view, self.word(self.term(node.args[0], guard)))
            if node.func.id == "exact":
                term = self.term(node.args[0], guard)
                if term.kind not in WORD_TYPES:
                    raise self.error("exact(...) takes a word")
                return Term("int", _exact(term.expr, term.kind == "iword", self.enc))
            if node.func.id in ("min", "max"):
                terms = [self.term(arg, guard) for arg in node.args]
                words = [t for t in terms if t.kind in WORD_TYPES]
                if words:
                    a, b = (self.word(t) for t in terms)
                    below = z3.ULE(a, b) if words[0].kind == "uword" else a <= b
                    first = below if node.func.id == "min" else z3.Not(below)
                    return Term(words[0].kind, z3.If(first, a, b))
            if node.func.id == "i32":
                x = self.integer(self.term(node.args[0], guard))
                half, span = self.const(1 << 31), self.const(1 << 32)
                shifted = self.binop(ast.Add(), x, half, guard)
                return Term("int", self.python_mod(shifted, span) - half)
            a, b = (self.integer(self.term(arg, guard)) for arg in node.args)
            if node.func.id == "min":
                return Term("int", z3.If(a <= b, a, b))
            if node.func.id == "max":
                return Term("int", z3.If(a >= b, a, b))
        raise self.error(f"cannot translate {type(node).__name__}")

    def helper(self, name: str, args: list[Term], guard: Any) -> Term:
        """A helper of the registry through its z3 model, exact like the Python one.

        A word argument is a 32-bit bit-vector already. A pattern argument must lie in
        0 .. 2**width - 1 (the side condition, as the Python evaluator raises otherwise). The
        word operators ``//`` and ``%`` need a divisor that is not 0, as on exact integers. With
        ``abstract`` (see :func:`symbols`), a pattern result is a free pattern, one per
        distinct call, unless the helper stays exact (``Helper.abstracted``).
        """
        helper = REGISTRY[name]
        words = []
        for term, declared in zip(args, helper.args, strict=True):
            if declared in WORD_TYPES:
                words.append(self.word(term))
                continue
            arg, width = self.integer(term), WIDTHS[declared]
            if self.enc == "bv":
                self.require(guard, z3.And(arg >= 0, arg < self.const(1 << width)))
                words.append(z3.Extract(width - 1, 0, arg))
            else:
                self.require(guard, z3.And(arg >= 0, arg < (1 << width)))
                words.append(z3.Int2BV(arg, width))
        if name in ("uword_div", "uword_mod"):
            self.require(guard, words[1] != z3.BitVecVal(0, 32))
        model = helper.z3 if helper.z3 is not None else _uninterpreted(helper, words)
        if helper.result == "bool":
            return Term("bool", model(*words))
        if helper.result == "uword" or helper.result == "iword":
            return Term(helper.result, model(*words))
        pattern = model(*words)
        if self.abstract and helper.abstracted and helper.z3 is not None:
            pattern = z3.BitVec(f"{name}({', '.join(w.sexpr() for w in words)})",
                                pattern.size())
        if self.enc == "bv":
            return Term("int", z3.ZeroExt(WIDTH - pattern.size(), pattern))
        return Term("int", z3.BV2Int(pattern))

    def name(self, name: str) -> Term:
        try:
            expr = self.env[name]
        except KeyError:
            raise self.error(f"variable {name!r} has no z3 value") from None
        if name in self.enums:
            return Term("str", expr, self.enums[name])
        if z3.is_bool(expr):
            return Term("bool", expr)
        if z3.is_bv(expr) and expr.size() == 32:
            # A word: every read of a word-typed name is inside a conversion to its view.
            return Term("uword", expr)
        if name in self.words and (z3.is_int(expr) or z3.is_bv(expr)):
            return Term("int", expr, u32=True)
        if (self.enc == "bv" and not (z3.is_bv(expr) and expr.size() == WIDTH)) or (
                self.enc == "int" and not z3.is_int(expr)):
            raise self.error(f"variable {name!r} is {expr.sort()}, not the {self.enc} encoding")
        return Term("int", expr)

    def binop(self, op: ast.operator, a: Any, b: Any, guard: Any) -> Any:
        bv = self.enc == "bv"
        zero = self.const(0)
        if isinstance(op, ast.Add):
            if bv:
                self.require(guard, z3.And(z3.BVAddNoOverflow(a, b, True),
                                           z3.BVAddNoUnderflow(a, b)))
            return a + b
        if isinstance(op, ast.Sub):
            if bv:
                self.require(guard, z3.And(z3.BVSubNoOverflow(a, b),
                                           z3.BVSubNoUnderflow(a, b, True)))
            return a - b
        if isinstance(op, ast.Mult):
            if bv:
                self.require(guard, z3.And(z3.BVMulNoOverflow(a, b, True),
                                           z3.BVMulNoUnderflow(a, b)))
            return a * b
        if isinstance(op, ast.FloorDiv | ast.Mod):
            self.require(guard, b != zero)
            remainder = self.python_mod(a, b)
            if isinstance(op, ast.Mod):
                return remainder
            if bv:
                self.require(guard, z3.And(z3.BVSubNoOverflow(a, remainder),
                                           z3.BVSubNoUnderflow(a, remainder, True),
                                           z3.BVSDivNoOverflow(a - remainder, b)))
                return (a - remainder) / b  # exact: bvsdiv truncation does not matter
            divisor = self.constant_of(b)
            if divisor is not None and divisor > 0:
                return a / b  # z3's Euclidean division is the floor for a positive divisor
            return (a - remainder) / b
        if isinstance(op, ast.LShift | ast.RShift):
            self.require(guard, b >= zero)
            return self.shift(op, a, b, guard)
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
            return self.bitwise(op, a, b, guard)
        raise self.error(f"operator {type(op).__name__} is not allowed")

    def python_mod(self, a: Any, b: Any) -> Any:
        """Python's ``a % b``: the remainder has the divisor's sign."""
        if self.enc == "bv":
            return a % b  # bvsmod
        divisor = self.constant_of(b)
        euclid = a % b  # z3 Int mod: 0 <= r < |b|
        if divisor is not None and divisor > 0:
            return euclid
        return z3.If(z3.Or(b > 0, euclid == 0), euclid, euclid + b)

    def shift(self, op: ast.operator, a: Any, b: Any, guard: Any) -> Any:
        count = self.constant_of(b)
        if self.enc == "bv":
            if isinstance(op, ast.RShift):
                return a >> b  # arithmetic shift: floor for every count, sign fill beyond WIDTH
            shifted = a << b
            self.require(guard, z3.And(b < self.const(WIDTH), (shifted >> b) == a))
            return shifted
        if count is not None and count >= 0:
            power = self.const(1 << count)
            return a * power if isinstance(op, ast.LShift) else a / power
        self.require(guard, self.in_signed_range(a))
        wide_a, wide_b = z3.Int2BV(a, WIDTH), z3.Int2BV(b, WIDTH)
        if isinstance(op, ast.RShift):
            self.require(guard, b <= self.const(_SIGNED_MAX))
            return z3.BV2Int(wide_a >> wide_b, is_signed=True)
        result = z3.BV2Int(wide_a << wide_b, is_signed=True)
        self.require(guard, z3.And(b < self.const(WIDTH),
                                   z3.BV2Int((wide_a << wide_b) >> wide_b, is_signed=True) == a))
        return result

    def word_bitwise(self, op: ast.operator, a: Any, b: Any, guard: Any) -> Any:
        """AND/OR/XOR of two 32-bit words, at 32 bits (exact where both lie in 0 .. 2**32-1)."""
        if self.enc == "bv":
            return self.bitwise(op, a, b, guard)
        top = self.const((1 << 32) - 1)
        zero = self.const(0)
        self.require(guard, z3.And(a >= zero, a <= top, b >= zero, b <= top))
        wide_a, wide_b = z3.Int2BV(a, 32), z3.Int2BV(b, 32)
        if isinstance(op, ast.BitAnd):
            wide = wide_a & wide_b
        else:
            wide = wide_a | wide_b if isinstance(op, ast.BitOr) else wide_a ^ wide_b
        return z3.BV2Int(wide, is_signed=False)

    def bitwise(self, op: ast.operator, a: Any, b: Any, guard: Any) -> Any:
        if self.enc == "bv":
            if isinstance(op, ast.BitAnd):
                return a & b
            return a | b if isinstance(op, ast.BitOr) else a ^ b
        if isinstance(op, ast.BitAnd):
            for x, y in ((a, b), (b, a)):
                mask = self.constant_of(y)
                if mask is not None and mask >= 0 and mask & (mask + 1) == 0:
                    return x % self.const(mask + 1)  # x & (2**k - 1) == x mod 2**k, any sign
        self.require(guard, self.in_signed_range(a, b))
        wide_a, wide_b = z3.Int2BV(a, WIDTH), z3.Int2BV(b, WIDTH)
        if isinstance(op, ast.BitAnd):
            wide = wide_a & wide_b
        else:
            wide = wide_a | wide_b if isinstance(op, ast.BitOr) else wide_a ^ wide_b
        return z3.BV2Int(wide, is_signed=True)

    def compare(self, node: ast.Compare, guard: Any) -> Term:
        left = self.term(node.left, guard)
        results: list[Any] = []
        path = guard
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                assert isinstance(right_node, ast.Tuple)
                members = [self.term(e, path) for e in right_node.elts]
                found = z3.Or(*[self.equal(left, m) for m in members]) if members \
                    else z3.BoolVal(False)
                ok = found if isinstance(op, ast.In) else z3.Not(found)
                right = Term("int", self.const(0))  # as the Python evaluator: chain goes on at 0
            else:
                right = self.term(right_node, path)
                ok = self.relate(op, left, right)
            results.append(ok)
            path = z3.And(path, ok)
            left = right
        return Term("bool", z3.And(*results))

    def relate(self, op: ast.cmpop, left: Term, right: Term) -> Any:
        if isinstance(op, ast.Eq):
            return self.equal(left, right)
        if isinstance(op, ast.NotEq):
            return z3.Not(self.equal(left, right))
        if (left.kind == "str") != (right.kind == "str"):
            raise self.error("cannot order a string and a number")
        if left.kind == "str":
            return self.string_relation(_CMP[type(op)], left, right)
        if left.kind in WORD_TYPES or right.kind in WORD_TYPES:
            view = left.kind if left.kind in WORD_TYPES else right.kind
            relation = _UNSIGNED[type(op)] if view == "uword" else _CMP[type(op)]
            return relation(self.word(left), self.word(right))
        return _CMP[type(op)](self.integer(left), self.integer(right))

    def equal(self, left: Term, right: Term) -> Any:
        if left.kind == "str" or right.kind == "str":
            if left.kind != right.kind:
                raise self.error("compares a string with a number or truth value")
            return self.string_relation(lambda a, b: a == b, left, right)
        if left.kind == "bool" and right.kind == "bool":
            return left.expr == right.expr
        if left.kind in WORD_TYPES or right.kind in WORD_TYPES:
            return self.word(left) == self.word(right)
        return self.integer(left) == self.integer(right)

    def string_relation(self, relation: Callable[[str, str], bool], left: Term,
                        right: Term) -> Any:
        # A literal outside an input's values (a shared formula naming a kind this instruction
        # does not allow) simply never matches.
        cases = [z3.And(left.expr == self.const(i), right.expr == self.const(j))
                 for i, x in enumerate(left.values) for j, y in enumerate(right.values)
                 if relation(x, y)]
        return z3.simplify(z3.Or(*cases)) if cases else z3.BoolVal(False)

    def choose(self, test: Any, body: Term, orelse: Term) -> Term:
        if body.kind == "bool" and orelse.kind == "bool":
            return Term("bool", z3.If(test, body.expr, orelse.expr))
        if body.kind in WORD_TYPES or orelse.kind in WORD_TYPES:
            view = body.kind if body.kind in WORD_TYPES else orelse.kind
            return Term(view, z3.If(test, self.word(body), self.word(orelse)))
        if body.kind != "str" and orelse.kind != "str":
            return Term("int", z3.If(test, self.integer(body), self.integer(orelse)))
        if body.kind != orelse.kind:
            raise self.error("one branch is a string, the other is not")
        values = tuple(dict.fromkeys(body.values + orelse.values))
        return Term("str", z3.If(test, self.recode(body, values), self.recode(orelse, values)),
                    values)

    def recode(self, term: Term, values: Sequence[str]) -> Any:
        """``term``'s code re-expressed as an index into ``values``."""
        expr = self.const(values.index(term.values[-1]))
        for code, value in reversed(list(enumerate(term.values[:-1]))):
            expr = z3.If(term.expr == self.const(code), self.const(values.index(value)), expr)
        return expr
