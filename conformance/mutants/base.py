"""A naive, translator-style implementation of the specified instructions: the mutants' base.

It is written the way a DXBC translator or a shader debugger is: plain integer code, one method
per decision a real implementation makes (operand swizzle, write mask, structured address, bounds
check, atomic add and return value, dmovc condition, double modifiers, saturation, legality).
Undefined outcomes get whatever the straightforward code does (out-of-bounds writes are dropped).
The class conforms on the golden set (a test shows it); every mutant overrides one method with a
bug a real implementation has or had, so a mutant that survives points at a gap in the vectors.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, replace
from typing import Any

from sm5.conformance.guards import request_state
from sm5.conformance.interface import Result
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.errors import Sm5Error
from sm5.oracle.execution.semantics import run_instruction
from sm5.oracle.legality import violations
from sm5.oracle.machine.program import (
    COMPONENTS,
    Instruction,
    Operand,
    Program,
    element_name,
    register_file,
    storage_name,
)
from sm5.oracle.machine.state import CONSTANT_KIND, MachineState, Resource
from sm5.oracle.model.control import (
    BRANCH,
    BRANCH_END,
    DEMOTE,
    ENTER_SUBROUTINE,
    ENTRY,
    LEAVE,
    LOOP_END,
    LOOP_START,
    NEXT_ITERATION,
    NONZERO_FLAG,
    OTHER_ARM,
    RETURN,
    SELECT,
    SELECT_END,
    SUBROUTINE,
)
from sm5.oracle.model.spec import InstructionSpec, LegalityRule, MemoryAccess, load_default
from sm5.vectors.format import Vector

U32 = 0xFFFFFFFF
SIGN64 = 1 << 63
#: A temp register of the reply (``r3``); an x# element lives as ``x0[2]``.
REGISTER = re.compile(r"r[0-9]+")
#: What a temp holds before its first write here: the fill pattern of a debug heap (any value
#: conforms: D3D leaves it undefined).
UNWRITTEN = 0xCDCDCDCD


@dataclass
class Machine:
    """A mutable copy of a state in its JSON form."""

    registers: dict[str, list[int]]
    resources: dict[str, dict[str, Any]]
    invocation: str

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Machine:
        registers = {k: list(v) for k, v in doc.items() if REGISTER.fullmatch(k)}
        resources = {k: {**v, "data": list(v["data"])} for k, v in doc.items()
                     if register_file(k) in load_default().model.resource_files
                     and isinstance(v, dict)}
        for res in resources.values():
            if isinstance(res.get("guard"), dict):
                res["guard"] = {side: list(words) for side, words in res["guard"].items()}
        return cls(registers, resources, str(doc.get("invocation", "active")))

    def to_json(self) -> dict[str, Any]:
        """The reply: the r# registers and the views (not the temps' elements, the icb or the
        constant buffers: the program's own state)."""
        out: dict[str, Any] = {**{k: v for k, v in self.registers.items()
                                  if REGISTER.fullmatch(k)},
                               **{k: v for k, v in self.resources.items()
                                  if v.get("kind") != CONSTANT_KIND}}
        if self.invocation != "active":
            out["invocation"] = self.invocation
        return out


def reachable(res: dict[str, Any], word: int) -> bool:
    """Whether word ``word`` of a view (relative to its first word) lies in its allocation: the
    view itself or the guard words around it (a real buffer holds more than the view)."""
    guard = res.get("guard") or {}
    return -len(guard.get("before", ())) <= word < len(res["data"]) + len(guard.get("after", ()))


def _cell(res: dict[str, Any], word: int) -> tuple[list[int], int]:
    data: list[int] = res["data"]
    if 0 <= word < len(data):
        return data, word
    guard = res["guard"]
    if word < 0:
        return guard["before"], len(guard["before"]) + word
    return guard["after"], word - len(data)


def load(res: dict[str, Any], word: int) -> int:
    """The word at ``word`` of a view's allocation (see :func:`reachable`)."""
    words, i = _cell(res, word)
    return words[i]


def store(res: dict[str, Any], word: int, value: int) -> None:
    words, i = _cell(res, word)
    words[i] = value


def f64(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def bits64(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


class NaiveTranslator:
    """The bug-free base. Subclasses name the bug in their docstring and override one hook."""

    name = "naive"
    capabilities: frozenset[str] = frozenset({"executes"})

    # -- driver --------------------------------------------------------------------------------

    def run(self, vector: Vector) -> Result:
        try:
            program = parse_vector_program(vector.program)
            if "validates" in self.capabilities:
                broken = self.rejects(program, vector)
                if broken is not None:
                    return Result.rejected(broken)
            machine = Machine.of(dict(vector.state))
            spec = load_default()
            known = spec.instructions
            own_state = self.program_state(program, machine)
            if any(i.name in spec.control.instructions for i in program.instructions):
                unsupported = self.run_flow(program, machine)
                if unsupported is not None:
                    return unsupported
                return Result.of_state(machine.to_json())
            for instruction in program.instructions:
                if instruction.name not in known:
                    return Result.unsupported(f"the naive translator does not implement "
                                              f"{instruction.name}")
                unsupported = self.step(known[instruction.name], instruction, machine)
                if unsupported is not None and not (own_state and self.register_step(
                        program, instruction, machine)):
                    return unsupported
        except Sm5Error as exc:
            return Result.error(str(exc))
        except (KeyError, IndexError, ValueError) as exc:  # an illegal instance let through
            return Result.error(f"the naive translator cannot execute this instance: {exc!r}")
        return Result.of_state(machine.to_json())

    def step(self, ins: InstructionSpec, instruction: Instruction, machine: Machine
             ) -> Result | None:
        """Execute one instruction of the program on ``machine``; an ``unsupported`` result
        where the translator does not implement it."""
        if ins.semantics.memory is not None:
            self.memory_access(ins, instruction, machine)
        elif ins.semantics.lanes is None and (ins.semantics.result or ins.semantics.counter) \
                and any(i.source.kind == "resource" for i in ins.semantics.inputs):
            self.view_query(ins, instruction, machine)
        elif hasattr(self, instruction.name):
            getattr(self, instruction.name)(instruction, machine)
        elif ins.semantics.result is not None or ins.semantics.counter is not None:
            return Result.unsupported(f"the naive translator does not implement "
                                      f"{instruction.name}")
        # else: it writes nothing a single invocation sees (a fence, a barrier)
        return None

    # -- flow control: partners found by scanning at run time, as a debugger does -----------

    def run_flow(self, program: Program, machine: Machine) -> Result | None:
        """A program with flow control, one instruction at a time under a program counter."""
        spec = load_default()
        control = spec.control
        code = program.instructions
        labels = {ins.operands[0].index: k for k, ins in enumerate(code)
                  if control.effect_of(ins.name) == SUBROUTINE}
        pc, executed = 0, 0
        returns: list[int] = []
        while pc < len(code):
            executed += 1
            if executed > control.limits.steps:
                return Result.error("the program did not end within the step budget")
            ins = code[pc]
            effect = control.effect_of(ins.name)
            if effect is None:
                unsupported = self.step(spec.instructions[ins.name], ins, machine)
                if unsupported is not None and not self.register_step(program, ins, machine):
                    return unsupported
                pc += 1
                continue
            spec_ins = control.instructions[ins.name]
            acts = True
            if spec_ins.test:
                acts = (self.selected(ins.operands[0], machine) != 0) == (NONZERO_FLAG
                                                                         in ins.flags)
            if effect == SUBROUTINE and not returns:
                break  # the main program ran into its first subroutine: it has ended
            if effect == BRANCH and not acts:
                pc = self.skip_arm(code, pc)
            elif effect == OTHER_ARM:
                pc = self.scan(code, pc, forward=True, stop=(BRANCH_END,)) + 1
            elif effect == LOOP_END:
                pc = self.scan(code, pc, forward=False, stop=(LOOP_START,)) + 1
            elif effect == LEAVE and acts:
                pc = self.leave(code, pc)
            elif effect == NEXT_ITERATION and acts:
                pc = self.next_iteration(code, pc)
            elif effect == SELECT:
                pc = self.select(code, pc, self.selected(ins.operands[0], machine))
            elif effect == RETURN and acts:
                if not returns:
                    break
                pc = returns.pop()
            elif effect == ENTER_SUBROUTINE and acts and self.call_allowed(len(returns)):
                returns.append(pc + 1)
                pc = labels[ins.operands[-1].index] + 1
            elif effect == DEMOTE and acts:
                machine.invocation = control.demote_to
                pc += 1
            else:
                pc += 1
        return None

    def register_step(self, program: Program, instruction: Instruction, machine: Machine
                      ) -> bool:
        """An ALU instruction the translator does not implement itself, inside a program with
        flow control: computed by the spec's semantics on the registers (the mutants of flow
        control are about the control, not the arithmetic). False where it touches memory."""
        spec = load_default()
        ins = spec.instructions[instruction.name]
        if ins.semantics.memory is not None or ins.semantics.counter is not None:
            return False
        resolved = self.resolve_elements(program, instruction, machine)
        if resolved is None:
            return True  # an x# element past the end: undefined, the access is dropped
        registers = {k: (v[0], v[1], v[2], v[3]) for k, v in machine.registers.items()}
        constants = {k: Resource(CONSTANT_KIND, tuple(v["data"]))
                     for k, v in machine.resources.items() if v.get("kind") == CONSTANT_KIND}
        execution = run_instruction(resolved, program,
                                    MachineState(registers, constants, machine.invocation), ins,
                                    spec.model)
        if execution.state is None:
            return False
        for name, words in execution.state.registers.items():
            machine.registers[name] = [w if isinstance(w, int) else old
                                       for w, old in zip(words, machine.registers[name],
                                                         strict=True)]
        return True

    # -- program state: indexable temps, constants, inputs --------------------------------------

    def program_state(self, program: Program, machine: Machine) -> bool:
        """Give the machine the program's own state: every x# element and every temp the state
        does not give (:meth:`unwritten`), the icb as a constant. True where the program has
        any (its ALU instructions then run through :meth:`register_step`)."""
        spec = load_default()
        found = False
        for decl in program.declarations:
            dspec = spec.declarations.declarations.get(decl.name)
            if dspec is None or decl.register is None or decl.register.file == "r":
                continue
            if dspec.listed:
                machine.resources[decl.register.register] = {"kind": CONSTANT_KIND,
                                                             "data": list(decl.numbers)}
                found = True
            elif dspec.sized and decl.register.file not in spec.model.resource_files:
                for k in range(decl.numbers[0]):
                    machine.registers[element_name(decl.register.register, k)] = \
                        [self.unwritten()] * 4
                found = True
        state_files = {f.name for f in spec.model.register_files if f.stands_for}
        for ins in program.instructions:
            for op in ins.operands:
                current: Operand | None = op
                while current is not None:
                    found = found or current.file in state_files
                    if current.file == "r" and current.register not in machine.registers:
                        machine.registers[current.register] = [self.unwritten()] * 4
                        found = True
                    current = current.relative
        return found

    def unwritten(self) -> int:
        """The value of a temp before its first write."""
        return UNWRITTEN

    def resolve_elements(self, program: Program, instruction: Instruction, machine: Machine
                         ) -> Instruction | None:
        """The instruction with every element index replaced by the element it reads, the
        index register read as 32 bits plus the number, wrapping; None where an x# index is
        past the end (undefined: the translator drops the instruction)."""
        operands = []
        for op in instruction.operands:
            if op.element is None:
                operands.append(op)
                continue
            element = op.element
            if op.relative is not None:
                element = (self.selected(op.relative, machine) + element) & U32
            constant = machine.resources.get(op.register)
            if constant is not None:
                element = self.constant_element(op.register, element, len(constant["data"]) // 4)
            else:
                decl = program.declaration_of(op.register)
                if decl is None or element >= decl.numbers[0]:
                    return None
            operands.append(replace(op, element=element, relative=None))
        return replace(instruction, operands=tuple(operands))

    def constant_element(self, register: str, element: int, count: int) -> int:
        """The element a read of a constant buffer or the icb fetches (past the end: read as
        0 by the semantics)."""
        return element

    def scan(self, code: tuple[Instruction, ...], pc: int, *, forward: bool,
             stop: tuple[str, ...]) -> int:
        """The position of the first instruction with an effect in ``stop`` at the nesting level
        of ``pc``, walking forward or back and counting blocks opened and closed."""
        control = load_default().control
        opens, closes = set(control.construct_opened_by), set(control.construct_closed_by)
        depth = 0
        k = pc
        while True:
            k = k + 1 if forward else k - 1
            effect = control.effect_of(code[k].name)
            if depth == 0 and effect in stop:
                return k
            if effect in (opens if forward else closes):
                depth += 1
            elif effect in (closes if forward else opens):
                depth -= 1

    def skip_arm(self, code: tuple[Instruction, ...], pc: int) -> int:
        """Where a failed branch goes: after its other arm, or after its end."""
        return self.scan(code, pc, forward=True, stop=(OTHER_ARM, BRANCH_END)) + 1

    def enclosing(self, code: tuple[Instruction, ...], pc: int) -> list[tuple[str, int]]:
        """The blocks around ``pc``, innermost first: (construct, opener position)."""
        control = load_default().control
        found: list[tuple[str, int]] = []
        depth = 0
        for k in range(pc - 1, -1, -1):
            effect = control.effect_of(code[k].name)
            if effect in control.construct_closed_by:
                depth += 1
            elif effect is not None and effect in control.construct_opened_by:
                if depth == 0:
                    found.append((control.construct_opened_by[effect].name, k))
                else:
                    depth -= 1
        return found

    def leave_kinds(self, instruction: Instruction) -> tuple[str, ...]:
        """The blocks a leave (break, breakc) leaves the innermost of."""
        return load_default().control.effects[LEAVE].jumps_to

    def leave(self, code: tuple[Instruction, ...], pc: int) -> int:
        kinds = self.leave_kinds(code[pc])
        target = next((b for b in self.enclosing(code, pc) if b[0] in kinds), None)
        if target is None:  # a translator that knows no such target refuses the program
            raise ValueError(f"no enclosing {' or '.join(kinds)} for line {code[pc].line}")
        _, opener = target
        control = load_default().control
        return self.scan(code, opener, forward=True,
                         stop=tuple(control.construct_closed_by)) + 1

    def next_iteration(self, code: tuple[Instruction, ...], pc: int) -> int:
        kinds = load_default().control.effects[NEXT_ITERATION].jumps_to
        target = next((b for b in self.enclosing(code, pc) if b[0] in kinds), None)
        if target is None:  # an ill-formed program a non-validating translator was given
            raise ValueError(f"no enclosing {' or '.join(kinds)} for line {code[pc].line}")
        return target[1] + 1

    def select(self, code: tuple[Instruction, ...], pc: int, value: int) -> int:
        """The entry a select chooses (bitwise), else its default, else after its end."""
        control = load_default().control
        end = self.scan(code, pc, forward=True, stop=(SELECT_END,))
        default = None
        depth = 0
        for k in range(pc + 1, end):
            effect = control.effect_of(code[k].name)
            if effect in control.construct_opened_by:
                depth += 1
            elif effect in control.construct_closed_by:
                depth -= 1
            elif effect == ENTRY and depth == 0:
                operands = code[k].operands
                if not operands:
                    default = k
                elif operands[0].values[0] == value:
                    return k + 1
        return default + 1 if default is not None else end + 1

    def call_allowed(self, depth: int) -> bool:
        """Whether a call made with ``depth`` entries on the return stack enters."""
        return depth < load_default().control.limits.call_depth

    def rejects(self, program: Program, vector: Vector) -> str | None:
        """The first legality rule the instance breaks (the oracle's checker), or None."""
        state = request_state(vector)
        for rule in violations(program, vector.target, vector.runtime, state):
            if not self.overlooks(rule, vector):
                return rule.id
        return self.also_rejects(program, vector)

    def also_rejects(self, program: Program, vector: Vector) -> str | None:
        """Validating mutants that are too strict reject some legal programs."""
        return None

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        """Validating mutants overlook some rules."""
        return False

    # -- operands ------------------------------------------------------------------------------

    def swizzled(self, op: Operand, m: Machine) -> list[int]:
        """The four components of a source after its swizzle or select."""
        if op.file == "d":  # d(a) or d(a, b): doubles, low word first
            pair = list(op.values) * (2 // len(op.values))
            return [w for v in pair for w in (v & U32, v >> 32)]
        if op.is_immediate:
            return list(op.values) if len(op.values) == 4 else [op.values[0]] * 4
        if op.element is not None:
            reg = self.element_words(op, m)
        elif op.index is None:
            return [0, 0, 0, 0]  # the compute inputs: thread 0 of group 0
        else:
            reg = m.registers[op.register]
        letters = (op.components or "xyzw").ljust(4, (op.components or "w")[-1])
        return [reg[COMPONENTS.index(c)] for c in letters[:4]]

    def element_words(self, op: Operand, m: Machine) -> list[int]:
        """The four words of the element an operand names (its index resolved here)."""
        assert op.element is not None
        element = op.element
        if op.relative is not None:
            element = (self.selected(op.relative, m) + element) & U32
        constant = m.resources.get(op.register)
        if constant is None:
            return m.registers.get(storage_name(replace(op, element=element, relative=None)),
                                   [0, 0, 0, 0])
        words = constant["data"]
        element = self.constant_element(op.register, element, len(words) // 4)
        first = 4 * element
        return list(words[first:first + 4]) if first + 4 <= len(words) else [0, 0, 0, 0]

    def selected(self, op: Operand, m: Machine) -> int:
        return self.swizzled(op, m)[0]

    def write_scalar(self, dst: Operand, value: int, m: Machine) -> None:
        """dst0 of an atomic: the one component its mask names."""
        m.registers[dst.register][COMPONENTS.index(dst.components[0])] = value

    # -- addressing ----------------------------------------------------------------------------

    def structured_word(self, res: dict[str, Any], index: int, offset: int) -> int:
        stride: int = res["stride"]
        return (stride * index + offset) // 4

    def structured_in_bounds(self, res: dict[str, Any], index: int, offset: int,
                             words: int) -> bool:
        return offset % 4 == 0 and offset + 4 * words <= res["stride"] and \
            index < res["count"]

    def structured_words(self, res: dict[str, Any], register: str, index: int, offset: int,
                         words: int) -> list[int]:
        """The word indices a structured access touches; [] drops it (out of bounds)."""
        if not self.structured_in_bounds(res, index, offset, words):
            return []
        first = self.structured_word(res, index, offset)
        return list(range(first, first + words))

    def raw_word(self, res: dict[str, Any], address: int) -> int | None:
        if address % 4 or address + 4 > 4 * len(res["data"]):
            return None
        return address // 4

    def typed_word(self, res: dict[str, Any], index: int) -> int | None:
        return index if index < len(res["data"]) else None

    def access_words(self, res: dict[str, Any], register: str, address: list[int],
                     words: int) -> list[int]:
        """The word indices an access of ``words`` components touches; [] drops it."""
        if res["kind"] == "raw":
            # Word by word: the words inside the view, up to the first one that is not (an
            # access that runs past the end keeps its leading words; a misaligned one has none).
            leading: list[int] = []
            for k in range(words):
                word = self.raw_word(res, address[0] + 4 * k)
                if word is None:
                    break
                leading.append(word)
            return leading
        if res["kind"] == "typed":
            word = self.typed_word(res, address[0])
            return [] if word is None else [word]
        return self.structured_words(res, register, address[0], address[1], words)

    def atomic_word(self, res: dict[str, Any], register: str, address: list[int]
                    ) -> int | None:
        words = self.access_words(res, register, address, 1)
        return words[0] if words else None

    # -- memory instructions (from the spec's bindings and kernel) -----------------------------

    def operand(self, ins: InstructionSpec, instruction: Instruction, name: str) -> Operand:
        return instruction.operands[[o.name for o in ins.operands].index(name)]

    def address(self, ins: InstructionSpec, instruction: Instruction, memory: MemoryAccess,
                m: Machine) -> list[int]:
        """[first, second] address component: one swizzled operand, or two selected ones."""
        ops = [self.operand(ins, instruction, name) for name in memory.address]
        if len(ops) == 1:
            return self.swizzled(ops[0], m)[:2]
        return [self.selected(op, m) for op in ops]

    def width(self, ins: InstructionSpec, instruction: Instruction) -> int:
        """How many consecutive components the access touches (its ``components`` input)."""
        source = ins.semantics.input("components").source
        if source.kind == "mask":
            return self.store_count(self.operand(ins, instruction, source.operand).components)
        if source.kind == "reach":
            memory = self.operand(ins, instruction, source.operand)
            mask = self.operand(ins, instruction, source.mask).components
            letters = (memory.components or "xyzw").ljust(4, (memory.components or "w")[-1])
            return 1 + max(COMPONENTS.index(letters[COMPONENTS.index(c)]) for c in mask)
        return source.value

    def store_count(self, mask: str) -> int:
        """How many consecutive words a store writes for its write mask."""
        return len(mask)

    def source_values(self, ins: InstructionSpec, instruction: Instruction, m: Machine
                      ) -> dict[str, int]:
        """The instruction's own register inputs (src0, a comparand, ...), by binding."""
        out: dict[str, int] = {}
        memory = ins.semantics.memory
        address = memory.address if memory is not None else ()
        for item in ins.semantics.inputs:
            if item.source.kind == "operand" and item.source.operand not in address:
                op = self.operand(ins, instruction, item.source.operand)
                out[item.name] = self.swizzled(op, m)[item.source.component]
        return out

    def memory_access(self, ins: InstructionSpec, instruction: Instruction, m: Machine) -> None:
        memory = ins.semantics.memory
        assert memory is not None
        if any(i.name == "invocation" for i in ins.semantics.inputs) and \
                not self.atomic_performed(m.invocation):
            return
        mem = self.operand(ins, instruction, memory.operand)
        if mem.register not in m.resources:
            raise Sm5Error(f"{mem.register} is not a resource of the state")
        res = m.resources[mem.register]
        address = self.address(ins, instruction, memory, m)
        count = self.width(ins, instruction)
        words = [w for w in self.access_words(res, mem.register, address, count)
                 if reachable(res, w)]
        if memory.mode == "write":
            assert memory.value is not None
            values = self.swizzled(self.operand(ins, instruction, memory.value), m)
            for k, word in enumerate(words):
                store(res, word, values[k])
        elif memory.mode in ("rmw", "rmw_return"):
            target = self.atomic_word(res, mem.register, address)
            if target is None or not reachable(res, target):
                return
            self.read_modify_write(ins, instruction, m, res, target)
        else:
            assert memory.returns is not None
            dst = self.operand(ins, instruction, memory.returns)
            letters = (mem.components or "xyzw").ljust(4, (mem.components or "w")[-1])
            window = [load(res, w) for w in words] + [0] * (4 - len(words))
            if res["kind"] == "typed":
                window = self.typed_element(res, words)
            for c in dst.components:
                k = COMPONENTS.index(letters[COMPONENTS.index(c)])
                m.registers[dst.register][COMPONENTS.index(c)] = window[k]

    def typed_element(self, res: dict[str, Any], words: list[int]) -> list[int]:
        """A typed read: the element's words (0 out of range), then the format's defaults."""
        layout = load_default().model.format_layouts[res["format"]]
        element = [res["data"][w] for w in words] or [0] * layout.components
        return element + list(layout.defaults[len(element):])

    # -- view queries and hidden counters (bufinfo, alloc/consume) -----------------------------

    def view_field(self, res: dict[str, Any], file: str, name: str) -> int | str:
        """A field of a bound view, as the spec's ``resource`` bindings name them."""
        if name == "size":
            return 4 * len(res["data"])
        if name == "count" and res["kind"] == "typed":
            return len(res["data"])
        if name == "file":
            return file
        value: int | str = res.get(name, 0)
        return value

    def view_query(self, ins: InstructionSpec, instruction: Instruction, m: Machine) -> None:
        """Read the view's fields, evaluate the spec's derived values, write the masked
        components of the result and the view's new counter."""
        env: dict[str, Any] = {}
        for item in ins.semantics.inputs:
            source = item.source
            if source.kind == "resource":
                op = self.operand(ins, instruction, source.operand)
                env[item.name] = self.view_field(m.resources[op.register], op.file,
                                                 source.field)
        env.update(load_default().model.limits)
        for derived in ins.semantics.derived:
            env[derived.name] = derived.expr.evaluate(env)
        result, counter = ins.semantics.result, ins.semantics.counter
        if result is not None:
            dst = self.operand(ins, instruction, result.operand)
            value = self.query_value(ins, env, result.value)
            for c in dst.components:
                m.registers[dst.register][COMPONENTS.index(c)] = value & U32
        if counter is not None:
            view = self.operand(ins, instruction, counter.operand)
            m.resources[view.register]["counter"] = int(env[counter.value]) & U32

    def query_value(self, ins: InstructionSpec, env: dict[str, Any], value: str) -> int:
        """The value a query writes to its destination (the spec's derived ``value``)."""
        return int(env[value])

    def read_modify_write(self, ins: InstructionSpec, instruction: Instruction, m: Machine,
                          res: dict[str, Any], word: int) -> None:
        """Read the sources and the old word, write the new word, then the returned value."""
        memory = ins.semantics.memory
        assert memory is not None
        old = load(res, word)
        new = self.combine(ins, old, self.source_values(ins, instruction, m))
        store(res, word, new)
        if memory.returns is not None:
            self.write_scalar(self.operand(ins, instruction, memory.returns),
                              self.atomic_returns(old, new), m)

    def atomic_performed(self, invocation: str) -> bool:
        """Helper and discarded invocations do not touch memory."""
        return invocation == "active"

    def combine(self, ins: InstructionSpec, old: int, values: dict[str, int]) -> int:
        """The new memory word: the instruction's kernel from its spec file."""
        memory = ins.semantics.memory
        assert memory is not None and memory.kernel is not None
        return int(memory.kernel.evaluate({**values, "old": old})) & U32

    def atomic_returns(self, old: int, new: int) -> int:
        return old

    # -- dmovc ---------------------------------------------------------------------------------

    def dmovc_condition(self, cond: list[int], lane: int, mask: str) -> int:
        """The src0 component deciding double ``lane`` (0 = .xy, 1 = .zw)."""
        return cond[lane]

    def is_true(self, value: int) -> bool:
        return value != 0

    def dmovc_first_component(self, lane: int, mask: str) -> int:
        return 2 * lane

    def modified(self, bits: int, neg: bool, absolute: bool) -> int:
        if absolute:
            bits &= ~SIGN64
        if neg:
            bits ^= SIGN64
        return bits

    def saturated(self, bits: int) -> int:
        value = f64(bits)
        if math.isnan(value):
            return 0
        return bits64(min(1.0, max(0.0, value)))

    def dmovc(self, ins: Instruction, m: Machine) -> None:
        dest, cond_op, src1_op, src2_op = ins.operands
        cond = self.swizzled(cond_op, m)
        src1 = self.swizzled(src1_op, m)
        src2 = self.swizzled(src2_op, m)
        out = m.registers[dest.register]
        results: list[tuple[int, int]] = []
        for lane, letters in enumerate(("xy", "zw")):
            if letters not in dest.components:
                continue
            chosen = self.is_true(self.dmovc_condition(cond, lane, dest.components))
            op, values = (src1_op, src1) if chosen else (src2_op, src2)
            bits = values[2 * lane] | values[2 * lane + 1] << 32
            bits = self.modified(bits, op.neg, op.abs)
            if ins.sat:
                bits = self.saturated(bits)
            results.append((self.dmovc_first_component(lane, dest.components), bits))
        for first, bits in results:
            out[first], out[first + 1] = bits & U32, bits >> 32
