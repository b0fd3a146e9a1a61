"""``sm5 report``: write the spec-coverage HTML report, an index and a page per instruction."""

from __future__ import annotations

import argparse
from pathlib import Path

from sm5.oracle.cli.options import writable_folder
from sm5.oracle.model.spec import load_default, load_spec
from sm5.reports.render import build_report


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "report", help="write the spec-coverage HTML report (self-contained pages: a dashboard "
        "and one page per instruction)",
        description="Reads the spec, the vectors and, when given, proof, conformance and "
        "mutant results; writes DIR/index.html (the dashboard) and DIR/instructions/NAME.html "
        "(one page per instruction), and prints the index's path.")
    p.add_argument("--out", type=Path, default=Path("build/report"), metavar="DIR",
                   help="output folder (default: build/report)")
    p.add_argument("--spec", type=Path, default=None, metavar="DIR",
                   help="spec folder (default: the built-in spec/)")
    p.add_argument("--vectors", type=Path, nargs="+", default=None, metavar="PATH",
                   help="vector files or folders of *.jsonl (default: the golden vectors)")
    p.add_argument("--proofs", type=Path, default=None, metavar="JSON",
                   help="proof results (sm5 prove --json)")
    p.add_argument("--results", type=Path, nargs="+", default=[],
                   metavar="JSON",
                   help="conformance results (sm5 conform --json), one or more per implementation")
    p.add_argument("--mutants", type=Path, default=None, metavar="JSON",
                   help="mutant results (sm5 mutants --json)")
    p.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    writable_folder(args.out, "--out")
    spec = load_spec(args.spec) if args.spec else load_default()
    path = build_report(args.out, spec=spec, vector_paths=args.vectors,
                        proofs_json=args.proofs, results_jsons=args.results,
                        mutants_json=args.mutants)
    print(path)
    return 0
