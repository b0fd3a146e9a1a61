"""``sm5 d3d11 stream``: write the D3D11 runner's input for a set of vectors.

The output is what ``sm5-d3d11-runner.exe FILE > results.jsonl`` reads on any Windows machine
(or under Wine); ``sm5 conform --impl results:results.jsonl`` then judges its answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sm5.conformance.d3d11.stream import Record, record_of, write_stream
from sm5.conformance.guards import request_vector
from sm5.conformance.run import iter_selected, vector_files
from sm5.oracle.errors import NotExpressible, Sm5Error
from sm5.oracle.files.atomic import atomic_write_bytes


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    d3d11 = sub.add_parser("d3d11", help="the D3D11 runner's input stream",
                           description="Tools for running the vectors through the D3D11 API "
                           "with runners/d3d11/runner.c.")
    actions = d3d11.add_subparsers(dest="d3d11_command", required=True, metavar="ACTION")
    stream = actions.add_parser(
        "stream", help="write the runner's input for the vectors",
        description="Write one record per executable vector (DXBC harness program and its UAVs "
        "as windows inside canary-filled buffers) into FILE for sm5-d3d11-runner.exe. Rejected "
        "vectors are left out, and so are those a compute harness cannot express (counted).")
    stream.add_argument("--vectors", type=Path, nargs="+", default=None, metavar="PATH",
                        help="vector files or folders (default: the golden set)")
    stream.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="the stream file to write")
    stream.set_defaults(handler=run_stream)


def run_stream(args: argparse.Namespace) -> int:
    records: list[Record] = []
    not_expressible = rejected = 0
    for _, line, vector in iter_selected(vector_files(args.vectors)):
        if vector.rejected:
            rejected += 1
            continue
        try:
            records.append(record_of(request_vector(vector)))
        except NotExpressible:
            not_expressible += 1
        except Sm5Error as exc:
            raise Sm5Error(exc.message, where=f"{vector.id} (line {line})") from None
    try:
        atomic_write_bytes(args.out, write_stream(records))
    except OSError as exc:
        raise Sm5Error(f"cannot write: {exc.strerror}", where=str(args.out)) from None
    print(f"wrote {len(records)} programs to {args.out}; left out {rejected} rejected and "
          f"{not_expressible} not expressible vectors")
    return 0
