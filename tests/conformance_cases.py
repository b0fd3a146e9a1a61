"""Hand-picked instruction instances, turned into vectors by the oracle, for the conformance tests.

The instances are chosen by hand so that each bundled mutant has at least one vector that tells it
from the spec; the expected states come from the oracle (the system the conformance suite tests
*other* implementations against), never from the code under test in conformance/.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json
from sm5.vectors.format import Header, Vector, write_file

DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
DOUBLES_11_1 = "dcl_globalFlags enableDoublePrecisionFloatOps | enable11_1DoubleExtensions"
ONE = 0x3FF00000          # high word of 1.0
TWO = 0x40000000          # high word of 2.0
QNAN_HI = 0x7FF80000


def structured(stride: int, count: int, fill: int = 0) -> dict[str, Any]:
    return {"kind": "structured", "stride": stride, "count": count,
            "data": [fill + i for i in range(stride * count // 4)]}


# (id, program, target, runtime, state)
CASES: list[tuple[str, list[str], str, str, dict[str, Any]]] = [
    ("store_structured/in_bounds/swizzled",
     ["dcl_uav_structured u0, 16", "store_structured u0.xyzw, r0.x, l(0), r1.yxwz"],
     "cs_5_0", "11.0", {"r0": [1, 0, 0, 0], "r1": [11, 12, 13, 14], "u0": structured(16, 4)}),
    ("store_structured/in_bounds/xy_offset4",
     ["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(4), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [2, 0, 0, 0], "r1": [21, 22, 23, 24], "u0": structured(16, 4)}),
    ("store_structured/in_bounds/xyz_offset0",
     ["dcl_uav_structured u0, 16", "store_structured u0.xyz, r0.x, l(0), r1.xyzw"],
     "ps_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [31, 32, 33, 34], "u0": structured(16, 2)}),
    ("store_structured/oob_index/just_past",
     ["dcl_uav_structured u0, 16", "store_structured u0.x, r0.x, l(0), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [4, 0, 0, 0], "r1": [41, 42, 43, 44], "u0": structured(16, 4)}),
    ("store_structured/oob_index/wraps_to_zero",
     ["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(0), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [0x40000000, 0, 0, 0], "r1": [51, 52, 53, 54],
                        "u0": structured(16, 4)}),
    ("store_structured/oob_offset/undefined",
     ["dcl_uav_structured u0, 16", "store_structured u0.xy, r0.x, l(12), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [61, 62, 63, 64], "u0": structured(16, 2)}),
    ("store_structured/tgsm/in_bounds_index1",
     ["dcl_tgsm_structured g0, 8, 4",
      "store_structured g0.xy, r0.x, l(0), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [1, 0, 0, 0], "r1": [71, 72, 73, 74], "g0": structured(8, 4)}),
    ("store_structured/illegal/mask_xz",
     ["dcl_uav_structured u0, 16", "store_structured u0.xz, r0.x, l(0), r1.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [1, 2, 3, 4], "u0": structured(16, 1)}),
    ("store_structured/illegal/vertex_on_11_0",
     ["dcl_uav_structured u0, 16", "store_structured u0.x, r0.x, l(0), r1.xyzw"],
     "vs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [1, 2, 3, 4], "u0": structured(16, 1)}),
    ("imm_atomic_iadd/raw/wraps",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.y, u0, r1.x, l(5)"],
     "cs_5_0", "11.0", {"r0": [7, 8, 9, 10], "r1": [8, 0, 0, 0],
                        "u0": {"kind": "raw", "data": [1, 2, 0xFFFFFFFE, 4, 5, 6, 7, 8,
                                                       9, 10, 11, 12]}}),
    ("imm_atomic_iadd/structured/offset4",
     ["dcl_uav_structured u0, 8", "imm_atomic_iadd r0.x, u0, r1.xyxx, l(3)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [1, 4, 0, 0], "u0": structured(8, 3, 100)}),
    ("imm_atomic_iadd/typed/index2",
     ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.x, u0, l(2), l(1)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "typed", "format": "R32_UINT",
                                                   "data": [10, 20, 30, 40]}}),
    ("imm_atomic_iadd/typed/oob",
     ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.x, u0, l(9), l(1)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "typed", "format": "R32_UINT",
                                                   "data": [10, 20, 30, 40]}}),
    # signed maximum: -1 (0xFFFFFFFF) against 1 keeps -1 in signed order; unsigned would replace
    ("atomic_imax/raw/across_sign",
     ["dcl_uav_raw u0", "atomic_imax u0, l(4), l(1)"],
     "cs_5_0", "11.0", {"u0": {"kind": "raw", "data": [7, 0xFFFFFFFF, 9]}}),
    # sync: _g is a compute-only flag; sync_uglobal exists in every stage on the 11.1 runtime
    ("sync/illegal/g_in_pixel", ["sync_g"], "ps_5_0", "11.0", {"r0": [1, 2, 3, 4]}),
    ("sync/legal/uglobal_in_vertex_on_11_1", ["sync_uglobal"], "vs_5_0", "11.1",
     {"r0": [1, 2, 3, 4]}),
    ("imm_atomic_iadd/helper/no_write",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     "ps_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [5, 6]},
                        "invocation": "helper"}),
    ("imm_atomic_iadd/illegal/cs_4_0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     "cs_4_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [5, 6]}}),
    ("imm_atomic_iadd/alias/dst_is_src0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, r0.x"],
     "cs_5_0", "11.0", {"r0": [5, 0, 0, 0], "r1": [0, 0, 0, 0],
                        "u0": {"kind": "raw", "data": [100, 200]}}),
    ("imm_atomic_cmp_exch/raw/match",
     ["dcl_uav_raw u0", "imm_atomic_cmp_exch r0.x, u0, l(4), l(200), l(7)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [100, 200]}}),
    ("ld_uav_typed/defaults/alpha_one",
     ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0",
      "ld_uav_typed r0.xyzw, l(1, 0, 0, 0), u0.xyzw"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "u0": {"kind": "typed", "format": "R32_UINT",
                                                   "data": [10, 20, 30]}}),
    ("imm_atomic_consume/counter/decrement",
     ["dcl_uav_structured u0, 4", "imm_atomic_consume r0.x, u0"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "u0": {"kind": "structured", "stride": 4,
                                                   "count": 2, "counter": 2, "data": [1, 2]}}),
    ("imm_atomic_iadd/slots/u8_on_11_1",
     ["dcl_uav_raw u8", "imm_atomic_iadd r0.x, u8, l(0), l(1)"],
     "cs_5_0", "11.1", {"r0": [0, 0, 0, 0], "u8": {"kind": "raw", "data": [5, 6]}}),
    ("imm_atomic_iadd/tgsm/20000_bytes_on_cs_5_0",
     ["dcl_tgsm_raw g0, 20000", "imm_atomic_iadd r0.x, g0, l(0), l(1)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "g0": {"kind": "raw", "data": [0] * 5000}}),
    ("imm_atomic_iadd/illegal/tgsm_total",
     ["dcl_tgsm_raw g0, 20000", "dcl_tgsm_raw g1, 20000", "imm_atomic_iadd r0.x, g0, l(0), l(1)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "g0": {"kind": "raw", "data": [0] * 5000},
                        "g1": {"kind": "raw", "data": [0] * 5000}}),
    ("store_structured/illegal/stride_6",
     ["dcl_uav_structured u0, 6", "store_structured u0.x, l(0), l(0), r1.xyzw"],
     "cs_5_0", "11.0", {"r1": [1, 2, 3, 4], "u0": {"kind": "structured", "stride": 6,
                                                   "count": 2, "data": [0, 0, 0]}}),
    ("dmovc/zw/cond_from_y",
     [DOUBLES, "dmovc r0.zw, r1.xyzw, r2.xyzw, r3.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [0, 1, 0, 0], "r2": [1, ONE, 2, TWO],
                        "r3": [3, 0x40080000, 4, 0x40100000]}),
    ("dmovc/cond/negative_zero_is_true",
     [DOUBLES, "dmovc r0.xy, r1.xyzw, r2.xyzw, r3.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [0x80000000, 0, 0, 0],
                        "r2": [1, ONE, 2, TWO], "r3": [3, 0x40080000, 4, 0x40100000]}),
    ("dmovc/sat/clamps",
     [DOUBLES, "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [1, 1, 0, 0],
                        "r2": [0, TWO, 1, QNAN_HI], "r3": [0, 0, 0, 0]}),
    ("dmovc/modifiers/neg_abs",
     [DOUBLES, "dmovc r0.xyzw, r1.xyzw, -r2.xyzw, |r3.xyzw|"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [1, 0, 0, 0],
                        "r2": [0x80000001, ONE, 0, 0], "r3": [0, 0, 0x80000001, 0xC0000000]}),
    ("dmovc/illegal/no_doubles_flag",
     ["dmovc r0.xy, r1.xyzw, r2.xyzw, r3.xyzw"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0],
                        "r3": [0, 0, 0, 0]}),
    # The spec's siblings (kernels an implementation could compute instead), one case each:
    # 5 | 3 = 7 where 5 ^ 3 = 6; 1.75 truncates to 1 (nearest: 2), 2.75 to 2 (nearest: 3);
    # (1 + 2^-52)^2 - (1 + 2^-51) is 2^-104 rounded once, 0 rounded twice; a helper
    # invocation's compare-exchange with a matching word writes nothing (performed: 7).
    ("atomic_or/sibling/overlapping_bits", ["dcl_uav_raw u0", "atomic_or u0, l(0), l(3)"],
     "cs_5_0", "11.0", {"u0": {"kind": "raw", "data": [5, 6]}}),
    ("imm_atomic_or/sibling/overlapping_bits",
     ["dcl_uav_raw u0", "imm_atomic_or r0.x, u0, l(0), l(3)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [5, 6]}}),
    ("atomic_xor/sibling/overlapping_bits", ["dcl_uav_raw u0", "atomic_xor u0, l(0), l(3)"],
     "cs_5_0", "11.0", {"u0": {"kind": "raw", "data": [5, 6]}}),
    ("imm_atomic_xor/sibling/overlapping_bits",
     ["dcl_uav_raw u0", "imm_atomic_xor r0.x, u0, l(0), l(3)"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [5, 6]}}),
    ("dtoi/sibling/fraction_above_half", [DOUBLES_11_1, "dtoi r0.x, r1.xyxy"],
     "cs_5_0", "11.1", {"r0": [0, 0, 0, 0], "r1": [0, 0x3FFC0000, 0, 0]}),
    ("dtou/sibling/fraction_above_half", [DOUBLES_11_1, "dtou r0.x, r1.xyxy"],
     "cs_5_0", "11.1", {"r0": [0, 0, 0, 0], "r1": [0, 0x40060000, 0, 0]}),
    ("dfma/sibling/rounded_once", [DOUBLES_11_1, "dfma r0.xy, r1.xyxy, r2.xyxy, r3.xyxy"],
     "cs_5_0", "11.1", {"r0": [0, 0, 0, 0], "r1": [1, ONE, 0, 0], "r2": [1, ONE, 0, 0],
                        "r3": [2, 0xBFF00000, 0, 0]}),
    ("atomic_cmp_store/sibling/helper_match",
     ["dcl_uav_raw u0", "atomic_cmp_store u0, l(0), l(5), l(7)"],
     "ps_5_0", "11.0", {"u0": {"kind": "raw", "data": [5, 6]}, "invocation": "helper"}),
    ("imm_atomic_cmp_exch/sibling/helper_match",
     ["dcl_uav_raw u0", "imm_atomic_cmp_exch r0.x, u0, l(0), l(5), l(7)"],
     "ps_5_0", "11.0", {"r0": [0, 0, 0, 0], "u0": {"kind": "raw", "data": [5, 6]},
                        "invocation": "helper"}),
    # The integer and bit siblings, worked out by hand: 5 & 3 = 1, 5 | 3 = 7, 5 ^ 3 = 6; a count
    # of 33 shifts by 1 (0x80000000 >> 1 is 0xC0000000 arithmetic, 0x40000000 logical); 1 and
    # 0xFFFFFFFF (-1) order one way signed, the other unsigned; 7 / 2 is 3 remainder 1;
    # 0x10000 * 0x10000 is 1:0 (high:low).
    ("and/sibling/bits", ["and r0.x, l(5), l(3)"], "cs_5_0", "11.0", {"r0": [0, 0, 0, 0]}),
    ("or/sibling/bits", ["or r0.x, l(5), l(3)"], "cs_5_0", "11.0", {"r0": [0, 0, 0, 0]}),
    ("xor/sibling/bits", ["xor r0.x, l(5), l(3)"], "cs_5_0", "11.0", {"r0": [0, 0, 0, 0]}),
    ("ishl/sibling/count_33", ["ishl r0.x, l(1), l(33)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ishr/sibling/count_33", ["ishr r0.x, l(0x80000000), l(33)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ushr/sibling/count_33", ["ushr r0.x, l(0x80000000), l(33)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ige/sibling/signs", ["ige r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ilt/sibling/signs", ["ilt r0.x, l(0xffffffff), l(1)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("uge/sibling/signs", ["uge r0.x, l(0xffffffff), l(1)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ult/sibling/signs", ["ult r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("umax/sibling/signs", ["umax r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("umin/sibling/signs", ["umin r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("udiv/sibling/seven_by_two", ["udiv r0.x, r1.x, l(7), l(2)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("umul/sibling/halves", ["umul r0.x, r1.x, l(0x10000), l(0x10000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    # Worked out by hand: max(1, -1) is 1 signed, 0xFFFFFFFF unsigned; -1 * 1 is
    # 0xFFFFFFFF:0xFFFFFFFF signed, 0:0xFFFFFFFF unsigned; 0xFFFFFFFF + 3 is carry 1, sum 2;
    # 1 - 3 is 0xFFFFFFFE, borrow 1 (3 - 1 is 2, borrow 0); swapc with a true condition puts
    # src2 (7) in dest0; 0x80000000 is a true condition (all 32 bits); a width of 32 is 0
    # (bits [4:0]): ubfe/ibfe give 0, bfi leaves src3 (7); a field of 8 at 28 is cut at bit 31:
    # 0xF0000000 >> 28 is 0xF (ubfe) or 0xFFFFFFFF (ibfe); firstbit of 0, and firstbit_shi of
    # -1, is 0xFFFFFFFF; the highest set bit of 0x10000000 is 3 from the MSB (28 from the LSB).
    ("imax/sibling/signs", ["imax r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("imin/sibling/signs", ["imin r0.x, l(1), l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("imul/sibling/minus_one", ["imul r0.x, r1.x, l(0xffffffff), l(1)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("imul/sibling/halves", ["imul r0.x, r1.x, l(0x10000), l(0x10000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("uaddc/sibling/carry", ["uaddc r0.x, r1.x, l(0xffffffff), l(3)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("usubb/sibling/borrow", ["usubb r0.x, r1.x, l(1), l(3)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("swapc/sibling/true", ["swapc r0.x, r1.x, l(1), l(5), l(7)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0], "r1": [0, 0, 0, 0]}),
    ("movc/sibling/negative_zero", ["movc r0.x, l(0x80000000), l(5), l(7)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ubfe/sibling/width_32", ["ubfe r0.x, l(32), l(0), l(1)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ubfe/sibling/past_bit_31", ["ubfe r0.x, l(8), l(28), l(0xf0000000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ibfe/sibling/width_32", ["ibfe r0.x, l(32), l(0), l(1)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("ibfe/sibling/past_bit_31", ["ibfe r0.x, l(8), l(28), l(0xf0000000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("bfi/sibling/width_32", ["bfi r0.x, l(32), l(0), l(5), l(7)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("firstbit_hi/sibling/zero", ["firstbit_hi r0.x, l(0)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("firstbit_hi/sibling/bit_28", ["firstbit_hi r0.x, l(0x10000000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("firstbit_lo/sibling/zero", ["firstbit_lo r0.x, l(0)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("firstbit_shi/sibling/minus_one", ["firstbit_shi r0.x, l(0xffffffff)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    ("firstbit_shi/sibling/bit_28", ["firstbit_shi r0.x, l(0x10000000)"], "cs_5_0", "11.0",
     {"r0": [0, 0, 0, 0]}),
    # Flow control, worked out by hand (FS 22.7). breakc_nz with r1.x = 1 in case 1 of a switch
    # in a loop leaves the switch only: r0.x = 0 + 100, then break leaves the loop (a breakc
    # that left the loop would keep 0). continue in the switch goes back to the loop start: the
    # counter r0.y reaches 3 and the loop ends with r0.x untouched by "iadd r0.x, .., 100"
    # after the switch (a continue that only left the switch adds 100 each time).
    ("breakc/flow/in_switch_in_loop",
     ["mov r0.x, l(0)", "loop", "switch l(1)", "case l(1)", "breakc_nz r1.x", "mov r0.x, l(5)",
      "break", "endswitch", "iadd r0.x, r0.x, l(100)", "break", "endloop"],
     "cs_5_0", "11.0", {"r0": [7, 0, 0, 0], "r1": [1, 0, 0, 0]}),
    ("continue/flow/in_switch_in_loop",
     ["mov r0.xy, l(0, 0, 0, 0)", "loop", "uge r1.x, r0.y, l(3)", "breakc_nz r1.x",
      "iadd r0.y, r0.y, l(1)", "switch l(1)", "case l(1)", "continue", "endswitch",
      "iadd r0.x, r0.x, l(100)", "endloop"],
     "cs_5_0", "11.0", {"r0": [7, 7, 0, 0], "r1": [0, 0, 0, 0]}),
    # A case with code falling into the next case is illegal on shader model 5 (FS 22.7.18).
    ("case/flow/fallthrough_with_code",
     ["switch r0.x", "case l(1)", "mov r0.y, l(1)", "case l(2)", "iadd r0.y, r0.y, l(2)",
      "break", "endswitch"],
     "cs_5_0", "11.0", {"r0": [1, 0, 0, 0]}),
    # 34 subroutines each add 1 and call the next: the call made with 32 entries on the return
    # stack (from l31) is skipped, so r0.x counts 32 (FS 7.12, 22.7.10).
    ("call/flow/depth_33",
     ["mov r0.x, l(0)", "call l0", "ret",
      *[line for k in range(33) for line in (f"label l{k}", "iadd r0.x, r0.x, l(1)",
                                              f"call l{k + 1}", "ret")],
      "label l33", "iadd r0.x, r0.x, l(1)", "ret"],
     "cs_5_0", "11.0", {"r0": [0, 0, 0, 0]}),
    # Program state: icb[2] of a two-element icb is past its end and reads 0 in every component
    # (FS 7.5, 7.5.1); a translator that clamps to the last element reads 5, 6, 7, 8.
    ("mov/state/icb_past_end",
     ["dcl_immediateConstantBuffer { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }",
      "mov r0.xyzw, icb[r1.x + 0].xyzw"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [2, 0, 0, 0]}),
    # float32 conversions (FS 22.13): ftoi of a NaN is 0 and of 1.5 is 1 (truncation); ftou of
    # -1.0 is 0; itof of 0xFFFFFFFF is -1.0, utof of 0x80000000 is 2^31; f32tof16 of
    # 1 + 3 * 2^-12 is 0x3C00 (toward zero; to nearest gives 0x3C01); f16tof32 reads the low
    # 16 bits (0x3C00: 1.0).
    ("ftoi/convert/nan_and_fraction",
     ["ftoi r0.xy, r1.xyxx"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x7FC00000, 0x3FC00000, 0, 0]}),
    ("ftou/convert/negative_one",
     ["ftou r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0xBF800000, 0, 0, 0]}),
    ("itof/convert/minus_one",
     ["itof r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0xFFFFFFFF, 0, 0, 0]}),
    ("utof/convert/two_to_the_31",
     ["utof r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x80000000, 0, 0, 0]}),
    ("f32tof16/convert/toward_zero",
     ["f32tof16 r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x3F801800, 0, 0, 0]}),
    ("f16tof32/convert/low_bits",
     ["f16tof32 r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x3C00, 0, 0, 0]}),
    # float32 operations read a denormal as the zero of its sign (FS 3.1.3.2, 22.6): 2^-149
    # equals 0 and is not above it; min(-2^-149, -0) and max(0, 2^-149) choose between equal
    # zeros (-0, +0); round_pi(2^-149) is +0, round_ni(-2^-149) is -0 and frc(2^-149) is +0.
    ("eq/denormal/equals_zero", ["eq r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0], "r2": [0, 0, 0, 0]}),
    ("ne/denormal/equals_zero", ["ne r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0], "r2": [0, 0, 0, 0]}),
    ("ge/denormal/zero_not_below", ["ge r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0, 0, 0, 0], "r2": [1, 0, 0, 0]}),
    ("lt/denormal/zero_not_below", ["lt r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0, 0, 0, 0], "r2": [1, 0, 0, 0]}),
    ("min/denormal/equal_to_negative_zero", ["min r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x80000001, 0, 0, 0],
                        "r2": [0x80000000, 0, 0, 0]}),
    ("max/denormal/equal_to_zero", ["max r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0, 0, 0, 0], "r2": [1, 0, 0, 0]}),
    ("round_pi/denormal/is_zero", ["round_pi r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0]}),
    ("round_ni/denormal/is_zero", ["round_ni r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x80000001, 0, 0, 0]}),
    ("frc/denormal/is_zero", ["frc r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0]}),
    # 2^-149 + 0 and 2^-149 * 1.0 are +0: the denormal source reads 0 (FS 3.1.3.2).
    ("add/denormal/reads_zero", ["add r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0], "r2": [0, 0, 0, 0]}),
    ("mul/denormal/reads_zero", ["mul r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0],
                        "r2": [0x3F800000, 0, 0, 0]}),
    # sqrt(2^-149) is +0 and sqrt(-2^-149) is -0, not a NaN: the denormal reads as a zero.
    ("sqrt/denormal/reads_zero", ["sqrt r0.xy, r1.xyxx"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0x80000001, 0, 0]}),
    # Tolerances: rcp(2.0) lies within 2^-21 of 0.5 (0x3EFFFFF8 .. 0x3F000004), not one float32
    # beyond; log(1.0) within 2^-21 of 0 (0xB5000000 .. 0x35000000); rsq(-4) and log(-4) are NaNs
    # (FS 22.10.19, 22.10.8), not the 0.5 and 2 of |x|.
    ("rcp/tolerance/half", ["rcp r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x40000000, 0, 0, 0]}),
    ("rsq/negative/nan", ["rsq r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0xC0800000, 0, 0, 0]}),
    ("log/negative/nan", ["log r0.xy, r1.xy"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0xC0800000, 0x3F800000, 0, 0]}),
    # mad(1 + 2^-23, 1 - 2^-24, -1): -0.0 .. 2^-23 (the product either neighbour); div 1 / 3
    # within 0x3EAAAAAA .. 0x3EAAAAAB, which rcp's 2^-21 reciprocal times 1 leaves.
    ("mad/tolerance/product_rounded", ["mad r0.x, r1.x, r2.x, r3.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x3F800001, 0, 0, 0],
                        "r2": [0x3F7FFFFF, 0, 0, 0], "r3": [0xBF800000, 0, 0, 0]}),
    ("div/tolerance/third", ["div r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x3F800000, 0, 0, 0],
                        "r2": [0x40400000, 0, 0, 0]}),
    # dp2/dp3/dp4 of (1 + 2^-23, 1 + 2^-23, 1, 1) and (1 + 2^-23, -1, 1, 1): the first product
    # rounds either way, so the sum spans two or more float32s.
    # sincos(1.0): sin 0.84147 into destSIN, cos 0.54030 into destCOS, each within 0.0008
    # (FS 22.10.20), far apart enough that the two ranges do not meet.
    ("sincos/tolerance/one", ["sincos r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [9, 9, 9, 9], "r2": [0x3F800000, 0, 0, 0]}),
    # Denormal operands read as zeros (FS 3.1.3.2): rcp(2^-149) and rsq(2^-149) are +inf, not
    # 2^149 and 2^74.5; log(2^-149) is -inf, not -149; 1 / 2^-149 is +inf; 2^-149 / 2^-149 is a
    # NaN (0 / 0), not 1.0; mad(0, 0, -2^-149) is +0, not -2^-149; the dot product of
    # (2^-149, 0, 0, 0) and (2^31, 0, 0, 0) is +0, not 2^-118. sqrt(2.0) lies within 1 ULP
    # (0x3FB504F3 or 0x3FB504F4), not 0x3FB504F5.
    ("rcp/denormal/reads_zero", ["rcp r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x7FFFFF, 0, 0, 0]}),
    ("rsq/denormal/reads_zero", ["rsq r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0]}),
    ("log/denormal/reads_zero", ["log r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0]}),
    ("div/denormal/reads_zero", ["div r0.x, r1.x, r2.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0], "r2": [1, 0, 0, 0]}),
    ("mad/denormal/reads_zero", ["mad r0.x, r1.x, r2.x, r3.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0, 0, 0, 0], "r2": [0, 0, 0, 0],
                        "r3": [0x80000001, 0, 0, 0]}),
    *((f"dp{n}/denormal/reads_zero", [f"dp{n} r0.x, r1, r2"],
       "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [1, 0, 0, 0],
                          "r2": [0x4F000000, 0, 0, 0]}) for n in (2, 3, 4)),
    ("sqrt/tolerance/two", ["sqrt r0.x, r1.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x40000000, 0, 0, 0]}),
    # IEEE's sign of an exact zero sum (FS 3.1.3.1): 0 * 0 + 0 * -2^31 is +0 + -0 = +0, and
    # -2^127 * 0 + 0 is -0 + +0 = +0, not -0.
    *((f"dp{n}/zero/sum_positive", [f"dp{n} r0.x, r1, r2"],
       "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0, 0, 0, 0],
                          "r2": [0, 0xCF000000, 0, 0]}) for n in (2, 3, 4)),
    ("mad/zero/sum_positive", ["mad r0.x, r1.x, r2.x, r3.x"],
     "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0xFF000000, 0, 0, 0],
                        "r2": [0, 0, 0, 0], "r3": [0, 0, 0, 0]}),
    *((f"dp{n}/tolerance/product_rounded", [f"dp{n} r0.x, r1, r2"],
       "cs_5_0", "11.0", {"r0": [9, 9, 9, 9], "r1": [0x3F800001, 0x3F800001, 0x3F800000,
                                                        0x3F800000],
                          "r2": [0x3F800001, 0xBF800000, 0x3F800000, 0x3F800000]})
      for n in (2, 3, 4)),
]


def vector(case_id: str, program: list[str], target: str, runtime: str,
           state: dict[str, Any]) -> Vector:
    """The vector the oracle makes of one instance."""
    execution = execute(parse_program(program), state_from_json(state), target, runtime)
    expect: dict[str, Any] = {"outcomes": list(execution.outcomes)}
    if execution.rejected:
        expect["rule"] = execution.rule
    else:
        assert execution.state is not None
        expect["state"] = expected_to_json(execution.state)
    return Vector(case_id, tuple(program), target, runtime, state, expect,
                  execution.clauses, (), execution.reason)


def all_vectors() -> list[Vector]:
    return [vector(*case) for case in CASES]


def write_vectors(path: Path, vectors: Iterable[Vector]) -> Path:
    header = Header("mixed", "0.1.0", {"name": "tests", "version": "1", "seed": 0, "level": 0}, 0)
    write_file(path, header, vectors)
    return path
