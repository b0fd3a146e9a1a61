"""The legality checker on hand-written instances: each lists exactly the rules it breaks.

The expected rule ids are worked out from the sources (seed pages, facts A1-A5) and the rule ids
of spec/; the last tests check that the rules generated from the operand tables are exactly those
the YAML operand tables call for, computed from the YAML itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hand_cases import load_all

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.legality import first_violation, violations
from sm5.oracle.machine.state import MachineState, state_from_json
from sm5.oracle.model.spec import instruction_document, load_default

SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"
DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"
SS_U0 = "dcl_uav_structured u0, 16"
STORE_U0 = "store_structured u0.x, l(0), l(0), r0.x"
DMOVC = "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw"
LD_T0 = "ld_raw r0.xyzw, l(0), t0.xyzw"


def broken(lines: list[str], target: str = "cs_5_0", runtime: str = "11.0",
           state: MachineState | None = None) -> list[str]:
    return [rule.id for rule in violations(parse_program(lines), target, runtime, state)]


# (name, target, runtime, program lines, expected rule ids in report order, source)
CASES: list[tuple[str, str, str, list[str], list[str], str]] = [
    # --- the double instructions' feature rules (the global flags of the doubles) ----------
    ("dadd_without_doubles", "cs_5_0", "11.0", ["dadd r0.xyzw, r1.xyzw, r2.xyzw"],
     ["dadd.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dmul_without_doubles", "cs_5_0", "11.0", ["dmul r0.xyzw, r1.xyzw, r2.xyzw"],
     ["dmul.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dmin_without_doubles", "cs_5_0", "11.0", ["dmin r0.xyzw, r1.xyzw, r2.xyzw"],
     ["dmin.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dmax_without_doubles", "cs_5_0", "11.0", ["dmax r0.xyzw, r1.xyzw, r2.xyzw"],
     ["dmax.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dmov_without_doubles", "cs_5_0", "11.0", ["dmov r0.xyzw, r1.xyzw"],
     ["dmov.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("deq_without_doubles", "cs_5_0", "11.0", ["deq r0.xy, r1.xyzw, r2.xyzw"],
     ["deq.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dge_without_doubles", "cs_5_0", "11.0", ["dge r0.xy, r1.xyzw, r2.xyzw"],
     ["dge.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dlt_without_doubles", "cs_5_0", "11.0", ["dlt r0.xy, r1.xyzw, r2.xyzw"],
     ["dlt.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dne_without_doubles", "cs_5_0", "11.0", ["dne r0.xy, r1.xyzw, r2.xyzw"],
     ["dne.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("ddiv_without_doubles", "cs_5_0", "11.1",
     ["dcl_globalFlags enable11_1DoubleExtensions", "ddiv r0.xyzw, r1.xyzw, r2.xyzw"],
     ["ddiv.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("ddiv_without_extended_doubles", "cs_5_0", "11.1",
     [DOUBLES, "ddiv r0.xyzw, r1.xyzw, r2.xyzw"],
     ["ddiv.legal.extended_doubles_feature"],
     "TPF: D3D11_1_SB_GLOBAL_FLAG_ENABLE_DOUBLE_EXTENSIONS"),
    ("dtoi_without_doubles", "cs_5_0", "11.1",
     ["dcl_globalFlags enable11_1DoubleExtensions", "dtoi r0.xy, r1.xyzw"],
     ["dtoi.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dtoi_without_extended_doubles", "cs_5_0", "11.1",
     [DOUBLES, "dtoi r0.xy, r1.xyzw"],
     ["dtoi.legal.extended_doubles_feature"],
     "TPF: D3D11_1_SB_GLOBAL_FLAG_ENABLE_DOUBLE_EXTENSIONS"),
    ("dtou_without_doubles", "cs_5_0", "11.1",
     ["dcl_globalFlags enable11_1DoubleExtensions", "dtou r0.xy, r1.xyzw"],
     ["dtou.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("dtou_without_extended_doubles", "cs_5_0", "11.1",
     [DOUBLES, "dtou r0.xy, r1.xyzw"],
     ["dtou.legal.extended_doubles_feature"],
     "TPF: D3D11_1_SB_GLOBAL_FLAG_ENABLE_DOUBLE_EXTENSIONS"),
    ("itod_without_doubles", "cs_5_0", "11.1",
     ["dcl_globalFlags enable11_1DoubleExtensions", "itod r0.xyzw, r1.xyzw"],
     ["itod.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("itod_without_extended_doubles", "cs_5_0", "11.1",
     [DOUBLES, "itod r0.xyzw, r1.xyzw"],
     ["itod.legal.extended_doubles_feature"],
     "TPF: D3D11_1_SB_GLOBAL_FLAG_ENABLE_DOUBLE_EXTENSIONS"),
    ("utod_without_doubles", "cs_5_0", "11.1",
     ["dcl_globalFlags enable11_1DoubleExtensions", "utod r0.xyzw, r1.xyzw"],
     ["utod.legal.doubles_feature"], "TPF: D3D11_SB_GLOBAL_FLAG_ENABLE_DOUBLE_PRECISION_FLOAT_OPS"),
    ("utod_without_extended_doubles", "cs_5_0", "11.1",
     [DOUBLES, "utod r0.xyzw, r1.xyzw"],
     ["utod.legal.extended_doubles_feature"],
     "TPF: D3D11_1_SB_GLOBAL_FLAG_ENABLE_DOUBLE_EXTENSIONS"),
    # --- write masks, swizzles, modifiers, _sat (operand tables) ------------------------------
    ("ss_mask_xz", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.xz, l(0), l(0), r0.xyzw"],
     ["store_structured.operand.dst0.mask"],
     "seed-003: dst0 can only have a write mask that is one of the following: .x, .xy, .xyz, "
     ".xyzw"),
    ("ss_mask_y", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.y, l(0), l(0), r0.x"],
     ["store_structured.operand.dst0.mask"], "seed-003: write mask .x, .xy, .xyz, .xyzw only"),
    ("ss_mask_yzw", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.yzw, l(0), l(0), r0.xyzw"],
     ["store_structured.operand.dst0.mask"], "seed-003: write mask without gaps from .x"),
    ("dmovc_mask_x", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.x, r1.xyzw, r2.xyzw, r3.xyzw"],
     ["dmovc.operand.dest.mask"], "seed-002: The valid masks for dest are .xy, .zw, .xyzw"),
    ("dmovc_mask_xyz", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xyz, r1.xyzw, r2.xyzw, r3.xyzw"],
     ["dmovc.operand.dest.mask"], "seed-002: The valid masks for dest are .xy, .zw, .xyzw"),
    ("dmovc_src1_swizzle_xxxx", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xyzw, r1.xyzw, r2.xxxx, r3.xyzw"],
     ["dmovc.operand.src1.swizzle"],
     "seed-002: The valid swizzles for src1 and src2 containing doubles are .xyzw, .xyxy, "
     ".zwxy, .zwzw"),
    ("dmovc_src2_swizzle_yxwz", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xyzw, r1.xyzw, r2.xyzw, r3.yxwz"],
     ["dmovc.operand.src2.swizzle"], "seed-002: valid swizzles for src1 and src2"),
    ("dmovc_src0_any_swizzle", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xyzw, r1.wzwy, r2.zwxy, r3.xyxy"],
     [], "seed-002: The valid swizzles for src0 are anything"),
    ("dmovc_modifiers_on_src1_src2", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xy, r1.xxxx, -r2_abs.zwzw, r3_abs.xyzw"],
     [], "seed-002 syntax: [-]src1[_abs][.swizzle], [-]src2[_abs][.swizzle]"),
    ("dmovc_modifier_on_src0", "cs_5_0", "11.0",
     [DOUBLES, "dmovc r0.xyzw, -r1.xyzw, r2.xyzw, r3.xyzw"],
     ["dmovc.operand.src0.modifier"], "seed-002 syntax: src0[.swizzle] takes no modifier"),
    ("ss_src0_neg", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.x, l(0), l(0), -r0.x"],
     ["store_structured.operand.src0.modifier"],
     "seed-003 syntax: src0[.swizzle]; No format conversion"),
    ("ss_src0_abs", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.x, l(0), l(0), r0_abs.x"],
     ["store_structured.operand.src0.modifier"], "seed-003 syntax: src0[.swizzle]"),
    ("ss_address_neg", "cs_5_0", "11.0",
     [SS_U0, "store_structured u0.x, -r1.x, l(0), r0.x"],
     ["store_structured.operand.dstAddress.modifier"],
     "seed-003 syntax: dstAddress[.select_component]"),
    ("ss_sat", "cs_5_0", "11.0",
     [SS_U0, "store_structured_sat u0.x, l(0), l(0), r0.x"],
     ["store_structured.legal.saturate"], "seed-003 syntax: store_structured has no [_sat]"),
    ("ia_sat", "cs_5_0", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_iadd_sat r0.x, u0, l(0), l(1)"],
     ["imm_atomic_iadd.legal.saturate"], "seed-004 syntax: imm_atomic_iadd has no [_sat]"),
    ("dmovc_sat_legal", "cs_5_0", "11.0",
     [DOUBLES, "dmovc_sat r0.xyzw, r1.xyzw, r2.xyzw, r3.xyzw"],
     [], "seed-002 syntax: dmovc[_sat]"),
    ("ia_dst0_two_components", "cs_5_0", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.xy, u0, l(0), l(1)"],
     ["imm_atomic_iadd.operand.dst0.mask"],
     "seed-004 syntax: dst0[.single_component_mask]"),
    ("ss_dst0_raw_uav", "cs_5_0", "11.0",
     ["dcl_uav_raw u0", STORE_U0],
     ["store_structured.operand.dst0.kind"],
     "seed-003: random-access write ... into a structured buffer UAV"),
    ("ss_dst0_temp_register", "cs_5_0", "11.0",
     ["store_structured r1.x, l(0), l(0), r0.x"],
     ["store_structured.operand.dst0.file"], "seed-003: dst0 must be a UAV (u#) (or g#)"),
    # --- g# only in the compute shader ---------------------------------------------------------
    ("ss_tgsm_in_pixel_shader", "ps_5_0", "11.0",
     ["dcl_tgsm_structured g0, 16, 4", "store_structured g0.x, l(0), l(0), r0.x"],
     ["store_structured.operand.dst0.stage", "dcl_tgsm.legal.compute_only"],
     "seed-003: In the compute shader it can also be thread group shared memory (g#); "
     "FS 22.3.46: dcl_tgsm_structured is compute-shader only"),
    ("ia_tgsm_in_pixel_shader", "ps_5_0", "11.0",
     ["dcl_tgsm_raw g0, 16", "imm_atomic_iadd r0.x, g0, l(0), l(1)"],
     ["imm_atomic_iadd.operand.dst1.stage", "dcl_tgsm.legal.compute_only"],
     "seed-004: In the compute shader it can also be thread group shared memory (g#)"),
    ("ss_thread_id_in_pixel_shader", "ps_5_0", "11.0",
     ["dcl_uav_structured u0, 16",
      "store_structured u0.x, vThreadIDInGroupFlattened.x, l(0), r0.x"],
     ["store_structured.operand.dstAddress.stage"],
     "FS 18.6.10: vThreadIDInGroupFlattened is a compute-shader input"),
    ("tgsm_structured_no_structures", "cs_5_0", "11.0",
     ["dcl_tgsm_structured g0, 16, 0", "store_structured g0.x, l(0), l(0), r0.x"],
     ["dcl_tgsm_structured.legal.count"], "FS 22.3.46: a structured g# holds structures"),
    # --- shader model and stage availability ---------------------------------------------------
    ("ia_cs_4_0", "cs_4_0", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, l(1)"],
     ["imm_atomic_iadd.availability.target"],
     "seed-004: Shader Model 4 no; FS 18.7.2.5: no atomic operations on cs_4_x"),
    ("ia_cs_4_1", "cs_4_1", "11.1",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, l(1)"],
     ["imm_atomic_iadd.availability.target"], "seed-004: Shader Model 4.1 no"),
    ("ia_cs_5_0", "cs_5_0", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, l(1)"],
     [], "seed-004: Shader Model 5 yes; Compute on 11.0"),
    ("ia_vs_5_0_on_11_0", "vs_5_0", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, l(1)"],
     ["imm_atomic_iadd.availability.stage"],
     "seed-004 first stage table (read as Pixel and Compute on 11.0)"),
    ("ia_ds_5_0_on_11_1", "ds_5_0", "11.1",
     ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.x, l(1)"],
     [], "seed-004 second stage table: all stages on the Direct3D 11.1 runtime"),
    ("ss_vs_5_0_on_11_0", "vs_5_0", "11.0", [SS_U0, STORE_U0],
     ["store_structured.availability.stage"],
     "seed-003 first stage table: Pixel and Compute only"),
    ("ss_gs_5_0_on_11_0", "gs_5_0", "11.0", [SS_U0, STORE_U0],
     ["store_structured.availability.stage"], "seed-003 first stage table"),
    ("ss_vs_5_0_on_11_1", "vs_5_0", "11.1", [SS_U0, STORE_U0], [],
     "seed-003: this instruction applies to all shader stages for the Direct3D 11.1 runtime"),
    ("ss_hs_5_0_on_11_1", "hs_5_0", "11.1", [SS_U0, STORE_U0], [],
     "seed-003 second stage table"),
    ("ss_ps_5_0_on_11_0", "ps_5_0", "11.0", [SS_U0, STORE_U0], [],
     "seed-003 first stage table: Pixel"),
    ("ss_cs_4_0_uav", "cs_4_0", "11.0", [SS_U0, STORE_U0], [],
     "seed-003: cs_4_0 and cs_4_1 support this instruction for UAV and TGSM"),
    ("ss_cs_4_1_uav", "cs_4_1", "11.0", [SS_U0, STORE_U0], [],
     "seed-003: cs_4_0 and cs_4_1 support this instruction for UAV and TGSM"),
    ("ss_ps_4_0", "ps_4_0", "11.0", [SS_U0, STORE_U0],
     ["store_structured.availability.target"],
     "seed-003 Minimum Shader Model: Shader Model 4 no (only cs_4_x is excepted)"),
    ("ss_cs_4_0_tgsm_thread_id", "cs_4_0", "11.0",
     ["dcl_tgsm_structured g0, 16, 4",
      "store_structured g0.x, vThreadIDInGroupFlattened.x, l(0), r0.x"],
     [], "FS 18.7.2.9 (facts A2): index vThreadIDInGroupFlattened, literal byte offset"),
    ("ss_cs_4_0_tgsm_register_index", "cs_4_0", "11.0",
     ["dcl_tgsm_structured g0, 16, 4", "store_structured g0.x, r1.x, l(0), r0.x"],
     ["store_structured.legal.cs_4_x_tgsm_index"],
     "FS 18.7.2.9 (facts A2): the struct index must be vThreadIDInGroupFlattened"),
    ("ss_cs_4_1_tgsm_register_offset", "cs_4_1", "11.0",
     ["dcl_tgsm_structured g0, 16, 4",
      "store_structured g0.x, vThreadIDInGroupFlattened.x, r1.y, r0.x"],
     ["store_structured.legal.cs_4_x_tgsm_offset_literal"],
     "FS 18.7.2.9 (facts A2): the byte offset must be a literal"),
    ("ss_cs_5_0_tgsm_register_index", "cs_5_0", "11.0",
     ["dcl_tgsm_structured g0, 16, 4", "store_structured g0.x, r1.x, r1.y, r0.x"],
     [], "the cs_4_x TGSM restrictions do not apply to cs_5_0"),
    # --- typed UAVs for atomics --------------------------------------------------------------
    ("ia_typed_float", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (float,float,float,float) u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     ["imm_atomic_iadd.legal.typed_return_type"],
     "seed-004: If typed, it must be declared as UINT/SINT"),
    ("ia_typed_uint", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     [], "seed-004: declared as UINT/SINT"),
    ("ia_typed_sint", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (sint,sint,sint,sint) u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     [], "seed-004: declared as UINT/SINT"),
    ("aia_typed_float", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (float,float,float,float) u0", "atomic_iadd u0, l(0), l(1)"],
     ["atomic_iadd.legal.typed_return_type"],
     "FS 22.17.12: a typed u# is declared UINT or SINT"),
    ("aia_typed_sint", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (sint,sint,sint,sint) u0", "atomic_iadd u0, l(0), l(1)"],
     [], "FS 22.17.12: declared UINT or SINT"),
    ("ice_typed_unorm", "cs_5_0", "11.0",
     ["dcl_uav_typed_buffer (unorm,unorm,unorm,unorm) u0",
      "imm_atomic_cmp_exch r0.x, u0, l(0), l(1), l(2)"],
     ["imm_atomic_cmp_exch.legal.typed_return_type"],
     "FS 22.17.23: a typed u# is declared UINT or SINT"),
    ("ice_cs_4_1", "cs_4_1", "11.0",
     ["dcl_uav_raw u0", "imm_atomic_cmp_exch r0.x, u0, l(0), l(1), l(2)"],
     ["imm_atomic_cmp_exch.availability.target"],
     "FS 18.7.2.5: no atomic operations on cs_4_x"),
    ("ls_uav_in_vs_11_0", "vs_5_0", "11.0",
     ["dcl_uav_structured u0, 4", "ld_structured r0.x, l(0), l(0), u0.xxxx"],
     ["ld_structured.legal.uav_stage"],
     "FS 5.3.9: on 11.0 UAVs exist only in the pixel and compute shaders"),
    ("ls_uav_in_vs_4_0", "vs_4_0", "11.1",
     ["dcl_globalFlags enableRawAndStructuredBuffers", "dcl_uav_structured u0, 4",
      "ld_structured r0.x, l(0), l(0), u0.xxxx"],
     ["ld_structured.legal.downlevel_srv_only"],
     "FS 18.7.2.4: vs/gs/ps_4_x read structured buffers only through SRVs"),
    ("ls_srv_in_vs_4_0_without_flag", "vs_4_0", "11.0",
     ["dcl_resource_structured t0, 4", "ld_structured r0.x, l(0), l(0), t0.xxxx"],
     ["ld_structured.legal.downlevel_flag", "dcl_resource.legal.shader_4_x_flag"],
     "FS 18.7.2.4, 18.7.3.2: vs/gs/ps_4_x declare enableRawAndStructuredBuffers"),
    ("ls_srv_in_vs_4_0_with_flag", "vs_4_0", "11.0",
     ["dcl_globalFlags enableRawAndStructuredBuffers", "dcl_resource_structured t0, 4",
      "ld_structured r0.x, l(0), l(0), t0.xxxx"],
     [], "FS 18.7.2.4: with the flag, a vs_4_0 reads a structured SRV"),
    ("ia_typed_cs_4_0", "cs_4_0", "11.0",
     ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)"],
     ["imm_atomic_iadd.availability.target", "dcl_uav_typed.legal.cs_4_x"],
     "FS 18.7.2.5 (facts A5): no typed UAV access and no atomics on cs_4_x"),
    # --- doubles -----------------------------------------------------------------------------
    ("dmovc_without_doubles_flag", "cs_5_0", "11.0", [DMOVC],
     ["dmovc.legal.doubles_feature"],
     "facts A4: the shader sets ENABLE_DOUBLE_PRECISION_FLOAT_OPS in dcl_globalFlags"),
    ("dmovc_with_doubles_flag_vs", "vs_5_0", "11.0", [DOUBLES, DMOVC], [],
     "seed-002 stage table: all stages"),
    ("dmovc_cs_4_0", "cs_4_0", "11.0", [DOUBLES, DMOVC],
     ["dmovc.availability.target"],
     "seed-002 Minimum Shader Model: Shader Model 4 no; facts A4: no 4_x shader exposes doubles"),
    # --- declarations ------------------------------------------------------------------------
    ("dcl_stride_6", "cs_5_0", "11.0", ["dcl_uav_structured u0, 6", STORE_U0],
     ["dcl_uav_structured.legal.stride"],
     "FS 22.3.44 (facts A1): structByteStride must be greater than 0 and a multiple of 4"),
    ("dcl_stride_0", "cs_5_0", "11.0", ["dcl_uav_structured u0, 0", STORE_U0],
     ["dcl_uav_structured.legal.stride"], "FS 22.3.44: structByteStride greater than 0"),
    ("dcl_stride_2052", "cs_5_0", "11.0", ["dcl_uav_structured u0, 2052", STORE_U0],
     ["dcl_uav_structured.legal.stride_limit"],
     "FS 5.4.2 (facts A1): StructureByteStride is at most 2048 bytes"),
    ("dcl_stride_2048", "cs_5_0", "11.0", ["dcl_uav_structured u0, 2048", STORE_U0], [],
     "FS 5.4.2: at most 2048 bytes"),
    ("dcl_u8_on_11_0", "cs_5_0", "11.0",
     ["dcl_uav_structured u8, 16", "store_structured u8.x, l(0), l(0), r0.x"],
     ["dcl_uav.legal.slot"], "facts A5: D3D11.0 CS has 8 UAV slots"),
    ("dcl_u7_on_11_0", "cs_5_0", "11.0",
     ["dcl_uav_structured u7, 16", "store_structured u7.x, l(0), l(0), r0.x"],
     [], "facts A5: D3D11.0 CS has 8 UAV slots (u0-u7)"),
    ("dcl_u8_on_11_1", "cs_5_0", "11.1",
     ["dcl_uav_structured u8, 16", "store_structured u8.x, l(0), l(0), r0.x"],
     [], "facts A5: D3D11.1 has 64 UAV slots"),
    ("dcl_u64_on_11_1", "cs_5_0", "11.1",
     ["dcl_uav_structured u64, 16", "store_structured u64.x, l(0), l(0), r0.x"],
     ["dcl_uav.legal.slot"], "facts A5: D3D11_1_UAV_SLOT_COUNT = 64"),
    ("dcl_u1_on_cs_4_0", "cs_4_0", "11.0",
     ["dcl_uav_structured u1, 16", "store_structured u1.x, l(0), l(0), r0.x"],
     ["dcl_uav.legal.cs_4_x_single"],
     "facts A5: only one UAV may be bound on cs_4_x (D3D11_CS_4_X_UAV_REGISTER_COUNT = 1)"),
    ("undeclared_u1", "cs_5_0", "11.0",
     [SS_U0, "store_structured u1.x, l(0), l(0), r0.x"],
     ["program.undeclared_resource"], "FS 22.3: every u# used is declared"),
    ("duplicate_declaration", "cs_5_0", "11.0", [SS_U0, SS_U0, STORE_U0],
     ["program.duplicate_declaration"], "FS 22.3: a register is declared once"),
    ("duplicate_declaration_other_kind", "cs_5_0", "11.0", [SS_U0, "dcl_uav_raw u0", STORE_U0],
     ["program.duplicate_declaration"], "FS 22.3: a register is declared once"),
    ("temp_beyond_dcl_temps", "cs_5_0", "11.0", ["dcl_temps 2", SS_U0,
                                                  "store_structured u0.x, l(0), l(0), r2.x"],
     ["program.temp_beyond_dcl_temps"], "FS 22.3.33: r# below the dcl_temps count"),
    ("dcl_tgsm_raw_cs_4_0", "cs_4_0", "11.0", [SS_U0, "dcl_tgsm_raw g0, 16", STORE_U0],
     ["dcl_tgsm_raw.legal.cs_4_x"],
     "facts A2: on cs_4_x only dcl_tgsm_structured may be used; raw g# is unavailable"),
    ("dcl_tgsm_raw_bytes_6", "cs_5_0", "11.0", [SS_U0, "dcl_tgsm_raw g0, 6", STORE_U0],
     ["dcl_tgsm_raw.legal.bytes"], "facts A2: byteCount must be a multiple of 4"),
    ("dcl_tgsm_structured_stride_6", "cs_5_0", "11.0",
     [SS_U0, "dcl_tgsm_structured g0, 6, 2", STORE_U0],
     ["dcl_tgsm_structured.legal.stride"], "facts A2: the stride must be a multiple of 4"),
    ("tgsm_total_over_32k", "cs_5_0", "11.0",
     ["dcl_tgsm_raw g0, 32768", "dcl_tgsm_structured g1, 4, 1",
      "store_structured g1.x, l(0), l(0), r0.x"],
     ["dcl_tgsm.legal.total_size"],
     "facts A2: all g# together must fit within 32 KB per thread group"),
    ("tgsm_total_exactly_32k", "cs_5_0", "11.0",
     ["dcl_tgsm_raw g0, 32764", "dcl_tgsm_structured g1, 4, 1",
      "store_structured g1.x, l(0), l(0), r0.x"],
     [], "facts A2: one g# of 32768 bytes is the extreme"),
    ("tgsm_total_over_16k_cs_4_0", "cs_4_0", "11.0",
     ["dcl_tgsm_structured g0, 4, 4097",
      "store_structured g0.x, vThreadIDInGroupFlattened.x, l(0), r0.x"],
     ["dcl_tgsm.legal.total_size"], "facts A2: total TGSM on cs_4_x is 16 KB"),
    ("tgsm_total_16k_cs_4_0", "cs_4_0", "11.0",
     ["dcl_tgsm_structured g0, 4, 4096",
      "store_structured g0.x, vThreadIDInGroupFlattened.x, l(0), r0.x"],
     [], "facts A2: total TGSM on cs_4_x is 16 KB"),
    # --- SRV buffers t# (declared beside the instruction, read by the harness ld_raw) ---------
    ("dcl_resource_raw_t0", "cs_5_0", "11.0", [SS_U0, "dcl_resource_raw t0", LD_T0, STORE_U0],
     [], "FS 22.3.47: dcl_resource_raw declares t# as a raw buffer SRV, any stage"),
    ("dcl_resource_raw_in_vertex_shader", "vs_5_0", "11.0", ["dcl_resource_raw t0", LD_T0],
     [], "FS 22.3.47: Stage(s) All"),
    ("dcl_resource_t127", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_structured t127, 16", STORE_U0],
     [], "FS 26: D3D11_COMMONSHADER_INPUT_RESOURCE_SLOT_COUNT = 128, so t127 is the last slot"),
    ("dcl_resource_t128", "cs_5_0", "11.1", [SS_U0, "dcl_resource_raw t128", STORE_U0],
     ["dcl_resource.legal.slot"],
     "FS 26: D3D11_COMMONSHADER_INPUT_RESOURCE_SLOT_COUNT = 128 (on 11.1 as on 11.0)"),
    ("dcl_resource_structured_stride_0", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_structured t0, 0", STORE_U0],
     ["dcl_resource_structured.legal.stride"], "FS 22.3.48: structByteStride > 0"),
    ("dcl_resource_structured_stride_6", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_structured t0, 6", STORE_U0],
     [], "FS 22.3.48 asks only stride > 0 (no multiple of 4, unlike 22.3.44 and 22.3.46)"),
    ("dcl_resource_structured_stride_2048", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_structured t0, 2048", STORE_U0],
     [], "FS 5.4.2: StructureByteStride <= 2048"),
    ("dcl_resource_structured_stride_2049", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_structured t0, 2049", STORE_U0],
     ["dcl_resource_structured.legal.stride_limit"], "FS 5.4.2: StructureByteStride <= 2048"),
    ("dcl_resource_raw_ps_4_0_without_flag", "ps_4_0", "11.0", ["dcl_resource_raw t0", LD_T0],
     ["ld_raw.legal.downlevel_flag", "dcl_resource.legal.shader_4_x_flag"],
     "FS 18.7.2.4, 18.7.3.2: vs/gs/ps_4_x read raw SRVs only with "
     "ENABLE_RAW_AND_STRUCTURED_BUFFERS"),
    ("dcl_resource_structured_vs_4_1_without_flag", "vs_4_1", "11.0",
     ["dcl_resource_structured t0, 8"], ["dcl_resource.legal.shader_4_x_flag"],
     "FS 18.7.2.4: vs/gs/ps_4_x structured SRVs need the global flag"),
    ("dcl_resource_raw_gs_4_0_with_flag", "gs_4_0", "11.0",
     ["dcl_globalFlags enableRawAndStructuredBuffers", "dcl_resource_raw t0", LD_T0],
     [], "FS 18.7.2.4: with the flag, gs_4_0 reads raw SRVs"),
    ("dcl_resource_raw_cs_4_0_without_flag", "cs_4_0", "11.0", ["dcl_resource_raw t0", LD_T0],
     [], "FS 18.7.2.5: cs_4_0 adds dcl_resource_raw and ld_raw from SRVs; no flag is named"),
    ("undeclared_t1", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_raw t0", "ld_raw r0.xyzw, l(0), t1.xyzw", STORE_U0],
     ["program.undeclared_resource"], "FS 22.3: every t# used is declared"),
    ("duplicate_t0", "cs_5_0", "11.0",
     [SS_U0, "dcl_resource_raw t0", "dcl_resource_structured t0, 4", LD_T0, STORE_U0],
     ["program.duplicate_declaration"], "FS 22.3: a register is declared once"),
]


@pytest.mark.parametrize(("name", "target", "runtime", "lines", "expected", "source"), CASES,
                         ids=[c[0] for c in CASES])
def test_violations(name: str, target: str, runtime: str, lines: list[str], expected: list[str],
                    source: str) -> None:
    assert broken(lines, target, runtime) == expected, source


def test_case_names_are_unique() -> None:
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


BOUND_FORMAT_CASES = (
    ("imm_atomic_iadd", "imm_atomic_iadd r0.x, u0, l(0), l(1)"),
    ("atomic_iadd", "atomic_iadd u0, l(0), l(1)"),
    ("imm_atomic_cmp_exch", "imm_atomic_cmp_exch r0.x, u0, l(0), l(1), l(2)"),
)


@pytest.mark.parametrize(("name", "line"), BOUND_FORMAT_CASES,
                         ids=[c[0] for c in BOUND_FORMAT_CASES])
def test_bound_format_r32_float_rejected(name: str, line: str) -> None:
    """seed-004 / FS 22.17: ... with the bound resource format being R32_UINT/_SINT."""
    lines = ["dcl_uav_typed_buffer (uint,uint,uint,uint) u0", line]
    for fmt, expected in (("R32_FLOAT", [f"{name}.binding.typed_format"]),
                          ("R32_UINT", []), ("R32_SINT", [])):
        state = state_from_json({"r0": [0, 0, 0, 0], "u0": {"kind": "typed", "format": fmt,
                                                              "data": [0]}})
        assert broken(lines, state=state) == expected, fmt


# Rules that read the bound view, not only the program: (name, program lines, state, target,
# expected rule ids). The view's format against the declared type (FS 22.3.42), the hidden
# counter a counter instruction needs (FS 22.17.17, 5.3.10.1), a u# query outside UAV stages.
TYPED_UINT = "dcl_uav_typed_buffer (uint,uint,uint,uint) u0"
COUNTED_U0 = "dcl_uav_structured u0, 4"
VIEW_CASES: list[tuple[str, list[str], dict[str, Any], str, list[str]]] = [
    ("ld_typed_float_view", [TYPED_UINT, "ld_uav_typed r0.xyzw, l(0, 0, 0, 0), u0.xyzw"],
     {"kind": "typed", "format": "R32_FLOAT", "data": [0]}, "cs_5_0",
     ["ld_uav_typed.binding.typed_type_match"]),
    ("ld_typed_uint_view", [TYPED_UINT, "ld_uav_typed r0.xyzw, l(0, 0, 0, 0), u0.xyzw"],
     {"kind": "typed", "format": "R32_UINT", "data": [0]}, "cs_5_0", []),
    ("store_typed_sint_view", [TYPED_UINT, "store_uav_typed u0.xyzw, l(0, 0, 0, 0), r0.xyzw"],
     {"kind": "typed", "format": "R32_SINT", "data": [0]}, "cs_5_0",
     ["store_uav_typed.binding.typed_type_match"]),
    ("bufinfo_typed_float_view", [TYPED_UINT, "bufinfo r0.xyzw, u0"],
     {"kind": "typed", "format": "R32_FLOAT", "data": [0]}, "cs_5_0",
     ["bufinfo.binding.typed_type_match"]),
    ("bufinfo_uav_in_vertex", ["dcl_uav_raw u0", "bufinfo r0.xyzw, u0"],
     {"kind": "raw", "data": [0]}, "vs_5_0", ["bufinfo.legal.uav_stage"]),
    ("bufinfo_srv_in_vertex", ["dcl_resource_raw t0", "bufinfo r0.xyzw, t0"],
     {"kind": "raw", "data": [0]}, "vs_5_0", []),
    ("alloc_without_counter", [COUNTED_U0, "imm_atomic_alloc r0.x, u0"],
     {"kind": "structured", "stride": 4, "count": 1, "data": [0]}, "cs_5_0",
     ["imm_atomic_alloc.binding.counter"]),
    ("alloc_with_counter", [COUNTED_U0, "imm_atomic_alloc r0.x, u0"],
     {"kind": "structured", "stride": 4, "count": 1, "counter": 0, "data": [0]}, "cs_5_0", []),
    ("consume_without_counter", [COUNTED_U0, "imm_atomic_consume r0.x, u0"],
     {"kind": "structured", "stride": 4, "count": 1, "data": [0]}, "cs_5_0",
     ["imm_atomic_consume.binding.counter"]),
]


@pytest.mark.parametrize(("name", "lines", "view", "target", "expected"), VIEW_CASES,
                         ids=[c[0] for c in VIEW_CASES])
def test_rules_reading_the_bound_view(name: str, lines: list[str], view: dict[str, Any],
                                      target: str, expected: list[str]) -> None:
    register = "t0" if "t0" in lines[0] else "u0"
    state = state_from_json({"r0": [0, 0, 0, 0], register: view})
    assert broken(lines, target=target, state=state) == expected


def test_execute_reports_the_first_rule() -> None:
    program = parse_program([SS_U0, "store_structured u0.xz, l(0), l(0), r0.xyzw"])
    state = state_from_json({"r0": [1, 2, 3, 4],
                             "u0": {"kind": "structured", "stride": 16, "count": 1,
                                    "data": [0, 0, 0, 0]}})
    result = execute(program, state)
    assert result.outcomes == ("rejected",)
    assert result.rule == "store_structured.operand.dst0.mask"
    assert result.state is None
    assert result.clauses == ()
    first = first_violation(program, "cs_5_0", "11.0")
    assert first is not None and first.id == result.rule


@pytest.mark.parametrize("case", [c for c in CASES if len(c[4]) > 1], ids=lambda c: c[0])
def test_the_first_violation_heads_the_list(
        case: tuple[str, str, str, list[str], list[str], str]) -> None:
    """`first_violation` stops at the first broken rule (the conformance run's check); it must
    be the one the full list names first, whatever part of the program breaks the later ones."""
    _, target, runtime, lines, expected, _ = case
    first = first_violation(parse_program(lines), target, runtime)
    assert first is not None and first.id == expected[0]


@pytest.mark.slow  # long tier (docs/testing.md)
def test_every_rule_reported_has_a_case() -> None:
    """Every expression and declaration rule of the spec is broken by some hand case: the cases
    of this file, or a rejected case of an instruction's hand file (tests/hand/)."""
    spec = load_default()
    loaded = load_all(spec)
    assert not loaded.errors
    reported = {rid for case in CASES for rid in case[4]} | \
        {f"{name}.binding.typed_format" for name, _ in BOUND_FORMAT_CASES} | \
        {rid for case in VIEW_CASES for rid in case[4]} | \
        {case.rule for case in loaded.cases if case.rule is not None}
    written = {r.id for r in spec.legality_rules() if r.check in ("expr", "declaration", "program")}
    assert sorted(written - reported) == []


# ------------------------------------------------------------------------------------------------
# Rules generated from the operand tables, recomputed from the YAML


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def operand_rule_ids_from_yaml(doc: dict[str, Any], model: dict[str, Any]) -> set[str]:
    """The table rules the operand table of one instruction YAML calls for.

    file: every operand; kind: a declared-kinds list narrower than what its files can hold;
    mask / swizzle: a list of allowed masks / swizzles; modifier: a source operand that does not
    allow both - and _abs.
    """
    ids: set[str] = set()
    for op in doc["operands"]:
        base = f"{doc['name']}.operand.{op['name']}"
        ids.add(f"{base}.file")
        possible = {k["kind"] for k in model["resource_kinds"] if k["file"] in op["files"]}
        if op.get("kinds") and possible - set(op["kinds"]):
            ids.add(f"{base}.kind")
        if op.get("masks"):
            ids.add(f"{base}.mask")
        if op.get("swizzles"):
            ids.add(f"{base}.swizzle")
        if op["role"] == "src" and {"neg", "abs"} - set(op["modifiers"]):
            ids.add(f"{base}.modifier")
    return ids


INSTRUCTION_FILES = sorted((SPEC_DIR / "instructions").glob("*.yaml"))


@pytest.mark.parametrize("path", INSTRUCTION_FILES, ids=[p.stem for p in INSTRUCTION_FILES])
def test_operand_table_rules_match_yaml(path: Path) -> None:
    doc = instruction_document(SPEC_DIR, path)
    model = _yaml(SPEC_DIR / "model.yaml")
    ins = load_default().instruction(doc["name"])
    generated = {r.id for r in ins.rules
                 if r.check in ("file", "kind", "mask", "swizzle", "modifier")}
    assert generated == operand_rule_ids_from_yaml(doc, model)
    for rule in ins.rules:
        if rule.operand is not None:
            assert rule.id.startswith(f"{doc['name']}.operand.{rule.operand}.")


@pytest.mark.parametrize("path", INSTRUCTION_FILES, ids=[p.stem for p in INSTRUCTION_FILES])
def test_explicit_rules_match_yaml(path: Path) -> None:
    doc = instruction_document(SPEC_DIR, path)
    ins = load_default().instruction(doc["name"])
    explicit = [r.id for r in ins.rules if r.check == "expr"]
    assert explicit == [r["id"] for r in doc.get("rules", [])]


def test_declaration_rules_match_yaml() -> None:
    doc = _yaml(SPEC_DIR / "declarations.yaml")
    spec = load_default()
    assert [r.id for r in spec.declarations.rules] == [r["id"] for r in doc["rules"]]
    assert [r.id for r in spec.declarations.program_rules] == \
        [r["id"] for r in doc["program_rules"]]
