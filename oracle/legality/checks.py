"""One instruction's legality rules evaluated by one generated function.

``sm5.oracle.legality`` decides an instance's instruction rules one rule at a time: a table check
chosen by its ``check`` name, or a ``reject_if`` expression over the instance's features. This
module turns the same rules into one Python function per instruction spec
(`sm5.oracle.rulelang.codegen`): the operand-table checks inlined against the tables' values, the
expressions inlined as the rule compiler lowers them (`sm5.oracle.rulelang.rules.lowered`), and the
rarer checks (target, stage, declared kind, register file per stage) through the interpreter's own
table check.

The function is a fast path and nothing more: whenever it raises, the interpreter decides the
instance again and gives its own answer or error. ``tests/test_legality_checks.py`` checks that
both agree on every golden vector's program and on hypothesis-drawn instances.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from sm5.oracle.errors import RuleError
from sm5.oracle.model.spec import FLAG_FEATURE, InstructionSpec, LegalityRule
from sm5.oracle.rulelang import codegen as cg
from sm5.oracle.rulelang.rules import LOWERED_HELPERS, lowered

#: (instance, program, context, state, spec, program features) -> the rules it breaks, in
#: order (the parameters of ``sm5.oracle.legality``'s instruction checks).
ChecksFunction = Callable[..., list[LegalityRule]]

#: Table checks inlined against an operand's tables (the others go through the interpreter's).
OPERAND_CHECKS = ("file", "mask", "swizzle", "modifier")


def generate_checks(ins: InstructionSpec, helpers: Mapping[str, Any]) -> ChecksFunction | None:
    """The instruction's generated checks, or None when its rules cannot be generated.

    ``helpers``: the interpreter's ``table_check(rule, ins, instruction, program, ctx, spec)``,
    ``features(instruction, program, ctx, state, spec, features)`` (every variable of its
    expressions) and ``operand_features(op, program, state, spec)`` (one operand's), bound as
    ``_table_check``, ``_features`` and ``_operand_features``."""
    namespace: dict[str, Any] = {**LOWERED_HELPERS, "_table_check": helpers["table_check"],
                                 "_features": helpers["features"],
                                 "_operand_features": helpers["operand_features"], "_ins": ins,
                                 "_rules": ins.rules}
    body: list[ast.stmt] = [
        cg.assign("_ops", cg.attribute(cg.name("instruction"), "operands")),
        cg.assign("_broken", ast.List(elts=[], ctx=ast.Load())),
        cg.assign("env", ast.Constant(None)),
    ]
    try:
        for number, rule in enumerate(ins.rules):
            test = _test(ins, rule, number, namespace, body)
            body.append(ast.If(test=test, body=[ast.Expr(cg.method(
                "_broken", "append", cg.index(cg.name("_rules"), number)))], orelse=[]))
        body.append(ast.Return(cg.name("_broken")))
        function: ChecksFunction = cg.build(
            "instruction_violations",
            ("instruction", "program", "ctx", "state", "spec", "features"), body,
            f"<legality of {ins.name}>", namespace)
    except (cg.Unsupported, RuleError, RecursionError, MemoryError, SyntaxError):
        return None
    return function


def _environment(ins: InstructionSpec) -> list[ast.stmt]:
    """``env = ...``: the variables the instruction's expressions read, each as the
    interpreter's ``instance_features`` computes it (one operand's variables at once), with
    the same precedence: an operand's variable, then a flag, then a program feature, then the
    context. A name it does not know raises (the interpreter then names the error)."""
    needed = sorted({n for rule in ins.rules if rule.check == "expr" and rule.reject_if
                     for n in rule.reject_if.names})
    context = {"target": "ctx", "stage": "ctx", "model": "ctx", "runtime": "ctx",
               "sat": "instruction"}
    flags = {FLAG_FEATURE + flag.name: flag.name for flag in ins.flags}
    owners: dict[str, tuple[int, int]] = {}  # variable -> (operand, OPERAND_FEATURES index)
    for position, table in enumerate(ins.operands):
        for names in table.feature_names:  # later operands win, as in the interpreter's update
            owners.update((n, (position, k)) for k, n in enumerate(names))
    statements: list[ast.stmt] = [cg.assign("env", ast.Dict(keys=[], values=[]))]
    read: set[int] = set()
    for variable in needed:
        if variable in owners:
            position, k = owners[variable]
            values = f"_features{position}"
            if position not in read:
                read.add(position)
                statements.append(cg.assign(values, cg.call(
                    "_operand_features", cg.index(cg.name("_ops"), position),
                    *map(cg.name, ("program", "state", "spec")))))
            statements.append(cg.set_item("env", variable, cg.index(cg.name(values), k)))
        elif variable in flags:
            statements.append(cg.set_item("env", variable, ast.Compare(
                left=ast.Constant(flags[variable]), ops=[ast.In()],
                comparators=[cg.attribute(cg.name("instruction"), "flags")])))
        else:
            feature: ast.expr = cg.index(cg.name("features"), variable)
            if variable in context:  # a program feature of that name would take precedence
                in_features = ast.Compare(left=ast.Constant(variable), ops=[ast.In()],
                                          comparators=[cg.name("features")])
                feature = ast.IfExp(test=in_features, body=feature, orelse=cg.attribute(
                    cg.name(context[variable]), variable))
            statements.append(cg.set_item("env", variable, feature))
    return statements


def _test(ins: InstructionSpec, rule: LegalityRule, number: int, namespace: dict[str, Any],
          body: list[ast.stmt]) -> ast.expr:
    """The condition under which the instance breaks ``rule`` (statements it needs first are
    appended to ``body``)."""
    if rule.check == "expr":
        if rule.reject_if is None:
            raise cg.Unsupported(rule.id)
        body.append(ast.If(test=ast.Compare(left=cg.name("env"), ops=[ast.Is()],
                                            comparators=[ast.Constant(None)]),
                           body=_environment(ins), orelse=[]))
        body.append(cg.assign("_t", lowered(rule.reject_if)))
        body.append(cg.give_up_unless_bool("_t"))
        return cg.name("_t")
    if rule.check == "sat":
        return cg.attribute(cg.name("instruction"), "sat")
    if rule.check not in OPERAND_CHECKS:
        return cg.call("_table_check", cg.index(cg.name("_rules"), number), cg.name("_ins"),
                       *map(cg.name, ("instruction", "program", "ctx", "spec")))
    if rule.operand is None or rule.operand not in ins.operand_positions:
        raise cg.Unsupported(rule.id)
    position = ins.operand_positions[rule.operand]
    table = ins.operands[position]
    operand = f"_op{position}"
    files = f"_files{position}"
    if files not in namespace:  # the operand's first table check: read it once
        namespace[files] = table.accepted_files or frozenset(table.files)
        body.append(cg.assign(operand, cg.index(cg.name("_ops"), position)))
    in_files = ast.Compare(left=cg.attribute(cg.name(operand), "file"), ops=[ast.In()],
                           comparators=[cg.name(files)])
    if rule.check == "file":
        return ast.UnaryOp(op=ast.Not(), operand=in_files)
    if rule.check == "modifier":  # a modifier the operand takes that its table does not allow
        refused: list[ast.expr] = [cg.attribute(cg.name(operand), modifier)
                   for modifier in ("neg", "abs") if modifier not in table.modifiers]
        if not refused:
            return ast.Constant(False)
        return ast.BoolOp(op=ast.And(), values=[
            in_files, refused[0] if len(refused) == 1 else ast.BoolOp(op=ast.Or(),
                                                                      values=refused)])
    allowed = f"_{rule.check}{position}"
    namespace[allowed] = frozenset(table.masks if rule.check == "mask" else table.swizzles)
    selection = "mask" if rule.check == "mask" else "swizzle"
    conditions: list[ast.expr] = [
        in_files,
        ast.Compare(left=cg.attribute(cg.name(operand), "selection"), ops=[ast.Eq()],
                    comparators=[ast.Constant(selection)])]
    if rule.check == "swizzle":
        conditions.append(ast.UnaryOp(op=ast.Not(),
                                      operand=cg.attribute(cg.name(operand), "is_immediate")))
    conditions.append(ast.Compare(left=cg.attribute(cg.name(operand), "components"),
                                  ops=[ast.NotIn()], comparators=[cg.name(allowed)]))
    return ast.BoolOp(op=ast.And(), values=conditions)
