"""Properties of the executor on random legal instances (hypothesis).

The strategies are local and small: each builds a legal program and a matching state for one
instruction, with addresses and values crowded around the boundaries (count, stride, 2^32). The
properties are the memory-effect rules of the sources: what must not change does not change, an
in-bounds write touches exactly its words, registers other than the written component are left
alone. Each test also classifies the instance with its own reading of the source sentences and
checks the oracle's outcome class against it.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json

EXAMPLES = int(os.environ.get("SM5_PROPERTY_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)
U32 = 0xFFFFFFFF
LETTERS = "xyzw"
DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"

u32s = st.integers(0, U32)
registers = st.lists(u32s, min_size=4, max_size=4)
swizzles = st.text(alphabet=LETTERS, min_size=4, max_size=4)


@dataclass(frozen=True)
class Instance:
    lines: tuple[str, ...]
    state: dict[str, Any]
    target: str = "cs_5_0"
    runtime: str = "11.0"


def run(instance: Instance) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, Any]]:
    result = execute(parse_program(list(instance.lines)), state_from_json(instance.state),
                     instance.target, instance.runtime)
    assert result.rule is None, f"a legal instance was rejected by {result.rule}"
    assert result.state is not None
    return result.outcomes, result.clauses, expected_to_json(result.state)


def assert_resources_exact(expect: dict[str, Any], state: dict[str, Any], skip: set[str]) -> None:
    for key, value in state.items():
        if key[0] in "ug" and key not in skip:
            assert expect[key] == value, key


def assert_registers_exact(expect: dict[str, Any], state: dict[str, Any], skip: set[str]) -> None:
    for key, value in state.items():
        if key[0] == "r" and key not in skip:
            assert expect[key] == value, key


def post_swizzle(reg: list[int], swizzle: str) -> list[int]:
    return [reg[LETTERS.index(c)] for c in swizzle]


def operand_for(draw: st.DrawFn, value: int, register: str, state: dict[str, Any]) -> str:
    """A select operand reading ``value``: a literal or one component of a fresh register."""
    if draw(st.booleans()):
        return f"l({value})"
    component = draw(st.sampled_from(LETTERS))
    regs = draw(registers)
    regs[LETTERS.index(component)] = value
    state[register] = regs
    return f"{register}.{component}"


EXTREMES = [0x40000000, 0x80000000, U32 - 3, U32]


def near(draw: st.DrawFn, bound: int) -> int:
    """An index: mostly in [0, bound] (bound itself is the first one out), else extreme."""
    if draw(st.integers(0, 9)) < 7:
        return draw(st.integers(0, bound))
    return draw(st.one_of(st.sampled_from(EXTREMES), u32s))


def aligned_near(draw: st.DrawFn, bound: int) -> int:
    """A byte offset or address: mostly 4-aligned up to just past ``bound``, else anything."""
    mode = draw(st.integers(0, 9))
    if mode < 6:
        return 4 * draw(st.integers(0, bound // 4 + 1))
    if mode < 8:
        return draw(st.integers(0, bound + 8))
    return draw(st.one_of(st.sampled_from(EXTREMES), u32s))


# ================================================================================================
# store_structured


@dataclass(frozen=True)
class StoreCase:
    instance: Instance
    file: str
    dst: str
    stride: int
    count: int
    index: int
    offset: int
    values: list[int]  # src0 after its swizzle


@st.composite
def store_structured_cases(draw: st.DrawFn) -> StoreCase:
    file = draw(st.sampled_from("ug"))
    stride = 4 * draw(st.integers(1, 8))
    count = draw(st.integers(1, 4))
    mask = draw(st.sampled_from(["x", "xy", "xyz", "xyzw"]))
    index = near(draw, count)
    offset = aligned_near(draw, stride)
    state: dict[str, Any] = {}
    data = draw(st.lists(u32s, min_size=stride * count // 4, max_size=stride * count // 4))
    body = {"kind": "structured", "stride": stride, "count": count, "data": data}
    if file == "u":
        dst = "u0"
        decls = [f"dcl_uav_structured u0, {stride}", "dcl_uav_raw u1", "dcl_tgsm_raw g0, 8"]
        state.update({"u0": body, "u1": {"kind": "raw", "data": draw(registers)[:2]},
                      "g0": {"kind": "raw", "data": draw(registers)[:2]}})
    else:
        dst = "g0"
        decls = ["dcl_uav_raw u0", f"dcl_tgsm_structured g0, {stride}, {count}",
                 "dcl_tgsm_raw g1, 12"]
        state.update({"u0": {"kind": "raw", "data": draw(registers)[:1]}, "g0": body,
                      "g1": {"kind": "raw", "data": draw(registers)[:3]}})
    index_text = operand_for(draw, index, "r0", state)
    offset_text = operand_for(draw, offset, "r1", state)
    if draw(st.booleans()):
        src = draw(registers)
        swizzle = draw(swizzles)
        state["r2"] = src
        src_text, values = f"r2.{swizzle}", post_swizzle(src, swizzle)
    else:
        values = draw(registers)
        src_text = f"l({', '.join(str(v) for v in values)})"
    line = f"store_structured {dst}.{mask}, {index_text}, {offset_text}, {src_text}"
    instance = Instance((*decls, line), state)
    return StoreCase(instance, file, dst, stride, count, index, offset, values[:len(mask)])


def store_class(case: StoreCase) -> str:
    """The outcome by the source sentences (seed-003 Remarks, FS 7.13 for alignment)."""
    components = len(case.values)
    if case.offset % 4 != 0:
        return "resource_undefined" if case.file == "u" else "tgsm_undefined"
    fits = case.offset + 4 * components <= case.stride
    if fits and case.index < case.count:
        return "defined"
    if case.file == "g":
        return "tgsm_undefined"
    return "no_write" if fits else "resource_undefined"


@SETTINGS
@given(store_structured_cases())
def test_store_structured_memory_effects(case: StoreCase) -> None:
    outcomes, _, expect = run(case.instance)
    state = case.instance.state
    assert outcomes == (store_class(case),)
    assert_registers_exact(expect, state, skip=set())
    if outcomes == ("defined",):
        first = (case.stride * case.index + case.offset) // 4
        want = list(state[case.dst]["data"])
        want[first:first + len(case.values)] = case.values
        assert expect[case.dst]["data"] == want
        assert_resources_exact(expect, state, skip={case.dst})
    elif outcomes == ("no_write",):
        assert_resources_exact(expect, state, skip=set())
    elif outcomes == ("resource_undefined",):
        assert expect[case.dst] is None
        assert_resources_exact(expect, state, skip={case.dst})
    else:
        assert outcomes == ("tgsm_undefined",)
        assert all(expect[k] is None for k in state if k.startswith("g"))
        assert_resources_exact(expect, state, skip={k for k in state if k.startswith("g")})


# ================================================================================================
# imm_atomic_iadd


@dataclass(frozen=True)
class AtomicCase:
    instance: Instance
    file: str
    kind: str
    dst1: str
    component: int
    addr0: int
    addr1: int
    value: int
    invocation: str
    size: int
    stride: int
    count: int


@st.composite
def imm_atomic_iadd_cases(draw: st.DrawFn) -> AtomicCase:
    pixel = draw(st.booleans())
    invocation = draw(st.sampled_from(["active", "helper", "discarded"])) if pixel else "active"
    target = "ps_5_0" if pixel else "cs_5_0"
    kinds = ["raw", "structured", "typed"] if pixel else \
        ["raw", "structured", "typed", "g_raw", "g_structured"]
    choice = draw(st.sampled_from(kinds))
    file = "g" if choice.startswith("g_") else "u"
    kind = choice.removeprefix("g_")
    dst1 = f"{file}0"
    stride = 4 * draw(st.integers(1, 4))
    count = draw(st.integers(1, 4))
    words = stride * count // 4 if kind == "structured" else draw(st.integers(1, 6))
    data = draw(st.lists(u32s, min_size=words, max_size=words))
    size = 4 * words
    state: dict[str, Any] = {"invocation": invocation} if invocation != "active" else {}
    if kind == "raw":
        body: dict[str, Any] = {"kind": "raw", "data": data}
        decl = "dcl_uav_raw u0" if file == "u" else f"dcl_tgsm_raw g0, {size}"
        addr0, addr1 = aligned_near(draw, size), 0
    elif kind == "structured":
        body = {"kind": "structured", "stride": stride, "count": count, "data": data}
        decl = f"dcl_uav_structured u0, {stride}" if file == "u" else \
            f"dcl_tgsm_structured g0, {stride}, {count}"
        addr0, addr1 = near(draw, count), aligned_near(draw, stride)
    else:
        rtype, fmt = draw(st.sampled_from([("uint", "R32_UINT"), ("sint", "R32_SINT")]))
        body = {"kind": "typed", "format": fmt, "data": data}
        decl = f"dcl_uav_typed_buffer ({rtype},{rtype},{rtype},{rtype}) u0"
        count = words
        addr0, addr1 = near(draw, words), 0
    state[dst1] = body
    # bystanders: another u#, and in the compute shader another g#
    others = ["dcl_uav_raw u1"]
    state["u1"] = {"kind": "raw", "data": draw(registers)[:2]}
    if not pixel:
        others.append("dcl_tgsm_raw g1, 4")
        state["g1"] = {"kind": "raw", "data": [draw(u32s)]}
    # the address: r1 under a swizzle whose first two letters pick addr0, addr1
    swizzle = draw(swizzles)
    first, second = LETTERS.index(swizzle[0]), LETTERS.index(swizzle[1])
    if first == second:
        addr1 = addr0
    address = draw(registers)
    address[first], address[second] = addr0, addr1
    state["r1"] = address
    value = draw(st.one_of(u32s, st.sampled_from([1, U32, 0x80000000])))
    value_text = operand_for(draw, value, "r2", state)
    component = draw(st.integers(0, 3))
    state["r0"] = draw(registers)
    line = f"imm_atomic_iadd r0.{LETTERS[component]}, {dst1}, r1.{swizzle}, {value_text}"
    instance = Instance((decl, *others, line), state, target=target)
    return AtomicCase(instance, file, kind, dst1, component, addr0, addr1, value, invocation,
                      size, stride, count)


def atomic_class(case: AtomicCase) -> tuple[str, ...]:
    """The outcomes by the source sentences (seed-004 Remarks, FS 7.13, FS 22.17.24)."""
    if case.invocation != "active":
        return ("no_write", "dst_undefined")
    if case.kind == "typed":
        aligned, inside = True, case.addr0 < case.count
    elif case.kind == "raw":
        aligned, inside = case.addr0 % 4 == 0, case.addr0 + 4 <= case.size
    else:
        aligned = case.addr1 % 4 == 0
        inside = case.addr1 + 4 <= case.stride and case.addr0 < case.count
    if aligned and inside:
        return ("defined",)
    if case.file == "g":
        return ("tgsm_undefined", "dst_undefined")
    if aligned and case.kind == "structured" and case.addr1 + 4 > case.stride:
        return ("resource_undefined", "dst_undefined")
    if aligned:
        return ("no_write", "dst_undefined")
    return ("resource_undefined", "dst_undefined")


def atomic_word(case: AtomicCase) -> int:
    if case.kind == "typed":
        return case.addr0
    if case.kind == "raw":
        return case.addr0 // 4
    return (case.stride * case.addr0 + case.addr1) // 4


@SETTINGS
@given(imm_atomic_iadd_cases())
def test_imm_atomic_iadd_memory_effects(case: AtomicCase) -> None:
    outcomes, _, expect = run(case.instance)
    state = case.instance.state
    assert outcomes == atomic_class(case)
    assert_registers_exact(expect, state, skip={"r0"})
    for i in range(4):
        if i != case.component:
            assert expect["r0"][i] == state["r0"][i], "dst0 written outside its mask"
    tgsm_keys = {k for k in state if k.startswith("g")}
    if outcomes == ("defined",):
        word = atomic_word(case)
        old = state[case.dst1]["data"][word]
        want = list(state[case.dst1]["data"])
        want[word] = (old + case.value) % (1 << 32)
        assert expect[case.dst1]["data"] == want
        assert expect["r0"][case.component] == old
        assert_resources_exact(expect, state, skip={case.dst1})
        return
    assert expect["r0"][case.component] is None
    if "no_write" in outcomes:
        assert_resources_exact(expect, state, skip=set())
    elif "resource_undefined" in outcomes:
        assert expect[case.dst1] is None
        assert_resources_exact(expect, state, skip={case.dst1})
    else:
        assert all(expect[k] is None for k in tgsm_keys)
        assert_resources_exact(expect, state, skip=tgsm_keys)


# ================================================================================================
# dmovc

SPECIAL_DOUBLES = [
    0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x8000000000000001,
    0x3FF0000000000000, 0xBFF0000000000000, 0x4000000000000000, 0xC008000000000000,
    0x3FE0000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8DEADBEEF0001,
    0x7FF0000000000001, 0xFFF8000000000000, 0x3FEFFFFFFFFFFFFF, 0x3FF0000000000001,
]
SIGN = 1 << 63
DOUBLE_SWIZZLES = ["xyzw", "xyxy", "zwxy", "zwzw"]


def as_float(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


@st.composite
def double_registers(draw: st.DrawFn) -> list[int]:
    pair = st.one_of(st.sampled_from(SPECIAL_DOUBLES), st.integers(0, (1 << 64) - 1))
    a, b = draw(pair), draw(pair)
    return [a & U32, a >> 32, b & U32, b >> 32]


@dataclass(frozen=True)
class DmovcCase:
    instance: Instance
    mask: str
    cond: list[int]  # src0 after its swizzle
    src1: list[int]
    src2: list[int]
    mods1: tuple[bool, bool]  # (neg, abs)
    mods2: tuple[bool, bool]
    sat: bool


@st.composite
def dmovc_cases(draw: st.DrawFn) -> DmovcCase:
    mask = draw(st.sampled_from(["xy", "zw", "xyzw"]))
    r1 = draw(st.lists(st.sampled_from([0, 0, 1, 0x80000000, U32]), min_size=4, max_size=4))
    s0 = draw(swizzles)
    r2, r3 = draw(double_registers()), draw(double_registers())
    s1, s2 = draw(st.sampled_from(DOUBLE_SWIZZLES)), draw(st.sampled_from(DOUBLE_SWIZZLES))
    mods1 = (draw(st.booleans()), draw(st.booleans()))
    mods2 = (draw(st.booleans()), draw(st.booleans()))
    sat = draw(st.booleans())

    def text(reg: str, swizzle: str, mods: tuple[bool, bool]) -> str:
        return f"{'-' if mods[0] else ''}{reg}{'_abs' if mods[1] else ''}.{swizzle}"

    line = (f"dmovc{'_sat' if sat else ''} r0.{mask}, r1.{s0}, {text('r2', s1, mods1)}, "
            f"{text('r3', s2, mods2)}")
    state = {"r0": draw(registers), "r1": r1, "r2": r2, "r3": r3}
    instance = Instance((DOUBLES, line), state)
    return DmovcCase(instance, mask, post_swizzle(r1, s0), post_swizzle(r2, s1),
                     post_swizzle(r3, s2), mods1, mods2, sat)


def is_nan(bits: int) -> bool:
    return math.isnan(as_float(bits))


@SETTINGS
@given(dmovc_cases())
def test_dmovc_lanes(case: DmovcCase) -> None:
    outcomes, _, expect = run(case.instance)
    state = case.instance.state
    assert_registers_exact(expect, state, skip={"r0"})
    # Each written double is exact ("defined") or constrained without fixed bits.
    assert outcomes and set(outcomes) <= {"defined", "dst_constrained"}
    got = expect["r0"]
    for lane, letters in enumerate(("xy", "zw")):
        lo_i, hi_i = 2 * lane, 2 * lane + 1
        if letters not in case.mask:
            assert got[lo_i] == state["r0"][lo_i] and got[hi_i] == state["r0"][hi_i]
            continue
        # seed-002: the condition of a lane is component `lane` of src0 after the swizzle
        chosen, (neg, absolute) = ((case.src1, case.mods1) if case.cond[lane] != 0
                                   else (case.src2, case.mods2))
        bits = chosen[lo_i] | (chosen[hi_i] << 32)
        lo, hi = got[lo_i], got[hi_i]
        if not (neg or absolute or case.sat):
            # "The absence of modifiers moves data without altering bits."
            assert (lo, hi) == (chosen[lo_i], chosen[hi_i])
            continue
        after = ((bits & ~SIGN) if absolute else bits) ^ (SIGN if neg else 0)
        if not case.sat:
            if is_nan(bits):
                assert lo == hi == {"f64": "nan"}
            else:
                assert (lo, hi) == (after & U32, after >> 32)
            continue
        if is_nan(bits):
            assert (lo, hi) == (0, 0)  # sat(NaN) = 0
        elif after == SIGN:
            assert (lo, hi) == (0, {"value": 0, "mask": 0x7FFFFFFF})
        else:
            assert isinstance(lo, int) and isinstance(hi, int)
            result = as_float(lo | (hi << 32))
            want = min(1.0, max(0.0, as_float(after)))
            assert result == want and 0.0 <= result <= 1.0
            if 0.0 < as_float(after) < 1.0:
                assert (lo, hi) == (after & U32, after >> 32)  # kept, denormals included
