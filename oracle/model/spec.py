"""The typed, validated model of spec/: frozen dataclasses built from the YAML files.

Loading validates every file against its JSON Schema, parses every rule-language expression
(rejecting anything outside the whitelist) and cross-checks references (sources, errata, clause
ids). Legality rules that follow from the operand tables are generated here, so each fact is
written once, in the YAML.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from sm5.oracle.errors import RuleError, SpecError
from sm5.oracle.files.yamlio import load_yaml, validate
from sm5.oracle.machine.forms import check_forms
from sm5.oracle.model.control import ControlModel, load_control
from sm5.oracle.model.expand import apply_template, expand_memory, prefix_ids
from sm5.oracle.model.siblings import Sibling, build_siblings
from sm5.oracle.model.sources import Erratum as Erratum
from sm5.oracle.model.sources import SourceRef as SourceRef
from sm5.oracle.rulelang.helpers import WORD_TYPES
from sm5.oracle.rulelang.rules import Rule, parse_rule

ALL_MODIFIERS = ("neg", "abs")


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
    shared: bool = False
    #: The null register: a destination that discards its result.
    discards: bool = False
    #: Written with a register number (``r3``, ``cb3``); an index-less input is not.
    numbered: bool = True
    #: How the element an operand names in brackets is counted: ``declared`` (x#),
    #: ``bound`` (cb#: the buffer the state binds), ``listed`` (the icb's values); None: the
    #: file has no elements.
    elements: str | None = None
    #: What an element index past the end gives: ``zero`` or an outcome of the program.
    out_of_range: str | None = None
    #: The limit (spec/model.yaml ``limits``) that bounds the element count.
    max_elements: str | None = None
    #: Operand role -> file: a table listing that file for that role also takes this one.
    stands_for: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceKind:
    file: str
    kind: str
    declaration: str


@dataclass(frozen=True)
class AcceptanceForm:
    """A form a constraining clause names (``accept:``): the lane widths it fits (32, 64),
    whether the clause lists values (``accept_values``), its text, its JSON spelling and how a
    reader checks a value against it. The oracle's builder of it is
    ``sm5.oracle.machine.forms``'s."""

    name: str
    widths: tuple[int, ...]
    values: bool
    text: str
    json: str
    check: str


@dataclass(frozen=True)
class Outcome:
    """An outcome of the vocabulary: what it does (``effect``) to which part (``scope``)."""

    name: str
    effect: str
    scope: str
    text: str


@dataclass(frozen=True)
class FormatLayout:
    """A typed view format: 32-bit words per element and the four components' default bits."""

    components: int
    defaults: tuple[int, int, int, int]


@dataclass(frozen=True)
class Feature:
    """A legality variable: a global flag the program declares, or a runtime's stage list."""

    name: str
    global_flag: str | None
    runtime_stages: str | None
    title: str


@dataclass(frozen=True)
class ElementIndex:
    """The element an operand names (``index`` over ``base`` and ``offset``) and when it lies
    inside its file's ``count`` elements (``in_range``): rules over 32-bit words."""

    variables: Mapping[str, str]  # name -> type
    index: Rule
    in_range: Rule
    source: SourceRef

    def element(self, base: int, offset: int) -> int:
        value = self.index.evaluate({"base": base, "offset": offset})
        assert isinstance(value, int)
        return value

    def inside(self, index: int, count: int) -> bool:
        return bool(self.in_range.evaluate({"index": index, "count": count}))


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
    format_layouts: Mapping[str, FormatLayout]
    invocation_states: tuple[str, ...]
    invocation_stages: Mapping[str, tuple[str, ...]]
    limits: Mapping[str, int]
    features: Mapping[str, Feature]
    outcomes: tuple[Outcome, ...]
    acceptance: Mapping[str, AcceptanceForm]
    element_index: ElementIndex | None = None

    @cached_property
    def outcome_names(self) -> tuple[str, ...]:
        """Every outcome name, in vocabulary order."""
        return tuple(o.name for o in self.outcomes)

    @cached_property
    def outcomes_by_name(self) -> Mapping[str, Outcome]:
        return {o.name: o for o in self.outcomes}

    def outcomes_where(self, *, effect: str | None = None,
                       scopes: tuple[str, ...] | None = None) -> frozenset[str]:
        """The outcome names with that effect and/or in one of those scopes."""
        return frozenset(o.name for o in self.outcomes
                         if (effect is None or o.effect == effect)
                         and (scopes is None or o.scope in scopes))

    def outcome_with(self, *, effect: str, scopes: tuple[str, ...] | None = None) -> str:
        """The first outcome, in vocabulary order, with that effect (and in one of those
        scopes): the one a module means when it asks for "the exact outcome" or "the rejected
        outcome" without naming it."""
        for o in self.outcomes:
            if o.effect == effect and (scopes is None or o.scope in scopes):
                return o.name
        raise SpecError(f"the outcome vocabulary has no outcome with effect {effect!r}"
                        + (f" in scope {', '.join(scopes)}" if scopes else ""),
                        where="model.yaml: outcomes")

    @cached_property
    def plain_outcome(self) -> str:
        """The first exact outcome of the whole instruction: what a clause that changes
        nothing about the expected state names (``defined`` in today's vocabulary)."""
        return self.outcome_with(effect="exact", scopes=("instruction",))

    @cached_property
    def rejected_outcome(self) -> str:
        """The outcome of an illegal instance (a must-reject vector's only outcome)."""
        return self.outcome_with(effect="rejected")

    @cached_property
    def memory_outcomes(self) -> frozenset[str]:
        """The outcomes whose effect is on memory rather than on registers: the accessed
        memory left unchanged, the accessed resource or all shared memory undefined."""
        return self.outcomes_where(scopes=("memory", "resource", "shared_memory"))

    @cached_property
    def targets(self) -> tuple[Target, ...]:
        """Every (stage, model) pair the model allows, named like ``cs_5_0`` (derived once)."""
        prefix = {s.name: s.prefix for s in self.stages}
        return tuple(
            Target(f"{prefix[stage]}_{m.model // 10}_{m.model % 10}", stage, m.model)
            for m in self.shader_models for stage in m.stages)

    @cached_property
    def _targets_by_name(self) -> Mapping[str, Target]:
        return {t.name: t for t in self.targets}

    @cached_property
    def file_stages(self) -> Mapping[str, tuple[str, ...]]:
        """The stages each register file exists in, by file name."""
        return {f.name: f.stages for f in self.register_files}

    def target(self, name: str) -> Target:
        found = self._targets_by_name.get(name)
        if found is not None:
            return found
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

    @cached_property
    def shared_memory_files(self) -> frozenset[str]:
        """Register files of thread-group shared memory (g#)."""
        return frozenset(f.name for f in self.register_files if f.shared)

    @property
    def file_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.register_files)

    @cached_property
    def files_by_name(self) -> Mapping[str, RegisterFile]:
        return {f.name: f for f in self.register_files}

    @cached_property
    def element_files(self) -> frozenset[str]:
        """Register files whose operands name an element in brackets (x#, cb#, icb)."""
        return frozenset(f.name for f in self.register_files if f.elements is not None)

    def accepted_files(self, role: str, listed: tuple[str, ...]) -> frozenset[str]:
        """The files an operand of ``role`` takes when its table lists ``listed``: those, and
        every file that stands for one of them in that role (x# where r# is listed)."""
        return frozenset(listed) | {f.name for f in self.register_files
                                    if f.stands_for.get(role) in listed}


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
    #: The files the operand takes: ``files`` and every file that stands for one of them in
    #: its role (x# where r# is listed; spec/model.yaml ``stands_for``).
    accepted_files: frozenset[str] = frozenset()

    @cached_property
    def feature_names(self) -> tuple[tuple[str, ...], ...]:
        """The legality variables of this operand (:data:`OPERAND_FEATURES` order): under its
        name, and a memory operand's also under :data:`MEMORY_ALIAS`."""
        prefixes = (self.name, MEMORY_ALIAS) if self.role == "memory" else (self.name,)
        return tuple(tuple(f"{prefix}_{suffix}" for suffix in OPERAND_FEATURES)
                     for prefix in prefixes)


@dataclass(frozen=True)
class FlagSpec:
    """A suffix flag of a mnemonic (``_uglobal``): its name, the opcode-token field of
    spec/encoding.yaml that carries it, what it means and where it is specified. Legality rules
    read it as the boolean ``flag_<name>``."""

    name: str
    encoding: str
    text: str
    source: SourceRef


#: The prefix of a suffix flag's legality variable (``flag_uglobal``).
FLAG_FEATURE = "flag_"


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
    accept: str | None = None
    #: With ``accept: one_of``: the values besides the result the lane may hold (with
    #: ``f32_range``: the tolerance's bounds). Every value, whatever result it is for.
    accept_values: tuple[Rule, ...] = ()
    #: Input values where the clause fires, for the vector generator to start from instead of
    #: its bounded search over each input's edges (which cannot set several inputs' edges at
    #: once): one assignment per example, the first that fires in a context serving there.
    examples: tuple[tuple[tuple[str, int], ...], ...] = ()
    #: Where the values differ per result (``accept_values`` written as a mapping from each
    #: result's value name to its list): (value name, its values), in the results' order.
    accept_for: tuple[tuple[str, tuple[Rule, ...]], ...] = ()

    def values_for(self, result: str) -> tuple[Rule, ...]:
        """The accepted values besides ``result``'s own (the common list, or its own)."""
        if not self.accept_for:
            return self.accept_values
        return dict(self.accept_for).get(result, ())


@dataclass(frozen=True)
class Identity:
    """A fact the semantics must satisfy, stated independently of how its kernel computes it
    (a quotient times the divisor plus the remainder is the dividend): ``holds`` for
    every input where ``where`` (if any) holds. ``sm5 prove`` proves it (``identity/<id>``)."""

    id: str
    text: str
    holds: Rule
    where: Rule | None
    source: SourceRef | None


@dataclass(frozen=True)
class Group:
    id: str
    scope: Rule
    requires: tuple[str, ...]
    text: str
    clauses: tuple[Clause, ...]


@dataclass(frozen=True)
class Binding:
    """Where a semantic input comes from (the instruction file's ``from:``).

    ``kind`` is one of: ``operand`` (the selected or a given post-swizzle component, or
    ``component == -1`` for the component numbered like the current lane: with ``component``
    lanes the destination's mask position, so a source is read at the position it writes),
    ``lane`` (the 64-bit double of the current lane), ``modifier`` (the operand carries
    ``neg``/``abs``), ``sat``, ``resource`` (a field of the operand's resource),
    ``invocation``, ``memory`` (the word at the access's address), ``mask`` (the write mask's
    width), ``reach`` (how many words of a memory operand its swizzle reads for the masked
    components), ``constant``.
    """

    kind: str
    operand: str = ""
    component: int = 0
    field: str = ""
    mask: str = ""
    value: int = 0


LANE_COMPONENT = -1


@dataclass(frozen=True)
class Input:
    name: str
    type: str
    text: str
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()
    source: Binding = Binding("constant")


@dataclass(frozen=True)
class MemoryAccess:
    """The instruction's access on the shared memory definition (spec/shared/memory.yaml)."""

    operand: str
    mode: str  # read | write | rmw | rmw_return
    address: tuple[str, ...]
    returns: str | None
    value: str | None
    kernel: Rule | None
    #: How contending read-modify-writes of one word combine (``free``: every serial order
    #: leaves the same word; ``serial``: the order matters); proved by ``sm5 prove``
    #: (sm5.oracle.proofs.theorems.contention). ``None`` for an access without a kernel.
    contention: str | None = None


#: The lane types (``lanes.type``): what a lane is and which destination components it writes.
#: ``component``: each written component of the destinations' masks, numbered by its position
#: (x 0 .. w 3); a source is read at the same post-swizzle position. ``f64``: each written
#: double (.xy is lane 0, .zw lane 1). ``u32``: a 32-bit result per double, lane k being the
#: k-th component of the mask (a double comparison writes its first double's result to the
#: first masked component).
LANE_TYPES = ("component", "f64", "u32")


@dataclass(frozen=True)
class Lanes:
    """One evaluation per lane of the write masks of ``operands`` (the destinations), of the
    kind ``type`` names (:data:`LANE_TYPES`): a lane is the union over those destinations (a
    ``null`` destination has none)."""

    operands: tuple[str, ...]
    type: str
    text: str

    @property
    def operand(self) -> str:
        """The first destination the lanes range over."""
        return self.operands[0]


@dataclass(frozen=True)
class RegisterResult:
    """The register operand that receives the derived value ``value`` (per lane)."""

    operand: str
    value: str


#: ``write_order``: the results are written in the order listed (the last wins where two
#: destinations share a register component), or in an order the sources leave open (the
#: component accepts each result's value).
WRITE_ORDERS = ("any", "listed")


@dataclass(frozen=True)
class CounterUpdate:
    """The hidden counter of ``operand``'s view receives the derived value ``value``."""

    operand: str
    value: str


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
    lanes: Lanes | None
    memory: MemoryAccess | None = None
    #: The destinations receiving a derived value per lane, in the order listed.
    results: tuple[RegisterResult, ...] = ()
    counter: CounterUpdate | None = None
    #: See :data:`WRITE_ORDERS`.
    write_order: str = "any"
    identities: tuple[Identity, ...] = ()

    @property
    def result(self) -> RegisterResult | None:
        """The first result (the only one of a one-destination instruction), or None."""
        return self.results[0] if self.results else None

    def input(self, name: str) -> Input:
        for item in self.inputs:
            if item.name == name:
                return item
        raise KeyError(name)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return tuple(c for g in self.groups for c in g.clauses)


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
    #: Suffix flags in their canonical (written) order.
    flags: tuple[FlagSpec, ...] = ()
    #: The kernels an implementation could compute instead (sm5.oracle.model.siblings).
    siblings: tuple[Sibling, ...] = field(default=(), compare=False)

    @property
    def flag_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.flags)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return self.semantics.clauses

    def clause(self, clause_id: str) -> Clause:
        for clause in self.clauses:
            if clause.id == clause_id:
                return clause
        raise KeyError(clause_id)

    def operand(self, name: str) -> OperandSpec:
        return self.operands[self.operand_positions[name]]

    @cached_property
    def operand_positions(self) -> Mapping[str, int]:
        """Each operand's position in the instance, by name."""
        return {operand.name: k for k, operand in enumerate(self.operands)}


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
    #: Opcode-specific control fields of its opcode token (``breakc_nz``: test_boolean 1).
    controls: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class DeclarationSpec:
    name: str
    #: The register files it declares (``dcl_input``: each compute input); most declare one.
    registers: tuple[str, ...]
    declares: str | None
    numbers: tuple[str, ...]
    flags: tuple[str, ...]
    return_type: bool
    global_flags: tuple[str, ...]
    source: SourceRef
    #: Other spellings of a register file or an access pattern, and what they mean.
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: The register is written with its first number in brackets (``x0[4]``, ``cb0[4]``).
    sized: bool = False
    #: The access patterns it takes, one of which is written after the numbers.
    access: tuple[str, ...] = ()
    #: It lists 4-value elements in braces (the icb's data), kept as its numbers.
    listed: bool = False

    @property
    def register(self) -> str | None:
        """The register file of a declaration that declares one file (None otherwise)."""
        return self.registers[0] if len(self.registers) == 1 else None


@dataclass(frozen=True)
class Declarations:
    declarations: Mapping[str, DeclarationSpec]
    return_types: tuple[str, ...]
    rules: tuple[LegalityRule, ...]
    program_rules: tuple[LegalityRule, ...]
    #: Defects of the sources about program state, and the readings taken.
    errata: tuple[Erratum, ...] = ()


@dataclass(frozen=True)
class Spec:
    """Everything in spec/, typed and cross-checked."""

    root: str
    model: Model
    declarations: Declarations
    auxiliary: Mapping[str, AuxInstruction]
    instructions: Mapping[str, InstructionSpec]
    harness: Mapping[str, str]
    #: Flow control: constructs, effects and the flow-control instructions (spec/control*).
    control: ControlModel

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
        yield from self.control_rules

    @cached_property
    def control_rules(self) -> tuple[LegalityRule, ...]:
        """The flow-control instructions' rules (generated from their stage and operand tables:
        ``<name>.stage``, ``<name>.operand``), then the structure rules of spec/control.yaml."""
        out: list[LegalityRule] = []
        all_stages = {s.name for s in self.model.stages}
        for ins in self.control.instructions.values():
            if set(ins.stages) != all_stages:
                out.append(LegalityRule(
                    f"{ins.name}.stage", f"{ins.name} exists only in the "
                    f"{', '.join(ins.stages)} stage(s).",
                    ins.stages_source, "stage"))
            values = [o for o in ins.operands if o.role != "label"]  # a label is always l#
            if values:
                files = "; ".join(f"{o.name}: {', '.join(o.files)}" for o in values)
                out.append(LegalityRule(
                    f"{ins.name}.operand", f"Each operand of {ins.name} is of a file its table "
                    f"lists ({files}), holds one 32-bit value (one selected component or a "
                    "one-value immediate) and takes no modifier.",
                    ins.source, "operand"))
        out.extend(LegalityRule(r.id, r.text, r.source, "structure") for r in self.control.rules)
        return tuple(out)

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
    check_forms({name: form.widths for name, form in model.acceptance.items()},
                str(root / "model.yaml"))
    decl_doc = _load(root / "declarations.yaml", "declarations")
    aux_doc = _load(root / "auxiliary.yaml", "auxiliary")
    shared = _shared_definitions(root)
    kinds = tuple((k.file, k.kind) for k in model.resource_kinds)
    instructions: dict[str, InstructionSpec] = {}
    paths = sorted((root / "instructions").glob("*.yaml"))
    if not paths:
        raise SpecError("no instruction files", where=str(root / "instructions"))
    for path in paths:
        doc = _expanded(path, shared, kinds)
        instruction = _build_instruction(doc, path, model)
        instruction = replace(instruction, siblings=build_siblings(doc, path, model,
                                                                   _build_instruction))
        if instruction.name != path.stem:
            raise SpecError(f"field name: {instruction.name!r} differs from the file name "
                            f"{path.stem!r}", where=str(path))
        instructions[instruction.name] = instruction
    declarations = _build_declarations(decl_doc, root / "declarations.yaml", model)
    auxiliary = {
        a["name"]: AuxInstruction(
            a["name"], a["opcode"],
            tuple(AuxOperand(o["name"], o["role"], o["selection"]) for o in a["operands"]),
            _src(a["source"]), tuple(sorted(a.get("controls", {}).items())))
        for a in aux_doc["instructions"]}
    control = load_control(root, frozenset(model.sources))
    for outcome in (control.limits.nesting_outcome, control.limits.steps_outcome):
        if outcome not in model.outcomes_by_name:
            raise SpecError(f"limits: {outcome!r} is not an outcome of model.yaml",
                            where=str(root / "control.yaml"))
    if control.demote_to not in model.invocation_states:
        raise SpecError(f"demote_to: {control.demote_to!r} is not one of the invocation states "
                        f"{', '.join(model.invocation_states)}", where=str(root / "control.yaml"))
    clash = sorted(set(control.instructions) & (set(instructions) | set(auxiliary)))
    if clash:
        raise SpecError(f"{clash[0]} is both a flow-control instruction and another kind",
                        where=str(root / "control"))
    spec = Spec(str(root), model, declarations, auxiliary, instructions,
                dict(aux_doc["harness"]), control)
    _cross_check(spec)
    return spec


@dataclass(frozen=True)
class _Shared:
    memory: Mapping[str, Any]
    templates: Mapping[str, Any]


def _shared_definitions(root: Path) -> _Shared:
    memory = _load(root / "shared" / "memory.yaml", "memory")
    templates = {path.stem: load_yaml(path)
                 for path in sorted((root / "templates").glob("*.yaml"))}
    for name, template in templates.items():
        if not isinstance(template, dict):
            raise SpecError("a template is a mapping of instruction fields",
                            where=str(root / "templates" / f"{name}.yaml"))
    return _Shared(memory, templates)


def _expanded(path: Path, shared: _Shared, kinds: tuple[tuple[str, str], ...]) -> Any:
    raw = load_yaml(path)
    if not isinstance(raw, dict):
        raise SpecError("an instruction file is a mapping", where=str(path))
    doc = apply_template(raw, shared.templates, str(path))
    doc = prefix_ids(expand_memory(doc, shared.memory, kinds, str(path)))
    what = f"{path} (with template {raw['extends']})" if "extends" in raw else str(path)
    validate(doc, "instruction", what)
    return doc


def instruction_document(root: Path, path: Path) -> Any:
    """An instruction file as the schema sees it: its template and the shared definitions
    expanded, local ids prefixed with its name."""
    model = _build_model(_load(root / "model.yaml", "model"))
    return _expanded(path, _shared_definitions(root),
                     tuple((k.file, k.kind) for k in model.resource_kinds))


def _load(path: Path, schema_name: str) -> Any:
    if not path.is_file():
        raise SpecError("missing spec file", where=str(path))
    document = load_yaml(path)
    validate(document, schema_name, str(path))
    return document


def _src(doc: Mapping[str, str]) -> SourceRef:
    return SourceRef(doc["ref"], doc["section"])


def _build_model(doc: Mapping[str, Any]) -> Model:
    model = Model(
        spec_version=doc["spec_version"],
        sources={k: SourceDoc(k, v["title"], v["kind"], v.get("file"))
                 for k, v in doc["sources"].items()},
        stages=tuple(Stage(s["name"], s["prefix"]) for s in doc["stages"]),
        shader_models=tuple(ShaderModel(m["model"], m["name"], tuple(m["stages"]))
                            for m in doc["shader_models"]),
        runtimes=tuple(Runtime(r["name"], tuple(r["uav_stages"]), r["uav_slots"], _src(r["source"]))
                       for r in doc["runtimes"]),
        register_files=tuple(
            RegisterFile(f["name"], f["title"], f["components"], tuple(f["stages"]),
                         f.get("shared", False), f.get("discards", False),
                         f.get("numbered", len(f["name"]) == 1), f.get("elements"),
                         f.get("out_of_range"), f.get("max_elements"),
                         dict(f.get("stands_for", {})))
            for f in doc["register_files"]),
        resource_kinds=tuple(ResourceKind(k["file"], k["kind"], k["declaration"])
                             for k in doc["resource_kinds"]),
        typed_formats={f["name"]: f["return_type"] for f in doc["typed_formats"]},
        format_layouts={f["name"]: FormatLayout(f["components"], (
            f["defaults"][0], f["defaults"][1], f["defaults"][2], f["defaults"][3]))
            for f in doc["typed_formats"]},
        invocation_states=tuple(s["name"] for s in doc["invocation_states"]),
        invocation_stages={s["name"]: tuple(s["stages"]) for s in doc["invocation_states"]},
        limits={k: v for k, v in doc["limits"].items() if k != "source"},
        features={f["name"]: Feature(f["name"], f.get("global_flag"), f.get("runtime_stages"),
                                     f["title"]) for f in doc["features"]},
        outcomes=tuple(Outcome(o["name"], o["effect"], o["scope"], o["text"])
                       for o in doc["outcomes"]),
        acceptance={a["name"]: AcceptanceForm(a["name"], tuple(a["widths"]),
                                              bool(a.get("values", False)), a["text"],
                                              a["json"], a["check"])
                    for a in doc["acceptance"]},
        element_index=_element_index(doc["element_index"], "model.yaml"),
    )
    # The queries other modules make of the vocabulary answer now, or the model is refused.
    _ = model.plain_outcome, model.rejected_outcome
    return model


def _element_index(doc: Mapping[str, Any], where: str) -> ElementIndex:
    types = {v["name"]: v["type"] for v in doc["variables"]}
    known = frozenset(types)
    return ElementIndex(types, _rule(doc["index"], f"{where}: element_index.index", known,
                                     types=types),
                        _rule(doc["in_range"], f"{where}: element_index.in_range", known,
                              types=types), _src(doc["source"]))


def _rule(text: str, where: str, known: frozenset[str] | None,
          constants: Mapping[str, int] | None = None,
          types: Mapping[str, str] | None = None) -> Rule:
    try:
        return parse_rule(text, where=where, known=known, constants=constants, types=types)
    except RuleError as exc:
        raise SpecError(exc.message, where=exc.where) from None


#: The per-operand legality variables (``<operand>_<suffix>``).
OPERAND_FEATURES = ("file", "index", "mask", "swizzle", "select", "neg", "abs", "kind", "type",
                    "format", "counter")
#: The memory operand's variables under a role name, so shared rules need no operand name.
MEMORY_ALIAS = "memory"


def instance_features(operands: tuple[OperandSpec, ...], model: Model,
                      flags: tuple[FlagSpec, ...] = ()) -> frozenset[str]:
    """The variables a legality rule of an instruction may read."""
    names = {"target", "stage", "model", "runtime", "sat", *model.features}
    names.update(FLAG_FEATURE + f.name for f in flags)
    prefixes = [op.name for op in operands]
    if any(op.role == "memory" for op in operands):
        prefixes.append(MEMORY_ALIAS)
    for prefix in prefixes:
        for suffix in OPERAND_FEATURES:
            names.add(f"{prefix}_{suffix}")
    return frozenset(names)


def _build_instruction(doc: Mapping[str, Any], path: Path, model: Model) -> InstructionSpec:
    name = doc["name"]
    where = str(path)
    operands = tuple(
        OperandSpec(
            name=o["name"], role=o["role"], meaning=o["meaning"], files=tuple(o["files"]),
            kinds=tuple(o.get("kinds", ())), selection=o["selection"],
            masks=tuple(o.get("masks", ())), swizzles=tuple(o.get("swizzles", ())),
            modifiers=tuple(o["modifiers"]), source=_src(o["source"]),
            accepted_files=model.accepted_files(o["role"], tuple(o["files"])))
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
    flags = tuple(FlagSpec(f["name"], f["encoding"], f["text"], _src(f["source"]))
                  for f in doc.get("flags", ()))
    if len({f.name for f in flags}) != len(flags):
        raise SpecError("flags: a flag name is listed twice", where=where)
    if flags and doc["saturate"]:
        raise SpecError("flags: an instruction with suffix flags takes no _sat (the flag bits "
                        "share the opcode token's control field)", where=where)
    features = instance_features(operands, model, flags)
    explicit = tuple(
        LegalityRule(r["id"], r["text"], _src(r["source"]), "expr",
                     reject_if=_rule(r["reject_if"], f"{where}: rule {r['id']}", features,
                                     model.limits))
        for r in doc.get("rules", ()))
    generated = _generated_rules(name, doc, operands, availability, model)
    semantics = _build_semantics(doc["semantics"], where, model, operands)
    errata = tuple(Erratum(e["id"], tuple(e["sources"]), e["defect"], e["resolution"])
                   for e in doc.get("errata", ()))
    return InstructionSpec(
        name=name, opcode=doc["opcode"], family=doc["family"], summary=doc["summary"].strip(),
        syntax=doc["syntax"], source=_src(doc["source"]), saturate=doc["saturate"],
        operands=operands, availability=availability, rules=generated + explicit,
        semantics=semantics, errata=errata, path=where, flags=flags)


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


def _binding(doc: Mapping[str, Any], where: str, operands: Mapping[str, OperandSpec]) -> Binding:
    """The ``from:`` of an input (validated by the schema; operand names checked here)."""
    for key in ("operand", "resource", "memory", "mask", "reach"):
        if key in doc and doc[key] not in operands:
            raise SpecError(f"from: no operand named {doc[key]!r}; expected one of "
                            f"{', '.join(operands)}", where=where)
    if "lane" in doc:
        return Binding("lane", operand=doc["operand"])
    if "modifier" in doc:
        return Binding("modifier", operand=doc["operand"], field=doc["modifier"])
    if "operand" in doc:
        component = doc.get("component", 0)
        return Binding("operand", operand=doc["operand"],
                       component=LANE_COMPONENT if component == "lane" else int(component))
    if "instruction" in doc:
        return Binding("sat")
    if "resource" in doc:
        return Binding("resource", operand=doc["resource"], field=doc["field"])
    if "state" in doc:
        return Binding("invocation")
    if "memory" in doc:
        return Binding("memory", operand=doc["memory"])
    if "reach" in doc:
        return Binding("reach", operand=doc["reach"], mask=doc["mask"])
    if "mask" in doc:
        return Binding("mask", operand=doc["mask"])
    return Binding("constant", value=int(doc["constant"]))


@dataclass(frozen=True)
class _Names:
    """What a semantics' rules may name: its inputs and derived values, with their word types,
    and the model's limits."""

    where: str
    known: frozenset[str]
    limits: Mapping[str, int]
    types: Mapping[str, str]

    def rule(self, text: str, what: str) -> Rule:
        return _rule(text, f"{self.where}: {what}", self.known, self.limits, self.types)


def _build_semantics(doc: Mapping[str, Any], where: str, model: Model,
                     operand_specs: tuple[OperandSpec, ...]) -> Semantics:
    operands = {op.name: op for op in operand_specs}
    inputs = _inputs(doc, where, operands)
    derived, names = _derived(doc, where, model, inputs)
    groups = _groups(doc, names, model)
    memory = _memory(doc["memory"], names, operands) if "memory" in doc else None
    lanes = _lanes(doc["lanes"], where, operands) if "lanes" in doc else None
    _check_accept_widths(groups, lanes, model, where)
    _check_examples(groups, inputs, where)
    results = _results(doc, where, names.known, operands, lanes)
    _check_accept_for(groups, results, where)
    counter = None
    if "counter" in doc:
        counter = CounterUpdate(doc["counter"]["operand"], doc["counter"]["value"])
        if counter.value not in names.known:
            raise SpecError(f"semantics.counter: unknown value {counter.value!r}", where=where)
        if counter.operand not in operands:
            raise SpecError(f"semantics.counter: no operand named {counter.operand!r}",
                            where=where)
    return Semantics(
        inputs=inputs, derived=derived,
        assume=names.rule(doc["assume"], "assume") if "assume" in doc else None,
        address=names.rule(doc["address"], "address") if "address" in doc else None,
        address_source=_src(doc["address_source"]) if "address_source" in doc else None,
        groups=groups, lanes=lanes, memory=memory, results=results, counter=counter,
        write_order=doc.get("write_order", "any"), identities=_identities(doc, names))


def _identities(doc: Mapping[str, Any], names: _Names) -> tuple[Identity, ...]:
    out: list[Identity] = []
    for entry in doc.get("identities", ()):
        what = f"identity {entry['id']}"
        if any(i.id == entry["id"] for i in out):
            raise SpecError(f"semantics.identities: id {entry['id']!r} is listed twice",
                            where=names.where)
        holds = names.rule(entry["holds"], f"{what}: holds")
        where = names.rule(entry["where"], f"{what}: where") if "where" in entry else None
        for field_name, rule in (("holds", holds), ("where", where)):
            if rule is not None and rule.type not in ("bool", "any"):
                raise SpecError(f"semantics.identities: {entry['id']}: {field_name} is a "
                                f"{rule.type}, expected a condition", where=names.where)
        out.append(Identity(entry["id"], entry["text"], holds, where,
                            _src(entry["source"]) if "source" in entry else None))
    return tuple(out)


def _inputs(doc: Mapping[str, Any], where: str,
            operands: Mapping[str, OperandSpec]) -> tuple[Input, ...]:
    inputs = tuple(Input(i["name"], i["type"], i["text"], i.get("min"), i.get("max"),
                         tuple(i.get("values", ())),
                         _binding(i["from"], f"{where}: input {i['name']}", operands))
                   for i in doc["inputs"])
    names_seen: set[str] = set()
    for item in inputs:
        if item.name in names_seen:
            raise SpecError(f"semantics: input {item.name!r} is defined twice", where=where)
        names_seen.add(item.name)
    return inputs


def _derived(doc: Mapping[str, Any], where: str, model: Model,
             inputs: tuple[Input, ...]) -> tuple[tuple[Derived, ...], _Names]:
    """The derived values, each rule naming the inputs and the values before it; and the names
    every later rule may use."""
    known = {i.name for i in inputs}
    # The word-typed names (inputs, then derived values as their rules type them).
    types = {i.name: i.type for i in inputs if i.type in WORD_TYPES}
    derived: list[Derived] = []
    for d in doc.get("derived", ()):
        expr = _rule(d["expr"], f"{where}: derived {d['name']}", frozenset(known), model.limits,
                     types)
        derived.append(Derived(d["name"], expr, d["text"]))
        known.add(d["name"])
        if expr.type in WORD_TYPES:
            types[d["name"]] = expr.type
    return tuple(derived), _Names(where, frozenset(known), model.limits, types)


def _groups(doc: Mapping[str, Any], names: _Names, model: Model) -> tuple[Group, ...]:
    groups: list[Group] = []
    clause_ids = [c["id"] for g in doc["groups"] for c in g["clauses"]]
    for g in doc["groups"]:
        clauses = tuple(
            _clause(c, g["id"], names)
            for c in g["clauses"])
        for clause in clauses:
            _check_clause(clause, model, names.where)
        requires = tuple(cid for pattern in g.get("requires", ())
                         for cid in (fnmatch.filter(clause_ids, pattern) or [pattern]))
        groups.append(Group(g["id"], names.rule(g["scope"], f"group {g['id']}"),
                            requires, g["text"], clauses))
    return tuple(groups)


def _clause(c: Mapping[str, Any], group: str, names: _Names) -> Clause:
    values = c.get("accept_values", ())
    per_result = values if isinstance(values, Mapping) else {}
    accept_for = tuple((result, tuple(names.rule(v, f"clause {c['id']} accept_values.{result}")
                                      for v in listed))
                       for result, listed in per_result.items())
    flat = tuple(rule for _, rules in accept_for for rule in rules) if per_result else tuple(
        names.rule(v, f"clause {c['id']} accept_values") for v in values)
    return Clause(c["id"], group, names.rule(c["when"], f"clause {c['id']}"),
                  tuple(c["outcomes"]), c["text"], _src(c["source"]), c.get("erratum"),
                  c.get("accept"), flat,
                  tuple(tuple(sorted(e.items())) for e in c.get("examples", ())), accept_for)


def _check_clause(clause: Clause, model: Model, where: str) -> None:
    """A clause's outcomes and acceptance form are the model's."""
    unknown = sorted(set(clause.outcomes) - set(model.outcome_names))
    if unknown:
        raise SpecError(f"clause {clause.id}: unknown outcome(s) {', '.join(unknown)}; "
                        f"expected one of {', '.join(model.outcome_names)}", where=where)
    if clause.accept is not None and clause.accept not in model.acceptance:
        raise SpecError(f"clause {clause.id}: unknown acceptance form {clause.accept!r}",
                        where=where)
    takes_values = (clause.accept is not None
                    and model.acceptance[clause.accept].values)
    if takes_values != bool(clause.accept_values):
        listing = ", ".join(f.name for f in model.acceptance.values() if f.values)
        raise SpecError(f"clause {clause.id}: accept_values goes with a form that lists "
                        f"values ({listing}), and such a form needs at least one value",
                        where=where)


def _memory(m: Mapping[str, Any], names: _Names,
            operands: Mapping[str, OperandSpec]) -> MemoryAccess:
    where = names.where
    for key in ("returns", "value"):
        if m.get(key) is not None and m[key] not in operands:
            raise SpecError(f"semantics.memory.{key}: no operand named {m[key]!r}",
                            where=where)
    memory = MemoryAccess(
        m["operand"], m["mode"], tuple(m["address"]), m.get("returns"), m.get("value"),
        names.rule(m["kernel"], "kernel") if "kernel" in m else None, m.get("contention"))
    if memory.mode in ("rmw", "rmw_return") and memory.kernel is None:
        raise SpecError("semantics.memory: a read-modify-write needs a kernel (the new "
                        "memory word)", where=where)
    if (memory.kernel is None) != (memory.contention is None):
        raise SpecError("semantics.memory: a kernel and `contention` (free or serial: how "
                        "contending operations combine) go together", where=where)
    if memory.contention not in (None, "free", "serial"):
        raise SpecError(f"semantics.memory.contention: {memory.contention!r}, expected free "
                        "or serial", where=where)
    if memory.mode == "write" and memory.value is None:
        raise SpecError("semantics.memory: a write needs `value` (the source operand)",
                        where=where)
    return memory


def _lanes(lane_doc: Mapping[str, Any], where: str,
           operands: Mapping[str, OperandSpec]) -> Lanes:
    named = tuple(lane_doc["operands"]) if "operands" in lane_doc else (lane_doc["operand"],)
    lanes = Lanes(named, lane_doc["type"], lane_doc["text"])
    for name in lanes.operands:
        if name not in operands:
            raise SpecError(f"semantics.lanes: no operand named {name!r}", where=where)
    return lanes


def _check_examples(groups: tuple[Group, ...], inputs: tuple[Input, ...], where: str) -> None:
    """A clause's examples set integer inputs, each within its range (a signed word view
    written as its unsigned pattern)."""
    by_name = {i.name: i for i in inputs}
    for group in groups:
        for clause in group.clauses:
            for name, value in (pair for example in clause.examples for pair in example):
                spec = by_name.get(name)
                if spec is None or spec.type in ("bool", "enum"):
                    known = ", ".join(n for n, i in by_name.items()
                                      if i.type not in ("bool", "enum"))
                    raise SpecError(f"clause {clause.id}: example sets {name!r}, not an integer "
                                    f"input (expected one of {known})", where=where)
                width = 64 if spec.type == "u64" else 32
                low = 0 if spec.min is None else spec.min
                high = (1 << width) - 1 if spec.max is None else spec.max
                if not low <= value <= high:
                    raise SpecError(f"clause {clause.id}: example value {value} of {name} lies "
                                    f"outside {low} .. {high}", where=where)


def _check_accept_widths(groups: tuple[Group, ...], lanes: Lanes | None, model: Model,
                         where: str) -> None:
    """Every clause's acceptance form judges lanes of the semantics' width (no lanes: the one
    32-bit value every masked component receives)."""
    width = 64 if lanes is not None and lanes.type == "f64" else 32
    for group in groups:
        for clause in group.clauses:
            wrong = clause.accept is not None and (
                width is None or width not in model.acceptance[clause.accept].widths)
            if wrong:
                kind = f"{lanes.type} lanes" if lanes is not None else "32-bit value"
                fits = model.acceptance[str(clause.accept)].widths
                raise SpecError(f"clause {clause.id}: acceptance form {clause.accept} does not "
                                f"fit the semantics' {kind} (it judges lanes of "
                                f"{' or '.join(map(str, fits))} bits: spec/model.yaml)",
                                where=where)


def _results(doc: Mapping[str, Any], where: str, names: frozenset[str],
             operands: Mapping[str, OperandSpec],
             lanes: Lanes | None) -> tuple[RegisterResult, ...]:
    if "result" in doc and "results" in doc:
        raise SpecError("semantics: result and results are two spellings of one field; give "
                        "one", where=where)
    results = tuple(RegisterResult(r["operand"], r["value"])
                    for r in ([doc["result"]] if "result" in doc else doc.get("results", ())))
    for result in results:
        if result.value not in names:
            raise SpecError(f"semantics.result: unknown value {result.value!r}", where=where)
        if result.operand not in operands or operands[result.operand].role != "dst":
            raise SpecError(f"semantics.result: {result.operand!r} is not a destination "
                            "operand", where=where)
    if len({r.operand for r in results}) != len(results):
        raise SpecError("semantics.results: a destination is named twice", where=where)
    if len(results) > 1 and (lanes is None or not set(lanes.operands) <= {
            r.operand for r in results}):
        raise SpecError("semantics.results: several destinations need lanes over them "
                        "(lanes.operands: the results' destinations)", where=where)
    return results


def _check_accept_for(groups: tuple[Group, ...], results: tuple[RegisterResult, ...],
                      where: str) -> None:
    """accept_values written per result names every result's value, and no other name."""
    values = [r.value for r in results]
    for group in groups:
        for clause in group.clauses:
            named = [name for name, _ in clause.accept_for]
            if named and sorted(named) != sorted(values):
                raise SpecError(f"clause {clause.id}: accept_values per result names "
                                f"{', '.join(named)}; the results are {', '.join(values)}",
                                where=where)


def _build_declarations(doc: Mapping[str, Any], path: Path, model: Model) -> Declarations:
    where = str(path)
    known = frozenset(v["name"] for v in doc["variables"])
    decls = {
        d["name"]: DeclarationSpec(
            d["name"], _registers(d.get("register")), d.get("declares"),
            tuple(d.get("numbers", ())), tuple(d.get("flags", ())), d.get("return_type", False),
            tuple(d.get("global_flags", ())), _src(d["source"]), dict(d.get("aliases", {})),
            d.get("sized", False), tuple(d.get("access", ())), d.get("listed", False))
        for d in doc["declarations"]}
    rules = []
    for r in doc["rules"]:
        for applied in r["applies"]:
            if applied not in decls:
                raise SpecError(f"rule {r['id']}: applies to unknown declaration {applied!r}",
                                where=where)
        rules.append(LegalityRule(r["id"], r["text"], _src(r["source"]), "declaration",
                                  reject_if=_rule(r["reject_if"], f"{where}: rule {r['id']}",
                                                  known, model.limits),
                                  applies=tuple(r["applies"])))
    program_rules = tuple(LegalityRule(r["id"], r["text"], _src(r["source"]), "program")
                          for r in doc["program_rules"])
    errata = tuple(Erratum(e["id"], tuple(e["sources"]), e["defect"], e["resolution"])
                   for e in doc.get("errata", ()))
    return Declarations(decls, tuple(doc["return_types"]), tuple(rules), program_rules, errata)


def _registers(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


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
        for flag in ins.flags:
            known_source(flag.source, ins.path)
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
    for role, name in spec.harness.items():
        if (name not in spec.auxiliary and name not in spec.instructions
                and name not in spec.control.instructions):
            raise SpecError(f"harness.{role}: no instruction {name!r}", where="auxiliary.yaml")
