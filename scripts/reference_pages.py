"""Regenerate (or check) the instruction reference of the documentation site.

One page per instruction in docs/instructions/, and its index, generated from spec/, tests/hand/,
vectors/golden/ and conformance/vkd3d/measured.json (sm5.reports.reference), and their entries in
mkdocs.yml's navigation; checked in, so a change of the data shows in review as a change of the
pages.

    python scripts/reference_pages.py          # rewrite docs/instructions/
    python scripts/reference_pages.py --check  # exit 1 if a page is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sm5.oracle.errors import Sm5Error
from sm5.oracle.files.atomic import atomic_write_text
from sm5.oracle.model.spec import load_spec
from sm5.reports.reference import pages, stale, with_navigation

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "instructions"
CONFIG = ROOT / "mkdocs.yml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = parser.parse_args(argv)
    try:
        wanted = pages(load_spec(ROOT / "spec"), ROOT)
        config = CONFIG.read_text(encoding="utf-8")
        navigation = with_navigation(config, wanted, str(CONFIG.name))
    except Sm5Error as exc:
        print(f"reference_pages: error: {exc}", file=sys.stderr)
        return 2
    changed = stale(FOLDER, wanted) + ([CONFIG.name] if navigation != config else [])
    if args.check:
        if changed:
            print(f"docs/instructions: {len(changed)} page(s) out of date ({', '.join(changed[:5])}"
                  f"{', ...' if len(changed) > 5 else ''}); run scripts/reference_pages.py",
                  file=sys.stderr)
            return 1
        return 0
    if navigation != config:
        atomic_write_text(CONFIG, navigation)
    for name in changed:
        if name == CONFIG.name:
            continue
        path = FOLDER / name
        if name in wanted:
            atomic_write_text(path, wanted[name])
        else:
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
