"""The package's cyclomatic complexity by radon: no function above 15, at most 5 % above 10.

    python scripts/complexity.py            # exit 1 when a limit is passed; lists the worst
    python scripts/complexity.py --top 20   # also the 20 most complex functions

ruff's mccabe check (C90 in pyproject.toml) holds the first limit too; radon counts boolean
operators as well, so it is the stricter of the two, and it is what the share is counted by.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Tuple

from radon.complexity import cc_visit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "scrapy_websim")
MAX, HIGH, HIGH_SHARE = 15, 10, 0.05


def functions() -> List[Tuple[int, str]]:
    """``(complexity, "path:line name")`` of every function and method, closures included."""
    found: List[Tuple[int, str]] = []

    def add(blocks, path: str) -> None:
        for block in blocks:
            if hasattr(block, "methods"):  # a class: radon lists its methods on their own
                continue
            found.append((block.complexity, f"{os.path.relpath(path, ROOT)}:{block.lineno} {block.fullname}"))
            add(block.closures, path)

    for folder, _dirs, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as fh:
                    add(cc_visit(fh.read()), path)
    return found


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=0, help="list this many of the most complex functions")
    args = parser.parse_args(argv)
    found = sorted(functions(), reverse=True)
    over = [f for f in found if f[0] > MAX]
    high = [f for f in found if f[0] > HIGH]
    share = len(high) / len(found) if found else 0.0
    print(f"{len(found)} functions: {len(over)} above {MAX}, {len(high)} above {HIGH} ({share:.1%}; at most "
          f"{HIGH_SHARE:.0%})")
    for complexity, where in over or found[: args.top]:
        print(f"  {complexity:3d}  {where}")
    return 1 if over or share > HIGH_SHARE else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
