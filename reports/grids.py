"""The report's coloured matrices: mask x swizzle coverage, stage x target x runtime legality
with the must-reject vectors, and outcome-class coverage, computed from the spec and the
vector index."""

from __future__ import annotations

from dataclasses import dataclass

from sm5.oracle.machine.program import IMMEDIATE_BITS
from sm5.oracle.model.spec import InstructionSpec, Spec
from sm5.reports.coverage import (
    IMMEDIATE,
    OTHER_SWIZZLE,
    SWIZZLE_PATTERNS,
    VectorIndex,
    mask_operand,
    swizzle_operands,
)

#: Symbols of the grids and titles.
TIMES, NONE_MARK = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"
LEGAL_MARK, ILLEGAL_MARK = "\N{CHECK MARK}", "\N{BALLOT X}"


@dataclass(frozen=True)
class Cell:
    text: str
    note: str
    tone: str
    title: str


@dataclass(frozen=True)
class GridRow:
    label: str
    note: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Grid:
    """A coloured table: rows by columns, optionally with spanning column groups."""

    title: str
    instruction: str
    corner: str
    column_groups: tuple[tuple[str, int], ...]
    columns: tuple[str, ...]
    rows: tuple[GridRow, ...]
    caption: str


def instructions_of(spec: Spec) -> list[InstructionSpec]:
    return [spec.instructions[name] for name in sorted(spec.instructions)]


def heat(count: int) -> str:
    return "h1" if count < 10 else "h2" if count < 100 else "h3"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _pattern_label(pattern: str) -> str:
    """``0012`` -> ``aabc``: the letters of a swizzle as a shape."""
    return "".join("abcd"[int(n)] for n in pattern)


def mask_grids(ins: InstructionSpec, index: VectorIndex) -> list[Grid]:
    mask_op = mask_operand(ins)
    if mask_op is None:
        return []
    grids = []
    for op in swizzle_operands(ins):
        seen = {k: v for k, v in index.mask_swizzle.items() if k[0] == ins.name and k[1] == op.name}
        classes = [*op.swizzles, OTHER_SWIZZLE] if op.swizzles else list(SWIZZLE_PATTERNS)
        if any(f in IMMEDIATE_BITS for f in op.files):
            classes.append(IMMEDIATE)
        legal_classes = set(classes) - {OTHER_SWIZZLE}
        masks = list(mask_op.masks) + sorted({k[2] for k in seen} - set(mask_op.masks))
        rows = []
        for mask in masks:
            cells = []
            for cls in classes:
                count = seen.get((ins.name, op.name, mask, cls))
                total, rejected = (count.total, count.rejected) if count else (0, 0)
                legal = mask in mask_op.masks and cls in legal_classes
                tone = (heat(total) if total else "gap") if legal \
                    else ("illegal" if total else "na")
                note = f"{rejected} rej" if rejected else ""
                cells.append(Cell(str(total) if total or legal else NONE_MARK, note, tone,
                                  f"{mask_op.name}.{mask} {TIMES} {op.name} {cls}: "
                                  f"{plural(total, 'vector')}, {rejected} must-reject"))
            legal_mask = mask in mask_op.masks
            rows.append(GridRow("." + mask, "" if legal_mask else "illegal mask", tuple(cells)))
        if op.swizzles:
            columns = tuple("." + c if c in op.swizzles else c for c in classes)
            caption = "the swizzles the spec allows, and any other"
        else:
            columns = tuple(c if c == IMMEDIATE else _pattern_label(c) for c in classes)
            caption = ("swizzle shape: which letters repeat (abcd: four distinct letters such as "
                       ".xyzw or .wzyx; aaaa: one letter replicated)")
        grids.append(Grid(f"{ins.name}: {mask_op.name} mask {TIMES} {op.name} swizzle", ins.name,
                          f"{mask_op.name} \\ {op.name}", (), columns, tuple(rows), caption))
    return grids


def legality_grid(spec: Spec, ins: InstructionSpec, index: VectorIndex) -> Grid:
    runtimes = tuple(r.name for r in spec.model.runtimes)
    models = spec.model.shader_models
    targets = {(t.stage, t.model): t for t in spec.model.targets}
    rows = []
    for stage in spec.model.stages:
        cells = []
        for model in models:
            target = targets.get((stage.name, model.model))
            for rt in runtimes:
                if target is None:
                    cells.append(Cell("", "", "na", f"no {stage.prefix} target in {model.name}"))
                    continue
                legal = ins.availability.target_supported(target) is True and \
                    stage.name in ins.availability.stages_for(rt)
                total = index.cell_totals.get((ins.name, target.name, rt), 0)
                rejects = index.availability_rejects.get((ins.name, target.name, rt), 0)
                if legal:
                    cells.append(Cell(LEGAL_MARK, str(total) if total else "", "legal" if total
                                      else "legal-empty",
                                      f"{target.name} on {rt}: legal, "
                                      f"{plural(total, 'vector')}"))
                else:
                    cells.append(Cell(ILLEGAL_MARK, f"{rejects} rej" if rejects else "",
                                      "illegal" if rejects else "illegal-empty",
                                      f"{target.name} on {rt}: rejected, "
                                      f"{rejects} must-reject (availability rule) vectors"))
        rows.append(GridRow(stage.name, stage.prefix, tuple(cells)))
    return Grid(f"{ins.name}: stage {TIMES} target {TIMES} runtime", ins.name, "stage",
                tuple((m.name, len(runtimes)) for m in models),
                tuple(rt for _ in models for rt in runtimes), tuple(rows),
                f"{LEGAL_MARK} legal (number of vectors with that target and runtime) · "
                f"{ILLEGAL_MARK} rejected (number of must-reject vectors that break an "
                "availability rule there)")


def outcome_grid(spec: Spec, index: VectorIndex) -> Grid:
    rows = []
    for ins in instructions_of(spec):
        possible = {o for c in ins.clauses for o in c.outcomes}
        if ins.rules:
            possible.add(spec.model.rejected_outcome)
        cells = []
        for outcome in spec.model.outcome_names:
            count = index.outcomes.get((ins.name, outcome), 0)
            if outcome in possible:
                tone = heat(count) if count else "gap"
            else:
                tone = "bad" if count else "na"
            cells.append(Cell(str(count) if count or outcome in possible else NONE_MARK, "", tone,
                              f"{ins.name} {outcome}: {plural(count, 'vector')}"
                              + ("" if outcome in possible else " (no clause yields it)")))
        rows.append(GridRow(ins.name, "", tuple(cells)))
    return Grid(f"instruction {TIMES} outcome class", "", "instruction", (),
                spec.model.outcome_names, tuple(rows),
                f"vectors whose expected outcomes include the class; {NONE_MARK} where no "
                "clause of the instruction yields it")
