"""``sm5 spec check``: passes on the real spec, and on a broken copy fails with one clear line.

The summary counts are recomputed from the YAML files. The broken copies are made with
shutil.copytree and a single edit each; the message must name the file and the problem (and the
line and column for YAML syntax, the clause and the offending text for a forbidden rule). Two
hypothesis fuzz tests feed arbitrary and mutated documents to the loader: it may only ever raise
``SpecError``, with a location.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sm5.cli import main
from sm5.oracle.errors import SpecError
from sm5.oracle.model.spec import instruction_document, load_spec

SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"
FUZZ_EXAMPLES = int(os.environ.get("SM5_FUZZ_EXAMPLES", "2000"))
SUMMARY = re.compile(r"^spec (\S+): (\d+) instructions, (\d+) clauses, (\d+) errata, "
                     r"(\d+) legality rules, (\d+) targets$")


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------
# The summary, recomputed from the files


def _table_rule_count(doc: dict[str, Any], model: dict[str, Any]) -> int:
    """Rules the operand and availability tables of one instruction call for."""
    count = 0
    for op in doc["operands"]:
        count += 1  # file
        file_stages = {f["name"]: set(f["stages"]) for f in model["register_files"]}
        all_stages = {s["name"] for s in model["stages"]}
        count += any(all_stages - file_stages[f] for f in op["files"])  # file exists in stage
        possible = {k["kind"] for k in model["resource_kinds"] if k["file"] in op["files"]}
        count += bool(op.get("kinds")) and bool(possible - set(op["kinds"]))
        count += bool(op.get("masks")) + bool(op.get("swizzles"))
        count += op["role"] == "src" and bool({"neg", "abs"} - set(op["modifiers"]))
    count += not doc["saturate"]
    avail = doc["availability"]
    prefix = {s["name"]: s["prefix"] for s in model["stages"]}
    overrides = {t["target"]: t["supported"] for t in avail["targets"]}
    by_model = {m["model"]: m["supported"] for m in avail["models"]}
    unsupported = [
        name for m in model["shader_models"] for stage in m["stages"]
        if overrides.get(name := f"{prefix[stage]}_{m['model'] // 10}_{m['model'] % 10}",
                         by_model.get(m["model"])) is False]
    count += bool(unsupported)
    all_stages = {s["name"] for s in model["stages"]}
    count += any(all_stages - set(row["stages"]) for row in avail["runtimes"])
    return count


def expected_summary() -> str:
    model = _yaml(SPEC_DIR / "model.yaml")
    declarations = _yaml(SPEC_DIR / "declarations.yaml")
    docs = [instruction_document(SPEC_DIR, p)
            for p in sorted((SPEC_DIR / "instructions").glob("*.yaml"))]
    clauses = sum(len(g["clauses"]) for d in docs for g in d["semantics"]["groups"])
    errata = sum(len(d.get("errata", [])) for d in docs)
    rules = sum(len(d.get("rules", [])) + _table_rule_count(d, model) for d in docs) \
        + len(declarations["rules"]) + len(declarations["program_rules"])
    # flow control: the structure rules, and per instruction a stage rule where it lacks a
    # stage and an operand rule where it has an operand other than a label
    control = [_yaml(p) for p in sorted((SPEC_DIR / "control").glob("*.yaml"))]
    all_stages = {s["name"] for s in model["stages"]}
    rules += len(_yaml(SPEC_DIR / "control.yaml")["rules"])
    rules += sum((set(c["stages"]) != all_stages)
                 + any(o["role"] != "label" for o in c["operands"]) for c in control)
    targets = sum(len(m["stages"]) for m in model["shader_models"])
    return (f"spec {model['spec_version']}: {len(docs)} instructions, {clauses} clauses, "
            f"{errata} errata, {rules} legality rules, {targets} targets")


def test_check_passes_on_the_real_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "check"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert err == ""
    assert SUMMARY.match(lines[0]), lines[0]
    assert lines[0] == expected_summary()
    assert lines[-1] == "ok"
    names = [p.stem for p in sorted((SPEC_DIR / "instructions").glob("*.yaml"))]
    for name in names:
        assert any(line.split()[0] == name for line in lines[1:-1]), name


@pytest.mark.slow  # long tier (docs/testing.md)
def test_check_accepts_an_explicit_spec_folder(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    shutil.copytree(SPEC_DIR, tmp_path / "spec")
    assert main(["spec", "check", "--spec", str(tmp_path / "spec")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == expected_summary()


@pytest.mark.slow  # long tier (docs/testing.md)
def test_module_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "sm5", "spec", "check"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == expected_summary()
    assert done.stdout.splitlines()[-1] == "ok"


def test_module_entry_point_bad_spec(tmp_path: Path) -> None:
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    (root / "model.yaml").write_text("spec_version: [\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sm5", "spec", "check", "--spec", str(root)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "model.yaml" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------------------------------------
# Broken copies: exit 2, one line naming the file and the problem


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, root)
    return root


def check_fails(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the check on ``root``; it must exit 2 with exactly one line on stderr."""
    assert main(["spec", "check", "--spec", str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sm5: error: ")
    return lines[0]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


DMOVC_SRC1_WHEN = 'when: "cond != 0"'


def test_missing_field(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_copy / "instructions" / "dmovc.yaml"
    text = path.read_text(encoding="utf-8")
    trimmed = re.sub(r"^summary: >-\n(?:  .*\n)+", "", text, count=1, flags=re.MULTILINE)
    assert trimmed != text
    path.write_text(trimmed, encoding="utf-8")
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line and "'summary' is a required property" in line


def test_unknown_field(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_copy / "instructions" / "dmovc.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "colour: red\n", encoding="utf-8")
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line and "'colour' was unexpected" in line


def test_yaml_syntax_error_names_line_and_column(spec_copy: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_copy / "instructions" / "dmovc.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("    files: [r]\n")
    lines[at] = "    files: [r\n"  # the bracket is never closed
    path.write_text("".join(lines), encoding="utf-8")
    # Inside the open flow sequence the scalar 'r' runs on into the next line ('r selection');
    # the parser stops at that line's ':' where it wanted ',' or ']'.
    row, column = at + 2, lines[at + 1].index(":") + 1
    line = check_fails(spec_copy, capsys)
    assert f"dmovc.yaml:{row}:{column}:" in line
    assert "YAML syntax error" in line and "']'" in line


def test_duplicate_key(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_copy / "instructions" / "dmovc.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("family: double\n")
    lines.insert(at + 1, "family: double\n")
    path.write_text("".join(lines), encoding="utf-8")
    line = check_fails(spec_copy, capsys)
    assert f"dmovc.yaml:{at + 2}:1:" in line and "duplicate key 'family'" in line


@pytest.mark.parametrize(("when", "offending"), [
    ("__import__('os')", "__import__('os')"),
    ("a.b", "a.b"),
    ("(lambda: 1)() == 1", "lambda"),
    ("cond in [c for c in (1, 2)]", "[c for c in (1, 2)]"),
])
def test_forbidden_expression_in_a_clause(spec_copy: Path, capsys: pytest.CaptureFixture[str],
                                          when: str, offending: str) -> None:
    edit(spec_copy / "instructions" / "dmovc.yaml", DMOVC_SRC1_WHEN, f'when: "{when}"')
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line
    assert "dmovc.select.src1" in line
    assert offending in line


def test_unknown_variable_in_a_clause(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(spec_copy / "instructions" / "dmovc.yaml", DMOVC_SRC1_WHEN, 'when: "condition != 0"')
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line and "dmovc.select.src1" in line and "condition" in line


def test_unknown_source_ref(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_copy / "instructions" / "dmovc.yaml"
    edit(path, 'source: {ref: seed-002, section: "dest: if src0',
         'source: {ref: seed-999, section: "dest: if src0')
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line and "'seed-999'" in line


def test_unknown_target_row(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """hs_4_1 matches the schema's pattern but Shader Model 4.1 has no hull stage."""
    edit(spec_copy / "instructions" / "store_structured.yaml", "- target: cs_4_1",
         "- target: hs_4_1")
    line = check_fails(spec_copy, capsys)
    assert "store_structured.yaml" in line and "hs_4_1" in line


def test_empty_instruction_file(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (spec_copy / "instructions" / "dmovc.yaml").write_text("", encoding="utf-8")
    line = check_fails(spec_copy, capsys)
    assert "dmovc.yaml" in line


def test_missing_model_file(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (spec_copy / "model.yaml").unlink()
    line = check_fails(spec_copy, capsys)
    assert "model.yaml" in line and "missing" in line


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("extends: imm_atomic", "extends: imm_atomics", "unknown template 'imm_atomics'"),
    ('kernel: "(old + value) % 4294967296"', 'kernel: "(old + nosuch) % 4294967296"',
     "unknown variable(s) nosuch"),
    ("    clauses:\n      uav_raw.out_of_bounds:", "    clauses:\n      uav_raw.gone:",
     "semantics.memory.clauses: no shared clause uav_raw.gone"),
    ('requires: ["*.in_bounds"]', "requires: 5",
     "field semantics.groups[6].requires: 5 is not of type 'array'"),
    ("  memory:\n    kernel:", "  memory:\n    mode: scribble\n    kernel:",
     "semantics.memory.mode: 'scribble' is not one of read, write, rmw, rmw_return"),
])
def test_broken_reference_to_shared_definitions(spec_copy: Path, capsys: pytest.CaptureFixture[str],
                                                old: str, new: str, expected: str) -> None:
    path = spec_copy / "instructions" / "imm_atomic_iadd.yaml"
    _edit(path, old, new)
    line = check_fails(spec_copy, capsys)
    assert "imm_atomic_iadd.yaml" in line and expected in line, line


def test_broken_shared_memory_definition(spec_copy: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _edit(spec_copy / "shared" / "memory.yaml", "  - id: uav_raw\n    file: u\n",
          "  - id: uav_raw\n    file: u\n    colour: red\n")
    line = check_fails(spec_copy, capsys)
    assert "memory.yaml" in line and "colour" in line, line


def test_binding_to_an_unknown_operand(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(spec_copy / "templates" / "atomic.yaml", "from: {operand: src0}", "from: {operand: src9}")
    line = check_fails(spec_copy, capsys)
    assert "no operand named 'src9'" in line, line


# ------------------------------------------------------------------------------------------------
# Fuzz: the loader raises SpecError with a location, and nothing else

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                    st.sampled_from(["name", "x", "when", "cond != 0", "seed-002", "u", "r"]))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.text(max_size=10), st.integers(),
                                                      st.booleans()), inner, max_size=4)),
    max_leaves=20)
utf8_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of spec/ whose instructions/ holds only the fuzzed x.yaml.

    The real instruction files are loaded before x.yaml and do not depend on it; leaving them
    out keeps each example at the cost of model, declarations and one instruction file.
    """
    root = tmp_path_factory.mktemp("fuzz") / "spec"
    shutil.copytree(SPEC_DIR, root)
    for path in (root / "instructions").glob("*.yaml"):
        path.unlink()
    yield root


def assert_only_spec_errors(root: Path) -> None:
    try:
        load_spec(root)
    except SpecError as exc:
        assert exc.where, f"SpecError without a location: {exc.message}"
        assert exc.message


@pytest.mark.slow  # minutes: 2,000 documents through the whole loader
@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    documents.map(lambda d: yaml.safe_dump(d, sort_keys=False)),
    utf8_text,
    st.binary(max_size=100),
))
@example("? [1]\n: 2\n")
@example("&x {a: *x}\n")
@example("a: &x [*x]\n")
@example("\x00")
@example(b"\xff\xfe")
@example("!!python/object:os.system\n")
@example("name: x\n" * 2)
def test_fuzz_arbitrary_documents(fuzz_root: Path, content: str | bytes) -> None:
    path = fuzz_root / "instructions" / "x.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    assert_only_spec_errors(fuzz_root)


# Mutations of the real dmovc.yaml reach past the schema into rule parsing and cross-checks.

DMOVC_DOC = _yaml(SPEC_DIR / "instructions" / "dmovc.yaml")
RULE_SNIPPETS = ["cond != 0", "cond !=", "x.y", "unknown == 1", "1 // 0", "min(cond)",
                 "cond in (1, 2) == True", "sat and nan", "", "dmovc.erratum.lost_subject",
                 "seed-999", "fs", "hs_4_1", "cs_4_0", "11.2", "dmovc.select.src1"]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


DMOVC_PATHS = [p for p in _paths(DMOVC_DOC) if p]


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


STRING_POOL = sorted({*RULE_SNIPPETS, *_strings(DMOVC_DOC)})


def _similar(draw: st.DrawFn, old: Any) -> Any:
    """A value of the same shape as ``old``, so most mutants get past the schema."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw(st.one_of(st.integers(-2, 3000), st.sampled_from([0, 2047, 2048])))
    if isinstance(old, str):
        return draw(st.sampled_from(STRING_POOL))
    if isinstance(old, list) and old:
        shuffled = draw(st.permutations(old))
        return shuffled + shuffled[:draw(st.integers(0, 1))]  # maybe a duplicate
    return draw(documents)


@st.composite
def mutated_dmovc(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(DMOVC_DOC)
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(DMOVC_PATHS))
        parent = doc
        try:
            for part in path[:-1]:
                parent = parent[part]
            old = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced this path
        action = draw(st.sampled_from(["delete", "similar", "similar", "similar", "similar",
                                       "any"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "similar":
            parent[path[-1]] = _similar(draw, old)
        else:
            parent[path[-1]] = draw(documents)
    return doc


@pytest.fixture(scope="module")
def mutation_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The spec with dmovc and the instructions the harness is made of (every example loads
    the whole folder: 48 instruction files would make this test minutes long)."""
    root = tmp_path_factory.mktemp("mutate") / "spec"
    shutil.copytree(SPEC_DIR, root)
    auxiliary = yaml.safe_load((root / "auxiliary.yaml").read_text("utf-8"))
    keep = {"dmovc", *auxiliary["harness"].values()}
    for path in (root / "instructions").glob("*.yaml"):
        if path.stem not in keep:
            path.unlink()
    load_spec(root)  # the trimmed folder is a valid spec
    yield root


@settings(max_examples=max(20, FUZZ_EXAMPLES // 40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated_dmovc())
def test_fuzz_mutated_instruction(mutation_root: Path, doc: Any) -> None:
    path = mutation_root / "instructions" / "dmovc.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert_only_spec_errors(mutation_root)


@pytest.mark.parametrize(("old", "new", "message"), [
    # an f64 form on dtof's 32-bit lanes
    ("accept: f32_nan", "accept: f64_nan", "acceptance form f64_nan does not fit"),
    # one_of without its values, and values without one_of
    ('          accept_values: ["r & 2147483648"]\n', "",
     "accept_values goes with a form that lists values (f32_range, one_of)"),
    ("accept: one_of\n          accept_values: [\"r & 2147483648\"]",
     "accept_values: [\"r & 2147483648\"]",
     "accept_values goes with a form that lists values (f32_range, one_of)"),
])
def test_acceptance_form_must_fit_the_clause(spec_copy: Path, capsys: pytest.CaptureFixture[str],
                                             old: str, new: str, message: str) -> None:
    edit(spec_copy / "instructions" / "dtof.yaml", old, new)
    line = check_fails(spec_copy, capsys)
    assert "dtof" in line and message in line
