"""Pair precision / recall / F1 of a real crawl on sites with a known answer.

    python bench/sites.py                 # every site
    python bench/sites.py --only cjk      # one site
    python bench/sites.py --keep DIR      # keep each crawl in DIR/NAME (bench/appbench.py re-scores it)

Sites are built from Debian documentation packages by ``scrapy_websim/testing/sites.py`` and served by three
nginx servers on 127.0.0.1 (A; B, an exact mirror on another port; C, a mirror adding a signature
line with its port and the time): detail pages of several templates, nginx directory listings,
SSI noisy copies (request id and time change per request, banner, 5 random links, ~3 % of words),
301 redirects. ``docs``: python3-doc, postgresql-doc, git-doc pages (including pages that share
most of their text). ``cjk``: Chinese and Japanese debian-reference chapters. Each site is crawled
by ``python -m scrapy_websim.cli`` with the shipped defaults (URL list shuffled); one line per site:

    site=NAME urls=N precision=P recall=R f1=F false_pairs=K missed_pairs=M
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.testing import sites  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # noqa: E402  (bench/appbench.py)

SITES = {
    "docs": sites.DocSpec(
        sections={
            "py": (sites.PY + "/library", ["fnmatch.html", "glob.html", "shlex.html", "netrc.html",
                                            "bisect.html", "heapq.html", "colorsys.html", "keyword.html"]),
            "pyidx": (sites.PY, ["genindex-Q.html", "genindex-Z.html", "genindex-Y.html", "genindex-J.html"]),
            "pg": (sites.PG, ["sql-droptable.html", "sql-dropview.html", "sql-dropindex.html",
                              "sql-dropschema.html", "sql-droprole.html", "sql-dropuser.html",
                              "managing-databases.html", "contrib-dblink-get-connections.html"]),
            "git": (sites.GIT, ["git-fetch.html", "git-pull.html", "git-init-db.html", "git-init.html",
                                "git-stage.html", "git-add.html"]),
        },
        listing_fill=20, mirror_b=1, mirror_c=2, noisy=3, redirects=3,
    ),
    "cjk": sites.DocSpec(
        sections={
            "zh": (sites.DEBREF, ["apa.zh-cn.html", "ch08.zh-cn.html", "pr01.zh-cn.html", "ch03.zh-cn.html"]),
            "ja": (sites.DEBREF, ["apa.ja.html", "ch08.ja.html", "pr01.ja.html", "ch03.ja.html"]),
        },
        listing_fill=10, mirror_b=1, mirror_c=2, noisy=2, redirects=2,
    ),
}


def run_site(name: str, spec: sites.DocSpec, verbose: bool = False, keep: str = "") -> str:
    site = sites.doc_site(spec)
    with tempfile.TemporaryDirectory(prefix=f"websim-sites-{name}-") as tmp, sites.serve(site) as bases:
        workdir = os.path.join(keep, name) if keep else tmp
        return crawl_and_score(name, site, bases, workdir, verbose)


def crawl_and_score(name: str, site: sites.Site, bases: dict, tmp: str, verbose: bool = False) -> str:
    """Crawl the site's URLs (shuffled) with the shipped defaults and score the clusters against
    its groups; the one-line result (``site=NAME urls=N ...``). The servers must be up. ``tmp``
    gets the URL list, the truth, the result, the features (``websim cluster`` / ``websim
    explain``) and the pages' HTML (``python bench/appbench.py DIR [--refeature]`` re-scores them)."""
    urls = [sites.resolve(u, bases) for u in site.urls]
    truth, _ = appbench.site_truth(site, bases)
    appbench.save_truth(truth, tmp, name)
    try:
        appbench.crawl(urls, tmp)
    except RuntimeError as exc:
        return f"site={name} failed: {exc}"
    with open(os.path.join(tmp, "result.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    cluster_of = {row["url"]: row["cluster_id"] for row in data["urls"]}
    missing = len(set(urls) - set(cluster_of))
    s = sites.pair_scores(site, bases, cluster_of)
    if verbose:
        truth = {sites.resolve(m, bases): g for g, ms in enumerate(site.groups) for m in ms}
        rows = {row["url"]: row for row in data["urls"]}
        for u in sorted(truth, key=lambda x: (truth[x], x)):
            r = rows[u]
            print(f"  g{truth[u]:03d} {r['cluster_id'] or '-':16s} {r['match_rule'] or '-':9s} "
                  f"{r['content_sim']:.3f} {r['structure_sim']:.3f} {r['page_type']:8s} {r['status_code']} {u}")
    return (f"site={name} urls={len(urls)} missing={missing} precision={s['precision']:.3f} "
            f"recall={s['recall']:.3f} f1={s['f1']:.3f} false_pairs={s['false_pairs']} "
            f"missed_pairs={s['missed_pairs']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SITES))
    parser.add_argument("-v", "--verbose", action="store_true", help="print every URL's group and cluster")
    parser.add_argument("--keep", default="", help="keep each crawl in DIR/NAME (bench/appbench.py re-scores it)")
    args = parser.parse_args()
    for name in args.only or SITES:
        print(run_site(name, SITES[name], args.verbose, args.keep), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
