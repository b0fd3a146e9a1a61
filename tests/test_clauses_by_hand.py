"""Every clause of spec/instructions/*.yaml, checked against values worked out by hand.

Each case is a program, a state and a (target, runtime) with the outcomes, clause ids and final
state written out literally. The expectations come from the source pages (seeds 000-004) and the
functional-spec facts they are cross-checked with, never from running the oracle; each case cites
the sentence it rests on. The meta-test at the end reads the clause ids from the YAML files and
fails if a clause has no hand case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sm5.oracle.asm import parse_program
from sm5.oracle.executor import execute
from sm5.oracle.spec import load_default
from sm5.oracle.state import expected_to_json, state_from_json

SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"
DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
NAN = {"f64": "nan"}  # the register pair holds some double NaN
SIGN_FREE_ZERO = {"value": 0, "mask": 0x7FFFFFFF}  # a zero high word of either sign


def structured(stride: int, count: int, data: list[Any]) -> dict[str, Any]:
    return {"kind": "structured", "stride": stride, "count": count, "data": data}


def raw(data: list[Any]) -> dict[str, Any]:
    return {"kind": "raw", "data": data}


def typed(fmt: str, data: list[Any]) -> dict[str, Any]:
    return {"kind": "typed", "format": fmt, "data": data}


@dataclass(frozen=True)
class HandCase:
    """One instance with its expected result, written by hand from the cited source."""

    name: str
    clauses: tuple[str, ...]
    program: tuple[str, ...]
    state: dict[str, Any]
    outcomes: tuple[str, ...]
    expect: dict[str, Any]
    cite: str
    target: str = "cs_5_0"
    runtime: str = "11.0"
    extra: dict[str, Any] = field(default_factory=dict)


# ================================================================================================
# store_structured
#
# Sources: seed-003 (and its copies 000/001) Remarks and pseudocode:
#   WriteLocation = BufferContents + BufferStride * dstAddress + dstByteOffset;
#   memcpy(WriteLocation, swizzle(src0, src0.swizzle), WriteComponents * sizeof(INT32));
# "The write mask determines the number of 32-bit components to write without gaps."

R1_ABCD = [0xAAAA0001, 0xAAAA0002, 0xAAAA0003, 0xAAAA0004]

STORE_STRUCTURED: list[HandCase] = [
    HandCase(
        "ss_x_in_bounds",
        ("store_structured.uav_structured.in_bounds",),
        ("dcl_uav_structured u0, 16", "store_structured u0.x, l(1), l(4), r1.x"),
        {"r1": R1_ABCD, "u0": structured(16, 2, [0] * 8)},
        ("defined",),
        # byte 16 * 1 + 4 = 20 -> word 5 receives r1.x
        {"r1": R1_ABCD, "u0": structured(16, 2, [0, 0, 0, 0, 0, 0xAAAA0001, 0, 0])},
        "seed-003 pseudocode: WriteLocation = BufferContents + BufferStride * dstAddress + "
        "dstByteOffset; .x writes 1 component",
    ),
    HandCase(
        "ss_xy_wzyx_register_address",
        ("store_structured.uav_structured.in_bounds",),
        ("dcl_uav_structured u0, 16", "store_structured u0.xy, r0.y, r0.z, r1.wzyx"),
        {"r0": [99, 3, 0, 77], "r1": [4, 3, 2, 1], "u0": structured(16, 4, [0] * 16)},
        ("defined",),
        # index r0.y = 3, offset r0.z = 0: byte 48 -> words 12, 13 = (r1.w, r1.z) = (1, 2)
        {"r0": [99, 3, 0, 77], "r1": [4, 3, 2, 1],
         "u0": structured(16, 4, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0])},
        "seed-003: memcpy(WriteLocation, swizzle(src0, src0.swizzle), WriteComponents * "
        "sizeof(INT32)); xy: WriteComponents = 2",
    ),
    HandCase(
        "ss_xyz_yzwx_offset_4",
        ("store_structured.uav_structured.in_bounds",),
        ("dcl_uav_structured u0, 16", "store_structured u0.xyz, l(0), l(4), r1.yzwx"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 1, [0x10, 0x11, 0x12, 0x13])},
        ("defined",),
        # byte 4 -> words 1..3 = (r1.y, r1.z, r1.w); 4 + 12 = 16 <= stride: in bounds
        {"r1": [1, 2, 3, 4], "u0": structured(16, 1, [0x10, 2, 3, 4])},
        "seed-003: xyz: WriteComponents = 3; the write mask determines the number of 32-bit "
        "components to write without gaps",
    ),
    HandCase(
        "ss_xyzw_wzyx_stride_32",
        ("store_structured.uav_structured.in_bounds",),
        ("dcl_uav_structured u0, 32", "store_structured u0.xyzw, l(1), l(16), r1.wzyx"),
        {"r1": [1, 2, 3, 4], "u0": structured(32, 2, list(range(100, 116)))},
        ("defined",),
        # byte 32 * 1 + 16 = 48 -> words 12..15 = (4, 3, 2, 1)
        {"r1": [1, 2, 3, 4],
         "u0": structured(32, 2, [100, 101, 102, 103, 104, 105, 106, 107,
                                  108, 109, 110, 111, 4, 3, 2, 1])},
        "seed-003 pseudocode; xyzw: WriteComponents = 4",
    ),
    HandCase(
        "ss_xyzw_literal_last_index",
        ("store_structured.uav_structured.in_bounds",),
        ("dcl_uav_structured u0, 16", "store_structured u0.xyzw, r0.w, r0.x, l(5, 6, 7, 8)"),
        {"r0": [0, 9, 9, 2], "u0": structured(16, 3, [0xEE] * 12)},
        ("defined",),
        # index r0.w = 2 = count - 1 (last structure), offset r0.x = 0: words 8..11
        {"r0": [0, 9, 9, 2],
         "u0": structured(16, 3, [0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 5, 6, 7, 8])},
        "seed-003: No format conversion; dstAddress specifies the index of the structure to write",
    ),
    HandCase(
        "ss_oob_index_equals_count",
        ("store_structured.uav_structured.oob_index",),
        ("dcl_uav_structured u0, 16", "store_structured u0.xyzw, l(2), l(0), r1.xyzw"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [11, 12, 13, 14, 15, 16, 17, 18])},
        ("no_write",),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [11, 12, 13, 14, 15, 16, 17, 18])},
        "seed-003: Out of bounds addressing on u# casued by dstAddress means nothing is written "
        "to the out of bounds memory",
    ),
    HandCase(
        "ss_oob_index_ffffffff",
        ("store_structured.uav_structured.oob_index",),
        ("dcl_uav_structured u0, 16", "store_structured u0.x, r0.x, l(0), r1.x"),
        {"r0": [0xFFFFFFFF, 0, 0, 0], "r1": [7, 7, 7, 7], "u0": structured(16, 2, [0] * 8)},
        ("no_write",),
        {"r0": [0xFFFFFFFF, 0, 0, 0], "r1": [7, 7, 7, 7], "u0": structured(16, 2, [0] * 8)},
        "seed-003: Out of bounds addressing on u# casued by dstAddress means nothing is written",
    ),
    HandCase(
        "ss_oob_index_wraps_in_32_bits",
        ("store_structured.uav_structured.oob_index",),
        ("dcl_uav_structured u0, 4", "store_structured u0.x, l(0x40000000), l(0), r1.x"),
        {"r1": [7, 0, 0, 0], "u0": structured(4, 4, [1, 2, 3, 4])},
        ("no_write",),
        # 4 * 0x40000000 = 2^32: a 32-bit product would wrap to word 0; the index is past count
        {"r1": [7, 0, 0, 0], "u0": structured(4, 4, [1, 2, 3, 4])},
        "seed-003: Out of bounds addressing on u# casued by dstAddress means nothing is written",
    ),
    HandCase(
        "ss_oob_offset_stride_minus_4_xy",
        ("store_structured.uav_structured.oob_offset",),
        ("dcl_uav_structured u0, 16", "dcl_uav_raw u1",
         "store_structured u0.xy, l(0), l(12), r1.xyzw"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [5] * 8), "u1": raw([8, 9])},
        ("resource_undefined",),
        # 12 + 4 * 2 = 20 > 16: only u0 becomes undefined; u1 and registers stay exact
        {"r1": [1, 2, 3, 4], "u0": None, "u1": raw([8, 9])},
        "seed-003: If the dstByteOffset, including dstWriteMask, is what causes out of bounds "
        "access to u#, the entire contents of the UAV become undefined",
    ),
    HandCase(
        "ss_oob_offset_wraps_in_32_bits",
        ("store_structured.uav_structured.oob_offset",),
        ("dcl_uav_structured u0, 16", "store_structured u0.x, l(0), r0.x, r1.x"),
        {"r0": [0xFFFFFFFC, 0, 0, 0], "r1": [1, 2, 3, 4], "u0": structured(16, 1, [0] * 4)},
        ("resource_undefined",),
        # 0xFFFFFFFC + 4 is 2^32 > 16 (a 32-bit sum would wrap to 0 and look in bounds)
        {"r0": [0xFFFFFFFC, 0, 0, 0], "r1": [1, 2, 3, 4], "u0": None},
        "seed-003: If the dstByteOffset, including dstWriteMask, is what causes out of bounds "
        "access to u#, the entire contents of the UAV become undefined",
    ),
    HandCase(
        "ss_oob_offset_and_index",
        ("store_structured.uav_structured.oob_offset",),
        ("dcl_uav_structured u0, 16", "store_structured u0.x, l(5), l(16), r1.x"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [0] * 8)},
        ("resource_undefined",),
        # both out of bounds: the permissive reading (erratum both_out_of_bounds) wins
        {"r1": [1, 2, 3, 4], "u0": None},
        "FS 18.6.8.3 (spec erratum store_structured.erratum.both_out_of_bounds): out of bounds "
        "offsets within individual structs make the whole resource undefined",
    ),
    HandCase(
        "ss_misaligned_offset_2",
        ("store_structured.uav_structured.misaligned",),
        ("dcl_uav_structured u0, 16", "dcl_uav_raw u1",
         "store_structured u0.x, l(0), l(2), r1.x"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [0] * 8), "u1": raw([3])},
        ("resource_undefined",),
        {"r1": [1, 2, 3, 4], "u0": None, "u1": raw([3])},
        "FS 7.13 (facts A1): the byte offset must be 32-bit aligned; a misaligned write makes "
        "the entire UAV undefined",
    ),
    HandCase(
        "ss_misaligned_offset_with_oob_index",
        ("store_structured.uav_structured.misaligned",),
        ("dcl_uav_structured u0, 16", "store_structured u0.x, l(9), l(2), r1.x"),
        {"r1": [1, 2, 3, 4], "u0": structured(16, 2, [0] * 8)},
        ("resource_undefined",),
        {"r1": [1, 2, 3, 4], "u0": None},
        "FS 7.13 (facts A1): a misaligned write makes the entire UAV undefined",
    ),
    HandCase(
        "ss_tgsm_in_bounds_xy",
        ("store_structured.tgsm_structured.in_bounds",),
        ("dcl_tgsm_structured g0, 8, 4", "store_structured g0.xy, l(2), l(0), r1.yx"),
        {"r1": [1, 2, 3, 4], "g0": structured(8, 4, [0] * 8)},
        ("defined",),
        # byte 8 * 2 = 16 -> words 4, 5 = (r1.y, r1.x); a two-letter swizzle repeats its last
        {"r1": [1, 2, 3, 4], "g0": structured(8, 4, [0, 0, 0, 0, 2, 1, 0, 0])},
        "seed-003: In the compute shader it can also be thread group shared memory (g#); "
        "pseudocode WriteLocation",
    ),
    HandCase(
        "ss_tgsm_in_bounds_thread_id",
        ("store_structured.tgsm_structured.in_bounds",),
        ("dcl_tgsm_structured g0, 8, 2",
         "store_structured g0.x, vThreadIDInGroupFlattened.x, l(4), r1.z"),
        {"r1": [1, 2, 3, 4], "g0": structured(8, 2, [9, 9, 9, 9])},
        ("defined",),
        # the single invocation is thread 0 (spec/model.yaml): byte 0 * 8 + 4 -> word 1 = r1.z
        {"r1": [1, 2, 3, 4], "g0": structured(8, 2, [9, 3, 9, 9])},
        "seed-003 pseudocode; model.yaml: the single invocation of a vector is thread 0",
    ),
    HandCase(
        "ss_tgsm_oob_index_all_tgsm_undefined",
        ("store_structured.tgsm_structured.out_of_bounds",),
        ("dcl_uav_raw u0", "dcl_tgsm_structured g0, 8, 2", "dcl_tgsm_raw g1, 16",
         "store_structured g0.x, l(2), l(0), r1.x"),
        {"r1": [1, 2, 3, 4], "u0": raw([6, 7]), "g0": structured(8, 2, [0] * 4),
         "g1": raw([1, 2, 3, 4])},
        ("tgsm_undefined",),
        # every g#, not only g0, becomes undefined; u0 and registers stay exact
        {"r1": [1, 2, 3, 4], "u0": raw([6, 7]), "g0": None, "g1": None},
        "seed-003: Out of bounds addressing on g# ... for any given 32-bit component causes the "
        "entire contents of all shared memory to become undefined",
    ),
    HandCase(
        "ss_tgsm_oob_offset",
        ("store_structured.tgsm_structured.out_of_bounds",),
        ("dcl_tgsm_structured g0, 8, 2", "dcl_tgsm_structured g1, 4, 1",
         "store_structured g0.xy, l(0), l(4), r1.xyzw"),
        {"r1": [1, 2, 3, 4], "g0": structured(8, 2, [0] * 4), "g1": structured(4, 1, [5])},
        ("tgsm_undefined",),
        # 4 + 8 > stride 8 (erratum tgsm_struct_bound: permissive)
        {"r1": [1, 2, 3, 4], "g0": None, "g1": None},
        "seed-003: Out of bounds addressing on g# ... causes the entire contents of all shared "
        "memory to become undefined",
    ),
    HandCase(
        "ss_tgsm_misaligned",
        ("store_structured.tgsm_structured.misaligned",),
        ("dcl_uav_raw u0", "dcl_tgsm_structured g0, 8, 2", "dcl_tgsm_raw g1, 4",
         "store_structured g0.x, l(0), l(6), r1.x"),
        {"r1": [1, 2, 3, 4], "u0": raw([6]), "g0": structured(8, 2, [0] * 4), "g1": raw([1])},
        ("tgsm_undefined",),
        {"r1": [1, 2, 3, 4], "u0": raw([6]), "g0": None, "g1": None},
        "FS 7.13 (facts A1): a misaligned write makes all TGSM undefined",
    ),
]

# ================================================================================================
# imm_atomic_iadd
#
# Source: seed-004 Remarks. "single component 32-bit integer add ... It is insensitive to sign."
# "The value in dst1 memory before addition is returned to dst0." Wrap modulo 2^32: FS 22.12.1
# (facts A3, spec erratum wrap_implicit).

R0_INIT = [0xDEAD0000, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003]
ACTIVE = "imm_atomic_iadd.invocation.active"
NO_CARRY = "imm_atomic_iadd.result.no_carry"
WRAP = "imm_atomic_iadd.result.wrap"

IMM_ATOMIC_IADD: list[HandCase] = [
    HandCase(
        "ia_raw_in_bounds",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", NO_CARRY),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, r2.x"),
        {"r0": R0_INIT, "r1": [8, 0, 0, 0], "r2": [5, 0, 0, 0], "u0": raw([10, 20, 30, 40])},
        ("defined",),
        # byte 8 -> word 2: 30 + 5 = 35; r0.x receives the old 30, r0.yzw untouched
        {"r0": [30, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "r1": [8, 0, 0, 0], "r2": [5, 0, 0, 0],
         "u0": raw([10, 20, 35, 40])},
        "seed-004: The value in dst1 memory before addition is returned to dst0",
    ),
    HandCase(
        "ia_raw_in_bounds_dst0_z_only",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", NO_CARRY),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.z, u0, l(4), l(7)"),
        {"r0": R0_INIT, "u0": raw([10, 20, 30, 40])},
        ("defined",),
        {"r0": [0xDEAD0000, 0xDEAD0001, 20, 0xDEAD0003], "u0": raw([10, 27, 30, 40])},
        "seed-004: dst0[.single_component_mask]: Contains the value in dst1 before the write",
    ),
    HandCase(
        "ia_raw_dst0_is_address_register",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", NO_CARRY),
        ("dcl_uav_raw u0", "imm_atomic_iadd r1.x, u0, r1.x, l(1)"),
        {"r1": [12, 5, 6, 7], "u0": raw([10, 20, 30, 40])},
        ("defined",),
        # the address is read before dst0 is written: word 3 = 41, r1.x = old 40
        {"r1": [40, 5, 6, 7], "u0": raw([10, 20, 30, 41])},
        "seed-004: The value in dst1 memory before addition is returned to dst0",
    ),
    HandCase(
        "ia_raw_wrap",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", WRAP),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.y, u0, l(0), l(2)"),
        {"r0": R0_INIT, "u0": raw([0xFFFFFFFF, 0])},
        ("defined",),
        # 0xFFFFFFFF + 2 = 1 modulo 2^32; returns 0xFFFFFFFF
        {"r0": [0xDEAD0000, 0xFFFFFFFF, 0xDEAD0002, 0xDEAD0003], "u0": raw([1, 0])},
        "FS 22.12.1 (facts A3/C4): a 32-bit add with no carry beyond 32 bits",
    ),
    HandCase(
        "ia_raw_sign_insensitive_minus_one",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", WRAP),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.w, u0, l(4), r2.x"),
        {"r0": R0_INIT, "r2": [0xFFFFFFFF, 0, 0, 0], "u0": raw([0, 5])},
        ("defined",),
        # 5 + 0xFFFFFFFF (= -1) = 4 modulo 2^32
        {"r0": [0xDEAD0000, 0xDEAD0001, 0xDEAD0002, 5], "r2": [0xFFFFFFFF, 0, 0, 0],
         "u0": raw([0, 4])},
        "seed-004: It is insensitive to sign",
    ),
    HandCase(
        "ia_raw_no_carry_largest",
        (ACTIVE, "imm_atomic_iadd.uav_raw.in_bounds", NO_CARRY),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"),
        {"r0": R0_INIT, "u0": raw([0xFFFFFFFE])},
        ("defined",),
        {"r0": [0xFFFFFFFE, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": raw([0xFFFFFFFF])},
        "seed-004: single component 32-bit integer add",
    ),
    HandCase(
        "ia_raw_out_of_bounds",
        (ACTIVE, "imm_atomic_iadd.uav_raw.out_of_bounds"),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(16), l(1)"),
        {"r0": R0_INIT, "u0": raw([10, 20, 30, 40])},
        ("no_write", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": raw([10, 20, 30, 40])},
        "seed-004: Out of bounds addressing on u# causes nothing to be written to memory; ... "
        "causes an undefined result to be returned to the shader in dst0",
    ),
    HandCase(
        "ia_raw_out_of_bounds_wraps_in_32_bits",
        (ACTIVE, "imm_atomic_iadd.uav_raw.out_of_bounds"),
        ("dcl_uav_raw u0", "imm_atomic_iadd r0.y, u0, r1.x, l(1)"),
        {"r0": R0_INIT, "r1": [0xFFFFFFFC, 0, 0, 0], "u0": raw([10, 20])},
        ("no_write", "dst_undefined"),
        {"r0": [0xDEAD0000, None, 0xDEAD0002, 0xDEAD0003], "r1": [0xFFFFFFFC, 0, 0, 0],
         "u0": raw([10, 20])},
        "seed-004: Out of bounds addressing on u# causes nothing to be written to memory",
    ),
    HandCase(
        "ia_raw_misaligned",
        (ACTIVE, "imm_atomic_iadd.uav_raw.misaligned"),
        ("dcl_uav_raw u0", "dcl_uav_raw u1", "imm_atomic_iadd r0.x, u0, l(2), l(1)"),
        {"r0": R0_INIT, "u0": raw([10, 20]), "u1": raw([3])},
        ("resource_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": None, "u1": raw([3])},
        "FS 7.13 (facts A3): an unaligned raw address: a write makes the entire UAV undefined, "
        "a read returns an undefined result",
    ),
    HandCase(
        "ia_structured_in_bounds_swizzled_address",
        (ACTIVE, "imm_atomic_iadd.uav_structured.in_bounds", NO_CARRY),
        ("dcl_uav_structured u0, 8", "imm_atomic_iadd r0.w, u0, r1.zx, l(100)"),
        {"r0": R0_INIT, "r1": [4, 77, 1, 0], "u0": structured(8, 2, [1, 2, 3, 4])},
        ("defined",),
        # address after swizzle .zx = (r1.z, r1.x) = (index 1, byte offset 4): byte 12 -> word 3
        {"r0": [0xDEAD0000, 0xDEAD0001, 0xDEAD0002, 4], "r1": [4, 77, 1, 0],
         "u0": structured(8, 2, [1, 2, 3, 104])},
        "seed-004: The number of components taken from the address is determined by the "
        "dimensionality of dst1 (structured: index, byte offset)",
    ),
    HandCase(
        "ia_structured_oob_index",
        (ACTIVE, "imm_atomic_iadd.uav_structured.oob_index"),
        ("dcl_uav_structured u0, 8", "imm_atomic_iadd r0.x, u0, l(2, 0, 0, 0), l(1)"),
        {"r0": R0_INIT, "u0": structured(8, 2, [1, 2, 3, 4])},
        ("no_write", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003],
         "u0": structured(8, 2, [1, 2, 3, 4])},
        "seed-004: Out of bounds addressing on u# causes nothing to be written to memory",
    ),
    HandCase(
        "ia_structured_oob_index_ffffffff",
        (ACTIVE, "imm_atomic_iadd.uav_structured.oob_index"),
        ("dcl_uav_structured u0, 8", "imm_atomic_iadd r0.z, u0, r1.xy, l(1)"),
        {"r0": R0_INIT, "r1": [0xFFFFFFFF, 4, 0, 0], "u0": structured(8, 2, [1, 2, 3, 4])},
        ("no_write", "dst_undefined"),
        {"r0": [0xDEAD0000, 0xDEAD0001, None, 0xDEAD0003], "r1": [0xFFFFFFFF, 4, 0, 0],
         "u0": structured(8, 2, [1, 2, 3, 4])},
        "seed-004: Out of bounds addressing on u# causes nothing to be written to memory",
    ),
    HandCase(
        "ia_structured_oob_offset",
        (ACTIVE, "imm_atomic_iadd.uav_structured.oob_offset"),
        ("dcl_uav_structured u0, 8", "dcl_uav_raw u1",
         "imm_atomic_iadd r0.x, u0, l(0, 8, 0, 0), l(1)"),
        {"r0": R0_INIT, "u0": structured(8, 2, [1, 2, 3, 4]), "u1": raw([5])},
        ("resource_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": None, "u1": raw([5])},
        "seed-004: except if the u# is structured, and byte offset into the struct (second "
        "component of the address) is causing the out of bounds access, then the entire contents "
        "of the UAV become undefined",
    ),
    HandCase(
        "ia_structured_misaligned",
        (ACTIVE, "imm_atomic_iadd.uav_structured.misaligned"),
        ("dcl_uav_structured u0, 8", "imm_atomic_iadd r0.x, u0, l(0, 2, 0, 0), l(1)"),
        {"r0": R0_INIT, "u0": structured(8, 2, [1, 2, 3, 4])},
        ("resource_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": None},
        "FS 7.13 (facts A3): structured offset must be 4-aligned; an unaligned write makes the "
        "entire UAV undefined",
    ),
    HandCase(
        "ia_typed_uint_in_bounds",
        (ACTIVE, "imm_atomic_iadd.uav_typed.in_bounds", NO_CARRY),
        ("dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.y, u0, l(2), l(10)"),
        {"r0": R0_INIT, "u0": typed("R32_UINT", [5, 6, 7])},
        ("defined",),
        {"r0": [0xDEAD0000, 7, 0xDEAD0002, 0xDEAD0003], "u0": typed("R32_UINT", [5, 6, 17])},
        "seed-004: If typed, it must be declared as UINT/SINT with the bound resource format "
        "being R32_UINT/_SINT",
    ),
    HandCase(
        "ia_typed_sint_in_bounds",
        (ACTIVE, "imm_atomic_iadd.uav_typed.in_bounds", NO_CARRY),
        ("dcl_uav_typed_buffer (sint,sint,sint,sint) u0",
         "imm_atomic_iadd r0.x, u0, l(0), r2.x"),
        {"r0": R0_INIT, "r2": [0xFFFFFFFF, 0, 0, 0], "u0": typed("R32_SINT", [0, 6])},
        ("defined",),
        # 0 + 0xFFFFFFFF (-1): no carry out of 32 bits
        {"r0": [0, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "r2": [0xFFFFFFFF, 0, 0, 0],
         "u0": typed("R32_SINT", [0xFFFFFFFF, 6])},
        "seed-004: It is insensitive to sign",
    ),
    HandCase(
        "ia_typed_out_of_bounds",
        (ACTIVE, "imm_atomic_iadd.uav_typed.out_of_bounds"),
        ("dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.x, u0, l(3), l(1)"),
        {"r0": R0_INIT, "u0": typed("R32_UINT", [5, 6, 7])},
        ("no_write", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": typed("R32_UINT", [5, 6, 7])},
        "seed-004: Out of bounds addressing on u# causes nothing to be written to memory",
    ),
    HandCase(
        "ia_tgsm_raw_in_bounds",
        (ACTIVE, "imm_atomic_iadd.tgsm_raw.in_bounds", NO_CARRY),
        ("dcl_tgsm_raw g0, 16", "imm_atomic_iadd r0.x, g0, l(12), l(3)"),
        {"r0": R0_INIT, "g0": raw([1, 2, 3, 4])},
        ("defined",),
        {"r0": [4, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "g0": raw([1, 2, 3, 7])},
        "seed-004: In the compute shader it can also be thread group shared memory (g#); "
        "the value before the add is returned",
    ),
    HandCase(
        "ia_tgsm_raw_wrap",
        (ACTIVE, "imm_atomic_iadd.tgsm_raw.in_bounds", WRAP),
        ("dcl_tgsm_raw g0, 8", "imm_atomic_iadd r0.x, g0, l(4), l(0x80000000)"),
        {"r0": R0_INIT, "g0": raw([1, 0x80000000])},
        ("defined",),
        {"r0": [0x80000000, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "g0": raw([1, 0])},
        "FS 22.12.1 (facts A3): no carry beyond 32 bits",
    ),
    HandCase(
        "ia_tgsm_raw_out_of_bounds",
        (ACTIVE, "imm_atomic_iadd.tgsm_raw.out_of_bounds"),
        ("dcl_uav_raw u0", "dcl_tgsm_raw g0, 16", "dcl_tgsm_structured g1, 4, 2",
         "imm_atomic_iadd r0.x, g0, l(16), l(1)"),
        {"r0": R0_INIT, "u0": raw([9]), "g0": raw([1, 2, 3, 4]), "g1": structured(4, 2, [5, 6])},
        ("tgsm_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": raw([9]), "g0": None,
         "g1": None},
        "FS 22.17.24 (facts A2/A3, erratum tgsm_rule_missing): OOB on g# makes all shared memory "
        "undefined; seed-004: Out of bounds addressing on u# or g# causes an undefined result to "
        "be returned to the shader in dst0",
    ),
    HandCase(
        "ia_tgsm_raw_misaligned",
        (ACTIVE, "imm_atomic_iadd.tgsm_raw.misaligned"),
        ("dcl_tgsm_raw g0, 16", "imm_atomic_iadd r0.x, g0, l(6), l(1)"),
        {"r0": R0_INIT, "g0": raw([1, 2, 3, 4])},
        ("tgsm_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "g0": None},
        "FS 7.13 (facts A3): an unaligned address makes all of TGSM undefined",
    ),
    HandCase(
        "ia_tgsm_structured_in_bounds",
        (ACTIVE, "imm_atomic_iadd.tgsm_structured.in_bounds", NO_CARRY),
        ("dcl_tgsm_structured g0, 8, 2", "imm_atomic_iadd r0.z, g0, l(1, 0, 0, 0), l(5)"),
        {"r0": R0_INIT, "g0": structured(8, 2, [1, 2, 3, 4])},
        ("defined",),
        # index 1, offset 0: byte 8 -> word 2: 3 + 5 = 8
        {"r0": [0xDEAD0000, 0xDEAD0001, 3, 0xDEAD0003], "g0": structured(8, 2, [1, 2, 8, 4])},
        "seed-004: If dst1 is g#, it must be declared as raw or structured",
    ),
    HandCase(
        "ia_tgsm_structured_oob_index",
        (ACTIVE, "imm_atomic_iadd.tgsm_structured.out_of_bounds"),
        ("dcl_uav_raw u0", "dcl_tgsm_structured g0, 8, 2",
         "imm_atomic_iadd r0.x, g0, l(2, 0, 0, 0), l(5)"),
        {"r0": R0_INIT, "u0": raw([9]), "g0": structured(8, 2, [1, 2, 3, 4])},
        ("tgsm_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u0": raw([9]), "g0": None},
        "FS 22.17.24 (facts A3): OOB on g# makes all shared memory undefined, dst0 undefined",
    ),
    HandCase(
        "ia_tgsm_structured_oob_offset",
        (ACTIVE, "imm_atomic_iadd.tgsm_structured.out_of_bounds"),
        ("dcl_tgsm_structured g0, 8, 2", "imm_atomic_iadd r0.x, g0, l(0, 8, 0, 0), l(5)"),
        {"r0": R0_INIT, "g0": structured(8, 2, [1, 2, 3, 4])},
        ("tgsm_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "g0": None},
        "FS 22.17.24 (facts A3): OOB on g# makes all shared memory undefined, dst0 undefined",
    ),
    HandCase(
        "ia_tgsm_structured_misaligned",
        (ACTIVE, "imm_atomic_iadd.tgsm_structured.misaligned"),
        ("dcl_tgsm_structured g0, 8, 2", "imm_atomic_iadd r0.x, g0, l(0, 1, 0, 0), l(5)"),
        {"r0": R0_INIT, "g0": structured(8, 2, [1, 2, 3, 4])},
        ("tgsm_undefined", "dst_undefined"),
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "g0": None},
        "FS 7.13 (facts A3): an unaligned address makes all of TGSM undefined",
    ),
    HandCase(
        "ia_helper_in_bounds",
        ("imm_atomic_iadd.invocation.inactive",),
        ("dcl_uav_raw u1", "imm_atomic_iadd r0.x, u1, l(0), l(1)"),
        {"r0": R0_INIT, "u1": raw([10, 20]), "invocation": "helper"},
        ("no_write", "dst_undefined"),
        # in bounds, yet memory is unchanged and dst0 is undefined
        {"r0": [None, 0xDEAD0001, 0xDEAD0002, 0xDEAD0003], "u1": raw([10, 20]),
         "invocation": "helper"},
        "seed-004: a pixel/sample invocation only exists to serve as a helper ... this "
        "instruction does not alter the dst1 memory at all, and the returned value is undefined",
        target="ps_5_0",
    ),
    HandCase(
        "ia_discarded_misaligned",
        ("imm_atomic_iadd.invocation.inactive",),
        ("dcl_uav_structured u0, 8", "imm_atomic_iadd r0.w, u0, l(0, 2, 0, 0), l(1)"),
        {"r0": R0_INIT, "u0": structured(8, 1, [10, 20]), "invocation": "discarded"},
        ("no_write", "dst_undefined"),
        # inactive wins over the misaligned-write rule: memory is not altered at all
        {"r0": [0xDEAD0000, 0xDEAD0001, 0xDEAD0002, None], "u0": structured(8, 1, [10, 20]),
         "invocation": "discarded"},
        "seed-004: If the shader invocation is inactive, for example if the pixel has been "
        "discarded earlier in its execution, ... this instruction does not alter the dst1 memory "
        "at all",
        target="ps_5_0",
    ),
]

# ================================================================================================
# dmovc
#
# Source: seed-002 (English original): "If src0, then dest = src1 else dest = src2"; the .xy
# double takes "the first 32-bit component of src0, post-swizzle", the .zw double the second;
# "The absence of modifiers moves data without altering bits." Modifiers and _sat: FS 22.18.1,
# 22.18.2, 22.19.1 (facts A4).
#
# The select clauses are outcome `defined` (the choice of source is exact), so every dmovc
# instance lists `defined`, plus `dst_constrained` when a value clause constrains a result.
#
# Double bit patterns used (hi word, lo word):
#   1.0 = 3FF00000 00000000   -1.0 = BFF00000 00000000   2.0 = 40000000 00000000
#  -2.0 = C0000000 00000000   -3.0 = C0080000 00000000   0.5 = 3FE00000 00000000
#  -0.5 = BFE00000 00000000   -0.0 = 80000000 00000000   smallest denormal = 00000000 00000001
#  +inf = 7FF00000 00000000   -inf = FFF00000 00000000   quiet NaN payload 7FF8DEAD BEEF0001
#   1.5 + 5 ulp = 3FF80000 00000005

SEL1 = "dmovc.select.src1"
SEL2 = "dmovc.select.src2"
UNMOD = "dmovc.value.unmodified"
SIGN = "dmovc.value.sign_modifier"
MODNAN = "dmovc.value.modified_nan"
SATNAN = "dmovc.value.saturate_nan"
SATNZ = "dmovc.value.saturate_negative_zero"
SAT = "dmovc.value.saturate"
R0_OLD = [0x99999999, 0x99999999, 0x99999999, 0x99999999]
BOTH_TRUE = [1, 1, 0, 0]


def dmovc_case(name: str, clauses: tuple[str, ...], line: str, regs: dict[str, list[int]],
               outcomes: tuple[str, ...], r0: list[Any], cite: str) -> HandCase:
    """A dmovc instance whose registers other than r0 stay as given."""
    expect: dict[str, Any] = dict(regs)
    expect["r0"] = r0
    state = {"r0": R0_OLD, **regs}
    return HandCase(name, clauses, (DOUBLES, line), state, outcomes, expect, cite)


DMOVC: list[HandCase] = [
    dmovc_case(
        "dm_cond_sign_bit_selects_src1", (SEL1, SEL2, UNMOD),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": [0x80000000, 0, 0, 0],
         "r2": [0x11111111, 0x3FF00000, 0x22222222, 0x40000000],
         "r3": [0x33333333, 0xC0000000, 0x44444444, 0xBFF00000]},
        ("defined",),
        # cond.x = 0x80000000 has a bit set -> src1 first double; cond.y = 0 -> src2 second
        [0x11111111, 0x3FF00000, 0x44444444, 0xBFF00000],
        "seed-002: if the first 32-bit component of src0, post-swizzle, has any bit set, copy "
        "the first double from src1 (post swizzle) into dest.xy",
    ),
    dmovc_case(
        "dm_cond_zero_selects_src2", (SEL2, UNMOD),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": [0, 0, 0xFFFFFFFF, 0xFFFFFFFF],
         "r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]},
        ("defined",),
        # src0 zw are ignored even though they are all ones
        [5, 6, 7, 8],
        "seed-002: src0 is a 32bit/component vec2 across x and y (zw ignored); else dest = src2",
    ),
    dmovc_case(
        "dm_zw_condition_is_post_swizzle_y", (SEL2, UNMOD, SEL1),
        "dmovc r0.xyzw, r1.xzxx, r2.xyzw, r3.xyzw",
        {"r1": [0, 0, 5, 0], "r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]},
        ("defined",),
        # post-swizzle src0 = (r1.x, r1.z) = (0, 5): .xy from src2, .zw from src1 (r1.y = 0 unused)
        [5, 6, 3, 4],
        "seed-002: if the second 32-bit component of src0, post-swizzle, has any bit set, copy "
        "the second double from src1 (post swizzle) into dest.zw",
    ),
    dmovc_case(
        "dm_zw_only_leaves_xy", (SEL1, UNMOD),
        "dmovc r0.zw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": [0, 7, 0, 0], "r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]},
        ("defined",),
        # only the .zw double is written (cond = post-swizzle y = 7); r0.xy keep their value
        [0x99999999, 0x99999999, 3, 4],
        "seed-002: if (the dest mask contains .zw) ...; valid masks for dest are .xy, .zw, .xyzw",
    ),
    dmovc_case(
        "dm_xy_only_src1_swizzle_zwxy", (SEL1, UNMOD),
        "dmovc r0.xy, r1.xxxx, r2.zwxy, r3.xyzw",
        {"r1": [1, 0, 0, 0], "r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]},
        ("defined",),
        # first double of src1 post-swizzle .zwxy is (r2.z, r2.w)
        [3, 4, 0x99999999, 0x99999999],
        "seed-002: copy the first double from src1 (post swizzle) into dest.xy; valid swizzles "
        "for src1 and src2 are .xyzw, .xyxy, .zwxy, .zwzw",
    ),
    dmovc_case(
        "dm_src2_swizzle_zwzw", (SEL2, UNMOD),
        "dmovc r0.xyzw, l(0, 0, 0, 0), r2.xyzw, r3.zwzw",
        {"r2": [1, 2, 3, 4], "r3": [5, 6, 7, 8]},
        ("defined",),
        [7, 8, 7, 8],
        "seed-002: copy the first/second double from src2 (post swizzle)",
    ),
    dmovc_case(
        "dm_nan_payload_preserved", (SEL1, UNMOD, SEL2),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": [1, 0, 0, 0], "r2": [0xBEEF0001, 0x7FF8DEAD, 0, 0],
         "r3": [0, 0, 0x00000001, 0x7FF00000]},
        ("defined",),
        # quiet NaN 0x7FF8DEADBEEF0001 and signalling NaN 0x7FF0000000000001, bit-exact
        [0xBEEF0001, 0x7FF8DEAD, 0x00000001, 0x7FF00000],
        "seed-002: The absence of modifiers moves data without altering bits",
    ),
    dmovc_case(
        "dm_negative_zero_and_denormal_preserved", (SEL1, UNMOD),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0x80000000, 1, 0], "r3": [0, 0, 0, 0]},
        ("defined",),
        [0, 0x80000000, 1, 0],
        "seed-002: The absence of modifiers moves data without altering bits; FS 3.1.4: double "
        "denorms are not flushed",
    ),
    dmovc_case(
        "dm_modifier_on_unselected_source_ignored", (SEL1, UNMOD),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, -r3_abs.xyzw",
        {"r1": BOTH_TRUE, "r2": [0xBEEF0001, 0x7FF8DEAD, 0, 0x80000000],
         "r3": [1, 0x7FF80000, 2, 0xFFF80000]},
        ("defined",),
        [0xBEEF0001, 0x7FF8DEAD, 0, 0x80000000],
        "seed-002: If src0, then dest = src1 else dest = src2; absence of modifiers on the "
        "chosen src1 moves data without altering bits",
    ),
    dmovc_case(
        "dm_neg_flips_bit_63", (SEL1, SIGN),
        "dmovc r0.xyzw, r1.xyzw, -r2.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0x3FF00000, 5, 0xBFF80000], "r3": [0, 0, 0, 0]},
        ("defined",),
        # -(1.0) = -1.0; -(-1.5 - 5 ulp) = 1.5 + 5 ulp (low word untouched)
        [0, 0xBFF00000, 5, 0x3FF80000],
        "FS 22.18.2 (facts A4): - (negate) flips the sign",
    ),
    dmovc_case(
        "dm_neg_zero_and_infinity", (SEL2, SIGN),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, -r3.xyzw",
        {"r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0], "r3": [0, 0x80000000, 0, 0x7FF00000]},
        ("defined",),
        # -(-0.0) = +0.0; -(+inf) = -inf
        [0, 0, 0, 0xFFF00000],
        "FS 22.18.2 (facts A4): flips the sign, including on INF",
    ),
    dmovc_case(
        "dm_abs_clears_bit_63", (SEL1, SIGN),
        "dmovc r0.xyzw, r1.xyzw, r2_abs.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0xC0000000, 1, 0x80000000], "r3": [0, 0, 0, 0]},
        ("defined",),
        # |-2.0| = 2.0; |-denormal| = +denormal
        [0, 0x40000000, 1, 0],
        "FS 22.18.1 (facts A4): _abs forces the sign positive",
    ),
    dmovc_case(
        "dm_neg_abs_sets_bit_63", (SEL2, SIGN),
        "dmovc r0.xyzw, r1.xyzw, r2.xyzw, -r3_abs.xyzw",
        {"r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0], "r3": [0, 0x40000000, 0, 0xFFF00000]},
        ("defined",),
        # -|2.0| = -2.0; -|-inf| = -inf
        [0, 0xC0000000, 0, 0xFFF00000],
        "FS 22.18.1 (facts A4): combined with negate, it forces a negative sign (abs first)",
    ),
    dmovc_case(
        "dm_neg_on_nan", (SEL1, MODNAN, SEL2, UNMOD),
        "dmovc r0.xyzw, r1.xyzw, -r2.xyzw, r3.xyzw",
        {"r1": [1, 0, 0, 0], "r2": [0xBEEF0001, 0x7FF8DEAD, 0, 0], "r3": [0, 0, 7, 0x40000000]},
        ("defined", "dst_constrained"),
        # .xy: a NaN with an undefined bit pattern; .zw: src2 unmodified
        [NAN, NAN, 7, 0x40000000],
        "FS 22.18.2 (facts A4): applied to a NaN, the result is still NaN, but the NaN bit "
        "pattern is undefined",
    ),
    dmovc_case(
        "dm_abs_on_negative_nan", (SEL1, MODNAN),
        "dmovc r0.xyzw, r1.xyzw, r2_abs.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0xFFF80000, 1, 0x7FF00000], "r3": [0, 0, 0, 0]},
        ("dst_constrained",),  # both doubles constrained, none exact
        [NAN, NAN, NAN, NAN],
        "FS 22.18.1 (facts A4): _abs keeps NaN a NaN, with an undefined bit pattern",
    ),
    dmovc_case(
        "dm_sat_nan_is_zero", (SEL1, SATNAN, SEL2),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, -r3.xyzw",
        {"r1": [1, 0, 0, 0], "r2": [0xBEEF0001, 0x7FF8DEAD, 0, 0],
         "r3": [0, 0, 1, 0xFFF00000]},
        ("defined",),
        # sat(NaN) = 0, with or without a modifier on the NaN source
        [0, 0, 0, 0],
        "FS 22.19.1 (facts A4): min(1, max(0, v)) using dmin/dmax semantics, so sat(NaN) = 0",
    ),
    dmovc_case(
        "dm_sat_negative_zero", (SEL1, SATNZ),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0x80000000, 0, 0x80000000], "r3": [0, 0, 0, 0]},
        ("dst_constrained",),  # both doubles constrained, none exact
        # a zero of either sign: the low word 0, the high word 0 but for its sign bit
        [0, SIGN_FREE_ZERO, 0, SIGN_FREE_ZERO],
        "FS 22.19.1 (facts A4, spec erratum sat_negative_zero): _sat is min(1, max(0, v)); "
        "the sign of max(0, -0.0) is not fixed",
    ),
    dmovc_case(
        "dm_sat_negated_positive_zero", (SEL2, SATNZ, SAT),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, -r3.xyzw",
        {"r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0], "r3": [0, 0, 0, 0xC0000000]},
        ("defined", "dst_constrained"),
        # -(+0.0) = -0.0 -> a zero of either sign; -(-2.0) = 2.0 -> 1.0
        [0, SIGN_FREE_ZERO, 0, 0x3FF00000],
        "FS 22.19.1 (facts A4): _sat of the modified value: min(1, max(0, v))",
    ),
    dmovc_case(
        "dm_sat_clamps_above_and_below", (SEL1, SAT),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0x40000000, 0, 0xC0080000], "r3": [0, 0, 0, 0]},
        ("defined",),
        # 2.0 -> 1.0; -3.0 -> +0.0
        [0, 0x3FF00000, 0, 0],
        "FS 22.19.1 (facts A4): _sat computes min(1, max(0, v))",
    ),
    dmovc_case(
        "dm_sat_keeps_half_and_denormal", (SEL1, SAT),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw",
        {"r1": BOTH_TRUE, "r2": [0, 0x3FE00000, 1, 0], "r3": [0, 0, 0, 0]},
        ("defined",),
        # 0.5 and the smallest denormal lie in [0, 1]: kept bit-exact (no flush to zero)
        [0, 0x3FE00000, 1, 0],
        "FS 22.19.1 and 3.1.4 (facts A4): double instructions must not flush denorms",
    ),
    dmovc_case(
        "dm_sat_infinities_and_one", (SEL2, SAT),
        "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3_abs.xyzw",
        {"r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0], "r3": [0, 0xFFF00000, 0, 0xBFF00000]},
        ("defined",),
        # |-inf| = +inf -> 1.0; |-1.0| = 1.0 -> 1.0
        [0, 0x3FF00000, 0, 0x3FF00000],
        "FS 22.18.1 and 22.19.1 (facts A4): abs first, then min(1, max(0, v))",
    ),
]

CASES = STORE_STRUCTURED + IMM_ATOMIC_IADD + DMOVC


def spec_clause_ids() -> set[str]:
    """Every clause id of the spec (shared definitions expanded)."""
    return {c.id for c in load_default().all_clauses()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hand_case(case: HandCase) -> None:
    program = parse_program(list(case.program))
    state = state_from_json(case.state)
    result = execute(program, state, target=case.target, runtime=case.runtime)
    assert result.rule is None, f"rejected by {result.rule}: {case.cite}"
    assert result.outcomes == case.outcomes, case.cite
    assert sorted(result.clauses) == sorted(case.clauses), case.cite
    assert result.state is not None
    assert expected_to_json(result.state) == case.expect, case.cite


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


def test_hand_cases_name_real_clauses() -> None:
    """A typo in a hand case's clause id would otherwise only show up as an oracle mismatch."""
    known = spec_clause_ids()
    named = {cid for case in CASES for cid in case.clauses}
    assert named - known == set()


def test_every_spec_clause_has_a_hand_case() -> None:
    known = spec_clause_ids()
    assert known, "no clause ids found in spec/instructions"
    covered = {cid for case in CASES for cid in case.clauses}
    assert sorted(known - covered) == []
