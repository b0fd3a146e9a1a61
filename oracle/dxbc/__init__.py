"""DXBC encoding of asm programs: tokens (:mod:`.tokens`) and the container (:mod:`.container`)."""

from __future__ import annotations

from sm5.oracle.dxbc.container import (
    Chunk,
    Container,
    build_container,
    checksum,
    code_tokens,
    dxbc_md5,
    read_container,
    shader_container,
)
from sm5.oracle.dxbc.tokens import DEFAULT_TARGET, encode_program
from sm5.oracle.machine.program import Program
from sm5.oracle.model.encoding import Encoding
from sm5.oracle.model.spec import Spec


def program_to_dxbc(program: Program, *, spec: Spec | None = None,
                    encoding: Encoding | None = None) -> bytes:
    """The DXBC container (one SHEX chunk, checksum filled in) of ``program``."""
    return shader_container(encode_program(program, spec=spec, encoding=encoding),
                            encoding=encoding)


__all__ = [
    "DEFAULT_TARGET",
    "Chunk",
    "Container",
    "build_container",
    "checksum",
    "code_tokens",
    "dxbc_md5",
    "encode_program",
    "program_to_dxbc",
    "read_container",
    "shader_container",
]
