"""The spec-coverage HTML report: ``build_report(out_dir, ...)`` writes ``index.html``."""

from sm5.reports.render import build_report

__all__ = ["build_report"]
