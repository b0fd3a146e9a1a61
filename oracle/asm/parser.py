"""Parsing SM5 asm text into the program model (``sm5.oracle.machine.program``).

The grammar is data: instruction names, operand roles and component selections come from
``spec.instructions`` and ``spec.auxiliary``; declarations, their flags, numbers and return types
from ``spec.declarations``; register files from ``spec.model.register_files``; target prefixes
from ``spec.model.stages``. It is built once per Spec object.

The parser accepts everything the *syntax* allows and leaves legality to
``sm5.oracle.legality``: a register of a file unusual for its position, a mask outside the spec's
list (``.xz`` where only ``.x``, ``.xy``, ... are listed), ``_sat`` where the instruction has no
saturate, modifiers on any source register. Must-reject vectors are written in this text, so
they have to parse.

AST conventions (``parse(format(x)) == x`` holds for ASTs that follow them):

- ``Operand.selection`` of an instruction operand is always the selection of its position in the
  spec (``mask``, ``swizzle``, ``select`` or ``none``), for registers and immediates alike.
- ``components`` of a register: a mask in xyzw order (``xyzw`` when no dot is written), a
  swizzle of exactly four letters (shorter ones widened by repeating the last letter, ``xyzw``
  when no dot is written), one select letter (required), or ``""`` for selection ``none``.
- An immediate ``l(...)`` has ``components == ""``, one or four u32 ``values`` and no modifiers.
- Single-letter register files other than ``l`` are indexed (``r12``); longer names
  (``vThreadIDInGroupFlattened``) are index-less with ``index None``.
- A declaration's register operand has selection ``none``. ``flags`` holds the suffix flags in
  the spec's order (``dcl_uav_structured_glc``) or the ``dcl_globalFlags`` names as written.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast, get_args

from sm5.oracle.asm.lexer import NUMBER, PUNCT, WORD, Token, shown, tokenize
from sm5.oracle.errors import AsmError, SpecError
from sm5.oracle.machine.program import (
    COMPONENTS,
    IMMEDIATE_BITS,
    LABEL_FILE,
    LABEL_SPELLING,
    NULL_FILE,
    Declaration,
    Instruction,
    Line,
    Operand,
    Program,
    Selection,
)
from sm5.oracle.model.spec import DeclarationSpec, Spec, load_default

IMMEDIATE_FILE = "l"
DOUBLE_IMMEDIATE_FILE = "d"
U64_LIMIT = 1 << 64
ABS_SUFFIX = "_abs"
SAT_SUFFIX = "_sat"
U32_LIMIT = 1 << 32
MAX_LISTED = 12
CACHE_LINES = 1 << 16

_DECIMAL = re.compile(r"([-+]?)0*([0-9]+)", re.ASCII)
_HEX = re.compile(r"([-+]?)0[xX]0*([0-9A-Fa-f]+)", re.ASCII)
_FLOAT = re.compile(r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?", re.ASCII)


#: The operand role of a subroutine label (``call l3``).
LABEL_ROLE = "label"


@dataclass(frozen=True)
class OperandSlot:
    """One operand position of an instruction: its spec name, role and component selection."""

    name: str
    role: str
    selection: Selection


@dataclass(frozen=True)
class Grammar:
    """Everything the parser needs from a Spec, in lookup-friendly form."""

    instructions: Mapping[str, tuple[OperandSlot, ...]]
    #: Suffix flags per instruction that has any, in the spec's order.
    instruction_flags: Mapping[str, tuple[str, ...]]
    #: Flow-control instructions with a test: written with exactly one of their flags
    #: (``_z``/``_nz``), never bare, never with ``_sat``.
    tested: frozenset[str]
    #: Flow-control instructions (no ``_sat`` form).
    control: frozenset[str]
    declarations: Mapping[str, DeclarationSpec]
    declarations_longest_first: tuple[str, ...]
    declaration_prefix: str
    return_types: tuple[str, ...]
    indexed_files: tuple[str, ...]
    named_files: tuple[str, ...]
    #: Files whose operands name an element in brackets (``x0[2]``, ``icb[r0.x + 1]``).
    element_files: frozenset[str]
    #: Other spellings of register files (``vGroupID``), from the declarations' aliases.
    file_aliases: Mapping[str, str]
    #: The mask a declared input of several components is written with (``vThreadID.xyz``).
    input_masks: Mapping[str, str]
    register: re.Pattern[str]
    target: re.Pattern[str]
    # Parsed lines by (text, line number): vector programs repeat the same few lines hundreds of
    # thousands of times. Lines are immutable, so sharing them is safe; errors are not cached.
    parsed: dict[tuple[str, int], Line] = field(default_factory=dict, compare=False, repr=False)

    @property
    def operand_forms(self) -> str:
        def form(name: str, numbered: bool) -> str:
            written = f"{name}#" if numbered else name
            return f"{written}[...]" if name in self.element_files else written

        forms = [form(f, True) for f in self.indexed_files] + [f"{f}(...)" for f in IMMEDIATE_BITS]
        named = [form(f, False) for f in self.named_files if f not in self.file_aliases]
        return ", ".join(forms + named)


_GRAMMARS: dict[int, tuple[Spec, Grammar]] = {}


def grammar_of(spec: Spec | None = None) -> Grammar:
    """The grammar of ``spec`` (the built-in spec by default), built once per Spec object."""
    spec = load_default() if spec is None else spec
    cached = _GRAMMARS.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    grammar = _build_grammar(spec)
    _GRAMMARS[id(spec)] = (spec, grammar)  # keeps spec alive, so its id is not reused
    return grammar


#: The parser's operand role of each flow-control operand role: a condition or a case literal
#: is a source; a label is its own kind (``l3``).
_CONTROL_ROLES = {"condition": "src", "literal": "src", "label": LABEL_ROLE}


def _selection(value: str) -> Selection:
    if value not in get_args(Selection):
        raise SpecError(f"operand selection {value!r} is not one of {get_args(Selection)}")
    return cast(Selection, value)


def _common_prefix(names: Sequence[str]) -> str:
    """The longest prefix all names share (``dcl_``), to tell declarations from instructions."""
    if len(names) < 2:
        return ""
    first, last = min(names), max(names)
    length = 0
    while length < min(len(first), len(last)) and first[length] == last[length]:
        length += 1
    return first[:length]


def _build_grammar(spec: Spec) -> Grammar:
    instructions: dict[str, tuple[OperandSlot, ...]] = {}
    for aux in spec.auxiliary.values():
        instructions[aux.name] = tuple(
            OperandSlot(o.name, o.role, _selection(o.selection)) for o in aux.operands)
    for ins in spec.instructions.values():
        instructions[ins.name] = tuple(
            OperandSlot(o.name, o.role, _selection(o.selection)) for o in ins.operands)
    controls = spec.control.instructions
    for control in controls.values():
        instructions[control.name] = tuple(
            OperandSlot(o.name, _CONTROL_ROLES[o.role], "none" if o.role == "label" else "select")
            for o in control.operands)
    files = [f for f in spec.model.register_files if f.name not in IMMEDIATE_BITS]
    aliases = {alias: meant for d in spec.declarations.declarations.values()
               for alias, meant in d.aliases.items() if meant in spec.model.file_names}
    indexed = tuple(f.name for f in files if f.numbered)
    named = tuple(f.name for f in files if not f.numbered) + tuple(aliases)
    # Both groups always exist (an empty alternation never matches) so lookups need no guard.
    indexed_pattern = "|".join(map(re.escape, sorted(indexed, key=len, reverse=True))) or "(?!)"
    named_pattern = "|".join(map(re.escape, sorted(named, key=len, reverse=True))) or "(?!)"
    register = re.compile(
        f"(?:(?P<file>{indexed_pattern})(?P<index>[0-9]+)|(?P<named>{named_pattern}))"
        f"(?P<abs>{re.escape(ABS_SUFFIX)})?", re.ASCII)
    prefixes = "|".join(re.escape(s.prefix) for s in spec.model.stages)
    decls = spec.declarations.declarations
    return Grammar(
        instructions=instructions,
        instruction_flags={**{i.name: i.flag_names for i in spec.instructions.values() if i.flags},
                           **{c.name: c.flag_names for c in controls.values() if c.test}},
        tested=frozenset(c.name for c in controls.values() if c.test),
        control=frozenset(controls),
        declarations=dict(decls),
        declarations_longest_first=tuple(sorted(decls, key=len, reverse=True)),
        declaration_prefix=_common_prefix(list(decls)),
        return_types=spec.declarations.return_types,
        indexed_files=indexed,
        named_files=named,
        element_files=spec.model.element_files,
        file_aliases=aliases,
        input_masks={f.name: COMPONENTS[:f.components] for f in files
                     if not f.numbered and f.components > 1},
        register=register,
        target=re.compile(f"(?:{prefixes})_[0-9]_[0-9]", re.ASCII),
    )


# --------------------------------------------------------------------------------------------
# Token cursor


class _Cursor:
    """The tokens of one line and a read position; builds AsmErrors located on this line."""

    __slots__ = ("grammar", "line", "pos", "source", "text", "tokens")

    def __init__(self, tokens: list[Token], text: str, line: int, source: str,
                 grammar: Grammar) -> None:
        self.tokens = tokens
        self.text = text
        self.line = line
        self.source = source
        self.grammar = grammar
        self.pos = 0

    def error(self, message: str, column: int) -> AsmError:
        return AsmError(message, line=self.line, column=max(column, 1), text=self.text,
                        source=self.source)

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> Token | None:
        token = self.peek()
        if token is not None:
            self.pos += 1
        return token

    def end_column(self) -> int:
        """Where an error about a missing token at the end of the line points."""
        return self.tokens[-1].end if self.tokens else 1

    def got(self, token: Token | None) -> str:
        return "end of line" if token is None else shown(token.text)

    def where(self, token: Token | None) -> int:
        return self.end_column() if token is None else token.column

    def expect_punct(self, char: str, what: str) -> Token:
        token = self.next()
        if token is None or token.kind != PUNCT or token.text != char:
            raise self.error(f"expected {what}, got {self.got(token)}", self.where(token))
        return token

    def at_punct(self, char: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == PUNCT and token.text == char

    def expect_end(self, after: str) -> None:
        token = self.peek()
        if token is not None:
            raise self.error(f"expected end of line after {after}, got {shown(token.text)}",
                             token.column)


# --------------------------------------------------------------------------------------------
# Numbers


def _u32_integer(text: str) -> int | None:
    """A decimal or hex integer literal as u32 (negative decimal in two's complement), None if
    the text is not an integer literal; raises ValueError if out of range."""
    match = _HEX.fullmatch(text)
    if match is not None:
        sign, digits = match.groups()
        if len(digits) > 8:
            raise ValueError
        value = int(digits, 16)
    else:
        match = _DECIMAL.fullmatch(text)
        if match is None:
            return None
        sign, digits = match.groups()
        if len(digits) > 10:
            raise ValueError
        value = int(digits)
    if sign == "-":
        if value > 1 << 31:
            raise ValueError
        return (U32_LIMIT - value) % U32_LIMIT if value else 0
    if value >= U32_LIMIT:
        raise ValueError
    return value


def _f32_bits(text: str) -> int | None:
    """The IEEE single bits of a float literal, None if the text is not one; raises ValueError
    if it does not fit a finite f32."""
    if _FLOAT.fullmatch(text) is None:
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    try:
        packed = struct.pack("<f", value)
    except OverflowError:
        raise ValueError from None
    bits: int = struct.unpack("<I", packed)[0]
    return bits


def _f64_bits(text: str) -> int | None:
    """A 64-bit immediate: ``0x`` and up to 16 hex digits is the bit pattern itself; a decimal
    integer or float literal is the double nearest its value (round to nearest even). None if
    the text is neither; ValueError if the pattern needs more than 64 bits or the value is not
    a finite double."""
    match = _HEX.fullmatch(text)
    if match is not None:
        sign, digits = match.groups()
        if sign or len(digits) > 16:
            raise ValueError
        return int(digits, 16)
    if _FLOAT.fullmatch(text) is None:
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    bits: int = struct.unpack("<Q", struct.pack("<d", value))[0]
    return bits


def _double_value(cur: _Cursor, token: Token) -> int:
    try:
        value = _f64_bits(token.text)
    except ValueError:
        raise cur.error(f"number {shown(token.text)} out of range: a 64-bit immediate is a "
                        f"finite double or 0x and at most 16 hex digits (its bit pattern)",
                        token.column) from None
    if value is None:
        raise cur.error(f"bad number {shown(token.text)}: expected a decimal or float literal "
                        f"(a double) or 0x hex (its bit pattern)", token.column)
    return value


def _immediate_value(cur: _Cursor, token: Token) -> int:
    try:
        value = _u32_integer(token.text)
        if value is None:
            value = _f32_bits(token.text)
    except ValueError:
        raise cur.error(f"number {shown(token.text)} out of range: an immediate is a 32-bit "
                        f"integer (-2147483648 to 4294967295) or a finite float",
                        token.column) from None
    if value is None:
        raise cur.error(f"bad number {shown(token.text)}: expected a decimal, 0x hex or float "
                        f"literal", token.column)
    return value


def _declaration_number(cur: _Cursor, token: Token | None, what: str) -> int:
    if token is None or token.kind != NUMBER:
        raise cur.error(f"expected {what}, got {cur.got(token)}", cur.where(token))
    negative = token.text.startswith("-")
    try:
        value = _u32_integer(token.text)
    except ValueError:
        value = -1
    if value is None or negative:
        raise cur.error(f"bad number {shown(token.text)}: expected a non-negative decimal or 0x "
                        f"hex integer", token.column)
    if value < 0:
        raise cur.error(f"number {shown(token.text)} out of range: at most 4294967295",
                        token.column)
    return value


# --------------------------------------------------------------------------------------------
# Operands


@dataclass(frozen=True)
class _RawOperand:
    """An operand as written, before its position gives the dot letters their meaning."""

    column: int
    operand: Operand  # file, index, values, neg, abs filled in
    modifier_column: int  # column of the first modifier, 0 if none
    letters: str | None  # after the dot; None if no dot
    letters_column: int
    register_column: int  # column of the register name (blamed for a missing select)


def _register_index(cur: _Cursor, token: Token, digits: str, file: str) -> int:
    significant = digits.lstrip("0")
    if len(significant) > 10 or int(significant or "0") >= U32_LIMIT:
        raise cur.error(f"register index {shown(digits)} of {file}# out of range: at most "
                        f"4294967295", token.column + len(file))
    return int(significant or "0")


def _raw_operand(cur: _Cursor) -> _RawOperand:
    first = cur.peek()
    if first is None:
        raise cur.error("expected an operand, got end of line", cur.end_column())
    column = first.column
    neg = bar = False
    modifier_column = 0
    if cur.at_punct("-"):
        cur.next()
        neg = True
        modifier_column = column
    bar_token = cur.peek()
    if cur.at_punct("|"):
        cur.next()
        bar = True
        modifier_column = modifier_column or column
    token = cur.next()
    if token is None or token.kind != WORD:
        raise cur.error(f"expected an operand ({cur.grammar.operand_forms}), got "
                        f"{cur.got(token)}", cur.where(token))
    if token.text in IMMEDIATE_BITS and cur.at_punct("("):
        if modifier_column:
            raise cur.error("modifiers (-, |...|, _abs) are not allowed on an immediate",
                            modifier_column)
        values = _immediate_values(cur, token)
        dot = cur.peek()
        if cur.at_punct("."):
            assert dot is not None
            raise cur.error("an immediate takes no component selection", dot.column)
        return _RawOperand(column, Operand(token.text, values=values), 0, None, 0,
                           token.column)
    match = cur.grammar.register.fullmatch(token.text)
    if match is None:
        if token.text in IMMEDIATE_BITS:
            after = cur.peek()
            raise cur.error(f"expected '(' after {token.text!r}, got {cur.got(after)}",
                            cur.where(after))
        if token.text in cur.grammar.indexed_files:
            raise cur.error(f"expected a register number after {shown(token.text)}",
                            token.end)
        raise cur.error(f"expected an operand ({cur.grammar.operand_forms}), got "
                        f"{shown(token.text)}", token.column)
    named = match.group("named")
    if named is not None:
        file, index = cur.grammar.file_aliases.get(named, named), None
    else:
        file = match.group("file")
        index = _register_index(cur, token, match.group("index"), file)
    element: int | None = None
    relative: Operand | None = None
    register_end = token.end
    if cur.at_punct("["):
        if file not in cur.grammar.element_files or match.group("abs") is not None:
            bracket = cur.peek()
            assert bracket is not None
            raise cur.error(f"{shown(token.text)} takes no element index (the files with "
                            f"elements: {', '.join(sorted(cur.grammar.element_files))})",
                            bracket.column)
        element, relative = _element(cur, token.text)
        register_end = cur.tokens[cur.pos - 1].end
    elif file in cur.grammar.element_files:
        raise cur.error(f"expected '[' and an element index after {shown(token.text)}",
                        token.end)
    abs_suffix = match.group("abs") is not None
    if abs_suffix:
        if bar:
            raise cur.error("absolute value given twice (|...| and _abs)",
                            token.end - len(ABS_SUFFIX))
        modifier_column = modifier_column or token.end - len(ABS_SUFFIX)
    letters: str | None = None
    letters_column = 0
    dot = cur.peek()
    if cur.at_punct("."):
        assert dot is not None
        if dot.column != register_end:
            raise cur.error("no space allowed before '.'", dot.column)
        cur.next()
        word = cur.next()
        if word is None or word.kind != WORD or word.column != dot.end:
            raise cur.error(f"expected component letters (x, y, z, w) right after '.', got "
                            f"{cur.got(word)}", cur.where(word))
        for i, char in enumerate(word.text):
            if char not in COMPONENTS:
                raise cur.error(f"expected component letters x, y, z, w after '.', got "
                                f"{shown(word.text)}", word.column + i)
        letters, letters_column = word.text, word.column
    if bar:
        closing = cur.peek()
        if not cur.at_punct("|"):
            raise cur.error(f"expected '|' closing the absolute value opened at column "
                            f"{bar_token.column if bar_token else column}, got "
                            f"{cur.got(closing)}", cur.where(closing))
        cur.next()
    operand = Operand(file, index, neg=neg, abs=bar or abs_suffix, element=element,
                      relative=relative)
    return _RawOperand(column, operand, modifier_column, letters, letters_column, token.column)


def _element(cur: _Cursor, register: str) -> tuple[int, Operand | None]:
    """``[n]``, ``[reg.c]`` or ``[reg.c + n]`` after ``register``: the number (0 when none is
    written) and the register component added to it. The register is any operand with one
    component selected; which files may index is legality's (``program.relative_index``)."""
    cur.expect_punct("[", "'['")
    relative: Operand | None = None
    token = cur.peek()
    if token is not None and token.kind == WORD:
        raw = _raw_operand(cur)
        if raw.modifier_column:
            raise cur.error("an element index takes no modifiers", raw.modifier_column)
        if raw.operand.is_immediate or raw.letters is None or len(raw.letters) != 1:
            raise cur.error(f"an element index of {shown(register)} is a number or one "
                            f"component of a register (r1.x), optionally plus a number",
                            raw.column)
        op = raw.operand
        relative = Operand(op.file, op.index, (), "select", raw.letters, element=op.element,
                           relative=op.relative)
        token = cur.peek()
        if token is not None and token.kind == PUNCT and token.text == "]":
            cur.next()
            return 0, relative
        if cur.at_punct("+"):
            cur.next()
            token = cur.peek()
        elif token is None or token.kind != NUMBER or not token.text.startswith("+"):
            raise cur.error(f"expected '+' and a number, or ']', after the index register, "
                            f"got {cur.got(token)}", cur.where(token))
    token = cur.next()
    what = f"an element number of {shown(register)}"
    number = _declaration_number(cur, _unsigned(token), what)
    cur.expect_punct("]", f"']' closing the element index of {shown(register)}")
    return number, relative


def _unsigned(token: Token | None) -> Token | None:
    """A ``+5`` number token as ``5`` (``r0.x+5`` is lexed with the sign on the number)."""
    if token is not None and token.kind == NUMBER and token.text.startswith("+"):
        return Token(NUMBER, token.text[1:], token.column + 1)
    return token


def _immediate_values(cur: _Cursor, l_token: Token) -> tuple[int, ...]:
    """The values of ``l(...)`` (1 or 4 words) or ``d(...)`` (1 or 2 doubles' bit patterns)."""
    name = l_token.text
    double = IMMEDIATE_BITS[name] == 64
    counts = (1, 2) if double else (1, 4)
    cur.expect_punct("(", "'('")
    values: list[int] = []
    while True:
        token = cur.next()
        if token is None:
            raise cur.error(f"unterminated {name}(...): expected a number and ')'",
                            cur.end_column())
        if token.kind != NUMBER:
            raise cur.error(f"expected a number in {name}(...), got {shown(token.text)}",
                            token.column)
        if len(values) == counts[1]:
            raise cur.error(f"too many immediate values: {name}(...) takes {counts[0]} or "
                            f"{counts[1]} values", token.column)
        values.append(_double_value(cur, token) if double else _immediate_value(cur, token))
        token = cur.next()
        if token is None:
            raise cur.error(f"unterminated {name}(...): expected ')'", cur.end_column())
        if token.kind == PUNCT and token.text == ")":
            break
        if not (token.kind == PUNCT and token.text == ","):
            raise cur.error(f"expected ',' or ')' in {name}(...), got {shown(token.text)}",
                            token.column)
    if len(values) not in counts:
        raise cur.error(f"{name}(...) takes {counts[0]} or {counts[1]} values, got "
                        f"{len(values)}", l_token.column)
    return tuple(values)


def _mask(cur: _Cursor, letters: str, column: int) -> str:
    last = -1
    for i, char in enumerate(letters):
        position = COMPONENTS.index(char)
        if position == last:
            raise cur.error(f"mask letter {char!r} repeats", column + i)
        if position < last:
            raise cur.error(f"mask letters must be in xyzw order, got {shown(letters)}",
                            column + i)
        last = position
    return letters


def _place(cur: _Cursor, raw: _RawOperand, slot: OperandSlot, instruction: str,
           number: int) -> Operand:
    """Give a raw operand the meaning of its position: selection, components, modifiers."""
    op = raw.operand
    what = f"operand {number} ({slot.name}) of {instruction}"
    if raw.modifier_column and slot.role != "src":
        raise cur.error(f"modifiers (-, |...|, _abs) are not allowed on {what}: it is a "
                        f"{slot.role} operand", raw.modifier_column)
    letters = raw.letters
    selection = slot.selection
    if op.is_immediate:
        components = ""
    elif op.file == NULL_FILE:  # the null register holds no components: nothing to select
        if letters is not None:
            raise cur.error(f"the null register takes no component selection ({what})",
                            raw.letters_column - 1)
        selection, components = "none", ""
    elif selection == "none":
        if letters is not None:
            raise cur.error(f"{what} takes no component selection", raw.letters_column - 1)
        components = ""
    elif selection == "mask":
        components = "xyzw" if letters is None else _mask(cur, letters, raw.letters_column)
    elif selection == "swizzle":
        if letters is None:
            components = COMPONENTS
        elif len(letters) > 4:
            raise cur.error(f"a swizzle has 1 to 4 letters, got {shown(letters)}",
                            raw.letters_column)
        else:
            components = letters + letters[-1] * (4 - len(letters))
    else:
        if letters is None:
            raise cur.error(f"expected .x/.y/.z/.w select for {what}", raw.register_column)
        if len(letters) != 1:
            raise cur.error(f"expected .x/.y/.z/.w select (one letter) for {what}, got "
                            f"{shown(letters)}", raw.letters_column)
        components = letters
    return Operand(op.file, op.index, op.values, selection, components, op.neg, op.abs,
                   op.element, op.relative)


# --------------------------------------------------------------------------------------------
# Lines


def _instruction(cur: _Cursor, name_token: Token, name: str, sat: bool,
                 flags: tuple[str, ...] = ()) -> Instruction:
    slots = cur.grammar.instructions[name]
    raws: list[_RawOperand] = []
    if cur.peek() is not None:
        while True:
            if len(raws) < len(slots) and slots[len(raws)].role == LABEL_ROLE:
                raws.append(_label_operand(cur, name, len(raws) + 1))
            else:
                raws.append(_raw_operand(cur))
            token = cur.next()
            if token is None:
                break
            if token.kind != PUNCT or token.text != ",":
                raise cur.error(f"expected ',' or end of line after an operand, got "
                                f"{shown(token.text)}", token.column)
    if len(raws) != len(slots):
        column = raws[len(slots)].column if len(raws) > len(slots) else cur.end_column()
        raise cur.error(f"{name} takes {len(slots)} operands, got {len(raws)}", column)
    operands = tuple(_place(cur, raw, slot, name, i + 1)
                     for i, (raw, slot) in enumerate(zip(raws, slots, strict=True)))
    return Instruction(name, operands, sat, line=cur.line, flags=flags)


def _label_operand(cur: _Cursor, instruction: str, number: int) -> _RawOperand:
    """A subroutine label ``l3``: no modifiers, no components, a number that fits 32 bits."""
    token = cur.next()
    what = f"operand {number} of {instruction}"
    if (token is None or token.kind != WORD or not token.text.startswith(LABEL_SPELLING)
            or not token.text[len(LABEL_SPELLING):].isdigit()
            or not token.text[len(LABEL_SPELLING):].isascii()):
        raise cur.error(f"expected a label {LABEL_SPELLING}# for {what}, got {cur.got(token)}",
                        cur.where(token))
    index = _register_index(cur, token, token.text[len(LABEL_SPELLING):], LABEL_SPELLING)
    if cur.at_punct("."):
        dot = cur.peek()
        assert dot is not None
        raise cur.error(f"a label takes no component selection ({what})", dot.column)
    return _RawOperand(token.column, Operand(LABEL_FILE, index), 0, None, 0, token.column)


def _suffix_flags(cur: _Cursor, token: Token, name: str, allowed: tuple[str, ...],
                  suffix: str) -> tuple[str, ...]:
    """The ``_flag`` suffixes after ``name``: each one of ``allowed``, once, in that order."""
    flags: list[str] = []
    column = token.column + len(name) + 1
    for flag in suffix.split("_"):
        if flag not in allowed:
            listed = f"flags {', '.join(allowed)}" if allowed else "no flags"
            raise cur.error(f"{name} takes {listed}; got {shown('_' + flag)}", column - 1)
        if flags and allowed.index(flag) <= allowed.index(flags[-1]):
            raise cur.error(f"flags of {name} are written once each, in the order "
                            f"{', '.join(allowed)}; got {shown(token.text)}",
                            column - 1)
        flags.append(flag)
        column += len(flag) + 1
    return tuple(flags)


def _return_type(cur: _Cursor, spec: DeclarationSpec) -> tuple[str, ...]:
    cur.expect_punct("(", f"'(' starting the return type of {spec.name}")
    types: list[str] = []
    while True:
        token = cur.next()
        if token is None or token.kind != WORD or token.text not in cur.grammar.return_types:
            raise cur.error(f"expected a return type ({', '.join(cur.grammar.return_types)}), "
                            f"got {cur.got(token)}", cur.where(token))
        types.append(token.text)
        if len(types) == 4:
            cur.expect_punct(")", "')': a return type has 4 components")
            return tuple(types)
        separator = cur.next()
        if separator is not None and separator.kind == PUNCT and separator.text == ")":
            raise cur.error(f"a return type has 4 components, got {len(types)}",
                            separator.column)
        if separator is None or separator.kind != PUNCT or separator.text != ",":
            raise cur.error(f"expected ',' in the return type, got {cur.got(separator)}",
                            cur.where(separator))


@dataclass(frozen=True)
class _Declared:
    """A declared register as written: the operand, the element count a sized declaration
    writes in brackets, and the components an FS-spelled mask (``x0[4].xy``) gives."""

    operand: Operand
    size: int | None
    mask_components: int | None


def _declared_register(cur: _Cursor, spec: DeclarationSpec) -> _Declared:
    files = spec.registers
    wanted = " or ".join(f"{f}#" if f in cur.grammar.indexed_files else f for f in files)
    token = cur.next()
    match = None
    if token is not None and token.kind == WORD:
        match = cur.grammar.register.fullmatch(token.text)
    file = None
    if match is not None and match.group("abs") is None:
        named = match.group("named")
        file = match.group("file") or cur.grammar.file_aliases.get(named, named)
    if file is None or file not in files:
        raise cur.error(f"{spec.name} declares a {wanted} register, got {cur.got(token)}",
                        cur.where(token))
    assert token is not None and match is not None
    index = (_register_index(cur, token, match.group("index"), file)
             if match.group("index") is not None else None)
    size: int | None = None
    if spec.sized:
        cur.expect_punct("[", f"'[' and the element count of {shown(token.text)}")
        size = _declaration_number(cur, cur.next(), f"the element count of {shown(token.text)}")
        cur.expect_punct("]", f"']' after the element count of {shown(token.text)}")
    mask = cur.grammar.input_masks.get(file, "")
    dot = cur.peek()
    if not cur.at_punct("."):
        return _Declared(Operand(file, index, (), "mask" if mask else "none", mask), size, None)
    assert dot is not None
    cur.next()
    word = cur.next()
    letters = word.text if word is not None and word.kind == WORD else ""
    if spec.sized and len(spec.numbers) > 1 and letters and COMPONENTS.startswith(letters):
        return _Declared(Operand(file, index), size, len(letters))
    if not mask or letters != mask:
        if not mask:
            raise cur.error("a declared register takes no component selection", dot.column)
        raise cur.error(f"a declared {file} register takes the mask .{mask}", dot.column)
    return _Declared(Operand(file, index, (), "mask", mask), size, None)


def _listed_elements(cur: _Cursor, spec: DeclarationSpec) -> tuple[int, ...]:
    """``{ { a, b, c, d }, ... }``: the values of 4-value elements, in order."""
    values: list[int] = []
    cur.expect_punct("{", f"'{{' starting the elements of {spec.name}")
    if cur.at_punct("}"):
        cur.next()
        return ()
    while True:
        cur.expect_punct("{", "'{' starting an element (4 values)")
        for k in range(4):
            if k:
                cur.expect_punct(",", f"',' and value {k + 1} of 4 of an element")
            token = cur.next()
            if token is None or token.kind != NUMBER:
                raise cur.error(f"expected value {k + 1} of 4 of an element, got "
                                f"{cur.got(token)}", cur.where(token))
            values.append(_immediate_value(cur, token))
        cur.expect_punct("}", "'}': an element holds 4 values")
        if cur.at_punct("}"):
            cur.next()
            return tuple(values)
        cur.expect_punct(",", "',' and the next element, or '}'")


def _access_pattern(cur: _Cursor, spec: DeclarationSpec) -> str:
    cur.expect_punct(",", f"',' and the access pattern ({' or '.join(spec.access)})")
    token = cur.next()
    word = token.text if token is not None and token.kind == WORD else ""
    meant = spec.aliases.get(word, word)
    if meant not in spec.access:
        raise cur.error(f"expected an access pattern ({' or '.join(spec.access)}), got "
                        f"{cur.got(token)}", cur.where(token))
    return meant


def _global_flags(cur: _Cursor, spec: DeclarationSpec) -> tuple[str, ...]:
    flags: list[str] = []
    while True:
        token = cur.next()
        if token is None or token.kind != WORD or token.text not in spec.global_flags:
            raise cur.error(f"expected a global flag ({', '.join(spec.global_flags)}), got "
                            f"{cur.got(token)}", cur.where(token))
        if token.text in flags:
            raise cur.error(f"global flag {token.text!r} repeats", token.column)
        flags.append(token.text)
        if not cur.at_punct("|"):
            return tuple(flags)
        cur.next()


def _declaration(cur: _Cursor, token: Token, spec: DeclarationSpec,
                 flags: tuple[str, ...]) -> Declaration:
    return_type = _return_type(cur, spec) if spec.return_type else ()
    numbers: list[int] = []
    register = None
    if spec.listed:
        register = Operand(spec.registers[0])
        numbers.extend(_listed_elements(cur, spec))
    elif spec.registers:
        declared = _declared_register(cur, spec)
        register = declared.operand
        if declared.size is not None:
            numbers.append(declared.size)
        if declared.mask_components is not None:
            numbers.append(declared.mask_components)
    for i, number_name in enumerate(spec.numbers[len(numbers):], len(numbers)):
        what = f"a number ({number_name}) for {spec.name}"
        if i > 0 or register is not None:
            cur.expect_punct(",", f"',' and {what}")
        numbers.append(_declaration_number(cur, cur.next(), what))
    if spec.access:
        flags = (*flags, _access_pattern(cur, spec))
    if spec.global_flags:
        flags = flags + _global_flags(cur, spec)
    cur.expect_end(spec.name)
    return Declaration(spec.name, register, tuple(numbers), flags, return_type, line=cur.line)


def _unknown_name(cur: _Cursor, token: Token) -> AsmError:
    grammar = cur.grammar
    if grammar.declaration_prefix and token.text.startswith(grammar.declaration_prefix):
        kind, names = "declaration", sorted(grammar.declarations)
    else:
        kind, names = "instruction", sorted(grammar.instructions)
    listed = ", ".join(names[:MAX_LISTED]) + (", ..." if len(names) > MAX_LISTED else "")
    return cur.error(f"unknown {kind} {shown(token.text)}; expected one of {listed}",
                     token.column)


def _line(cur: _Cursor) -> Line:
    token = cur.next()
    if token is None:
        raise cur.error("expected an instruction or a declaration, got an empty line", 1)
    if token.kind != WORD:
        raise cur.error(f"expected an instruction or declaration name, got "
                        f"{shown(token.text)}", token.column)
    grammar = cur.grammar
    word = token.text
    if word in grammar.instructions:
        if word in grammar.tested:
            raise cur.error(f"{word} is written with a test: {word}_z (acts when all 32 bits "
                            f"are zero) or {word}_nz (when any bit is set)", token.end)
        return _instruction(cur, token, word, False)
    declaration = grammar.declarations.get(word)
    if declaration is not None:
        return _declaration(cur, token, declaration, ())
    if word.endswith(SAT_SUFFIX) and word[:-len(SAT_SUFFIX)] in grammar.instructions:
        if word[:-len(SAT_SUFFIX)] in grammar.control:
            raise cur.error(f"{word[:-len(SAT_SUFFIX)]} is flow control: it takes no "
                            f"{SAT_SUFFIX}", token.end - len(SAT_SUFFIX))
        return _instruction(cur, token, word[:-len(SAT_SUFFIX)], True)
    for name, allowed in grammar.instruction_flags.items():
        if word.startswith(name + "_"):
            suffix = word[len(name) + 1:]
            sat = suffix.endswith(SAT_SUFFIX)
            if name in grammar.control and (sat or len(suffix.split("_")) != 1):
                tests = ", ".join("_" + f for f in allowed)
                raise cur.error(f"{name} takes one test suffix ({tests}) and no other; got "
                                f"{shown(token.text)}", token.column)
            flags = _suffix_flags(cur, token, name, allowed,
                                  suffix[:-len(SAT_SUFFIX)] if sat else suffix)
            return _instruction(cur, token, name, sat, flags)
    for name in grammar.declarations_longest_first:
        if word.startswith(name + "_"):
            declaration = grammar.declarations[name]
            flags = _suffix_flags(cur, token, name, declaration.flags, word[len(name) + 1:])
            return _declaration(cur, token, declaration, flags)
    if grammar.target.fullmatch(word):
        raise cur.error(f"a target line ({word}) is allowed only as the first line of a "
                        f"program", token.column)
    raise _unknown_name(cur, token)


def _cursor(text: str, line: int, source: str, grammar: Grammar) -> _Cursor:
    if not isinstance(text, str):
        raise AsmError(f"a line must be text, got {type(text).__name__}", line=line, column=1,
                       source=source)
    return _Cursor(tokenize(text, line=line, source=source), text, line, source, grammar)


def _remember(grammar: Grammar, text: str, line: int, parsed: Line) -> Line:
    if len(grammar.parsed) >= CACHE_LINES:
        grammar.parsed.clear()
    grammar.parsed[text, line] = parsed
    return parsed


def parse_line(text: str, *, line: int = 1, source: str = "<asm>",
               spec: Spec | None = None) -> Line:
    """One instruction or declaration line; raises AsmError (1-based line and column)."""
    grammar = grammar_of(spec)
    if isinstance(text, str):
        hit = grammar.parsed.get((text, line))
        if hit is not None:
            return hit
    return _remember(grammar, text, line, _line(_cursor(text, line, source, grammar)))


def parse_program(text: str | Sequence[str], *, source: str = "<asm>",
                  spec: Spec | None = None) -> Program:
    """A program from text or a list of lines.

    The first line that is not blank or a comment may be a target (``cs_5_0``). ``//`` starts a
    comment anywhere. Line numbers are 1-based positions in the input.
    """
    grammar = grammar_of(spec)
    lines = text.split("\n") if isinstance(text, str) else text
    if not isinstance(lines, Sequence):
        raise AsmError(f"a program must be text or a list of lines, got "
                       f"{type(lines).__name__}", line=1, column=1, source=source)
    target: str | None = None
    parsed: list[Line] = []
    seen_line = False
    for number, raw in enumerate(lines, 1):
        hit = grammar.parsed.get((raw, number)) if isinstance(raw, str) else None
        if hit is not None:
            parsed.append(hit)
            seen_line = True
            continue
        cur = _cursor(raw, number, source, grammar)
        if not cur.tokens:
            continue
        if not seen_line:
            seen_line = True
            first = cur.tokens[0]
            if first.kind == WORD and grammar.target.fullmatch(first.text):
                cur.next()
                cur.expect_end(f"target {first.text}")
                target = first.text
                continue
        parsed.append(_remember(grammar, raw, number, _line(cur)))
    return Program(tuple(parsed), target)


def forget_parsed() -> None:
    """Forget every parsed line and vector program, as in a fresh process (for benchmarks)."""
    for _, grammar in _GRAMMARS.values():
        grammar.parsed.clear()
    parse_vector_program.cache_clear()


@lru_cache(maxsize=4096)
def parse_vector_program(lines: tuple[str, ...]) -> Program:
    """The program of a vector (a tuple of lines), parsed once per distinct text: programs repeat
    across the vectors of a file. Errors name the source ``program``."""
    return parse_program(list(lines), source="program")
