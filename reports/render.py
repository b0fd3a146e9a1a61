"""Render the report: an index page (the dashboard) and one page per instruction, each a
self-contained HTML file, the same bytes for the same inputs."""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.model.spec import Spec, load_default
from sm5.reports.model import CATEGORIES, Report, gather

REPORT_FILE = "index.html"
#: The folder of the per-instruction pages, inside the output folder.
PAGES_FOLDER = "instructions"


def default_vector_paths() -> list[Path]:
    """The committed golden vectors (``vectors/golden``), when the folder exists."""
    golden = Path(str(resources.files("sm5.vectors"))) / "golden"
    return [golden] if golden.is_dir() else []


def environment() -> Environment:
    # Autoescape on: clause texts, errata and reasons come from data files and other programs.
    return Environment(loader=PackageLoader("sm5.reports", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render_pages(report: Report) -> dict[str, str]:
    """Every page of the report by its path inside the output folder: ``index.html`` and
    ``instructions/<name>.html``."""
    env = environment()
    names = {ins.name for ins in report.instructions}
    pages = {REPORT_FILE: env.get_template("index.html.j2").render(
        r=report, root="", categories=CATEGORIES, instruction_names=names)}
    template = env.get_template("instruction.html.j2")
    for page in report.pages():
        pages[f"{PAGES_FOLDER}/{page.ins.name}.html"] = template.render(
            r=report, root="../", page=page, categories=CATEGORIES, instruction_names=names)
    return pages


def render(report: Report) -> str:
    """The index page alone."""
    return render_pages(report)[REPORT_FILE]


def build_report(out_dir: Path, *, spec: Spec | None = None,
                 vector_paths: Sequence[Path] | None = None, proofs_json: Path | None = None,
                 results_jsons: Iterable[Path] = (), mutants_json: Path | None = None) -> Path:
    """Write the report into ``out_dir`` and return the index page's path.

    ``vector_paths`` are vector files or folders of ``*.jsonl`` (default: the golden set);
    ``proofs_json``, ``results_jsons`` and ``mutants_json`` are optional, and the pages say
    which of them were not given. Every page is written into a staging folder first and moved
    in with SIGINT and SIGTERM held back, the index last, and pages of instructions the spec no
    longer has are removed: an interrupted run leaves the old report or the new one.
    """
    report = gather(spec or load_default(),
                    list(default_vector_paths() if vector_paths is None else vector_paths),
                    proofs_json, tuple(results_jsons), mutants_json)
    pages = render_pages(report)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=".report."))
    try:
        for name, text in pages.items():
            atomic_write_text(staging / name, text)
        _move_in(staging, out_dir, pages)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir / REPORT_FILE


def _move_in(staging: Path, out: Path, pages: Mapping[str, str]) -> None:
    held = {signal.SIGINT, signal.SIGTERM}
    blocked = threading.current_thread() is threading.main_thread()
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        (out / PAGES_FOLDER).mkdir(exist_ok=True)
        for stale in sorted((out / PAGES_FOLDER).glob("*.html")):
            if f"{PAGES_FOLDER}/{stale.name}" not in pages:
                stale.unlink()
        for name in sorted(pages, key=lambda n: n == REPORT_FILE):
            (staging / name).replace(out / name)
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
