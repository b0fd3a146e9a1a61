"""``sm5 requests`` (write the requests of an offline run) and ``sm5 verify`` (judge its replies).

Both take the selection options of ``sm5 conform`` (``--vectors``, ``--select``, ``--shard``,
``--expect``, ``--capabilities``), so the requests written are those a live run with the same
options would send, and ``sm5 verify`` judges exactly them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sm5.conformance.cli import (
    capabilities_option,
    quiet_option,
    select_options,
    summary,
)
from sm5.conformance.expectations import load_expectations
from sm5.conformance.implementations import ImplementationError
from sm5.conformance.interface import CAPABILITIES
from sm5.conformance.junit import write_junit
from sm5.conformance.offline import replay_of, sent_vectors, write_requests
from sm5.conformance.run import (
    parse_select,
    parse_shard,
    planned_count,
    run,
    vector_files,
    write_results,
)
from sm5.oracle.cli.dxbc import export
from sm5.progress import Progress


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    requests = sub.add_parser(
        "requests", help="write the JSON Lines requests of an offline run",
        description="Write, one per line, the exact requests the JSON Lines protocol would send "
        "to an implementation for the selected vectors (never their expectations). Run them "
        "anywhere, write one reply per line in the protocol's format, then judge the replies "
        "with 'sm5 verify'.")
    requests.add_argument("--out", type=Path, required=True, metavar="FILE",
                          help="the requests file (JSON Lines)")
    requests.add_argument("--dxbc", type=Path, default=None, metavar="DIR",
                          help="also export each executable requested vector as a cs_5_0 DXBC "
                          "harness program plus index.json (as 'sm5 dxbc' does)")
    select_options(requests)
    capabilities_option(requests)
    requests.set_defaults(handler=run_requests)

    verify = sub.add_parser(
        "verify", help="judge the replies of an offline run",
        description="Judge replies produced elsewhere (one JSON object per line: id and one of "
        "state, rejected, unsupported; or crash or timeout with a reason) against the same "
        "selection of vectors 'sm5 requests' wrote, with the verdicts, results JSON and JUnit "
        "of a live run. Exit 1 when a vector fails, 2 when the replies file is unreadable.")
    verify.add_argument("--results", type=Path, required=True, metavar="FILE",
                        help="the replies file (JSON Lines)")
    verify.add_argument("--name", default=None, metavar="NAME",
                        help="the implementation's name in the results (default: "
                        "replay:<file name>)")
    select_options(verify)
    capabilities_option(verify)
    verify.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="write the results JSON here")
    verify.add_argument("--junit", type=Path, default=None, metavar="FILE",
                        help="write JUnit XML here")
    quiet_option(verify)
    verify.set_defaults(handler=run_verify)


def _capabilities(text: str | None) -> frozenset[str]:
    caps = frozenset(c.strip() for c in (text or "executes,validates").split(",") if c.strip())
    if not caps <= CAPABILITIES:
        raise ImplementationError(f"unknown capabilities {sorted(caps - CAPABILITIES)}; "
                                  f"expected a subset of {sorted(CAPABILITIES)}")
    return caps


def run_requests(args: argparse.Namespace) -> int:
    files = vector_files(args.vectors)
    vectors = list(sent_vectors(files, shard=parse_shard(args.shard),
                                select=parse_select(args.select),
                                expectations=load_expectations(args.expect),
                                capabilities=_capabilities(args.capabilities)))
    count = write_requests(args.out, vectors)
    print(f"wrote {count} requests to {args.out}")
    if args.dxbc is not None:
        try:
            index = export(list(files), args.dxbc, only={v.id for v in vectors})
        except OSError as exc:
            raise ImplementationError(f"cannot write: {exc.strerror}",
                                      where=str(exc.filename or args.dxbc)) from None
        print(f"wrote {len(index['vectors'])} DXBC programs and index.json to {args.dxbc} "
              f"({len(index['not_expressible'])} not expressible as a compute harness)")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    files = vector_files(args.vectors)
    shard, select = parse_shard(args.shard), parse_select(args.select)
    expectations = load_expectations(args.expect)
    impl = replay_of(args.results, args.name, _capabilities(args.capabilities))
    with Progress(f"verify {impl.name}", planned_count(files, shard, select),
                  quiet=args.quiet) as progress:
        report = run(impl, files, expectations, shard,
                     progress=lambda _id, _verdict: progress.update(), select=select)
    unused = sorted(set(impl.replies) - set(report.verdicts))
    if unused:
        print(f"sm5 verify: {len(unused)} replies answer no selected vector (first: "
              f"{unused[0]})", file=sys.stderr)
    if args.json is not None:
        write_results(args.json, report)
    if args.junit is not None:
        write_junit(args.junit, report)
    print(summary(report))
    return 1 if report.failed else 0
