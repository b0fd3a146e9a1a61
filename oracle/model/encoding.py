"""The token-format and container facts of ``spec/encoding.yaml``, typed and validated.

Kept apart from :mod:`sm5.oracle.model.spec` because only the DXBC encoder and decoder read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sm5.oracle.errors import SpecError
from sm5.oracle.files.yamlio import load_yaml, validate
from sm5.oracle.model.spec import default_root

FILE_NAME = "encoding.yaml"


@dataclass(frozen=True)
class BitField:
    """Bits ``[shift + width - 1 : shift]`` of a 32-bit token."""

    shift: int
    width: int

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.shift

    def put(self, value: int) -> int:
        """``value`` placed in the field; a value that does not fit is a SpecError (a bug)."""
        if not 0 <= value < (1 << self.width):
            raise SpecError(f"value {value} does not fit a {self.width}-bit field")
        return value << self.shift

    def get(self, token: int) -> int:
        return (token & self.mask) >> self.shift


@dataclass(frozen=True)
class OperandType:
    file: str
    type: int
    indexed: bool
    bare: str | None      # component count name without a selection; None: selection required
    scalar: bool
    immediate: bool
    value_dwords: int = 1  # DWORDs per immediate value (2 for IMMEDIATE64)
    elements: bool = False  # an element index follows the register number (x0[2], icb[2])


@dataclass(frozen=True)
class DeclarationEncoding:
    name: str
    opcode: int
    resource_dimension: str | None
    #: How the operands are laid out: None (the register operand, then one DWORD per
    #: number), ``numbers`` (register number and numbers as DWORDs), ``sized`` (the first
    #: number is the register operand's element index), ``custom_data`` (a counted block).
    layout: str | None = None
    custom_data_class: int | None = None


@dataclass(frozen=True)
class ContainerFormat:
    magic: bytes
    checksum_offset: int
    checksum_size: int
    hashed_from: int
    version: int
    header_size: int
    chunk_header_size: int
    code_chunk: bytes
    code_chunks: tuple[bytes, ...]


@dataclass(frozen=True)
class Encoding:
    """Everything in ``spec/encoding.yaml``."""

    version_token: Mapping[str, BitField]
    program_types: Mapping[str, int]
    header_tokens: int
    opcode_token: Mapping[str, BitField]
    max_instruction_length: int
    operand_token: Mapping[str, BitField]
    index_representation_stride: int
    num_components: Mapping[str, int]
    selection_modes: Mapping[str, int]
    component_names: Mapping[str, int]
    index_representations: Mapping[str, int]
    immediate_vector_mode: str
    immediate_vector_mask: int
    operand_types: Mapping[str, OperandType]
    extended_operand: Mapping[str, BitField]
    extended_operand_types: Mapping[str, int]
    operand_modifiers: Mapping[str, int]
    declarations: Mapping[str, DeclarationEncoding]
    resource_dimension: BitField
    access_pattern: BitField
    access_patterns: Mapping[str, int]
    custom_data_class_bits: BitField
    resource_dimensions: Mapping[str, int]
    declaration_flags: Mapping[str, int]
    global_flags: Mapping[str, int]
    return_type_bits: int
    return_types: Mapping[str, int]
    container: ContainerFormat
    view_formats: Mapping[str, str | None]

    def index_representation(self, dimension: int) -> BitField:
        """The representation field of operand index ``dimension`` (0-based)."""
        base = self.operand_token["index_representation"]
        return BitField(base.shift + dimension * self.index_representation_stride, base.width)


def _fields(doc: Mapping[str, Any]) -> dict[str, BitField]:
    return {name: BitField(f["shift"], f["width"]) for name, f in doc.items()}


def _fourcc(text: str) -> bytes:
    return text.encode("ascii")


def build_encoding(doc: Mapping[str, Any], where: str) -> Encoding:
    """The typed form of an already schema-validated document, with cross-checks."""
    operand_doc = dict(doc["operand_token"])
    index_rep = operand_doc.pop("index_representation")
    operand_token = _fields(operand_doc)
    operand_token["index_representation"] = BitField(index_rep["shift"], index_rep["width"])
    container = doc["container"]
    encoding = Encoding(
        version_token=_fields(doc["version_token"]),
        program_types=dict(doc["program_types"]),
        header_tokens=doc["header_tokens"],
        opcode_token=_fields(doc["opcode_token"]),
        max_instruction_length=doc["max_instruction_length"],
        operand_token=operand_token,
        index_representation_stride=index_rep["stride"],
        num_components=dict(doc["num_components"]),
        selection_modes=dict(doc["selection_modes"]),
        component_names=dict(doc["component_names"]),
        index_representations=dict(doc["index_representations"]),
        immediate_vector_mode=doc["immediate_vector"]["selection_mode"],
        immediate_vector_mask=doc["immediate_vector"]["mask"],
        operand_types={
            name: OperandType(name, t["type"], t["indexed"], t.get("bare"),
                              t.get("scalar", False), t.get("immediate", False),
                              t.get("value_dwords", 1), t.get("elements", False))
            for name, t in doc["operand_types"].items()},
        extended_operand=_fields(doc["extended_operand"]),
        extended_operand_types=dict(doc["extended_operand_types"]),
        operand_modifiers=dict(doc["operand_modifiers"]),
        declarations={d["name"]: DeclarationEncoding(d["name"], d["opcode"],
                                                     d.get("resource_dimension"),
                                                     d.get("layout"), d.get("custom_data_class"))
                      for d in doc["declarations"]},
        access_pattern=BitField(**doc["access_pattern"]),
        access_patterns=dict(doc["access_patterns"]),
        custom_data_class_bits=BitField(**doc["custom_data_class_bits"]),
        resource_dimension=BitField(**doc["resource_dimension"]),
        resource_dimensions=dict(doc["resource_dimensions"]),
        declaration_flags=dict(doc["declaration_flags"]),
        global_flags=dict(doc["global_flags"]),
        return_type_bits=doc["return_type_bits"],
        return_types=dict(doc["return_types"]),
        container=ContainerFormat(
            magic=_fourcc(container["magic"]),
            checksum_offset=container["checksum"]["offset"],
            checksum_size=container["checksum"]["size"],
            hashed_from=container["hashed_from"],
            version=container["version"],
            header_size=container["header_size"],
            chunk_header_size=container["chunk_header_size"],
            code_chunk=_fourcc(container["code_chunk"]),
            code_chunks=tuple(_fourcc(c) for c in container["code_chunks"])),
        view_formats={kind: view.get("format") for kind, view in doc["views"].items()},
    )
    _cross_check(encoding, where)
    return encoding


def _cross_check(encoding: Encoding, where: str) -> None:
    for decl in encoding.declarations.values():
        dim = decl.resource_dimension
        if dim is not None and dim not in encoding.resource_dimensions:
            raise SpecError(f"declaration {decl.name}: unknown resource dimension {dim!r}",
                            where=where)
    if encoding.immediate_vector_mode not in encoding.selection_modes:
        raise SpecError("immediate_vector.selection_mode is not a selection mode", where=where)
    if encoding.container.code_chunk not in encoding.container.code_chunks:
        raise SpecError("container.code_chunk is not listed in container.code_chunks",
                        where=where)
    for file, optype in encoding.operand_types.items():
        if optype.bare is not None and optype.bare not in encoding.num_components:
            raise SpecError(f"operand type {file}: unknown component count {optype.bare!r}",
                            where=where)


def load_encoding(root: Path) -> Encoding:
    """Load and validate ``<root>/encoding.yaml``."""
    path = root / FILE_NAME
    if not path.is_file():
        raise SpecError("missing spec file", where=str(path))
    document = load_yaml(path)
    validate(document, "encoding", str(path))
    return build_encoding(document, str(path))


@cache
def load_default_encoding() -> Encoding:
    """The built-in ``spec/encoding.yaml``, loaded once per process."""
    return load_encoding(default_root())
