"""The acceptance forms of the vector format, judged on literal values: a list of 32-bit values,
a float32 NaN, a list of doubles on a register pair; their canonical JSON form and the errors a
malformed one gives."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sm5.oracle.errors import SpecError, StateError
from sm5.oracle.machine.state import (
    F16Nan,
    F32Nan,
    F32Range,
    F64OneOf,
    OneOf,
    accept_from_json,
    accept_to_json,
    accepts,
    f64_one_of,
    one_of,
    register_accepts,
)
from sm5.oracle.model.spec import default_root, load_default, load_spec


def test_one_of_accepts_exactly_its_values() -> None:
    form = accept_from_json({"one_of": [0, 1]}, "t")
    assert form == OneOf((0, 1))
    assert accepts(form, 0) and accepts(form, 1)
    assert not accepts(form, 2)
    assert accept_to_json(form) == {"one_of": [0, 1]}


def test_f32_nan_accepts_every_float32_nan_and_nothing_else() -> None:
    form = accept_from_json({"f32": "nan"}, "t")
    assert form == F32Nan()
    for nan in (0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF):
        assert accepts(form, nan)
    for number in (0x7F800000, 0xFF800000, 0, 0x3F800000, 0x7F7FFFFF):
        assert not accepts(form, number)


def test_f16_nan_accepts_every_half_nan_with_clear_high_bits_and_nothing_else() -> None:
    form = accept_from_json({"f16": "nan"}, "t")
    assert form == F16Nan()
    assert accept_to_json(form) == {"f16": "nan"}
    for nan in (0x7E00, 0xFE00, 0x7C01, 0xFFFF, 0x7FFF):
        assert accepts(form, nan)
    # the half infinities and largest finite, 1.0, and half NaNs with high bits set
    for other in (0x7C00, 0xFC00, 0x7BFF, 0x3C00, 0x00017E00, 0xFFFF7E00, 0x7FC00000):
        assert not accepts(form, other)


def test_f32_range_accepts_the_float32s_between_its_ends_by_value() -> None:
    # [-2^-149, 1.0]: the negative denormal 0x80000001, both zeros, and up to 1.0
    form = accept_from_json({"f32_range": [0x80000001, 0x3F800000]}, "t")
    assert form == F32Range(0x80000001, 0x3F800000)
    assert accept_to_json(form) == {"f32_range": [0x80000001, 0x3F800000]}
    for inside in (0x80000001, 0x80000000, 0x00000000, 0x00000001, 0x3F7FFFFF, 0x3F800000):
        assert accepts(form, inside), hex(inside)
    # -2^-148, 1.0 + 2^-23, -1.0, NaNs (even those whose bits lie between the ends' bits)
    for outside in (0x80000002, 0x3F800001, 0xBF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF):
        assert not accepts(form, outside), hex(outside)


def test_f32_range_orders_negative_numbers_by_value_not_by_bits() -> None:
    # [-2.0, -1.0]: 0xC0000000 .. 0xBF800000 (the bits of -1.0 are the smaller)
    form = accept_from_json({"f32_range": [0xC0000000, 0xBF800000]}, "t")
    assert accepts(form, 0xBFC00000)  # -1.5
    assert not accepts(form, 0x3FC00000) and not accepts(form, 0xC0000001)
    # reaching the infinities
    wide = accept_from_json({"f32_range": [0xFF800000, 0x7F800000]}, "t")
    assert accepts(wide, 0xFF800000) and accepts(wide, 0x7F800000) and accepts(wide, 0)
    assert not accepts(wide, 0xFFC00000)


def test_f64_one_of_judges_the_whole_pair() -> None:
    # +0.0 (0x00000000_00000000) or 2^-149 as a double (0x36A00000_00000000)
    form = accept_from_json({"f64_one_of": [[0, 0], [0, 0x36A00000]]}, "t")
    assert form == F64OneOf((0, 0x36A00000 << 32))
    assert accept_to_json(form) == {"f64_one_of": [[0, 0], [0, 0x36A00000]]}
    register = (form, form, 5, 6)
    assert register_accepts(register, (0, 0x36A00000, 5, 6)) == []
    assert register_accepts(register, (0, 0, 5, 6)) == []
    # a mix of halves of the two doubles is neither
    assert register_accepts(register, (0, 0x36A00001, 5, 6)) == [0, 1]


def test_a_single_value_is_written_as_an_exact_value() -> None:
    assert one_of({7}) == 7
    assert one_of({9, 7}) == OneOf((7, 9))
    assert f64_one_of({0x3FF00000 << 32}) == (0, 0x3FF00000)


@pytest.mark.parametrize(("doc", "message"), [
    ({"one_of": [1, 0]}, "sorted"),
    ({"one_of": [1, 1]}, "sorted"),
    ({"one_of": [1]}, "at least two"),
    ({"one_of": [1, 2**32]}, "unsigned 32-bit"),
    ({"f64_one_of": [[0, 0], [0]]}, "pair"),
    ({"f32": "inf"}, "unknown acceptance set"),
    ({"f32_range": [0x3F800000, 0x3F7FFFFF]}, "must order below hi"),
    ({"f32_range": [0x00000000, 0x80000000]}, "must order below hi"),  # +0 is above -0
    ({"f32_range": [0x3F800000, 0x3F800000]}, "must order below hi"),
    ({"f32_range": [0x3F800000, 0x7FC00000]}, "not NaNs"),
    ({"f32_range": [0x3F800000]}, r"\[lo, hi\]"),
])
def test_malformed_forms_name_the_problem(doc: object, message: str) -> None:
    with pytest.raises(StateError, match=message):
        accept_from_json(doc, "expect.state.r0[0]")


def _spec_with_model(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root)
    model = root / "model.yaml"
    model.write_text(edit(model.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def test_a_form_the_oracle_cannot_build_is_a_spec_error(tmp_path: Path) -> None:
    root = _spec_with_model(tmp_path, lambda text: text + (
        "  - {name: f32_zero, widths: [32], text: \"a zero of either sign\", "
        "json: \"{}\", check: \"w & 0x7FFFFFFF == 0\"}\n"))
    with pytest.raises(SpecError, match=r"model\.yaml.*no builder for f32_zero"):
        load_spec(root)


def test_a_form_declared_for_the_wrong_lanes_is_a_spec_error(tmp_path: Path) -> None:
    root = _spec_with_model(tmp_path, lambda text: text.replace(
        "  - name: f32_nan\n    widths: [32]", "  - name: f32_nan\n    widths: [32, 64]"))
    with pytest.raises(SpecError, match=r"f32_nan: the model says widths \[32, 64\]"):
        load_spec(root)


def test_every_form_says_how_a_reader_checks_it() -> None:
    forms = load_default().model.acceptance
    assert set(forms) == {"f64_nan", "f64_sign_free", "f32_nan", "f16_nan", "f32_range", "one_of"}
    assert [name for name, form in forms.items() if form.values] == ["f32_range", "one_of"]
    assert forms["f32_nan"].widths == (32,) and forms["f64_nan"].widths == (64,)
    assert all(form.json and form.check for form in forms.values())
