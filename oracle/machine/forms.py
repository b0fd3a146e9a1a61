"""The oracle's builder of each acceptance form a clause may name (``accept:``), registered under
the form's name in ``spec/model.yaml``: the one place Python names a form. The spec check holds
the registry and the model's list equal, and each builder's widths to the model's.

A builder takes the lane's value (a 32-bit word, or a double's 64-bit pattern after ``_sat``)
and the clause's other accepted values, and gives the lane's acceptance sets: one for a 32-bit
lane, (lo, hi) for a double lane.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sm5.oracle.errors import SpecError
from sm5.oracle.machine.state import (
    Accept,
    F16Nan,
    F32Nan,
    F64Nan,
    Masked,
    f32_range,
    f64_one_of,
    is_f32_nan,
    one_of,
    split64,
)

#: Every bit of a double's high word but the sign.
SIGN_FREE_HIGH = 0x7FFFFFFF

Word = Callable[[int, Sequence[int]], Accept]
Pair = Callable[[int, Sequence[int]], tuple[Accept, Accept]]


@dataclass(frozen=True)
class FormBuilder:
    """How the oracle writes a form on a 32-bit lane (``word``) and on a double lane
    (``pair``); None where the form does not fit that lane."""

    word: Word | None = None
    pair: Pair | None = None

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(w for w, f in ((32, self.word), (64, self.pair)) if f is not None)


def _f32_within(value: int, others: Sequence[int]) -> Accept:
    """Every float32 between the least and the greatest of the result and the clause's bounds,
    with the zero a denormal among them flushes to (an implementation may keep a denormal result
    or flush it, sign kept)."""
    ends = {value, *others}
    if any(is_f32_nan(w) for w in ends):
        raise SpecError(f"f32_range: a bound is a NaN ({', '.join(f'{w:#010x}' for w in ends)})")
    flushed = {w & 0x80000000 for w in ends if not w & 0x7F800000}
    return f32_range(ends | flushed)


def _sign_free(value: int, others: Sequence[int]) -> tuple[Accept, Accept]:
    lo, hi = split64(value)
    return lo, Masked(hi & SIGN_FREE_HIGH, SIGN_FREE_HIGH)  # canonical: the free bit 0


BUILDERS: Mapping[str, FormBuilder] = {
    "f64_nan": FormBuilder(pair=lambda value, others: (F64Nan(), F64Nan())),
    "f64_sign_free": FormBuilder(pair=_sign_free),
    "f32_nan": FormBuilder(word=lambda value, others: F32Nan()),
    "f16_nan": FormBuilder(word=lambda value, others: F16Nan()),
    "f32_range": FormBuilder(word=_f32_within),
    "one_of": FormBuilder(word=lambda value, others: one_of({value, *others}),
                          pair=lambda value, others: f64_one_of({value, *others})),
}


def check_forms(widths: Mapping[str, tuple[int, ...]], where: str) -> None:
    """The model's forms (name -> widths) and the registry agree."""
    missing = sorted(set(widths) - set(BUILDERS))
    extra = sorted(set(BUILDERS) - set(widths))
    if missing or extra:
        raise SpecError(f"acceptance forms: the oracle has no builder for "
                        f"{', '.join(missing) or 'none'} and builds forms the model does not "
                        f"list: {', '.join(extra) or 'none'}", where=where)
    for name, declared in widths.items():
        if tuple(sorted(declared)) != BUILDERS[name].widths:
            raise SpecError(f"acceptance form {name}: the model says widths "
                            f"{sorted(declared)}, the oracle builds it for "
                            f"{list(BUILDERS[name].widths)}", where=where)
