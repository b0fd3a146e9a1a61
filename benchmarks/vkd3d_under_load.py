"""Do vkd3d's verdicts depend on the machine's load? The same selection, run idle and beside
busy processes, must judge every vector the same.

Runs ``sm5 conform --impl vkd3d`` on a selection twice, each time with an empty Mesa shader
cache so both runs compile everything: once on the machine as it is, once beside ``--busy``
CPU-bound processes (default 2, one per core of a 2-core machine). The default selection holds
the ``limit`` vectors (g# up to 32 KB), imm_atomic_iadd's cells (out-of-bounds g# accesses among
them, which run isolated in child processes) and store_structured's witnesses. The verdicts are
compared vector by vector: a time limit turned into a ``timeout``, or any changed status, is a
failure (exit 1). (An isolated out-of-bounds g# access may or may not kill lavapipe; the
expectations file makes either an expected failure, so the statuses still agree.) Prints both
runs' counts and wall times.

    python benchmarks/vkd3d_under_load.py [--busy 2] [--select GLOBS]
Needs conformance/vkd3d/setup.sh to have run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXPECT = ROOT / "conformance" / "vkd3d" / "expectations.yaml"
DEFAULT_SELECT = "*/limit/*,imm_atomic_iadd/cell/*,store_structured/witness/*"
BUSY = "while True: pass"


def conform(select: str, out: Path) -> tuple[float, dict[str, Any]]:
    """One ``sm5 conform`` run with a fresh Mesa cache: (wall seconds, results document)."""
    with tempfile.TemporaryDirectory(prefix="sm5-mesa-cache-") as cache:
        env = {**os.environ, "MESA_SHADER_CACHE_DIR": cache}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sm5", "conform", "--impl", "vkd3d", "--quiet",
                        "--select", select, "--expect", str(EXPECT), "--json", str(out)],
                       cwd=ROOT, env=env, check=False)
        seconds = time.perf_counter() - started
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return seconds, doc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes beside the run")
    parser.add_argument("--select", default=DEFAULT_SELECT, help="vector ids or globs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sm5-load-") as tmp:
        idle_s, idle = conform(args.select, Path(tmp) / "idle.json")
        print(f"as is:        {idle_s:6.1f} s  {idle['counts']}", flush=True)
        busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
        try:
            load_s, loaded = conform(args.select, Path(tmp) / "loaded.json")
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
        print(f"{args.busy} busy beside: {load_s:6.1f} s  {loaded['counts']}")
    before, after = idle["results"], loaded["results"]
    changed = sorted(k for k in before if before[k]["status"] != after.get(k, {}).get("status"))
    timeouts = sorted(k for k, v in after.items() if v["status"] == "timeout")
    print(f"{len(before)} vectors; {len(changed)} verdicts changed under load; "
          f"{len(timeouts)} time-outs under load")
    for key in changed[:10]:
        print(f"  {key}: {before[key]['status']} -> {after[key]['status']} "
              f"({after[key]['reason'][:120]})")
    return 1 if changed or timeouts or set(before) != set(after) else 0


if __name__ == "__main__":
    sys.exit(main())
