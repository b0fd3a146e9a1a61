"""The asm program model: operands, instructions and declarations, as frozen values.

The parser produces these, the printer writes them back, the legality checker, the executor and the
DXBC encoder consume them. Text spelling details (``_abs`` versus ``|x|``) are not kept: the printer
writes one canonical form, and ``parse(print(p)) == p`` holds for every program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

Selection = Literal["none", "mask", "swizzle", "select"]

COMPONENTS = "xyzw"

#: The immediate files and the width of one value: ``l(...)`` holds 1 or 4 32-bit values,
#: ``d(...)`` 1 or 2 doubles as 64-bit patterns (D3D10_SB_OPERAND_TYPE_IMMEDIATE32 / 64).
IMMEDIATE_BITS: dict[str, int] = {"l": 32, "d": 64}

#: The null register (D3D10_SB_OPERAND_TYPE_NULL): a destination whose result is discarded.
NULL_FILE = "null"

#: A subroutine label ``l#`` (D3D10_SB_OPERAND_TYPE_LABEL), operand of the instructions that
#: call or start a subroutine; written ``l3`` (the immediate ``l`` is always followed by ``(``).
LABEL_FILE = "label"
LABEL_SPELLING = "l"


@dataclass(frozen=True)
class Operand:
    """One operand.

    ``file`` is the register file as written before the number (``r``, ``u``, ``g``), ``l`` for a
    32-bit immediate, ``d`` for a 64-bit one (``values`` then holds doubles' bit patterns), or
    the name of an index-less input register (``vThreadIDInGroupFlattened``); ``cb``, ``x`` and
    ``icb`` name an element (``element``, ``relative``).
    ``components`` holds the letters after the dot, interpreted by ``selection``: a write mask
    (``xy``), a four-letter swizzle (``xyyy``; shorter swizzles are widened by repeating the last
    letter) or one selected component (``x``).
    """

    file: str
    index: int | None = None
    values: tuple[int, ...] = ()
    selection: Selection = "none"
    components: str = ""
    neg: bool = False
    abs: bool = False
    #: The element an operand of an element file names in brackets (``x0[2]``, ``cb1[r0.x +
    #: 2]``, ``icb[5]``): the number written (0 when only a register is), and the register
    #: component added to it (``relative``: an r# or a numbered x# element, one component
    #: selected), or None.
    element: int | None = None
    relative: Operand | None = None

    #: Derived at construction (not compared, hashed or printed): every checker and the
    #: semantics ask for them, and operands are shared by the programs that parse the same line.
    register: str = field(init=False, repr=False, compare=False)
    is_immediate: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The register name (``r3``, ``u0``), or the file of an index-less operand.
        object.__setattr__(self, "register",
                           self.file if self.index is None else f"{self.file}{self.index}")
        object.__setattr__(self, "is_immediate", self.file in IMMEDIATE_BITS)


@dataclass(frozen=True)
class Instruction:
    """An instruction: its base name, ``_sat``, its operands in order and its suffix flags
    (``_uglobal_t``: ``("uglobal", "t")``), in the order the spec lists them."""

    name: str
    operands: tuple[Operand, ...]
    sat: bool = False
    line: int = field(default=0, compare=False)
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Declaration:
    """A declaration such as ``dcl_uav_structured u0, 16``.

    ``name`` is the full opcode text without flag suffixes (``dcl_uav_typed_buffer``); ``flags``
    holds suffix flags (``glc``) or, for ``dcl_globalFlags``, the flag names; ``numbers`` the
    integer arguments in order; ``return_type`` the ``(uint,uint,uint,uint)`` tuple of typed UAVs.
    """

    name: str
    register: Operand | None = None
    numbers: tuple[int, ...] = ()
    flags: tuple[str, ...] = ()
    return_type: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)


Line = Declaration | Instruction


@dataclass(frozen=True)
class Program:
    """A shader program: optional target header (``cs_5_0``) and lines in order."""

    lines: tuple[Line, ...]
    target: str | None = None
    # Derived views are computed once per program (fields that are not compared, or values
    # cached in the instance's __dict__), so that the checkers that consult them per line stay
    # linear in the program's length.

    #: The declarations and the instructions, in order (derived at construction).
    declarations: tuple[Declaration, ...] = field(init=False, repr=False, compare=False)
    instructions: tuple[Instruction, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "declarations",
                           tuple(x for x in self.lines if isinstance(x, Declaration)))
        object.__setattr__(self, "instructions",
                           tuple(x for x in self.lines if isinstance(x, Instruction)))

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        # A program is a cache key (harness programs, translations): hashed once, not per look-up.
        return hash((self.lines, self.target))

    @cached_property
    def _declaration_by_register(self) -> dict[str, Declaration]:
        found: dict[str, Declaration] = {}
        for decl in self.declarations:
            if decl.register is not None:
                found.setdefault(decl.register.register, decl)
        return found

    def declaration_of(self, register: str) -> Declaration | None:
        """The (first) declaration that declares ``register`` (``u0``, ``g1``), if any."""
        return self._declaration_by_register.get(register)


def element_name(register: str, element: int) -> str:
    """The name of one element of an indexable temp in a state (``x0[3]``)."""
    return f"{register}[{element}]"


def storage_name(op: Operand) -> str:
    """Where a register operand's components live in a state: ``r3``, or ``x0[2]`` for a
    numbered element of an indexable temp (a constant's elements live in its resource)."""
    if op.element is None or op.relative is not None:
        return op.register
    return element_name(op.register, op.element)


def register_file(name: str) -> str:
    """The register file of a register or resource name, its index dropped (``u3`` -> ``u``)."""
    return name.rstrip("0123456789")


def subject_positions(program: Program, subject: str) -> tuple[int, ...]:
    """The positions (among ``program.instructions``) of the instructions a vector is about.

    A vector's subject is data of the vector: its id is ``<subject>/<category>/<number>`` and
    its file's header names the same subject. For an instruction's vectors the subject is that
    instruction, so the positions are those of the instructions of that name; no module chooses
    "the instruction under test" by a rule of its own.
    """
    return tuple(k for k, ins in enumerate(program.instructions) if ins.name == subject)


def subject_of(vector_id: str) -> str:
    """The subject a vector id names (its first part)."""
    return vector_id.split("/", 1)[0]
