"""The legality checker: is an instruction instance legal in a (target, runtime) context?

Every decision comes from spec/: the operand and availability tables (through the rules
generated in ``sm5.oracle.model.spec``), the instruction rules and the declaration rules written in
the rule language. The checker computes the *features* of an instance (operand files, masks,
declared kinds, target, stage, ...) and reports every rule the instance breaks, in spec order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from sm5.oracle.errors import ExecError
from sm5.oracle.legality.checks import ChecksFunction, generate_checks
from sm5.oracle.legality.structure import match_structure
from sm5.oracle.machine.program import COMPONENTS, Declaration, Instruction, Operand, Program
from sm5.oracle.machine.state import MachineState
from sm5.oracle.model.spec import (
    FLAG_FEATURE,
    InstructionSpec,
    LegalityRule,
    OperandSpec,
    RegisterFile,
    Spec,
    load_default,
)
from sm5.oracle.rulelang.rules import Value

#: A flow-control operand that names a subroutine (always an l#, by the grammar).
LABEL_ROLE = "label"


@dataclass(frozen=True)
class Context:
    target: str
    stage: str
    model: int
    runtime: str
    uav_slots: int


def context(spec: Spec, target: str, runtime: str) -> Context:
    known = _contexts.get((id(spec), target, runtime))
    if known is not None and known[0] is spec:
        return known[1]
    t = spec.model.target(target)
    r = spec.model.runtime(runtime)
    ctx = Context(t.name, t.stage, t.model, r.name, r.uav_slots)
    _contexts[id(spec), target, runtime] = (spec, ctx)
    return ctx


#: Contexts by (spec, target, runtime): a handful, asked for by every check.
_contexts: dict[tuple[int, str, str], tuple[Spec, Context]] = {}


def violations(program: Program, target: str, runtime: str, state: MachineState | None = None,
               spec: Spec | None = None) -> list[LegalityRule]:
    """Every rule the program breaks in this context (empty when legal).

    Order: program structure, then the instruction's rules (so a defect of the instruction is
    named before the declaration defect it implies), then declarations."""
    return list(_violations(program, target, runtime, state, spec))


def first_violation(program: Program, target: str, runtime: str,
                    state: MachineState | None = None, spec: Spec | None = None
                    ) -> LegalityRule | None:
    """The first rule of `violations`, the rules after it left unchecked."""
    return next(_violations(program, target, runtime, state, spec), None)


def _violations(program: Program, target: str, runtime: str, state: MachineState | None,
                spec: Spec | None) -> Iterator[LegalityRule]:
    spec = spec or load_default()
    ctx = context(spec, target, runtime)
    yield from _program_violations(program, spec)
    features = program_features(program, ctx, spec)
    for instruction in program.instructions:
        if instruction.name in spec.instructions:
            yield from _instruction_violations(instruction, program, ctx, state, spec, features)
        elif instruction.name in spec.control.instructions:
            yield from _control_violations(instruction, ctx, spec)
    yield from _declaration_violations(program, ctx, spec, features)
    structure = match_structure(program, spec.control, ctx.model, spec.instructions.__contains__)
    for rule_id in structure.violations:
        yield _rule(spec, rule_id)


def _control_violations(instruction: Instruction, ctx: Context, spec: Spec
                        ) -> Iterator[LegalityRule]:
    """A flow-control instruction's stage and operand table."""
    ins = spec.control.instructions[instruction.name]
    if ctx.stage not in ins.stages:
        yield _rule(spec, f"{ins.name}.stage")
    for op_spec, op in zip(ins.operands, instruction.operands, strict=True):
        if op_spec.role == LABEL_ROLE:
            continue  # the parser reads only l# there
        single = len(op.values) == 1 if op.is_immediate else op.selection in ("select", "none")
        accepted = spec.model.accepted_files("src", op_spec.files)
        if op.file not in accepted or op.neg or op.abs or not single:
            yield _rule(spec, f"{ins.name}.operand")
            return


def _rule(spec: Spec, rule_id: str) -> LegalityRule:
    for rule in spec.legality_rules():
        if rule.id == rule_id:
            return rule
    raise ExecError(f"spec has no rule {rule_id!r}")


# ----------------------------------------------------------------------------------------------
# Program structure


def _program_violations(program: Program, spec: Spec) -> Iterator[LegalityRule]:
    declared: set[str] = set()
    duplicate = False
    temps: int | None = None
    for decl in program.declarations:
        if decl.register is not None:
            if decl.register.register in declared:
                duplicate = True
            declared.add(decl.register.register)
        if decl.name == "dcl_temps" and decl.numbers:
            temps = decl.numbers[0]
    if duplicate:
        yield _rule(spec, "program.duplicate_declaration")
    undeclared = beyond = False
    state_files = {f.name: f for f in spec.model.register_files if f.stands_for}
    views = spec.model.resource_files - state_files.keys()
    found: set[str] = set()
    for instruction in program.instructions:
        for operand in instruction.operands:
            for op in _with_index_registers(operand):
                if op.file in views and op.register not in declared:
                    undeclared = True
                if op.file == "r" and temps is not None and (op.index or 0) >= temps:
                    beyond = True
                described = state_files.get(op.file)
                if described is not None:
                    found.update(_state_defects(op, described, declared, program))
    if undeclared:
        yield _rule(spec, "program.undeclared_resource")
    if beyond:
        yield _rule(spec, "program.temp_beyond_dcl_temps")
    for rule_id in STATE_RULES:
        if rule_id in found:
            yield _rule(spec, rule_id)


#: The program rules of program state, in the order they are reported.
STATE_RULES = ("program.undeclared_register", "program.relative_index",
               "program.dynamic_index_immediate", "program.input_component")
#: The files an element index may read: an r# component, or an x# element given by a number.
INDEX_FILES = ("r", "x")


def _with_index_registers(op: Operand) -> Iterator[Operand]:
    """The operand and the registers its element index reads (nested ones included)."""
    current: Operand | None = op
    while current is not None:
        yield current
        current = current.relative


def _state_defects(op: Operand, described: RegisterFile, declared: set[str],
                   program: Program) -> Iterator[str]:
    """The program-state rules one operand of an x#, cb#, the icb or a compute input breaks."""
    if op.register not in declared:
        yield "program.undeclared_register"
    index = op.relative
    if index is not None and (index.file not in INDEX_FILES or index.relative is not None):
        yield "program.relative_index"
    if index is not None and described.elements == "bound":
        decl = program.declaration_of(op.register)
        if decl is not None and decl.flags and decl.flags[0] != DYNAMIC_ACCESS:
            yield "program.dynamic_index_immediate"
    if described.elements is None and op.selection in ("swizzle", "select", "mask") and any(
            COMPONENTS.index(c) >= described.components for c in op.components):
        yield "program.input_component"


#: The access pattern of a constant buffer that may be indexed by a register.
DYNAMIC_ACCESS = "dynamicIndexed"


# ----------------------------------------------------------------------------------------------
# Declarations


def _tgsm_total(program: Program, spec: Spec) -> int:
    """Bytes of all shared-memory declarations: ``bytes``, or ``stride`` times ``count``."""
    total = 0
    shared = spec.model.shared_memory_files
    for decl in program.declarations:
        dspec = spec.declarations.declarations.get(decl.name)
        if dspec is None or dspec.register not in shared:
            continue
        numbers = dict(zip(dspec.numbers, decl.numbers, strict=False))
        if "bytes" in numbers:
            total += numbers["bytes"]
        elif "stride" in numbers and "count" in numbers:
            total += numbers["stride"] * numbers["count"]
    return total


def _program_env(program: Program, ctx: Context, spec: Spec, features: Mapping[str, bool]
                 ) -> dict[str, Value]:
    """What every declaration rule of one program reads, computed once (per declaration it
    made the check quadratic in the program's length)."""
    return {"stage": ctx.stage, "model": ctx.model, "runtime": ctx.runtime,
            "uav_slots": ctx.uav_slots, "tgsm_total": _tgsm_total(program, spec),
            "temp_total": _temp_total(program, spec), **features}


def _temp_total(program: Program, spec: Spec) -> int:
    """r# of dcl_temps plus the elements of every x# (FS 22.3.35 restriction 1)."""
    total = 0
    for decl in program.declarations:
        dspec = spec.declarations.declarations.get(decl.name)
        if dspec is None or not decl.numbers:
            continue
        if "temps" in dspec.numbers or (dspec.sized and dspec.register in
                                        spec.model.element_files and len(dspec.numbers) > 1):
            total += decl.numbers[0]
    return total


def _declaration_env(decl: Declaration, program_env: Mapping[str, Value], spec: Spec
                     ) -> dict[str, Value]:
    env: dict[str, Value] = {
        **program_env,
        "index": decl.register.index or 0 if decl.register else 0,
        "stride": 0, "count": 0, "bytes": 0, "temps": 0, "elements": 0, "components": 0,
        "x": 0, "y": 0, "z": 0,
    }
    dspec = spec.declarations.declarations[decl.name]
    if dspec.listed:
        env["elements"] = len(decl.numbers) // 4
    names = dspec.numbers
    for name, value in zip(names, decl.numbers, strict=False):
        env[name] = value
    return env


def _declaration_violations(program: Program, ctx: Context, spec: Spec,
                            features: Mapping[str, bool]) -> Iterator[LegalityRule]:
    reported: set[str] = set()
    program_env = _program_env(program, ctx, spec, features)
    for decl in program.declarations:
        if decl.name not in spec.declarations.declarations:
            continue
        env = _declaration_env(decl, program_env, spec)
        for rule in spec.declarations.rules:
            if rule.id in reported or decl.name not in rule.applies:
                continue
            assert rule.reject_if is not None
            if rule.reject_if.holds(env):
                reported.add(rule.id)
                yield rule


# ----------------------------------------------------------------------------------------------
# Instructions


def declared_kind(program: Program, register: str, spec: Spec) -> tuple[str, str]:
    """(kind, return type) of a declared u#/g#, or ('', '') when undeclared."""
    decl = program.declaration_of(register)
    if decl is None or decl.name not in spec.declarations.declarations:
        return "", ""
    kind = spec.declarations.declarations[decl.name].declares or ""
    return kind, (decl.return_type[0] if decl.return_type else "")


def program_features(program: Program, ctx: Context, spec: Spec) -> dict[str, bool]:
    """Every feature of the model (spec/model.yaml ``features``) as a legality variable: a
    global flag the program declares, or the context's stage in a runtime's stage list."""
    flags = {flag for d in program.declarations if d.name == "dcl_globalFlags"
             for flag in d.flags}
    features: dict[str, bool] = {}
    for name, described in spec.model.features.items():
        if described.global_flag is not None:
            features[name] = described.global_flag in flags
        else:
            assert described.runtime_stages == "uav_stages"
            features[name] = ctx.stage in spec.model.runtime(ctx.runtime).uav_stages
    return features


def instance_features(instruction: Instruction, program: Program, ctx: Context,
                      state: MachineState | None, spec: Spec, features: Mapping[str, bool]
                      ) -> dict[str, Value]:
    """The variables legality rules read (see ``sm5.oracle.model.spec.instance_features``);
    ``features`` are the program's (`program_features`)."""
    ins = spec.instructions[instruction.name]
    env: dict[str, Value] = {
        "target": ctx.target, "stage": ctx.stage, "model": ctx.model, "runtime": ctx.runtime,
        "sat": instruction.sat, **features,
    }
    for flag in ins.flags:
        env[FLAG_FEATURE + flag.name] = flag.name in instruction.flags
    for op_spec, op in zip(ins.operands, instruction.operands, strict=True):
        values = operand_features(op, program, state, spec)
        for names in op_spec.feature_names:
            env.update(zip(names, values, strict=True))
    return env


def operand_features(op: Operand, program: Program, state: MachineState | None, spec: Spec
                     ) -> tuple[Value, ...]:
    """One operand's legality variables, in ``OPERAND_FEATURES`` order
    (``sm5.oracle.model.spec``)."""
    resource = op.file in spec.model.resource_files
    kind, rtype = declared_kind(program, op.register, spec) if resource else ("", "")
    fmt = counter = ""
    if state is not None and op.register in state.resources:
        fmt = state.resources[op.register].format
        counter = "absent" if state.resources[op.register].counter is None else "present"
    selection = op.selection
    return (op.file, -1 if op.index is None else op.index,
            op.components if selection == "mask" else "",
            op.components if selection == "swizzle" else "",
            op.components if selection == "select" else "",
            op.neg, op.abs, kind, rtype, fmt, counter)


def _table_check(rule: LegalityRule, ins: InstructionSpec, instruction: Instruction,
                 program: Program, ctx: Context, spec: Spec) -> bool:
    """Does the instance break a rule generated from the operand or availability tables?"""
    if rule.check == "sat":
        return instruction.sat
    if rule.check == "target":
        return ins.availability.target_supported(spec.model.target(ctx.target)) is not True
    if rule.check == "stage":
        return ctx.stage not in ins.availability.stages_for(ctx.runtime)
    assert rule.operand is not None
    position = ins.operand_positions[rule.operand]
    op_spec: OperandSpec = ins.operands[position]
    op: Operand = instruction.operands[position]
    accepted = op_spec.accepted_files or frozenset(op_spec.files)
    if rule.check == "file":
        return op.file not in accepted
    if op.file not in accepted:
        return False  # reported by the file rule; one defect, one rule
    if rule.check == "file_stage":
        return ctx.stage not in spec.model.file_stages[op.file]
    if rule.check == "kind":
        kind, _ = declared_kind(program, op.register, spec)
        return bool(kind) and kind not in op_spec.kinds
    if rule.check == "mask":
        return op.selection == "mask" and op.components not in op_spec.masks
    if rule.check == "swizzle":
        return op.selection == "swizzle" and not op.is_immediate and \
            op.components not in op_spec.swizzles
    if rule.check == "modifier":  # a modifier the operand takes that its table does not allow
        return (op.neg and "neg" not in op_spec.modifiers) or \
            (op.abs and "abs" not in op_spec.modifiers)
    raise ExecError(f"rule {rule.id}: unknown check {rule.check!r}")


def _instruction_violations(instruction: Instruction, program: Program, ctx: Context,
                            state: MachineState | None, spec: Spec,
                            features: Mapping[str, bool]) -> Iterator[LegalityRule]:
    ins = spec.instructions[instruction.name]
    if len(instruction.operands) != len(ins.operands):
        raise ExecError(f"{ins.name} takes {len(ins.operands)} operands, "
                        f"got {len(instruction.operands)}")
    unknown = sorted(set(instruction.flags) - set(ins.flag_names)) if instruction.flags else []
    if unknown:
        raise ExecError(f"{ins.name} has no suffix flag(s) {', '.join(unknown)}")
    checks = generated_checks(ins)
    if checks is not None:
        try:
            broken: list[LegalityRule] | None = checks(instruction, program, ctx, state, spec,
                                                       features)
        except Exception:  # the interpreter below decides, and names the error if there is one
            broken = None
        if broken is not None:
            yield from broken
            return
    yield from interpreted_rules(ins, instruction, program, ctx, state, spec, features)


def interpreted_rules(ins: InstructionSpec, instruction: Instruction, program: Program,
                      ctx: Context, state: MachineState | None, spec: Spec,
                      features: Mapping[str, bool]) -> Iterator[LegalityRule]:
    """The instruction's rules the instance breaks, in order, decided one rule at a time (the
    reference of the generated checks)."""
    env: dict[str, Value] | None = None
    for rule in ins.rules:
        if rule.check == "expr":
            assert rule.reject_if is not None
            if env is None:
                env = instance_features(instruction, program, ctx, state, spec, features)
            if rule.reject_if.holds(env):
                yield rule
        elif _table_check(rule, ins, instruction, program, ctx, spec):
            yield rule


def generated_checks(ins: InstructionSpec) -> ChecksFunction | None:
    """The instruction's generated checks (``sm5.oracle.legality.checks``), built on first use;
    None when they cannot be generated (the interpreter alone decides then)."""
    known = _generated.get(id(ins))
    if known is None or known[0] is not ins:
        known = _generated[id(ins)] = (ins, generate_checks(
            ins, {"table_check": _table_check, "features": instance_features,
                  "operand_features": operand_features}))
    return known[1]


_generated: dict[int, tuple[InstructionSpec, ChecksFunction | None]] = {}
