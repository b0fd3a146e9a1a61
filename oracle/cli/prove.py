"""``sm5 prove``: check the theorems about the spec with z3 and print a table.

Exit code 1 when a theorem failed or ran out of time, 0 otherwise (a counterexample that the
theorem expects, such as the naive 32-bit wrap, is a success).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sm5.oracle.cli.options import writable_file
from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.model.spec import load_default, load_spec
from sm5.oracle.proofs import DEFAULT_WORK, canonical_json, results_to_json, run_all
from sm5.oracle.proofs.theorems.base import STATUSES, TheoremResult


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("prove", help="check the theorems about the spec with z3",
                       description="Partition, outcome consistency, in-bounds containment, "
                       "naive 32-bit wraps (counterexamples expected), availability and "
                       "evaluator agreement, per instruction.")
    p.add_argument("--json", type=Path, default=None, metavar="PATH",
                   help="also write the results (with witnesses) as JSON to PATH")
    p.add_argument("--work", type=int, default=DEFAULT_WORK, metavar="UNITS",
                   help="budget of z3 work per theorem, in z3's resource units (default "
                        f"{DEFAULT_WORK:,}); the results do not depend on the machine's load")
    p.add_argument("--timeout-ms", type=int, default=None, metavar="MS",
                   help="also a wall-clock limit per theorem (default: none; a theorem that "
                        "hits it may come out differently on a busier machine)")
    p.add_argument("--instruction", action="append", default=None, metavar="NAME",
                   help="only this instruction (repeat for several)")
    p.add_argument("--spec", type=Path, default=None,
                   help="spec folder (default: the built-in spec/)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes sharing out the instructions (default: one per CPU; "
                        "the results do not depend on it)")
    p.set_defaults(handler=run_prove)


def run_prove(args: argparse.Namespace) -> int:
    if args.work <= 0:
        raise Sm5Error(f"--work must be positive, not {args.work}")
    if args.timeout_ms is not None and args.timeout_ms <= 0:
        raise Sm5Error(f"--timeout-ms must be positive, not {args.timeout_ms}")
    if args.json is not None:
        writable_file(args.json, "--json")
    spec = load_spec(args.spec) if args.spec else load_default()
    if args.instruction:
        for name in args.instruction:
            if name not in spec.control.instructions:
                spec.instruction(name)  # unknown names are bad input
    if args.jobs < 1:
        raise Sm5Error(f"--jobs must be at least 1, not {args.jobs}")
    results = run_all(spec, work=args.work, timeout_ms=args.timeout_ms,
                      instructions=args.instruction, jobs=args.jobs)
    print(format_table(results))
    document = results_to_json(results)
    if args.json is not None:
        atomic_write_text(args.json, canonical_json(document))
    return 0 if document["ok"] else 1


def format_table(results: list[TheoremResult]) -> str:
    width = max([len(r.name) for r in results] + [len("theorem")])
    lines = [f"{'theorem':<{width}}  {'status':<26}  {'time':>8}"]
    for r in results:
        lines.append(f"{r.name:<{width}}  {r.status:<26}  {r.seconds * 1000:>6.0f}ms")
    for r in results:
        if r.status in ("failed", "timeout"):
            lines.append(f"{r.status.upper()} {r.name}: {r.detail}")
    counts = {s: sum(1 for r in results if r.status == s) for s in STATUSES}
    total = sum(r.seconds for r in results)
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items())
                 + f"; {total:.1f}s of checks (summed over the worker processes)")
    return "\n".join(lines)
