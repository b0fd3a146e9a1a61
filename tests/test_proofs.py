"""The theorems on the real spec, on deliberately broken copies of it, and the prove command."""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from spec_facts import STRUCTURED, one_per_shape, structured_address

from sm5.oracle.cli import prove as prove_cli
from sm5.oracle.errors import Sm5Error, SpecError
from sm5.oracle.model.clauses import classify, full_env
from sm5.oracle.model.spec import (
    Group,
    InstructionSpec,
    Spec,
    TargetOverride,
    default_root,
    load_default,
    load_spec,
)
from sm5.oracle.proofs import (
    DEFAULT_WORK,
    STATE_SUBJECT,
    STATE_THEOREMS,
    results_to_json,
    run_all,
)
from sm5.oracle.proofs.theorems.availability import availability
from sm5.oracle.proofs.theorems.base import TheoremResult
from sm5.oracle.proofs.theorems.state import element_files
from sm5.oracle.rulelang.rules import Value

SPEC = load_default()
U32 = 2**32


#: Instructions whose witnesses the tests below check by hand.
BY_HAND = ("store_structured", "imm_atomic_iadd")


@pytest.fixture(scope="module", params=["per-shape", pytest.param("whole", marks=pytest.mark.slow)])
def results(request: pytest.FixtureRequest) -> list[TheoremResult]:
    """The theorems of one instruction per shape, or (``slow``; ``sm5 pipeline`` too) of every
    instruction. Serial: pytest -n 2 already gives each core a worker."""
    return run_all(instructions=None if request.param == "whole"
                   else one_per_shape(SPEC, BY_HAND))


def test_worker_processes_give_the_serial_results() -> None:
    """Sharing the instructions out to processes changes nothing but the times."""
    names = ["bufinfo", "dmov", "sync"]
    serial = results_to_json(run_all(instructions=names))
    shared = results_to_json(run_all(instructions=names, jobs=2))
    for doc in (serial, shared):
        doc.pop("timings_ms")
        doc.pop("total_ms")
    assert serial == shared
    assert serial["counts"]["proved"] > 0


def by_name(results: list[TheoremResult]) -> dict[str, TheoremResult]:
    return {r.name: r for r in results}


def broken_spec(tmp_path: Path, old: str, new: str) -> Spec:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root)
    path = root / "shared" / "memory.yaml"  # the bounds clauses every memory instruction shares
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new), "utf-8")
    return load_spec(root)


# --------------------------------------------------------------------------------------------
# The real spec


def test_every_theorem_holds_on_the_spec(results: list[TheoremResult]) -> None:
    bad = [(r.name, r.status, r.detail) for r in results
           if r.status not in ("proved", "counterexample-as-expected")]
    assert not bad


def test_the_expected_theorems_exist(results: list[TheoremResult],
                                     request: pytest.FixtureRequest) -> None:
    names = set(by_name(results))
    proved = {r.instruction for r in results}
    whole = request.node.callspec.params["results"] == "whole"
    if whole:  # the flow-control instructions: one theorem each, their clauses' partition
        control = set(SPEC.control.instructions)
        assert proved == set(SPEC.instructions) | control | {STATE_SUBJECT}
        assert {f"{name}/clauses" for name in control} <= names
        # program state: three theorems per register file with elements
        assert {f"{STATE_SUBJECT}/{f.name}/{kind}" for f in element_files(SPEC.model)
                for kind, _ in STATE_THEOREMS} <= names
        proved -= control | {STATE_SUBJECT}
    else:
        assert proved == set(one_per_shape(SPEC, BY_HAND))
    assert len(proved) >= 10
    for instruction in (SPEC.instruction(name) for name in sorted(proved)):
        assert f"{instruction.name}/well_defined" in names
        assert f"{instruction.name}/outcomes" in names
        assert f"{instruction.name}/availability" in names
        assert f"{instruction.name}/agreement" in names
        for group in instruction.semantics.groups:
            assert f"{instruction.name}/partition/{group.id}" in names
    expected_wraps = {(i.name, g.id) for i in map(SPEC.instruction, proved)
                      for g in bounds_groups(i) if admits(i, g, STRUCTURED)}
    assert expected_wraps, "the spec has structured accesses"
    found = {(r.instruction, r.name.split("/")[2]) for r in results if r.kind == "offset_wrap"}
    assert found == expected_wraps
    for name, group_id in expected_wraps:
        for kind in ("naive_wrap_bytes", "naive_wrap_dwords", "offset_wrap"):
            assert by_name(results)[f"{name}/{kind}/{group_id}"].status == \
                "counterexample-as-expected"
    in_bounds = [(i.name, c.id) for i in map(SPEC.instruction, proved) for g in bounds_groups(i)
                 for c in g.clauses if "defined" in c.outcomes]
    assert in_bounds
    for name, clause in in_bounds:
        assert by_name(results)[f"{name}/in_bounds/{clause}"].status == "proved"


def bounds_groups(instruction: InstructionSpec) -> list[Group]:
    """Groups that decide a memory access, read from the spec: in an instruction with an
    address formula, a group with a ``defined`` clause and a clause that voids or skips memory."""
    if instruction.semantics.address is None:
        return []
    voiding = {"no_write", "resource_undefined", "tgsm_undefined"}
    return [g for g in instruction.semantics.groups
            if any("defined" in c.outcomes for c in g.clauses)
            and any(voiding & set(c.outcomes) for c in g.clauses)]


def admits(instruction: InstructionSpec, group: Group, kind: str) -> bool:
    """Some assignment of the enum inputs with this resource kind falls in the group's scope
    (an instruction without a ``kind`` input accesses the kinds its memory operand declares)."""
    enums = {i.name: i.values for i in instruction.semantics.inputs if i.type == "enum"}
    if "kind" in enums:
        enums["kind"] = (kind,)
    elif not any(kind in o.kinds for o in instruction.operands if o.role == "memory"):
        return False
    names = sorted(enums)
    return any(group.scope.holds(dict(zip(names, values, strict=True)))
               for values in itertools.product(*(enums[n] for n in names)))


def _parts(instruction: str, w: Mapping[str, Value]) -> tuple[int, int, int, int, int]:
    index_name, offset_name = structured_address(SPEC.instruction(instruction), w)
    index, offset = int(w[index_name]), int(w[offset_name])
    components = int(w.get("components", 1))
    return index, offset, components, int(w["stride"]), int(w["count"])


def test_witnesses_are_complete_concrete_and_fire_their_clauses(
        results: list[TheoremResult]) -> None:
    seen = 0
    for r in results:
        assert len(r.claims) == len(r.witnesses)
        if r.instruction == STATE_SUBJECT:  # element indices: 32-bit words and what they show
            rules = SPEC.model.element_index
            assert rules is not None
            for witness, claimed in zip(r.witnesses, r.claims, strict=True):
                seen += 1
                assert set(witness) <= set(rules.variables) and claimed
                assert all(isinstance(v, int) and 0 <= v <= 0xFFFFFFFF for v in witness.values())
                element = rules.element(int(witness["base"]), int(witness["offset"]))
                if "wraps" in claimed:
                    assert int(witness["base"]) + int(witness["offset"]) >= 1 << 32
                if "count" in witness:
                    inside = rules.inside(element, int(witness["count"]))
                    assert inside == ("in_range" in claimed) != ("past_end" in claimed)
            continue
        control = SPEC.control.instructions.get(r.instruction)
        if control is not None:  # a flow-control partition: a witness per clause
            for witness, claimed in zip(r.witnesses, r.claims, strict=True):
                seen += 1
                assert set(witness) == {v.name for v in SPEC.control.variables}
                [clause] = [c for c in control.clauses if (c.id,) == claimed]
                assert clause.when.holds(witness)
                assert SPEC.control.effects[control.effect].reach.holds(witness)
            continue
        instruction = SPEC.instruction(r.instruction)
        inputs = {i.name: i for i in instruction.semantics.inputs}
        for witness, claimed in zip(r.witnesses, r.claims, strict=True):
            seen += 1
            assert set(witness) == set(inputs)
            for name, value in witness.items():
                spec_input = inputs[name]
                if spec_input.type == "enum":
                    assert value in spec_input.values
                elif spec_input.type == "bool":
                    assert isinstance(value, bool)
                else:
                    assert isinstance(value, int) and not isinstance(value, bool)
                    # a signed word reads signed; every other number is a count or a pattern
                    assert value >= (-(1 << 31) if spec_input.type == "iword" else 0)
            assert int(witness.get("count", 0)) <= 8  # small states
            env = full_env(instruction.semantics, witness)
            assert len(claimed) == 1
            assert instruction.clause(claimed[0]).when.holds(env)
            # the executor's own classification agrees
            assert claimed[0] in {c.id for c in classify(instruction, witness)}
    assert seen >= 40


def test_naive_wraps_are_real_wraps_by_hand(results: list[TheoremResult]) -> None:
    for r in results:
        if r.kind not in ("naive_wrap_bytes", "naive_wrap_dwords", "offset_wrap"):
            continue
        for w in r.witnesses:
            index, offset, components, stride, count = _parts(r.instruction, w)
            address, end = stride * index + offset, stride * index + offset + 4 * components
            if r.kind == "naive_wrap_bytes":
                assert end > stride * count  # exact: out of bounds
                assert address % U32 + 4 * components <= stride * count  # naive: fits
            elif r.kind == "naive_wrap_dwords":
                assert end > stride * count
                assert (index * (stride // 4) + offset // 4) % U32 + components \
                    <= stride * count // 4
            else:
                assert index < count and offset + 4 * components > stride
                assert (offset + 4 * components) % U32 <= stride


def test_boundary_models_by_hand(results: list[TheoremResult]) -> None:
    table = by_name(results)
    wrap = table["store_structured/naive_wrap_bytes/uav_structured"].witnesses
    shape = {"size": 0, "file": "u", "kind": "structured"}
    # 16 * 0x10000000 = 2**32: the smallest index that wraps to address 0 at stride 16
    assert {"addr0": 0x10000000, "addr1": 0, "components": 1, "stride": 16, "count": 4,
            **shape} in wrap
    assert {"addr0": 0x40000000, "addr1": 0, "components": 1, "stride": 4, "count": 1,
            **shape} in wrap
    dwords = table["store_structured/naive_wrap_dwords/tgsm_structured"].witnesses
    # dword index 0x40000000 * (16 / 4) = 2**32
    assert {"addr0": 0x40000000, "addr1": 0, "components": 1, "stride": 16, "count": 4,
            **shape, "file": "g"} in dwords
    offsets = table["store_structured/offset_wrap/uav_structured"].witnesses
    assert {"addr0": 0, "addr1": 0xFFFFFFFC, "components": 1, "stride": 4, "count": 1,
            **shape} in offsets
    assert {"addr0": 0, "addr1": 0xFFFFFFF0, "components": 4, "stride": 4, "count": 1,
            **shape} in offsets
    atomic = table["imm_atomic_iadd/offset_wrap/tgsm_structured"].witnesses
    # the stray write is visible: the add changes the word it reaches
    assert any(w["addr1"] == 0xFFFFFFFC and w["kind"] == "structured" and w["file"] == "g"
               and w["value"] == 1 for w in atomic)


def test_results_json_is_deterministic_and_keeps_times_apart(
        results: list[TheoremResult]) -> None:
    again = run_all(instructions=["store_structured"])
    first = results_to_json([r for r in results if r.instruction == "store_structured"])
    second = results_to_json(again)
    assert first["theorems"] == second["theorems"]
    assert "seconds" not in json.dumps(first["theorems"])
    assert set(first["timings_ms"]) == {t["name"] for t in first["theorems"]}
    assert first["ok"] is True


# --------------------------------------------------------------------------------------------
# Broken copies of the spec


def test_overlapping_clauses_fail_the_partition(tmp_path: Path) -> None:
    spec = broken_spec(tmp_path, "addr1 + 4 * components <= stride and addr0 < count",
                       "addr1 + 4 * components <= stride and addr0 <= count")
    table = by_name(run_all(spec, instructions=["store_structured"]))
    failed = table["store_structured/partition/uav_structured"]
    assert failed.status == "failed"
    assert "store_structured.uav_structured.in_bounds" in failed.detail
    assert "store_structured.uav_structured.oob_index" in failed.detail
    witness = failed.witnesses[0]
    instruction = spec.instruction("store_structured")
    env = full_env(instruction.semantics, witness)
    assert instruction.clause("store_structured.uav_structured.in_bounds").when.holds(env)
    assert instruction.clause("store_structured.uav_structured.oob_index").when.holds(env)
    assert witness["addr0"] == witness["count"]  # the only overlap
    # ... and the widened clause writes past the resource
    widened = "store_structured/in_bounds/store_structured.uav_structured.in_bounds"
    assert table[widened].status == "failed"


def test_a_gap_fails_the_partition(tmp_path: Path) -> None:
    spec = broken_spec(tmp_path, "addr1 + 4 * components <= stride",
                       "addr1 + 4 * components < stride")
    table = by_name(run_all(spec, instructions=["store_structured"]))
    failed = table["store_structured/partition/uav_structured"]
    assert failed.status == "failed"
    assert "no clause" in failed.detail
    witness = failed.witnesses[0]
    instruction = spec.instruction("store_structured")
    env = full_env(instruction.semantics, witness)
    group = next(g for g in instruction.semantics.groups if g.id == "uav_structured")
    assert not any(c.when.holds(env) for c in group.clauses)
    assert int(witness["addr1"]) + 4 * int(witness["components"]) == witness["stride"]


def _edited_instruction(tmp_path: Path, name: str, old: str, new: str) -> Spec:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root)
    path = root / "instructions" / f"{name}.yaml"
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new), "utf-8")
    return load_spec(root)


def test_a_clause_that_can_never_fire_fails_the_partition(tmp_path: Path) -> None:
    # a wide product of factors that are both 0: no input reaches it
    spec = _edited_instruction(tmp_path, "imul", 'when: "sh != sl >> 31"',
                               'when: "sh != sl >> 31 and a == 0 and b == 0"')
    failed = by_name(run_all(spec, instructions=["imul"]))["imul/partition/product"]
    assert failed.status == "failed"
    assert failed.detail == "clause imul.product.wide can never fire inside group product"


def test_a_clause_the_simplest_inputs_miss_is_found_by_the_search(tmp_path: Path) -> None:
    # a group on the - modifiers: neither all-zero nor all-lowest inputs negate both sources,
    # so the search must find "both" reachable
    group = ("    - id: negation\n"
             "      scope: \"True\"\n"
             "      text: \"Whether both sources are negated.\"\n"
             "      clauses:\n"
             "        - id: negation.both\n"
             "          when: \"neg0 and neg1\"\n"
             "          outcomes: [defined]\n"
             "          text: \"Both sources carry -.\"\n"
             "          source: {ref: fs, section: \"22.12.6 imul\"}\n"
             "        - id: negation.not_both\n"
             "          when: \"not (neg0 and neg1)\"\n"
             "          outcomes: [defined]\n"
             "          text: \"At most one source carries -.\"\n"
             "          source: {ref: fs, section: \"22.12.6 imul\"}\n")
    spec = _edited_instruction(tmp_path, "imul", "  groups:\n", "  groups:\n" + group)
    result = by_name(run_all(spec, instructions=["imul"]))["imul/partition/negation"]
    assert result.status == "proved", result
    assert result.detail.startswith("2 clauses")


def test_multiplier_partitions_take_little_work() -> None:
    # a product that fits 32 bits is reached by the all-zero inputs, not by a search whose
    # cost depended on what the process had checked before (it once ran past the budget)
    table = by_name(run_all(instructions=["imul", "umul", "imad", "umad"]))
    for name in ("imul", "umul", "imad", "umad"):
        assert table[f"{name}/partition/product"].status == "proved"
        assert table[f"{name}/partition/product"].work < DEFAULT_WORK // 100


def test_defined_with_a_memory_outcome_fails_outcome_consistency(tmp_path: Path) -> None:
    spec = broken_spec(tmp_path, "write: [no_write]", "write: [defined, no_write]")
    table = by_name(run_all(spec, instructions=["store_structured"]))
    assert table["store_structured/outcomes"].status == "failed"
    assert "store_structured.uav_structured.oob_index" in table["store_structured/outcomes"].detail


def test_word_results_exist_for_every_lane_less_result_and_counter(
        results: list[TheoremResult]) -> None:
    table = by_name(results)
    names = {r.instruction for r in results} - set(SPEC.control.instructions) - {STATE_SUBJECT}
    for instruction in map(SPEC.instruction, sorted(names)):
        sem = instruction.semantics
        writes_word = (sem.result is not None and sem.lanes is None) or sem.counter is not None
        name = f"{instruction.name}/word_results"
        assert (name in table) == writes_word, name
        if writes_word:
            assert table[name].status == "proved"


def test_a_counter_that_does_not_wrap_fails_word_results(tmp_path: Path) -> None:
    counted = [i for i in SPEC.instructions.values() if i.semantics.counter is not None]
    assert counted, "the spec has hidden-counter instructions"
    name = counted[0].name
    value = counted[0].semantics.counter.value  # type: ignore[union-attr]
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root)
    path = root / "instructions" / f"{name}.yaml"
    text = path.read_text("utf-8")
    # Drop the modulo from the counter's new value: it can leave 32 bits.
    start = text.index(f"- {{name: {value}, expr: \"") + len(f"- {{name: {value}, expr: \"")
    end = text.index("\"", start)
    expr = text[start:end]
    assert expr.endswith(" % 4294967296"), expr
    path.write_text(text[:start] + expr[:-len(" % 4294967296")] + text[end:], "utf-8")
    table = by_name(run_all(load_spec(root), instructions=[name]))
    assert table[f"{name}/word_results"].status == "failed"
    assert "leaves 32 bits" in table[f"{name}/word_results"].detail


def test_conflicting_availability_rows_fail() -> None:
    instruction = SPEC.instruction("store_structured")
    row = instruction.availability.targets[0]
    twice = TargetOverride(row.target, not row.supported, row.source, None)
    conflicting = replace(instruction, availability=replace(
        instruction.availability, targets=(*instruction.availability.targets, twice)))
    found = availability(conflicting, SPEC.model)
    assert found.status == "failed" and row.target in found.detail
    no_models = replace(instruction, availability=replace(instruction.availability, models=()))
    found = availability(no_models, SPEC.model)
    assert found.status == "failed" and "no model row" in found.detail


def test_a_spent_budget_is_a_timeout_not_a_crash() -> None:
    results = run_all(work=1, instructions=["store_structured"])
    assert {r.status for r in results} <= {"timeout", "proved"}
    assert sum(r.status == "timeout" for r in results) >= len(results) - 2


# --------------------------------------------------------------------------------------------
# The command


def _prove(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    prove_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["prove", *argv])
    code: int = args.handler(args)
    return code


def test_prove_command_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proofs.json"
    assert _prove(["--instruction", "dmovc", "--json", str(out)]) == 0
    document = json.loads(out.read_text("utf-8"))
    assert document["ok"] is True and document["format"] == "sm5-proofs/1"
    assert {t["instruction"] for t in document["theorems"]} == {"dmovc"}
    assert "dmovc/partition/value" in capsys.readouterr().out


def test_prove_command_fails_on_a_broken_spec(tmp_path: Path) -> None:
    spec = broken_spec(tmp_path, "addr1 + 4 * components <= stride",
                       "addr1 + 4 * components < stride")
    del spec
    assert _prove(["--spec", str(tmp_path / "spec"), "--instruction", "store_structured"]) == 1


def test_prove_command_rejects_an_unknown_instruction() -> None:
    with pytest.raises(SpecError, match="unknown instruction"):
        _prove(["--instruction", "no_such_instruction"])


@pytest.mark.parametrize(("argv", "message"), [
    (["--work", "0"], "--work must be positive, not 0"),
    (["--timeout-ms", "-5"], "--timeout-ms must be positive, not -5"),
])
def test_prove_command_rejects_a_budget_that_is_not_positive(argv: list[str],
                                                              message: str) -> None:
    with pytest.raises(Sm5Error, match=message):
        _prove(["--instruction", "dmovc", *argv])


def test_a_theorem_that_needs_more_work_is_a_timeout_naming_the_budget() -> None:
    results = run_all(work=20_000, instructions=["store_structured"])
    spent = [r for r in results if r.status == "timeout"]
    assert spent and all("20,000 z3 work units" in r.detail for r in spent)
    assert all(r.work > 0 for r in spent)


# --------------------------------------------------------------------------------------------
# Identities


def test_the_identities_the_integer_alu_is_pinned_by_are_proved() -> None:
    table = by_name(run_all(instructions=["ubfe", "bfi", "udiv", "umul"]))
    for name in ("ubfe/identity/shift_mask", "ubfe/identity/cut_at_bit_31",
                 "bfi/identity/masked_bits", "udiv/identity/division", "umul/identity/product"):
        assert table[name].status == "proved", table[name]
    assert "b != 0" in table["udiv/identity/division"].detail


def test_a_broken_identity_fails_with_a_counterexample_the_evaluator_confirms(
        tmp_path: Path) -> None:
    # the quotient and the remainder swapped in the identity: false for 7 / 2 (3 * 2 + 1)
    spec = _edited_instruction(tmp_path, "udiv", "exact(quot) * exact(b) + exact(rem)",
                               "exact(rem) * exact(b) + exact(quot)")
    failed = by_name(run_all(spec, instructions=["udiv"]))["udiv/identity/division"]
    assert failed.status == "failed"
    (witness,) = failed.witnesses
    a, b = int(witness["a"]), int(witness["b"])
    assert b != 0 and (a % b) * b + a // b != a  # worked out here, not by the oracle
    assert "Python evaluator: broken too" in failed.detail


def test_an_identity_whose_where_never_holds_fails(tmp_path: Path) -> None:
    spec = _edited_instruction(tmp_path, "udiv", 'where: "b != 0"', 'where: "b != b"')
    failed = by_name(run_all(spec, instructions=["udiv"]))["udiv/identity/division"]
    assert failed.status == "failed"
    assert "no input meets its where (b != b)" in failed.detail


@pytest.mark.parametrize(("old", "new", "message"), [
    ('holds: "exact(quot)', 'holds: "exact(nothing)', "nothing"),
    ('holds: "exact(quot) * exact(b) + exact(rem) == exact(a) and rem < b"', 'holds: "quot"',
     "holds is a uword, expected a condition"),
])
def test_a_malformed_identity_is_refused_when_the_spec_loads(tmp_path: Path, old: str, new: str,
                                                             message: str) -> None:
    with pytest.raises(SpecError) as info:
        _edited_instruction(tmp_path, "udiv", old, new)
    assert message in str(info.value)
    assert "udiv.yaml" in str(info.value)
