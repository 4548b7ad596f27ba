"""Kept browser tabs (``WEBSIM_PARAMS`` key ``crawl.tab_reuse``) render each page as a fresh tab
would: one tab serves a list of pages in turn (one page in flight) and every record and feature
equals the crawl with a new tab per page, through a 404, a page that asks to stay
(``beforeunload``), a page built by a script after load and a page whose timers keep running."""

from __future__ import annotations

import json
import re

import pytest

from scrapy_websim.testing.crawl import crawl
from scrapy_websim.testing.servers import have, nginx_server

pytestmark = [pytest.mark.crawl, pytest.mark.skipif(not have("nginx"), reason="nginx not installed")]

PAGES = {
    "stay.html": "<html><head><title>Stay</title></head><body><h1>Stay here</h1><p>"
                 + "A page that asks before it is left. " * 20 + "</p><script>"
                 "addEventListener('beforeunload', (e) => { "
                 "e.preventDefault(); e.returnValue = 'stay'; return 'stay'; });"
                 "</script></body></html>",
    "late.html": "<html><head><title>Loading</title></head><body><p>wait</p><script>"
                 "setTimeout(() => { document.title = 'Late'; document.body.innerHTML = '<h1>Late page</h1><p>'"
                 " + 'Built by a script after the load event. '.repeat(30) + '</p>'; }, 300);</script></body></html>",
    "ticking.html": "<html><head><title>Ticking</title></head><body><h2>Clock</h2><p id=t>0</p><p>"
                    + "Timers that never stop. " * 25 + "</p><script>let n = 0;"
                    "setInterval(() => { document.getElementById('t').dataset.n = ++n; }, 20);</script></body></html>",
    "plain.html": "<html><head><title>Plain</title></head><body><h1>Plain</h1><ul>"
                  + "".join(f"<li><a href='/p{i}'>entry {i}</a></li>" for i in range(40)) + "</ul></body></html>",
}
ORDER = ["stay.html", "missing.html", "late.html", "ticking.html", "plain.html", "stay.html", "late.html"]
FEATURES = ("status_code", "title", "page_type", "text_len", "simhash", "text_hash", "minhash", "dom_counts",
            "tag_paths", "depth_hist", "tag_seq", "signals", "rendered", "error")


def _run(tmp_path, urls, name, reuse):
    out_dir = tmp_path / name
    out_dir.mkdir()
    # --render-all: the list's repeated pages are rendered again, each in the kept tab
    result = crawl(out_dir, urls, extra=["--render-all", "--per-host", "1",
                                         "-s", f'WEBSIM_PARAMS={{"crawl.tab_reuse": {reuse}}}',
                                         "-s", f"WEBSIM_FEATURES_FILE={out_dir / 'features.jsonl'}"])
    with open(out_dir / "features.jsonl", encoding="utf-8") as fh:
        features = [rec for rec in map(json.loads, filter(str.strip, fh)) if "id" in rec]
    return result, sorted(features, key=lambda rec: rec["id"])


def test_kept_tabs_render_each_page_like_a_new_tab(tmp_path):
    with nginx_server(files=PAGES) as base:
        urls = [f"{base}/{p}" for p in ORDER]
        kept, kept_features = _run(tmp_path, urls, "kept", 50)
        fresh, fresh_features = _run(tmp_path, urls, "fresh", 0)
    reused = re.search(r"'websim/tabs_reused': (\d+)", kept["proc"].stderr)
    assert reused and int(reused.group(1)) == len(ORDER) - 1  # one tab served the whole list
    assert "tabs_reused" not in fresh["proc"].stderr
    rows = kept["data"]["urls"]
    assert [r["url"] for r in rows] == urls
    assert [r["status_code"] for r in rows] == [200, 404, 200, 200, 200, 200, 200]
    assert [r["title"] for r in rows] == ["Stay", "404 Not Found", "Late", "Ticking", "Plain", "Stay", "Late"]
    assert len(kept_features) == len(fresh_features) == len(ORDER)
    for k, f in zip(kept_features, fresh_features):
        assert {x: k.get(x) for x in FEATURES} == {x: f.get(x) for x in FEATURES}, k["url"]
        assert bool(k.get("phash")) == bool(f.get("phash")), k["url"]
        if k.get("phash"):
            assert bin(int(k["phash"], 16) ^ int(f["phash"], 16)).count("1") <= 4, k["url"]
    assert kept_features[2]["text_len"] > 500  # the script-built page was waited for


def test_more_requests_in_flight_than_page_slots_all_finish_on_kept_tabs(tmp_path):
    """12 requests of one host at once for 3 page slots (a distributed worker's default has 20 for 6):
    the requests that find every slot taken get the kept tabs, none waits for a slot that a kept tab
    holds for ever (it did: 5 of 40 pages rendered, then the crawl hung)."""
    pages = {f"p{i}.html": f"<html><head><title>P{i}</title></head><body><h1>Page {i}</h1><p>"
             + f"Words of page {i}. " * 40 + "</p></body></html>" for i in range(40)}
    with nginx_server(files=pages) as base:
        urls = [f"{base}/p{i}.html" for i in range(40)]
        result = crawl(tmp_path, urls, timeout=240, extra=["-t", "12", "--per-host", "12",
                                                             "-s", "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT=3"])
    rows = result["data"]["urls"]
    assert [r["title"] for r in rows] == [f"P{i}" for i in range(40)]
    assert all(r["status_code"] == 200 and not r["error"] for r in rows)
    opened = re.search(r"'playwright/page_count': (\d+)", result["proc"].stderr)
    assert opened and int(opened.group(1)) <= 6  # the tabs were kept and reused, not one per page
