"""The spec-coverage HTML report: ``build_report(out_dir, ...)`` writes ``index.html`` (the
dashboard) and ``instructions/<name>.html`` (one page per instruction)."""

from sm5.reports.render import build_report

__all__ = ["build_report"]
