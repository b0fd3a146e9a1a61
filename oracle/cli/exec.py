"""``sm5 exec``: run a program on a state and print the oracle's verdict."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sm5.oracle.asm import parse_program
from sm5.oracle.errors import StateError
from sm5.oracle.execution.executor import execute
from sm5.oracle.machine.state import expected_to_json, state_from_json, step_to_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "exec", help="execute a program on a state (vector format) and print the result",
        description="Input: a JSON file holding {program, target, runtime, state} (a vector "
        "line works), or --program/--state flags. Output: outcomes, clauses fired and the "
        "expected final state as JSON; a program of several instructions also prints its steps "
        "(each step's clauses, its concrete runs, and whether it was widened).")
    p.add_argument("input", nargs="?", type=Path, help="JSON file ('-' for standard input)")
    p.add_argument("--program", action="append", default=None, metavar="LINE",
                   help="an asm line (repeat for several lines)")
    p.add_argument("--state", default=None, metavar="JSON", help="the state as JSON text")
    p.add_argument("--target", default=None, help="target such as cs_5_0 (default cs_5_0)")
    p.add_argument("--runtime", default=None, help="runtime 11.0 or 11.1 (default 11.0)")
    p.set_defaults(handler=run_exec)


def _load_input(args: argparse.Namespace) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if args.input is not None:
        where = "<stdin>" if str(args.input) == "-" else str(args.input)
        try:
            text = sys.stdin.read() if where == "<stdin>" else args.input.read_text("utf-8")
            loaded = json.loads(text)
        except OSError as exc:
            raise StateError(f"cannot read: {exc.strerror}", where=where) from None
        except json.JSONDecodeError as exc:
            raise StateError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                             where=where) from None
        if not isinstance(loaded, dict):
            raise StateError("expected a JSON object", where=where)
        doc.update(loaded)
    if args.program:
        doc["program"] = args.program
    if args.state is not None:
        try:
            doc["state"] = json.loads(args.state)
        except json.JSONDecodeError as exc:
            raise StateError(f"not JSON: {exc.msg} at column {exc.colno}", where="--state") \
                from None
    if args.target:
        doc["target"] = args.target
    if args.runtime:
        doc["runtime"] = args.runtime
    if "program" not in doc:
        raise StateError("no program: give a JSON file with 'program' or --program lines")
    program = doc["program"]
    if not isinstance(program, list) or not all(isinstance(x, str) for x in program):
        raise StateError("field program: expected a list of asm lines")
    return doc


def run_exec(args: argparse.Namespace) -> int:
    doc = _load_input(args)
    program = parse_program(doc["program"], source="program")
    state = state_from_json(doc.get("state", {}))
    result = execute(program, state, target=str(doc.get("target", "cs_5_0")),
                     runtime=str(doc.get("runtime", "11.0")))
    out: dict[str, Any] = {"outcomes": list(result.outcomes), "clauses": list(result.clauses)}
    if result.rule is not None:
        out["rule"] = result.rule
        out["reason"] = result.reason
    if result.state is not None:
        out["state"] = expected_to_json(result.state)
    if len(result.steps) > 1:
        out["steps"] = [step_to_json(step) for step in result.steps]
    print(json.dumps(out, sort_keys=True, indent=2))
    return 0
