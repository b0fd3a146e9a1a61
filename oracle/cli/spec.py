"""``sm5 spec check``: validate spec/ and print a summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from sm5.oracle.model.spec import default_root, load_spec


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    spec = sub.add_parser("spec", help="work with the specification data")
    spec_sub = spec.add_subparsers(dest="spec_command", required=True, metavar="SUBCOMMAND")
    check = spec_sub.add_parser("check", help="validate every spec file and print a summary")
    check.add_argument("--spec", type=Path, default=None,
                       help="spec folder (default: the built-in spec/)")
    check.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace) -> int:
    root = args.spec or default_root()
    spec = load_spec(root)
    print(f"spec {spec.version}: {len(spec.instructions)} instructions, "
          f"{sum(len(i.clauses) for i in spec.instructions.values())} clauses, "
          f"{sum(len(i.errata) for i in spec.instructions.values())} errata, "
          f"{len(list(spec.legality_rules()))} legality rules, "
          f"{len(spec.model.targets)} targets")
    for ins in spec.instructions.values():
        print(f"  {ins.name:<18} opcode 0x{ins.opcode:02X}  {len(ins.operands)} operands  "
              f"{len(ins.clauses):>2} clauses  {len(ins.rules):>2} rules  "
              f"{len(ins.errata)} errata")
    control = spec.control
    rules = {r.id: r for r in spec.control_rules}
    print(f"flow control: {len(control.instructions)} instructions, "
          f"{sum(len(c.clauses) for c in control.instructions.values())} clauses, "
          f"{len(control.rules)} structure rules, {len(control.errata)} errata "
          f"(limits: nesting {control.limits.nesting}, call depth "
          f"{control.limits.call_depth}, {control.limits.steps} steps)")
    for c in control.instructions.values():
        own = sum(1 for r in rules if r.startswith(c.name + "."))
        test = "_z/_nz" if c.test else ""
        print(f"  {c.name:<18} opcode 0x{c.opcode:02X}  {len(c.operands)} operands  "
              f"{len(c.clauses):>2} clauses  {own:>2} rules  effect {c.effect} {test}".rstrip())
    for rule in control.rules:
        print(f"  {rule.id}")
    print("ok")
    return 0
