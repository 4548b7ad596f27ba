"""The report in a real browser: a crawl of the demo site (and of hostile pages) with ``--report``,
then the report opened from disk in headless Chromium with Playwright.

One crawl (in a subprocess, like every test crawl) serves all the tests of this module; the page is
opened fresh for each test. A screenshot of the report is left in the test's temporary folder
(``report-*.png``; set ``WEBSIM_REPORT_SCREENSHOTS=DIR`` to keep copies elsewhere).
"""

from __future__ import annotations

import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser
from scrapy_websim.testing.crawl import by_url, crawl, run_websim
from tests.crawl import demo_site

pytestmark = pytest.mark.crawl

PARAGRAPH = ("<p>This page exists to check that the report shows what a crawled page says as text and never runs "
             "it. Its title is written by an attacker who knows that reports render page titles.</p>") * 3
#: path -> title; every payload sets window.__pwned if it ever runs.
HOSTILE = {
    "/img": '<img src=x onerror="window.__pwned=1">',
    "/script": '</script><script>window.__pwned=2</script><!--',
    "/svg": '"><svg onload="window.__pwned=3"><a href="javascript:window.__pwned=4">click</a>',
}
BAD_LINES = ("javascript:window.__pwned=5", '<img src=x onerror="window.__pwned=6">')


class _Hostile(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        title = HOSTILE.get(self.path, "plain")
        # <title> is raw text in HTML: the browser's document.title is the payload, character for character
        body = (f"<!doctype html><html><head><title>{title}</title></head><body><h1>Hostile</h1>{PARAGRAPH}"
                "</body></html>")
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    hostile = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    threading.Thread(target=hostile.serve_forever, daemon=True).start()
    try:
        with demo_site(2) as (base, mirror):
            paths = ["/", "/article/rivers", "/article/rivers?utm_source=x", "/mirror/rivers", "/article/bread",
                     "/article/comets", "/old/comets", "/login", "/account", "/no-such-page", "/gone", "/broken",
                     "/maintenance", "/admin", "/thin", "/index.html", "/report.json"]
            hostile_base = f"http://127.0.0.1:{hostile.server_address[1]}"
            urls = [base + p for p in paths] + [mirror + "/article/rivers"] + [hostile_base + p for p in HOSTILE]
            urls += list(BAD_LINES)
            out = crawl(tmp, urls, extra=["--report", str(tmp / "report"), "-t", "4", "--http-timeout", "5",
                                          "--page-timeout", "10"])
    finally:
        hostile.shutdown()
        hostile.server_close()
    assert "websim: report -> " in out["proc"].stderr
    return {"tmp": tmp, "dir": tmp / "report", "base": base, "mirror": mirror, "hostile": hostile_base,
            "data": out["data"], "result": out["path"]}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=find_browser()[0], args=list(DEFAULT_ARGS))
        yield b
        b.close()


class Page:
    """One fresh page on a report, with every request and script error recorded."""

    def __init__(self, browser, index):
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.requests, self.errors, self.dialogs = [], [], []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(index.as_uri())
        self.page.wait_for_selector("html[data-loaded='1']", state="attached", timeout=30000)

    def cards(self):
        return self.page.eval_on_selector_all("article.card", "els => els.map(e => e.getAttribute('data-cluster'))")

    def matched(self):
        return self.page.inner_text("#matched")

    def pwned(self):
        return self.page.evaluate("window.__pwned || 0")

    def close(self):
        self.context.close()


@pytest.fixture
def page(browser, report):
    p = Page(browser, report["dir"] / "index.html")
    yield p
    assert p.errors == [], p.errors
    assert all(u.startswith("file://") for u in p.requests), [u for u in p.requests if not u.startswith("file://")]
    p.close()


def shot(p, report, name):
    path = report["tmp"] / f"report-{name}.png"
    p.page.screenshot(path=str(path), full_page=name == "top")
    keep = os.environ.get("WEBSIM_REPORT_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(path, keep)
    return path


def test_the_demo_report_shows_its_clusters_and_special_pages(page, report):
    rows = by_url(report["data"])
    clusters = {c["cluster_id"]: c for c in report["data"]["clusters"]}
    shown = page.cards()
    assert sorted(shown) == sorted(clusters)  # every cluster of the result, on the first page
    sizes = [len(clusters[cid]["member_ids"]) for cid in shown]
    assert sizes == sorted(sizes, reverse=True)  # largest first
    rivers = rows[report["base"] + "/article/rivers"]["cluster_id"]
    assert shown[0] == rivers and len(clusters[rivers]["member_ids"]) == 4
    card = page.page.locator(f"article.card[data-cluster='{rivers}']")
    text = card.inner_text()
    assert "4 pages" in text and "How rivers shape valleys" in text and "2 origins" in text
    assert report["mirror"].replace("http://", "") in text  # the mirror's origin and its member row
    assert "rule1" in text
    kinds = {c["kind"] for c in clusters.values()}
    assert {"content", "E1", "E3", "L1", "W1"} <= kinds
    for kind in kinds:
        shown = page.page.locator(f"article.card.k-{kind}").count()
        assert shown == sum(1 for c in clusters.values() if c["kind"] == kind)
    # the canonical's thumbnail is there and decodes
    img = card.locator("img.shot")
    img.scroll_into_view_if_needed()
    page.page.wait_for_function("img => img.complete && img.naturalWidth === 320", arg=img.element_handle())
    summary = page.page.inner_text("#summary")
    assert f"{len(report['data']['urls'])}\nURLS" in summary.upper()
    assert "SCREENSHOTS" in summary.upper() and "No thumbnails" not in summary
    # failures and pages in no cluster are on their tabs
    page.page.click("#tabs button[data-tab=failed]")
    failed = page.page.inner_text("#list")
    for r in report["data"]["urls"]:
        if r["error"]:
            assert r["url"] in failed and r["error"][:40] in failed
    page.page.click("#tabs button[data-tab=alone]")
    alone = [r for r in report["data"]["urls"] if not r["cluster_id"] and not r["error"]]
    assert page.page.locator("#list table.rows tbody tr").count() == len(alone)
    page.page.click("#tabs button[data-tab=clusters]")
    shot(page, report, "top")


def test_open_a_cluster_shows_every_member_side_by_side(page, report):
    rows = by_url(report["data"])
    rivers = rows[report["base"] + "/article/rivers"]["cluster_id"]
    page.page.click(f"article.card[data-cluster='{rivers}'] button.open")
    page.page.wait_for_selector("#overlay:not([hidden])")
    tiles = page.page.locator("#dlg-grid figure.tile")
    assert tiles.count() == 4
    assert "canonical" in tiles.nth(0).inner_text()
    page.page.wait_for_function(
        "() => [...document.querySelectorAll('#dlg-grid img')]"
        ".filter(i => i.complete && i.naturalWidth > 0).length === 4")
    shot(page, report, "cluster")
    page.page.keyboard.press("Escape")
    assert page.page.locator("#overlay").is_hidden()


def test_filters_and_search_change_what_is_shown(page, report):
    data = report["data"]
    clusters = {c["cluster_id"]: c for c in data["clusters"]}
    everything = page.cards()
    page.page.select_option("#f-kind", label="E1 — 5xx server error")
    page.page.wait_for_function("() => document.querySelectorAll('article.card').length === "
                                f"{sum(1 for c in clusters.values() if c['kind'] == 'E1')}")
    assert all(clusters[c]["kind"] == "E1" for c in page.cards())
    page.page.click("#clear")
    page.page.select_option("#f-status", "4xx")
    page.page.wait_for_selector("#matched:has-text('match the filters')")
    with_4xx = {r["cluster_id"] for r in data["urls"] if 400 <= r["status_code"] < 500 and r["cluster_id"]}
    assert set(page.cards()) == with_4xx and len(with_4xx) < len(everything)
    page.page.click("#clear")
    page.page.fill("#q", "RIVERS")  # case-insensitive, URL or title
    page.page.wait_for_selector("#matched:has-text('match the filters')")
    rivers = {r["cluster_id"] for r in data["urls"] if "rivers" in (r["url"] + r["title"]).lower() and r["cluster_id"]}
    assert set(page.cards()) == rivers
    assert "of 4 pages match" in page.page.inner_text("article.card")
    page.page.fill("#q", "no page has this text")
    page.page.wait_for_selector("#list p.empty")
    assert page.page.inner_text("#n-clusters") == "0"
    page.page.click("#clear")
    page.page.fill("#f-host", "no-such-host")
    page.page.wait_for_selector("#list p.empty")
    page.page.click("#clear")
    assert page.cards() == everything
    # a chart bar is a filter too
    page.page.click("#summary button.bar-l:has-text('W1')")
    page.page.wait_for_function("() => document.querySelectorAll('article.card').length === "
                                f"{sum(1 for c in clusters.values() if c['kind'] == 'W1')}")


def test_hostile_titles_and_lines_run_nothing_and_show_as_text(page, report):
    rows = by_url(report["data"])
    for path, title in HOSTILE.items():
        assert rows[report["hostile"] + path]["title"] == title  # the crawl kept the payload verbatim
    shown = page.page.evaluate("document.body.textContent")
    for cid in {rows[report["hostile"] + path]["cluster_id"] for path in HOSTILE} - {""}:
        page.page.click(f"article.card[data-cluster='{cid}'] button.open")
        page.page.wait_for_selector("#overlay:not([hidden])")
        shown += page.page.evaluate("document.getElementById('dlg-grid').textContent")
        page.page.keyboard.press("Escape")
    for tab in ("alone", "failed"):
        page.page.click(f"#tabs button[data-tab={tab}]")
        shown += page.page.evaluate("document.getElementById('list').textContent")
    for text in list(HOSTILE.values()) + list(BAD_LINES):
        assert text in shown, text  # shown, as text
    page.page.wait_for_timeout(300)
    assert page.pwned() == 0 and page.dialogs == []
    assert page.page.locator("img[src='x'], svg, script:not([src])").count() == 0
    hrefs = page.page.eval_on_selector_all("a[href]", "els => els.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith(("http://", "https://")) for h in hrefs)
    shot(page, report, "hostile")


def test_report_command_without_and_with_thumbnails(browser, report):
    bare = report["tmp"] / "bare"
    proc = run_websim(["report", report["result"], "-o", str(bare)], cwd=str(report["tmp"]))
    assert proc.returncode == 0, proc.stderr
    assert "no thumbnails" in proc.stderr and (bare / "index.html").as_uri() in proc.stderr
    p = Page(browser, bare / "index.html")
    try:
        assert "No thumbnails in this report" in p.page.inner_text("#summary")
        assert p.page.locator("img").count() == 0 and p.page.locator(".nothumb").count() > 0
        assert len(p.cards()) == len(report["data"]["clusters"])
    finally:
        p.close()
    again = report["tmp"] / "again"
    proc = run_websim(["report", report["result"], "-o", str(again), "--thumbnails", str(report["dir"] / "thumbs")],
                      cwd=str(report["tmp"]))
    assert proc.returncode == 0, proc.stderr
    rendered = sum(1 for r in report["data"]["urls"] if r["status_code"] and "html" in r["content_type"])
    assert len(os.listdir(again / "thumbs")) >= rendered - 1  # one per rendered page (identical lines share one)


def _many(n_clusters=120, big=400, alone=500, failed=150):
    """A result big enough to span many data files: one cluster of ``big`` pages, many small ones."""
    rows, clusters, next_id = [], [], 1

    def page(**kw):
        nonlocal next_id
        r = {"id": next_id, "url": f"http://h{next_id % 37}.test/p/{next_id}", "status_code": 200, "error": "",
             "title": f"title {next_id}", "cluster_id": "", "is_canonical": True, "match_rule": "", "cluster_kind": ""}
        r.update(kw)
        rows.append(r)
        next_id += 1
        return r["id"]

    for c in range(n_clusters):
        cid = f"cluster-{c + 1:05d}"
        size = big if c == 0 else 2 + c % 5
        ids = [page(cluster_id=cid, cluster_kind="content", is_canonical=j == 0,
                    match_rule="canonical" if j == 0 else "rule1", content_sim=0.9) for j in range(size)]
        clusters.append({"cluster_id": cid, "canonical_url": rows[ids[0] - 1]["url"], "member_ids": ids,
                         "kind": "content"})
    for _ in range(alone):
        page()
    for _ in range(failed):
        page(status_code=0, error="net::ERR_CONNECTION_REFUSED", title="")
    page(title="needle in the last data file")
    return rows, clusters


def test_a_report_in_many_data_files_loads_them_all(browser, tmp_path, monkeypatch):
    from scrapy_websim.result.report import writer

    monkeypatch.setattr(writer, "FIRST_CHUNK_ROWS", 100)
    monkeypatch.setattr(writer, "CHUNK_ROWS", 300)
    monkeypatch.setattr(writer, "FIRST_CLUSTERS", 10)
    rows, clusters = _many()
    info = writer.write_report(str(tmp_path / "r"), rows, clusters, {})
    assert len(os.listdir(tmp_path / "r" / "data")) >= 8  # meta, clusters and 6 chunks of rows
    p = Page(browser, tmp_path / "r" / "index.html")
    try:
        assert p.page.inner_text("#loading") == ""
        assert p.page.inner_text("#n-clusters") == str(len(clusters))
        assert p.page.inner_text("#n-alone") == "501" and p.page.inner_text("#n-failed") == "150"
        assert p.cards()[0] == "cluster-00001"
        # the pager above the list: the one below moves while the cards above it lay out (content-visibility),
        # and a click aimed at it on a fast machine once landed before it settled
        p.page.click("#pager-top button:has-text('last')")
        pages = -(-len(clusters) // 20)
        p.page.wait_for_selector(f"#pager-top .pg:has-text('page {pages} of {pages}')")
        assert p.page.inner_text("#pager .pg") == f"page {pages} of {pages}"  # both pagers say the same
        ordered = [c["cluster_id"] for c in sorted(clusters, key=lambda c: (-len(c["member_ids"]), c["cluster_id"]))]
        assert p.cards() == ordered[-(len(ordered) % 20 or 20):]  # beyond the 10 clusters meta.js lists
        assert "loading" not in p.page.inner_text("#list")
        p.page.click("#pager-top button:has-text('first')")
        p.page.wait_for_selector(f"#pager-top .pg:has-text('page 1 of {pages}')")
        p.page.click("article.card[data-cluster='cluster-00001'] button.open")
        p.page.click("#dlg-pager button:has-text('last')")
        p.page.wait_for_selector("#dlg-pager .pg:has-text('page 9 of 9')")
        tiles = p.page.locator("#dlg-grid figure.tile")
        assert tiles.count() == 400 - 48 * 8
        assert "loading" not in p.page.inner_text("#dlg-grid")
        p.page.keyboard.press("Escape")
        p.page.fill("#q", "needle")
        p.page.click("#tabs button[data-tab=alone]")
        # the search box applies its filter 150 ms after the last key, so wait for it rather than
        # for the first table drawn (on a slow machine that is still the unfiltered one)
        p.page.wait_for_selector("#matched:has-text('pages in no cluster match the filters')")
        assert p.page.locator("#list table.rows tbody tr").count() == 1
        assert p.errors == [] and info.urls == len(rows)
    finally:
        p.close()


def test_pivots_group_and_filter_pages_by_favicon_and_certificate(browser, tmp_path):
    """Hosts that look different but share a favicon (Shodan's hash) or a certificate (SHA-256):
    the summary groups them, a bar or the pivot box filters every list by them."""
    from scrapy_websim.result.report import writer

    shared_icon, other_icon = -839214753, 1485257654
    cert = "7023e0b0e7e7f55d0629d823a9abb6fe08ac8416a76c3a6bb432779d492d9e64"
    rows = []
    for n in range(12):
        host = f"h{n}.test"
        rows.append({"id": n + 1, "url": f"https://{host}/", "status_code": 200, "error": "", "title": f"panel {n}",
                     "cluster_id": "", "is_canonical": True, "match_rule": "", "cluster_kind": "",
                     "favicon_hash": shared_icon if n < 5 else other_icon if n < 7 else None,
                     "tls_sha256": cert if n % 3 == 0 else f"{n:064x}",
                     "tls_subject": "appliance" if n % 3 == 0 else ""})
    writer.write_report(str(tmp_path / "r"), rows, [], {})
    p = Page(browser, tmp_path / "r" / "index.html")

    def ids():
        return p.page.eval_on_selector_all("#list table.rows tbody td.id", "els => els.map(e => +e.textContent)")

    try:
        summary = p.page.inner_text("#summary")
        assert "pages by favicon hash" in summary.lower() and "pages by certificate (sha-256)" in summary.lower()
        assert "-839214753 · 5 hosts" in summary and "1485257654 · 2 hosts" in summary
        assert "7023e0b0e7e7f55d… appliance · 4 hosts" in summary
        assert "0000000000000001" not in summary  # a certificate of one host groups nothing
        p.page.click("#tabs button[data-tab=alone]")
        p.page.click("#summary button.bar-l:has-text('-839214753')")
        p.page.wait_for_selector("#matched:has-text('match the filters')")
        assert p.page.input_value("#f-pivot") == str(shared_icon)
        p.page.click("#tabs button[data-tab=alone]")
        p.page.wait_for_function("() => document.querySelectorAll('#list table.rows tbody tr').length === 5")
        assert ids() == [1, 2, 3, 4, 5]
        p.page.fill("#f-pivot", "70:23:E0:B0:E7:E7")  # openssl's notation: colons and capitals are fine
        p.page.wait_for_function("() => document.querySelectorAll('#list table.rows tbody tr').length === 4")
        assert ids() == [1, 4, 7, 10]
        p.page.click("#clear")
        p.page.wait_for_function("() => document.querySelectorAll('#list table.rows tbody tr').length === 12")
        assert p.errors == []
    finally:
        p.close()
