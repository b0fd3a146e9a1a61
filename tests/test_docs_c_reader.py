"""The C reader of ``docs/vectors.md`` (how a reader in another language checks each acceptance
form) compiled as written and run on a batch of sets and words: it agrees with the judge's
``accepts`` on each. A reader who implements the format from the page alone gets what the
suite's own judge gets."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sm5.oracle.machine.state import F16Nan, F32Nan, F32Range, Masked, OneOf, accepts, f32_order

DOC = Path(__file__).resolve().parent.parent / "docs" / "vectors.md"

#: Words every set is tried on: float32 classes at their edges, half NaNs, and a few integers.
EDGES = (0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
         0x3F7FFFFF, 0x3F800000, 0x3F800001, 0xBF800000, 0xBF7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
         0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0xFFC00000, 0xFFFFFFFF, 0x00007E00,
         0x00007C00, 0x00007C01, 0x0000FE00, 0x00017E00, 0x00000005, 0xDEADBEEF)

MAIN = r"""
#include <stdio.h>
int main(void) {
    char form[16];
    unsigned a, b, w;
    while (scanf("%15s %x %x %x", form, &a, &b, &w) == 4) {
        bool ok = false;
        if (form[0] == 'r') ok = accepts_f32_range(a, b, w);
        else if (form[0] == 'n') ok = accepts_f32_nan(w);
        else if (form[0] == 'h') ok = accepts_f16_nan(w);
        else if (form[0] == 'm') ok = accepts_masked(a, b, w);
        else if (form[0] == 'o') { uint32_t v[2] = {a, b}; ok = accepts_one_of(v, 2, w); }
        printf("%d\n", ok ? 1 : 0);
    }
    return 0;
}
"""


def _reader_source() -> str:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```c\n(.*?)```", text, flags=re.S)
    readers = [b for b in blocks if "accepts_f32_range" in b]
    assert len(readers) == 1, "docs/vectors.md has one C block with the acceptance readers"
    return readers[0] + MAIN


def _cases() -> list[tuple[str, object, int, int, int]]:
    rng = random.Random(29)
    cases: list[tuple[str, object, int, int, int]] = []
    ranges = [(0x80000001, 0x3F800000), (0xC0000000, 0xBF800000), (0xFF800000, 0x7F800000),
              (0x80000000, 0x00000000), (0x3F7FFFFF, 0x3F800001)]
    while len(ranges) < 40:
        lo, hi = rng.getrandbits(32), rng.getrandbits(32)
        if not (accepts(F32Nan(), lo) or accepts(F32Nan(), hi)) and f32_order(lo) < f32_order(hi):
            ranges.append((lo, hi))
    for lo, hi in ranges:
        words = (*EDGES, lo, hi, lo + 1, hi + 1, lo - 1 & 0xFFFFFFFF, rng.getrandbits(32))
        cases.extend(("r", F32Range(lo, hi), lo, hi, w) for w in words)
    for w in EDGES:
        cases.append(("n", F32Nan(), 0, 0, w))
        cases.append(("h", F16Nan(), 0, 0, w))
        cases.append(("m", Masked(0x3F800000, 0x7FFFFFFF), 0x3F800000, 0x7FFFFFFF, w))
        cases.append(("o", OneOf((0, 0x80000000)), 0, 0x80000000, w))
    return cases


def test_the_c_reader_of_the_vector_page_agrees_with_the_judge(tmp_path: Path) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine (scripts/setup.sh --vkd3d installs gcc)")
    source = tmp_path / "reader.c"
    source.write_text(_reader_source(), encoding="utf-8")
    exe = tmp_path / "reader"
    subprocess.run([compiler, "-std=c99", "-Wall", "-Werror", "-Wno-unused-function",
                    str(source), "-o", str(exe)], check=True, capture_output=True, timeout=120)
    cases = _cases()
    stdin = "".join(f"{f} {a:x} {b:x} {w:x}\n" for f, _, a, b, w in cases)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True,
                         timeout=60).stdout.split()
    assert len(out) == len(cases)
    wrong = [(f, hex(a), hex(b), hex(w)) for (f, form, a, b, w), got in zip(cases, out, strict=True)
             if (got == "1") != accepts(form, w)]  # type: ignore[arg-type]
    assert wrong == []
    # the batch reaches both verdicts of every form
    for letter in "rnhmo":
        verdicts = {got for (f, *_), got in zip(cases, out, strict=True) if f == letter}
        assert verdicts == {"0", "1"}, letter
