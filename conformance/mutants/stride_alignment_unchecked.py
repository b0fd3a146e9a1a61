"""stride_alignment_unchecked: a validator that rejects stride 0 but not a stride of 6.

``dcl_uav_structured u0, 6`` and ``dcl_tgsm_structured g0, 6, 2`` are illegal (FS 22.3.44,
22.3.46: a non-zero multiple of 4); a validator that only tests ``stride == 0`` accepts them.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator
from sm5.conformance.mutants.validator_helpers import declared_numbers, reads, tests_alignment
from sm5.oracle.asm import parse_vector_program
from sm5.oracle.model.spec import LegalityRule
from sm5.vectors.format import Vector


class StrideAlignmentUnchecked(NaiveTranslator):
    name = "stride_alignment_unchecked"
    capabilities = frozenset({"executes", "validates"})

    def overlooks(self, rule: LegalityRule, vector: Vector) -> bool:
        if not (reads(rule, "stride") and tests_alignment(rule)):
            return False
        strides = declared_numbers(parse_vector_program(vector.program), "stride")
        return all(s != 0 for s in strides)
