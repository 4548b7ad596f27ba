"""Every feature value of a large corpus, saved once and checked after a change that must not change
any (a faster walk, a cache): the bench-side twin of ``tests/test_features_regression.py``.

    python bench/features_regress.py save  [--out FILE] [--code DIR]  # with the code as it is
    python bench/features_regress.py check [--out FILE] [--every N] [--only PREFIX]
    python bench/features_regress.py diff  --out FILE --against FILE2   # two saves, side by side

``--code DIR``: compute with the ``scrapy_websim`` (and ``tests/features_snapshot.py``) of another
checkout, e.g. main's (``git archive main | tar -x -C DIR``), so that one command saves main's
values and the next checks the branch's against them.

For each page, :func:`tests.features_snapshot.snapshot`: every ``PageRecord`` field
``compute_features`` fills and what each public feature function returns, stored whole (gzipped
JSON lines, default ``/tmp/websim-features-golden.jsonl.gz``). ``check`` recomputes them and
prints each page and value that differs; its last line is ``pages=<n> differing=<n> values=<n>``
and it exits 1 when anything differs.

Pages: the 181 pages of ``/work/shared/data/article-extraction-benchmark/html``, every page of
python3-doc, postgresql-doc and git-doc under ``/usr/share/doc``, the hostile test server's pages
(made without a server, the million-node page included), the test's hand-written edge pages and
300 seeded random pages; then every page of the kept crawls under ``/work/kept`` (each
``pages.jsonl.gz``: real applications, wikis, doc platforms, a server fleet, rendered by Chromium),
keyed ``kept/<set>/<line>`` (``--every`` and ``--only`` pick a share of them).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import sys
import time
from typing import Dict, Iterator, List


def _code_dir(argv: List[str]) -> str:
    """The checkout whose code computes the values: ``--code DIR``, else this one."""
    for i, arg in enumerate(argv):
        if arg == "--code" and i + 1 < len(argv):
            return os.path.abspath(argv[i + 1])
        if arg.startswith("--code="):
            return os.path.abspath(arg.split("=", 1)[1])
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


sys.path.insert(0, _code_dir(sys.argv))

from tests import features_snapshot as fs  # noqa: E402

ARTICLES = "/work/shared/data/article-extraction-benchmark/html"
DOCS = ["/usr/share/doc/python3.11/html", "/usr/share/doc/postgresql-doc-15/html", "/usr/share/doc/git-doc"]
KEPT = "/work/kept"
GOLDEN = "/tmp/websim-features-golden.jsonl.gz"


#: The kept crawls read (``KEPT/<set>/pages.jsonl.gz``; a missing one is skipped): a fixed list, so
#: that a crawl kept later does not change which pages ``--every`` picks.
KEPT_SETS = (
    "trac", "fossil", "cgit2", "c-datasette3", "c-logins2", "c-spa3", "blog2", "held-redmine", "held-hgweb",
    "held-roundup", "held-gitweb", "held2-mhonarc", "held2-phpmyadmin", "held2-spirit", "held3-devpi",
    "held3-helpdesk", "held3-wagtail", "wiki-short", "dokuwiki-short", "sites/docs", "sites/cjk",
    "platforms/javadoc", "platforms/doxygen", "platforms/mkdocs", "fleet/fleet",
)


def kept_pages() -> Iterator[fs.Page]:
    """Every page of the kept crawls of :data:`KEPT_SETS`, keyed by set and line (a crawl may
    hold two records of one id)."""
    for name in KEPT_SETS:
        path = os.path.join(KEPT, name, "pages.jsonl.gz")
        if not os.path.exists(path):
            continue
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line_no, line in enumerate(fh):
                item = json.loads(line)
                html = item.get("html") or ""
                yield f"kept/{name}/{line_no}", html, item["url"], fs._title(html)


def pages() -> Iterator[fs.Page]:
    for path in sorted(glob.glob(os.path.join(ARTICLES, "*.html.gz"))):
        html = gzip.decompress(open(path, "rb").read()).decode("utf-8", "replace")
        name = os.path.basename(path)[:-8]
        yield f"articles/{name}", html, f"http://127.0.0.1/{name}", fs._title(html)
    for root in DOCS:
        for path in sorted(glob.glob(os.path.join(root, "**", "*.html"), recursive=True)):
            html = open(path, "rb").read().decode("utf-8", "replace")
            rel = os.path.relpath(path, root)
            package = os.path.basename(root[:-5] if root.endswith("/html") else root)
            yield f"doc/{package}/{rel}", html, f"http://127.0.0.1/{rel}", fs._title(html)
    yield from fs.hostile_pages(fs.HOSTILE_ROUTES + ("/huge-title", "/million-nodes"))
    yield from fs.edge_pages()
    yield from fs.random_pages(300, seed=7, size=1500)
    yield from kept_pages()


def _selected(args: argparse.Namespace) -> Iterator[fs.Page]:
    for i, page in enumerate(pages()):
        if i % args.every == 0 and page[0].startswith(args.only):
            yield page


def save(args: argparse.Namespace) -> int:
    n = 0
    t0 = time.process_time()
    with gzip.open(args.out, "wt", encoding="utf-8") as fh:
        for key, html, url, title in _selected(args):
            fh.write(json.dumps({"key": key, "values": fs.snapshot(html, url, title)}, sort_keys=True) + "\n")
            n += 1
    print(f"saved {n} pages to {args.out} in {time.process_time() - t0:.0f} s CPU (code: {fs.__file__})")
    return 0


def _diff(old: Dict, new: Dict) -> List[str]:
    out = []
    for name in sorted(set(old) | set(new)):
        if old.get(name, "<missing>") != new.get(name, "<missing>"):
            a, b = json.dumps(old.get(name))[:300], json.dumps(new.get(name))[:300]
            out.append(f"  {name}\n    was {a}\n    now {b}")
    return out


def check(args: argparse.Namespace) -> int:
    golden = {}
    with gzip.open(args.out, "rt", encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            golden[item["key"]] = item["values"]
    n = differing = values = 0
    t0 = time.process_time()
    for key, html, url, title in _selected(args):
        if key not in golden:
            print(f"{key}: not in {args.out}")
            continue
        n += 1
        diffs = _diff(golden[key], fs.snapshot(html, url, title))
        if diffs:
            differing += 1
            values += len(diffs)
            print(f"{key}:\n" + "\n".join(diffs[:12]))
    print(f"checked in {time.process_time() - t0:.0f} s CPU (code: {fs.__file__})")
    print(f"pages={n} differing={differing} values={values}")
    return 1 if differing or not n else 0


def diff_files(args: argparse.Namespace) -> int:
    """Compare two saved files (``--out`` and ``--against``): what ``check`` reports, without
    computing anything (two saves, e.g. main's and the branch's, can run side by side)."""
    def load(path: str) -> Dict[str, Dict]:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return {item["key"]: item["values"] for item in map(json.loads, fh)}

    old, new = load(args.out), load(args.against)
    n = differing = values = 0
    for key in sorted(set(old) | set(new)):
        if key not in old or key not in new:
            print(f"{key}: only in {args.out if key in old else args.against}")
            differing += 1
            continue
        n += 1
        diffs = _diff(old[key], new[key])
        if diffs:
            differing += 1
            values += len(diffs)
            print(f"{key}:\n" + "\n".join(diffs[:12]))
    print(f"pages={n} differing={differing} values={values}")
    return 1 if differing or not n else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=("save", "check", "diff"))
    ap.add_argument("--out", default=GOLDEN)
    ap.add_argument("--every", type=int, default=1, help="only every Nth page")
    ap.add_argument("--only", default="", help="only pages whose key starts with this")
    ap.add_argument("--against", default="", help="diff: the second saved file")
    ap.add_argument("--code", default=None, help="the checkout whose code computes the values (default: this one)")
    args = ap.parse_args()
    if args.command == "diff":
        return diff_files(args)
    return save(args) if args.command == "save" else check(args)


if __name__ == "__main__":
    sys.exit(main())
