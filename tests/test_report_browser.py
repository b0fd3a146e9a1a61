"""The report in a real browser: Debian's Chromium, driven by playwright.

Every section of the index and of an instruction's page renders, no page logs an error or loads
anything from anywhere, the index's search finds instructions, the filters and the search box of
an instruction's page change which clause rows are visible; a screenshot of the index of a report
of the golden set is saved to ``build/report-screenshot.png`` and regenerates the one the README
shows, ``docs/report-screenshot.png``. ``reports/setup_browser.sh`` installs both components.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from report_inputs import Inputs, write_inputs

from sm5.oracle.model.spec import Spec, load_default
from sm5.reports import build_report
from sm5.vectors.format import iter_vectors

CHROMIUM = shutil.which("chromium")
HAVE_PLAYWRIGHT = importlib.util.find_spec("playwright") is not None
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                       "(run reports/setup_browser.sh)"),
    pytest.mark.skipif(not HAVE_PLAYWRIGHT, reason="playwright is not installed "
                       "(run reports/setup_browser.sh)"),
]

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "build" / "report-screenshot.png"
DOCS_SCREENSHOT = ROOT / "docs" / "report-screenshot.png"
INDEX_SECTIONS = ("dashboard", "instructions", "matrices", "proofs", "mutants",
                  "implementations")
PAGE_SECTIONS = ("instruction", "clauses", "matrices", "proofs", "implementations")
# --headless and a fresh profile folder come from launch_persistent_context below.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_default()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, spec: Spec) -> Inputs:
    return write_inputs(tmp_path_factory.mktemp("browser-inputs"), spec)


@dataclass
class Browser:
    """The open report and what the page logged: (console type | pageerror | request, text)."""

    tab: Any
    folder: Path
    log: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, inputs: Inputs) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    out = tmp_path_factory.mktemp("browser-report")
    report = build_report(out / "report", vector_paths=inputs.vectors, proofs_json=inputs.proofs,
                          results_jsons=inputs.results, mutants_json=inputs.mutants)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(out / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1440, "height": 900})
        try:
            opened = Browser(context.new_page(), report.parent)
            log = opened.log
            opened.tab.on("console", lambda message: log.append((message.type, message.text)))
            opened.tab.on("pageerror", lambda error: log.append(("pageerror", str(error))))
            opened.tab.on("request", lambda request: log.append(("request", request.url)))
            opened.tab.goto(report.as_uri())
            opened.tab.wait_for_load_state("load")
            yield opened
        finally:
            context.close()


def open_page(browser: Browser, name: str) -> Any:
    """The tab on one page of the report (``index`` or an instruction), every filter cleared."""
    tab = browser.tab
    tab.goto((browser.folder / ("index.html" if name == "index" else
                                f"instructions/{name}.html")).as_uri())
    tab.wait_for_load_state("load")
    if name != "index":
        tab.fill("#f-search", "")
        for select in ("#f-status", "#f-impl", "#f-result"):
            tab.select_option(select, "")
    return tab


def visible_rows(tab: Any, total: int) -> int:
    count: int = tab.locator("tr.clause-row:visible").count()
    assert tab.locator("#f-count").text_content() == f"{count} of {total} clauses"
    return count


def test_every_section_renders(browser: Browser, spec: Spec) -> None:
    tab = open_page(browser, "index")
    for section in INDEX_SECTIONS:
        element = tab.locator(f"#{section}")
        element.scroll_into_view_if_needed()
        assert element.is_visible(), section
        assert element.locator("h2").is_visible(), section
    # implementations x (families + all) bars, and a bar per implementation per instruction
    impls = tab.locator("table.dash tbody tr").count()
    families = len({i.family for i in spec.instructions.values()})
    assert impls == 3  # the oracle, a mutant and the hand-written divergent run
    assert tab.locator("table.dash .sbar").count() == impls * (families + 1)
    assert tab.locator("tr.ins-row").count() == len(spec.instructions)
    tab = open_page(browser, "dmovc")
    for section in PAGE_SECTIONS:
        element = tab.locator(f"#{section}")
        element.scroll_into_view_if_needed()
        assert element.is_visible(), section
    assert tab.locator("table.grid").count() >= 3
    assert visible_rows(tab, len(spec.instruction("dmovc").clauses)) == 8


def test_the_index_finds_instructions(browser: Browser, spec: Spec) -> None:
    tab = open_page(browser, "index")
    tab.fill("#f-search", "dmov")
    assert tab.locator("tr.ins-row:visible").count() == 2  # dmov, dmovc
    tab.fill("#f-search", "double")
    doubles = [i for i in spec.instructions.values() if i.family == "double"]
    assert tab.locator("tr.ins-row:visible").count() == len(doubles)
    tab.fill("#f-search", "nothing-like-it")
    assert tab.locator("#no-instructions").is_visible()
    tab.fill("#f-search", "")
    tab.click("a[href='instructions/dmovc.html']")
    tab.wait_for_load_state("load")
    assert tab.locator("#instruction h3").text_content() == "dmovc"


def test_clause_search(browser: Browser, spec: Spec) -> None:
    dmovc = [c.id for c in spec.instruction("dmovc").clauses]
    tab = open_page(browser, "dmovc")
    tab.fill("#f-search", "value.saturate")
    assert visible_rows(tab, len(dmovc)) == len([c for c in dmovc if "value.saturate" in c]) == 3
    tab.fill("#f-search", "oob_offset")
    assert visible_rows(tab, len(dmovc)) == 0
    assert tab.locator("#no-clauses").is_visible()
    tab = open_page(browser, "store_structured")
    total = len(spec.instruction("store_structured").clauses)
    tab.fill("#f-search", "oob_offset")
    assert visible_rows(tab, total) == 1


def test_status_filter(browser: Browser, spec: Spec, inputs: Inputs) -> None:
    listed = {c for _, v in iter_vectors(inputs.vectors) for c in v.clauses}
    clauses = [c.id for c in spec.instruction("store_structured").clauses]
    uncovered = [c for c in clauses if c not in listed]
    assert 0 < len(uncovered) < len(clauses)
    tab = open_page(browser, "store_structured")
    tab.select_option("#f-status", "uncovered")
    assert visible_rows(tab, len(clauses)) == len(uncovered)
    tab.select_option("#f-status", "")
    assert visible_rows(tab, len(clauses)) == len(clauses)


def test_implementation_and_result_filters(browser: Browser, spec: Spec, inputs: Inputs
                                           ) -> None:
    total = len(spec.instruction("store_structured").clauses)
    page = open_page(browser, "store_structured")

    page.select_option("#f-impl", label="divergent")
    assert page.locator('th.impl-col:has-text("divergent")').is_visible()
    assert page.locator('th.impl-col:has-text("oracle")').is_hidden()
    page.select_option("#f-result", "fail")
    # The hand-written divergent run fails one vector, store_structured/synthetic/0002.
    failing = next(v for _, v in iter_vectors(inputs.vectors)
                   if v.id == "store_structured/synthetic/0002")
    assert visible_rows(page, total) == len(failing.clauses) == 1
    page.select_option("#f-impl", label="oracle")
    assert visible_rows(page, total) == 0
    page.select_option("#f-result", "")
    page.select_option("#f-impl", "")
    assert visible_rows(page, total) == total
    page = open_page(browser, "imm_atomic_iadd")
    total = len(spec.instruction("imm_atomic_iadd").clauses)
    page.select_option("#f-impl", label="atomic_returns_new")
    page.select_option("#f-result", "fail")
    # The mutant returns the new value: the two in-bounds raw atomics fail; their clauses are
    # invocation.active, uav_raw.in_bounds, and result.no_carry for one, result.wrap for the other.
    assert visible_rows(page, total) == 4


def test_no_console_errors_and_no_network(browser: Browser) -> None:
    for name in ("index", "dmovc", "store_structured"):
        open_page(browser, name)
    errors = [entry for entry in browser.log if entry[0] in ("error", "pageerror")]
    assert errors == []
    requests = [url for kind, url in browser.log if kind == "request"]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests)


@pytest.mark.slow  # long tier (docs/testing.md)
def test_a_screenshot_of_the_index_of_the_golden_set(
        tmp_path_factory: pytest.TempPathFactory, inputs: Inputs, browser: Browser) -> None:
    """The README's screenshot: the index of a report of the golden set, with the oracle's run
    and two mutants' (one that returns an atomic's new value, one that flattens a structured
    address in 32 bits) as its implementations."""
    from sm5.conformance.implementations import resolve
    from sm5.conformance.run import run, write_results

    out = tmp_path_factory.mktemp("golden-report")
    results = []
    for name in ("oracle", "mutant:atomic_returns_new", "mutant:wrap32_index_stride"):
        path = out / f"{name.replace(':', '-')}.json"
        write_results(path, run(resolve(name)))
        results.append(path)
    report = build_report(out / "report", proofs_json=inputs.proofs, results_jsons=results,
                          mutants_json=inputs.mutants)
    tab = browser.tab
    tab.goto(report.as_uri())
    tab.wait_for_load_state("load")
    assert tab.locator("table.dash tbody tr").count() == 3
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOT), timeout=120_000)
    assert SCREENSHOT.stat().st_size > 10_000
    shutil.copyfile(SCREENSHOT, DOCS_SCREENSHOT)
