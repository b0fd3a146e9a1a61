"""The limit and alias sections: declarations at the edges of their rules, and destination
registers that are also sources. Expected values are the FS limits (2048-byte structures, 8 and
64 UAV slots, 32 KB / 16 KB of g#), written here from the sources, not read from the spec."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sm5.oracle.model.spec import Spec, load_default
from sm5.vectors.build import to_vector
from sm5.vectors.format import Vector
from sm5.vectors.points import LEVEL_BUDGETS, Explorer
from sm5.vectors.sections import Pool, alias_cases, alias_shapes, limit_cases
from sm5.vectors.shapes import default_shape, edge_shapes


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_default()


def _vectors(spec: Spec, name: str, section: str) -> list[Vector]:
    pool = Pool(spec, name, Explorer(spec, name, LEVEL_BUDGETS[1]).points())
    make = limit_cases if section == "limit" else alias_cases
    return [to_vector(case, f"{name}/{section}/{k:04d}", spec)
            for k, case in enumerate(make(spec, name, pool, 0))]


@pytest.fixture(scope="module")
def atomic_limits(spec: Spec) -> list[Vector]:
    return _vectors(spec, "imm_atomic_iadd", "limit")


@pytest.fixture(scope="module")
def store_limits(spec: Spec) -> list[Vector]:
    return _vectors(spec, "store_structured", "limit")


def _find(vectors: list[Vector], *lines: str, target: str = "cs_5_0",
          runtime: str | None = None) -> Iterator[Vector]:
    for v in vectors:
        if v.target == target and (runtime is None or v.runtime == runtime) and \
                all(line in v.program for line in lines):
            yield v


def _rejected(v: Vector) -> bool:
    return v.expect.get("outcomes") == ["rejected"]


@pytest.mark.parametrize(("line", "rule"), [
    ("dcl_uav_structured u0, 6", "dcl_uav_structured.legal.stride"),
    ("dcl_uav_structured u0, 0", "dcl_uav_structured.legal.stride"),
    ("dcl_uav_structured u0, 2052", "dcl_uav_structured.legal.stride_limit"),
    ("dcl_tgsm_raw g0, 6", "dcl_tgsm_raw.legal.bytes"),
    ("dcl_tgsm_raw g0, 0", "dcl_tgsm_raw.legal.bytes"),
    ("dcl_tgsm_structured g0, 6, 2", "dcl_tgsm_structured.legal.stride"),
    ("dcl_tgsm_structured g0, 16, 0", "dcl_tgsm_structured.legal.count"),
])
def test_broken_declarations_are_rejected(atomic_limits: list[Vector], line: str,
                                          rule: str) -> None:
    found = list(_find(atomic_limits, line))
    assert found, f"no limit vector declares {line}"
    assert all(_rejected(v) and v.expect["rule"] == rule for v in found)


@pytest.mark.parametrize(("register", "runtime", "legal"), [
    ("u7", "11.0", True), ("u8", "11.0", False), ("u63", "11.1", True), ("u64", "11.1", False),
])
def test_last_uav_slot_per_runtime(atomic_limits: list[Vector], register: str, runtime: str,
                                   legal: bool) -> None:
    found = [v for v in atomic_limits if v.runtime == runtime
             and any(line.startswith("dcl_uav_") and f" {register}" in line
                     for line in v.program)]
    assert found
    assert all(_rejected(v) != legal for v in found)


def _tgsm_bytes(v: Vector) -> list[int]:
    out = []
    for line in v.program:
        if line.startswith("dcl_tgsm_"):
            numbers = [int(x) for x in line.split(",")[1:]]
            out.append(numbers[0] if len(numbers) == 1 else numbers[0] * numbers[1])
    return out


@pytest.mark.parametrize(("fixture", "target", "limit"), [
    ("atomic_limits", "cs_5_0", 32768), ("store_limits", "cs_5_0", 32768),
    ("store_limits", "cs_4_0", 16384),
])
def test_shared_memory_total_at_the_limit(request: pytest.FixtureRequest, fixture: str,
                                          target: str, limit: int) -> None:
    vectors: list[Vector] = request.getfixturevalue(fixture)
    on_target = [(v, _tgsm_bytes(v)) for v in vectors if v.target == target]
    at = [v for v, sizes in on_target if len(sizes) > 1 and sum(sizes) == limit]
    past = [v for v, sizes in on_target if len(sizes) > 1 and sum(sizes) == limit + 4]
    assert at and not any(_rejected(v) for v in at), "the largest total must be legal"
    assert past and all(_rejected(v) and v.expect["rule"] == "dcl_tgsm.legal.total_size"
                        for v in past)
    # each declaration alone is within the limit: only the sum breaks it
    assert all(max(_tgsm_bytes(v)) < limit for v in past)


def test_largest_stride_is_legal(atomic_limits: list[Vector]) -> None:
    found = list(_find(atomic_limits, "dcl_uav_structured u0, 2048"))
    assert found and not any(_rejected(v) for v in found)
    assert all(v.state["u0"]["stride"] == 2048 for v in found)


def test_limit_vectors_stay_few(spec: Spec, atomic_limits: list[Vector]) -> None:
    assert 10 <= len(atomic_limits) <= 100
    ids = {e.key for e in edge_shapes(spec, default_shape(spec, "imm_atomic_iadd"))}
    assert len(ids) == len(list(edge_shapes(spec, default_shape(spec, "imm_atomic_iadd"))))


def test_every_register_instruction_gets_alias_shapes(spec: Spec) -> None:
    for name, ins in spec.instructions.items():
        shapes = list(alias_shapes(spec, name))
        writes = any(op.role == "dst" and "r" in op.files for op in ins.operands)
        reads = any(op.role == "src" and "r" in op.files for op in ins.operands)
        assert bool(shapes) == (writes and reads), name
        for shape, _ in shapes:
            dst = [s.register for op, s in zip(ins.operands, shape.slots, strict=True)
                   if op.role == "dst"]
            srcs = [s.register for op, s in zip(ins.operands, shape.slots, strict=True)
                    if op.role == "src"]
            assert set(dst) & set(srcs)


@pytest.mark.parametrize("name", ["imm_atomic_iadd", "dmovc"])
def test_alias_vectors_are_executed(spec: Spec, name: str) -> None:
    vectors = _vectors(spec, name, "alias")
    assert len(vectors) >= 3
    assert all(v.expect["outcomes"] == ["defined"] for v in vectors)


# The oracle reads every source before it writes: worked out by hand, not by the oracle.

def _run(spec: Spec, program: list[str], state: dict[str, object]) -> dict[str, object]:
    from sm5.oracle.asm import parse_vector_program
    from sm5.oracle.execution.executor import execute
    from sm5.oracle.machine.state import expected_to_json, state_from_json

    result = execute(parse_vector_program(tuple(program)), state_from_json(state), target="cs_5_0",
                     runtime="11.0", spec=spec)
    assert result.outcomes == ("defined",) and result.state is not None
    return expected_to_json(result.state)


def test_atomic_reads_its_source_before_writing_the_aliased_destination(spec: Spec) -> None:
    # r0.x is both dst0 and src0: memory word 1 (byte 4) gets 20 + 5, r0.x the old 20.
    # Writing r0.x first would add 20 instead of 5 (word 1 = 40).
    out = _run(spec, ["dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, r1.xxxx, r0.x"],
               {"r0": [5, 1, 2, 3], "r1": [4, 0, 0, 0],
                "u0": {"kind": "raw", "data": [10, 20, 30]}})
    assert out["r0"] == [20, 1, 2, 3]
    assert out["u0"] == {"kind": "raw", "data": [10, 25, 30]}


def test_dmovc_reads_its_sources_before_writing_the_aliased_destination(spec: Spec) -> None:
    # dmovc r1.xy, r1.xxxx, r1.zwzw, r2.xyzw: r1.x = 1 is true, so lane .xy receives src1's
    # .zw = (r1.z, r1.w) = (0x11, 0x22); r1.zw keep their values.
    out = _run(spec, ["dcl_globalFlags enableDoublePrecisionFloatOps",
                      "dmovc r1.xy, r1.xxxx, r1.zwzw, r2.xyzw"],
               {"r1": [1, 7, 0x11, 0x22], "r2": [3, 4, 5, 6]})
    assert out["r1"] == [0x11, 0x22, 0x11, 0x22]
