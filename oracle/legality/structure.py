"""The structure pass: flow-control partners matched once, before execution, by structure.

The tokens carry no partner offsets (erratum control.partner_offsets), so an if finds its else and
end, a break its loop or switch, a switch its entries, a call its label by walking the program
once with a stack of open blocks. The constructs, the effects and what each effect jumps to are
data (``spec/control.yaml``); the rules this pass reports are the structure rules listed there,
each by its id, in the order the spec lists them. The walk is linear and iterative: a program of
100,000 nested blocks is matched in one pass, without recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sm5.oracle.machine.program import Instruction, Program
from sm5.oracle.model.control import (
    ENTER_SUBROUTINE,
    LEAVE,
    NEXT_ITERATION,
    RETURN,
    SUBROUTINE,
    ControlModel,
)

#: What the last instruction at a switch's own level was, for the fall-through rule.
_ENTRY, _LEAVES, _CODE, _OTHER = "entry", "leaves", "code", "other"


@dataclass
class _Open:
    """A block being matched: its construct, where it opened, and what it holds so far."""

    construct: str
    at: int
    middles: list[int] = field(default_factory=list)
    entries: list[tuple[int, int | None]] = field(default_factory=list)  # (index, literal)
    last: str = _ENTRY


@dataclass(frozen=True)
class Structure:
    """The partners of a program's flow control, by instruction position (among
    ``program.instructions``), and the violations found."""

    #: A branch's other arm, by the branch's position (absent: no other arm).
    other_arm: Mapping[int, int]
    #: The end of every construct, by the position of its opener and of its middle/entries.
    end: Mapping[int, int]
    #: A loop end's opener; a next_iteration's loop opener.
    start: Mapping[int, int]
    #: A leave's or next_iteration's target construct kind and the position it jumps to.
    target: Mapping[int, int]
    #: The innermost enclosing loop or select of each leave and next_iteration.
    within: Mapping[int, str]
    #: A select's entries in order: (position, literal; None for the default entry).
    entries: Mapping[int, tuple[tuple[int, int | None], ...]]
    #: Label number -> the position of its label instruction.
    labels: Mapping[int, int]
    #: Position of every instruction -> True where it is in the main program.
    in_main: tuple[bool, ...]
    #: The deepest nesting of blocks in any subroutine or the main program.
    depth: int
    #: The structure rules broken, in the spec's order.
    violations: tuple[str, ...]


def match_structure(program: Program, control: ControlModel, model: int | None,
                    specified: Callable[[str], bool]) -> Structure:
    """Match every partner of ``program`` (shader model ``model``, e.g. 50; None: the partners
    only, without the rules that depend on the model) and list what breaks the structure rules.
    ``specified`` tells an ALU or memory instruction (code) from the rest."""
    return _Walk(program.instructions, control, model, specified).run()


class _Walk:
    def __init__(self, instructions: tuple[Instruction, ...], control: ControlModel,
                 model: int | None,
                 specified: Callable[[str], bool]) -> None:
        self.instructions = instructions
        self.control = control
        self.model = model
        self.specified = specified
        self.found: set[str] = set()
        self.stack: list[_Open] = []
        self.other_arm: dict[int, int] = {}
        self.end: dict[int, int] = {}
        self.start: dict[int, int] = {}
        self.target: dict[int, int] = {}
        self.within: dict[int, str] = {}
        self.entries: dict[int, tuple[tuple[int, int | None], ...]] = {}
        self.labels: dict[int, int] = {}
        self.calls: list[tuple[int, int | None]] = []  # (label called, calling label)
        self.depth = 0
        self.in_main: list[bool] = []
        self.current_label: int | None = None
        self.scope_start = 0
        self.scope_ends: list[int] = []  # the last position of main and of each subroutine
        self.entry_effects = {c.entries for c in control.constructs if c.entries is not None}

    def run(self) -> Structure:
        for k, ins in enumerate(self.instructions):
            self.step(k, ins)
        self.close_scope(len(self.instructions))
        self.check_calls()
        order = [r.id for r in self.control.rules]
        return Structure(self.other_arm, self.end, self.start, self.target, self.within,
                         self.entries, self.labels, tuple(self.in_main), self.depth,
                         tuple(i for i in order if i in self.found))

    # -- one instruction -------------------------------------------------------------------

    def step(self, k: int, ins: Instruction) -> None:
        control = self.control
        effect = control.effect_of(ins.name)
        if effect == SUBROUTINE:
            self.label(k, ins)
            return
        self.in_main.append(self.current_label is None)
        top = self.stack[-1] if self.stack else None
        if (top is not None and top.construct in control.selects and not top.entries
                and effect not in self.entry_effects):
            self.found.add("structure.code_before_entry")
        if effect is None:
            self.mark(_CODE if self.specified(ins.name) else _OTHER)
        elif effect in control.construct_opened_by:
            self.mark(_OTHER)
            self.stack.append(_Open(control.construct_opened_by[effect].name, k))
            self.depth = max(self.depth, len(self.stack))
        elif effect in control.construct_closed_by:
            self.close(k, control.construct_closed_by[effect].name)
        elif effect in control.construct_continued_by:
            self.middle_or_entry(k, ins, control.construct_continued_by[effect].name, effect)
        else:
            if control.effects[effect].jumps_to:
                self.jump(k, effect)
            elif effect == ENTER_SUBROUTINE:
                label = ins.operands[-1].index
                assert label is not None
                self.calls.append((label, self.current_label))
            self.mark(_LEAVES if self.unconditional_exit(ins, effect) else _OTHER)

    def mark(self, kind: str) -> None:
        if self.stack:
            self.stack[-1].last = kind

    def unconditional_exit(self, ins: Instruction, effect: str) -> bool:
        """An instruction after which a switch entry cannot fall through: an untested leave,
        next_iteration or return."""
        return not self.control.instructions[ins.name].test and (
            bool(self.control.effects[effect].jumps_to) or effect == RETURN)

    def close(self, k: int, construct: str) -> None:
        top = self.stack[-1] if self.stack else None
        if top is None or top.construct != construct:
            self.found.add("structure.unmatched_partner")
            return
        self.stack.pop()
        self.end[top.at] = k
        for m in top.middles:
            self.end[m] = k
        if construct in self.control.loops:
            self.start[k] = top.at
        if construct in self.control.selects:
            self.entries[top.at] = tuple(top.entries)
        if top.middles:
            self.other_arm[top.at] = top.middles[0]
        self.mark(_OTHER)

    def middle_or_entry(self, k: int, ins: Instruction, construct: str, effect: str) -> None:
        top = self.stack[-1] if self.stack else None
        if top is None or top.construct != construct:
            self.found.add("structure.unmatched_partner")
            return
        spec = next(c for c in self.control.constructs if c.name == construct)
        if effect == spec.middle:
            top.middles.append(k)
            if spec.middle_at_most is not None and len(top.middles) > spec.middle_at_most:
                self.found.add("structure.second_else")
            top.last = _OTHER
            return
        literal: int | None = None
        position = self.control.instructions[ins.name].operand_position("literal")
        if position is not None:
            values = ins.operands[position].values
            literal = values[0] if values else 0
            if any(v == literal for _, v in top.entries):
                self.found.add("structure.duplicate_case")
        elif any(v is None for _, v in top.entries):
            self.found.add("structure.second_default")
        if (top.entries and top.last == _CODE and self.model is not None
                and self.model >= self.control.fallthrough_code_rejected_from):
            self.found.add("structure.fallthrough_with_code")
        top.entries.append((k, literal))
        top.last = _ENTRY

    def jump(self, k: int, effect: str) -> None:
        control = self.control
        kinds = control.effects[effect].jumps_to
        target = next((o for o in reversed(self.stack) if o.construct in kinds), None)
        if target is None:
            self.found.add("structure.break_outside" if effect == LEAVE
                           else "structure.continue_outside_loop")
            return
        around = control.loops | control.selects
        innermost = next((o for o in reversed(self.stack) if o.construct in around), None)
        self.within[k] = innermost.construct if innermost is not None else "none"
        self.target[k] = target.at
        if effect == NEXT_ITERATION:
            self.start[k] = target.at

    # -- subroutines -----------------------------------------------------------------------

    def label(self, k: int, ins: Instruction) -> None:
        self.in_main.append(False)
        previous = self.instructions[k - 1] if k else None
        unnested_ret = (previous is not None and not self.stack
                        and self.control.effect_of(previous.name) == RETURN
                        and not self.control.instructions[previous.name].test)
        if not unnested_ret:
            self.found.add("structure.label_placement")
        self.close_scope(k)
        number = ins.operands[0].index
        assert number is not None
        if number in self.labels:
            self.found.add("structure.label_twice")
        else:
            self.labels[number] = k
        self.current_label = number

    def close_scope(self, end: int) -> None:
        """The main program or a subroutine ends before position ``end``."""
        if self.stack:
            self.found.add("structure.unclosed_block")
            self.stack.clear()
        if end > self.scope_start:
            self.scope_ends.append(end - 1)
        self.scope_start = end

    def check_calls(self) -> None:
        control = self.control
        graph: dict[int | None, set[int]] = {}
        for label, caller in self.calls:
            if label not in self.labels:
                self.found.add("structure.call_unknown_label")
                continue
            graph.setdefault(caller, set()).add(label)
        if _has_cycle(graph):
            self.found.add("structure.recursion")
        for e in self.scope_ends:
            last = self.instructions[e]
            effect = control.effect_of(last.name)
            if effect == RETURN and control.instructions[last.name].test:
                self.found.add("structure.retc_last")
            elif self.labels and effect != RETURN:
                self.found.add("structure.last_not_ret")


def _has_cycle(graph: Mapping[int | None, set[int]]) -> bool:
    """Whether the call graph (caller label -> called labels; None is main) has a cycle,
    found iteratively (a chain of 100,000 subroutines needs no recursion)."""
    state: dict[int | None, int] = {}  # 1: on the current path, 2: done
    for root in graph:
        if state.get(root):
            continue
        stack: list[tuple[int | None, list[int]]] = [(root, sorted(graph.get(root, ())))]
        state[root] = 1
        while stack:
            node, pending = stack[-1]
            if not pending:
                state[node] = 2
                stack.pop()
                continue
            child = pending.pop()
            mark = state.get(child)
            if mark == 1:
                return True
            if mark is None:
                state[child] = 1
                stack.append((child, sorted(graph.get(child, ()))))
    return False
