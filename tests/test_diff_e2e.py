"""``websim diff`` and ``websim explain`` on real scans of the same local servers.

Five servers on 127.0.0.1 are crawled three times (each crawl a subprocess with real Chromium).
Between the first and the second scan they change: a page becomes a login wall, a page is gone
(404), one of three hosts serving the same (thin) default page switches to content of its own, a
page becomes a copy of an article, a page with no copy gets other content, a page now redirects
to a listed page and one to a page outside the list, and a directory listing (Python's own
``http.server``) gains a backup tarball. Three pages carry per-request noise in what they show: an
article with a rotating banner, a timestamp, a counter and a token in its text and shuffled related
links with session ids, a thin page with a rotating tip, a login page with a fresh token that adds
hidden inputs when the browser has no cookie yet. The third scan changes nothing.

The diff must name exactly the changed URLs with what changed, keep the pages whose copy changed
apart as collateral, report no noise, and find nothing (exit 0) between the second and the third
scan, whatever the formats; a result without digests (an earlier version's) still diffs.
``websim explain`` must agree with the clustering.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser
from scrapy_websim.testing.crawl import by_url, crawl, run_websim

pytestmark = pytest.mark.crawl

#: Which scan the servers answer for (1, 2, then 3: the second again).
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
BANNERS = ["Spring sale on every garden tool until Sunday evening", "Our new mobile app is out for every phone",
           "Join the community meetup next month downtown", "Free shipping this week on orders over fifty"]
TIPS = ["press the question mark key to see every keyboard shortcut", "pin a project to keep it on top",
        "drag files onto the page instead of browsing for them", "search understands quotes for exact phrases"]


def _token(rnd: random.Random, n: int = 24) -> str:
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(n))


def _noisy(rnd: random.Random) -> str:
    """One article, served with different noise each time, in its text and around it."""
    related = [f"<li><a href='/essay?sid={_token(rnd)}'>Related: {w}</a></li>" for w in
               ("valleys and glaciers", "the river delta", "floods of the past", "a canoe trip")]
    rnd.shuffle(related)
    body = (f"<p>{rnd.choice(BANNERS)}. Updated {rnd.randint(2, 59)} minutes ago, {rnd.randint(100, 99999)} "
            f"views, request {_token(rnd, 16)}.</p>{_article(12)}<ul>{''.join(related)}</ul>"
            f"<form><input type='hidden' name='csrf' value='{_token(rnd, 40)}'><input name='q'></form>")
    return _page("Field notes", "Field notes", body)


def _tip(rnd: random.Random) -> str:
    return _page("Status", "Status", f"<p>All systems operational.</p><p>Tip: {rnd.choice(TIPS)}.</p>")


def _signin(rnd: random.Random, cookie: str) -> tuple:
    hidden = f"<input type='hidden' name='token' value='{_token(rnd, 32)}'>"
    if "sid=" not in cookie:
        hidden += f"<input type='hidden' name='set_session' value='{_token(rnd)}'><input type='hidden' name='server'>"
    body = ("<p>Sign in with your work account to continue.</p><form method='post' action='/session'>" + hidden +
            "<label>Email <input name='email'></label><label>Password <input type='password' name='pw'></label>"
            "<button>Sign in</button></form>")
    return _page("Sign in - Portal", "Sign in", body), f"sid={_token(rnd)}; Path=/"


def _content(role: str, path: str, cookie: str) -> tuple:
    """(status, HTML, extra headers) of a path on a server of ``role`` in the current scan."""
    second = PHASE["scan"] >= 2
    rnd = random.Random()
    if role == "site":
        if path in ("/article", "/article-copy"):
            return 200, ARTICLE, {}
        if path == "/other":
            return 200, ARTICLE if second else _page("Bread", "Bread", _article(2)), {}
        if path == "/account":
            return 200, LOGIN if second else _page("Account news", "Account news", _article(3)), {}
        if path == "/news":
            return (404, NOT_FOUND, {}) if second else (200, _page("News", "News", _article(4)), {})
        if path == "/stable":
            return 200, _page("Comets", "Comets", _article(5)), {}
        if path == "/essay":
            return 200, _page("Essay", "Essay", _article(8 if second else 7)), {}
        if path == "/old":
            return (302, "", {"Location": "/stable"}) if second else (200, _page("Old", "Old", _article(9)), {})
        if path == "/promo":
            return (302, "", {"Location": "/campaign"}) if second else (200, _page("Promo", "Promo", _article(10)), {})
        if path == "/campaign":
            return 200, _page("Campaign", "Campaign", _article(11)), {}
        if path == "/noisy":
            return 200, _noisy(rnd), {}
        if path == "/tip":
            return 200, _tip(rnd), {}
        if path == "/signin":
            html, set_cookie = _signin(rnd, cookie)
            return 200, html, {"Set-Cookie": set_cookie}
        return 404, NOT_FOUND, {}
    if role == "switcher" and second:
        return 200, _page("Our shop", "Our shop", _article(6)), {}
    return 200, DEFAULT, {}


class _Handler(BaseHTTPRequestHandler):
    role = "site"

    def log_message(self, *args):
        pass

    def do_GET(self):
        status, body, headers = _content(self.role, self.path.split("?")[0], self.headers.get("Cookie", ""))
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(role: str, folder: str = "") -> ThreadingHTTPServer:
    if role == "files":
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=folder))
    else:
        server = ThreadingHTTPServer(("127.0.0.1", 0), type(f"Handler_{role}", (_Handler,), {"role": role}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def scans(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    files = tmp / "www"
    files.mkdir()
    for i in range(8):
        (files / f"report-{i:02d}.txt").write_text(f"report {i}\n")
    servers = {"site": _serve("site"), "default1": _serve("default"), "default2": _serve("default"),
               "switcher": _serve("switcher"), "files": _serve("files", str(files))}
    base = {name: f"http://127.0.0.1:{s.server_address[1]}" for name, s in servers.items()}
    urls = [base["site"] + p for p in ("/article", "/article-copy", "/other", "/account", "/news", "/stable", "/essay",
                                       "/old", "/promo", "/noisy", "/tip", "/signin")]
    urls += [base["default1"] + "/", base["default2"] + "/", base["switcher"] + "/", base["files"] + "/"]
    out = {}
    try:
        for scan in (1, 2, 3):
            PHASE["scan"] = scan
            if scan == 2:
                (files / "backup.tar.gz").write_bytes(b"\x1f\x8b" + b"0" * 4000)
            folder = tmp / f"scan{scan}"
            folder.mkdir()
            extra = ["-t", "4", "--http-timeout", "5", "--page-timeout", "15",
                     "--features-file", str(folder / "features.jsonl"), "--thumbnails-dir", str(folder / "thumbs")]
            if scan == 3:
                extra += ["-o", str(folder / "result.csv")]
            out[scan] = crawl(folder, urls, extra=extra)
            time.sleep(1)  # the listing's file times: another minute is noise, not a change
    finally:
        for s in servers.values():
            s.shutdown()
            s.server_close()
    return {"tmp": tmp, "base": base, "old": out[1], "new": out[2], "again": out[3]}


def _diff(scans, old="old", new="new", *extra):
    return run_websim(["diff", scans[old]["path"], scans[new]["path"], *extra], cwd=str(scans["tmp"]))


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
    assert new[site + "/old"]["final_url"] == site + "/stable"
    assert new[site + "/signin"]["cluster_kind"] == "L1" and new[site + "/tip"]["cluster_kind"] == "T1"
    # every record says why it is where it is, and carries what the diff compares
    for row in scans["new"]["data"]["urls"]:
        assert row["match_reason"], row
        assert row["content_digest"].startswith("d1.") and row["excerpt"], row
    member = new[site + "/other"]
    assert member["match_reason"].startswith(f"{member['match_rule']} with canonical #")
    assert new[site + "/account"]["match_reason"].startswith("L1 login wall: status 200, template fingerprint ")
    assert new[sw + "/"]["match_reason"].startswith("alone: eligible")


def test_diff_names_each_changed_url_and_nothing_else(scans):
    proc = _diff(scans, "old", "new", "-o", str(scans["tmp"] / "diff.json"))
    assert proc.returncode == 1, proc.stderr
    d = json.loads((scans["tmp"] / "diff.json").read_text())
    site, sw, files = scans["base"]["site"], scans["base"]["switcher"], scans["base"]["files"]
    urls = {u["url"]: u["kinds"] for u in d["urls"]["changed"]}
    assert urls == {
        site + "/account": ["locked"],
        site + "/news": ["gone"],
        site + "/other": ["content"],  # now a copy of /article
        site + "/essay": ["content"],  # replaced content on a page with no copy
        site + "/old": ["moved"],  # a new redirect to a listed page
        site + "/promo": ["moved"],  # a new redirect to a page outside the list
        sw + "/": ["content"],  # a default (thin) page replaced by a site
        files + "/": ["listing"],  # a directory listing that gained a file
    }
    by = {u["url"]: u for u in d["urls"]["changed"]}
    assert by[files + "/"]["what"] == "listing 8 -> 9 entries (+1)"
    assert by[site + "/old"]["what"] == f"now redirects to {site}/stable"
    assert by[site + "/essay"]["old"]["excerpt"] != by[site + "/essay"]["new"]["excerpt"]
    assert by[site + "/other"]["what"].endswith(f"; now grouped with {site}/article (+1 more)")  # it became a copy
    assert (by[site + "/account"]["old"]["label"], by[site + "/account"]["new"]["label"]) == ("content", "L1")
    # pages whose copy changed are collateral, apart; the noisy pages are nowhere
    collateral = {x["url"] for x in d["urls"]["collateral"]}
    assert {site + "/article", site + "/article-copy"} <= collateral
    assert collateral <= {site + "/article", site + "/article-copy", site + "/stable", scans["base"]["default1"] + "/",
                          scans["base"]["default2"] + "/"}
    for noisy in ("/noisy", "/tip", "/signin"):
        assert site + noisy not in urls and site + noisy not in collateral
    assert d["urls"]["added"] == d["urls"]["removed"] == [] and d["urls"]["regrouped"] == []
    # the clusters named are those the changed pages touched, old:ID and new:ID told apart
    for c in d["clusters"]["appeared"] + d["clusters"]["vanished"]:
        assert c["changed_urls"] and c["cluster_id"].startswith(("old:", "new:"))
    for c in d["clusters"]["changed"]:
        assert set(c["because"]) <= set(urls) and c["old_cluster"].startswith("old:")
    # the summary on stdout says the same, each URL with its before and after
    assert "8 URLs changed" in proc.stdout
    assert f"{site}/account  [locked] content -> L1 login wall" in proc.stdout
    assert "before: 200 content 'Account news'" in proc.stdout and "after:  200 L1 'Sign in'" in proc.stdout


def test_an_unchanged_rescan_reports_nothing_in_any_format(scans, tmp_path):
    proc = _diff(scans, "new", "again")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no changes" in proc.stdout
    csv_again = os.path.join(os.path.dirname(scans["again"]["path"]), "result.csv")
    proc = run_websim(["diff", scans["new"]["path"], csv_again], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout
    for path in (scans["old"]["path"], scans["new"]["path"]):
        proc = run_websim(["diff", path, path], cwd=str(tmp_path))
        assert proc.returncode == 0 and "no changes" in proc.stdout, proc.stdout + proc.stderr
    # the same scan written as JSON Lines (no cluster list, no meta) is the same scan
    jsonl = tmp_path / "new.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in scans["new"]["data"]["urls"]))
    proc = run_websim(["diff", scans["new"]["path"], str(jsonl)], cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout


def test_a_result_of_an_earlier_version_still_diffs(scans, tmp_path):
    data = dict(scans["old"]["data"])
    data["urls"] = [{k: v for k, v in r.items() if k not in ("content_digest", "excerpt")} for r in data["urls"]]
    older = tmp_path / "older.json"
    older.write_text(json.dumps(data))
    proc = run_websim(["diff", str(older), scans["new"]["path"], "-o", str(tmp_path / "d.json")], cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    d = json.loads((tmp_path / "d.json").read_text())
    site = scans["base"]["site"]
    urls = {u["url"]: u["kinds"] for u in d["urls"]["changed"]}
    assert urls[site + "/account"] == ["locked"] and urls[site + "/old"] == ["moved"]
    assert urls[site + "/news"] == ["gone"]
    assert urls[site + "/other"] == ["title"]  # 'Bread' -> 'Rivers of the north'; its text is not compared
    assert site + "/essay" not in urls  # same title, alone in both: without digests this change cannot be seen
    assert d["counts"]["unchecked"] > 0 and "older.json has no content_digest" in d["notes"][0]
    assert "note: content of" in proc.stdout


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
    assert "checks: identical judged text: only the checks of what the pages call themselves apply" in proc.stdout
    assert "decision: duplicates (rule1)" in proc.stdout
    # a threshold given on the command line is the one used
    loose = explain(site + "/stable", site + "/article", "-s", "WEBSIM_TEXT_JACCARD_THRESHOLD=0",
                    "-s", 'WEBSIM_PARAMS={"decision.heading_min_jaccard": 0, "decision.title_own_words": 0}')
    assert loose["decision"]["text_threshold"] == 0 and loose["duplicate"] is True
    assert loose["clustered"] == "apart" and loose["agrees"] is None
    bad = run_websim(["explain", result, site + "/article", site + "/nope", "--features", features],
                     cwd=str(scans["tmp"]))
    assert bad.returncode == 2 and "no record with URL" in bad.stderr


def test_the_report_shows_each_change_before_and_after(scans):
    from playwright.sync_api import sync_playwright

    report = scans["tmp"] / "changes-report"
    proc = _diff(scans, "old", "new", "--report", str(report), "--old-thumbnails",
                 str(scans["tmp"] / "scan1" / "thumbs"), "--thumbnails", str(scans["tmp"] / "scan2" / "thumbs"))
    assert proc.returncode == 1, proc.stderr
    assert (report / "thumbs-old").is_dir() and (report / "thumbs").is_dir()
    site = scans["base"]["site"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_browser()[0], args=list(DEFAULT_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((report / "index.html").as_uri())
            page.wait_for_selector("html[data-loaded='1']", state="attached", timeout=30000)
            tab = page.locator("#tab-changes")
            assert tab.is_visible() and page.text_content("#n-changes") == "8"
            tab.click()
            cards = page.locator(".change.card")
            assert cards.count() == 8
            essay = page.locator(".change.card", has_text=site + "/essay")
            essay.scroll_into_view_if_needed()
            shots = essay.locator("img.shot")
            assert [src.split("/")[0] for src in shots.evaluate_all("els => els.map(e => e.getAttribute('src'))")] \
                == ["thumbs-old", "thumbs"]
            shots.first.evaluate("e => e.decode()")  # loaded and decoded: the files are there
            shots.last.evaluate("e => e.decode()")
            page.screenshot(path=str(scans["tmp"] / "report-changes.png"), full_page=True)
            page.locator(".chip[data-kind='listing']").click()
            assert page.locator(".change.card").count() == 1
            assert "entries (+1)" in page.text_content(".change.card")
            page.locator(".chip[data-kind='']").click()
            assert page.locator(".change.card").count() == 8
            assert "content → L1" not in page.text_content("#list")  # the old wording is gone
            heads = page.eval_on_selector_all(".changes-list h3", "els => els.map(e => e.textContent)")
            assert any(h.startswith("Collateral") for h in heads)
            # the member view says why each member joined
            page.locator("#tabs button[data-tab='clusters']").click()
            reasons = page.eval_on_selector_all(".members .reason", "els => els.map(e => e.textContent)")
            assert any(r.startswith("rule1 with canonical #") or r.startswith("exact") for r in reasons), reasons
            assert errors == []
        finally:
            browser.close()
