"""How the report grows with the spec: a synthetic spec of N instructions (default 200), made by
copying instruction files under new names and opcodes, with the golden vectors and the given
results renamed to match; prints the report's page count, the index's size and the largest page.

Usage: ``python benchmarks/report_scale.py --work DIR [--instructions N] [--results JSON...]
[--proofs JSON]`` (results from ``sm5 conform --json`` over the golden set, proofs from
``sm5 prove --json``). DIR receives the synthetic spec, vectors, results and report.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

from sm5.oracle.model.spec import default_root, load_spec
from sm5.reports import build_report
from sm5.reports.render import default_vector_paths


def _copies(spec_dir: Path, count: int) -> dict[str, str]:
    """Copy instruction files until the spec has ``count``; the copy's name -> the original's."""
    folder = spec_dir / "instructions"
    originals = sorted(folder.glob("*.yaml"))
    made: dict[str, str] = {}
    opcode = 0x200
    while len(originals) + len(made) < count:
        source = originals[len(made) % len(originals)]
        name = f"{source.stem}_copy{len(made) + 1}"
        text = re.sub(r"^name: \S+", f"name: {name}", source.read_text(encoding="utf-8"),
                      flags=re.MULTILINE)
        text = re.sub(r"^opcode: \S+", f"opcode: {hex(opcode)}", text, flags=re.MULTILINE)
        opcode += 1
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
        made[name] = source.stem
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--work", type=Path, required=True, help="a folder to write into")
    parser.add_argument("--instructions", type=int, default=200)
    parser.add_argument("--results", type=Path, nargs="*", default=[])
    parser.add_argument("--proofs", type=Path, default=None)
    args = parser.parse_args(argv)
    spec_dir, vectors = args.work / "spec", args.work / "vectors"
    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(default_root(), spec_dir,
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    made = _copies(spec_dir, args.instructions)
    vectors.mkdir(parents=True)
    golden = default_vector_paths()[0]
    for path in sorted(golden.glob("*.jsonl")):
        shutil.copyfile(path, vectors / path.name)
    for name, base in made.items():
        text = (golden / f"{base}.jsonl").read_text(encoding="utf-8")
        (vectors / f"{name}.jsonl").write_text(re.sub(rf"\b{base}\b", name, text),
                                               encoding="utf-8")
    results = []
    for n, path in enumerate(args.results):
        doc = json.loads(path.read_text(encoding="utf-8"))
        extra = {}
        for name, base in made.items():
            extra.update({name + vid[len(base):]: r for vid, r in doc["results"].items()
                          if vid.startswith(base + "/")})
        doc["results"].update(extra)
        results.append(args.work / f"results{n}.json")
        results[-1].write_text(json.dumps(doc), encoding="utf-8")
    start = time.perf_counter()
    index = build_report(args.work / "report", spec=load_spec(spec_dir), vector_paths=[vectors],
                         proofs_json=args.proofs, results_jsons=results)
    seconds = time.perf_counter() - start
    pages = sorted((index.parent / "instructions").glob("*.html"), key=lambda p: p.stat().st_size)
    total = sum(p.stat().st_size for p in pages) + index.stat().st_size
    print(f"{len(pages)} instruction pages and the index in {seconds:.1f} s; index "
          f"{index.stat().st_size / 1e3:.0f} KB; largest page {pages[-1].name} "
          f"{pages[-1].stat().st_size / 1e3:.0f} KB; all pages {total / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
