"""The rule language: small condition expressions of the spec, parsed once, evaluated two ways.

Expressions are parsed with :mod:`ast` and checked against a whitelist of node types at load time;
no text is ever passed to ``eval`` (the checked tree itself is compiled, see :func:`compile_tree`,
with the tree walker :func:`evaluate` as its reference). Integers are exact (no 32-bit wrap: the
spec is mathematics) unless a rule asks for a 32-bit word (``uword``/``iword``): types are
checked when a rule is parsed (``sm5.oracle.rulelang.ruletypes``), which makes each operator on
words a call of a helper of ``sm5.oracle.rulelang.helpers``, the one registry of helpers both back
ends read. The Python evaluator lives here; the z3 translator walks the same tree
(``sm5.oracle.proofs.z3rules``), so the oracle and the proofs cannot read a rule differently.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sm5.oracle.errors import RuleError
from sm5.oracle.rulelang import codegen as cg
from sm5.oracle.rulelang import ruletypes, words
from sm5.oracle.rulelang.helpers import PATTERN_TYPES, REGISTRY, WIDTHS

Value = int | bool | str
Evaluator = Callable[[Mapping[str, Value]], Value]

#: Functions a rule may call, with their arity: the language's own (``min``, ``max``; ``i32(x)``,
#: the two's-complement reading of the low 32 bits of ``x`` as an exact integer; the word
#: conversions ``uword``, ``iword``, ``exact``) and every helper of the registry
#: (``sm5.oracle.rulelang.helpers``). Nothing else is callable.
HELPERS: Mapping[str, int] = {**ruletypes.BUILTINS,
                              **{name: h.arity for name, h in REGISTRY.items()}}

#: 2**31 and 2**32, the constants of ``i32``.
I32_HALF, I32_SPAN = 1 << 31, 1 << 32


def as_i32(x: int) -> int:
    """The two's-complement value of the low 32 bits of ``x``."""
    return (x + I32_HALF) % I32_SPAN - I32_HALF


def _call(name: str, args: list[int], text: str) -> Value:
    if name in REGISTRY:
        return _apply(name, args, text)
    if name in _CONVERSIONS:
        return _CONVERSIONS[name](args[0])
    return min(args) if name == "min" else max(args)


#: The one-argument built-ins: ``i32`` and the word conversions (a word's value is the integer
#: of its view, so ``exact`` is the identity).
_CONVERSIONS: Mapping[str, Callable[[int], int]] = {
    "i32": as_i32, "uword": words.pattern, "iword": words.signed, "exact": lambda x: x}

_BINOPS: Mapping[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}

_CMPOPS: Mapping[type[ast.cmpop], Callable[[Value, Value], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
}


@dataclass(frozen=True)
class Rule:
    """A parsed, whitelisted, type-checked expression. ``names`` are the variables it reads;
    ``type`` is its value's (``sm5.oracle.rulelang.ruletypes``: ``uword``, ``iword``, ``int``,
    ``bool``, ``str`` or ``any``)."""

    text: str
    tree: ast.expr
    names: frozenset[str]
    type: str = "any"

    @functools.cached_property
    def evaluate(self) -> Evaluator:
        """The rule's value in an environment: ``rule.evaluate(env)`` (compiled on first use)."""
        return compile_tree(self.tree, self.text)

    @functools.cached_property
    def holds(self) -> Callable[[Mapping[str, Value]], bool]:
        """The rule as a condition: ``rule.holds(env)``, its truth value in ``env`` (a value that
        is not a truth value is an error); compiled on first use."""
        return compile_tree(self.tree, self.text, truth=True)  # type: ignore[return-value]

    def __getstate__(self) -> dict[str, object]:
        # The compiled functions are rebuilt on demand; they cannot be pickled.
        return {k: v for k, v in self.__dict__.items() if k not in ("evaluate", "holds")}


def parse_rule(text: str, *, where: str, known: frozenset[str] | None = None,
               constants: Mapping[str, int] | None = None,
               types: Mapping[str, str] | None = None) -> Rule:
    """Parse ``text``; reject anything outside the whitelist, naming ``where`` and the text.

    ``known`` (when given) is the set of variable names the expression may read. ``constants``
    are named values (the model's limits) replaced by their value in the tree, so evaluation and
    the z3 translation see plain integers while the text keeps the name. ``types`` gives the
    type of the names that have one (``uword``, ``iword``, ...; see
    ``sm5.oracle.rulelang.ruletypes``); a type error is a :class:`RuleError` naming ``where`` and
    the text.
    """
    names: set[str] = set()
    try:
        module = ast.parse(text.strip(), mode="eval")
        _check(module.body, text, where, names)
    except SyntaxError as exc:
        raise RuleError(f"{text!r} is not an expression: {exc.msg}", where=where) from None
    except (RecursionError, MemoryError):
        raise RuleError(f"expression nested too deeply: {text[:60]!r}...", where=where) from None
    if constants:
        used = names & set(constants)
        if used:
            module = ast.fix_missing_locations(_Substitute(constants).visit(module))
            names -= used
    if known is not None:
        unknown = sorted(names - known)
        if unknown:
            raise RuleError(
                f"{text!r} reads unknown variable(s) {', '.join(unknown)}; "
                f"expected one of {', '.join(sorted(known))}", where=where)
    try:
        tree, kind = ruletypes.check(module.body, text, where, types)
    except RecursionError:
        raise RuleError(f"expression nested too deeply: {text[:60]!r}...", where=where) from None
    return Rule(text=text, tree=tree, names=frozenset(names), type=kind)


class _Substitute(ast.NodeTransformer):
    """Replace the names of constants by their values."""

    def __init__(self, constants: Mapping[str, int]) -> None:
        self.constants = constants

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.constants:
            return ast.copy_location(ast.Constant(self.constants[node.id]), node)
        return node


def _reject(node: ast.AST, text: str, where: str, what: str) -> RuleError:
    fragment = ast.get_source_segment(text.strip(), node) or type(node).__name__
    return RuleError(f"{what} is not allowed in a rule: {fragment!r} (in {text!r})", where=where)


def _check(node: ast.AST, text: str, where: str, names: set[str]) -> None:
    """Walk the tree and reject every node type outside the whitelist."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value, text, where, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.Not | ast.USub | ast.Invert):
            raise _reject(node, text, where, "this unary operator")
        _check(node.operand, text, where, names)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise _reject(node, text, where, f"the operator {type(node.op).__name__}")
        _check(node.left, text, where, names)
        _check(node.right, text, where, names)
    elif isinstance(node, ast.Compare):
        if len(node.ops) > 1 and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            # Python would compare the tuple itself with the next operand; rules have no tuples.
            raise _reject(node, text, where, "'in' inside a chained comparison")
        _check(node.left, text, where, names)
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                if not isinstance(right, ast.Tuple):
                    raise _reject(right, text, where, "'in' with anything but a literal tuple")
                for element in right.elts:
                    if not isinstance(element, ast.Constant):
                        raise _reject(element, text, where, "a non-literal tuple element")
                    _check(element, text, where, names)
            elif type(op) in _CMPOPS:
                _check(right, text, where, names)
            else:
                raise _reject(node, text, where, f"the comparison {type(op).__name__}")
    elif isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _check(part, text, where, names)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in HELPERS:
            raise _reject(node, text, where,
                          f"a call outside the helpers {', '.join(sorted(HELPERS))}")
        if node.keywords or len(node.args) != HELPERS[node.func.id]:
            raise _reject(node, text, where, f"this call of {node.func.id}")
        for arg in node.args:
            _check(arg, text, where, names)
    elif isinstance(node, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            raise _reject(node, text, where, "assignment")
        if node.id not in ("True", "False"):
            names.add(node.id)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool | int | str) and node.value is not None:
            return
        raise _reject(node, text, where, f"a constant of type {type(node.value).__name__}")
    else:
        raise _reject(node, text, where, type(node).__name__)


def evaluate(node: ast.expr, env: Mapping[str, Value], text: str) -> Value:
    """Evaluate a whitelisted tree with exact integers."""
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, bool | int | str):
            raise RuleError(f"{text!r}: constant {node.value!r} is not allowed")
        return node.value
    if isinstance(node, ast.Name):
        try:
            return env[node.id]
        except KeyError:
            raise RuleError(f"{text!r}: variable {node.id!r} has no value") from None
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_truth(evaluate(v, env, text), text) for v in node.values)
        return any(_truth(evaluate(v, env, text), text) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        operand = evaluate(node.operand, env, text)
        if isinstance(node.op, ast.Not):
            return not _truth(operand, text)
        number = _integer(operand, text)
        return -number if isinstance(node.op, ast.USub) else ~number
    if isinstance(node, ast.BinOp):
        left = _integer(evaluate(node.left, env, text), text)
        right = _integer(evaluate(node.right, env, text), text)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0:
            raise RuleError(f"{text!r}: division by zero")
        if isinstance(node.op, ast.LShift | ast.RShift) and right < 0:
            raise RuleError(f"{text!r}: negative shift count")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left_value = evaluate(node.left, env, text)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                assert isinstance(right_node, ast.Tuple)
                members = [evaluate(e, env, text) for e in right_node.elts]
                ok = (left_value in members) == isinstance(op, ast.In)
                right_value: Value = 0
            else:
                right_value = evaluate(right_node, env, text)
                if isinstance(left_value, str) != isinstance(right_value, str) and not isinstance(
                        op, ast.Eq | ast.NotEq):
                    raise RuleError(f"{text!r}: cannot order {left_value!r} and {right_value!r}")
                ok = _CMPOPS[type(op)](left_value, right_value)
            if not ok:
                return False
            left_value = right_value
        return True
    if isinstance(node, ast.IfExp):
        branch = node.body if _truth(evaluate(node.test, env, text), text) else node.orelse
        return evaluate(branch, env, text)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_integer(evaluate(a, env, text), text) for a in node.args]
        return _call(node.func.id, args, text)
    raise RuleError(f"{text!r}: cannot evaluate {type(node).__name__}")


def compile_tree(node: ast.expr, text: str, *, truth: bool = False) -> Evaluator:
    """The whitelisted tree as a Python function, built once per rule.

    The tree is rewritten into the body of ``def rule(env): ...`` and compiled from the tree
    itself (never from text); the only names it can reach are ``env`` and the helpers bound
    below. Where Python's own operators would read a value differently from the rule language (a
    string or a boolean used as a number, anything but a boolean as a truth value), the value
    passes through the same checks as in :func:`evaluate`. Whenever the body raises (a missing
    variable, a division by zero, an order between a string and a number, ...), the reference
    walker :func:`evaluate` evaluates the rule again, inside the same function, and raises its
    exact error, so both give the same values and the same errors
    (``tests/test_rules_compiled.py``). With ``truth`` the function is :meth:`Rule.holds`: a
    value that is not a truth value is an error naming the rule.
    """
    def reference(env: Mapping[str, Value]) -> Value:
        try:
            return evaluate(node, env, text)
        except RecursionError:
            raise RuleError(f"expression nested too deeply: {text[:60]!r}...") from None

    def not_truth(value: Value) -> bool:
        raise RuleError(f"expression {text!r} gives {value!r}, not a truth value")

    try:
        # Compiled from the tree, never from text; it can reach env and the helpers alone.
        compiled: Evaluator = cg.build(
            "rule", ("env",), _body(_Lowering(text).value(node), truth), "<rule>",
            {**LOWERED_HELPERS, "_reference": reference, "_not_truth": not_truth})
    except (RecursionError, MemoryError, SyntaxError):  # too deep for the compiler
        if not truth:
            return reference

        def walked(env: Mapping[str, Value]) -> Value:
            value = reference(env)
            return value if value.__class__ is bool else not_truth(value)
        return walked
    return compiled


def lowered(rule: Rule) -> ast.expr:
    """The rule as a Python expression over ``env`` with the rule language's reading (the body
    :func:`compile_tree` compiles), to be inlined into a larger generated function; it reaches
    only ``env`` and the names of :data:`LOWERED_HELPERS`. Raises :class:`RuleError` for a tree
    too deep to lower."""
    try:
        return _Lowering(rule.text).value(rule.tree)
    except RecursionError:
        raise RuleError(f"expression nested too deeply: {rule.text[:60]!r}...") from None


def _body(value: ast.expr, truth: bool) -> list[ast.stmt]:
    """The statements of ``def rule(env)``: ``value``, or the reference walker's when it raises;
    with ``truth``, a result that is not a boolean goes to ``_not_truth`` (which raises)."""
    attempt = ast.Try(
        body=[cg.assign("_result", value)],
        handlers=[ast.ExceptHandler(type=cg.name("_Exception"), name=None, body=[
            cg.assign("_result", cg.call("_reference", cg.name("env")))])],
        orelse=[], finalbody=[])
    statements: list[ast.stmt] = [attempt]
    if truth:
        kind = ast.Attribute(value=cg.name("_result"), attr="__class__", ctx=ast.Load())
        statements.append(ast.If(
            test=ast.Compare(left=kind, ops=[ast.IsNot()], comparators=[cg.name("_bool")]),
            body=[ast.Return(cg.call("_not_truth", cg.name("_result")))], orelse=[]))
    statements.append(ast.Return(cg.name("_result")))
    return statements


def _as_number(value: Value) -> int:
    """A value used as a number, as :func:`evaluate` reads it (a string is an error)."""
    if isinstance(value, str):
        raise RuleError(f"{value!r} is not a number")
    return int(value)


def _as_truth(value: Value) -> bool:
    """A value used as a truth value, as :func:`evaluate` reads it (a string is an error)."""
    if isinstance(value, str):
        raise RuleError(f"{value!r} is not a truth value")
    return bool(value)


def _lowered_function(name: str) -> Callable[..., Value]:
    """The helper ``name`` of the registry as a lowered rule calls it: its pattern arguments'
    widths checked as in :func:`_apply` (an error goes to the reference walker, which names it).
    A word argument needs no check: the helper reduces it modulo 2**32."""
    helper = REGISTRY[name]
    arity, function = helper.arity, helper.python
    if not any(kind in PATTERN_TYPES for kind in helper.args):
        return function
    limit = 1 << WIDTHS[helper.args[0]]
    if any(WIDTHS[kind] != WIDTHS[helper.args[0]] for kind in helper.args):
        return lambda *args: _apply(name, list(args), name)
    if arity == 1:
        def one(a: int) -> Value:
            if 0 <= a < limit:
                return function(a)
            return _apply(name, [a], name)
        return one
    if arity == 2:
        def two(a: int, b: int) -> Value:
            if 0 <= a < limit and 0 <= b < limit:
                return function(a, b)
            return _apply(name, [a, b], name)
        return two
    return lambda *args: _apply(name, list(args), name)


#: The names a lowered rule reaches besides ``env``: checks, the built-ins as ``_<name>`` and each
#: helper of the registry as ``_fn_<name>``.
LOWERED_HELPERS: Mapping[str, object] = {
    "_number": _as_number, "_truth": _as_truth, **{f"_{n}": f for n, f in _CONVERSIONS.items()},
    "_min": min, "_max": max, "_int": int, "_bool": bool, "_Exception": Exception,
    **{f"_fn_{name}": _lowered_function(name) for name in REGISTRY},
}


class _Lowering:
    """Rewrites a whitelisted tree into a Python expression with the rule language's reading.

    Three contexts: a *value* (as it is), a *number* (an int, never a bool or a string) and a
    *truth* (a bool). A node known to give the context's type is left alone; anything else is
    checked inline for the common case (``type(v) is int``) and by a helper otherwise.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def value(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant):
            return ast.Constant(node.value)
        if isinstance(node, ast.Name):
            return self._load(node.id)
        if isinstance(node, ast.BoolOp):
            return ast.BoolOp(op=node.op, values=[self.truth(v) for v in node.values])
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return ast.UnaryOp(op=ast.Not(), operand=self.truth(node.operand))
            return ast.UnaryOp(op=node.op, operand=self.number(node.operand))
        if isinstance(node, ast.BinOp):
            return ast.BinOp(left=self.number(node.left), op=node.op,
                             right=self.number(node.right))
        if isinstance(node, ast.Compare):
            comparators = [ast.Tuple(elts=[self.value(e) for e in c.elts], ctx=ast.Load())
                           if isinstance(c, ast.Tuple) else self.value(c)
                           for c in node.comparators]
            return ast.Compare(left=self.value(node.left), ops=node.ops,
                               comparators=comparators)
        if isinstance(node, ast.IfExp):
            return ast.IfExp(test=self.truth(node.test), body=self.value(node.body),
                             orelse=self.value(node.orelse))
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            args = [self.number(a) for a in node.args]
            name = node.func.id
            if name in ruletypes.BUILTINS:
                return ast.Call(func=ast.Name(f"_{name}", ast.Load()), args=args, keywords=[])
            return ast.Call(func=ast.Name(f"_fn_{name}", ast.Load()), args=args, keywords=[])
        raise RuleError(f"{self.text!r}: cannot evaluate {type(node).__name__}")

    def number(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return ast.Constant(node.value)
        if isinstance(node, ast.BinOp) or (
                isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not)) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ruletypes.BUILTINS):
            return self.value(node)
        return self._checked(self.value(node), int, "_number")

    def truth(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Compare | ast.BoolOp) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)) or (
                isinstance(node, ast.Constant) and type(node.value) is bool):
            return self.value(node)
        return self._checked(self.value(node), bool, "_truth")

    @staticmethod
    def _load(name: str) -> ast.expr:
        return ast.Subscript(value=ast.Name("env", ast.Load()), slice=ast.Constant(name),
                             ctx=ast.Load())

    @staticmethod
    def _checked(expr: ast.expr, kind: type, helper: str) -> ast.expr:
        """``(_v if type(_v := expr) is kind else helper(_v))``: no call in the common case."""
        held = ast.NamedExpr(target=ast.Name("_v", ast.Store()), value=expr)
        test = ast.Compare(left=ast.Attribute(value=held, attr="__class__", ctx=ast.Load()),
                           ops=[ast.Is()], comparators=[ast.Name(f"_{kind.__name__}",
                                                                 ast.Load())])
        return ast.IfExp(test=test, body=ast.Name("_v", ast.Load()),
                         orelse=ast.Call(func=ast.Name(helper, ast.Load()),
                                         args=[ast.Name("_v", ast.Load())], keywords=[]))


def _apply(name: str, args: list[int], text: str) -> Value:
    """A helper of the registry (a pattern argument outside 0..2**width-1 is an error: a
    pattern is never negative nor wider; a word argument is reduced modulo 2**32)."""
    helper = REGISTRY[name]
    for arg, kind in zip(args, helper.args, strict=True):
        if kind in PATTERN_TYPES and not 0 <= arg < 1 << WIDTHS[kind]:
            raise RuleError(f"{text!r}: {name} takes {WIDTHS[kind]}-bit patterns, got {arg}")
    try:
        return helper.python(*args)
    except ZeroDivisionError:  # a word quotient or remainder, as // and % on exact integers
        raise RuleError(f"{text!r}: division by zero") from None


def _truth(value: Value, text: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    raise RuleError(f"{text!r}: {value!r} is not a truth value")


def _integer(value: Value, text: str) -> int:
    if isinstance(value, str):
        raise RuleError(f"{text!r}: {value!r} is not a number")
    return int(value)
