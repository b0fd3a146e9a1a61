"""Every clause of spec/instructions/*.yaml, checked against values worked out by hand.

The cases are data (``tests/hand/<instruction>.yaml``, schema ``tests/hand/hand.schema.json``):
a program, a state and a (target, runtime) with the outcomes, clause ids and final state written
out literally, each citing the sentence it rests on. The expectations come from the sources,
never from running the oracle; here the oracle runs each case and must agree. The meta-tests
read the clause ids from the spec and fail if a clause has no hand case or a case names a clause
the spec does not have. ``tests/hand/program_state.yaml`` holds whole programs about program state
(declarations, x#, cb#, icb, thread ids): no clauses, and a case breaking each of its rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hand_cases import (
    HAND_DIR,
    PENDING_DIR,
    HandCase,
    HandFileError,
    hand_files,
    load_all,
    load_file,
)

from sm5.oracle.asm import parse_program
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import CONSTANT_FILE, expected_to_json, state_from_json
from sm5.oracle.model.spec import Spec, load_default

SPEC = load_default()
LOADED = load_all(SPEC)
CASES = LOADED.cases


def spec_clause_ids(spec: Spec) -> set[str]:
    """Every clause of the spec: the instructions' and the flow-control instructions'."""
    return ({c.id for i in spec.instructions.values() for g in i.semantics.groups
             for c in g.clauses}
            | {c.id for i in spec.control.instructions.values() for c in i.clauses})


@pytest.mark.parametrize("path", hand_files(), ids=lambda p: p.stem)
def test_hand_file_is_well_formed(path: Path) -> None:
    """Schema, unique names, and agreement with the spec: every clause id, rule id, target,
    runtime and source ref a case names is the spec's (load_file checks them)."""
    error = LOADED.errors.get(path)
    if error is not None:
        pytest.fail(str(error), pytrace=False)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hand_case(case: HandCase) -> None:
    program = parse_program(list(case.program))
    state = state_from_json(dict(case.state))
    result = execute(program, state, target=case.target, runtime=case.runtime, spec=SPEC)
    if case.rule is not None:
        assert result.rule == case.rule, f"{case.where}: {case.cite}"
        assert result.outcomes == ("rejected",)
        return
    assert result.rule is None, f"{case.where}: rejected by {result.rule}: {case.cite}"
    assert result.outcomes == case.outcomes, f"{case.where}: {case.cite}"
    # The clauses of the file's instruction (a program's other instructions fire their own; a
    # program-state case is about declarations, which have none).
    prefix = case.own_clause_prefix
    own = sorted(c for c in result.clauses if prefix is not None and c.startswith(prefix))
    assert own == sorted(case.clauses), f"{case.where}: {case.cite}"
    assert result.state is not None
    assert expected_to_json(result.state) == case.expect_state, f"{case.where}: {case.cite}"


def test_every_instruction_has_a_hand_file() -> None:
    have = {path.stem for path in hand_files()}
    assert sorted(set(SPEC.instructions) - have) == []
    assert sorted(set(SPEC.control.instructions) - have) == []


def test_every_flow_control_rule_has_a_hand_case() -> None:
    """The structure rules and the flow-control instructions' generated rules: each is broken
    by a hand case."""
    rules = {r.id for r in SPEC.control_rules}
    covered = {case.rule for case in CASES if case.rule is not None}
    assert sorted(rules - covered) == []


#: The rules of program state the brief of tests/hand/program_state.yaml lists: the spec must
#: still have each (a renamed rule fails here), and the derived set below must hold them.
PROGRAM_STATE_RULES = frozenset({
    "dcl_temps.legal.total", "dcl_indexable_temp.legal.components",
    "dcl_constant_buffer.legal.slot", "dcl_constant_buffer.legal.elements",
    "dcl_immediate_constant_buffer.legal.elements", "dcl_thread_group.legal.compute_only",
    "dcl_thread_group.legal.limits_5_0", "dcl_thread_group.legal.limits_4_x",
    "program.undeclared_register", "program.relative_index", "program.dynamic_index_immediate",
    "program.input_component",
})


def program_state_rule_ids(spec: Spec) -> set[str]:
    """The rules of program state: every program rule (spec/declarations.yaml program_rules),
    and every declaration rule of the declarations that declare no memory resource (u#, g#,
    t#): dcl_temps, dcl_indexableTemp, dcl_constantBuffer, dcl_immediateConstantBuffer,
    dcl_thread_group, dcl_input, dcl_globalFlags."""
    memory = spec.model.resource_files - {CONSTANT_FILE}
    state_declarations = {name for name, d in spec.declarations.declarations.items()
                          if not set(d.registers) & memory}
    return ({r.id for r in spec.declarations.program_rules}
            | {r.id for r in spec.legality_rules()
               if r.check == "declaration" and r.applies
               and set(r.applies) <= state_declarations})


def test_every_program_state_rule_has_a_hand_case() -> None:
    """Each rule of program state is broken by a case of a program-state file (and the rules
    the file was written for are all among them)."""
    rules = program_state_rule_ids(SPEC)
    assert sorted(PROGRAM_STATE_RULES - rules) == []
    covered = {case.rule for case in CASES if case.rule is not None and case.instruction is None}
    assert sorted(rules - covered) == []


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_every_spec_clause_has_a_hand_case() -> None:
    known = spec_clause_ids(SPEC)
    assert known, "no clause ids found in the spec"
    covered = {cid for case in CASES for cid in case.clauses}
    assert sorted(known - covered) == []


def test_pending_files_are_well_formed() -> None:
    """Cases of instructions the spec does not have yet: the schema and the checks that do not
    need the spec (they are not executed)."""
    for path in hand_files(PENDING_DIR):
        try:
            load_file(path)
        except HandFileError as exc:
            pytest.fail(str(exc), pytrace=False)


# ------------------------------------------------------------------------------------------------
# A malformed hand file: one clear error naming the file and the case

GOOD_CASE = """\
  - name: ok_case
    clauses: [imm_atomic_iadd.invocation.active, imm_atomic_iadd.uav_raw.in_bounds,
              imm_atomic_iadd.result.no_carry]
    source:
      - {ref: seed-004, section: Remarks, quote: "It is insensitive to sign."}
    program: [dcl_uav_raw u0, "imm_atomic_iadd r0.x, u0, l(0), l(1)"]
    target: cs_5_0
    runtime: "11.0"
    state: {r0: [0, 0, 0, 0], u0: {kind: raw, data: [1]}}
    expect:
      outcomes: [defined]
      state: {r0: [1, 0, 0, 0], u0: {kind: raw, data: [2]}}
"""


def write_hand(tmp_path: Path, body: str, name: str = "imm_atomic_iadd") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"instruction: imm_atomic_iadd\ncases:\n{GOOD_CASE}{body}", encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    with pytest.raises(HandFileError) as info:
        load_file(path, SPEC)
    return str(info.value)


def test_good_case_loads(tmp_path: Path) -> None:
    [case] = load_file(write_hand(tmp_path, ""), SPEC)
    assert case.name == "ok_case"
    assert case.line == 3
    assert case.expect_state == {"r0": [1, 0, 0, 0], "u0": {"kind": "raw", "data": [2]}}


def test_schema_error_names_file_case_and_field(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "bad_word").replace("data: [2]", "data: [-2]")
    message = load_error(write_hand(tmp_path, bad))
    assert "imm_atomic_iadd.yaml:15 case #2 'bad_word'" in message
    assert "expect" in message


def test_unknown_field_is_an_error(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "extra").replace("    target:", "    tagret: cs_5_0\n"
                                                        "    target:")
    message = load_error(write_hand(tmp_path, bad))
    assert "case #2 'extra'" in message and "tagret" in message


def test_rejected_case_takes_no_clauses(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "rej").replace(
        "      outcomes: [defined]\n      state: {r0: [1, 0, 0, 0], u0: {kind: raw, data: [2]}}",
        "      outcomes: [rejected]\n      rule: imm_atomic_iadd.availability.target")
    assert "case #2 'rej'" in load_error(write_hand(tmp_path, bad))


def test_citation_needs_a_quote_or_a_paraphrase(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "nocite").replace(', quote: "It is insensitive to sign."',
                                                         "")
    message = load_error(write_hand(tmp_path, bad))
    assert "case #2 'nocite'" in message and "source[0]" in message


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    message = load_error(write_hand(tmp_path, "  - name: [unclosed\n"))
    assert "imm_atomic_iadd.yaml:16" in message and "YAML syntax error" in message


def test_duplicate_case_name(tmp_path: Path) -> None:
    message = load_error(write_hand(tmp_path, GOOD_CASE))
    assert "case 'ok_case'" in message and "duplicate case name" in message


def test_unknown_clause_id(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "typo").replace("result.no_carry", "result.no_cary")
    message = load_error(write_hand(tmp_path, bad))
    assert "case 'typo'" in message and "imm_atomic_iadd.result.no_cary" in message


def test_clause_of_another_instruction(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "foreign").replace("imm_atomic_iadd.result.no_carry",
                                                          "store_structured.uav.in_bounds")
    message = load_error(write_hand(tmp_path, bad))
    assert "case 'foreign'" in message and "store_structured.uav.in_bounds" in message


def test_unknown_source_ref(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "badref").replace("ref: seed-004", "ref: seed-999")
    message = load_error(write_hand(tmp_path, bad))
    assert "case 'badref'" in message and "seed-999" in message


def test_unknown_target(tmp_path: Path) -> None:
    bad = GOOD_CASE.replace("ok_case", "badtarget").replace("cs_5_0", "cs_9_9")
    message = load_error(write_hand(tmp_path, bad))
    assert "case 'badtarget'" in message and "cs_9_9" in message


def test_file_named_after_another_instruction(tmp_path: Path) -> None:
    message = load_error(write_hand(tmp_path, "", name="dmovc"))
    assert "dmovc.yaml" in message and "imm_atomic_iadd.yaml" in message


def test_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("- just a list\n", encoding="utf-8")
    assert str(path) in load_error(path)


def test_one_malformed_file_does_not_hide_the_others(tmp_path: Path) -> None:
    write_hand(tmp_path, "  - name: [unclosed\n")
    (tmp_path / "store_structured.yaml").write_text(
        (HAND_DIR / "store_structured.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    loaded = load_all(SPEC, tmp_path)
    assert list(loaded.errors) == [tmp_path / "imm_atomic_iadd.yaml"]
    assert {c.instruction for c in loaded.cases} == {"store_structured"}


def test_pending_folder_is_not_loaded(tmp_path: Path) -> None:
    (tmp_path / "pending").mkdir()
    write_hand(tmp_path / "pending", "  - name: [unclosed\n")
    assert load_all(SPEC, tmp_path) == load_all(SPEC, tmp_path / "empty")


SUBJECT_CASE = """\
subject: program_state
cases:
  - name: ok_state
    clauses: []
    source:
      - {ref: fs, section: "7.3", paraphrase: "an x# element can be used wherever an r# can"}
    program: ["dcl_indexableTemp x0[1], 4", "mov r0.x, x0[0].x"]
    target: cs_5_0
    runtime: "11.0"
    state: {r0: [0, 0, 0, 0]}
    expect:
      outcomes: [defined]
      state: {r0: [null, 0, 0, 0]}
"""


def test_subject_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "program_state.yaml"
    path.write_text(SUBJECT_CASE, encoding="utf-8")
    [case] = load_file(path, SPEC)
    assert (case.subject, case.instruction, case.clauses) == ("program_state", None, ())
    assert case.own_clause_prefix is None


def test_subject_case_names_no_clause(tmp_path: Path) -> None:
    path = tmp_path / "program_state.yaml"
    path.write_text(SUBJECT_CASE.replace("clauses: []", "clauses: [mov.move.bits]"),
                    encoding="utf-8")
    message = load_error(path)
    assert "case #1 'ok_state'" in message and "clauses" in message


def test_subject_case_still_lists_its_clauses(tmp_path: Path) -> None:
    path = tmp_path / "program_state.yaml"
    path.write_text(SUBJECT_CASE.replace("    clauses: []\n", ""), encoding="utf-8")
    assert "case #1 'ok_state'" in load_error(path)


def test_file_takes_instruction_or_subject(tmp_path: Path) -> None:
    path = tmp_path / "program_state.yaml"
    path.write_text("instruction: mov\n" + SUBJECT_CASE, encoding="utf-8")
    assert "exactly one of instruction and subject" in load_error(path)


def test_file_without_instruction_or_subject(tmp_path: Path) -> None:
    path = tmp_path / "program_state.yaml"
    path.write_text(SUBJECT_CASE.replace("subject: program_state\n", ""), encoding="utf-8")
    assert "expected instruction (or subject)" in load_error(path)
