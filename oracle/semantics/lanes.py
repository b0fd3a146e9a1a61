"""One lane of an instruction evaluated by one generated function: inputs, derived values, clauses.

The interpreter reads an instruction's data one binding and one rule at a time
(`sm5.oracle.bindings.gather`, `sm5.oracle.clauses.full_env`, `sm5.oracle.clauses.fired_in`).
This module turns the same data into one Python function per instruction spec: each input read
as its binding says, each derived value and each group's scope and clauses inlined as the rule
compiler lowers them (`sm5.oracle.rules.lowered`). It is built from the spec's trees, never
from text, and reaches only the helpers bound below.

The function is a fast path and nothing more: whenever it raises, for whatever reason (a rule's
error, a group where not exactly one clause fires, an operand the instance lacks, a value that
is not a truth value), the interpreter evaluates the lane again and gives its own result or its
own error. ``tests/test_semantics_lanes.py`` checks that both agree on every lane of the golden
vectors and on hypothesis-drawn states.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from sm5.oracle.bindings import gather, memory_word, reach, resource_of
from sm5.oracle.clauses import fired_in, full_env
from sm5.oracle.errors import RuleError
from sm5.oracle.operands import components
from sm5.oracle.program import Instruction
from sm5.oracle.rules import LOWERED_HELPERS, Rule, Value, lowered
from sm5.oracle.spec import LANE_COMPONENT, Binding, Clause, InstructionSpec
from sm5.oracle.state import MachineState, join64

#: (instance, state, lane) -> (the lane's full environment, the clauses that fire).
LaneFunction = Callable[[Instruction, MachineState, int],
                        tuple[dict[str, Value], tuple[Clause, ...]]]


def evaluate_lane(spec: InstructionSpec, instruction: Instruction, state: MachineState,
                  lane: int) -> tuple[dict[str, Value], tuple[Clause, ...]]:
    """The lane's full environment (`full_env`) and the clauses that fire (`fired_in`)."""
    function = lane_function(spec)
    if function is not None:
        try:
            return function(instruction, state, lane)
        except Exception:  # the interpreter decides, and names the error if there is one
            pass
    env = full_env(spec.semantics, gather(spec, instruction, state, lane))
    return env, fired_in(spec, env)


def lane_function(spec: InstructionSpec) -> LaneFunction | None:
    """The spec's generated lane function, built on first use; None when its data cannot be
    generated (the interpreter alone evaluates it then)."""
    known = _built.get(id(spec))
    if known is None or known[0] is not spec:
        known = _built[id(spec)] = (spec, _generate(spec))
    return known[1]


_built: dict[int, tuple[InstructionSpec, LaneFunction | None]] = {}


class _Mismatch(Exception):
    """The generated function cannot decide this lane (the interpreter will)."""


def _generate(spec: InstructionSpec) -> LaneFunction | None:
    try:
        builder = _Builder(spec)
        module = builder.module()
        namespace = dict(builder.namespace)
        exec(compile(module, f"<lanes of {spec.name}>", "exec"), namespace)
    except (_Unsupported, RuleError, RecursionError, MemoryError, SyntaxError):
        return None
    function: LaneFunction = namespace["lane_values"]
    return function


class _Unsupported(Exception):
    """A binding the generator does not know: the interpreter handles (or refuses) it."""


def _name(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


def _call(function: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(function), args=list(args), keywords=[])


def _index(value: ast.expr, key: ast.expr) -> ast.Subscript:
    return ast.Subscript(value=value, slice=key, ctx=ast.Load())


def _attribute(value: ast.expr, attribute: str) -> ast.expr:
    if not attribute.isidentifier() or attribute.startswith("_"):
        raise _Unsupported(attribute)
    return ast.Attribute(value=value, attr=attribute, ctx=ast.Load())


def _set_env(key: str, value: ast.expr) -> ast.Assign:
    target = ast.Subscript(value=_name("env"), slice=ast.Constant(key), ctx=ast.Store())
    return ast.Assign(targets=[target], value=value)


def _assign(identifier: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(identifier, ast.Store())], value=value)


def _truth_check(identifier: str) -> ast.If:
    """``if <identifier>.__class__ is not _bool: raise _Mismatch``: a condition must give a
    truth value (the interpreter names the error)."""
    kind = ast.Attribute(value=_name(identifier), attr="__class__", ctx=ast.Load())
    return ast.If(test=ast.Compare(left=kind, ops=[ast.IsNot()], comparators=[_name("_bool")]),
                  body=[ast.Raise(exc=_name("_Mismatch"), cause=None)], orelse=[])


class _Builder:
    """The generated module: ``def lane_values(instruction, state, lane)``."""

    def __init__(self, spec: InstructionSpec) -> None:
        self.spec = spec
        self.clauses: list[Clause] = []
        self.requires: list[frozenset[str]] = []
        self.read: set[str] = set()  # source operands whose components are read so far
        self.namespace: dict[str, Any] = {
            "__builtins__": {}, **LOWERED_HELPERS, "_Mismatch": _Mismatch,
            "_components": components, "_join64": join64, "_reach": reach, "_len": len,
            "_resource_of": resource_of, "_memory_word": memory_word,
            "_semantics": spec.semantics, "_getattr": getattr,
        }

    def module(self) -> ast.Module:
        semantics = self.spec.semantics
        body: list[ast.stmt] = [
            _assign("_ops", ast.Attribute(value=_name("instruction"), attr="operands",
                                          ctx=ast.Load())),
            _assign("env", ast.Dict(keys=[], values=[])),
        ]
        memory = [i for i in semantics.inputs if i.source.kind == "memory"]
        for item in semantics.inputs:
            if item.source.kind != "memory":
                body.extend(self._input(item.name, item.source))
        for item in memory:  # their address reads the other inputs
            body.append(_set_env(item.name, _call(
                "_memory_word", _name("_semantics"), _name("env"),
                _call("_resource_of", _name("state"), self._operand(item.source.operand)))))
        for derived in semantics.derived:
            body.append(_set_env(derived.name, lowered(derived.expr)))
        body.append(_assign("_fired", ast.List(elts=[], ctx=ast.Load())))
        body.append(_assign("_ids", ast.Call(func=_name("_set"), args=[], keywords=[])))
        self.namespace["_set"] = set
        for group in semantics.groups:
            body.extend(self._group(group.scope, group.requires, group.clauses))
        self.namespace["_clauses"] = tuple(self.clauses)
        self.namespace["_requires"] = tuple(self.requires)
        body.append(ast.Return(ast.Tuple(elts=[
            _name("env"), ast.Call(func=_name("_tuple"), args=[_name("_fired")], keywords=[])],
            ctx=ast.Load())))
        self.namespace["_tuple"] = tuple
        arguments = ast.arguments(
            posonlyargs=[], args=[ast.arg("instruction"), ast.arg("state"), ast.arg("lane")],
            kwonlyargs=[], kw_defaults=[], defaults=[])
        definition = ast.FunctionDef(name="lane_values", args=arguments, body=body,
                                     decorator_list=[], returns=None, type_comment=None)
        return ast.fix_missing_locations(ast.Module(body=[definition], type_ignores=[]))

    def _operand(self, name: str) -> ast.expr:
        """The instance's operand the spec names ``name`` (an instance without it raises)."""
        position = self.spec.operand_positions.get(name)
        if position is None:
            raise _Unsupported(name)
        return _index(_name("_ops"), ast.Constant(position))

    def _values(self, name: str) -> tuple[list[ast.stmt], ast.expr]:
        """The statements reading a source operand's four components (once), and their name."""
        identifier = f"_src{self.spec.operand_positions.get(name, -1)}"
        if name in self.read:
            return [], _name(identifier)
        self.read.add(name)
        return [_assign(identifier, _call("_components", self._operand(name),
                                          _name("state")))], _name(identifier)

    def _input(self, key: str, binding: Binding) -> list[ast.stmt]:
        kind = binding.kind
        if kind == "constant":
            return [_set_env(key, ast.Constant(binding.value))]
        if kind == "sat":
            return [_set_env(key, _attribute(_name("instruction"), "sat"))]
        if kind == "invocation":
            return [_set_env(key, _attribute(_name("state"), "invocation"))]
        if kind in ("operand", "lane"):
            reading, words = self._values(binding.operand)
            if kind == "lane":
                low = ast.BinOp(left=ast.Constant(2), op=ast.Mult(), right=_name("lane"))
                high = ast.BinOp(left=low, op=ast.Add(), right=ast.Constant(1))
                value: ast.expr = _call("_join64", _index(words, low), _index(words, high))
            elif binding.component == LANE_COMPONENT:
                value = _index(words, _name("lane"))
            else:
                value = _index(words, ast.Constant(binding.component))
            return [*reading, _set_env(key, value)]
        if kind == "modifier":
            if binding.field not in ("neg", "abs"):
                raise _Unsupported(binding.field)
            return [_set_env(key, _attribute(self._operand(binding.operand), binding.field))]
        if kind == "mask":
            return [_set_env(key, _call("_len", _attribute(self._operand(binding.operand),
                                                           "components")))]
        if kind == "reach":
            return [_set_env(key, _call("_reach", self._operand(binding.operand), _attribute(
                self._operand(binding.mask), "components")))]
        if kind == "resource" and binding.field == "file":
            return [_set_env(key, _attribute(self._operand(binding.operand), "file"))]
        if kind == "resource":
            return [_set_env(key, _call(
                "_getattr", _call("_resource_of", _name("state"),
                                  self._operand(binding.operand)),
                ast.Constant(binding.field)))]
        raise _Unsupported(kind)

    def _condition(self, rule_value: ast.expr) -> list[ast.stmt]:
        """``_t = <rule>`` and its truth check."""
        return [_assign("_t", rule_value), _truth_check("_t")]

    def _group(self, scope: Rule, requires: tuple[str, ...], clauses: tuple[Clause, ...]
               ) -> list[ast.stmt]:
        """One group: when a required clause fired (or none is required) and its scope holds,
        exactly one clause must hold; it is the group's."""
        inner: list[ast.stmt] = [_assign("_hits", ast.Constant(0))]
        for clause in clauses:
            self.clauses.append(clause)
            inner.extend(self._condition(lowered(clause.when)))
            inner.append(ast.If(test=_name("_t"), body=[
                ast.AugAssign(target=ast.Name("_hits", ast.Store()), op=ast.Add(),
                              value=ast.Constant(1)),
                _assign("_hit", _index(_name("_clauses"), ast.Constant(len(self.clauses) - 1))),
            ], orelse=[]))
        inner.append(ast.If(
            test=ast.Compare(left=_name("_hits"), ops=[ast.NotEq()],
                             comparators=[ast.Constant(1)]),
            body=[ast.Raise(exc=_name("_Mismatch"), cause=None)], orelse=[]))
        inner.append(ast.Expr(_call_method("_fired", "append", _name("_hit"))))
        inner.append(ast.Expr(_call_method("_ids", "add",
                                           ast.Attribute(value=_name("_hit"), attr="id",
                                                         ctx=ast.Load()))))
        scoped: list[ast.stmt] = [*self._condition(lowered(scope)),
                                  ast.If(test=_name("_t"), body=inner, orelse=[])]
        if not requires:
            return scoped
        self.requires.append(frozenset(requires))
        required = _index(_name("_requires"), ast.Constant(len(self.requires) - 1))
        test = ast.UnaryOp(op=ast.Not(), operand=_call_method("_ids", "isdisjoint", required))
        return [ast.If(test=test, body=scoped, orelse=[])]


def _call_method(identifier: str, method: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=_name(identifier), attr=method, ctx=ast.Load()),
                    args=list(args), keywords=[])
