"""Register steps compiled per instruction instance: the lane function with the instance folded in.

The generated lane function (:mod:`sm5.oracle.execution.semantics.lanes`) serves every instance of
an instruction, so it reads the operands, modifiers and ``_sat`` at run time, keeps every value in
a dictionary and evaluates each clause's class tests anew. A straight-line program runs one
instance for many states; here each lane of an instance gets its own function, built from the
same data by the same builder, then partially evaluated: the instance's operands, modifiers,
``_sat``, masks and lane are constants, values live in locals, a test of a known value is
decided at build time (a group out of scope disappears), a source reads its register component
directly, a helper called twice on the same values is called once.

As for every generated function, it is a fast path: it gives up (raises) wherever it cannot
decide, and the caller runs the step the general way. ``tests/test_compiled_steps.py`` checks
that both agree.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Sequence
from typing import Any

from sm5.oracle.errors import RuleError
from sm5.oracle.execution.bindings import F64_LANES, lane_components, operand_named
from sm5.oracle.execution.semantics import saturate_f64
from sm5.oracle.execution.semantics.lanes import _Builder
from sm5.oracle.machine.operands import components, read_order
from sm5.oracle.machine.program import COMPONENTS, NULL_FILE, Instruction, storage_name
from sm5.oracle.machine.state import U32, join64, split64
from sm5.oracle.model.spec import Binding, Clause, InstructionSpec
from sm5.oracle.rulelang import codegen as cg
from sm5.oracle.rulelang.helpers import PATTERN_TYPES, REGISTRY, WIDTHS, Helper

#: (registers, invocation) -> (the result's value, the clauses fired) for one lane.
LaneStep = Callable[[Any, str], tuple[int, tuple[Clause, ...]]]
#: Where a lane's value goes: (register, component, which part: 0 the word, 1 low, 2 high).
Target = tuple[str, int, int]


class CompiledStep:
    """An instance's lanes, each a compiled function and the components it writes."""

    def __init__(self, lanes: Sequence[tuple[LaneStep, tuple[Target, ...]]], sat64: bool,
                 word_lanes: bool) -> None:
        self.lanes = tuple(lanes)
        self.sat64 = sat64
        self.word_lanes = word_lanes

    def run(self, registers: Any, invocation: str
            ) -> tuple[list[tuple[str, int, int]], list[Clause]] | None:
        """The writes and the fired clauses, or None where the general step must decide."""
        writes: list[tuple[str, int, int]] = []
        fired: list[Clause] = []
        for function, targets in self.lanes:
            try:
                value, lane_fired = function(registers, invocation)
            except Exception:
                return None
            if not lane_fired:
                return None
            fired.extend(lane_fired)
            if self.word_lanes:
                if not 0 <= value <= U32:
                    return None
                for register, component, _ in targets:
                    writes.append((register, component, value))
            else:
                if self.sat64:
                    value = saturate_f64(value)
                lo, hi = split64(value)
                for register, component, part in targets:
                    writes.append((register, component, lo if part == 1 else hi))
        return writes, fired


def compile_step(spec: InstructionSpec, instruction: Instruction, lanes: tuple[int, ...],
                 exact: Callable[[Clause], bool]) -> CompiledStep | None:
    """The instance's compiled step, or None where its data cannot be compiled so. A lane
    where a clause fires for which ``exact`` is false gives up (the general step runs it)."""
    semantics = spec.semantics
    if len(semantics.results) != 1:
        return None
    result = semantics.results[0]
    lane_type = semantics.lanes.type if semantics.lanes is not None else None
    op = operand_named(spec, instruction, result.operand)
    built = []
    try:
        for lane in lanes:
            if op.file == NULL_FILE:
                return None
            letters = (op.components if lane_type is None
                       else lane_components(lane_type, op.components, lane))
            if lane_type == "f64":
                if letters not in F64_LANES:
                    return None
                targets = tuple((storage_name(op), COMPONENTS.index(c), part)
                                for c, part in zip(letters, (1, 2), strict=True))
            else:
                if lane_type is not None and len(letters) != 1:
                    return None
                targets = tuple((storage_name(op), COMPONENTS.index(c), 0) for c in letters)
            built.append((_lane_step(spec, instruction, lane, result.value, exact), targets))
    except (cg.Unsupported, RuleError, RecursionError, MemoryError, SyntaxError, KeyError,
            ValueError, TypeError):
        return None
    return CompiledStep(built, lane_type == "f64" and instruction.sat, lane_type != "f64")


class _InstanceBuilder(_Builder):
    """The lane builder with the instance's operands, modifiers and ``_sat`` as constants."""

    def __init__(self, spec: InstructionSpec, instruction: Instruction) -> None:
        super().__init__(spec)
        self.instruction = instruction
        self.registers: set[str] = set()

    def _values(self, operand: str) -> tuple[list[ast.stmt], ast.expr]:
        position = self.spec.operand_positions.get(operand)
        if position is None:
            raise cg.Unsupported(operand)
        op = self.instruction.operands[position]
        if op.is_immediate:
            words = components(op, None)  # type: ignore[arg-type]
            return [], ast.Tuple(elts=[ast.Constant(w) for w in words], ctx=ast.Load())
        if op.file != "r" or op.element is not None or op.relative is not None \
                or op.index is None:
            raise cg.Unsupported(op.register)
        name = _register_local(op.register)
        self.registers.add(op.register)
        reads = [cg.index(cg.name(name), k) for k in read_order(op)]
        return [], ast.Tuple(elts=list(reads), ctx=ast.Load())

    def _input(self, key: str, binding: Binding) -> list[ast.stmt]:
        kind = binding.kind
        instruction = self.instruction
        if kind == "sat":
            return [cg.set_item("env", key, ast.Constant(instruction.sat))]
        if kind in ("modifier", "mask"):
            position = self.spec.operand_positions.get(binding.operand)
            if position is None:
                raise cg.Unsupported(binding.operand)
            op = instruction.operands[position]
            if kind == "mask":
                return [cg.set_item("env", key, ast.Constant(len(op.components)))]
            if binding.field not in ("neg", "abs"):
                raise cg.Unsupported(binding.field)
            return [cg.set_item("env", key, ast.Constant(getattr(op, binding.field)))]
        if kind == "invocation":
            return [cg.set_item("env", key, cg.name("invocation"))]
        if kind in ("constant", "operand", "lane"):
            return super()._input(key, binding)
        raise cg.Unsupported(kind)


def _register_local(register: str) -> str:
    return "_reg_" + "".join(c if c.isalnum() else "_" for c in register)


def _lane_step(spec: InstructionSpec, instruction: Instruction, lane: int,
               result: str, exact: Callable[[Clause], bool]) -> LaneStep:
    builder = _InstanceBuilder(spec, instruction)
    body = builder.body()[:-1]  # without ``return (env, tuple(_fired))``
    body = [s for s in body if not _is_setup(s)]
    prologue: list[ast.stmt] = [
        cg.assign(_register_local(r), cg.index(cg.name("registers"), r))
        for r in sorted(builder.registers)]
    tree = ast.Module(body=[*prologue, *body], type_ignores=[])
    tree = _Locals(lane).visit(tree)
    tree = _OnlyExact(tuple(exact(c) for c in builder.clauses)).visit(tree)
    if not builder.requires:  # no group waits for another's clause: no ids to gather
        tree = _WithoutIds().visit(tree)
    folded = _Folder().block(tree.body)
    folded = _shared_calls(folded)
    folded.append(ast.Return(ast.Tuple(elts=[cg.name(_env_local(result)),
                                             cg.call("_tuple", cg.name("_fired"))],
                                       ctx=ast.Load())))
    namespace = {**builder.namespace, "_UNSET": _UNSET,
                 **{f"_raw_{name}": helper.python for name, helper in REGISTRY.items()}}
    function: LaneStep = cg.build("lane_step", ("registers", "invocation"), folded,
                                  f"<step of {spec.name}>", namespace)
    return function


def _is_setup(statement: ast.stmt) -> bool:
    """``_ops = instruction.operands`` and ``env = {}``: not needed with locals."""
    return (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id in ("_ops", "env"))


def _env_local(key: str) -> str:
    return "_e_" + key


class _OnlyExact(ast.NodeTransformer):
    """``_hit = _clauses[k]`` for a clause that is not exact becomes ``raise _GiveUp``."""

    def __init__(self, exact: tuple[bool, ...]) -> None:
        self.exact = exact

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        value = node.value
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
                and value.value.id == "_clauses" and isinstance(value.slice, ast.Constant) \
                and isinstance(value.slice.value, int) and not self.exact[value.slice.value]:
            return ast.Raise(exc=cg.name("_GiveUp"), cause=None)
        return node


class _WithoutIds(ast.NodeTransformer):
    """Drops ``_ids = _set()`` and ``_ids.add(...)``."""

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        target = node.targets[0]
        return None if isinstance(target, ast.Name) and target.id == "_ids" else node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "_ids":
            return None
        return node


class _Locals(ast.NodeTransformer):
    """``env['k']`` becomes the local ``_e_k``; ``lane`` the lane's number."""

    def __init__(self, lane: int) -> None:
        self.lane = lane

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "env" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return ast.Name(_env_local(node.slice.value), node.ctx)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "lane" and isinstance(node.ctx, ast.Load):
            return ast.Constant(self.lane)
        return node


# The operators folded at build time, as the generated code would apply them.
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b, ast.Mod: lambda a, b: a % b,
    ast.FloorDiv: lambda a, b: a // b,
}
#: The type names a generated test compares a value's class with.
_TYPES = {"_int": int, "_bool": bool}
#: Functions of the namespace that are pure and cheap to call at build time on constants.
_PURE = {"_join64": join64}


def _helper_of(function: str) -> Helper | None:
    """The registry's helper a generated call names: ``_fn_X`` (its range-checked form) or
    ``_raw_X`` (its Python function, called where the arguments are known to be in range)."""
    for prefix in ("_fn_", "_raw_"):
        if function.startswith(prefix):
            return REGISTRY.get(function.removeprefix(prefix))
    return None


def _is_simple(node: ast.expr) -> bool:
    """A constant, or a register component read (``_reg_r1[2]``): free to repeat."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and node.value.id.startswith("_reg_") and isinstance(node.slice, ast.Constant):
        return True
    return isinstance(node, ast.Tuple) and all(_is_simple(e) for e in node.elts)


def _assigned(nodes: Sequence[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
            elif isinstance(sub, ast.NamedExpr):
                names.add(sub.target.id)
    return names


class _Folder:
    """A forward pass: names bound to constants (or register reads) are substituted, and tests
    of constants decided. A name assigned where evaluation is conditional is forgotten after."""

    def __init__(self) -> None:
        self.known: dict[str, ast.expr] = {}
        #: Names known to hold an int (a word, a pattern) or a bool: their class tests are
        #: decided.
        self.ints: set[str] = set()
        self.bools: set[str] = set()
        #: Names known to hold a value below 2**width (a register word, a pattern built from
        #: them): a helper on them needs no range check.
        self.widths: dict[str, int] = {}

    def forget(self, names: set[str]) -> None:
        for name in names:
            self.known.pop(name, None)
            self.ints.discard(name)
            self.bools.discard(name)
            self.widths.pop(name, None)
        stale = [k for k, v in self.known.items() if isinstance(v, ast.Name) and v.id in names]
        for name in stale:  # an alias of a name assigned anew
            del self.known[name]

    # statements ---------------------------------------------------------------------------
    def block(self, statements: Sequence[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in statements:
            out.extend(self.statement(statement))
        return out

    def statement(self, node: ast.stmt) -> list[ast.stmt]:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            value = self.expr(node.value)
            name = node.targets[0].id
            self.forget({name})
            if _is_simple(value):
                self.known[name] = value
            self._learn(name, value)
            return [ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)]
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            value = self.expr(node.value)
            self.forget({node.target.id})
            return [ast.AugAssign(target=node.target, op=node.op, value=value)]
        if isinstance(node, ast.If):
            test = self.expr(node.test)
            if isinstance(test, ast.Constant):
                return self.block(node.body if test.value else node.orelse)
            saved = self._saved()
            body = self.block(node.body)
            self._restore(saved)
            orelse = self.block(node.orelse)
            self._restore(saved)
            self.forget(_assigned([*node.body, *node.orelse]))
            return [ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)]
        if isinstance(node, ast.Expr):
            return [ast.Expr(self.expr(node.value))]
        if isinstance(node, ast.Raise):
            return [node]
        if isinstance(node, ast.Return):
            return [ast.Return(None if node.value is None else self.expr(node.value))]
        raise cg.Unsupported(type(node).__name__)

    def _learn(self, name: str, value: ast.expr) -> None:
        """What is known of ``value`` (its type, its width), now held by ``name``."""
        if self._is_int(value):
            self.ints.add(name)
        elif self._is_bool(value):
            self.bools.add(name)
        width = self._width(value)
        if width is not None:
            self.widths[name] = width

    def _saved(self) -> tuple[dict[str, ast.expr], set[str], set[str], dict[str, int]]:
        return dict(self.known), set(self.ints), set(self.bools), dict(self.widths)

    def _restore(self, saved: tuple[dict[str, ast.expr], set[str], set[str], dict[str, int]]
                 ) -> None:
        self.known, self.ints, self.bools, self.widths = (
            dict(saved[0]), set(saved[1]), set(saved[2]), dict(saved[3]))

    # expressions --------------------------------------------------------------------------
    def _width(self, node: ast.expr) -> int | None:
        """A bound 2**width on ``node``'s value (it is a non-negative int below it), if known."""
        if isinstance(node, ast.Constant):
            value = node.value
            return value.bit_length() if type(value) is int and value >= 0 else None
        if isinstance(node, ast.Name):
            return self.widths.get(node.id)
        if isinstance(node, ast.Subscript):
            return 32 if _is_simple(node) else None  # a register word
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "_join64" and len(node.args) == 2:
                widths = [self._width(a) for a in node.args]
                return 64 if all(w is not None and w <= 32 for w in widths) else None
            helper = _helper_of(node.func.id)
            if helper is not None and helper.result in PATTERN_TYPES:
                return WIDTHS[helper.result]
        return None

    def _is_int(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.Name):
            return node.id in self.ints
        if isinstance(node, ast.Subscript):  # a register component
            return _is_simple(node)
        if isinstance(node, ast.BinOp):
            return self._is_int(node.left) and self._is_int(node.right) \
                and type(node.op) in _BINARY
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "_join64" or node.func.id == "_number":
                return True
            helper = _helper_of(node.func.id)
            return helper is not None and helper.result != "bool"
        if isinstance(node, ast.IfExp):
            return self._is_int(node.body) and self._is_int(node.orelse)
        return False

    def _is_bool(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) is bool
        if isinstance(node, ast.Name):
            return node.id in self.bools
        if isinstance(node, (ast.Compare, ast.UnaryOp)):
            return isinstance(node, ast.Compare) or isinstance(node.op, ast.Not)
        if isinstance(node, ast.BoolOp):
            return all(self._is_bool(v) for v in node.values)
        if isinstance(node, ast.NamedExpr):
            return self._is_bool(node.value)
        if isinstance(node, ast.IfExp):
            return self._is_bool(node.body) and self._is_bool(node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = _helper_of(node.func.id)
            return node.func.id == "_truth" or (helper is not None and helper.result == "bool")
        return False

    def _class_checked(self, node: ast.IfExp) -> ast.expr | None:
        """``(_v if (_v := X).__class__ is T else f(_v))`` where X is known to be a T: X."""
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Is)
                and isinstance(test.left, ast.Attribute) and test.left.attr == "__class__"
                and isinstance(test.left.value, ast.NamedExpr)
                and isinstance(test.comparators[0], ast.Name)
                and test.comparators[0].id in _TYPES
                and isinstance(node.body, ast.Name)
                and node.body.id == test.left.value.target.id):
            return None
        wanted = _TYPES[test.comparators[0].id]
        saved = self._saved()
        value = self.expr(test.left.value.value)
        if (wanted is int and self._is_int(value)) or (wanted is bool and self._is_bool(value)):
            self.forget({node.body.id})
            return value
        self._restore(saved)  # undecided: fold it the general way
        return None

    def conditional(self, node: ast.expr) -> ast.expr:
        """``node`` evaluated only on some paths: what it assigns is forgotten after."""
        saved = self._saved()
        out = self.expr(node)
        self._restore(saved)
        self.forget(_assigned([node]))
        return out

    def expr(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Name):
            known = self.known.get(node.id)
            return copy.deepcopy(known) if known is not None else node
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value)
            name = node.target.id
            self.forget({name})
            if _is_simple(value) or (isinstance(value, ast.Name)
                                     and (value.id in self.ints or value.id in self.bools)):
                self.known[name] = value
                self._learn(name, value)
                return value
            self._learn(name, value)
            return ast.NamedExpr(target=node.target, value=value)
        if isinstance(node, ast.Attribute):
            return ast.Attribute(value=self.expr(node.value), attr=node.attr, ctx=node.ctx)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self.expr(node.left)
            right = self.expr(node.comparators[0])
            kind = type(node.ops[0])
            if isinstance(left, ast.Attribute) and left.attr == "__class__" \
                    and isinstance(right, ast.Name) and right.id in _TYPES \
                    and kind in (ast.Is, ast.IsNot):
                subject = left.value
                known_type: type | None = None
                if isinstance(subject, ast.NamedExpr):  # its assignment must stay
                    return ast.Compare(left=left, ops=node.ops, comparators=[right])
                if isinstance(subject, ast.Constant):
                    known_type = type(subject.value)
                elif self._is_int(subject):
                    known_type = int
                elif self._is_bool(subject):
                    known_type = bool
                if known_type is not None:
                    same = known_type is _TYPES[right.id]
                    return ast.Constant(same if kind is ast.Is else not same)
            if isinstance(left, ast.Constant) and isinstance(right, ast.Constant) \
                    and kind in _COMPARE:
                return ast.Constant(_COMPARE[kind](left.value, right.value))
            return ast.Compare(left=left, ops=node.ops, comparators=[right])
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(operand, ast.Constant):
                if isinstance(node.op, ast.Not):
                    return ast.Constant(not operand.value)
                if isinstance(node.op, ast.USub) and type(operand.value) is int:
                    return ast.Constant(-operand.value)
                if isinstance(node.op, ast.Invert) and type(operand.value) is int:
                    return ast.Constant(~operand.value)
            return ast.UnaryOp(op=node.op, operand=operand)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            binary = type(node.op)
            if isinstance(left, ast.Constant) and isinstance(right, ast.Constant) \
                    and binary in _BINARY and type(left.value) is int \
                    and type(right.value) is int:
                try:
                    return ast.Constant(_BINARY[binary](left.value, right.value))
                except ArithmeticError:
                    pass
            if binary in (ast.BitXor, ast.BitOr, ast.Add) and isinstance(right, ast.Constant) \
                    and right.value == 0 and type(right.value) is int and self._is_int(left):
                return left
            return ast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, ast.BoolOp):
            values: list[ast.expr] = []
            is_and = isinstance(node.op, ast.And)
            for k, item in enumerate(node.values):
                folded = self.expr(item) if not values else self.conditional(item)
                if isinstance(folded, ast.Constant) and not values:
                    if bool(folded.value) != is_and or k == len(node.values) - 1:
                        return folded  # decides the whole expression
                    continue  # a constant that lets evaluation go on
                values.append(folded)
            if len(values) == 1:
                return values[0]
            return ast.BoolOp(op=node.op, values=values)
        if isinstance(node, ast.IfExp):
            checked = self._class_checked(node)
            if checked is not None:
                return checked
            test = self.expr(node.test)
            if isinstance(test, ast.Constant):
                return self.expr(node.body if test.value else node.orelse)
            body = self.conditional(node.body)
            orelse = self.conditional(node.orelse)
            return ast.IfExp(test=test, body=body, orelse=orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [self.expr(a) for a in node.args]
            pure = _PURE.get(node.func.id)
            constants: list[Any] = [a.value for a in args if isinstance(a, ast.Constant)]
            if pure is not None and len(constants) == len(args):
                return ast.Constant(pure(*constants))
            if node.func.id == "_number" and len(args) == 1 and self._is_int(args[0]):
                return args[0]
            helper = _helper_of(node.func.id)
            if node.func.id.startswith("_fn_") and helper is not None \
                    and any(kind in PATTERN_TYPES for kind in helper.args) \
                    and all(kind in WIDTHS for kind in helper.args):
                widths = [self._width(a) for a in args]
                if all(w is not None and w <= WIDTHS[kind]
                       for w, kind in zip(widths, helper.args, strict=True)):
                    return ast.Call(func=cg.name("_raw_" + helper.name), args=args,
                                    keywords=[])
            return ast.Call(func=node.func, args=args, keywords=[])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and not node.keywords:  # a method of a local (``_fired.append``)
            return ast.Call(func=node.func, args=[self.expr(a) for a in node.args],
                            keywords=[])
        if isinstance(node, ast.Subscript):
            value = self.expr(node.value)
            key = self.expr(node.slice)
            if isinstance(value, ast.Tuple) and isinstance(key, ast.Constant) \
                    and type(key.value) is int:
                return copy.deepcopy(value.elts[key.value])
            return ast.Subscript(value=value, slice=key, ctx=node.ctx)
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self.expr(e) for e in node.elts], ctx=node.ctx)
        if isinstance(node, ast.List):
            return ast.List(elts=[self.expr(e) for e in node.elts], ctx=node.ctx)
        if isinstance(node, ast.Dict):
            if node.keys or node.values:
                raise cg.Unsupported("dict")
            return node
        raise cg.Unsupported(type(node).__name__)


class _Unset:
    """The value of a shared call not made yet."""


_UNSET = _Unset()


def _shared_calls(body: list[ast.stmt]) -> list[ast.stmt]:
    """Each helper call (``_fn_*``) made more than once on the same locals and constants is
    made once: ``(_cN if _cN is not _UNSET else (_cN := call))``, ``_cN`` set to ``_UNSET``
    first. Sound because every local it reads is assigned once before the groups (the
    derived values) and never after; a call on any other local is left alone."""
    assigned: dict[str, int] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assigned[node.id] = assigned.get(node.id, 0) + 1
        elif isinstance(node, ast.NamedExpr):
            assigned[node.target.id] = assigned.get(node.target.id, 0) + 1
    stable = {name for name, count in assigned.items() if count == 1}

    def key_of(call: ast.Call) -> str | None:
        if not isinstance(call.func, ast.Name) or _helper_of(call.func.id) is None:
            return None
        for arg in call.args:
            if isinstance(arg, ast.Constant):
                continue
            if isinstance(arg, ast.Name) and arg.id in stable:
                continue
            if _is_simple(arg):
                continue
            return None
        return ast.dump(call)

    counts: dict[str, int] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Call):
            key = key_of(node)
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
    shared = {key: f"_c{n}" for n, key in enumerate(k for k, c in counts.items() if c > 1)}
    if not shared:
        return body

    class Share(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            key = key_of(node)
            if key is None or key not in shared:
                return node
            local = shared[key]
            return ast.IfExp(
                test=ast.Compare(left=cg.name(local), ops=[ast.IsNot()],
                                 comparators=[cg.name("_UNSET")]),
                body=cg.name(local),
                orelse=ast.NamedExpr(target=ast.Name(local, ast.Store()), value=node))

    transformed = [Share().visit(s) for s in body]
    return [*(cg.assign(local, cg.name("_UNSET")) for local in shared.values()), *transformed]
