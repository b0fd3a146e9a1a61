"""The report's data: everything the page shows, gathered into frozen values.

``gather`` reads the spec, the vectors (through :mod:`sm5.reports.coverage`) and the optional proof,
conformance and mutant JSON files (through :mod:`sm5.reports.inputs`), decides each clause's status
and draws the matrices (:mod:`sm5.reports.grids`). The template only lays these values out; every
ordering is fixed here, so the same inputs always give the same page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sm5.oracle.model.spec import Clause, InstructionSpec, SourceRef, Spec
from sm5.reports.coverage import VectorFile, VectorIndex, scan
from sm5.reports.grids import (
    ILLEGAL_MARK,
    LEGAL_MARK,
    Cell,
    Grid,
    GridRow,
    instructions_of,
    legality_grid,
    mask_grids,
    outcome_grid,
    plural,
)
from sm5.reports.inputs import (
    ImplResults,
    Mutant,
    Theorem,
    merge_results,
    read_mutants,
    read_proofs,
    read_results,
    status_order,
)

#: Clause statuses, in the order the page lists them, with their labels.
STATUSES = (("proved", "proved"), ("tested", "tested"),
            ("undefined", "undefined by design"), ("uncovered", "uncovered"))
#: What each status chip says of a clause; a clause carries every chip that holds for it, and
#: each count of the page is the number of clauses carrying that chip.
STATUS_MEANINGS = {
    "proved": "a z3 theorem about the clause or its group is proved, and a vector lists it",
    "tested": "at least one vector lists the clause (every proved clause is tested too)",
    "undefined": "a vector lists it and its outcomes leave part of the state free (undefined or "
                 "constrained): vectors check only what it constrains",
    "uncovered": "no vector lists the clause (the reason is given)",
}
#: The dashboard's verdict categories: key, label, and the verdicts each gathers.
CATEGORIES = (("pass", "pass", ("pass",)),
              ("expected", "expected divergence", ("xfail",)),
              ("fail", "fail", ("fail", "crash", "timeout", "xpass")),
              ("unsupported", "unsupported", ("unsupported",)),
              ("notrun", "not applicable", ("not-applicable", "skip")))
CATEGORY_OF = {status: key for key, _, statuses in CATEGORIES for status in statuses}
#: Conformance statuses whose vectors are listed with their reasons.
LISTED_RESULTS = ("fail", "crash", "timeout", "xfail", "xpass")
SAMPLE_IDS = 4
CLAUSE_ISSUES = 8
IMPL_ISSUES = 60
MUTANT_IDS = 3


@dataclass(frozen=True)
class SourceView:
    key: str
    title: str
    section: str


@dataclass(frozen=True)
class SourceDocView:
    key: str
    title: str
    kind: str


@dataclass(frozen=True)
class OperandView:
    name: str
    role: str
    meaning: str
    files: str
    kinds: str
    selection: str
    allowed: str
    modifiers: str
    source: SourceView


@dataclass(frozen=True)
class TargetRow:
    label: str
    supported: bool
    source: SourceView
    erratum: str


@dataclass(frozen=True)
class RuleView:
    id: str
    text: str
    check: str
    source: SourceView
    rejects: int


@dataclass(frozen=True)
class ErratumView:
    id: str
    defect: str
    resolution: str
    sources: tuple[SourceView, ...]
    used_by: tuple[str, ...]


@dataclass(frozen=True)
class InstructionView:
    name: str
    opcode: str
    family: str
    summary: str
    syntax: str
    source: SourceView
    saturate: bool
    operands: tuple[OperandView, ...]
    stage_grid: Grid
    runtime_sources: tuple[tuple[str, SourceView, str], ...]
    target_rows: tuple[TargetRow, ...]
    rules: tuple[RuleView, ...]
    errata: tuple[ErratumView, ...]
    vector_count: int
    unparsed: int
    status_counts: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class Issue:
    vector_id: str
    status: str
    reason: str
    diffs: tuple[str, ...]


@dataclass(frozen=True)
class ImplCell:
    index: int
    impl: str
    counts: tuple[tuple[str, int], ...]
    tone: str
    issues: tuple[Issue, ...]
    more_issues: int

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)


@dataclass(frozen=True)
class TheoremRef:
    name: str
    label: str
    status: str


@dataclass(frozen=True)
class ClauseView:
    id: str
    instruction: str
    group: str
    text: str
    outcomes: tuple[str, ...]
    source: SourceView
    erratum: str
    status: str
    badges: tuple[tuple[str, str], ...]
    vector_count: int
    sample_ids: tuple[str, ...]
    uncovered_reason: str
    undefined_note: str
    theorems: tuple[TheoremRef, ...]
    impls: tuple[ImplCell, ...]

    @property
    def result_keys(self) -> str:
        """``index:status`` for every status an implementation has on this clause (filters)."""
        return " ".join(f"{c.index}:{s}" for c in self.impls for s, n in c.counts if n)


@dataclass(frozen=True)
class ProofRow:
    name: str
    instruction: str
    kind: str
    status: str
    tone: str
    seconds: str
    detail: str
    about: str
    witnesses: tuple[str, ...]
    witness_count: int


@dataclass(frozen=True)
class ProofsView:
    rows: tuple[ProofRow, ...]
    counts: tuple[tuple[str, str, int], ...]
    total_seconds: str


@dataclass(frozen=True)
class MutantRow:
    name: str
    description: str
    instructions: tuple[str, ...]
    killed: bool
    killing_count: int
    killing_sample: tuple[str, ...]


@dataclass(frozen=True)
class MutantsView:
    rows: tuple[MutantRow, ...]
    killed: int
    total: int
    score: str


@dataclass(frozen=True)
class ImplementationView:
    index: int
    impl: str
    files: tuple[str, ...]
    version: str
    statuses: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]
    per_instruction: tuple[tuple[str, tuple[int, ...]], ...]
    unknown_vectors: int
    issues: tuple[Issue, ...]
    more_issues: int
    issues_all: tuple[Issue, ...] = ()

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)


@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    count: int
    width: str  # percent of the bar, two decimals


@dataclass(frozen=True)
class Bar:
    """One stacked bar of the dashboard: the verdicts of one implementation on a set of
    vectors (a family or an instruction), by category."""

    label: str
    segments: tuple[Segment, ...]
    total: int

    @property
    def title(self) -> str:
        return ", ".join(f"{s.count} {s.label}" for s in self.segments if s.count) or "no vector"


@dataclass(frozen=True)
class DashboardRow:
    impl: str
    bars: tuple[Bar, ...]
    total: Bar


@dataclass(frozen=True)
class InstructionRow:
    name: str
    family: str
    vector_count: int
    status_counts: tuple[tuple[str, str, int], ...]
    clause_count: int
    bars: tuple[Bar, ...]  # one per implementation


@dataclass(frozen=True)
class InstructionPage:
    """What one instruction's page shows, besides the report-wide header."""

    ins: InstructionView
    clauses: tuple[ClauseView, ...]
    mask_grids: tuple[Grid, ...]
    legality_grid: Grid
    proofs: tuple[ProofRow, ...]
    impls: tuple[tuple[ImplementationView, tuple[tuple[str, int], ...], tuple[Issue, ...], int],
                 ...]
    previous: str
    next: str


@dataclass(frozen=True)
class ControlClauseView:
    id: str
    when: str
    text: str
    vector_count: int
    sample_ids: tuple[str, ...]


@dataclass(frozen=True)
class ControlRow:
    """A flow-control instruction: its effect, its clauses with the vectors listing each, and
    each implementation's verdicts on its own vectors."""

    name: str
    effect: str
    syntax: str
    summary: str
    vector_count: int
    clauses: tuple[ControlClauseView, ...]
    bars: tuple[Bar, ...]
    #: The status of its theorem that the clauses partition the effect ("" without proofs).
    theorem: str = ""


@dataclass(frozen=True)
class ControlView:
    """Flow control: the 20 instructions and the structure rules (with the must-reject vectors
    breaking each)."""

    rows: tuple[ControlRow, ...]
    rules: tuple[RuleView, ...]
    limits: str


@dataclass(frozen=True)
class StateFileRow:
    """A register file of program state: its elements, what an index past the end gives."""

    name: str
    title: str
    components: int
    elements: str
    out_of_range: str
    theorems: tuple[tuple[str, str], ...]  # (kind, status) of its program_state theorems


@dataclass(frozen=True)
class StateView:
    """Program state: the register files that stand for r#, the declaration and program rules
    (with the must-reject vectors breaking each), and each implementation's verdicts on the
    program-state vectors."""

    files: tuple[StateFileRow, ...]
    rules: tuple[RuleView, ...]
    vector_count: int
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Report:
    spec_version: str
    instructions: tuple[InstructionView, ...]
    clauses: tuple[ClauseView, ...]
    statuses: tuple[tuple[str, str, int], ...]
    mask_grids: tuple[Grid, ...]
    legality_grids: tuple[Grid, ...]
    outcome_grid: Grid
    proofs: ProofsView | None
    mutants: MutantsView | None
    implementations: tuple[ImplementationView, ...]
    files: tuple[VectorFile, ...]
    vector_total: int
    sources: tuple[SourceDocView, ...]
    result_statuses: tuple[str, ...]
    clause_counts: tuple[tuple[str, str, int, str], ...]
    dashboard: tuple[DashboardRow, ...]
    families: tuple[str, ...]
    instruction_rows: tuple[InstructionRow, ...]
    control: ControlView
    state: StateView | None = None

    def pages(self) -> tuple[InstructionPage, ...]:
        """One page per instruction, in the report's order."""
        names = [ins.name for ins in self.instructions]
        out = []
        for n, ins in enumerate(self.instructions):
            impls = []
            for impl in self.implementations:
                counts = dict(impl.per_instruction).get(ins.name, ())
                issues = [i for i in impl.issues_all if i.vector_id.split("/")[0] == ins.name]
                impls.append((impl, tuple((s, c) for s, c in zip(impl.statuses, counts,
                                                                  strict=False) if c),
                              tuple(issues[:IMPL_ISSUES]), max(0, len(issues) - IMPL_ISSUES)))
            out.append(InstructionPage(
                ins=ins, clauses=tuple(c for c in self.clauses if c.instruction == ins.name),
                mask_grids=tuple(g for g in self.mask_grids if g.instruction == ins.name),
                legality_grid=next(g for g in self.legality_grids if g.instruction == ins.name),
                proofs=() if self.proofs is None else tuple(
                    row for row in self.proofs.rows if row.instruction == ins.name),
                impls=tuple(impls),
                previous=names[n - 1] if n else "",
                next=names[n + 1] if n + 1 < len(names) else ""))
        return tuple(out)


# ----------------------------------------------------------------------------------------------
# Gathering


def gather(spec: Spec, vector_paths: Sequence[Path], proofs_json: Path | None = None,
           results_jsons: Iterable[Path] = (), mutants_json: Path | None = None) -> Report:
    index = scan(vector_paths, spec)
    theorems = read_proofs(proofs_json) if proofs_json is not None else None
    impls = merge_results([read_results(p) for p in results_jsons])
    mutants = read_mutants(mutants_json) if mutants_json is not None else None
    clauses = tuple(_clause_view(spec, ins, clause, index, theorems, impls)
                    for ins in instructions_of(spec) for clause in ins.clauses)
    status_totals = Counter(c.status for c in clauses)
    chip_totals = Counter(key for c in clauses for key, _ in c.badges)
    families = tuple(sorted({ins.family for ins in instructions_of(spec)}))
    return Report(
        spec_version=spec.version,
        instructions=tuple(_instruction_view(spec, ins, index, clauses)
                           for ins in instructions_of(spec)),
        clauses=clauses,
        statuses=tuple((key, label, status_totals[key]) for key, label in STATUSES),
        mask_grids=tuple(g for ins in instructions_of(spec) for g in mask_grids(ins, index)),
        legality_grids=tuple(legality_grid(spec, ins, index) for ins in instructions_of(spec)),
        outcome_grid=outcome_grid(spec, index),
        proofs=None if theorems is None else _proofs_view(spec, theorems),
        mutants=None if mutants is None else _mutants_view(mutants, index),
        implementations=tuple(_implementation_view(n, impl, index)
                              for n, impl in enumerate(impls)),
        files=index.files, vector_total=index.total,
        sources=tuple(SourceDocView(k, d.title, d.kind)
                      for k, d in sorted(spec.model.sources.items())),
        result_statuses=status_order({r.status for i in impls for r in i.results.values()}),
        clause_counts=tuple((key, label, chip_totals[key], STATUS_MEANINGS[key])
                            for key, label in STATUSES),
        dashboard=tuple(_dashboard_row(spec, impl, index, families) for impl in impls),
        families=families,
        instruction_rows=tuple(_instruction_row(ins, clauses, index, impls)
                               for ins in instructions_of(spec)),
        control=_control_view(spec, index, impls, theorems),
        state=_state_view(spec, index, impls, theorems),
    )


def _control_view(spec: Spec, index: VectorIndex, impls: Sequence[ImplResults],
                  theorems: Sequence[Theorem] | None) -> ControlView:
    control = spec.control
    proved = {t.instruction: t.status for t in theorems or () if t.instruction in
              control.instructions}
    rows = []
    for ins in control.instructions.values():
        clauses = tuple(ControlClauseView(
            c.id, c.when.text, c.text, len(index.clause_ids.get(c.id, ())),
            index.clause_ids.get(c.id, ())[:SAMPLE_IDS]) for c in ins.clauses)
        bars = tuple(bar(impl.impl, (r.status for vid, r in impl.results.items()
                                     if index.vector_instruction.get(vid) == ins.name))
                     for impl in impls)
        rows.append(ControlRow(ins.name, ins.effect, ins.syntax, ins.summary,
                               index.per_instruction.get(ins.name, 0), clauses, bars,
                               proved.get(ins.name, "")))
    rules = tuple(RuleView(r.id, r.text, r.check, source_view(spec, r.source),
                           index.rejects_by_rule.get(r.id, 0)) for r in spec.control_rules)
    limits = (f"blocks nest {control.limits.nesting} deep; the return stack holds "
              f"{control.limits.call_depth} entries; no verdict past {control.limits.steps:,} "
              "executed instructions")
    return ControlView(tuple(rows), rules, limits)


#: The program-state subjects: the theorems' and the vector files' (vectors/programs/).
STATE_SUBJECTS = ("program_state", "state_structure")


def _state_view(spec: Spec, index: VectorIndex, impls: Sequence[ImplResults],
                theorems: Sequence[Theorem] | None) -> StateView:
    by_file: dict[str, list[tuple[str, str]]] = {}
    for t in theorems or ():
        if t.instruction == STATE_SUBJECTS[0]:
            file = t.name.split("/")[1]
            by_file.setdefault(file, []).append((t.kind, t.status))
    files = tuple(StateFileRow(f.name, f.title, f.components, f.elements or "-",
                               f.out_of_range or "-", tuple(by_file.get(f.name, ())))
                  for f in spec.model.register_files if f.stands_for)
    decls = spec.declarations
    names = {f.name for f in files}
    applying = {d.name for d in decls.declarations.values()
                if set(d.registers) & names or not d.registers}
    rules = tuple(RuleView(r.id, r.text, r.check, source_view(spec, r.source),
                           index.rejects_by_rule.get(r.id, 0))
                  for r in (*(r for r in decls.rules if applying.intersection(r.applies)),
                            *decls.program_rules))
    count = sum(index.per_instruction.get(name, 0) for name in STATE_SUBJECTS)
    bars = tuple(bar(impl.impl, (r.status for vid, r in impl.results.items()
                                 if index.vector_instruction.get(vid) in STATE_SUBJECTS))
                 for impl in impls)
    return StateView(files, rules, count, bars)


# --- the dashboard -------------------------------------------------------------------------------


def bar(label: str, statuses: Iterable[str]) -> Bar:
    """The stacked bar of these verdicts, by category; widths in percent of the total."""
    counts = Counter(CATEGORY_OF.get(s, "fail") for s in statuses)
    total = sum(counts.values())
    return Bar(label, tuple(
        Segment(key, text, counts[key], f"{100 * counts[key] / total:.2f}" if total else "0")
        for key, text, _ in CATEGORIES), total)


def _dashboard_row(spec: Spec, impl: ImplResults, index: VectorIndex,
                   families: tuple[str, ...]) -> DashboardRow:
    per: dict[str, list[str]] = {family: [] for family in families}
    for vector_id, result in impl.results.items():
        name = index.vector_instruction.get(vector_id)
        ins = spec.instructions.get(name) if name is not None else None
        if ins is not None:
            per[ins.family].append(result.status)
    return DashboardRow(impl.impl, tuple(bar(f, per[f]) for f in families),
                        bar("all", (r.status for r in impl.results.values())))


def _instruction_row(ins: InstructionSpec, clauses: tuple[ClauseView, ...], index: VectorIndex,
                     impls: tuple[ImplResults, ...]) -> InstructionRow:
    own = [c for c in clauses if c.instruction == ins.name]
    prefix = ins.name + "/"
    return InstructionRow(
        ins.name, ins.family, index.per_instruction.get(ins.name, 0),
        tuple((key, label, sum(1 for c in own if key in dict(c.badges)))
              for key, label in STATUSES),
        len(own),
        tuple(bar(impl.impl, (r.status for v, r in impl.results.items()
                              if v.startswith(prefix))) for impl in impls))


def source_view(spec: Spec, ref: SourceRef) -> SourceView:
    doc = spec.model.sources.get(ref.ref)
    return SourceView(ref.ref, doc.title if doc else ref.ref, ref.section)


# --- instructions -------------------------------------------------------------------------------


def _instruction_view(spec: Spec, ins: InstructionSpec, index: VectorIndex,
                      clauses: tuple[ClauseView, ...]) -> InstructionView:
    avail = ins.availability
    runtimes = tuple(r.name for r in spec.model.runtimes)
    stage_rows = tuple(
        GridRow(stage.name, stage.prefix, tuple(
            Cell(LEGAL_MARK if stage.name in avail.stages_for(rt) else ILLEGAL_MARK, "",
                 "legal" if stage.name in avail.stages_for(rt) else "illegal",
                 f"{ins.name} in the {stage.name} stage on runtime {rt}")
            for rt in runtimes))
        for stage in spec.model.stages)
    stage_grid = Grid("", ins.name, "stage", (), runtimes, stage_rows, "")
    target_rows = tuple(
        TargetRow(_model_name(spec, m.model), m.supported, source_view(spec, m.source), "")
        for m in avail.models) + tuple(
        TargetRow(t.target, t.supported, source_view(spec, t.source), t.erratum or "")
        for t in avail.targets)
    used_by: dict[str, list[str]] = {}
    for clause in ins.clauses:
        if clause.erratum:
            used_by.setdefault(clause.erratum, []).append(clause.id)
    for row in avail.targets:
        if row.erratum:
            used_by.setdefault(row.erratum, []).append(f"availability {row.target}")
    for rt_row in avail.runtimes:
        if rt_row.erratum:
            used_by.setdefault(rt_row.erratum, []).append(f"availability {rt_row.runtime}")
    own = [c for c in clauses if c.instruction == ins.name]
    return InstructionView(
        name=ins.name, opcode=f"0x{ins.opcode:02X}", family=ins.family, summary=ins.summary,
        syntax=ins.syntax, source=source_view(spec, ins.source), saturate=ins.saturate,
        operands=tuple(OperandView(
            op.name, op.role, op.meaning, ", ".join(op.files), ", ".join(op.kinds),
            op.selection, " ".join("." + x for x in (op.masks or op.swizzles)),
            ", ".join(op.modifiers), source_view(spec, op.source)) for op in ins.operands),
        stage_grid=stage_grid,
        runtime_sources=tuple((r.runtime, source_view(spec, r.source), r.erratum or "")
                              for r in avail.runtimes),
        target_rows=target_rows,
        rules=tuple(RuleView(r.id, r.text, r.check, source_view(spec, r.source),
                             index.rejects_by_rule.get(r.id, 0)) for r in ins.rules),
        errata=tuple(ErratumView(
            e.id, e.defect, e.resolution,
            tuple(SourceView(s, spec.model.sources[s].title, "") for s in e.sources),
            tuple(used_by.get(e.id, ()))) for e in ins.errata),
        vector_count=index.per_instruction.get(ins.name, 0),
        unparsed=index.unparsed.get(ins.name, 0),
        status_counts=tuple((key, label, sum(1 for c in own if key in dict(c.badges)))
                            for key, label in STATUSES),
    )


def _model_name(spec: Spec, model: int) -> str:
    for m in spec.model.shader_models:
        if m.model == model:
            return m.name
    return f"model {model}"


# --- clauses ------------------------------------------------------------------------------------


def _about(theorem: Theorem, ins: InstructionSpec, clause: Clause) -> bool:
    """The theorem is about this clause or its group (``partition/<group>``,
    ``in_bounds/<clause>``, ...). Theorems about the whole instruction (well-definedness,
    availability, agreement) hold for every clause alike and are left to the proof table."""
    return theorem.instruction == ins.name and theorem.subject in (clause.id, clause.group)


def _clause_view(spec: Spec, ins: InstructionSpec, clause: Clause, index: VectorIndex,
                 theorems: tuple[Theorem, ...] | None, impls: tuple[ImplResults, ...]
                 ) -> ClauseView:
    ids = index.clause_ids.get(clause.id, ())
    covered = bool(ids)
    about = tuple(TheoremRef(t.name, t.name.removeprefix(f"{ins.name}/"), t.status)
                  for t in theorems or () if _about(t, ins, clause))
    proved = covered and any(t.status == "proved" for t in about)
    described = {o.name: o for o in spec.model.outcomes}
    free = [o for o in clause.outcomes
            if described[o].effect in ("undefined", "constrained")]
    undefined = covered and bool(free)
    badges: list[tuple[str, str]] = []
    if proved:
        badges.append(("proved", "proved"))
    if covered:
        badges.append(("tested", "tested"))
    if undefined:
        badges.append(("undefined", "undefined by design"))
    if not covered:
        badges.append(("uncovered", "uncovered"))
    status = ("uncovered" if not covered else "proved" if proved
              else "undefined" if undefined else "tested")
    return ClauseView(
        id=clause.id, instruction=ins.name, group=clause.group, text=clause.text,
        outcomes=clause.outcomes, source=source_view(spec, clause.source),
        erratum=clause.erratum or "", status=status, badges=tuple(badges),
        vector_count=len(ids), sample_ids=ids[:SAMPLE_IDS],
        uncovered_reason="" if covered else _uncovered_reason(ins, index),
        undefined_note="; ".join(f"{o}: {described[o].text}" for o in free),
        theorems=about,
        impls=tuple(_impl_cell(n, impl, ids) for n, impl in enumerate(impls)))


def _uncovered_reason(ins: InstructionSpec, index: VectorIndex) -> str:
    if not index.files:
        return "no vector files were given to the report"
    count = index.per_instruction.get(ins.name, 0)
    if count == 0:
        return f"no vector generated: no {ins.name} vectors in the vector files given"
    return (f"no vector generated for this clause: none of the {plural(count, 'vector')} "
            f"of {ins.name} lists it")


def _impl_cell(n: int, impl: ImplResults, ids: tuple[str, ...]) -> ImplCell:
    counts: Counter[str] = Counter()
    issues: list[Issue] = []
    for vector_id in ids:
        result = impl.results.get(vector_id)
        if result is None:
            continue
        counts[result.status] += 1
        if result.status in LISTED_RESULTS:
            issues.append(Issue(vector_id, result.status, result.reason, result.diffs))
    issues.sort(key=lambda i: (LISTED_RESULTS.index(i.status), i.vector_id))
    return ImplCell(n, impl.impl, tuple((s, counts[s]) for s in status_order(set(counts))),
                    _result_tone(counts), tuple(issues[:CLAUSE_ISSUES]),
                    max(0, len(issues) - CLAUSE_ISSUES))


def _result_tone(counts: Mapping[str, int]) -> str:
    for status, tone in (("fail", "bad"), ("crash", "bad"), ("timeout", "bad"),
                         ("xpass", "warn"), ("xfail", "expected"), ("pass", "good")):
        if counts.get(status):
            return tone
    return "na"


# --- proofs, mutants, implementations ----------------------------------------------------------


PROOF_TONES = {"proved": "good", "counterexample-as-expected": "good", "failed": "bad",
               "timeout": "warn"}


def _proofs_view(spec: Spec, theorems: tuple[Theorem, ...]) -> ProofsView:
    rows = []
    for t in theorems:
        ins = spec.instructions.get(t.instruction)
        groups = {g.id for g in ins.semantics.groups} if ins else set()
        clause_ids = {c.id for c in ins.clauses} if ins else set()
        about = ("clause" if t.subject in clause_ids else "group" if t.subject in groups
                 else "instruction" if not t.subject else t.subject)
        rows.append(ProofRow(t.name, t.instruction, t.kind, t.status,
                             PROOF_TONES.get(t.status, "warn"),
                             "" if t.seconds is None else f"{t.seconds:.2f} s", t.detail,
                             about, t.witnesses, t.witness_count))
    counts = Counter(t.status for t in theorems)
    total = sum(t.seconds or 0.0 for t in theorems)
    order = [*(s for s in PROOF_TONES if s in counts), *sorted(set(counts) - set(PROOF_TONES))]
    return ProofsView(tuple(rows), tuple((s, PROOF_TONES.get(s, "warn"), counts[s]) for s in order),
                      f"{total:.2f} s")


def _mutants_view(mutants: tuple[Mutant, ...], index: VectorIndex) -> MutantsView:
    rows = tuple(MutantRow(
        m.name, m.description,
        tuple(sorted({index.vector_instruction[v] for v in m.killing
                      if v in index.vector_instruction})),
        m.killed, len(m.killing), m.killing[:MUTANT_IDS]) for m in mutants)
    killed = sum(1 for m in mutants if m.killed)
    score = f"{100 * killed / len(mutants):.1f} %" if mutants else "no mutants"
    return MutantsView(rows, killed, len(mutants), score)


def _implementation_view(n: int, impl: ImplResults, index: VectorIndex) -> ImplementationView:
    statuses = status_order({r.status for r in impl.results.values()})
    counts = Counter(r.status for r in impl.results.values())
    per_ins: dict[str, Counter[str]] = {}
    issues: list[Issue] = []
    unknown = 0
    for vector_id, result in impl.results.items():
        name = index.vector_instruction.get(vector_id)
        if name is None:
            unknown += 1
            name = "(not in the vector files)"
        per_ins.setdefault(name, Counter())[result.status] += 1
        if result.status in LISTED_RESULTS:
            issues.append(Issue(vector_id, result.status, result.reason, result.diffs))
    issues.sort(key=lambda i: (LISTED_RESULTS.index(i.status), i.vector_id))
    return ImplementationView(
        index=n, impl=impl.impl, files=impl.files, version=impl.version, statuses=statuses,
        counts=tuple((s, counts[s]) for s in statuses),
        per_instruction=tuple((name, tuple(c[s] for s in statuses))
                              for name, c in sorted(per_ins.items())),
        unknown_vectors=unknown, issues=tuple(issues[:IMPL_ISSUES]),
        more_issues=max(0, len(issues) - IMPL_ISSUES), issues_all=tuple(issues))
