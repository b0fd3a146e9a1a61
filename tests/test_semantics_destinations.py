"""Lanes over destinations, on a synthetic two-destination instruction built in a copy of the
spec (no ALU instruction of the spec is needed): a lane is a destination mask position, sources
are read at the matching swizzle position, each result names its destination, a destination
may be the ``null`` register, and two results landing on one register component accept every
order of the writes unless the instruction lists its order."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sm5.oracle.asm.parser import parse_program
from sm5.oracle.asm.printer import format_program
from sm5.oracle.dxbc import encode_program
from sm5.oracle.dxbc.harness import build_harness
from sm5.oracle.errors import SpecError
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import OneOf, expected_to_json, state_from_json
from sm5.oracle.model.spec import Spec, default_root, load_spec

#: A udiv-like instruction (quotient and remainder per component), either destination null.
DIVMOD = (Path(__file__).resolve().parent / "synthetic" / "divmod.yaml").read_text(
    encoding="utf-8")
WORDS = {"r2": [7, 100, 9, 5], "r3": [2, 7, 0, 5]}
# per position: 7/2 = 3 r 1; 100/7 = 14 r 2; 9/0 = 0xFFFFFFFF both; 5/5 = 1 r 0
POISON = [0x99999999] * 4


def synthetic(tmp_path: Path, text: str = DIVMOD) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    (root / "instructions" / "divmod.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Spec:
    return load_spec(synthetic(tmp_path_factory.mktemp("divmod")))


def run(spec: Spec, line: str, registers: dict[str, list[int]]) -> dict[str, object]:
    program = parse_program(["cs_5_0", line], spec=spec)
    result = execute(program, state_from_json(registers), spec=spec)
    assert result.rule is None, result.rule
    assert result.state is not None
    return expected_to_json(result.state)


def test_the_loader_builds_two_results(spec: Spec) -> None:
    semantics = spec.instruction("divmod").semantics
    assert [(r.operand, r.value) for r in semantics.results] == [("destQuot", "quot"),
                                                                 ("destRem", "rem")]
    assert semantics.lanes is not None and semantics.lanes.operands == ("destQuot", "destRem")
    assert semantics.write_order == "any"


def test_each_destination_receives_its_masked_positions(spec: Spec) -> None:
    got = run(spec, "divmod r0.xz, r1.yw, r2.xyzw, r3.xyzw",
              {"r0": POISON, "r1": POISON, **WORDS})
    assert got["r0"] == [3, 0x99999999, 0xFFFFFFFF, 0x99999999]
    assert got["r1"] == [0x99999999, 2, 0x99999999, 0]


def test_a_source_is_read_at_the_destination_position(spec: Spec) -> None:
    """.y of dest reads .y of the post-swizzle sources (not their first component)."""
    got = run(spec, "divmod r0.y, null, r2.xyzw, r3.xyzw", {"r0": POISON, **WORDS})
    assert got["r0"] == [0x99999999, 14, 0x99999999, 0x99999999]
    swizzled = run(spec, "divmod r0.w, null, r2.wzyx, r3.wzyx", {"r0": POISON, **WORDS})
    assert swizzled["r0"] == [0x99999999] * 3 + [3]  # position w of .wzyx is x: 7 / 2


def test_a_null_destination_writes_nothing(spec: Spec) -> None:
    got = run(spec, "divmod null, r1.xyzw, r2.xyzw, r3.xyzw", {"r1": POISON, **WORDS})
    assert set(got) == {"r1", "r2", "r3"}
    assert got["r1"] == [1, 2, 0xFFFFFFFF, 0]
    both = run(spec, "divmod null, null, r2.xyzw, r3.xyzw", WORDS)
    assert both == WORDS


def test_null_parses_prints_and_encodes(spec: Spec) -> None:
    program = parse_program(["cs_5_0", "divmod null, r1.xy, r2.xyzw, l(3)"], spec=spec)
    null = program.instructions[0].operands[0]
    assert (null.file, null.index, null.register) == ("null", None, "null")
    assert parse_program(format_program(program, spec=spec), spec=spec) == program
    tokens = encode_program(program, spec=spec)
    # the opcode token, then the null operand: D3D10_SB_OPERAND_TYPE_NULL (13), no components
    first = tokens.index(next(t for t in tokens if t & 0x7FF == 0x4E))
    assert (tokens[first + 1] >> 12) & 0xFF == 13
    assert tokens[first + 1] & 3 == 0


def test_the_harness_stores_no_null_register(spec: Spec) -> None:
    program = parse_program(["cs_5_0", "divmod null, r1.xy, r2.xyzw, r3.xyzw"], spec=spec)
    harness = build_harness(program, state_from_json({"r1": POISON, **WORDS}), spec=spec)
    assert [slot.name for slot in harness.layout.registers] == ["r1", "r2", "r3"]


def test_null_is_illegal_where_the_operand_table_lacks_it(spec: Spec) -> None:
    program = parse_program(["cs_5_0", "mov null, r1.xyzw"], spec=spec)
    result = execute(program, state_from_json({"r1": [1, 2, 3, 4]}), spec=spec)
    assert result.rejected and result.rule == "mov.operand.dest.file"


def test_two_writes_to_one_component_accept_either_order(spec: Spec) -> None:
    got = run(spec, "divmod r0.xy, r0.x, r2.xyzw, r3.xyzw", {"r0": POISON, **WORDS})
    # x: quotient 3 or remainder 1, in an order the sources leave open; y: the quotient only
    assert got["r0"] == [{"one_of": [1, 3]}, 14, 0x99999999, 0x99999999]
    same = run(spec, "divmod r0.z, r0.z, r2.xyzw, r3.xyzw", {"r0": POISON, **WORDS})
    assert same["r0"] == [0x99999999, 0x99999999, 0xFFFFFFFF, 0x99999999]  # both agree


def test_a_listed_write_order_keeps_the_last(tmp_path: Path) -> None:
    listed = DIVMOD.replace("  results:\n", "  write_order: listed\n  results:\n")
    spec = load_spec(synthetic(tmp_path, listed))
    got = run(spec, "divmod r0.xy, r0.x, r2.xyzw, r3.xyzw", {"r0": POISON, **WORDS})
    assert got["r0"] == [1, 14, 0x99999999, 0x99999999]


def test_either_order_of_numbers_and_classes() -> None:
    from sm5.oracle.execution.semantics import either
    from sm5.oracle.machine.state import F32Nan
    assert either([5, 5]) == 5
    assert either([5, OneOf((1, 2))]) == OneOf((1, 2, 5))
    assert either([5, F32Nan()]) is None  # no form holds a number and "some NaN": any value
    assert either([F32Nan(), F32Nan()]) == F32Nan()


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("{operand: destRem, value: rem}", "{operand: src0, value: rem}", "not a destination"),
    ("{operand: destRem, value: rem}", "{operand: destQuot, value: rem}", "named twice"),
    ("{operand: destRem, value: rem}", "{operand: destRem, value: nothing}", "unknown value"),
    ("operands: [destQuot, destRem]", "operands: [destQuot, destGone]", "no operand named"),
    ("  lanes: {operands: [destQuot, destRem], type: component, text: \"each position "
     "written by either destination\"}\n", "", "need lanes"),
    ("  results:\n", "  result: {operand: destQuot, value: quot}\n  results:\n", "two spellings"),
])
def test_a_bad_result_is_one_error_naming_the_file(tmp_path: Path, old: str, new: str,
                                                   expected: str) -> None:
    assert old in DIVMOD
    with pytest.raises(SpecError) as info:
        load_spec(synthetic(tmp_path, DIVMOD.replace(old, new, 1)))
    assert "divmod.yaml" in str(info.value) and expected in str(info.value), str(info.value)


def test_the_generator_realizes_two_destinations_and_null(tmp_path: Path) -> None:
    """Level-1 vectors of the synthetic instruction: every one parses and re-runs to its expected
    state; some discard a result in null, some write both destinations."""
    from sm5.conformance.run import iter_selected

    root = synthetic(tmp_path)
    spec = load_spec(root)
    # A fresh process: the witness theorems' z3 work depends on what z3 did before in the
    # process (its caches), and a test worker has proved much by now.
    code = ("import sys; from pathlib import Path; from sm5.oracle.model.spec import load_spec; "
            "from sm5.vectors.generate import generate; "
            "generate(Path(sys.argv[2]), spec=load_spec(Path(sys.argv[1])), "
            "instructions=['divmod'], jobs=1)")
    run = subprocess.run([sys.executable, "-c", code, str(root), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    vectors = [v for _, _, v in iter_selected([tmp_path / "out" / "divmod.jsonl"])]
    discarded = both = 0
    for vector in vectors:
        program = parse_program(["cs_5_0", *vector.program], spec=spec)
        result = execute(program, state_from_json(dict(vector.state)), target=vector.target,
                         runtime=vector.runtime, spec=spec)
        if vector.rejected:
            assert result.rejected
            continue
        assert result.state is not None
        assert expected_to_json(result.state) == vector.expect["state"], vector.id
        quotient, remainder = program.instructions[0].operands[:2]
        discarded += "null" in (quotient.file, remainder.file)
        both += quotient.file == remainder.file == "r"
    assert discarded and both


def test_two_null_destinations_leave_the_state_exact(spec: Spec) -> None:
    program = parse_program(["cs_5_0", "divmod null, null, r2.xyzw, r3.xyzw"], spec=spec)
    result = execute(program, state_from_json(WORDS), spec=spec)
    assert result.clauses == () and result.state is not None
    assert result.outcomes == (spec.model.outcome_names[0],)  # the exact outcome
    assert expected_to_json(result.state) == WORDS
