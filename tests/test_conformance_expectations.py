"""Expectations files: ids, globs and predicates, lookup order, one clear error per malformed
file, entries that match nothing, and ``sm5 conform --check-expect``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.conformance.expectations import ExpectationError, Expectations, load_expectations
from sm5.conformance.vector_facts import operand_facts, operand_type
from sm5.oracle.model.spec import load_default
from sm5.vectors.format import Vector

DOUBLES = "dcl_globalFlags enableDoublePrecisionFloatOps"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def vec(vid: str, program: tuple[str, ...] = ("ret",), clauses: tuple[str, ...] = (),
        flags: tuple[str, ...] = (), outcomes: tuple[str, ...] = ("defined",)) -> Vector:
    expect: dict[str, Any] = {"outcomes": list(outcomes)}
    return Vector(vid, program, "cs_5_0", "11.0", {}, expect, clauses, flags)


def test_exact_id_wins_over_globs_and_first_glob_wins(tmp_path: Path) -> None:
    path = write(tmp_path, """
- id: "store_structured/*"
  status: xfail
  reason: any store
- id: "store_structured/oob_index/*"
  status: fail
  reason: wrap
  link: https://example.org/wrap
- id: store_structured/oob_index/0003
  status: skip
  reason: crashes
""")
    exp = load_expectations(path)
    assert exp.lookup(vec("store_structured/oob_index/0003")).status == "skip"  # type: ignore[union-attr]
    assert exp.lookup(vec("store_structured/oob_index/0004")).reason == "any store"  # type: ignore[union-attr]
    assert exp.lookup(vec("dmovc/sat/0001")) is None
    assert [e.id for e in exp.unused([vec("store_structured/a/0001")])] == [
        "store_structured/oob_index/*", "store_structured/oob_index/0003"]


def test_no_file_means_no_expectations() -> None:
    assert load_expectations(None).lookup(vec("a/b/0001")) is None


def test_predicates_over_clauses_flags_category_and_outcomes(tmp_path: Path) -> None:
    exp = load_expectations(write(tmp_path, """
- name: groupshared
  status: xfail
  reason: unchecked g#
  match: {clauses: ["*.tgsm*.out_of_bounds", "*.tgsm*.misaligned"]}
- name: wrapped-witness
  status: fail
  reason: 32-bit wrap
  match: {clauses: "*.oob_index", flags: [wrap, z3-witness]}
- name: random-undefined
  status: xfail
  reason: both keys must hold
  match: {category: random, outcomes: resource_undefined, instruction: "store_*"}
"""))
    label = lambda v: (e.label if (e := exp.lookup(v)) else None)  # noqa: E731
    assert label(vec("imm_atomic_iadd/boundary/0001",
                     clauses=("imm_atomic_iadd.invocation.active",
                              "imm_atomic_iadd.tgsm_raw.out_of_bounds"))) == "groupshared"
    assert label(vec("store_structured/boundary/0002",
                     clauses=("store_structured.tgsm.misaligned",))) == "groupshared"
    assert label(vec("store_structured/boundary/0003",
                     clauses=("store_structured.uav.out_of_bounds",))) is None
    # AND across keys: the clause alone, or the flag alone, is not enough
    oob = ("store_structured.uav.oob_index",)
    assert label(vec("store_structured/witness/0001", clauses=oob,
                     flags=("oob", "z3-witness"))) == "wrapped-witness"
    assert label(vec("store_structured/boundary/0004", clauses=oob, flags=("oob",))) is None
    assert label(vec("store_structured/witness/0002", flags=("wrap",))) is None
    assert label(vec("store_structured/random/0001",
                     outcomes=("resource_undefined",))) == "random-undefined"
    assert label(vec("store_structured/random/0002")) is None
    assert label(vec("dmovc/random/0001", outcomes=("resource_undefined",))) is None


def test_operand_width_comes_from_the_spec() -> None:
    spec = load_default()
    dmovc = spec.instruction("dmovc")
    # src1/src2: u64 semantic inputs; dest: masks .xy .zw .xyzw are whole doubles
    assert [operand_type(dmovc, o.name) for o in dmovc.operands] == [
        "double", "32-bit", "double", "double"]
    # the spec's own family says the same, for every instruction it holds
    for ins in spec.instructions.values():
        widths = {operand_type(ins, o.name) for o in ins.operands}
        assert ("double" in widths) == (ins.family == "double"), ins.name


def test_operand_forms_of_the_instruction_under_test(tmp_path: Path) -> None:
    facts = operand_facts((DOUBLES, "dmovc r0.xyzw, l(1, 0, 0, 0), r2.xyzw, l(0, 0, 0, 0)"),
                          "dmovc")
    assert [(f.file, f.name, f.role, f.type) for f in facts] == [
        ("r", "dest", "dst", "double"), ("l", "src0", "src", "32-bit"),
        ("r", "src1", "src", "double"), ("l", "src2", "src", "double")]
    assert operand_facts(("dmovc r0.xyzw, nonsense",), "dmovc") == ()  # does not parse
    # the subject is the vector's: a program without an instruction of that name has none
    assert operand_facts((DOUBLES, "dmov r0.xyzw, r1.xyzw"), "dmovc") == ()
    exp = load_expectations(write(tmp_path, """
- name: immediate-double
  status: xfail
  reason: OpUndef
  match: {operands: {file: l, type: double}}
- name: structured-u
  status: xfail
  reason: flattening
  match: {operands: [{role: memory, file: "[ut]"}], clauses: "*.oob_index"}
"""))
    label = lambda v: (e.label if (e := exp.lookup(v)) else None)  # noqa: E731
    immediate_src2 = (DOUBLES, "dmovc r0.xyzw, r1.xyzw, r2.xyzw, l(0, 0, 0, 0)")
    immediate_cond = (DOUBLES, "dmovc r0.xyzw, l(1, 0, 0, 0), r2.xyzw, r3.xyzw")
    atomic = ("dcl_uav_raw u0", "imm_atomic_iadd r0.x, u0, l(0), l(1)")
    assert label(vec("dmovc/cell/0001", immediate_src2)) == "immediate-double"
    assert label(vec("dmovc/cell/0002", immediate_cond)) is None  # the condition is 32-bit
    assert label(vec("imm_atomic_iadd/cell/0001", atomic)) is None  # 32-bit immediates
    on_u = ("dcl_uav_structured u0, 4", "store_structured u0.x, r0.x, l(0), r1.x")
    on_g = ("dcl_tgsm_structured g0, 4, 1", "store_structured g0.x, r0.x, l(0), r1.x")
    oob = ("store_structured.uav.oob_index",)
    assert label(vec("store_structured/boundary/0001", on_u, oob)) == "structured-u"
    assert label(vec("store_structured/boundary/0002", on_g, oob)) is None


def test_operand_components_match_the_mask_as_written(tmp_path: Path) -> None:
    exp = load_expectations(write(tmp_path, """
- name: beyond-x
  status: xfail
  reason: results placed from the lowest component
  match: {operands: [{role: dst, components: "[yzw]*"}, {role: dst, components: "x[zw]"}]}
"""))
    label = lambda v: (e.label if (e := exp.lookup(v)) else None)  # noqa: E731
    for mask, expected in (("x", None), ("xy", None), ("y", "beyond-x"), ("zw", "beyond-x"),
                           ("xw", "beyond-x")):
        program = (DOUBLES, f"dtoi r0.{mask}, r1.xyzw")
        assert label(vec(f"dtoi/cell/{mask}", program)) == expected, mask
    # the source's swizzle is a component selection too, but of role src
    assert label(vec("dtoi/cell/src", (DOUBLES, "dtoi r0.x, r1.zwzw"))) is None


def test_aliased_operand_names_a_register_another_operand_names(tmp_path: Path) -> None:
    exp = load_expectations(write(tmp_path, """
- name: quotient-first
  status: xfail
  reason: the quotient is written before the remainder reads the sources
  match: {instruction: udiv, operands: {name: destQUOT, aliased: "yes"}}
"""))
    label = lambda v: (e.label if (e := exp.lookup(v)) else None)  # noqa: E731
    for line, expected in (("udiv r0.x, r1.x, r0.x, r2.x", "quotient-first"),  # a source
                           ("udiv r1.x, r1.y, r2.x, r3.x", "quotient-first"),  # destREM
                           ("udiv r0.x, r1.x, r2.x, r3.x", None),
                           ("udiv null, r1.x, r2.x, r1.x", None),  # null names no register
                           ("udiv r0.x, r1.x, l(1), l(2)", None)):
        assert label(vec("udiv/random/0000", (line,))) == expected, line


def test_resource_forms_match_the_initial_state(tmp_path: Path) -> None:
    exp = load_expectations(write(tmp_path, """
- name: null-srv
  status: xfail
  reason: a NULL shader resource view
  match: {resources: {file: t, empty: true}, instruction: ld_structured}
- name: typed-uav
  status: xfail
  reason: typed
  match: {resources: [{file: u, kind: typed, empty: false}]}
"""))
    label = lambda v: (e.label if (e := exp.lookup(v)) else None)  # noqa: E731

    def with_state(vid: str, state: dict[str, Any]) -> Vector:
        return Vector(vid, ("ret",), "cs_5_0", "11.0", state, {"outcomes": ["defined"]})

    null_t = {"kind": "structured", "stride": 4, "count": 0, "data": []}
    full_t = {"kind": "structured", "stride": 4, "count": 1, "data": [7]}
    assert label(with_state("ld_structured/boundary/0001", {"t0": null_t})) == "null-srv"
    assert label(with_state("ld_structured/boundary/0002", {"t0": full_t})) is None
    assert label(with_state("ld_structured/boundary/0003", {"u0": null_t})) is None
    assert label(with_state("store_structured/boundary/0003", {"t0": null_t})) is None
    typed = {"kind": "typed", "format": "R32_UINT", "data": [1]}
    assert label(with_state("atomic_iadd/cell/0001", {"r0": [0, 0, 0, 0], "u1": typed})) \
        == "typed-uav"
    assert label(with_state("atomic_iadd/cell/0002", {"u1": {**typed, "data": []}})) is None
    high = load_expectations(write(tmp_path, """
- {name: high-slot, status: fail, reason: r, match: {resources: {register: "u[1-6][0-9]"}}}
"""))
    assert high.lookup(with_state("a/limit/0001", {"u63": typed})) is not None
    assert high.lookup(with_state("a/limit/0002", {"u7": typed, "t12": typed})) is None
    counted = load_expectations(write(tmp_path, """
- {name: counter, status: fail, reason: r, match: {resources: {file: u, counter: true}}}
- {name: null-uav, status: fail, reason: r, match: {resources: {empty: true, counter: false}}}
"""))
    with_counter = {"kind": "structured", "stride": 4, "count": 0, "data": [], "counter": 3}
    assert label_of(counted, with_state("a/random/0001", {"u2": with_counter})) == "counter"
    assert label_of(counted, with_state("a/random/0002", {"u2": null_t})) == "null-uav"
    assert label_of(counted, with_state("a/random/0003", {"u2": full_t})) is None


def label_of(exp: Expectations, vector: Vector) -> str | None:
    entry = exp.lookup(vector)
    return entry.label if entry else None


def test_declared_type_of_a_resource_comes_from_its_declaration(tmp_path: Path) -> None:
    """``declared`` reads the element type the program's declaration gives the register."""
    exp = load_expectations(write(tmp_path, """
- {name: sint-view, status: xfail, reason: r, match: {resources: {declared: sint}}}
"""))
    typed = {"kind": "typed", "format": "R32_SINT", "data": [1]}

    def with_program(vid: str, dcl: str, register: str) -> Vector:
        return Vector(vid, (dcl, f"atomic_umax {register}, l(0), l(1)"), "cs_5_0", "11.0",
                      {register: typed}, {"outcomes": ["defined"]})

    assert exp.lookup(with_program("atomic_umax/cell/0001",
                                   "dcl_uav_typed_buffer (sint,sint,sint,sint) u3", "u3"))
    assert exp.lookup(with_program("atomic_umax/cell/0002",
                                   "dcl_uav_typed_buffer (uint,uint,uint,uint) u3", "u3")) is None
    raw = Vector("atomic_umax/cell/0003", ("dcl_uav_raw u0", "atomic_umax u0, l(0), l(1)"),
                 "cs_5_0", "11.0", {"u0": {"kind": "raw", "data": [1]}}, {"outcomes": ["defined"]})
    assert exp.lookup(raw) is None


def test_an_entry_that_matches_no_vector_is_an_error(tmp_path: Path) -> None:
    exp = load_expectations(write(tmp_path, """
- {id: store_structured/boundary/0001, status: xfail, reason: r}
- {name: typo, status: xfail, reason: r, match: {clauses: "*.tgsm_raw.out_of_bound"}}
- {name: shadowed, status: xfail, reason: r, match: {instruction: store_structured}}
"""))
    exp.require_used([vec("store_structured/boundary/0001"),
                      vec("store_structured/boundary/0002",
                          clauses=("imm_atomic_iadd.tgsm_raw.out_of_bound",)),
                      vec("store_structured/boundary/0003")])
    with pytest.raises(ExpectationError) as info:
        exp.require_used([vec("store_structured/boundary/0001")])
    assert "2 entries match no vector of the selected files: entry 2 (typo); entry 3 " \
        "(shadowed)" in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "expect.yaml"))


@pytest.mark.parametrize(("text", "message"), [
    ("id: x\n", "expect.yaml: expected a list of entries"),
    ("- id: a\n  status: xfail\n", "expect.yaml: entry 1 (id 'a'): field reason: expected a "
     "non-empty string, got None"),
    ("- {id: a, status: xfail, reason: r}\n- {id: b, status: broken, reason: r}\n",
     "expect.yaml: entry 2 (id 'b'): field status: 'broken' is not one of fail, xfail, "
     "unsupported, skip"),
    ("- {id: a, status: xfail, reason: r, url: u}\n",
     "expect.yaml: entry 1 (id 'a'): unknown field(s) url"),
    ("- {id: a, status: xfail, reason: r}\n- {id: a, status: fail, reason: r}\n",
     "expect.yaml: entry 2 (id 'a'): duplicate id"),
    ("- [a, b]\n", "expect.yaml: entry 1: expected a mapping"),
    ("- {id: a, status: xfail, reason: r, link: 3}\n",
     "expect.yaml: entry 1 (id 'a'): field link: expected a string, got 3"),
    ("- id: [\n", "expect.yaml:2:1: YAML syntax error"),
    ("- {status: xfail, reason: r}\n", "expect.yaml: entry 1: expected an id (exact or glob) "
     "or a match predicate"),
    ("- {name: n, status: xfail, reason: r, match: {clause: x}}\n",
     "expect.yaml: entry 1 (name 'n'): field match: unknown key(s) clause; expected id, "
     "instruction, category, clauses, flags, outcomes, operands, resources"),
    ("- {name: n, status: xfail, reason: r, match: {resources: {empty: 'yes'}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.resources.empty: expected true or false"),
    ("- {name: n, status: xfail, reason: r, match: {resources: {counter: 1}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.resources.counter: expected true or false"),
    ("- {name: n, status: xfail, reason: r, match: {resources: {size: 0}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.resources: unknown key(s) size"),
    ("- {name: n, status: xfail, reason: r, match: {resources: []}}\n",
     "expect.yaml: entry 1 (name 'n'): match.resources: expected a mapping or a non-empty "
     "list"),
    ("- {name: n, status: xfail, reason: r, match: {}}\n",
     "expect.yaml: entry 1 (name 'n'): field match: expected a mapping"),
    ("- {name: n, status: xfail, reason: r, match: {flags: []}}\n",
     "expect.yaml: entry 1 (name 'n'): match.flags: expected a non-empty string or list"),
    ("- {name: n, status: xfail, reason: r, match: {clauses: [a, 3]}}\n",
     "expect.yaml: entry 1 (name 'n'): match.clauses: expected a non-empty string or list"),
    ("- {name: n, status: xfail, reason: r, match: {operands: {type: f64}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.operands.type: 'f64' is not one of double, "
     "32-bit"),
    ("- {name: n, status: xfail, reason: r, match: {operands: {aliased: maybe}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.operands.aliased: 'maybe' is not one of yes, no"),
    ("- {name: n, status: xfail, reason: r, match: {operands: {form: l}}}\n",
     "expect.yaml: entry 1 (name 'n'): match.operands: unknown key(s) form"),
    ("- {name: n, status: xfail, reason: r, match: {operands: []}}\n",
     "expect.yaml: entry 1 (name 'n'): match.operands: expected a mapping or a non-empty list"),
    ("- {name: n, status: xfail, reason: r, match: {flags: a}}\n"
     "- {name: n, status: xfail, reason: r, match: {flags: b}}\n",
     "expect.yaml: entry 2 (name 'n'): duplicate name"),
    ("- {name: '', status: xfail, reason: r, match: {flags: a}}\n",
     "expect.yaml: entry 1 (name ''): field name: expected a non-empty string"),
])
def test_malformed_file_names_file_and_entry(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ExpectationError) as info:
        load_expectations(write(tmp_path, text))
    assert message in str(info.value).replace(str(tmp_path) + "/", "")


# ------------------------------------------------------------------------------ sm5 conform


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    return write_vectors(tmp_path / "cases.jsonl", all_vectors())


def test_conform_refuses_an_entry_that_matches_no_vector(
        cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "- {name: nothing, status: xfail, reason: r, "
                           "match: {clauses: '*.no_such_clause'}}\n")
    assert main(["conform", "--impl", "oracle", "--vectors", str(cases),
                 "--expect", str(path)]) == 2
    err = capsys.readouterr().err
    assert "1 entry match no vector of the selected files: entry 1 (nothing)" in err


def test_check_expect_names_unexplained_failures_and_stale_entries(
        cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # atomic_saturates fails exactly imm_atomic_iadd/raw/wraps on the hand-picked cases
    explained = "- {name: saturation, status: xfail, reason: r, match: {id: '*/raw/wraps'}}\n"
    path = write(tmp_path, explained)
    argv = ["conform", "--impl", "mutant:atomic_saturates", "--vectors", str(cases),
            "--expect", str(path), "--check-expect"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1  saturation  xfail   1        1    1" in out
    assert "every entry holds" in out
    path.write_text(
        "- {name: stale, status: xfail, reason: r, match: {instruction: dmovc}}\n"
        "- {name: nothing, status: xfail, reason: r, match: {flags: no-such-flag}}\n"
        "- {name: too-wide, status: fail, reason: r, match: {id: 'store_structured/*'}}\n",
        encoding="utf-8")
    assert main([*argv, "--show-matches"]) == 1
    out = capsys.readouterr().out
    assert "CHECK entry 1 (stale, xfail): explains no divergence" in out
    assert "CHECK entry 2 (nothing, xfail): matches no vector" in out
    assert "CHECK entry 3 (too-wide, fail): explains no divergence" in out
    assert "CHECK unexplained failure imm_atomic_iadd/raw/wraps" in out
    assert "imm_atomic_iadd/raw/wraps  fail  -" in out  # the per-vector view
    assert "store_structured/in_bounds/swizzled  xpass  too-wide" in out
    assert "4 problem(s)" in out
    path.write_text("- {name: wide, status: fail, reason: r, "
                    "match: {instruction: imm_atomic_iadd}}\n", encoding="utf-8")
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "CHECK entry 1 (wide, fail): " in out and "of its vectors pass (xpass), e.g. " \
        "imm_atomic_iadd/" in out and ": narrow it, or make it xfail" in out
    assert "1 problem(s)" in out


def test_check_expect_needs_an_expectations_file(
        cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--impl", "oracle", "--vectors", str(cases),
                 "--check-expect"]) == 2
    assert "--check-expect and --show-matches need --expect FILE" in capsys.readouterr().err


def test_computes_names_the_vectors_a_sibling_kernel_fails(tmp_path: Path) -> None:
    from sm5.vectors.format import read_file

    golden = Path(__file__).resolve().parents[1] / "vectors" / "golden" / "dfma.jsonl"
    vectors = [v for v in read_file(golden)[1] if not v.rejected]
    path = tmp_path / "e.yaml"
    path.write_text("- name: not-fused\n  status: xfail\n  reason: two roundings\n"
                    "  match: {instruction: [dfma], computes: [double_rounded]}\n",
                    encoding="utf-8")
    covered = [v.id for v in vectors if load_expectations(path).lookup(v) is not None]
    # (1 + 2^-52)^2 - (1 + 2^-51): 2^-104 fused, 0 rounded twice (worked out by hand)
    witness = next(v for v in vectors if v.state.get("r1", [])[:2] == [1, 0x3FF00000]
                   and v.state.get("r3", [])[:2] == [2, 0xBFF00000])
    assert witness.id in covered
    assert 0 < len(covered) < len(vectors) // 10


def test_computes_refuses_an_unknown_sibling(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("- status: xfail\n  reason: r\n  match: {computes: [no_such_kernel]}\n",
                    encoding="utf-8")
    with pytest.raises(ExpectationError, match=r"unknown sibling.*no_such_kernel"):
        load_expectations(path)
