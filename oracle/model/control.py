"""Flow control as data: ``spec/control.yaml`` (constructs, effects, the condition test, the
variables of control clauses, limits, structure rules) and one ``spec/control/<name>.yaml`` per
flow-control instruction, loaded into frozen values and cross-checked.

An instruction here names an *effect*; the interpreter implements the effects
(``sm5.oracle.execution.control``) and the structure pass reads the constructs
(``sm5.oracle.legality.structure``). A clause's ``when`` is a rule-language condition over the
variables the interpreter sets for each executed control instruction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from sm5.oracle.errors import RuleError, SpecError
from sm5.oracle.files.yamlio import load_yaml, validate
from sm5.oracle.machine.program import LABEL_FILE
from sm5.oracle.model.sources import Erratum, SourceRef
from sm5.oracle.rulelang.rules import Rule, parse_rule


@dataclass(frozen=True)
class Construct:
    """A kind of block: the effects that open and close it, and those it holds at its level."""

    name: str
    open: str
    close: str
    middle: str | None
    middle_at_most: int | None
    entries: str | None
    source: SourceRef


@dataclass(frozen=True)
class Effect:
    name: str
    text: str
    #: Every situation the effect can produce, over the clause variables.
    reach: Rule
    jumps_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class ControlVariable:
    name: str
    type: str
    text: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class StructureRule:
    """A structure rule: its id, text and source; the structure pass reports it by id."""

    id: str
    text: str
    source: SourceRef


@dataclass(frozen=True)
class ControlOperand:
    name: str
    role: str  # condition, label, literal
    files: tuple[str, ...]
    meaning: str
    source: SourceRef


@dataclass(frozen=True)
class ControlClause:
    id: str
    when: Rule
    text: str
    source: SourceRef


@dataclass(frozen=True)
class ControlInstruction:
    """A flow-control instruction: its encoding, effect, operands, stages and clauses."""

    name: str
    opcode: int
    effect: str
    test: bool
    summary: str
    syntax: str
    source: SourceRef
    stages: tuple[str, ...]
    stages_source: SourceRef
    operands: tuple[ControlOperand, ...]
    clauses: tuple[ControlClause, ...]
    errata: tuple[str, ...]
    path: str

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The suffix flags it takes: the test forms, or none."""
        return TEST_FLAGS if self.test else ()

    def operand_position(self, role: str) -> int | None:
        for k, operand in enumerate(self.operands):
            if operand.role == role:
                return k
        return None


#: The effects the interpreter (sm5.oracle.execution.control) and the structure pass implement;
#: spec/control.yaml gives each its meaning, and the loader holds the two lists equal.
BRANCH, OTHER_ARM, BRANCH_END = "branch", "other_arm", "branch_end"
LOOP_START, LOOP_END = "loop_start", "loop_end"
LEAVE, NEXT_ITERATION = "leave", "next_iteration"
SELECT, ENTRY, SELECT_END = "select", "entry", "select_end"
RETURN, ENTER_SUBROUTINE, SUBROUTINE = "return", "enter_subroutine", "subroutine"
DEMOTE, NOTHING = "demote", "none"
EFFECTS = (BRANCH, OTHER_ARM, BRANCH_END, LOOP_START, LOOP_END, LEAVE, NEXT_ITERATION, SELECT,
           ENTRY, SELECT_END, RETURN, ENTER_SUBROUTINE, SUBROUTINE, DEMOTE, NOTHING)

#: The suffixes of a tested instruction: ``_z`` (acts when all 32 bits are zero) and ``_nz``.
TEST_FLAGS = ("z", "nz")
#: The flag that sets the opcode token's test-boolean bit (D3D10_SB_INSTRUCTION_TEST_NONZERO).
NONZERO_FLAG = "nz"


@dataclass(frozen=True)
class Limits:
    nesting: int
    call_depth: int
    steps: int
    #: The outcomes of a program past the nesting limit and past the step budget.
    nesting_outcome: str
    steps_outcome: str


@dataclass(frozen=True)
class ControlModel:
    """``spec/control.yaml`` and the flow-control instructions."""

    constructs: tuple[Construct, ...]
    effects: Mapping[str, Effect]
    test: Rule
    test_source: SourceRef
    variables: tuple[ControlVariable, ...]
    limits: Limits
    fallthrough_code_rejected_from: int
    demote_to: str
    rules: tuple[StructureRule, ...]
    errata: tuple[Erratum, ...]
    instructions: Mapping[str, ControlInstruction]

    @cached_property
    def construct_opened_by(self) -> Mapping[str, Construct]:
        return {c.open: c for c in self.constructs}

    @cached_property
    def construct_closed_by(self) -> Mapping[str, Construct]:
        return {c.close: c for c in self.constructs}

    @cached_property
    def construct_continued_by(self) -> Mapping[str, Construct]:
        """The construct a middle or entry effect belongs to."""
        out: dict[str, Construct] = {}
        for c in self.constructs:
            for effect in (c.middle, c.entries):
                if effect is not None:
                    out[effect] = c
        return out

    @cached_property
    def loops(self) -> frozenset[str]:
        """The constructs a next_iteration goes back to the start of."""
        return frozenset(self.effects[NEXT_ITERATION].jumps_to)

    @cached_property
    def selects(self) -> frozenset[str]:
        """The constructs with entry labels."""
        return frozenset(c.name for c in self.constructs if c.entries is not None)

    def effect_of(self, name: str) -> str | None:
        """The effect of a flow-control instruction, None for any other instruction."""
        ins = self.instructions.get(name)
        return None if ins is None else ins.effect


#: The Python types of the clause variables' declared types.
_VARIABLE_TYPES = {"uword": "uword", "bool": "bool", "str": "str", "int": "int"}


def _src(doc: Mapping[str, str]) -> SourceRef:
    return SourceRef(doc["ref"], doc["section"])


def load_control(root: Path, sources: frozenset[str]) -> ControlModel:
    """``root/control.yaml`` and ``root/control/*.yaml``, validated and cross-checked."""
    path = root / "control.yaml"
    if not path.is_file():
        raise SpecError("missing spec file", where=str(path))
    doc = load_yaml(path)
    validate(doc, "control", str(path))
    where = str(path)
    constructs = tuple(Construct(c["name"], c["open"], c["close"], c.get("middle"),
                                 c.get("middle_at_most"), c.get("entries"), _src(c["source"]))
                       for c in doc["constructs"])
    variables = tuple(ControlVariable(v["name"], v["type"], v["text"], tuple(v.get("values", ())))
                      for v in doc["variables"])
    known = frozenset(v.name for v in variables)
    types = {v.name: _VARIABLE_TYPES[v.type] for v in variables}
    constants = {"call_depth": doc["limits"]["call_depth"]}
    effects = {e["name"]: Effect(e["name"], e["text"],
                                 _condition(e["reach"], f"{where}: effect {e['name']}", known,
                                            types, constants),
                                 tuple(e.get("jumps_to", ())))
               for e in doc["effects"]}
    if tuple(effects) != EFFECTS:
        raise SpecError(f"effects: expected {', '.join(EFFECTS)} in this order (the effects "
                        f"the interpreter implements), got {', '.join(effects)}", where=where)
    names = {c.name for c in constructs}
    for c in constructs:
        for effect in (c.open, c.close, c.middle, c.entries):
            if effect is not None and effect not in effects:
                raise SpecError(f"construct {c.name}: unknown effect {effect!r}", where=where)
    for e in effects.values():
        for target in e.jumps_to:
            if target not in names:
                raise SpecError(f"effect {e.name}: unknown construct {target!r} in jumps_to",
                                where=where)
    test = _condition(doc["test"], f"{where}: test", known, types)
    limits_doc = doc["limits"]
    limits = Limits(limits_doc["nesting"], limits_doc["call_depth"], limits_doc["steps"],
                    limits_doc["nesting_outcome"], limits_doc["steps_outcome"])
    rules = tuple(StructureRule(r["id"], r["text"], _src(r["source"])) for r in doc["rules"])
    errata = tuple(Erratum(e["id"], tuple(e["sources"]), e["defect"], e["resolution"])
                   for e in doc["errata"])
    for erratum in errata:
        for s in erratum.sources:
            if s not in sources:
                raise SpecError(f"erratum {erratum.id}: unknown source {s!r}", where=where)
    for ref in [c.source for c in constructs] + [r.source for r in rules] + [_src(
            doc["test_source"]), _src(limits_doc["source"])]:
        if ref.ref not in sources:
            raise SpecError(f"source {ref.ref!r} is not listed in model.yaml sources",
                            where=where)
    instructions: dict[str, ControlInstruction] = {}
    folder = root / "control"
    for file in sorted(folder.glob("*.yaml")):
        ins = _instruction(file, effects, known, types, sources, {e.id for e in errata})
        instructions[ins.name] = ins
    if not instructions:
        raise SpecError("no flow-control instruction files", where=str(folder))
    return ControlModel(constructs, effects, test, _src(doc["test_source"]), variables, limits,
                        doc["fallthrough_code_rejected_from"], doc["demote_to"], rules, errata,
                        instructions)


def _condition(text: str, where: str, known: frozenset[str], types: Mapping[str, str],
               constants: Mapping[str, int] | None = None) -> Rule:
    try:
        rule = parse_rule(text, where=where, known=known, types=types, constants=constants)
    except RuleError as exc:
        raise SpecError(exc.message, where=where) from None
    if rule.type not in ("bool", "any"):
        raise SpecError(f"{text!r} has type {rule.type}, not bool: not a condition", where=where)
    return rule


def _instruction(path: Path, effects: Mapping[str, Effect], known: frozenset[str],
                 types: Mapping[str, str], sources: frozenset[str], errata: set[str]
                 ) -> ControlInstruction:
    doc: Any = load_yaml(path)
    validate(doc, "control_instruction", str(path))
    where = str(path)
    name = doc["name"]
    if name != path.stem:
        raise SpecError(f"field name: {name!r} differs from the file name {path.stem!r}",
                        where=where)
    if doc["effect"] not in effects:
        raise SpecError(f"field effect: {doc['effect']!r} is not one of "
                        f"{', '.join(effects)} (spec/control.yaml)", where=where)
    operands = tuple(ControlOperand(o["name"], o["role"], tuple(o["files"]), o["meaning"],
                                    _src(o["source"])) for o in doc["operands"])
    for operand in operands:
        if (operand.role == "label") != (operand.files == (LABEL_FILE,)):
            raise SpecError(f"operand {operand.name}: a label operand, and only it, takes the "
                            f"file {LABEL_FILE!r}", where=where)
    clauses = []
    seen: set[str] = set()
    for c in doc["clauses"]:
        if not c["id"].startswith(name + ".") or c["id"] in seen:
            raise SpecError(f"clause id {c['id']!r}: expected a new id starting with {name}.",
                            where=where)
        seen.add(c["id"])
        clauses.append(ControlClause(c["id"], _condition(c["when"], f"{where}: {c['id']}",
                                                         known, types), c["text"],
                                     _src(c["source"])))
    refs = [_src(doc["source"]), _src(doc.get("stages_source", doc["source"]))]
    refs += [o.source for o in operands] + [c.source for c in clauses]
    for ref in refs:
        if ref.ref not in sources:
            raise SpecError(f"source {ref.ref!r} is not listed in model.yaml sources",
                            where=where)
    for erratum in doc.get("errata", ()):
        if erratum not in errata:
            raise SpecError(f"unknown erratum {erratum!r} (spec/control.yaml errata)",
                            where=where)
    if doc.get("test", False) and not any(o.role == "condition" for o in operands):
        raise SpecError("a tested instruction needs a condition operand", where=where)
    return ControlInstruction(name, doc["opcode"], doc["effect"], doc.get("test", False),
                              doc["summary"], doc["syntax"], _src(doc["source"]),
                              tuple(doc["stages"]),
                              _src(doc.get("stages_source", doc["source"])), operands,
                              tuple(clauses), tuple(doc.get("errata", ())), where)
