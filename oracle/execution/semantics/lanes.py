"""One lane of an instruction evaluated by one generated function: inputs, derived values, clauses.

The interpreter reads an instruction's data one binding and one rule at a time
(`sm5.oracle.execution.bindings.gather`, `sm5.oracle.model.clauses.full_env`,
`sm5.oracle.model.clauses.fired_in`). This module turns the same data into one Python function per
instruction spec (`sm5.oracle.rulelang.codegen`): each input read as its binding says, each derived
value and each group's scope and clauses inlined as the rule compiler lowers them
(`sm5.oracle.rulelang.rules.lowered`).

The function is a fast path and nothing more: whenever it raises, for whatever reason (a rule's
error, a group where not exactly one clause fires, an operand the instance lacks, a value that
is not a truth value), the interpreter evaluates the lane again and gives its own result or its
own error. ``tests/test_semantics_lanes.py`` checks that both agree on every lane of the golden
vectors and on hypothesis-drawn states.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from sm5.oracle.errors import RuleError
from sm5.oracle.execution.bindings import gather, memory_word, reach, resource_of
from sm5.oracle.machine.operands import components
from sm5.oracle.machine.program import Instruction
from sm5.oracle.machine.state import MachineState, join64
from sm5.oracle.model.clauses import fired_in, full_env
from sm5.oracle.model.spec import LANE_COMPONENT, Binding, Clause, InstructionSpec
from sm5.oracle.rulelang import codegen as cg
from sm5.oracle.rulelang.rules import LOWERED_HELPERS, Rule, Value, lowered

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


def _generate(spec: InstructionSpec) -> LaneFunction | None:
    try:
        builder = _Builder(spec)
        body = builder.body()
        function: LaneFunction = cg.build("lane_values", ("instruction", "state", "lane"),
                                          body, f"<lanes of {spec.name}>", builder.namespace)
    except (cg.Unsupported, RuleError, RecursionError, MemoryError, SyntaxError):
        return None
    return function


class _Builder:
    """The body of ``lane_values(instruction, state, lane)`` and the names it reaches."""

    def __init__(self, spec: InstructionSpec) -> None:
        self.spec = spec
        self.clauses: list[Clause] = []
        self.requires: list[frozenset[str]] = []
        self.read: set[str] = set()  # source operands whose components are read so far
        self.namespace: dict[str, object] = {
            **LOWERED_HELPERS, "_components": components, "_join64": join64, "_reach": reach,
            "_len": len, "_getattr": getattr, "_set": set, "_tuple": tuple,
            "_resource_of": resource_of, "_memory_word": memory_word,
            "_semantics": spec.semantics,
        }

    def body(self) -> list[ast.stmt]:
        semantics = self.spec.semantics
        body: list[ast.stmt] = [
            cg.assign("_ops", cg.attribute(cg.name("instruction"), "operands")),
            cg.assign("env", ast.Dict(keys=[], values=[])),
        ]
        for item in semantics.inputs:
            if item.source.kind != "memory":
                body.extend(self._input(item.name, item.source))
        for item in semantics.inputs:  # memory words last: their address reads the others
            if item.source.kind == "memory":
                body.append(cg.set_item("env", item.name, cg.call(
                    "_memory_word", cg.name("_semantics"), cg.name("env"),
                    cg.call("_resource_of", cg.name("state"),
                            self._operand(item.source.operand)))))
        for derived in semantics.derived:
            body.append(cg.set_item("env", derived.name, lowered(derived.expr)))
        body.append(cg.assign("_fired", ast.List(elts=[], ctx=ast.Load())))
        body.append(cg.assign("_ids", cg.call("_set")))
        for group in semantics.groups:
            body.extend(self._group(group.scope, group.requires, group.clauses))
        self.namespace["_clauses"] = tuple(self.clauses)
        self.namespace["_requires"] = tuple(self.requires)
        body.append(ast.Return(ast.Tuple(elts=[cg.name("env"),
                                               cg.call("_tuple", cg.name("_fired"))],
                                         ctx=ast.Load())))
        return body

    def _operand(self, operand: str) -> ast.expr:
        """The instance's operand the spec names ``operand`` (an instance without it raises)."""
        position = self.spec.operand_positions.get(operand)
        if position is None:
            raise cg.Unsupported(operand)
        return cg.index(cg.name("_ops"), position)

    def _values(self, operand: str) -> tuple[list[ast.stmt], ast.expr]:
        """The statements reading a source operand's four components (once), and their name."""
        source = self._operand(operand)
        identifier = f"_src{self.spec.operand_positions[operand]}"
        if operand in self.read:
            return [], cg.name(identifier)
        self.read.add(operand)
        return [cg.assign(identifier, cg.call("_components", source, cg.name("state")))], \
            cg.name(identifier)

    def _input(self, key: str, binding: Binding) -> list[ast.stmt]:
        kind = binding.kind
        if kind == "constant":
            return [cg.set_item("env", key, ast.Constant(binding.value))]
        if kind == "sat":
            return [cg.set_item("env", key, cg.attribute(cg.name("instruction"), "sat"))]
        if kind == "invocation":
            return [cg.set_item("env", key, cg.attribute(cg.name("state"), "invocation"))]
        if kind in ("operand", "lane"):
            reading, words = self._values(binding.operand)
            if kind == "lane":
                low = ast.BinOp(left=ast.Constant(2), op=ast.Mult(), right=cg.name("lane"))
                high = ast.BinOp(left=low, op=ast.Add(), right=ast.Constant(1))
                value: ast.expr = cg.call("_join64", cg.index(words, low), cg.index(words, high))
            elif binding.component == LANE_COMPONENT:
                value = cg.index(words, cg.name("lane"))
            else:
                value = cg.index(words, binding.component)
            return [*reading, cg.set_item("env", key, value)]
        if kind == "modifier":
            if binding.field not in ("neg", "abs"):
                raise cg.Unsupported(binding.field)
            return [cg.set_item("env", key, cg.attribute(self._operand(binding.operand),
                                                         binding.field))]
        if kind == "mask":
            return [cg.set_item("env", key, cg.call("_len", cg.attribute(
                self._operand(binding.operand), "components")))]
        if kind == "reach":
            return [cg.set_item("env", key, cg.call("_reach", self._operand(binding.operand),
                                                    cg.attribute(self._operand(binding.mask),
                                                                 "components")))]
        if kind == "resource" and binding.field == "file":
            return [cg.set_item("env", key, cg.attribute(self._operand(binding.operand),
                                                         "file"))]
        if kind == "resource":
            return [cg.set_item("env", key, cg.call(
                "_getattr", cg.call("_resource_of", cg.name("state"),
                                    self._operand(binding.operand)),
                ast.Constant(binding.field)))]
        raise cg.Unsupported(kind)

    @staticmethod
    def _condition(rule: Rule) -> list[ast.stmt]:
        """``_t = <rule>`` and its truth check."""
        return [cg.assign("_t", lowered(rule)), cg.give_up_unless_bool("_t")]

    def _group(self, scope: Rule, requires: tuple[str, ...], clauses: tuple[Clause, ...]
               ) -> list[ast.stmt]:
        """One group: when a required clause fired (or none is required) and its scope holds,
        exactly one clause must hold; it is the group's."""
        inner: list[ast.stmt] = [cg.assign("_hits", ast.Constant(0))]
        for clause in clauses:
            self.clauses.append(clause)
            inner.extend(self._condition(clause.when))
            inner.append(ast.If(test=cg.name("_t"), body=[
                ast.AugAssign(target=ast.Name("_hits", ast.Store()), op=ast.Add(),
                              value=ast.Constant(1)),
                cg.assign("_hit", cg.index(cg.name("_clauses"), len(self.clauses) - 1)),
            ], orelse=[]))
        inner.append(ast.If(
            test=ast.Compare(left=cg.name("_hits"), ops=[ast.NotEq()],
                             comparators=[ast.Constant(1)]),
            body=[ast.Raise(exc=cg.name("_GiveUp"), cause=None)], orelse=[]))
        inner.append(ast.Expr(cg.method("_fired", "append", cg.name("_hit"))))
        inner.append(ast.Expr(cg.method("_ids", "add", cg.attribute(cg.name("_hit"), "id"))))
        scoped: list[ast.stmt] = [*self._condition(scope),
                                  ast.If(test=cg.name("_t"), body=inner, orelse=[])]
        if not requires:
            return scoped
        self.requires.append(frozenset(requires))
        required = cg.index(cg.name("_requires"), len(self.requires) - 1)
        test = ast.UnaryOp(op=ast.Not(), operand=cg.method("_ids", "isdisjoint", required))
        return [ast.If(test=test, body=scoped, orelse=[])]
