"""Building the oracle's generated functions: a few :mod:`ast` constructors and the compile step.

Generated functions (each rule's in ``sm5.oracle.rulelang.rules.compile_tree``, each instruction's
in ``sm5.oracle.execution.semantics.lanes`` and ``sm5.oracle.legality.checks``) are fast paths over
the spec's data: their bodies are built from the spec's checked rule trees and from constants, never
from text, and they reach only the names their namespace binds. Where one cannot decide it raises
(:class:`GiveUp`, or the error of the case), and the interpreter, which stays the reference,
decides instead.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any


class GiveUp(Exception):
    """A generated function cannot decide this case: its caller asks the interpreter."""


class Unsupported(Exception):
    """Data the generator does not turn into code: the interpreter alone handles it."""


def name(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


def call(function: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=name(function), args=list(args), keywords=[])


def method(identifier: str, attribute: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=name(identifier), attr=attribute, ctx=ast.Load()),
                    args=list(args), keywords=[])


def index(value: ast.expr, key: ast.expr | int | str) -> ast.Subscript:
    slice_ = key if isinstance(key, ast.expr) else ast.Constant(key)
    return ast.Subscript(value=value, slice=slice_, ctx=ast.Load())


def attribute(value: ast.expr, field: str) -> ast.Attribute:
    """``value.field`` for a public attribute name (anything else is :class:`Unsupported`)."""
    if not field.isidentifier() or field.startswith("_"):
        raise Unsupported(field)
    return ast.Attribute(value=value, attr=field, ctx=ast.Load())


def assign(identifier: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(identifier, ast.Store())], value=value)


def set_item(identifier: str, key: str, value: ast.expr) -> ast.Assign:
    """``identifier[key] = value``."""
    target = ast.Subscript(value=name(identifier), slice=ast.Constant(key), ctx=ast.Store())
    return ast.Assign(targets=[target], value=value)


def give_up_unless_bool(identifier: str) -> ast.If:
    """``if identifier.__class__ is not _bool: raise _GiveUp``: a condition gives a truth value
    (the interpreter names the error when it does not)."""
    kind = ast.Attribute(value=name(identifier), attr="__class__", ctx=ast.Load())
    return ast.If(test=ast.Compare(left=kind, ops=[ast.IsNot()], comparators=[name("_bool")]),
                  body=[ast.Raise(exc=name("_GiveUp"), cause=None)], orelse=[])


def located(tree: ast.Module) -> ast.Module:
    """``tree`` with every node placed on line 1 (``compile`` needs a position; a generated
    function has no source lines). ``ast.fix_missing_locations`` does the same recursively and
    costs several times more on the large generated bodies."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = 1  # type: ignore[attr-defined]
            node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return tree


def build(function: str, parameters: tuple[str, ...], body: list[ast.stmt], where: str,
          namespace: Mapping[str, Any]) -> Any:
    """``def function(*parameters): body`` compiled in ``namespace`` (plus ``_GiveUp`` and
    ``_bool``, and no builtins)."""
    arguments = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in parameters],
                              kwonlyargs=[], kw_defaults=[], defaults=[])
    definition = ast.FunctionDef(name=function, args=arguments, body=body, decorator_list=[],
                                 returns=None, type_comment=None)
    module = located(ast.Module(body=[definition], type_ignores=[]))
    scope: dict[str, Any] = {"_GiveUp": GiveUp, "_bool": bool, **namespace, "__builtins__": {}}
    exec(compile(module, where, "exec"), scope)
    return scope[function]
