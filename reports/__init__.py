"""The spec-coverage HTML report: ``build_report(out_dir, ...)`` writes ``index.html``."""

from reports.render import build_report

__all__ = ["build_report"]
