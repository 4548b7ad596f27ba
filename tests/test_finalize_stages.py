"""The end of a crawl as named stages: each callable alone, and chained they are the store's last
write (renumber_discovered), Finalizer.run and the rows."""

import copy
import gzip
from pathlib import Path

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord
from scrapy_websim.result import finalize, rows

DATA = Path(__file__).parent / "data" / "pagetype"
NOT_FOUND = ("<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center>"
             "<hr><center>nginx</center></body></html>")


def _page(page_id, url, html, status=200):
    rec = PageRecord(id=page_id, url=url, final_url=url, status_code=status, content_type="text/html",
                     html_len=len(html.encode("utf-8")), rendered=True)
    compute_features(rec, html, b"", FeatureParams())
    return rec


def _records():
    """Two near-identical copies of each of two real pages (two content clusters), two nginx 404s
    (a rule cluster), a distinct page, and two pages found by following links (provisional ids)."""
    base = "http://127.0.0.1:8000"
    pages = [gzip.decompress((DATA / name).read_bytes()).decode("utf-8")
             for name in ("pydoc-library-bisect.html.gz", "pydoc-library-functional.html.gz",
                          "article-82b6d780.html.gz")]
    recs = [
        _page(1, f"{base}/bisect", pages[0]),
        _page(2, f"{base}/bisect?utm_source=x", pages[0].replace("</body>", "<p>v2</p></body>")),
        _page(3, f"{base}/functional", pages[1]),
        _page(4, f"{base}/missing-a", NOT_FOUND, status=404),
        _page(5, f"{base}/article", pages[2]),
        _page(6, f"{base}/missing-b", NOT_FOUND, status=404),
        _page(finalize.PROVISIONAL_ID_BASE + 7, f"{base}/z-functional-copy", pages[1]),
        _page(finalize.PROVISIONAL_ID_BASE + 3, f"{base}/y-found", NOT_FOUND, status=404),
    ]
    return recs


def _store(records):
    store = FeatureStore()
    for rec in records:
        store.add(copy.deepcopy(rec))
    store.flush()
    return store


def _rows(url_rows, cluster_rows, meta):
    meta = {k: v for k, v in meta.items() if k != "generated_at"}
    return [dict(r) for r in url_rows], [dict(r) for r in cluster_rows], meta


def test_stages_one_by_one_compose_to_run():
    params = WebsimParams.from_settings({}, WebsimConfig())
    records = _records()
    expected_store = _store(records)
    finalize.renumber_discovered(expected_store)
    expected = rows.ResultRows(finalize.Finalizer(params).run(expected_store))

    store = _store(records)
    finalize.renumber_discovered(store)
    # provisional ids follow the inputs in URL order: /y-found (6+1) before /z-functional-copy (6+2)
    assert [(r.id, r.url.rsplit("/", 1)[1]) for r in store.iter_records()][-2:] == [(7, "y-found"),
                                                                                   (8, "z-functional-copy")]

    templates = finalize.site_templates(store, params.template, params.cluster)
    keys, table = finalize.label_rules(store, params.assign, params.cluster, templates=templates)
    assert set(table.spec_pos) == {3, 5, 6}  # the 404 pages (ids 4, 6, 7): out of content clustering
    assert keys.ids.tolist() == [1, 2, 3, 5, 8]  # compact keys only: no record kept

    content = finalize.cluster_content(keys, store, params.decision, params.cluster, templates=templates,
                                       short_items=table.short_items)
    members = sorted(sorted(c.member_ids) for c in content.clusters)
    assert members == [[1, 2], [3, 8]]

    assigned = finalize.assign_clusters(store, content, table, params.assign)
    clusters = list(assigned.clusters(store.urls_of))
    assert {c.kind for c in clusters} >= {"content"} and any(c.kind != "content" for c in clusters)
    assert {i for c in clusters if c.kind != "content" for i in c.member_ids} == {4, 6, 7}

    meta = finalize.summary(store, len(keys), assigned.kind, params, templates)
    assert meta["eligible_html_urls"] == 5 and meta["total_urls"] == 8
    assert set(meta) == set(expected.meta)

    result = rows.ResultRows(finalize.Result(store, assigned, meta, params))
    got = _rows(result.url_rows(), rows.cluster_rows(clusters), meta)
    assert got == _rows(expected.url_rows(), expected.cluster_rows(), expected.meta)
    assert [r["id"] for r in got[0]] == list(range(1, 9))


def test_meta_names_every_check_that_keeps_a_pair_apart_with_the_run_thresholds():
    """``meta.decision.not_when`` says in words each check beyond rules 1 and 2, with this run's
    thresholds (a check turned off says so)."""
    lines = finalize.not_when(WebsimParams.from_settings({}))
    names = [line.split(":")[0] for line in lines]
    assert names == ["heading", "prose length", "says much more", "item", "title item", "form",
                     "title", "identical text, another name", "short item", "templated"]
    assert "> 500 shingles" in lines[2] and "0.85" in lines[-1] and "200 characters" in lines[-2]
    off = WebsimParams.from_settings({"WEBSIM_PARAMS": {"decision.max_more_shingles": 0, "decision.title_own_words": 0,
                                                        "decision.rule1_templated": 0.9}})
    assert finalize.not_when(off)[2] == "says much more: off" and "0.9 is needed" in finalize.not_when(off)[-1]
    assert finalize.not_when(off)[6] == "title: off" and ">= 3 words" in lines[6]
