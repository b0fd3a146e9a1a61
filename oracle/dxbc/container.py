"""The DXBC container: writing, reading and its checksum.

Layout (``spec/encoding.yaml`` ``container``): the magic ``DXBC``, a 16-byte checksum, the
version, the total size, the chunk count, one u32 offset per chunk; each chunk is a FourCC, a
u32 data size and the data. All integers little-endian.

The checksum is MD5 (standard constants and rounds) over the bytes from the version field to the
end, with a non-standard final block: the bit count goes into the *first* word of the last block
(the remaining message bytes and the 0x80 pad byte follow it), and word 15 holds
``(bitcount >> 2) | 1``. When 56 or more message bytes remain, they are padded and compressed
first, and the bit-count words travel in one extra block. The four state words, little-endian,
are the checksum.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from sm5.oracle.errors import ContainerError
from sm5.oracle.model.encoding import Encoding, load_default_encoding

U32 = 0xFFFFFFFF

# ----------------------------------------------------------------------------------------------
# MD5 compression (RFC 1321): the per-round shift amounts and the sine-derived constants.

_SHIFTS = (7, 12, 17, 22) * 4 + (5, 9, 14, 20) * 4 + (4, 11, 16, 23) * 4 + (6, 10, 15, 21) * 4
_SINES = tuple(int(abs(math.sin(i + 1)) * 2**32) & U32 for i in range(64))
_INITIAL = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)
_BLOCK = 64


def _rotate_left(value: int, amount: int) -> int:
    return ((value << amount) | (value >> (32 - amount))) & U32


def md5_compress(state: tuple[int, int, int, int], block: bytes) -> tuple[int, int, int, int]:
    """One MD5 compression of a 64-byte block into the chaining state."""
    words = struct.unpack("<16I", block)
    a, b, c, d = state
    for i in range(64):
        if i < 16:
            mixed, pick = (b & c) | (~b & d), i
        elif i < 32:
            mixed, pick = (d & b) | (~d & c), (5 * i + 1) % 16
        elif i < 48:
            mixed, pick = b ^ c ^ d, (3 * i + 5) % 16
        else:
            mixed, pick = c ^ (b | ~d), (7 * i) % 16
        total = (mixed + a + _SINES[i] + words[pick]) & U32
        a, d, c = d, c, b
        b = (b + _rotate_left(total, _SHIFTS[i])) & U32
    return ((state[0] + a) & U32, (state[1] + b) & U32, (state[2] + c) & U32,
            (state[3] + d) & U32)


def md5_blocks(message: bytes) -> tuple[tuple[int, int, int, int], bytes]:
    """The chaining state after every whole block of ``message``, and the remaining bytes."""
    state = _INITIAL
    whole = len(message) - len(message) % _BLOCK
    for offset in range(0, whole, _BLOCK):
        state = md5_compress(state, message[offset:offset + _BLOCK])
    return state, message[whole:]


def dxbc_md5(message: bytes) -> bytes:
    """The DXBC variant of MD5 over ``message`` (see the module docstring)."""
    state, tail = md5_blocks(message)
    bits = (8 * len(message)) & U32
    length_word = struct.pack("<I", bits)
    closing_word = struct.pack("<I", (bits >> 2) | 1)
    padded = tail + b"\x80"
    if len(tail) >= _BLOCK - 8:
        state = md5_compress(state, padded + bytes(_BLOCK - len(padded)))
        final = length_word + bytes(_BLOCK - 8) + closing_word
    else:
        final = length_word + padded + bytes(_BLOCK - 8 - len(padded)) + closing_word
    state = md5_compress(state, final)
    return struct.pack("<4I", *state)


def checksum(data: bytes, *, encoding: Encoding | None = None) -> bytes:
    """The checksum of a container: the DXBC MD5 of its bytes from the version field on.

    The stored checksum field itself is not hashed, so ``data`` may hold any value there.
    """
    fmt = (encoding or load_default_encoding()).container
    if len(data) < fmt.hashed_from:
        raise ContainerError(f"truncated: {len(data)} bytes, the header alone needs "
                             f"{fmt.header_size}", where="byte 0")
    return dxbc_md5(bytes(data[fmt.hashed_from:]))


# ----------------------------------------------------------------------------------------------
# Writing

_HEADER_FIELDS = struct.Struct("<III")  # version, total size, chunk count
_CHUNK_HEADER = struct.Struct("<4sI")   # FourCC, data size


def build_container(chunks: Sequence[tuple[bytes, bytes]], *,
                    encoding: Encoding | None = None) -> bytes:
    """A container holding ``chunks`` (FourCC, data) in order, with its checksum filled in.

    Chunk data is zero-padded to a multiple of 4 bytes so every chunk starts aligned; the size
    field holds the unpadded length.
    """
    enc = encoding or load_default_encoding()
    fmt = enc.container
    table_end = fmt.header_size + 4 * len(chunks)
    offsets: list[int] = []
    body = bytearray()
    for fourcc, data in chunks:
        if len(fourcc) != 4:
            raise ContainerError(f"a chunk name is 4 bytes, got {fourcc!r}")
        offsets.append(table_end + len(body))
        body += _CHUNK_HEADER.pack(fourcc, len(data)) + data + bytes(-len(data) % 4)
    total = table_end + len(body)
    blob = bytearray(fmt.magic + bytes(fmt.checksum_size)
                     + _HEADER_FIELDS.pack(fmt.version, total, len(chunks)))
    blob += struct.pack(f"<{len(offsets)}I", *offsets) + body
    start = fmt.checksum_offset
    blob[start:start + fmt.checksum_size] = checksum(bytes(blob), encoding=enc)
    return bytes(blob)


def shader_container(tokens: Sequence[int], *, encoding: Encoding | None = None) -> bytes:
    """A container with one shader-code chunk holding ``tokens``."""
    enc = encoding or load_default_encoding()
    code = struct.pack(f"<{len(tokens)}I", *tokens)
    return build_container([(enc.container.code_chunk, code)], encoding=enc)


# ----------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class Chunk:
    fourcc: bytes
    offset: int
    data: bytes


@dataclass(frozen=True)
class Container:
    version: int
    checksum: bytes
    chunks: tuple[Chunk, ...]

    def chunk(self, *fourccs: bytes) -> Chunk | None:
        """The first chunk whose FourCC is one of ``fourccs``."""
        for chunk in self.chunks:
            if chunk.fourcc in fourccs:
                return chunk
        return None


def read_container(data: bytes, *, verify_checksum: bool = True,
                   encoding: Encoding | None = None) -> Container:
    """Parse and check a container; anything malformed is a ContainerError naming the byte."""
    enc = encoding or load_default_encoding()
    fmt = enc.container
    size = len(data)
    if size < fmt.header_size:
        raise ContainerError(f"truncated: {size} bytes, the header alone needs "
                             f"{fmt.header_size}", where="byte 0")
    if data[:len(fmt.magic)] != fmt.magic:
        raise ContainerError(f"bad magic {bytes(data[:len(fmt.magic)])!r}, expected "
                             f"{fmt.magic!r}", where="byte 0")
    version, total, count = _HEADER_FIELDS.unpack_from(data, fmt.hashed_from)
    if total != size:
        kind = "truncated" if size < total else "trailing bytes"
        raise ContainerError(f"{kind}: the header gives a total size of {total} bytes, the data "
                             f"holds {size}", where=f"byte {fmt.hashed_from + 4}")
    stored = bytes(data[fmt.checksum_offset:fmt.checksum_offset + fmt.checksum_size])
    if verify_checksum:
        computed = checksum(bytes(data), encoding=enc)
        if computed != stored:
            raise ContainerError(f"checksum mismatch: stored {stored.hex()}, computed "
                                 f"{computed.hex()}", where=f"byte {fmt.checksum_offset}")
    if version != fmt.version:
        raise ContainerError(f"unknown container version {version}, expected {fmt.version}",
                             where=f"byte {fmt.hashed_from}")
    table_end = fmt.header_size + 4 * count
    if table_end > size:
        raise ContainerError(f"{count} chunk offsets do not fit in {size} bytes",
                             where=f"byte {fmt.hashed_from + 8}")
    offsets = struct.unpack_from(f"<{count}I", data, fmt.header_size)
    chunks: list[Chunk] = []
    for number, offset in enumerate(offsets):
        where = f"byte {fmt.header_size + 4 * number}"
        if offset < table_end or offset + fmt.chunk_header_size > size:
            raise ContainerError(f"chunk {number} offset {offset} lies outside the chunk area "
                                 f"[{table_end}, {size - fmt.chunk_header_size}]", where=where)
        fourcc, length = _CHUNK_HEADER.unpack_from(data, offset)
        start = offset + fmt.chunk_header_size
        if start + length > size:
            raise ContainerError(f"chunk {number} ({fourcc!r}) claims {length} bytes, only "
                                 f"{size - start} remain", where=f"byte {offset + 4}")
        chunks.append(Chunk(fourcc, offset, bytes(data[start:start + length])))
    return Container(version, stored, tuple(chunks))


def code_tokens(container: Container, *, encoding: Encoding | None = None) -> tuple[int, ...]:
    """The shader tokens of the code chunk, checked against the program's length token."""
    enc = encoding or load_default_encoding()
    chunk = container.chunk(*enc.container.code_chunks)
    if chunk is None:
        names = ", ".join(c.decode("ascii") for c in enc.container.code_chunks)
        raise ContainerError(f"no shader code chunk ({names})")
    where = f"byte {chunk.offset}"
    if len(chunk.data) % 4 or len(chunk.data) < 4 * enc.header_tokens:
        raise ContainerError(f"code chunk of {len(chunk.data)} bytes is not a token program",
                             where=where)
    tokens = struct.unpack(f"<{len(chunk.data) // 4}I", chunk.data)
    if tokens[1] != len(tokens):
        raise ContainerError(f"length token says {tokens[1]} DWORDs, the chunk holds "
                             f"{len(tokens)}", where=where)
    return tuple(tokens)
