"""``websim diff`` and ``websim explain`` on two real scans of the same local servers.

Four servers on 127.0.0.1 are crawled twice (each crawl a subprocess with real Chromium); between
the scans the servers change: a page becomes a login wall, a page is gone (404), one of three
hosts serving the same (thin) default page switches to content of its own, and a page becomes a copy of
an article (its cluster grows). The diff must report exactly those changes, a scan compared with
itself none, and ``websim explain`` must agree with the clustering.
"""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser
from scrapy_websim.testing.crawl import by_url, crawl, run_websim

pytestmark = pytest.mark.crawl

#: Which scan the servers answer for (1 or 2).
PHASE = {"scan": 1}


def _article(seed: int, words: int = 260) -> str:
    """A page of prose no other seed shares (words of random letters)."""
    rnd = random.Random(seed)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9))) for _ in range(400)]
    paragraphs = []
    for _ in range(5):
        paragraphs.append("<p>" + " ".join(rnd.choice(vocab) for _ in range(words // 5)) + ".</p>")
    return "".join(paragraphs)


def _page(title: str, h1: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>body{{font-family:sans-serif;margin:40px}} main{{max-width:50em}}</style></head>"
            f"<body><main><h1>{h1}</h1>{body}</main></body></html>")


ARTICLE = _page("Rivers of the north", "Rivers of the north", _article(1))
DEFAULT = _page("Welcome to the web server", "Welcome to the web server!",
                "<p>If you see this page, the web server is successfully installed and working. Further "
                "configuration is required before this host serves anything of its own.</p>"
                "<p>For online documentation and support please refer to the documentation that came with the "
                "package. Commercial support is available from the vendor of the distribution.</p>"
                "<p><em>Thank you for using this web server; replace this page with your site's content.</em></p>")
LOGIN = _page("Sign in", "Sign in to your account",
              "<form method='post' action='/account'><label>User <input name='user'></label>"
              "<label>Password <input type='password' name='password'></label><button>Log in</button></form>"
              + "<!-- " + "x" * 1200 + " -->")
NOT_FOUND = _page("404 Not Found", "Not Found", "<p>The requested URL was not found on this server.</p>"
                  + "<!-- " + "x" * 1200 + " -->")


def _content(role: str, path: str) -> tuple:
    """(status, HTML) of a path on a server of ``role`` in the current scan."""
    second = PHASE["scan"] == 2
    if role == "site":
        if path in ("/article", "/article-copy"):
            return 200, ARTICLE
        if path == "/other":
            return 200, ARTICLE if second else _page("Bread", "Bread", _article(2))
        if path == "/account":
            return 200, LOGIN if second else _page("Account news", "Account news", _article(3))
        if path == "/news":
            return (404, NOT_FOUND) if second else (200, _page("News", "News", _article(4)))
        if path == "/stable":
            return 200, _page("Comets", "Comets", _article(5))
        return 404, NOT_FOUND
    if role == "switcher" and second:
        return 200, _page("Our shop", "Our shop", _article(6))
    return 200, DEFAULT


class _Handler(BaseHTTPRequestHandler):
    role = "site"

    def log_message(self, *args):
        pass

    def do_GET(self):
        status, body = _content(self.role, self.path)
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _serve(role: str) -> ThreadingHTTPServer:
    handler = type(f"Handler_{role}", (_Handler,), {"role": role})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def scans(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    servers = {"site": _serve("site"), "default1": _serve("default"), "default2": _serve("default"),
               "switcher": _serve("switcher")}
    base = {name: f"http://127.0.0.1:{s.server_address[1]}" for name, s in servers.items()}
    urls = [base["site"] + p for p in ("/article", "/article-copy", "/other", "/account", "/news", "/stable")]
    urls += [base["default1"] + "/", base["default2"] + "/", base["switcher"] + "/"]
    out = {}
    try:
        for scan in (1, 2):
            PHASE["scan"] = scan
            folder = tmp / f"scan{scan}"
            folder.mkdir()
            out[scan] = crawl(folder, urls, extra=["-t", "4", "--http-timeout", "5", "--page-timeout", "15",
                                                   "--features-file", str(folder / "features.jsonl")])
    finally:
        for s in servers.values():
            s.shutdown()
            s.server_close()
    return {"tmp": tmp, "base": base, "old": out[1], "new": out[2]}


def _diff(scans, *extra):
    proc = run_websim(["diff", scans["old"]["path"], scans["new"]["path"], *extra], cwd=str(scans["tmp"]))
    return proc


def test_the_scans_are_what_the_servers_served(scans):
    old, new = by_url(scans["old"]["data"]), by_url(scans["new"]["data"])
    site, sw = scans["base"]["site"], scans["base"]["switcher"]
    assert old[site + "/article"]["cluster_id"] == old[site + "/article-copy"]["cluster_id"] != ""
    assert old[site + "/other"]["cluster_id"] == ""
    assert old[sw + "/"]["cluster_id"] == old[scans["base"]["default1"] + "/"]["cluster_id"] != ""
    assert new[site + "/account"]["cluster_kind"] == "L1"
    assert new[site + "/news"]["cluster_kind"] == "E3"
    assert new[site + "/other"]["cluster_id"] == new[site + "/article"]["cluster_id"]
    assert old[sw + "/"]["cluster_kind"] == "T1"  # the short default page of a fresh install is thin
    assert new[sw + "/"]["cluster_id"] == ""
    # every record says why it is where it is
    for row in scans["new"]["data"]["urls"]:
        assert row["match_reason"], row
    member = new[site + "/other"]
    assert member["match_reason"].startswith(f"{member['match_rule']} with canonical #")
    assert new[site + "/account"]["match_reason"].startswith("L1 login wall: status 200, template fingerprint ")
    assert new[sw + "/"]["match_reason"].startswith("alone: eligible")


def test_diff_reports_exactly_the_changes(scans):
    proc = _diff(scans, "-o", str(scans["tmp"] / "diff.json"))
    assert proc.returncode == 1, proc.stderr
    d = json.loads((scans["tmp"] / "diff.json").read_text())
    site, sw = scans["base"]["site"], scans["base"]["switcher"]
    new = by_url(scans["new"]["data"])
    old = by_url(scans["old"]["data"])
    appeared = {(c["kind"], tuple(c["urls"])) for c in d["clusters"]["appeared"]}
    assert appeared == {("L1", (site + "/account",)), ("E3", (site + "/news",))}
    assert d["clusters"]["vanished"] == []
    changed = {(c["new_cluster"], tuple(c["changes"]), tuple(c["added"]), tuple(c["removed"]))
               for c in d["clusters"]["changed"]}
    assert changed == {
        (new[site + "/article"]["cluster_id"], ("grew",), (site + "/other",), ()),
        (new[scans["base"]["default1"] + "/"]["cluster_id"], ("shrank",), (), (sw + "/",)),
    }
    assert d["canonicals"] == []
    assert d["urls"]["added"] == [] and d["urls"]["removed"] == []
    urls = {u["url"]: (tuple(u["changes"]), u["old_label"], u["new_label"]) for u in d["urls"]["changed"]}
    assert urls == {
        site + "/account": (("cluster", "label"), "content", "L1"),
        site + "/news": (("cluster", "label"), "content", "E3"),
        site + "/other": (("cluster",), "content", "content"),
        sw + "/": (("cluster", "label"), "T1", "content"),  # a short default page is a thin page
    }
    assert old[sw + "/"]["cluster_id"] == next(u for u in d["urls"]["changed"] if u["url"] == sw + "/")["old_cluster"]
    # the summary on stdout says the same
    assert "2 appeared, 0 vanished, 1 grew, 1 shrank" in proc.stdout
    assert f"{site}/account: content -> L1" in proc.stdout


def test_a_scan_compared_with_itself_or_its_other_formats_has_no_changes(scans, tmp_path):
    for path in (scans["old"]["path"], scans["new"]["path"]):
        proc = run_websim(["diff", path, path], cwd=str(tmp_path))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "no changes" in proc.stdout
    # the same scan written as JSON Lines (no cluster list, no meta) is the same scan
    rows = scans["new"]["data"]["urls"]
    jsonl = tmp_path / "new.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_websim(["diff", scans["new"]["path"], str(jsonl)], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout


def test_explain_agrees_with_the_clustering_of_the_scan(scans):
    site, d1, sw = scans["base"]["site"], scans["base"]["default1"], scans["base"]["switcher"]
    result, features = scans["new"]["path"], str(scans["tmp"] / "scan2" / "features.jsonl")

    def explain(a, b, *extra):
        proc = run_websim(["explain", result, a, b, "--features", features, "--json", *extra], cwd=str(scans["tmp"]))
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    joined = explain(site + "/article", site + "/other")
    assert joined["duplicate"] is True and joined["clustered"] == "together" and joined["agrees"] is True
    apart = explain(site + "/stable", site + "/article")
    assert apart["duplicate"] is False and apart["clustered"] == "apart" and apart["agrees"] is True
    assert apart["decision"]["text_sim"] < apart["decision"]["text_threshold"]
    special = explain(site + "/account", site + "/article")
    assert special["duplicate"] is None and special["a"]["label"] == "L1" and special["clustered"] == "apart"
    thin = explain(d1 + "/", sw + "/")
    assert thin["a"]["label"] == "T1" and thin["b"]["label"] == "" and thin["duplicate"] is None
    # from the features file alone, in words
    proc = run_websim(["explain", features, site + "/article", site + "/article-copy"], cwd=str(scans["tmp"]))
    assert proc.returncode == 0, proc.stderr
    assert "checks: not applied (identical judged text)" in proc.stdout
    assert "decision: duplicates (rule1)" in proc.stdout
    # a threshold given on the command line is the one used
    loose = explain(site + "/stable", site + "/article", "-s", "WEBSIM_TEXT_JACCARD_THRESHOLD=0",
                    "-s", 'WEBSIM_PARAMS={"decision.heading_min_jaccard": 0}')
    assert loose["decision"]["text_threshold"] == 0 and loose["duplicate"] is True
    assert loose["clustered"] == "apart" and loose["agrees"] is None
    bad = run_websim(["explain", result, site + "/article", site + "/nope", "--features", features],
                     cwd=str(scans["tmp"]))
    assert bad.returncode == 2 and "no record with URL" in bad.stderr


def test_the_report_shows_the_changes(scans):
    from playwright.sync_api import sync_playwright

    report = scans["tmp"] / "changes-report"
    proc = _diff(scans, "--report", str(report))
    assert proc.returncode == 1, proc.stderr
    site, sw = scans["base"]["site"], scans["base"]["switcher"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_browser()[0], args=list(DEFAULT_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((report / "index.html").as_uri())
            page.wait_for_selector("html[data-loaded='1']", state="attached", timeout=30000)
            tab = page.locator("#tab-changes")
            assert tab.is_visible()
            tab.click()
            text = page.text_content("#list")
            heads = page.eval_on_selector_all(".changes-list h3", "els => els.map(e => e.textContent)")
            assert heads == ["Clusters that appeared (2)", "Clusters that vanished (0)",
                             "Clusters that grew, shrank or changed (2)", "Canonicals that changed (0)",
                             "URLs that changed cluster or label (4)", "URLs added to the list (0)",
                             "URLs removed from the list (0)"]
            page.screenshot(path=str(scans["tmp"] / "report-changes.png"), full_page=True)
            assert site + "/account" in text and "content → L1" in text and sw + "/" in text
            # the member view says why each member joined
            page.locator("#tabs button[data-tab='clusters']").click()
            reasons = page.eval_on_selector_all(".members .reason", "els => els.map(e => e.textContent)")
            assert any(r.startswith("rule1 with canonical #") or r.startswith("exact") for r in reasons), reasons
            assert errors == []
        finally:
            browser.close()
