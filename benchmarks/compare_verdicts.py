"""Compare two results documents (``sm5 conform ... --json FILE``) vector by vector.

For checking that a change to an adapter or the engine keeps every verdict: run the same
selection before and after, then ``python benchmarks/compare_verdicts.py BEFORE AFTER``.

A verdict is the same when its status, reason and diffs are. A vector whose run crashed in
either document (an isolated vector: whether an out-of-bounds ``g#`` access kills lavapipe
depends on the process's memory layout, so it varies between runs) counts apart, compared by
nothing. Exit status 1 when a vector is in one document only or any other verdict differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _results(path: Path) -> Mapping[str, Mapping[str, Any]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        results = doc["results"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{path}: not a results document ({exc})") from None
    if not isinstance(results, dict):
        raise SystemExit(f"{path}: results is not an object")
    return results


def _crashed(verdict: Mapping[str, Any]) -> bool:
    return verdict.get("status") == "crash" or "crash" in str(verdict.get("reason", ""))


def _key(verdict: Mapping[str, Any]) -> tuple[Any, ...]:
    return (verdict.get("status"), verdict.get("reason", ""), tuple(verdict.get("diffs", ())))


def main() -> int:
    parser = argparse.ArgumentParser(description="compare two sm5 results documents")
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    before, after = _results(args.before), _results(args.after)
    only = sorted(set(before) ^ set(after))
    same = crashed = 0
    differ: list[str] = []
    for vector_id in sorted(set(before) & set(after)):
        a, b = before[vector_id], after[vector_id]
        if _crashed(a) or _crashed(b):
            crashed += 1
        elif _key(a) == _key(b):
            same += 1
        else:
            differ.append(vector_id)
    print(f"{same} identical, {len(differ)} differ, {crashed} crashed in either run (not "
          f"compared), {len(only)} in one document only")
    for vector_id in differ[:20]:
        print(f"  {vector_id}: {before[vector_id].get('status')} -> "
              f"{after[vector_id].get('status')}")
    for vector_id in only[:20]:
        print(f"  {vector_id}: only in {'before' if vector_id in before else 'after'}")
    return 1 if differ or only else 0


if __name__ == "__main__":
    sys.exit(main())
