"""Special-page rules end to end: real servers, real Chromium, the ``websim`` CLI, result.json.

Pages come from real software started by the tests on 127.0.0.1 (scrapy_websim/testing/servers.py): nginx (its
own 404 and 502 pages, a soft 404, a WAF page with a random incident id per request, 401/403
login forms, maintenance pages at 200 and 503, thin pages, redirect chains, URL variants,
python3-doc pages that mention error/login/maintenance), Apache httpd's error pages and the
Django admin login. Two crawls in subprocesses: the ``websim`` CLI with default rules, and the
example project's ``strict_login`` spider whose ``custom_settings`` add an L1 keyword and switch
T1 off. The assertions are on ``cluster_kind`` / ``cluster_id`` in the written result.json.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from contextlib import ExitStack
from typing import Dict, List, Optional

import pytest

from scrapy_websim.testing.crawl import by_url, crawl, load, run_websim, scrapy_env
from scrapy_websim.testing.servers import apache_server, django_server, free_port, have, nginx_server
from tests.crawl import REPO

pytestmark = pytest.mark.crawl

PYDOC = "/usr/share/doc/python3.11/html"
TIMEOUTS = ["-s", "WEBSIM_HTTP_TIMEOUT=5", "-s", "WEBSIM_PAGE_TIMEOUT=10", "-s", "WEBSIM_STABLE_TIMEOUT=4"]
RULE_KINDS = {"E1", "E3", "L1", "W1", "M1", "T1", "R1", "U1"}

LOREM = (
    "Duplicate detection compares what pages say and how they look. This paragraph is ordinary "
    "article text about crawling, rendering and clustering of web pages, written so that the main "
    "text is long enough to be a real content page and not a thin page of any kind. "
)


def page(title: str, body: str, chrome: bool = True) -> str:
    nav = ("<header><nav><a href='/'>Home</a> <a href='/docs/'>Docs</a> <a href='/blog/'>Blog</a>"
           "<form action='/search'><input name=q placeholder=Search></form></nav></header>") if chrome else ""
    foot = "<footer>(c) Example Ltd. <a href='/privacy'>Privacy</a></footer>" if chrome else ""
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title>"
            f"<script>var words = 'error login maintenance captcha access denied';</script>"
            f"<style>.error{{color:red}}</style></head><body>{nav}<main>{body}</main>{foot}</body></html>")


ARTICLE = "".join(f"<p>{LOREM} Section {i}.</p>" for i in range(8))

# nginx: `return` bodies are single-quoted nginx strings; $request_id is 32 random hex digits per
# request, so the WAF page and the login form's CSRF value change on every fetch.
NGINX_LOCATIONS = r"""
%(listen80)s
location = /dead { proxy_pass http://127.0.0.1:%(dead)d; }
location = /dead2 { proxy_pass http://127.0.0.1:%(dead)d/other; }
location /shop/ { try_files $uri /soft404.html; }
location /waf/ { default_type text/html; return 403 '<!doctype html><html><head><title>Access denied</title></head><body><h1>Access denied</h1><p>This request was blocked by the security rules of the website firewall.</p><p>Incident ID: $request_id</p><p>Time: $time_iso8601</p></body></html>'; }
location /private/ { default_type text/html; return 401 '<!doctype html><html><head><title>Members</title></head><body><h1>Please sign in</h1><form method=post><input type=hidden name=csrf value="$request_id"><label>Username <input name=u></label><label>Password <input type=password name=p></label><button>Sign in</button></form></body></html>'; }
location /staff/ { default_type text/html; return 403 '<!doctype html><html><head><title>Staff portal</title></head><body><div class=box><h2>Staff login required</h2><p>Request $request_id</p><form method=post action=/auth><input name=email placeholder=Email><input type=password name=pw><input type=submit value="Log in"></form><a href=/reset>Forgot password?</a></div></body></html>'; }
location = /maint503 { error_page 503 /maint.html; return 503; }
location = /old { return 301 /older; }
location = /older { return 302 /final.html; }
location = /old2 { return 301 /final.html; }
location = /dl/1 { return 302 /files/a.txt; }
location = /dl/2 { return 301 /files/a.txt; }
location = /view { default_type text/html; return 200 '<!doctype html><html><head><title>Item $arg_id</title></head><body><h1>Item $arg_id</h1><p>Item number $arg_id. %(lorem)s</p></body></html>'; }
location /py/ { alias %(pydoc)s/; }
"""  # noqa: E501 - an nginx `return` body is one quoted string on its line
NGINX_FILES = {
    "soft404.html": page("Page not found | Example shop", "<h1>Oops! We couldn't find that page.</h1>"
                         "<p>It may have moved. Try the search box or go back home.</p>"),
    "maint.html": page("Scheduled maintenance", "<h1>We'll be back soon!</h1><p>Sorry for the "
                       "inconvenience, we are performing scheduled maintenance.</p>", chrome=False),
    "thin1.html": "<html><head><title>a</title></head><body><p>Coming later. Ref 1234.</p></body></html>",
    "thin1b.html": "<html><head><title>a</title></head><body><p>Coming later. Ref 98.</p></body></html>",
    "thin2.html": "<html><head><title>b</title></head><body><p>Nothing here yet.</p></body></html>",
    # the per-spider test: no default L1 keyword, a form, little text -> T1 by default
    "club.html": page("Members area", "<h1>Members area</h1><form method=post><input name=code "
                      "placeholder='Access code'><button>Enter</button></form>", chrome=False),
    "final.html": page("Final", ARTICLE),
    "docs/index.html": page("Docs", "".join(f"<p>Chapter {i}: how the crawler renders pages in Chromium, "
                                           f"waits for the network to settle and reads the DOM. {LOREM[:120]}</p>"
                                           for i in range(10))),
    "files/a.txt": "plain text download A\n" * 20,
    "files/b.txt": "plain text download B\n" * 20,
}
PYDOC_PAGES = [
    "tutorial/errors.html", "library/urllib.error.html", "library/email.errors.html",
    "library/getpass.html", "library/pwd.html", "library/crypt.html", "library/ftplib.html",
    "library/secrets.html", "library/devmode.html", "howto/logging.html", "library/exceptions.html",
]
APACHE_HOME = page("Apache home", "".join(
    f"<p>Entry {i}: the Apache httpd instance of this test serves this home page and answers other "
    f"paths with its own error documents, whose wording it chooses itself.</p>" for i in range(8)))
APACHE_CONFIG = ("<Location /deny>\n    Require all denied\n</Location>\n"
                 "RewriteEngine on\nRewriteRule ^/boom$ - [R=500]\nRewriteRule ^/busy$ - [R=503]\n")


def _port80_free() -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", 80))
        except OSError:
            return False
    return True


class Site:
    """URLs by name, the expected label per URL and the groups that must share one cluster."""

    def __init__(self, ng: str, ap: str, dj: str, port80: bool) -> None:
        self.ng, self.ap, self.dj, self.port80 = ng, ap, dj, port80
        n, a, d = ng, ap, dj
        # url -> expected cluster_kind ("" or "content" both mean: no rule label)
        self.expected: Dict[str, Optional[str]] = {
            n + "/missing-1": "E3", n + "/missing/2.html": "E3",
            n + "/dead": "E1", n + "/dead2": "E1", n + "/maint503": "E1",
            n + "/shop/a": "E3", n + "/shop/b?x=1": "E3",
            n + "/waf/1": "W1", n + "/waf/2": "W1",
            n + "/private/a": "L1", n + "/private/b": "L1", n + "/staff/x": "L1",
            n + "/maint.html": "M1",
            n + "/thin1.html": "T1", n + "/thin1b.html": "T1", n + "/thin2.html": "T1",
            n + "/club.html": "T1",
            n + "/final.html": None, n + "/old": None, n + "/old2": None,
            n + "/dl/1": "R1", n + "/dl/2": "R1",
            n + "/files/b.txt": "U1", n + "/files/b.txt?utm_source=news&utm_medium=mail": "U1",
            n + "/files/b.txt?fbclid=abc123": "U1",
            n + "/view?id=1": None, n + "/view?id=2": None,
            n + "/docs/": None, n + "/docs/index.html": None, n + "/docs/?utm_source=news": None,
            **{n + "/py/" + p: None for p in PYDOC_PAGES},
            a + "/": None, a + "/missing": "E3", a + "/other/missing.html": "E3", a + "/deny": "E3",
            a + "/boom": "E1", a + "/busy": "E1",
            d + "/admin/": "L1", d + "/admin/login/?next=/admin/auth/user/": "L1", d + "/no/such/page": "E3",
        }
        self.groups: List[List[str]] = [
            [n + "/missing-1", n + "/missing/2.html"],  # nginx's 404 template
            [n + "/dead", n + "/dead2"],  # nginx's 502 page (one template)
            [n + "/maint503"],  # a 503 maintenance page: another 5xx template
            [n + "/shop/a", n + "/shop/b?x=1"],  # soft 404
            [n + "/waf/1", n + "/waf/2"],  # random incident ids, one template
            [n + "/private/a", n + "/private/b"],  # 401 login form, random CSRF value
            [n + "/staff/x"],  # 403 login form: another template, alone
            [n + "/maint.html"],  # a single matching page gets its label
            [n + "/thin1.html", n + "/thin1b.html"],  # same thin template, different number
            [n + "/thin2.html"], [n + "/club.html"],
            [n + "/final.html", n + "/old", n + "/old2"],  # redirect chains to one final URL
            [n + "/dl/1", n + "/dl/2"],  # R1 between pages content clustering does not see
            [n + "/files/b.txt", n + "/files/b.txt?utm_source=news&utm_medium=mail",
             n + "/files/b.txt?fbclid=abc123"],  # U1
            [n + "/docs/", n + "/docs/index.html", n + "/docs/?utm_source=news"],
            [a + "/missing", a + "/other/missing.html"], [a + "/deny"], [a + "/boom"], [a + "/busy"],
            [d + "/admin/", d + "/admin/login/?next=/admin/auth/user/"], [d + "/no/such/page"],
        ]
        if port80:  # default port: http://127.0.0.1:80/x and http://127.0.0.1/x are one URL
            p80 = "http://127.0.0.1"
            self.expected.update({p80 + ":80/files/a.txt": "U1", p80 + "/files/a.txt?utm_campaign=x": "U1"})
            self.groups.append([p80 + ":80/files/a.txt", p80 + "/files/a.txt?utm_campaign=x"])

    @property
    def urls(self) -> List[str]:
        return list(self.expected)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for binary in ("nginx", "apache2"):
        if not have(binary):
            pytest.skip(f"{binary} not installed")
    if not os.path.isdir(PYDOC):
        pytest.skip("python3-doc not installed")
    port80 = _port80_free()
    locations = NGINX_LOCATIONS % {
        "dead": free_port(), "lorem": LOREM * 5, "pydoc": PYDOC,
        "listen80": "listen 127.0.0.1:80;" if port80 else "",
    }
    with ExitStack() as stack:
        ng = stack.enter_context(nginx_server(locations, NGINX_FILES))
        ap = stack.enter_context(apache_server(APACHE_CONFIG, {"index.html": APACHE_HOME}))
        dj = stack.enter_context(django_server())
        s = Site(ng, ap, dj, port80)
        # the small strict crawl runs alongside the main one (it is mostly start-up time)
        strict = _start_strict_crawl(tmp_path_factory.mktemp("strict"), ng)
        try:
            result = crawl(tmp_path_factory.mktemp("rules"), s.urls, extra=TIMEOUTS, timeout=240)
            out, err = strict["proc"].communicate(timeout=180)
        finally:
            if strict["proc"].poll() is None:
                strict["proc"].kill()
                strict["proc"].wait()
    assert strict["proc"].returncode == 0, err[-6000:]
    strict_rows = by_url(load(strict["out"]))
    return {"site": s, "data": result["data"], "rows": by_url(result["data"]),
            "strict": {p: strict_rows[ng + p] for p in STRICT_PATHS}}


STRICT_PATHS = ["/club.html", "/thin1.html", "/thin1b.html", "/private/a", "/missing-1", "/waf/1"]


def _start_strict_crawl(tmp, base: str) -> Dict:
    """`scrapy crawl strict_login` from example_project (its custom_settings: L1 += "members
    area", every rule but T1), started in the background."""
    listing = tmp / "urls.txt"
    listing.write_text("\n".join(base + p for p in STRICT_PATHS) + "\n", encoding="utf-8")
    out = str(tmp / "out.json")
    env = scrapy_env(tmp)
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "strict_login", "-a", f"urls={listing}", "-o", out, *TIMEOUTS],
        cwd=os.path.join(REPO, "example_project"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return {"proc": proc, "out": out}


def _kind(row) -> Optional[str]:
    return row["cluster_kind"] if row["cluster_kind"] in RULE_KINDS else None


def test_every_page_fetched_with_its_status(site):
    rows, s = site["rows"], site["site"]
    assert all(rows[u]["error"] == "" for u in s.urls), {u: rows[u]["error"] for u in s.urls if rows[u]["error"]}
    status = {u[len(s.ng):]: rows[u]["status_code"] for u in s.urls if u.startswith(s.ng)}
    assert status["/missing-1"] == 404 and status["/dead"] == 502 and status["/maint503"] == 503
    assert status["/shop/a"] == 200 and status["/maint.html"] == 200
    assert status["/waf/1"] == 403 and status["/private/a"] == 401 and status["/staff/x"] == 403
    assert [rows[s.ap + p]["status_code"] for p in ("/missing", "/deny", "/boom", "/busy")] == [404, 403, 500, 503]
    assert rows[s.dj + "/admin/"]["final_url"].startswith(s.dj + "/admin/login/")


def test_label_accuracy(site):
    rows, s = site["rows"], site["site"]
    got = {u: _kind(rows[u]) for u in s.urls}
    wrong = {u: (got[u], e) for u, e in s.expected.items() if got[u] != e}
    print(f"\nrule label accuracy on the rendered corpus: {len(got) - len(wrong)}/{len(got)}")
    assert not wrong


def test_groups_share_one_cluster_and_differ_from_each_other(site):
    rows, s = site["rows"], site["site"]
    ids = []
    for group in s.groups:
        cids = {rows[u]["cluster_id"] for u in group}
        assert len(cids) == 1 and "" not in cids, {u: rows[u]["cluster_id"] for u in group}
        ids.append(cids.pop())
    shared = {cid: [g for g, c in zip(s.groups, ids) if c == cid] for cid in ids if ids.count(cid) > 1}
    assert not shared, f"groups that must differ share a cluster: {shared}"
    clusters = {c["cluster_id"]: c for c in site["data"]["clusters"]}
    for group, cid in zip(s.groups, ids):
        members = {r["id"] for r in site["data"]["urls"] if r["cluster_id"] == cid}
        assert set(clusters[cid]["member_ids"]) == members == {rows[u]["id"] for u in group}
        assert sum(rows[u]["is_canonical"] for u in group) == 1


def test_cluster_ids_and_kinds(site):
    rows, s = site["rows"], site["site"]
    clusters = {c["cluster_id"]: c for c in site["data"]["clusters"]}
    prefix = {"E1": "err5xx-", "E3": "errtpl-", "L1": "loginwall-", "W1": "waf-", "M1": "maint-",
              "T1": "thin-", "R1": "redir-", "U1": "urlcanon-"}
    for url, expected in s.expected.items():
        row = rows[url]
        if expected is None:
            continue
        assert row["cluster_id"].startswith(prefix[expected]), (url, row["cluster_id"])
        assert clusters[row["cluster_id"]]["kind"] == expected
        assert row["match_rule"] in ("canonical", expected)
    # one cluster per template whatever the host: the rule prefix and the full 64-bit hash
    for url in (s.ng + "/dead", s.ap + "/boom", s.ng + "/waf/1", s.ng + "/missing-1", s.dj + "/admin/"):
        assert re.fullmatch(r"[a-z0-9]+-[0-9a-f]{16}", rows[url]["cluster_id"]), rows[url]["cluster_id"]
    assert rows[s.ap + "/boom"]["cluster_id"] != rows[s.ap + "/busy"]["cluster_id"]
    assert rows[s.ng + "/files/b.txt?fbclid=abc123"]["cluster_id"] == f"urlcanon-{s.ng}-/files/b.txt"


def test_documentation_that_mentions_error_login_maintenance_stays_content(site):
    rows, s = site["rows"], site["site"]
    for p in PYDOC_PAGES:
        row = rows[s.ng + "/py/" + p]
        assert row["status_code"] == 200 and row["cluster_kind"] in ("", "content"), (p, row["cluster_id"])
    titles = " ".join(rows[s.ng + "/py/" + p]["title"].lower() for p in PYDOC_PAGES)
    assert "errors" in titles and "logging" in titles and "password" in titles


def test_redirects_and_url_variants(site):
    rows, s = site["rows"], site["site"]
    final = s.ng + "/final.html"
    assert rows[s.ng + "/old"]["redirect_chain"] == [s.ng + "/old", s.ng + "/older", final]
    assert {rows[s.ng + p]["final_url"] for p in ("/old", "/old2", "/final.html")} == {final}
    r1 = [rows[s.ng + p] for p in ("/dl/1", "/dl/2")]
    assert {r["final_url"] for r in r1} == {s.ng + "/files/a.txt"}
    assert {r["cluster_kind"] for r in r1} == {"R1"}
    # URL variants: one normalized_url; /view?id=1 and ?id=2 keep their query and stay apart
    variants = ("/docs/", "/docs/index.html", "/docs/?utm_source=news")
    assert len({rows[s.ng + p]["normalized_url"] for p in variants}) == 1
    assert rows[s.ng + "/docs/index.html"]["normalized_url"] == s.ng + "/docs"
    v1, v2 = rows[s.ng + "/view?id=1"], rows[s.ng + "/view?id=2"]
    assert v1["normalized_url"] != v2["normalized_url"]
    assert v1["cluster_kind"] != "U1" and v2["cluster_kind"] != "U1"


def test_default_port_variant(site):
    s = site["site"]
    if not s.port80:
        pytest.skip("127.0.0.1:80 is in use")
    rows = site["rows"]
    a, b = rows["http://127.0.0.1:80/files/a.txt"], rows["http://127.0.0.1/files/a.txt?utm_campaign=x"]
    assert a["normalized_url"] == b["normalized_url"] == "http://127.0.0.1/files/a.txt"
    assert a["cluster_id"] == b["cluster_id"] == "urlcanon-http://127.0.0.1-/files/a.txt"


def test_spider_custom_settings_add_a_keyword_and_switch_a_rule_off(site):
    default, strict = site["rows"], site["strict"]
    ng = site["site"].ng
    # "members area" is not a default L1 keyword: the short form page is thin by default...
    assert default[ng + "/club.html"]["cluster_kind"] == "T1"
    # ...and a login wall for the spider that added the keyword
    assert strict["/club.html"]["cluster_kind"] == "L1"
    assert re.fullmatch(r"loginwall-[0-9a-f]{16}", strict["/club.html"]["cluster_id"])
    # T1 is off for the spider: thin pages are no rule page (the two variants are not URL variants)
    for p in ("/thin1.html", "/thin1b.html"):
        assert default[ng + p]["cluster_kind"] == "T1"
        assert strict[p]["cluster_kind"] == "" and strict[p]["cluster_id"] == ""
    # the other rules keep working for that spider
    assert [strict[p]["cluster_kind"] for p in ("/private/a", "/missing-1", "/waf/1")] == ["L1", "E3", "W1"]


@pytest.mark.skipif(not os.path.isdir(PYDOC), reason="python3-doc not installed")
def test_rule_features_is_signals_and_fingerprint_from_one_walk():
    """``rule_features`` (one walk, what the pipeline can call) equals the two functions."""
    import glob

    import lxml.html

    from scrapy_websim.core.params.rules import RuleParams
    from scrapy_websim.core.rules.signals import page_signals, rule_features, template_fingerprint

    params = RuleParams().with_keywords(extend_lists={"L1": ["members area"]})
    paths = sorted(glob.glob(os.path.join(PYDOC, "library", "*.html")))[::25] + [
        os.path.join(PYDOC, p) for p in PYDOC_PAGES]
    htmls = [open(p, "rb").read() for p in paths] + [h.encode() for h in NGINX_FILES.values() if "<html" in h]
    for html in htmls:
        doc = lxml.html.document_fromstring(html)
        title = (doc.findtext(".//title") or "").strip()
        assert rule_features(doc, title, params) == (page_signals(doc, title, params), template_fingerprint(doc))


# --------------------------------------------------------------------------------------------
# A fleet: the same server software on several 127.0.0.1 ports. One rule cluster per template
# across ports by default; WEBSIM_RULE_SCOPE = "origin" gives the reference tool's per-origin ids.

FLEET_LOGIN = ("<!doctype html><html><head><title>Sign in - Acme</title></head><body><h1>Sign in to Acme</h1>"
               "<form method=post><input type=hidden name=token value=\"$request_id\"><input name=email>"
               "<input type=password name=password><button>Sign in</button></form>"
               "<p>Request $request_id at $time_iso8601</p></body></html>")
APACHE_MODULES = ("auth_basic", "authn_core", "authn_file", "authz_user", "proxy", "proxy_http")
PREFIX = {"E1": "err5xx", "E3": "errtpl", "L1": "loginwall", "W1": "waf", "M1": "maint", "T1": "thin"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    from scrapy_websim.testing.servers import htpasswd_line, lighttpd_server

    for binary in ("nginx", "apache2", "lighttpd"):
        if not have(binary):
            pytest.skip(f"{binary} not installed")
    auth_dir = tmp_path_factory.mktemp("auth")
    os.chmod(auth_dir, 0o755)
    htpasswd = auth_dir / "htpasswd"
    htpasswd.write_text(htpasswd_line("admin", "secret"))
    os.chmod(htpasswd, 0o644)
    nginx_conf = (f"location /secret/ {{ auth_basic \"Restricted\"; auth_basic_user_file {htpasswd}; }}\n"
                  f"location = /bad {{ proxy_pass http://127.0.0.1:{free_port()}; }}\n"
                  f"location = /login {{ default_type text/html; return 200 '{FLEET_LOGIN}'; }}\n")
    apache_conf = (f"ServerSignature On\nRewriteEngine on\nRewriteRule ^/boom$ - [R=500]\n"
                   f"ProxyPass /app/ http://127.0.0.1:{free_port()}/\n"
                   f"<Location /secret>\nAuthType Basic\nAuthName \"Restricted\"\nAuthUserFile {htpasswd}\n"
                   f"Require valid-user\n</Location>\n")
    lighttpd_conf = (f'auth.backend = "htpasswd"\nauth.backend.htpasswd.userfile = "{htpasswd}"\n'
                     f'auth.require = ( "/secret/" => ( "method" => "basic", "realm" => "Restricted", '
                     f'"require" => "valid-user" ) )\n')
    groups: Dict[str, List[str]] = {}  # template -> URLs (two per port for the 404s)
    labels: Dict[str, str] = {}
    with ExitStack() as stack:
        for n in range(2):
            ng = stack.enter_context(nginx_server(nginx_conf))
            ap = stack.enter_context(apache_server(apache_conf, {"index.html": APACHE_HOME}, modules=APACHE_MODULES))
            lt = stack.enter_context(lighttpd_server(lighttpd_conf, modules=("mod_auth", "mod_authn_file")))
            for name, label, urls in (
                ("nginx-404", "E3", [ng + f"/missing-{n}", ng + "/a/b.html"]), ("nginx-502", "E1", [ng + "/bad"]),
                ("nginx-401", "L1", [ng + "/secret/"]), ("acme-login", "L1", [ng + "/login"]),
                ("apache-404", "E3", [ap + f"/missing-{n}", ap + "/a/b.html"]), ("apache-500", "E1", [ap + "/boom"]),
                ("apache-proxy-503", "E1", [ap + "/app/x"]), ("apache-401", "L1", [ap + "/secret/"]),
                ("lighttpd-404", "E3", [lt + f"/missing-{n}", lt + "/a/b.html"]),
                ("lighttpd-401", "L1", [lt + "/secret/"]),
            ):
                groups.setdefault(name, []).extend(urls)
                labels[name] = label
        urls = [u for members in groups.values() for u in members]
        tmp = tmp_path_factory.mktemp("fleet")
        features = str(tmp / "features.jsonl")
        default = crawl(tmp, urls, extra=[*TIMEOUTS, "--features-file", features], timeout=300)["data"]
    # the same pages re-clustered offline in origin scope (what a crawl with the setting gives)
    out = str(tmp / "origin.json")
    proc = run_websim(["cluster", features, "-o", out, "--rule-scope", "origin"], cwd=str(tmp))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {"groups": groups, "labels": labels, "default": default, "origin": load(out)}


def test_fleet_one_cluster_per_template_across_ports(fleet):
    data = fleet["default"]
    rows, clusters = by_url(data), {c["cluster_id"]: c for c in data["clusters"]}
    assert len(data["urls"]) == sum(len(m) for m in fleet["groups"].values())
    ids = {}
    for name, members in fleet["groups"].items():
        got = {rows[u]["cluster_id"] for u in members}
        assert len(got) == 1, (name, {u: rows[u]["cluster_id"] for u in members})
        cid = ids[name] = got.pop()
        label = fleet["labels"][name]
        assert re.fullmatch(PREFIX[label] + r"-[0-9a-f]{16}", cid), (name, cid)
        assert {rows[u]["cluster_kind"] for u in members} == {label}, name
        cluster = clusters[cid]
        assert sorted(cluster["member_ids"]) == sorted(rows[u]["id"] for u in members)
        assert cluster["origins"] == 2 and cluster["kind"] == label
    assert len(set(ids.values())) == len(ids), ids  # different templates never share an id
    # E1 by template: Apache's own 500 page and its proxy's 503 page are two clusters
    assert ids["apache-500"] != ids["apache-proxy-503"] != ids["nginx-502"]


def test_fleet_basic_auth_401_is_a_recorded_login_wall(fleet):
    rows = by_url(fleet["default"])
    for name in ("nginx-401", "apache-401", "lighttpd-401"):
        for url in fleet["groups"][name]:
            row = rows[url]
            assert row["status_code"] == 401 and row["error"] == "", row
            assert "html" in row["content_type"] and "401" in row["title"], row
            assert row["cluster_kind"] == "L1"


def test_fleet_origin_scope_gives_the_reference_tools_ids(fleet):
    data = fleet["origin"]
    rows = by_url(data)
    for name, members in fleet["groups"].items():
        label = fleet["labels"][name]
        for url in members:
            origin = url.split("/", 3)
            origin = f"{origin[0]}//{origin[2]}"
            cid = rows[url]["cluster_id"]
            if label == "E1":
                assert cid == f"err5xx-{origin}", (url, cid)  # every 5xx of the origin
            else:
                assert re.fullmatch(re.escape(f"{PREFIX[label]}-{origin}-") + "[0-9a-f]{16}", cid), (url, cid)
    assert all(c["origins"] == 1 for c in data["clusters"])
    ap = fleet["groups"]["apache-500"][0]
    assert rows[ap]["cluster_id"] == rows[ap.replace("/boom", "/app/x")]["cluster_id"]
