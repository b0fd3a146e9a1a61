"""The bundled mutants: plausible implementation bugs, used to measure the suite's kill rate.

Each module holds one mutant, a :class:`~conformance.mutants.base.NaiveTranslator` with one
method overridden; its docstring names the real implementation that has (or had) the bug.
``sm5 mutants`` runs each against the golden vectors: every mutant must fail on at least one.
"""

from __future__ import annotations

from sm5.conformance.mutants.abs_as_f32 import AbsAsF32
from sm5.conformance.mutants.atomic_dst_broadcast import AtomicDstBroadcast
from sm5.conformance.mutants.atomic_dst_written_first import AtomicDstWrittenFirst
from sm5.conformance.mutants.atomic_ignores_inactive import AtomicIgnoresInactive
from sm5.conformance.mutants.atomic_returns_new import AtomicReturnsNew
from sm5.conformance.mutants.atomic_saturates import AtomicSaturates
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.cmp_exch_operands_swapped import CmpExchOperandsSwapped
from sm5.conformance.mutants.counter_returns_original import CounterReturnsOriginal
from sm5.conformance.mutants.cs4x_atomics_accepted import Cs4xAtomicsAccepted
from sm5.conformance.mutants.dmovc_float_compare import DmovcFloatCompare
from sm5.conformance.mutants.dmovc_per_component import DmovcPerComponent
from sm5.conformance.mutants.dmovc_zw_cond_from_x import DmovcZwCondFromX
from sm5.conformance.mutants.dmovc_zw_into_xy import DmovcZwIntoXy
from sm5.conformance.mutants.doubles_flag_ignored import DoublesFlagIgnored
from sm5.conformance.mutants.illegal_masks_accepted import IllegalMasksAccepted
from sm5.conformance.mutants.index_oob_clamped import IndexOobClamped
from sm5.conformance.mutants.neg_as_f32 import NegAsF32
from sm5.conformance.mutants.neg_dropped import NegDropped
from sm5.conformance.mutants.raw_address_in_words import RawAddressInWords
from sm5.conformance.mutants.sat_dropped import SatDropped
from sm5.conformance.mutants.sat_nan_kept import SatNanKept
from sm5.conformance.mutants.stage_table_11_1 import StageTable111
from sm5.conformance.mutants.stride_alignment_unchecked import StrideAlignmentUnchecked
from sm5.conformance.mutants.struct_bound_off_by_one import StructBoundOffByOne
from sm5.conformance.mutants.struct_index_offset_swapped import StructIndexOffsetSwapped
from sm5.conformance.mutants.struct_offset_ignored import StructOffsetIgnored
from sm5.conformance.mutants.swizzle_ignored import SwizzleIgnored
from sm5.conformance.mutants.tgsm_limit_of_cs_4_x import TgsmLimitOfCs4x
from sm5.conformance.mutants.tgsm_stride_in_dwords import TgsmStrideInDwords
from sm5.conformance.mutants.tgsm_total_not_summed import TgsmTotalNotSummed
from sm5.conformance.mutants.typed_defaults_zero import TypedDefaultsZero
from sm5.conformance.mutants.typed_index_as_bytes import TypedIndexAsBytes
from sm5.conformance.mutants.typed_oob_clamped import TypedOobClamped
from sm5.conformance.mutants.uav_slots_of_11_0 import UavSlotsOf110
from sm5.conformance.mutants.wrap32_byte_address import Wrap32ByteAddress
from sm5.conformance.mutants.wrap32_index_stride import Wrap32IndexStride
from sm5.conformance.mutants.write_mask_ignored import WriteMaskIgnored

#: Every mutant by name, in name order.
MUTANTS: dict[str, type[NaiveTranslator]] = {cls.name: cls for cls in sorted((
    AbsAsF32,
    AtomicDstBroadcast,
    AtomicDstWrittenFirst,
    AtomicIgnoresInactive,
    AtomicReturnsNew,
    AtomicSaturates,
    CmpExchOperandsSwapped,
    CounterReturnsOriginal,
    Cs4xAtomicsAccepted,
    DmovcFloatCompare,
    DmovcPerComponent,
    DmovcZwCondFromX,
    DmovcZwIntoXy,
    DoublesFlagIgnored,
    IllegalMasksAccepted,
    IndexOobClamped,
    NegAsF32,
    NegDropped,
    RawAddressInWords,
    SatDropped,
    SatNanKept,
    StageTable111,
    StrideAlignmentUnchecked,
    StructBoundOffByOne,
    StructIndexOffsetSwapped,
    StructOffsetIgnored,
    SwizzleIgnored,
    TgsmLimitOfCs4x,
    TgsmStrideInDwords,
    TgsmTotalNotSummed,
    TypedDefaultsZero,
    TypedIndexAsBytes,
    TypedOobClamped,
    UavSlotsOf110,
    Wrap32ByteAddress,
    Wrap32IndexStride,
    WriteMaskIgnored,
), key=lambda cls: cls.name)}
