"""``sm5 spec check``: validate spec/ and print a summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from sm5.oracle.model.spec import Spec, default_root, load_spec


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
    _print_program_state(spec)
    print("ok")
    return 0


def _print_program_state(spec: Spec) -> None:
    """The register files that stand for r#, their declarations, rules and errata."""
    decls = spec.declarations
    files = [f for f in spec.model.register_files if f.stands_for]
    names = {f.name for f in files}
    declaring = [d for d in decls.declarations.values() if set(d.registers) & names]
    applying = {d.name for d in declaring} | {d.name for d in decls.declarations.values()
                                              if not d.registers}
    rules = [r for r in decls.rules if applying.intersection(r.applies)]
    print(f"program state: {len(files)} register files, {len(declaring)} declarations, "
          f"{len(rules)} declaration rules, {len(decls.program_rules)} program rules, "
          f"{len(decls.errata)} errata")
    for f in files:
        elements = (f"elements {f.elements}, past the end: {f.out_of_range}"
                    if f.elements else "no elements")
        roles = ", ".join(f"{role} {of}#" for role, of in sorted(f.stands_for.items()))
        print(f"  {f.name:<18} {f.components} components  {elements}; stands for {roles}")
    for d in declaring:
        print(f"  {d.name:<28} declares {', '.join(d.registers)}"
              + (f"  numbers {', '.join(d.numbers)}" if d.numbers else "")
              + (f"  access {' | '.join(d.access)}" if d.access else ""))
    for rule in rules:
        print(f"  {rule.id}")
    for rule in decls.program_rules:
        print(f"  {rule.id}")
