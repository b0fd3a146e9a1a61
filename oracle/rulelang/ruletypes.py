"""Types of the rule language, checked when a rule is parsed, and the word operators made
explicit.

A value is an exact integer, a truth value, a string (an enum input's value) or a 32-bit word
in one of its two views, ``uword`` (unsigned) or ``iword`` (signed). Names get their type from
the caller (a semantics' inputs and derived values); a name without one is an exact integer, a
truth value or a string, decided when the rule runs, as before words existed.

Words and exact integers never meet silently: an operator or comparison with a word on one side
takes a word of the same view or an integer literal that the view holds on the other; anything
else is a :class:`~sm5.oracle.errors.RuleError` naming the rule and the conversion to write:
``uword(x)`` / ``iword(x)`` (an exact integer modulo 2**32, or the other view of the same bits)
and ``exact(w)`` (the word's integer in its view). A word is not a truth value.

Checking also rewrites the tree, so both back ends read words the same way without types of
their own: each operator on words becomes the helper of ``sm5.oracle.rulelang.helpers.OPERATORS``
(``a + b`` on two uwords is ``uword_sum(a, b)``), and each read of a word-typed name becomes
the conversion to its own view (``uword(a)``), so an environment may hold a word as its pattern
or as the integer of its view.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Literal

from sm5.oracle.errors import RuleError
from sm5.oracle.rulelang.helpers import OPERATORS, REGISTRY, WORD_TYPES

RuleType = Literal["int", "bool", "str", "any", "uword", "iword"]

#: The range of an integer literal that stands for a word of each view.
LITERAL_RANGE: Mapping[str, tuple[int, int]] = {"uword": (0, (1 << 32) - 1),
                                                "iword": (-(1 << 31), (1 << 31) - 1)}
#: Calls the language itself defines (the registry's helpers aside), with their arity.
BUILTINS: Mapping[str, int] = {"min": 2, "max": 2, "i32": 1, "uword": 1, "iword": 1, "exact": 1}

Typed = tuple[ast.expr, str]


def check(tree: ast.expr, text: str, where: str,
          types: Mapping[str, str] | None = None) -> Typed:
    """The tree with word operators made explicit, and the rule's type."""
    return _Checker(text, where, types or {}).typed(tree)


def literal(node: ast.expr) -> int | None:
    """The value of an integer literal (``5``, ``-1``), or ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _call(function: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(function, ast.Load()), args=list(args), keywords=[])


class _Checker:
    def __init__(self, text: str, where: str, types: Mapping[str, str]) -> None:
        self.text = text
        self.where = where
        self.types = types

    def error(self, node: ast.AST, message: str) -> RuleError:
        fragment = ast.get_source_segment(self.text.strip(), node) or ast.unparse(node)
        return RuleError(f"{message}: {fragment!r} (in {self.text!r})", where=self.where)

    def typed(self, node: ast.expr) -> Typed:
        if isinstance(node, ast.Constant):
            value = node.value
            kind = "bool" if isinstance(value, bool) else "str" if isinstance(value, str) \
                else "int"
            return node, kind
        if isinstance(node, ast.Name):
            kind = self.types.get(node.id, "any")
            return (_call(kind, node), kind) if kind in WORD_TYPES else (node, kind)
        if isinstance(node, ast.BoolOp):
            return ast.BoolOp(op=node.op, values=[self.truth(v) for v in node.values]), "bool"
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Compare):
            return self.compare(node), "bool"
        if isinstance(node, ast.IfExp):
            test = self.truth(node.test)
            (body, body_kind), (orelse, orelse_kind) = self.typed(node.body), \
                self.typed(node.orelse)
            if body_kind in WORD_TYPES or orelse_kind in WORD_TYPES:
                view = self.unify(node, (node.body, body_kind), (node.orelse, orelse_kind))
                return ast.IfExp(test=test, body=body, orelse=orelse), view
            kind = body_kind if body_kind == orelse_kind else "any"
            return ast.IfExp(test=test, body=body, orelse=orelse), kind
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.error(node, f"{type(node).__name__} has no type")

    def truth(self, node: ast.expr) -> ast.expr:
        tree, kind = self.typed(node)
        if kind in WORD_TYPES:
            raise self.error(node, f"a {kind} is not a truth value (compare it, `w != 0`)")
        return tree

    def number(self, node: ast.expr, what: str) -> ast.expr:
        """``node`` where an exact integer is expected (a word is an error)."""
        tree, kind = self.typed(node)
        if kind in WORD_TYPES:
            raise self.error(node, f"{what} takes an exact integer, not a {kind} (convert "
                             "with exact(...))")
        return tree

    def unify(self, node: ast.AST, *sides: tuple[ast.expr, str]) -> str:
        """The one word view of ``sides`` (words of that view or literals it holds)."""
        views = {kind for _, kind in sides if kind in WORD_TYPES}
        if len(views) > 1:
            raise self.error(node, "mixes a uword and an iword (convert one with uword(...) "
                             "or iword(...))")
        view = views.pop()
        low, high = LITERAL_RANGE[view]
        for side, kind in sides:
            if kind in WORD_TYPES:
                continue
            value = literal(side)
            if value is None:
                raise self.error(node, f"mixes a {view} and an exact integer (convert with "
                                 f"{view}(...) or exact(...))")
            if not low <= value <= high:
                raise self.error(node, f"the literal {value} is not a {view} "
                                 f"({low} .. {high})")
        return view

    def unary(self, node: ast.UnaryOp) -> Typed:
        if isinstance(node.op, ast.Not):
            return ast.UnaryOp(op=node.op, operand=self.truth(node.operand)), "bool"
        if literal(node) is not None:
            return node, "int"
        operand, kind = self.typed(node.operand)
        if kind in WORD_TYPES:
            return _call(OPERATORS[(kind, type(node.op).__name__)], operand), kind
        return ast.UnaryOp(op=node.op, operand=operand), "int"

    def binary(self, node: ast.BinOp) -> Typed:
        (left, left_kind), (right, right_kind) = self.typed(node.left), self.typed(node.right)
        op = type(node.op).__name__
        if left_kind not in WORD_TYPES and right_kind not in WORD_TYPES:
            return ast.BinOp(left=left, op=node.op, right=right), "int"
        if isinstance(node.op, ast.LShift | ast.RShift) and left_kind in WORD_TYPES:
            # The count is a word of either view (bits [4:0] are used) or a literal uword.
            if right_kind == "iword":
                right = _call("uword", right)
            elif right_kind != "uword":
                self.unify(node, (node.right, right_kind), (left, "uword"))
            return _call(OPERATORS[(left_kind, op)], left, right), left_kind
        view = self.unify(node, (node.left, left_kind), (node.right, right_kind))
        helper = OPERATORS.get((view, op))
        if helper is None:
            raise self.error(node, f"{op} is not defined on {view} (convert with exact(...))")
        return _call(helper, left, right), view

    def compare(self, node: ast.Compare) -> ast.Compare:
        left, left_kind = self.typed(node.left)
        sides = [(node.left, left, left_kind)]
        comparators: list[ast.expr] = []
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                assert isinstance(right_node, ast.Tuple)
                if left_kind in WORD_TYPES:
                    for element in right_node.elts:
                        self.unify(node, (element, "int"), (left, left_kind))
                comparators.append(right_node)
                sides.append((right_node, right_node, "int"))
                continue
            right, right_kind = self.typed(right_node)
            previous, previous_kind = sides[-1][0], sides[-1][2]
            if previous_kind in WORD_TYPES or right_kind in WORD_TYPES:
                self.unify(node, (previous, previous_kind), (right_node, right_kind))
            comparators.append(right)
            sides.append((right_node, right, right_kind))
        return ast.Compare(left=left, ops=node.ops, comparators=comparators)

    def call(self, node: ast.Call) -> Typed:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        if name in ("min", "max"):
            typed = [self.typed(a) for a in node.args]
            args = [tree for tree, _ in typed]
            if any(kind in WORD_TYPES for _, kind in typed):
                view = self.unify(node, *[(a, kind) for a, (_, kind) in
                                          zip(node.args, typed, strict=True)])
                return _call(name, *args), view
            return _call(name, *args), "int"
        if name == "i32":
            return _call(name, self.number(node.args[0], "i32(...) (for a word: iword(w))")), \
                "int"
        if name in WORD_TYPES:
            arg, kind = self.typed(node.args[0])
            if kind in ("bool", "str"):
                raise self.error(node, f"{name}(...) takes an integer or a word, not a {kind}")
            return _call(name, arg), name
        if name == "exact":
            arg, kind = self.typed(node.args[0])
            if kind not in WORD_TYPES:
                raise self.error(node, "exact(...) takes a word")
            return _call(name, arg), "int"
        helper = REGISTRY[name]
        args = []
        for arg_node, declared in zip(node.args, helper.args, strict=True):
            arg, kind = self.typed(arg_node)
            if declared in WORD_TYPES:
                if kind in WORD_TYPES and kind != declared:
                    raise self.error(node, f"{name} takes a {declared} here, not a {kind} "
                                     f"(convert with {declared}(...))")
                if kind not in WORD_TYPES:
                    self.unify(node, (arg_node, kind), (arg, declared))
            elif kind in WORD_TYPES:
                raise self.error(node, f"{name} takes a {declared} bit pattern as an "
                                 f"exact integer, not a {kind} (convert with exact(...))")
            args.append(arg)
        result = helper.result if helper.result in WORD_TYPES or helper.result == "bool" \
            else "int"
        return _call(name, *args), result
