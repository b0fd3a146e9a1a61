"""Render the report: one self-contained HTML file, the same bytes for the same inputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from sm5.oracle.fileio import atomic_write_text
from sm5.oracle.spec import Spec, load_default
from sm5.reports.model import Report, gather

REPORT_FILE = "index.html"


def default_vector_paths() -> list[Path]:
    """The committed golden vectors (``vectors/golden``), when the folder exists."""
    golden = Path(str(resources.files("sm5.vectors"))) / "golden"
    return [golden] if golden.is_dir() else []


def environment() -> Environment:
    # Autoescape on: clause texts, errata and reasons come from data files and other programs.
    return Environment(loader=PackageLoader("sm5.reports", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render(report: Report) -> str:
    return environment().get_template("report.html.j2").render(r=report)


def build_report(out_dir: Path, *, spec: Spec | None = None,
                 vector_paths: Sequence[Path] | None = None, proofs_json: Path | None = None,
                 results_jsons: Iterable[Path] = (), mutants_json: Path | None = None) -> Path:
    """Write ``out_dir/index.html`` atomically and return its path.

    ``vector_paths`` are vector files or folders of ``*.jsonl`` (default: the golden set);
    ``proofs_json``, ``results_jsons`` and ``mutants_json`` are optional, and the page says
    which of them were not given.
    """
    report = gather(spec or load_default(),
                    list(default_vector_paths() if vector_paths is None else vector_paths),
                    proofs_json, tuple(results_jsons), mutants_json)
    path = out_dir / REPORT_FILE
    atomic_write_text(path, render(report))
    return path
