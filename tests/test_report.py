"""The spec-coverage report: an index page (the dashboard) and one page per instruction; every
clause with a status, statuses decided as the rules say, header counts that agree with the chips,
escaping of text that comes from data, byte-identical rebuilds, self-contained pages."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_inputs import MARKUP_REASON, Inputs, write_inputs, write_json

from sm5.cli import main
from sm5.oracle.model.spec import Spec, default_root, load_default, load_spec
from sm5.reports import build_report
from sm5.reports.grids import Grid
from sm5.reports.inputs import ReportError
from sm5.reports.model import ImplCell, Report, gather

STATUS_KEYS = {"proved", "tested", "undefined", "uncovered"}


@dataclass
class Row:
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)

    @property
    def statuses(self) -> set[str]:
        return set(self.attrs.get("data-status", "").split())

    @property
    def content(self) -> str:
        return " ".join(" ".join(self.text).split())


class ClauseRows(HTMLParser):
    """The clause rows of the page (``tr.clause-row``) with their text, and every link target."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, Row] = {}
        self.links: list[str] = []
        self.ids: set[str] = set()
        self._row: Row | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        for key in ("href", "src"):
            if key in values:
                self.links.append(values[key])
        if tag == "tr" and "clause-row" in values.get("class", "").split():
            self._row = Row(values)
            self.rows[values["id"].removeprefix("c-")] = self._row

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._row is not None:
            self._row.text.append(data)


def parse(html: str) -> ClauseRows:
    parser = ClauseRows()
    parser.feed(html)
    return parser


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_default()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, spec: Spec) -> Inputs:
    return write_inputs(tmp_path_factory.mktemp("report-inputs"), spec)


def build(out: Path, inputs: Inputs, spec: Spec | None = None) -> str:
    """Write the report into ``out``; the index page's text."""
    path = build_report(out, spec=spec, vector_paths=inputs.vectors, proofs_json=inputs.proofs,
                        results_jsons=inputs.results, mutants_json=inputs.mutants)
    assert path == out / "index.html"
    return path.read_text(encoding="utf-8")


def pages(out: Path) -> dict[str, str]:
    """Every page of a written report by its path inside ``out``."""
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(out.rglob("*.html"))}


def everything(out: Path) -> str:
    return "\n".join(pages(out).values())


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, inputs: Inputs, spec: Spec) -> Path:
    out = tmp_path_factory.mktemp("report")
    build(out, inputs, spec)
    return out


@pytest.fixture(scope="module")
def page(written: Path) -> ClauseRows:
    """The clause rows of every instruction page."""
    return parse(everything(written))


@pytest.fixture(scope="module")
def report(inputs: Inputs, spec: Spec) -> Report:
    return gather(spec, inputs.vectors, inputs.proofs, inputs.results, inputs.mutants)


def test_every_clause_of_every_instruction_is_shown_with_a_status(page: ClauseRows,
                                                                   spec: Spec) -> None:
    clause_ids = [c.id for c in spec.all_clauses()]
    assert len(clause_ids) > 30
    assert sorted(page.rows) == sorted(clause_ids)
    for clause_id, row in page.rows.items():
        assert row.statuses and row.statuses <= STATUS_KEYS, clause_id
        assert clause_id in row.content


def test_an_uncovered_clause_says_why(page: ClauseRows) -> None:
    uncovered = [row for row in page.rows.values() if "uncovered" in row.statuses]
    assert uncovered
    for row in uncovered:
        assert "why uncovered:" in row.content
    # store_structured has 9 vectors in report_inputs, none of which misaligns a g# write.
    row = page.rows["store_structured.tgsm_structured.misaligned"]
    assert ("why uncovered: no vector generated for this clause: none of the 9 vectors of "
            "store_structured lists it") in row.content


@pytest.mark.parametrize(("clause_id", "statuses"), [
    # uav_bounds has a proved partition theorem, and vector 0000 covers the clause.
    ("store_structured.uav_structured.in_bounds", {"proved", "tested"}),
    # Same group; its outcome (resource_undefined) leaves the UAV free.
    ("store_structured.uav_structured.oob_offset", {"proved", "tested", "undefined"}),
    # tgsm_bounds' partition theorem timed out: tested and undefined by design, not proved.
    ("store_structured.tgsm_structured.out_of_bounds", {"tested", "undefined"}),
    ("store_structured.tgsm_structured.in_bounds", {"tested"}),
    # A proved in_bounds theorem names this clause.
    ("imm_atomic_iadd.uav_raw.in_bounds", {"proved", "tested"}),
    ("imm_atomic_iadd.uav_raw.out_of_bounds", {"tested", "undefined"}),
    # The failed partition theorem of dmovc's value group proves nothing.
    ("dmovc.value.sign_modifier", {"tested"}),
    ("dmovc.value.modified_nan", {"uncovered"}),
    # A proved theorem (partition/uav_structured_bounds) without a covering vector does not
    # make a clause proved.
    ("imm_atomic_iadd.uav_structured.in_bounds", {"uncovered"}),
])
def test_status_follows_the_rules(page: ClauseRows, clause_id: str, statuses: set[str]) -> None:
    assert page.rows[clause_id].statuses == statuses


def test_undefined_by_design_is_explained_and_lists_its_vectors(page: ClauseRows) -> None:
    row = page.rows["store_structured.uav_structured.oob_offset"]
    assert "undefined by design: resource_undefined" in row.content
    assert "store_structured/synthetic/0002" in row.content


def _results(report: Report, clause_id: str, impl: str) -> ImplCell:
    clause = next(c for c in report.clauses if c.id == clause_id)
    return next(cell for cell in clause.impls if cell.impl == impl)


def test_per_implementation_results_per_clause(page: ClauseRows, report: Report) -> None:
    impls = [i.impl for i in report.implementations]
    assert impls == ["atomic_returns_new", "divergent", "oracle"]
    divergent = _results(report, "store_structured.uav_structured.oob_offset", "divergent")
    assert divergent.counts == (("fail", 1),)
    assert [i.vector_id for i in divergent.issues] == ["store_structured/synthetic/0002"]
    assert divergent.issues[0].diffs == ("u0[3]: expected any, observed 0x1",)
    xfail = _results(report, "imm_atomic_iadd.uav_raw.out_of_bounds", "divergent")
    assert xfail.counts == (("xfail", 1),)
    assert "expected divergence: returns 0 out of bounds" in \
        page.rows["imm_atomic_iadd.uav_raw.out_of_bounds"].content
    # The mutant returns the new value: both in-bounds raw atomics (0000, 0002) fail on it.
    clause = "imm_atomic_iadd.uav_raw.in_bounds"
    assert _results(report, clause, "atomic_returns_new").counts == (("fail", 2),)
    assert _results(report, clause, "oracle").counts == (("pass", 2),)
    assert "2 fail" in page.rows[clause].content


def _cell(grid: Grid, row: str, column: int) -> tuple[str, str, str]:
    cells = next(r.cells for r in grid.rows if r.label == row)
    return cells[column].text, cells[column].note, cells[column].tone


def test_matrices(report: Report) -> None:
    legality = next(g for g in report.legality_grids if g.instruction == "store_structured")
    # Columns: (Shader Model 4, 4.1, 5) x (11.0, 11.1). ps_4_0 on 11.0 is rejected (model 40
    # unsupported) and has one must-reject vector; cs_4_0 is allowed by an explicit row.
    assert _cell(legality, "pixel", 0)[1:] == ("1 rej", "illegal")
    assert _cell(legality, "compute", 0)[2] == "legal-empty"
    assert _cell(legality, "vertex", 4)[1:] == ("1 rej", "illegal")  # vs_5_0 on 11.0
    assert _cell(legality, "vertex", 5)[2] == "legal-empty"  # vs_5_0 on 11.1
    assert _cell(legality, "hull", 0)[2] == "na"  # no hs_4_0
    masks = next(g for g in report.mask_grids if g.instruction == "store_structured")
    # src0 has no swizzle list: 15 letter-equality patterns, then immediates.
    assert len(masks.columns) == 16
    assert (masks.columns[0], masks.columns[14], masks.columns[15]) == \
        ("aaaa", "abcd", "immediate")
    # .xyzw in 0000, 0005, 0006, 0007 and .yxwz in 0002; 0006 and 0007 are must-reject.
    assert _cell(masks, ".xy", 14) == ("5", "2 rej", "h1")
    assert _cell(masks, ".x", 0) == ("1", "", "h1")  # .xxxx in 0001
    assert _cell(masks, ".xz", 14) == ("1", "1 rej", "illegal")
    assert _cell(masks, ".xyz", 14) == ("0", "", "gap")
    listed = next(g for g in report.mask_grids if g.title.startswith("dmovc: dest mask") and
                  "src1" in g.title)
    assert listed.columns == (".xyzw", ".xyxy", ".zwxy", ".zwzw", "other", "immediate")
    assert _cell(listed, ".zw", 0)[2] == "gap"
    assert _cell(listed, ".xyzw", 4)[2] == "na"
    outcomes = report.outcome_grid
    assert outcomes.columns[:3] == ("defined", "clipped", "no_write")  # the model's order
    column = outcomes.columns.index
    assert _cell(outcomes, "store_structured", column("resource_undefined")) == ("2", "", "h1")
    assert _cell(outcomes, "store_structured", column("rejected")) == ("3", "", "h1")
    assert _cell(outcomes, "dmovc", column("no_write"))[2] == "na"  # dmovc never yields it


def test_proofs_and_mutants_sections(report: Report, inputs: Inputs) -> None:
    assert report.proofs is not None
    assert [r.about for r in report.proofs.rows] == [
        "instruction", "group", "group", "group", "clause", "group", "group"]
    assert report.proofs.rows[1].seconds == "0.42 s"
    assert report.proofs.rows[3].witness_count == 1
    doc = json.loads(inputs.mutants.read_text())
    assert report.mutants is not None
    assert report.mutants.total == doc["total"] == len(report.mutants.rows)
    assert report.mutants.killed == doc["killed"]
    assert report.mutants.score == f"{100 * doc['killed'] / doc['total']:.1f} %"


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path, inputs: Inputs) -> None:
    build(tmp_path / "a", inputs)
    build(tmp_path / "b", inputs)
    first = pages(tmp_path / "a")
    assert first == pages(tmp_path / "b")
    # Over the same folder again (each page replaced in place), and with the inputs given in
    # another order.
    build(tmp_path / "a", inputs)
    build_report(tmp_path / "c", vector_paths=[*reversed(inputs.vectors),
                                               inputs.vectors[0].parent],
                 proofs_json=inputs.proofs, results_jsons=inputs.results[::-1],
                 mutants_json=inputs.mutants)
    assert pages(tmp_path / "a") == pages(tmp_path / "c") == first
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["index.html", "instructions"]


def test_one_page_per_instruction_and_an_index(written: Path, spec: Spec,
                                               tmp_path: Path) -> None:
    assert sorted(pages(written)) == ["index.html", *(f"instructions/{name}.html"
                                                      for name in sorted(spec.instructions))]
    # A page of an instruction the spec no longer has is removed by the next build.
    build_report(tmp_path, vector_paths=[])
    (tmp_path / "instructions" / "gone.html").write_text("old", encoding="utf-8")
    build_report(tmp_path, vector_paths=[])
    assert not (tmp_path / "instructions" / "gone.html").exists()
    assert not list(tmp_path.glob(".report.*"))  # no staging folder is left behind


@pytest.mark.slow  # long tier (docs/testing.md)
def test_every_page_is_self_contained(tmp_path: Path, inputs: Inputs) -> None:
    build(tmp_path, inputs)
    written = pages(tmp_path)
    for name, html in written.items():
        page = parse(html)
        assert page.links, name
        folder = Path(name).parent
        for target in page.links:
            assert not target.startswith(("http:", "https:", "//", "/")), (name, target)
            if target.startswith("data:"):
                continue
            file, _, anchor = target.partition("#")
            if file:
                other = (folder / file).as_posix().replace("instructions/../", "")
                assert other in written, (name, target)
                ids = parse(written[other]).ids
            else:
                ids = page.ids
            assert not anchor or anchor in ids, (name, target)
        assert "default-src 'none'" in html
        assert "http://" not in html and "https://" not in html
    index = parse(written["index.html"])
    for section in ("dashboard", "instructions", "matrices", "proofs", "mutants",
                    "implementations", "inputs"):
        assert section in index.ids
    dmovc = parse(written["instructions/dmovc.html"])
    for section in ("instruction", "clauses", "matrices", "proofs", "implementations"):
        assert section in dmovc.ids


class HeaderChips(HTMLParser):
    """The chips of a page's header (``#stats``): their tone and text."""

    def __init__(self) -> None:
        super().__init__()
        self.chips: list[tuple[str, str]] = []
        self._depth = 0
        self._tone: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if values.get("id") == "stats":
            self._depth = 1
        elif self._depth and tag == "span" and "chip" in values.get("class", "").split():
            self._tone = values["class"].split()[1]

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self._depth = 0
        self._tone = None

    def handle_data(self, data: str) -> None:
        if self._tone is not None:
            self.chips.append((self._tone, data))


def test_the_header_counts_are_the_chips_of_the_clauses(written: Path, page: ClauseRows
                                                        ) -> None:
    """Each count of the header is the number of clauses that carry its chip (a clause carries
    every chip that holds for it: a proved clause is tested too)."""
    header = HeaderChips()
    header.feed(pages(written)["index.html"])
    counted = {tone: int(text.split()[0]) for tone, text in header.chips}
    carried = {key: sum(1 for row in page.rows.values() if key in row.statuses)
               for key in STATUS_KEYS}
    assert counted == carried
    assert counted["proved"] > 0 and counted["tested"] >= counted["proved"]
    assert counted["undefined"] > 0 and counted["uncovered"] > 0
    # The page says what each count means.
    index = pages(written)["index.html"]
    assert "every proved clause is also tested" in index


def test_the_dashboard_counts_each_family(report: Report, spec: Spec, inputs: Inputs) -> None:
    """Implementations x families: each verdict counted once, in its category, from the results
    files themselves."""
    for row in report.dashboard:
        doc = next(json.loads(p.read_text()) for p in inputs.results
                   if json.loads(p.read_text())["impl"] == row.impl)
        assert row.total.total == len(doc["results"])
        for family, bar in zip(report.families, row.bars, strict=True):
            statuses = [r["status"] for v, r in doc["results"].items()
                        if spec.instruction(v.split("/")[0]).family == family]
            counts = {s.key: s.count for s in bar.segments}
            assert counts["pass"] == statuses.count("pass")
            assert counts["expected"] == statuses.count("xfail")
            assert counts["fail"] == sum(statuses.count(s) for s in
                                         ("fail", "crash", "timeout", "xpass"))
            assert bar.total == len(statuses)
    divergent = next(r for r in report.dashboard if r.impl == "divergent")
    assert {s.key: s.count for s in divergent.total.segments}["fail"] == 1


def test_spec_text_and_reasons_are_escaped(tmp_path: Path, inputs: Inputs) -> None:
    root = tmp_path / "spec"
    shutil.copytree(default_root(), root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    yaml_path = root / "instructions" / "store_structured.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    overrides = "    clauses:\n"  # the instruction's own text for a shared clause
    defect = "defect: \"'casued' for 'caused'.\""
    assert text.count(overrides) == 1 and text.count(defect) == 1
    text = text.replace(overrides, overrides + "      tgsm_structured.misaligned: "
                        "{text: \"<script>alert(1)</script> misaligned g#\"}\n")
    text = text.replace(defect, 'defect: "<script>alert(1)</script> typo"')
    yaml_path.write_text(text, encoding="utf-8")
    spec = load_spec(root)
    assert spec.instruction("store_structured").errata[5].defect.startswith("<script>")
    build(tmp_path / "out", inputs, spec)
    html = everything(tmp_path / "out")
    assert "<script>alert(1)" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2
    assert MARKUP_REASON not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_missing_optional_inputs_are_said(tmp_path: Path) -> None:
    html = build_report(tmp_path, vector_paths=[]).read_text(encoding="utf-8")
    assert "Proofs not run" in html
    assert "Mutants not run" in html
    assert "No conformance results were given" in html
    page = parse(everything(tmp_path))
    assert {s for row in page.rows.values() for s in row.statuses} == {"uncovered"}
    assert all("no vector files were given to the report" in row.content
               for row in page.rows.values())


def test_malformed_inputs_are_report_errors(tmp_path: Path, inputs: Inputs) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ReportError) as caught:
        build_report(tmp_path / "out", vector_paths=inputs.vectors, proofs_json=bad)
    assert caught.value.where == str(bad)
    no_status = write_json(tmp_path / "r.json", {"impl": "x", "results": {"v": {"reason": ""}}})
    with pytest.raises(ReportError, match="field 'status' missing"):
        build_report(tmp_path / "out", vector_paths=inputs.vectors, results_jsons=[no_status])
    clash = write_json(tmp_path / "o.json", {"impl": "oracle", "results": {
        "store_structured/synthetic/0000": {"status": "fail", "reason": "x"}}})
    with pytest.raises(ReportError, match="another verdict"):
        build_report(tmp_path / "out", vector_paths=inputs.vectors,
                     results_jsons=[inputs.results[0], clash])


def test_crash_and_timeout_are_listed_as_failures(tmp_path: Path, inputs: Inputs,
                                                  spec: Spec) -> None:
    doc = json.loads(inputs.results[2].read_text())
    doc["impl"] = "crashing"
    doc["results"]["store_structured/synthetic/0002"] = {
        "status": "crash", "reason": "the implementation was killed by signal SIGSEGV"}
    doc["results"]["imm_atomic_iadd/synthetic/0001"] = {
        "status": "timeout", "reason": "no reply within the time-out of 10 s"}
    path = write_json(tmp_path / "crashing.json", doc)
    report = gather(spec, inputs.vectors, results_jsons=[path])
    crash = _results(report, "store_structured.uav_structured.oob_offset", "crashing")
    assert crash.counts == (("crash", 1),)
    assert crash.tone == "bad"
    assert [(i.vector_id, i.status) for i in crash.issues] == [
        ("store_structured/synthetic/0002", "crash")]
    timeout = _results(report, "imm_atomic_iadd.uav_raw.out_of_bounds", "crashing")
    assert timeout.counts == (("timeout", 1),) and timeout.tone == "bad"


def test_shards_of_one_run_are_merged(tmp_path: Path, inputs: Inputs, spec: Spec) -> None:
    doc = json.loads(inputs.results[1].read_text())
    ids = sorted(doc["results"])
    halves = [{**doc, "results": {k: doc["results"][k] for k in part}}
              for part in (ids[::2], ids[1::2])]
    paths = [write_json(tmp_path / f"shard{n}.json", half) for n, half in enumerate(halves)]
    merged = gather(spec, inputs.vectors, results_jsons=paths)
    whole = gather(spec, inputs.vectors, results_jsons=[inputs.results[1]])
    # The mutant does not validate: the 5 must-reject vectors are not applicable; it returns the
    # new value, so the 2 in-bounds raw atomics fail; the other 11 vectors pass.
    assert merged.implementations[0].counts == whole.implementations[0].counts == \
        (("pass", 11), ("fail", 2), ("not-applicable", 5))
    assert merged.implementations[0].files == ("shard0.json", "shard1.json")


def test_command_line(tmp_path: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
                      ) -> None:
    out = tmp_path / "out"
    code = main(["report", "--out", str(out), "--vectors", *map(str, inputs.vectors),
                 "--proofs", str(inputs.proofs), "--results", *map(str, inputs.results),
                 "--mutants", str(inputs.mutants)])
    assert code == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    build(tmp_path / "api", inputs)
    assert pages(out) == pages(tmp_path / "api")
    missing = tmp_path / "absent.json"
    assert main(["report", "--out", str(out), "--vectors", *map(str, inputs.vectors),
                 "--mutants", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_flow_control_rows_count_the_vectors_listing_each_clause(tmp_path: Path) -> None:
    """The flow-control section: one row per flow-control instruction; each clause's count is
    the number of vectors whose clauses list it (read here from the JSONL lines themselves), and
    each structure rule the number of must-reject vectors breaking it."""
    golden = default_root().parent / "vectors" / "golden"
    files = [golden / "breakc.jsonl", golden / "flow_structure.jsonl"]
    report = gather(load_default(), files)
    rows = {row.name: row for row in report.control.rows}
    assert set(rows) == set(load_default().control.instructions)
    lines = [json.loads(line) for line in (golden / "breakc.jsonl").read_text(
        encoding="utf-8").splitlines()[1:]]
    assert rows["breakc"].vector_count == len(lines)
    for clause in rows["breakc"].clauses:
        assert clause.vector_count == sum(clause.id in v["clauses"] for v in lines), clause.id
    assert all(c.vector_count for c in rows["breakc"].clauses)
    rejects = [json.loads(line) for line in (golden / "flow_structure.jsonl").read_text(
        encoding="utf-8").splitlines()[1:]]
    by_rule = {rule.id: rule.rejects for rule in report.control.rules}
    assert by_rule["structure.recursion"] == sum(
        v["expect"].get("rule") == "structure.recursion" for v in rejects) == 1
    assert by_rule["discard.stage"] == 1


def test_program_state_section_counts_the_rejects_of_each_rule(tmp_path: Path) -> None:
    """The program-state section: one row per register file that stands for r#; each rule's
    count is the number of must-reject vectors naming it (read from the JSONL lines)."""
    golden = default_root().parent / "vectors" / "golden"
    files = [golden / "program_state.jsonl", golden / "state_structure.jsonl"]
    report = gather(load_default(), files)
    assert report.state is not None
    assert [f.name for f in report.state.files] == [
        "x", "cb", "icb", "vThreadID", "vThreadGroupID", "vThreadIDInGroup"]
    counted = 0
    for path in files:
        counted += len((path.read_text(encoding="utf-8")).splitlines()) - 1
    assert report.state.vector_count == counted
    rejects = [json.loads(line) for line in (golden / "state_structure.jsonl").read_text(
        encoding="utf-8").splitlines()[1:]]
    by_rule = {rule.id: rule.rejects for rule in report.state.rules}
    assert by_rule["program.relative_index"] == sum(
        v["expect"].get("rule") == "program.relative_index" for v in rejects) == 2
    assert by_rule["dcl_thread_group.legal.limits_5_0"] == 2
