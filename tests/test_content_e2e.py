"""Content clusters on a real multi-template site, crawled with Chromium.

The site is built from Debian documentation packages (python3-doc, postgresql-doc-15, git-doc,
debian-reference-zh-cn/-ja) and served by three real nginx servers on 127.0.0.1 (see
``scrapy_websim/testing/sites.py``): A, an exact mirror B on another port, and C adding a signature line with its
port and the request time. It has detail pages of three templates (including different pages that
share most of their text: git-fetch / git-pull, the DROP pages of PostgreSQL), index pages
(Python's genindex), nginx ``autoindex`` directory listings, SSI noisy copies (a request id and the
time change on every request), a 301 redirect and Chinese and Japanese pages on two ports.
The URL list is shuffled. The answer is known: every group together, nothing else together.
"""

import json
import os
import random

import pytest

from scrapy_websim.testing import sites
from scrapy_websim.testing.crawl import by_url, crawl, load, run_websim
from scrapy_websim.testing.servers import have

pytestmark = [
    pytest.mark.crawl,
    pytest.mark.skipif(not have("nginx") or not sites.available(),
                       reason="needs nginx and the Debian doc packages (scripts/setup.sh)"),
]

SPEC = sites.DocSpec(
    sections={
        "py": (sites.PY + "/library", ["fnmatch.html", "glob.html"]),
        "pyidx": (sites.PY, ["genindex-Q.html", "genindex-Z.html"]),
        "pg": (sites.PG, ["sql-droptable.html", "sql-dropview.html", "sql-dropindex.html"]),
        "git": (sites.GIT, ["git-fetch.html", "git-pull.html"]),
    },
    listing_fill=12, mirror_b=1, mirror_c=2, noisy=5, redirects=1,
    cjk=["apa.zh-cn.html", "apa.ja.html"],
)


@pytest.fixture(scope="module")
def site_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("content")
    site = sites.doc_site(SPEC)
    with sites.serve(site) as bases:
        urls = [sites.resolve(u, bases) for u in site.urls]
        shuffled = urls[:]
        random.Random(11).shuffle(shuffled)
        features = str(tmp / "features.jsonl")
        out = crawl(tmp, shuffled, extra=["--features-file", features, "-t", "8"], timeout=420)
        yield {"site": site, "bases": bases, "urls": shuffled, "out": out, "rows": by_url(out["data"]),
               "features": features, "tmp": tmp}


def _cluster_of(rows):
    return {u: r["cluster_id"] for u, r in rows.items()}


def test_every_url_once_and_every_group_in_one_cluster_nothing_else_together(site_crawl):
    rows, site, bases = site_crawl["rows"], site_crawl["site"], site_crawl["bases"]
    assert [r["url"] for r in site_crawl["out"]["data"]["urls"]] == site_crawl["urls"]
    for members in site.groups:
        urls = [sites.resolve(m, bases) for m in members]
        ids = {rows[u]["cluster_id"] for u in urls}
        if len(urls) > 1:
            assert len(ids) == 1 and "" not in ids, {u: (rows[u]["cluster_id"], rows[u]["match_rule"],
                                                        rows[u]["content_sim"], rows[u]["structure_sim"]) for u in urls}
    scores = sites.pair_scores(site, bases, _cluster_of(rows))
    assert scores["false_pairs"] == 0, scores
    assert scores["recall"] == 1.0, scores


def test_exact_mirrors_on_another_port_share_the_cluster(site_crawl):
    rows, bases = site_crawl["rows"], site_crawl["bases"]
    for path in ("/d/pg/sql-droptable.html", "/d/git/git-fetch.html", "/d/pyidx/genindex-Q.html",
                 "/cjk/apa.zh-cn.html", "/cjk/apa.ja.html"):
        a, b = rows[bases["A"] + path], rows[bases["B"] + path]
        assert a["cluster_id"] and a["cluster_id"] == b["cluster_id"]
        assert a["cluster_kind"] == "content"
        # identical main text: 1.0 against each other, or the same similarity to another canonical
        # (a noisy copy has the longest text and can be the canonical)
        if a["is_canonical"] or b["is_canonical"]:
            assert 1.0 in (a["content_sim"], b["content_sim"])
        else:
            assert a["content_sim"] == b["content_sim"]


def test_list_pages_are_eligible_not_thin_and_told_apart(site_crawl):
    rows, bases = site_crawl["rows"], site_crawl["bases"]
    listings = {name: [rows[bases[s] + f"/d/{name}/"] for s in "ABC"] for name in SPEC.sections}
    ids = set()
    for name, group in listings.items():
        assert all(r["cluster_kind"] == "content" for r in group), [(r["url"], r["cluster_kind"]) for r in group]
        assert len({r["cluster_id"] for r in group}) == 1
        ids.add(group[0]["cluster_id"])
    assert len(ids) == len(listings)  # four directories, four clusters
    q, z = rows[bases["A"] + "/d/pyidx/genindex-Q.html"], rows[bases["A"] + "/d/pyidx/genindex-Z.html"]
    assert q["page_type"] == z["page_type"] == "list"
    assert q["cluster_id"] != z["cluster_id"]


def test_pages_sharing_most_of_their_text_stay_apart(site_crawl):
    rows, bases = site_crawl["rows"], site_crawl["bases"]
    fetch, pull = rows[bases["A"] + "/d/git/git-fetch.html"], rows[bases["A"] + "/d/git/git-pull.html"]
    assert fetch["cluster_id"] != pull["cluster_id"]
    drops = {rows[bases["A"] + f"/d/pg/{p}"]["cluster_id"] for p in SPEC.sections["pg"][1]}
    assert len(drops) == 3


def test_noisy_copies_join_their_page(site_crawl):
    rows, bases = site_crawl["rows"], site_crawl["bases"]
    for path in ("/d/git/git-fetch.html", "/d/py/fnmatch.html"):
        name = path.split("/")[2]
        noisy = rows[bases["A"] + f"/n/{name}/" + path.rsplit("/", 1)[1]]
        assert noisy["cluster_id"] == rows[bases["A"] + path]["cluster_id"]
        assert noisy["match_rule"] in ("rule1", "canonical")
        assert 0.0 < noisy["content_sim"] < 1.0 or noisy["is_canonical"]


def test_reclustering_the_features_in_another_order_gives_the_same_clusters(site_crawl):
    tmp = site_crawl["tmp"]
    with open(site_crawl["features"], encoding="utf-8") as fh:
        header, *lines = [line for line in fh if line.strip()]
    assert '"websim-features"' in header  # the header stays first: websim cluster checks it
    random.Random(5).shuffle(lines)
    lines.insert(0, header)
    shuffled = os.path.join(str(tmp), "shuffled.jsonl")
    with open(shuffled, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
    out = os.path.join(str(tmp), "again.json")
    proc = run_websim(["cluster", shuffled, "-o", out], cwd=str(tmp))
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = load(out)
    first = site_crawl["out"]["data"]
    key = lambda d: sorted((r["id"], r["cluster_id"], r["is_canonical"], r["match_rule"]) for r in d["urls"])  # noqa: E731
    assert key(again) == key(first)
    assert json.dumps(sorted(c["cluster_id"] for c in again["clusters"])) == json.dumps(
        sorted(c["cluster_id"] for c in first["clusters"]))
