"""The tokenized program format: a Program AST to its list of 32-bit tokens.

Every number (opcodes, field positions, operand types, flag bits) comes from the spec data:
instruction opcodes from ``spec/instructions/*.yaml`` and ``spec/auxiliary.yaml``, declaration
structure from ``spec/declarations.yaml``, and everything token-level from
``spec/encoding.yaml``. The encoder judges encodability only, never legality: an illegal but
well-formed instance (``store_structured_sat``) is encoded as written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sm5.oracle.errors import EncodeError, SpecError
from sm5.oracle.machine.program import COMPONENTS, Declaration, Instruction, Operand, Program
from sm5.oracle.model.control import NONZERO_FLAG
from sm5.oracle.model.encoding import DeclarationEncoding, Encoding, load_default_encoding
from sm5.oracle.model.spec import Spec, load_default

DEFAULT_TARGET = "cs_5_0"
#: The opcode token field of a _z/_nz test (D3D10_SB_INSTRUCTION_TEST_BOOLEAN).
TEST_FIELD = "test_boolean"
U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class _Context:
    spec: Spec
    encoding: Encoding


def encode_program(program: Program, *, spec: Spec | None = None,
                   encoding: Encoding | None = None) -> tuple[int, ...]:
    """The program's tokens: version token, length token, then each line in order.

    ``program.target`` picks the version token (``cs_5_0`` when absent).
    """
    ctx = _Context(spec or load_default(), encoding or load_default_encoding())
    body: list[int] = []
    for line in program.lines:
        if isinstance(line, Declaration):
            body.extend(encode_declaration(line, ctx))
        else:
            body.extend(encode_instruction(line, ctx))
    header = version_token(program.target or DEFAULT_TARGET, ctx)
    length = ctx.encoding.header_tokens + len(body)
    return (header, length, *body)


def version_token(target: str, ctx: _Context) -> int:
    try:
        tgt = ctx.spec.model.target(target)
    except SpecError as exc:
        raise EncodeError(exc.message, where="target") from None
    enc = ctx.encoding
    if tgt.stage not in enc.program_types:
        raise EncodeError(f"no program type for stage {tgt.stage!r}", where="target")
    fields = enc.version_token
    return (fields["program_type"].put(enc.program_types[tgt.stage])
            | fields["major"].put(tgt.model // 10) | fields["minor"].put(tgt.model % 10))


def _where(line: int) -> str:
    return f"line {line}" if line else ""


def _opcode_token(opcode: int, length: int, where: str, ctx: _Context, controls: int = 0) -> int:
    enc = ctx.encoding
    if length > enc.max_instruction_length:
        raise EncodeError(f"instruction is {length} DWORDs long; at most "
                          f"{enc.max_instruction_length} fit the length field", where=where)
    fields = enc.opcode_token
    return fields["opcode"].put(opcode) | fields["length"].put(length) | controls


# ----------------------------------------------------------------------------------------------
# Instructions


def encode_instruction(ins: Instruction, ctx: _Context) -> list[int]:
    where = _where(ins.line)
    spec = ctx.spec
    controls = 0
    if ins.name in spec.instructions:
        opcode = spec.instructions[ins.name].opcode
        expected = len(spec.instructions[ins.name].operands)
        by_name = {f.name: f.encoding for f in spec.instructions[ins.name].flags}
        for flag in ins.flags:
            field = by_name.get(flag)
            if field is None or field not in ctx.encoding.opcode_token:
                raise EncodeError(f"{ins.name}: no opcode token field for the flag _{flag}",
                                  where=where)
            controls |= ctx.encoding.opcode_token[field].put(1)
    elif ins.name in spec.control.instructions:
        control = spec.control.instructions[ins.name]
        opcode = control.opcode
        expected = len(control.operands)
        if control.test:  # _nz sets the test-boolean bit, _z leaves it clear
            if len(ins.flags) != 1 or ins.flags[0] not in control.flag_names:
                raise EncodeError(f"{ins.name} needs one test suffix "
                                  f"({', '.join('_' + f for f in control.flag_names)})",
                                  where=where)
            controls |= ctx.encoding.opcode_token[TEST_FIELD].put(
                int(ins.flags[0] == NONZERO_FLAG))
        elif ins.flags:
            raise EncodeError(f"{ins.name} takes no suffix flags", where=where)
    elif ins.name in spec.auxiliary:
        opcode = spec.auxiliary[ins.name].opcode
        expected = len(spec.auxiliary[ins.name].operands)
        for field, value in spec.auxiliary[ins.name].controls:
            if field not in ctx.encoding.opcode_token:
                raise EncodeError(f"{ins.name}: no opcode token field {field!r} in the "
                                  "encoding", where=where)
            controls |= ctx.encoding.opcode_token[field].put(value)
    else:
        known = sorted({*spec.instructions, *spec.control.instructions, *spec.auxiliary})
        raise EncodeError(f"no encoding for instruction {ins.name!r}; known: "
                          f"{', '.join(known)}", where=where)
    if len(ins.operands) != expected:
        raise EncodeError(f"{ins.name} takes {expected} operands, got {len(ins.operands)}",
                          where=where)
    operand_tokens: list[int] = []
    for number, op in enumerate(ins.operands, start=1):
        operand_tokens.extend(encode_operand(op, ctx, f"{where} operand {number}".strip()))
    if ins.sat:
        saturate = ctx.encoding.opcode_token["saturate"].put(1)
        if ins.name in spec.instructions:
            for flag_spec in spec.instructions[ins.name].flags:
                bits = ctx.encoding.opcode_token.get(flag_spec.encoding)
                if bits is not None and bits.put(1) & saturate:
                    raise EncodeError(f"{ins.name}_sat cannot be encoded: its flag "
                                      f"_{flag_spec.name} has the saturate bit", where=where)
        controls |= saturate
    return [_opcode_token(opcode, 1 + len(operand_tokens), where, ctx, controls),
            *operand_tokens]


# ----------------------------------------------------------------------------------------------
# Operands


def encode_operand(op: Operand, ctx: _Context, where: str) -> list[int]:
    """OperandToken0, the extended modifier token if any, the index, the immediate values."""
    enc = ctx.encoding
    optype = enc.operand_types.get(op.file)
    if optype is None:
        raise EncodeError(f"no operand type for register file {op.file!r}; known: "
                          f"{', '.join(sorted(enc.operand_types))}", where=where)
    fields = enc.operand_token
    token = fields["type"].put(optype.type)
    tail: list[int] = []
    if optype.immediate:
        token |= _immediate_components(op, optype.value_dwords, ctx, where)
        if optype.value_dwords == 2:
            for v in op.values:
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 64:
                    raise EncodeError(f"{v!r} does not fit 64 bits", where=where)
                tail.extend((v & U32, v >> 32))
        else:
            tail.extend(_u32(v, f"{where}: immediate value", allow_negative=True)
                        for v in op.values)
    else:
        if op.values:
            raise EncodeError(f"{op.register} carries immediate values", where=where)
        token |= _components(op, optype.bare, optype.scalar, ctx, where)
    index_tokens: list[int] = []
    dimension = 0
    if optype.indexed:
        if op.index is None:
            raise EncodeError(f"register file {op.file!r} needs a register number", where=where)
        token |= enc.index_representation(0).put(enc.index_representations["immediate32"])
        index_tokens.append(_u32(op.index, f"{where}: register number"))
        dimension = 1
    elif op.index is not None:
        raise EncodeError(f"{op.file!r} takes no register number", where=where)
    if optype.elements:
        if op.element is None:
            raise EncodeError(f"{op.register} needs an element index", where=where)
        form = "immediate32" if op.relative is None else "immediate32_plus_relative"
        token |= enc.index_representation(dimension).put(enc.index_representations[form])
        index_tokens.append(_u32(op.element, f"{where}: element index"))
        if op.relative is not None:
            index_tokens.extend(encode_operand(op.relative, ctx, f"{where}: element index"))
        dimension += 1
    elif op.element is not None:
        raise EncodeError(f"{op.file!r} takes no element index", where=where)
    token |= fields["index_dimension"].put(dimension)
    extended = _modifier_token(op, ctx)
    if extended is not None:
        token |= fields["extended"].put(1)
        return [token, extended, *index_tokens, *tail]
    return [token, *index_tokens, *tail]


def _u32(value: int, where: str, *, allow_negative: bool = False) -> int:
    low = -(1 << 31) if allow_negative else 0
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= U32:
        raise EncodeError(f"{value!r} does not fit 32 bits", where=where)
    return value & U32


def _modifier_token(op: Operand, ctx: _Context) -> int | None:
    if not (op.neg or op.abs):
        return None
    enc = ctx.encoding
    name = "abs_neg" if op.neg and op.abs else ("neg" if op.neg else "abs")
    return (enc.extended_operand["type"].put(enc.extended_operand_types["modifier"])
            | enc.extended_operand["modifier"].put(enc.operand_modifiers[name]))


def _immediate_components(op: Operand, value_dwords: int, ctx: _Context, where: str) -> int:
    enc = ctx.encoding
    fields = enc.operand_token
    # The selection of an immediate is that of its operand position; no letters apply to it.
    if op.components:
        raise EncodeError(f"an immediate takes no components, got .{op.components}", where=where)
    if len(op.values) == 1:
        return fields["num_components"].put(enc.num_components["one"])
    if len(op.values) * value_dwords == 4:
        return (fields["num_components"].put(enc.num_components["four"])
                | fields["selection_mode"].put(enc.selection_modes[enc.immediate_vector_mode])
                | fields["mask"].put(enc.immediate_vector_mask))
    raise EncodeError(f"an immediate holds 1 or {4 // value_dwords} values, not "
                      f"{len(op.values)}", where=where)


def _components(op: Operand, bare: str | None, scalar: bool, ctx: _Context, where: str) -> int:
    enc = ctx.encoding
    fields = enc.operand_token
    if op.selection == "none":
        if op.components:
            raise EncodeError(f"{op.register}: components {op.components!r} without a "
                              "selection kind", where=where)
        if bare is None:
            raise EncodeError(f"{op.register} needs a mask, swizzle or select", where=where)
        return fields["num_components"].put(enc.num_components[bare])
    letters = op.components
    if not letters or any(c not in COMPONENTS for c in letters):
        raise EncodeError(f"{op.register}: bad components {letters!r}", where=where)
    if scalar:
        if letters != COMPONENTS[0]:
            raise EncodeError(f"{op.register} has one component; only .{COMPONENTS[0]} "
                              "selects it", where=where)
        return fields["num_components"].put(enc.num_components["one"])
    token = (fields["num_components"].put(enc.num_components["four"])
             | fields["selection_mode"].put(enc.selection_modes[op.selection]))
    names = enc.component_names
    if op.selection == "mask":
        if len(set(letters)) != len(letters) or sorted(letters, key=COMPONENTS.index) != list(
                letters):
            raise EncodeError(f"{op.register}: write mask {letters!r} is not in xyzw order "
                              "without repeats", where=where)
        return token | fields["mask"].put(sum(1 << names[c] for c in letters))
    if op.selection == "swizzle":
        if len(letters) > 4:
            raise EncodeError(f"{op.register}: swizzle {letters!r} is longer than 4",
                              where=where)
        full = letters + letters[-1] * (4 - len(letters))
        width = fields["swizzle"].width // 4  # one selector per destination component, x first
        value = sum(names[c] << (width * i) for i, c in enumerate(full))
        return token | fields["swizzle"].put(value)
    if op.selection == "select":
        if len(letters) != 1:
            raise EncodeError(f"{op.register}: select takes one component, got {letters!r}",
                              where=where)
        return token | fields["select_1"].put(names[letters])
    raise EncodeError(f"unknown selection {op.selection!r}", where=where)


# ----------------------------------------------------------------------------------------------
# Declarations


def encode_declaration(decl: Declaration, ctx: _Context) -> list[int]:
    where = _where(decl.line)
    enc = ctx.encoding
    dspec = ctx.spec.declarations.declarations.get(decl.name)
    denc = enc.declarations.get(decl.name)
    if dspec is None or denc is None:
        raise EncodeError(f"no encoding for declaration {decl.name!r}; known: "
                          f"{', '.join(sorted(enc.declarations))}", where=where)
    controls = 0
    if dspec.global_flags:
        for flag in decl.flags:
            if flag not in dspec.global_flags or flag not in enc.global_flags:
                raise EncodeError(f"unknown global flag {flag!r}", where=where)
            controls |= 1 << enc.global_flags[flag]
    else:
        for flag in decl.flags:
            if flag in dspec.access:
                continue  # the access pattern, below
            if flag not in dspec.flags or flag not in enc.declaration_flags:
                raise EncodeError(f"{decl.name} takes no flag {flag!r}", where=where)
            controls |= 1 << enc.declaration_flags[flag]
    if denc.resource_dimension is not None:
        controls |= enc.resource_dimension.put(enc.resource_dimensions[denc.resource_dimension])
    if denc.layout == "custom_data":
        return _custom_data(decl, denc, ctx, where)
    if dspec.access:
        access = [f for f in decl.flags if f in dspec.access]
        controls |= enc.access_pattern.put(enc.access_patterns[access[0] if access
                                                               else dspec.access[0]])
    operands: list[int] = []
    numbers = list(decl.numbers)
    if dspec.registers:
        if decl.register is None or decl.register.file not in dspec.registers:
            raise EncodeError(f"{decl.name} declares a {' or '.join(dspec.registers)} register",
                              where=where)
        if denc.layout == "numbers":
            operands.append(_u32(decl.register.index or 0, f"{where}: register number"))
        elif denc.layout == "sized":
            if not numbers:
                raise EncodeError(f"{decl.name} needs its element count", where=where)
            sized = replace(decl.register, element=numbers[0], selection="swizzle",
                            components=COMPONENTS)
            operands.extend(encode_operand(sized, ctx, where))
            numbers = numbers[1:]
        else:
            operands.extend(encode_operand(decl.register, ctx, where))
    elif decl.register is not None:
        raise EncodeError(f"{decl.name} declares no register", where=where)
    if dspec.return_type:
        operands.append(_return_type_token(decl, ctx, where))
    elif decl.return_type:
        raise EncodeError(f"{decl.name} takes no return type", where=where)
    names = dspec.numbers[1:] if denc.layout == "sized" else dspec.numbers
    if len(numbers) != len(names):
        raise EncodeError(f"{decl.name} takes {len(dspec.numbers)} number(s) "
                          f"({', '.join(dspec.numbers) or 'none'}), got {len(decl.numbers)}",
                          where=where)
    operands.extend(_u32(n, f"{where}: {name}".strip(": "))
                    for n, name in zip(numbers, names, strict=True))
    return [_opcode_token(denc.opcode, 1 + len(operands), where, ctx, controls), *operands]


def _custom_data(decl: Declaration, denc: DeclarationEncoding, ctx: _Context, where: str
                 ) -> list[int]:
    """A custom-data block: OpcodeToken0 with its class, its DWORD count, the values."""
    enc = ctx.encoding
    assert denc.custom_data_class is not None
    values = [_u32(v, f"{where}: value", allow_negative=True) for v in decl.numbers]
    token = (enc.opcode_token["opcode"].put(denc.opcode)
             | enc.custom_data_class_bits.put(denc.custom_data_class))
    return [token, 2 + len(values), *values]


def _return_type_token(decl: Declaration, ctx: _Context, where: str) -> int:
    enc = ctx.encoding
    types = decl.return_type
    if len(types) == 1:
        types = types * 4
    if len(types) != 4:
        raise EncodeError(f"a return type names 4 components, got {len(types)}", where=where)
    token = 0
    for i, name in enumerate(types):
        if name not in enc.return_types:
            raise EncodeError(f"unknown return type {name!r}; known: "
                              f"{', '.join(enc.return_types)}", where=where)
        token |= enc.return_types[name] << (enc.return_type_bits * i)
    return token
