"""Text-measure margin per template: is a page always closer to its noisy copy than to
any other page of its own template?

    python bench/textsim.py                  # all templates, up to 150 pages each
    python bench/textsim.py --pages 60 -v    # fewer pages; -v prints the closest pairs

Templates are real documentation sites from Debian packages, installed here when missing (apt-get
under ``flock /tmp/apt.lock``; packages already present are skipped): python3-doc (Sphinx),
postgresql-doc-15 (DocBook), apache2-doc (the httpd manual), git-doc (AsciiDoc man pages),
debian-reference-en/-zh-cn/-ja (DocBook; Chinese and Japanese are CJK templates of their own),
and, when ``../shared/data/article-extraction-benchmark`` exists, its article pages (many sites,
one "template" for the bench).

Each page gets a noisy copy made the way real servers vary a page between requests: a rotating
banner with an id, a "generated at <timestamp> / request id" line and a list of 5 randomly chosen
"recommended" links (titles of other pages of the template) inside the content, a CSRF token
(meta and hidden input), and ~3 % of the words of the text changed. Both go through the shipped
feature code (``core.features.compute_features``: extraction, list-page text, SimHash, MinHash,
exact-copy hash) and are compared with the shipped text measure (``core.match.similarity.text_sim``).
Pages that are not eligible for clustering (less than 200 characters of text, HTML under 1 KB:
never compared by anything) are left out.

Per template: ``copy_simhash_max`` = the largest SimHash distance of a page to its copy (the
candidate filter must reach it), ``copy_min`` = the lowest similarity of a page to its noisy copy, ``diff_max`` = the
highest similarity between two different pages (pairs whose main text is identical are the same
content and are counted apart as ``same_text``), ``margin`` = copy_min - diff_max; and what the
shipped decision (``core.match.similarity.compare``: text, structure, heading and prose length
checks; no screenshot, so rule 1 needs structure) says: how many copies are duplicates of their
page, how many are clustered with it (the decision and the candidate join: SimHash within the
distance or the same h1, or title on a page without an h1), and how many pairs of different pages
are duplicates (a unique page lost). The last line:

    templates=N pages=N worst_margin=X worst_template=NAME
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import re
import subprocess
import sys
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.fingerprints import hamming
from scrapy_websim.core.match.cluster import cluster, is_eligible
from scrapy_websim.core.match.similarity import DEFAULT_DECISION_PARAMS, compare, text_sim
from scrapy_websim.core.match.template import Templates, templates_of_records
from scrapy_websim.core.types import PageRecord
from scrapy_websim.testing.sites import noisy_copy, title_of  # the same noise as the end-to-end test's copies

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_ARTICLES = os.path.join(HERE, "..", "..", "shared", "data", "article-extraction-benchmark", "html")

#: name -> (Debian package, glob of its pages)
TEMPLATES = {
    "python3-doc": ("python3-doc", "/usr/share/doc/python3-doc/html/**/*.html"),
    "postgresql-doc": ("postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html/*.html"),
    "apache2-doc": ("apache2-doc", "/usr/share/doc/apache2-doc/manual/en/**/*.html"),
    "git-doc": ("git-doc", "/usr/share/doc/git-doc/*.html"),
    "debian-reference-en": ("debian-reference-en", "/usr/share/debian-reference/*.en.html"),
    "debian-reference-zh-cn": ("debian-reference-zh-cn", "/usr/share/debian-reference/*.zh-cn.html"),
    "debian-reference-ja": ("debian-reference-ja", "/usr/share/debian-reference/*.ja.html"),
}



def ensure_packages(names) -> None:
    missing = [p for p in names if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return
    print(f"installing {' '.join(missing)}", file=sys.stderr)
    prefix = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(prefix + ["flock", "/tmp/apt.lock", "apt-get", "install", "-y", "--no-install-recommends"]
                   + missing, check=False)


def template_files(pattern: str, limit: int):
    files = sorted(f for f in glob.glob(pattern, recursive=True) if os.path.getsize(f) >= 1024)
    if len(files) > limit:  # evenly spaced: every part of the site, deterministic
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


def features(url: str, html: str, params: FeatureParams) -> PageRecord:
    """The page's record as a crawl makes it (the title is what the browser reports)."""
    rec = PageRecord(id=0, url=url, status_code=200, content_type="text/html", html_len=len(html.encode()),
                     title=title_of(html))
    compute_features(rec, html, b"", params)
    return rec


def _clustered(page: PageRecord, copy: PageRecord, templates: Templates) -> bool:
    """Does the shipped clustering (candidate join, then the decision) put a page and its copy in
    one cluster? A pair the decision accepts is lost when it is not a candidate (SimHash beyond
    the distance, no shared h1 or, without one, title)."""
    a, b = replace(page, id=1), replace(copy, id=2)
    records = {1: a, 2: b}
    result = cluster([a, b], lambda x, y: compare(records[x], records[y],
                                                  template=templates.for_pair(records[x], records[y])))
    return len(result.clusters) == 1


def measure(name: str, files, params: FeatureParams, verbose: bool, use_templates: bool = True):
    pages = []
    for f in files:
        opener = gzip.open if f.endswith(".gz") else open
        with opener(f, "rt", encoding="utf-8", errors="replace") as fh:
            pages.append((f, fh.read()))
    titles = []
    for _, html in pages:
        m = re.search(r"<title[^>]*>(.*?)</title>", html, re.S | re.I)
        if m and m.group(1).strip():
            titles.append(re.sub(r"\s+", " ", m.group(1)).strip()[:80])
    titles = titles or ["Overview"]
    recs, copies = [], []
    for i, (f, html) in enumerate(pages):
        url = f"http://{name}.test/{f.lstrip('/')}"  # one site per template, its copies on it too
        rec = features(url, html, params)
        if not is_eligible(rec):  # too little text to be clustered at all
            continue
        recs.append(replace(rec, id=2 * i + 1))
        copies.append(replace(features(url + "?copy", noisy_copy(html, titles, seed=i), params), id=2 * i + 2))
    templates = templates_of_records(recs + copies) if use_templates else Templates()

    def tsim(a, b):
        return text_sim(a, b, template=templates.for_pair(a, b))

    def cmp(a, b):
        return compare(a, b, template=templates.for_pair(a, b))

    print(f"  template: {templates.summary()}")
    copy_sims = [(tsim(a, b), a.url) for a, b in zip(recs, copies)]
    copy_bits = max(hamming(a.simhash, b.simhash) for a, b in zip(recs, copies))
    copy_min = min(copy_sims)
    diff_max, same_text, diff_sims, diff_dups = (0.0, "", ""), 0, [], []
    for i in range(len(recs)):
        for j in range(i + 1, len(recs)):
            a, b = recs[i], recs[j]
            if a.text_hash == b.text_hash:
                same_text += 1
                continue
            s = tsim(a, b)
            diff_sims.append(s)
            if s > diff_max[0]:
                diff_max = (s, a.url, b.url)
            if s >= DEFAULT_DECISION_PARAMS.rule1_jaccard and cmp(a, b).is_duplicate:
                diff_dups.append((os.path.basename(a.url), os.path.basename(b.url)))
    margin = copy_min[0] - diff_max[0]
    below = {t: sum(1 for v, _ in copy_sims if v < t) for t in (0.4, 0.5, 0.6)}
    above = {t: sum(1 for v in diff_sims if v >= t) for t in (0.3, 0.4)}
    copy_dups = sum(cmp(a, b).is_duplicate for a, b in zip(recs, copies))
    copy_clustered = sum(_clustered(a, b, templates) for a, b in zip(recs, copies))
    print(f"  copies below 0.4/0.5/0.6: {below[0.4]}/{below[0.5]}/{below[0.6]}; "
          f"different pairs at >= 0.3/0.4: {above[0.3]}/{above[0.4]}")
    print(f"  shipped decision (no screenshot): copies_duplicate={copy_dups}/{len(recs)} "
          f"copies_clustered={copy_clustered}/{len(recs)} "
          f"different_duplicate={len(diff_dups)} {' '.join('~'.join(p) for p in diff_dups[:5])}".rstrip())
    print(f"{name}: pages={len(recs)} copy_min={copy_min[0]:.3f} diff_max={diff_max[0]:.3f} "
          f"margin={margin:.3f} same_text_pairs={same_text} copy_simhash_max={copy_bits}")
    if verbose:
        print(f"  lowest copy: {copy_min[1]}")
        print(f"  closest different pages: {diff_max[1]} {diff_max[2]}")
        worst = sorted(copy_sims)[:3]
        print("  copy sims (lowest 3):", ", ".join(f"{s:.3f} {os.path.basename(u)}" for s, u in worst))
    return len(recs), margin


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=150, help="pages per template (default 150)")
    parser.add_argument("--only", nargs="*", help="template names to run")
    parser.add_argument("--no-install", action="store_true", help="do not apt-get missing packages")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--no-templates", action="store_true", help="judge pages whole (no site templates)")
    args = parser.parse_args(argv)
    names = [n for n in TEMPLATES if not args.only or n in args.only]
    if not args.no_install:
        ensure_packages(sorted({TEMPLATES[n][0] for n in names}))
    params = FeatureParams()
    results = []
    for name in names:
        files = template_files(TEMPLATES[name][1], args.pages)
        if len(files) < 2:
            print(f"{name}: skipped ({len(files)} pages; package {TEMPLATES[name][0]} missing?)")
            continue
        results.append((name,) + measure(name, files, params, args.verbose, not args.no_templates))
    if os.path.isdir(SHARED_ARTICLES) and (not args.only or "articles" in args.only):
        files = template_files(os.path.join(SHARED_ARTICLES, "*.html*"), args.pages)
        if len(files) >= 2:
            results.append(("articles",) + measure("articles", files, params, args.verbose, not args.no_templates))
    if not results:
        print("templates=0 pages=0 worst_margin=nan worst_template=none")
        return 1
    worst = min(results, key=lambda r: r[2])
    print(f"templates={len(results)} pages={sum(r[1] for r in results)} "
          f"worst_margin={worst[2]:.3f} worst_template={worst[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
