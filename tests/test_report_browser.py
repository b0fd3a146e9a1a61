"""The report in a real browser: Debian's Chromium, driven by playwright.

Every section renders, the page logs no error and loads nothing from anywhere, the filters and
the search box change which clause rows are visible; a screenshot is saved to
``build/report-screenshot.png``. ``reports/setup_browser.sh`` installs both components.
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

from sm5.oracle.spec import Spec, load_default
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

SCREENSHOT = Path(__file__).resolve().parents[1] / "build" / "report-screenshot.png"
SECTIONS = ("instructions", "clauses", "matrices", "proofs", "mutants", "implementations")
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
            opened = Browser(context.new_page())
            log = opened.log
            opened.tab.on("console", lambda message: log.append((message.type, message.text)))
            opened.tab.on("pageerror", lambda error: log.append(("pageerror", str(error))))
            opened.tab.on("request", lambda request: log.append(("request", request.url)))
            opened.tab.goto(report.as_uri())
            opened.tab.wait_for_load_state("load")
            yield opened
        finally:
            context.close()


@pytest.fixture
def page(browser: Browser) -> Any:
    """The report's tab with every filter cleared."""
    tab = browser.tab
    tab.fill("#f-search", "")
    for select in ("#f-ins", "#f-status", "#f-impl", "#f-result"):
        tab.select_option(select, "")
    assert visible_rows(tab) == total_clauses()
    return tab


def visible_rows(tab: Any) -> int:
    count: int = tab.locator("tr.clause-row:visible").count()
    assert tab.locator("#f-count").text_content() == f"{count} of {total_clauses()} clauses"
    return count


def total_clauses() -> int:
    return sum(1 for _ in load_default().all_clauses())


def test_every_section_renders(page: Any) -> None:
    for section in SECTIONS:
        element = page.locator(f"#{section}")
        element.scroll_into_view_if_needed()
        assert element.is_visible(), section
        assert element.locator("h2").is_visible(), section
    assert page.locator("table.grid").count() > 10
    assert visible_rows(page) == total_clauses()


def test_instruction_filter_and_search(page: Any, spec: Spec) -> None:
    dmovc = [c.id for c in spec.instruction("dmovc").clauses]
    page.select_option("#f-ins", "dmovc")
    assert visible_rows(page) == len(dmovc)
    assert page.locator("#ins-dmovc").is_visible()
    assert page.locator("#ins-store_structured").is_hidden()
    page.fill("#f-search", "value.saturate")
    assert visible_rows(page) == len([c for c in dmovc if "value.saturate" in c]) == 3
    page.fill("#f-search", "oob_offset")
    assert visible_rows(page) == 0
    assert page.locator("#no-clauses").is_visible()
    page.select_option("#f-ins", "")
    oob_offset = [c.id for c in spec.all_clauses() if "oob_offset" in c.id]
    assert len(oob_offset) > 1  # every instruction on the shared structured bounds has one
    assert visible_rows(page) == len(oob_offset)
    page.fill("#f-search", "")
    assert visible_rows(page) == total_clauses()


def test_status_filter(page: Any, spec: Spec, inputs: Inputs) -> None:
    listed = {c for _, v in iter_vectors(inputs.vectors) for c in v.clauses}
    uncovered = [c.id for c in spec.all_clauses() if c.id not in listed]
    assert 0 < len(uncovered) < total_clauses()
    page.select_option("#f-status", "uncovered")
    assert visible_rows(page) == len(uncovered)
    page.select_option("#f-status", "")
    assert visible_rows(page) == total_clauses()


def test_implementation_and_result_filters(page: Any, inputs: Inputs) -> None:
    page.select_option("#f-impl", label="divergent")
    assert page.locator('th.impl-col:has-text("divergent")').is_visible()
    assert page.locator('th.impl-col:has-text("oracle")').is_hidden()
    page.select_option("#f-result", "fail")
    # The hand-written divergent run fails one vector, store_structured/synthetic/0002.
    failing = next(v for _, v in iter_vectors(inputs.vectors)
                   if v.id == "store_structured/synthetic/0002")
    assert visible_rows(page) == len(failing.clauses) == 1
    page.select_option("#f-impl", label="oracle")
    assert visible_rows(page) == 0
    page.select_option("#f-impl", label="atomic_returns_new")
    # The mutant returns the new value: the two in-bounds raw atomics fail; their clauses are
    # invocation.active, uav_raw.in_bounds, and result.no_carry for one, result.wrap for the other.
    assert visible_rows(page) == 4
    page.select_option("#f-result", "")
    page.select_option("#f-impl", "")
    assert visible_rows(page) == total_clauses()


def test_no_console_errors_no_network_and_a_screenshot(page: Any, browser: Browser) -> None:
    page.evaluate("window.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    # The top of the page: the whole report is over 100,000 pixels tall with 48 instructions,
    # and a full-page capture of it takes longer than playwright's default timeout on a busy
    # machine.
    page.screenshot(path=str(SCREENSHOT), timeout=120_000)
    assert SCREENSHOT.stat().st_size > 10_000
    errors = [entry for entry in browser.log if entry[0] in ("error", "pageerror")]
    assert errors == []
    requests = [url for kind, url in browser.log if kind == "request"]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests)
