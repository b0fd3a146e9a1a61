"""The typed, validated model of spec/: frozen dataclasses built from the YAML files.

Loading validates every file against its JSON Schema, parses every rule-language expression
(rejecting anything outside the whitelist) and cross-checks references (sources, errata, clause
ids). Legality rules that follow from the operand tables are generated here, so each fact is
written once, in the YAML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from sm5.oracle.errors import RuleError, SpecError
from sm5.oracle.rules import Rule, parse_rule
from sm5.oracle.yamlio import load_yaml, validate

ALL_MODIFIERS = ("neg", "abs")


@dataclass(frozen=True)
class SourceRef:
    ref: str
    section: str


@dataclass(frozen=True)
class SourceDoc:
    key: str
    title: str
    kind: str
    file: str | None


@dataclass(frozen=True)
class Stage:
    name: str
    prefix: str


@dataclass(frozen=True)
class ShaderModel:
    model: int
    name: str
    stages: tuple[str, ...]


@dataclass(frozen=True)
class Target:
    """A compilation target such as ``cs_5_0``: a stage and a shader model (50)."""

    name: str
    stage: str
    model: int


@dataclass(frozen=True)
class Runtime:
    name: str
    uav_stages: tuple[str, ...]
    uav_slots: int
    source: SourceRef


@dataclass(frozen=True)
class RegisterFile:
    name: str
    title: str
    components: int
    stages: tuple[str, ...]


@dataclass(frozen=True)
class ResourceKind:
    file: str
    kind: str
    declaration: str


@dataclass(frozen=True)
class Model:
    spec_version: str
    sources: Mapping[str, SourceDoc]
    stages: tuple[Stage, ...]
    shader_models: tuple[ShaderModel, ...]
    runtimes: tuple[Runtime, ...]
    register_files: tuple[RegisterFile, ...]
    resource_kinds: tuple[ResourceKind, ...]
    typed_formats: Mapping[str, str]
    invocation_states: tuple[str, ...]
    invocation_stages: Mapping[str, tuple[str, ...]]
    limits: Mapping[str, int]
    features: Mapping[str, str]

    @cached_property
    def targets(self) -> tuple[Target, ...]:
        """Every (stage, model) pair the model allows, named like ``cs_5_0`` (derived once)."""
        prefix = {s.name: s.prefix for s in self.stages}
        return tuple(
            Target(f"{prefix[stage]}_{m.model // 10}_{m.model % 10}", stage, m.model)
            for m in self.shader_models for stage in m.stages)

    def target(self, name: str) -> Target:
        for target in self.targets:
            if target.name == name:
                return target
        raise SpecError(f"unknown target {name!r}; expected one of "
                        f"{', '.join(t.name for t in self.targets)}")

    def runtime(self, name: str) -> Runtime:
        for runtime in self.runtimes:
            if runtime.name == name:
                return runtime
        raise SpecError(f"unknown runtime {name!r}; expected one of "
                        f"{', '.join(r.name for r in self.runtimes)}")

    @cached_property
    def resource_files(self) -> frozenset[str]:
        """Register files that name memory resources (u#, g#), from ``resource_kinds``."""
        return frozenset(k.file for k in self.resource_kinds)

    @property
    def file_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.register_files)


@dataclass(frozen=True)
class OperandSpec:
    name: str
    role: str  # dst | memory | src
    meaning: str
    files: tuple[str, ...]
    kinds: tuple[str, ...]
    selection: str  # none | mask | swizzle | select
    masks: tuple[str, ...]
    swizzles: tuple[str, ...]
    modifiers: tuple[str, ...]
    source: SourceRef


@dataclass(frozen=True)
class RuntimeStages:
    runtime: str
    stages: tuple[str, ...]
    source: SourceRef
    erratum: str | None


@dataclass(frozen=True)
class ModelSupport:
    model: int
    supported: bool
    source: SourceRef


@dataclass(frozen=True)
class TargetOverride:
    target: str
    supported: bool
    source: SourceRef
    erratum: str | None


@dataclass(frozen=True)
class Availability:
    runtimes: tuple[RuntimeStages, ...]
    models: tuple[ModelSupport, ...]
    targets: tuple[TargetOverride, ...]

    def target_supported(self, target: Target) -> bool | None:
        """The table's verdict for a target: an explicit row wins over the model row."""
        for row in self.targets:
            if row.target == target.name:
                return row.supported
        for model_row in self.models:
            if model_row.model == target.model:
                return model_row.supported
        return None

    def stages_for(self, runtime: str) -> tuple[str, ...]:
        for row in self.runtimes:
            if row.runtime == runtime:
                return row.stages
        return ()


@dataclass(frozen=True)
class LegalityRule:
    """A rule whose violation rejects an instance. ``check`` names how it is decided:
    ``expr`` (``reject_if`` in the rule language over instance features) or one of the
    generated table checks (``file``, ``kind``, ``mask``, ``swizzle``, ``modifier``, ``sat``,
    ``target``, ``stage``), or ``program`` for structural program checks."""

    id: str
    text: str
    source: SourceRef
    check: str
    reject_if: Rule | None = None
    operand: str | None = None
    applies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clause:
    id: str
    group: str
    when: Rule
    outcomes: tuple[str, ...]
    text: str
    source: SourceRef
    erratum: str | None


@dataclass(frozen=True)
class Group:
    id: str
    scope: Rule
    requires: tuple[str, ...]
    text: str
    clauses: tuple[Clause, ...]


@dataclass(frozen=True)
class Input:
    name: str
    type: str
    text: str
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Derived:
    name: str
    expr: Rule
    text: str


@dataclass(frozen=True)
class Semantics:
    inputs: tuple[Input, ...]
    derived: tuple[Derived, ...]
    assume: Rule | None
    address: Rule | None
    address_source: SourceRef | None
    groups: tuple[Group, ...]
    lanes: str | None

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return tuple(c for g in self.groups for c in g.clauses)


@dataclass(frozen=True)
class Erratum:
    id: str
    sources: tuple[str, ...]
    defect: str
    resolution: str


@dataclass(frozen=True)
class InstructionSpec:
    name: str
    opcode: int
    family: str
    summary: str
    syntax: str
    source: SourceRef
    saturate: bool
    operands: tuple[OperandSpec, ...]
    availability: Availability
    rules: tuple[LegalityRule, ...]
    semantics: Semantics
    errata: tuple[Erratum, ...]
    path: str = field(compare=False)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return self.semantics.clauses

    def clause(self, clause_id: str) -> Clause:
        for clause in self.clauses:
            if clause.id == clause_id:
                return clause
        raise KeyError(clause_id)

    def operand(self, name: str) -> OperandSpec:
        for operand in self.operands:
            if operand.name == name:
                return operand
        raise KeyError(name)


@dataclass(frozen=True)
class AuxOperand:
    name: str
    role: str
    selection: str


@dataclass(frozen=True)
class AuxInstruction:
    """A harness instruction: parsed, printed and encoded, never executed."""

    name: str
    opcode: int
    operands: tuple[AuxOperand, ...]
    source: SourceRef


@dataclass(frozen=True)
class DeclarationSpec:
    name: str
    register: str | None
    declares: str | None
    numbers: tuple[str, ...]
    flags: tuple[str, ...]
    return_type: bool
    global_flags: tuple[str, ...]
    source: SourceRef


@dataclass(frozen=True)
class Declarations:
    declarations: Mapping[str, DeclarationSpec]
    return_types: tuple[str, ...]
    rules: tuple[LegalityRule, ...]
    program_rules: tuple[LegalityRule, ...]


@dataclass(frozen=True)
class Spec:
    """Everything in spec/, typed and cross-checked."""

    root: str
    model: Model
    declarations: Declarations
    auxiliary: Mapping[str, AuxInstruction]
    instructions: Mapping[str, InstructionSpec]

    @property
    def version(self) -> str:
        return self.model.spec_version

    def instruction(self, name: str) -> InstructionSpec:
        try:
            return self.instructions[name]
        except KeyError:
            raise SpecError(f"unknown instruction {name!r}; expected one of "
                            f"{', '.join(sorted(self.instructions))}") from None

    def legality_rules(self) -> Iterator[LegalityRule]:
        """Every legality rule of the spec, instruction rules first."""
        for instruction in self.instructions.values():
            yield from instruction.rules
        yield from self.declarations.rules
        yield from self.declarations.program_rules

    def all_clauses(self) -> Iterator[Clause]:
        for instruction in self.instructions.values():
            yield from instruction.clauses


# --------------------------------------------------------------------------------------------
# Loading


def default_root() -> Path:
    """The spec/ folder shipped with the package."""
    return Path(str(resources.files("sm5.spec")))


@cache
def load_default() -> Spec:
    """The built-in spec, loaded once per process."""
    return load_spec(default_root())


def load_spec(root: Path) -> Spec:
    """Load, validate and cross-check every file under ``root``."""
    model_doc = _load(root / "model.yaml", "model")
    model = _build_model(model_doc)
    decl_doc = _load(root / "declarations.yaml", "declarations")
    aux_doc = _load(root / "auxiliary.yaml", "auxiliary")
    instructions: dict[str, InstructionSpec] = {}
    paths = sorted((root / "instructions").glob("*.yaml"))
    if not paths:
        raise SpecError("no instruction files", where=str(root / "instructions"))
    for path in paths:
        doc = _load(path, "instruction")
        instruction = _build_instruction(doc, path, model)
        if instruction.name != path.stem:
            raise SpecError(f"field name: {instruction.name!r} differs from the file name "
                            f"{path.stem!r}", where=str(path))
        instructions[instruction.name] = instruction
    declarations = _build_declarations(decl_doc, root / "declarations.yaml", model)
    auxiliary = {
        a["name"]: AuxInstruction(
            a["name"], a["opcode"],
            tuple(AuxOperand(o["name"], o["role"], o["selection"]) for o in a["operands"]),
            _src(a["source"]))
        for a in aux_doc["instructions"]}
    spec = Spec(str(root), model, declarations, auxiliary, instructions)
    _cross_check(spec)
    return spec


def _load(path: Path, schema_name: str) -> Any:
    if not path.is_file():
        raise SpecError("missing spec file", where=str(path))
    document = load_yaml(path)
    validate(document, schema_name, str(path))
    return document


def _src(doc: Mapping[str, str]) -> SourceRef:
    return SourceRef(doc["ref"], doc["section"])


def _build_model(doc: Mapping[str, Any]) -> Model:
    return Model(
        spec_version=doc["spec_version"],
        sources={k: SourceDoc(k, v["title"], v["kind"], v.get("file"))
                 for k, v in doc["sources"].items()},
        stages=tuple(Stage(s["name"], s["prefix"]) for s in doc["stages"]),
        shader_models=tuple(ShaderModel(m["model"], m["name"], tuple(m["stages"]))
                            for m in doc["shader_models"]),
        runtimes=tuple(Runtime(r["name"], tuple(r["uav_stages"]), r["uav_slots"], _src(r["source"]))
                       for r in doc["runtimes"]),
        register_files=tuple(
            RegisterFile(f["name"], f["title"], f["components"], tuple(f["stages"]))
            for f in doc["register_files"]),
        resource_kinds=tuple(ResourceKind(k["file"], k["kind"], k["declaration"])
                             for k in doc["resource_kinds"]),
        typed_formats={f["name"]: f["return_type"] for f in doc["typed_formats"]},
        invocation_states=tuple(s["name"] for s in doc["invocation_states"]),
        invocation_stages={s["name"]: tuple(s["stages"]) for s in doc["invocation_states"]},
        limits={k: v for k, v in doc["limits"].items() if k != "source"},
        features={f["name"]: f["global_flag"] for f in doc["features"]},
    )


def _rule(text: str, where: str, known: frozenset[str] | None) -> Rule:
    try:
        return parse_rule(text, where=where, known=known)
    except RuleError as exc:
        raise SpecError(exc.message, where=exc.where) from None


def instance_features(operands: tuple[OperandSpec, ...]) -> frozenset[str]:
    """The variables a legality rule of an instruction may read."""
    names = {"target", "stage", "model", "runtime", "sat", "doubles"}
    for op in operands:
        for suffix in ("file", "index", "mask", "swizzle", "select", "neg", "abs", "kind", "type",
                       "format"):
            names.add(f"{op.name}_{suffix}")
    return frozenset(names)


def _build_instruction(doc: Mapping[str, Any], path: Path, model: Model) -> InstructionSpec:
    name = doc["name"]
    where = str(path)
    operands = tuple(
        OperandSpec(
            name=o["name"], role=o["role"], meaning=o["meaning"], files=tuple(o["files"]),
            kinds=tuple(o.get("kinds", ())), selection=o["selection"],
            masks=tuple(o.get("masks", ())), swizzles=tuple(o.get("swizzles", ())),
            modifiers=tuple(o["modifiers"]), source=_src(o["source"]))
        for o in doc["operands"])
    for op in operands:
        unknown = sorted(set(op.files) - set(model.file_names))
        if unknown:
            raise SpecError(f"operand {op.name}: unknown register file(s) {', '.join(unknown)}",
                            where=where)
    avail_doc = doc["availability"]
    availability = Availability(
        runtimes=tuple(RuntimeStages(r["runtime"], tuple(r["stages"]), _src(r["source"]),
                                     r.get("erratum")) for r in avail_doc["runtimes"]),
        models=tuple(ModelSupport(m["model"], m["supported"], _src(m["source"]))
                     for m in avail_doc["models"]),
        targets=tuple(TargetOverride(t["target"], t["supported"], _src(t["source"]),
                                     t.get("erratum")) for t in avail_doc["targets"]),
    )
    features = instance_features(operands)
    explicit = tuple(
        LegalityRule(r["id"], r["text"], _src(r["source"]), "expr",
                     reject_if=_rule(r["reject_if"], f"{where}: rule {r['id']}", features))
        for r in doc.get("rules", ()))
    generated = _generated_rules(name, doc, operands, availability, model)
    semantics = _build_semantics(doc["semantics"], where)
    errata = tuple(Erratum(e["id"], tuple(e["sources"]), e["defect"], e["resolution"])
                   for e in doc.get("errata", ()))
    return InstructionSpec(
        name=name, opcode=doc["opcode"], family=doc["family"], summary=doc["summary"].strip(),
        syntax=doc["syntax"], source=_src(doc["source"]), saturate=doc["saturate"],
        operands=operands, availability=availability, rules=generated + explicit,
        semantics=semantics, errata=errata, path=where)


def _generated_rules(name: str, doc: Mapping[str, Any], operands: tuple[OperandSpec, ...],
                     availability: Availability, model: Model) -> tuple[LegalityRule, ...]:
    """Legality rules that follow from the operand and availability tables.

    A rule is generated only where the table can be broken, so every rule has an instance that
    breaks it (the golden set holds a must-reject vector for each).
    """
    rules: list[LegalityRule] = []
    all_stages = tuple(s.name for s in model.stages)
    src = _src(doc["source"])
    for op in operands:
        rid = f"{name}.operand.{op.name}"
        rules.append(LegalityRule(f"{rid}.file", f"{op.name} is one of: {', '.join(op.files)}.",
                                  op.source, "file", operand=op.name))
        file_stages = {f.name: f.stages for f in model.register_files}
        restricted = [f for f in op.files if set(all_stages) - set(file_stages[f])]
        if restricted:
            rules.append(LegalityRule(
                f"{rid}.stage",
                f"the register file of {op.name} exists in the stage ("
                + "; ".join(f"{f}: {', '.join(file_stages[f])}" for f in restricted) + ").",
                op.source, "file_stage", operand=op.name))
        possible_kinds = {k.kind for k in model.resource_kinds if k.file in op.files}
        if op.kinds and possible_kinds - set(op.kinds):
            rules.append(LegalityRule(f"{rid}.kind",
                                      f"{op.name} is declared {' or '.join(op.kinds)}.",
                                      op.source, "kind", operand=op.name))
        if op.masks:
            rules.append(LegalityRule(f"{rid}.mask",
                                      f"the write mask of {op.name} is one of: "
                                      + ", ".join("." + m for m in op.masks) + ".",
                                      op.source, "mask", operand=op.name))
        if op.swizzles:
            rules.append(LegalityRule(f"{rid}.swizzle",
                                      f"the swizzle of {op.name} is one of: "
                                      + ", ".join("." + s for s in op.swizzles) + ".",
                                      op.source, "swizzle", operand=op.name))
        if op.role == "src" and set(ALL_MODIFIERS) - set(op.modifiers):
            allowed = ", ".join(op.modifiers) or "none"
            rules.append(LegalityRule(f"{rid}.modifier",
                                      f"source modifiers allowed on {op.name}: {allowed}.",
                                      op.source, "modifier", operand=op.name))
    if not doc["saturate"]:
        rules.append(LegalityRule(f"{name}.legal.saturate", f"{name} takes no _sat.", src, "sat"))
    if any(availability.target_supported(t) is False for t in model.targets):
        rules.append(LegalityRule(f"{name}.availability.target",
                                  "the target's shader model supports the instruction.",
                                  availability.models[0].source, "target"))
    if any(set(all_stages) - set(row.stages) for row in availability.runtimes):
        rules.append(LegalityRule(f"{name}.availability.stage",
                                  "the stage runs the instruction on this runtime.",
                                  availability.runtimes[0].source, "stage"))
    return tuple(rules)


def _build_semantics(doc: Mapping[str, Any], where: str) -> Semantics:
    inputs = tuple(Input(i["name"], i["type"], i["text"], i.get("min"), i.get("max"),
                         tuple(i.get("values", ()))) for i in doc["inputs"])
    known = {i.name for i in inputs}
    derived: list[Derived] = []
    for d in doc.get("derived", ()):
        derived.append(Derived(d["name"], _rule(d["expr"], f"{where}: derived {d['name']}",
                                                frozenset(known)), d["text"]))
        known.add(d["name"])
    names = frozenset(known)
    groups: list[Group] = []
    for g in doc["groups"]:
        clauses = tuple(
            Clause(c["id"], g["id"], _rule(c["when"], f"{where}: clause {c['id']}", names),
                   tuple(c["outcomes"]), c["text"], _src(c["source"]), c.get("erratum"))
            for c in g["clauses"])
        groups.append(Group(g["id"], _rule(g["scope"], f"{where}: group {g['id']}", names),
                            tuple(g.get("requires", ())), g["text"], clauses))
    return Semantics(
        inputs=inputs, derived=tuple(derived),
        assume=_rule(doc["assume"], f"{where}: assume", names) if "assume" in doc else None,
        address=_rule(doc["address"], f"{where}: address", names) if "address" in doc else None,
        address_source=_src(doc["address_source"]) if "address_source" in doc else None,
        groups=tuple(groups), lanes=doc.get("lanes"))


def _build_declarations(doc: Mapping[str, Any], path: Path, model: Model) -> Declarations:
    where = str(path)
    known = frozenset(v["name"] for v in doc["variables"])
    decls = {
        d["name"]: DeclarationSpec(
            d["name"], d.get("register"), d.get("declares"), tuple(d.get("numbers", ())),
            tuple(d.get("flags", ())), d.get("return_type", False),
            tuple(d.get("global_flags", ())), _src(d["source"]))
        for d in doc["declarations"]}
    rules = []
    for r in doc["rules"]:
        for applied in r["applies"]:
            if applied not in decls:
                raise SpecError(f"rule {r['id']}: applies to unknown declaration {applied!r}",
                                where=where)
        rules.append(LegalityRule(r["id"], r["text"], _src(r["source"]), "declaration",
                                  reject_if=_rule(r["reject_if"], f"{where}: rule {r['id']}",
                                                  known),
                                  applies=tuple(r["applies"])))
    program_rules = tuple(LegalityRule(r["id"], r["text"], _src(r["source"]), "program")
                          for r in doc["program_rules"])
    return Declarations(decls, tuple(doc["return_types"]), tuple(rules), program_rules)


def _cross_check(spec: Spec) -> None:
    """References between files resolve; ids are unique; every group is well formed."""
    sources = spec.model.sources
    seen: dict[str, str] = {}

    def unique(identifier: str, where: str) -> None:
        if identifier in seen:
            raise SpecError(f"id {identifier!r} is defined twice (also in {seen[identifier]})",
                            where=where)
        seen[identifier] = where

    def located(lookup: Callable[[str], object], name: str, where: str) -> None:
        try:
            lookup(name)
        except SpecError as exc:
            raise SpecError(f"availability: {exc.message}", where=where) from None

    def known_source(ref: SourceRef, where: str) -> None:
        if ref.ref not in sources:
            raise SpecError(f"source {ref.ref!r} is not listed in model.yaml sources", where=where)

    for ins in spec.instructions.values():
        errata = {e.id for e in ins.errata}
        for e in ins.errata:
            unique(e.id, ins.path)
            for s in e.sources:
                if s not in sources:
                    raise SpecError(f"erratum {e.id}: unknown source {s!r}", where=ins.path)
        for rule in ins.rules:
            unique(rule.id, ins.path)
            known_source(rule.source, ins.path)
        clause_ids = {c.id for c in ins.clauses}
        for clause in ins.clauses:
            unique(clause.id, ins.path)
            known_source(clause.source, ins.path)
            if not clause.id.startswith(ins.name + "."):
                raise SpecError(f"clause id {clause.id!r} does not start with {ins.name}.",
                                where=ins.path)
            if clause.erratum and clause.erratum not in errata:
                raise SpecError(f"clause {clause.id}: unknown erratum {clause.erratum!r}",
                                where=ins.path)
        for group in ins.semantics.groups:
            for required in group.requires:
                if required not in clause_ids:
                    raise SpecError(f"group {group.id}: requires unknown clause {required!r}",
                                    where=ins.path)
        for row in ins.availability.targets:
            if row.erratum and row.erratum not in errata:
                raise SpecError(f"availability {row.target}: unknown erratum {row.erratum!r}",
                                where=ins.path)
            located(spec.model.target, row.target, ins.path)
        for rt in ins.availability.runtimes:
            located(spec.model.runtime, rt.runtime, ins.path)
            if rt.erratum and rt.erratum not in errata:
                raise SpecError(f"availability {rt.runtime}: unknown erratum {rt.erratum!r}",
                                where=ins.path)
    for rule in spec.declarations.rules + spec.declarations.program_rules:
        unique(rule.id, "declarations.yaml")
