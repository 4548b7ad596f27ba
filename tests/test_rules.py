"""Special-page rules on real pages served by real software on 127.0.0.1 and on built pages.

The real servers (nginx, Apache httpd, Django) are started by the tests (scrapy_websim/testing/servers.py); the
documentation pages come from the python3-doc package (``/usr/share/doc/python3.11/html``).
"""

from __future__ import annotations

import os
import random
import string
from typing import Dict, Optional

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core.page.text import extract_main_text
from scrapy_websim.core.page.visible import visible_text
from scrapy_websim.core.params.rules import RULE_CODES, RuleParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.rules.signals import page_signals, rule_features, template_fingerprint
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.normalize import normalize_url
from scrapy_websim.testing.servers import Fetched, apache_server, django_server, fetch, free_port, have, nginx_server

PYDOC = "/usr/share/doc/python3.11/html"
DATA = os.path.join(os.path.dirname(__file__), "data", "rules")


def parse(html: str):
    return lxml.html.document_fromstring(html or "<html></html>")


def make_record(
    html: str, status: int = 200, url: str = "http://127.0.0.1/x", final_url: str = "",
    content_type: str = "text/html", params: RuleParams = RuleParams(), page_id: int = 0,
) -> PageRecord:
    """A PageRecord as the pipeline fills it (signals, fingerprint, main text from core.page.text)."""
    doc = parse(html)
    title = (doc.findtext(".//title") or "").strip()
    rec = PageRecord(
        id=page_id, url=url, final_url=final_url or url, status_code=status,
        content_type=content_type, title=title, html_len=len(html.encode("utf-8")),
        rendered="html" in content_type,
    )
    rec.normalized_url = normalize_url(url)
    if "html" in content_type:
        rec.text_len = len(extract_main_text(doc))
        rec.signals, rec.fingerprint = rule_features(doc, title, params, url=rec.final_url)
    return rec


def from_fetch(f: Fetched, params: RuleParams = RuleParams(), page_id: int = 0) -> PageRecord:
    return make_record(f.text, f.status, f.url, f.final_url, f.content_type.split(";")[0] or
                       "text/html", params, page_id)


def page(title: str, body: str, nav: bool = True) -> str:
    chrome = (
        "<header><nav><a href='/'>Home</a> <a href='/docs/'>Docs</a> <a href='/blog/'>Blog</a>"
        " <form action='/search'><input name=q placeholder=Search></form></nav></header>"
        if nav else ""
    )
    footer = "<footer>(c) Example Ltd. <a href='/privacy'>Privacy</a></footer>" if nav else ""
    return (f"<!doctype html><html><head><title>{title}</title>"
            f"<script>var t='error login maintenance captcha';</script>"
            f"<style>.error{{color:red}}</style></head><body>{chrome}<main>{body}</main>{footer}"
            f"</body></html>")


LOREM = (
    "Duplicate detection compares what pages say and how they look. This paragraph is ordinary "
    "article text about crawling, rendering and clustering of web pages, written so that the "
    "main text is long enough to be a real content page and not a thin page of any kind. "
)
ARTICLE = "".join(f"<p>{LOREM} Section {i}.</p>" for i in range(8))


# --------------------------------------------------------------------------------------------
# Built pages: what a person sees, and nothing else


def test_keywords_in_scripts_styles_and_attributes_are_not_seen():
    html = page("Widgets", "<div class='error login-box' data-x='access denied' title='maintenance'>"
                "<p>Widgets in stock.</p></div><template><h1>Page not found</h1></template>"
                "<noscript>Please enable JavaScript and cookies</noscript>"
                "<div hidden><h1>404 Not Found</h1></div>"
                "<div style='display: none'>Checking your browser</div>")
    sig = page_signals(parse(html), "Widgets")
    assert sig["kw"] == {}
    assert "Widgets in stock." in sig["head"]


def test_visible_button_labels_and_tails_are_seen():
    doc = parse("<html><body><p>Before <script>x()</script>after</p>"
                "<input type=submit value='Sign in'></body></html>")
    assert visible_text(doc) == "Before after Sign in"


def test_page_signals_does_not_mutate_the_document():
    html = page("Login", "<form><input name=u><input type=password name=p></form>")
    doc = parse(html)
    before = lxml.html.tostring(doc)
    page_signals(doc, "Login")
    template_fingerprint(doc)
    assert lxml.html.tostring(doc) == before


def test_signals_are_compact():
    html = page("Errors and exceptions", ARTICLE * 20)
    sig = page_signals(parse(html), "Errors and exceptions")
    assert len(repr(sig)) < 600


def test_word_boundaries_and_chinese_keywords():
    doc = parse("<html><body><h1>Terrorism and logging</h1></body></html>")
    assert page_signals(doc, "Blogging")["kw"] == {}
    doc = parse("<html><head><title>用户登录</title></head><body><h1>系统维护中</h1>"
                "<p>抱歉,您访问的页面不存在</p></body></html>")
    kw = page_signals(doc, "用户登录")["kw"]
    assert kw["L1"][0] >= 1 and kw["M1"][1] >= 1 and kw["E3"][2] >= 1


def _token(n: int = 32) -> str:
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(n))


def waf_page(incident: str, csrf: str, when: str) -> str:
    return page("Access denied", f"<h1>Access denied</h1><p>Your request was blocked by the web "
                f"application firewall.</p><p>Incident ID: {incident}</p><p>Time: {when}</p>"
                f"<form><input type=hidden name=csrf value='{csrf}'>"
                f"<input type=submit value='Retry'></form>", nav=False)


def test_fingerprint_ignores_per_request_tokens():
    a = template_fingerprint(parse(waf_page(_token(), _token(), "2024-05-01 10:00:01")))
    b = template_fingerprint(parse(waf_page(_token(), _token(), "2025-12-31 23:59:59")))
    assert a == b
    c = template_fingerprint(parse(waf_page("x1", "y", "now").replace("blocked", "stopped")))
    assert c != a
    assert 0 <= a < 2**64 and a.bit_length() > 32  # full width, not a 16-bit prefix


def test_fingerprint_ignores_echoed_paths():
    a = page("Not found", "<h1>Not found</h1><p>The page /shop/item-1.html was not found.</p>")
    b = page("Not found", "<h1>Not found</h1><p>The page /blog/2024/05/x was not found.</p>")
    assert template_fingerprint(parse(a)) == template_fingerprint(parse(b))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=string.ascii_lowercase + " 错误页面", min_size=1, max_size=20),
                min_size=1, max_size=4, unique=True))
def test_fingerprint_differs_for_different_templates(texts):
    fps = {template_fingerprint(parse(f"<html><body><h1>X</h1><p>{t}</p></body></html>"))
           for t in texts}
    normal = {" ".join(t.lower().split()) for t in texts}
    assert len(fps) == len(normal)


# --------------------------------------------------------------------------------------------
# Labels on built pages


LOGIN_FORM = ("<h1>Sign in</h1><form method=post><label>Email <input name=email></label>"
              "<label>Password <input type=password name=pw></label>"
              "<input type=hidden name=csrf value='{csrf}'><button>Sign in</button>"
              "<a href=/forgot>Forgot password?</a></form>")


@pytest.mark.parametrize("status, html, expected", [
    (500, page("Oops", ARTICLE), "E1"),
    (503, page("Down for maintenance", "<h1>Down for maintenance</h1><p>Back soon.</p>"), "E1"),
    (404, page("Not found", "<h1>Not found</h1>"), "E3"),
    (410, page("Gone", ARTICLE), "E3"),
    (200, page("Page not found - Example", "<h1>Sorry, this page does not exist</h1>"
               "<p>Try the search box.</p>"), "E3"),
    (200, page("页面不存在", "<h1>抱歉,您访问的页面不存在</h1><p>返回首页</p>"), "E3"),
    (401, page("Members", LOGIN_FORM.format(csrf=_token())), "L1"),
    (403, page("Members", LOGIN_FORM.format(csrf=_token())), "L1"),
    (200, page("Sign in", LOGIN_FORM.format(csrf=_token())), "L1"),
    (200, page("用户登录", "<form><input name=u placeholder=用户名><input type=password>"
               "<button>登录</button></form>"), "L1"),
    (403, waf_page(_token(), _token(), "now"), "W1"),
    (429, page("Too many requests", "<h1>Too many requests</h1><p>Slow down.</p>"), "W1"),
    (200, page("Just a moment...", "<h1>Checking your browser before accessing example.com"
               "</h1><p>Performance &amp; security by Cloudflare</p>", nav=False), "W1"),
    (403, page("Forbidden", "<h1>Forbidden</h1><p>You don't have permission.</p>"), "E3"),
    # a plain "access denied" is any server's 403 (Tomcat's); a WAF names the block or its vendor
    (403, page("403 Access Denied", "<h1>403 Access Denied</h1><p>You are not authorized to view "
               "this page.</p>", nav=False), "E3"),
    (403, page("Access Denied", "<h1>Access Denied</h1><p>You don't have permission to access this "
               "server.</p><p>Reference #18.2f3c1702.1700000000.5a3e1b</p>", nav=False), "W1"),
    (200, page("Scheduled maintenance", "<h1>We'll be back soon</h1><p>We are upgrading.</p>"),
     "M1"),
    (200, page("网站维护", "<h1>系统维护中</h1><p>请稍后访问</p>"), "M1"),
    (200, "<html><head><title>t</title></head><body><p>Tiny.</p></body></html>", "T1"),
    (200, page("Short", "<p>Just a short note about widgets.</p>"), "T1"),
    (200, page("Article", ARTICLE), None),
    # Content that mentions the words stays content.
    (200, page("Handling 404 errors", "<h1>Handling 404 errors</h1>" + ARTICLE), None),
    (200, page("Login and sessions", "<h1>Log in</h1>" + ARTICLE +
               "<form><input name=u><input type=password></form>"), None),
    (200, page("Maintenance schedule of the bridge", "<h1>Maintenance</h1>" + ARTICLE), None),
    (200, page("Captcha solving explained", "<h1>What is a CAPTCHA?</h1>" + ARTICLE), None),
    (200, page("Blog", ARTICLE + "<aside><form><h3>Login</h3><input name=u>"
               "<input type=password></form></aside>"), None),
])
def test_labels_of_built_pages(status, html, expected):
    assert special_label(make_record(html, status)) == expected


def test_non_html_and_failures():
    pdf = PageRecord(id=1, url="http://h/a.pdf", status_code=200, content_type="application/pdf")
    assert special_label(pdf) is None
    missing = PageRecord(id=2, url="http://h/a.json", status_code=404,
                         content_type="application/json")
    assert special_label(missing) == "E3"
    failed = PageRecord(id=3, url="http://h/", error="DNS lookup failed")
    assert special_label(failed) is None


def test_disabled_rules_fall_through_to_the_next_rule():
    login = make_record(page("Members", LOGIN_FORM.format(csrf="x")), 403)
    assert special_label(login) == "L1"
    no_l1 = RuleParams(enabled_rules=tuple(r for r in RULE_CODES if r != "L1"))
    assert special_label(login, no_l1) == "E3"
    no_l1_e3 = RuleParams(enabled_rules=tuple(r for r in RULE_CODES if r not in ("L1", "E3")))
    assert special_label(login, no_l1_e3) == "T1"  # 403 and short: thin
    e5 = make_record(page("x", ARTICLE), 502)
    assert special_label(e5, RuleParams(enabled_rules=("E3",))) is None


def test_per_spider_keyword_override():
    """A spider adds a keyword to E3 and switches W1 off (what custom_settings map onto)."""
    soft = page("Example shop", "<h1>The unicorn ate this page</h1><p>Back to the shop.</p>"
                "<p>" + "Browse our catalogue of widgets and gadgets. " * 12 + "</p>"
                "<aside>" + "<a href='/category'>Category</a> " * 20 + "</aside>")
    waf = waf_page("abc", "def", "now")
    base = RuleParams()
    assert special_label(make_record(soft, 200, params=base)) is None
    assert special_label(make_record(waf, 403, params=base)) == "W1"
    spider = base.with_keywords(extend_lists={"E3": ["unicorn ate this page"]})
    spider = RuleParams(**{**spider.__dict__, "enabled_rules": ("E1", "E3", "L1", "M1", "T1")})
    assert "404" in spider.error_keywords  # extended, not replaced
    assert special_label(make_record(soft, 200, params=spider), spider) == "E3"
    assert special_label(make_record(waf, 403, params=spider), spider) == "E3"
    replaced = base.with_keywords(replace_lists={"W1": ["blocked by"]})
    assert replaced.waf_keywords == ("blocked by",)
    assert special_label(make_record(waf, 403, params=replaced), replaced) == "W1"


def test_validate_names_the_parameter():
    with pytest.raises(ValueError, match="enabled_rules"):
        RuleParams(enabled_rules=("E9",)).validate()
    with pytest.raises(ValueError, match="form_share"):
        RuleParams(form_share=1.5).validate()
    with pytest.raises(ValueError, match="error_keywords"):
        RuleParams(error_keywords="404").validate()
    with pytest.raises(ValueError, match="keyword lists"):
        RuleParams().with_keywords(extend_lists={"T1": ["x"]})
    RuleParams().validate()


# --------------------------------------------------------------------------------------------
# Real software on 127.0.0.1

needs_nginx = pytest.mark.skipif(not have("nginx"), reason="nginx not installed")
needs_apache = pytest.mark.skipif(not have("apache2"), reason="apache2 not installed")
needs_pydoc = pytest.mark.skipif(not os.path.isdir(PYDOC), reason="python3-doc not installed")

SOFT404 = page("Page not found | Example", "<h1>Oops! We couldn't find that page.</h1>"
               "<p>It may have moved. Try the search box or go back home.</p>")
MAINT = page("Scheduled maintenance", "<h1>We'll be back soon!</h1><p>Sorry for the "
             "inconvenience, we are performing scheduled maintenance.</p>", nav=False)
NGINX_LOCATIONS = r"""
location = /dead { proxy_pass http://127.0.0.1:%(dead)d; }
location = /dead2 { proxy_pass http://127.0.0.1:%(dead)d/other; }
location /shop/ { try_files $uri /soft404.html; }
location /waf/ { default_type text/html; return 403 '<!doctype html><html><head><title>Access denied</title></head><body><h1>Access denied</h1><p>This request was blocked by the security rules of the website firewall.</p><p>Incident ID: $request_id</p><p>Time: $time_iso8601</p></body></html>'; }
location /private/ { default_type text/html; return 401 '<!doctype html><html><head><title>Members area</title></head><body><h1>Please sign in</h1><form method=post><input type=hidden name=csrf value="$request_id"><label>Username <input name=u></label><label>Password <input type=password name=p></label><button>Sign in</button></form></body></html>'; }
location = /maint503 { error_page 503 /maint.html; return 503; }
location = /old { return 301 /older; }
location = /older { return 302 /final.html; }
location = /old2 { return 301 /final.html; }
location = /view { default_type text/html; return 200 '<!doctype html><html><head><title>Item $arg_id</title></head><body><h1>Item $arg_id</h1><p>%(lorem)s</p></body></html>'; }
location /py/ { alias %(pydoc)s/; }
"""  # noqa: E501 - an nginx `return` body is one quoted string on its line
NGINX_FILES = {
    "soft404.html": SOFT404,
    "maint.html": MAINT,
    "thin1.html": "<html><head><title>a</title></head><body><p>Coming later.</p></body></html>",
    "thin2.html": "<html><head><title>b</title></head><body><p>Nothing yet.</p></body></html>",
    "final.html": page("Final", ARTICLE),
    "docs/index.html": page("Docs", ARTICLE + "<p>The docs index.</p>"),
}
PYDOC_PAGES = [
    "tutorial/errors.html", "library/urllib.error.html", "library/email.errors.html",
    "library/getpass.html", "library/pwd.html", "library/spwd.html", "library/crypt.html",
    "library/ftplib.html", "library/ensurepip.html", "library/secrets.html", "library/http.html",
    "library/devmode.html", "howto/logging.html", "library/exceptions.html",
]

#: path -> expected label (None: content page)
NGINX_EXPECTED: Dict[str, Optional[str]] = {
    "/missing-1": "E3", "/missing/2.html": "E3", "/dead": "E1", "/dead2": "E1",
    "/shop/a": "E3", "/shop/b?x=1": "E3", "/waf/1": "W1", "/waf/2": "W1",
    "/private/a": "L1", "/private/b": "L1", "/maint.html": "M1", "/maint503": "E1",
    "/thin1.html": "T1", "/thin2.html": "T1", "/final.html": None, "/old": None, "/old2": None,
    "/view?id=1": None, "/view?id=2": None, "/docs/": None, "/docs/index.html": None,
    "/docs/?utm_source=news": None,
    **{"/py/" + p: None for p in PYDOC_PAGES},
}


@pytest.fixture(scope="module")
def nginx_site():
    if not have("nginx") or not os.path.isdir(PYDOC):
        pytest.skip("nginx or python3-doc not installed")
    locs = NGINX_LOCATIONS % {"dead": free_port(), "lorem": LOREM * 5, "pydoc": PYDOC}
    with nginx_server(locs, NGINX_FILES) as base:
        pages = {path: fetch(base + path) for path in NGINX_EXPECTED}
        yield base, pages


def _labels(pages, params=RuleParams()):
    return {path: special_label(from_fetch(f, params), params) for path, f in pages.items()}


@needs_nginx
@needs_pydoc
def test_nginx_site_labels(nginx_site):
    _base, pages = nginx_site
    assert pages["/missing-1"].status == 404 and pages["/dead"].status == 502
    assert pages["/shop/a"].status == 200 and pages["/maint503"].status == 503
    assert pages["/old"].final_url.endswith("/final.html")
    got = _labels(pages)
    wrong = {p: (got[p], e) for p, e in NGINX_EXPECTED.items() if got[p] != e}
    print(f"\nlabel accuracy on the nginx site: {len(got) - len(wrong)}/{len(got)}")
    assert not wrong


@needs_nginx
def test_nginx_error_pages_read_as_a_person_reads_them(nginx_site):
    _base, pages = nginx_site
    sig = page_signals(parse(pages["/missing-1"].text), "404 Not Found")
    assert sig["kw"]["E3"][0] >= 1 and sig["kw"]["E3"][1] >= 1  # title and heading
    assert sig["h"] == "404 Not Found"
    waf1, waf2 = (from_fetch(pages[p]) for p in ("/waf/1", "/waf/2"))
    assert pages["/waf/1"].text != pages["/waf/2"].text  # random incident id per request
    assert waf1.fingerprint == waf2.fingerprint
    nf1, nf2 = (from_fetch(pages[p]) for p in ("/missing-1", "/missing/2.html"))
    assert nf1.fingerprint == nf2.fingerprint != waf1.fingerprint
    login = from_fetch(pages["/private/a"])
    assert login.signals["pw"] == 1 and login.signals["fs"] > 0.5


@needs_apache
def test_apache_error_pages():
    config = ("<Location /deny>\n    Require all denied\n</Location>\n"
              "RewriteEngine on\nRewriteRule ^/boom$ - [R=500]\nRewriteRule ^/busy$ - [R=503]\n")
    with apache_server(config, {"index.html": page("Home", ARTICLE)}) as base:
        pages = {p: fetch(base + p) for p in ("/", "/missing", "/other/missing.html", "/deny",
                                              "/boom", "/busy")}
    assert [pages[p].status for p in pages] == [200, 404, 404, 403, 500, 503]
    assert "Apache" not in pages["/missing"].text or "Not Found" in pages["/missing"].text
    recs = {p: from_fetch(f) for p, f in pages.items()}
    labels = {p: special_label(r) for p, r in recs.items()}
    assert labels == {"/": None, "/missing": "E3", "/other/missing.html": "E3", "/deny": "E3",
                      "/boom": "E1", "/busy": "E1"}
    # Apache's 403 says "Forbidden", which is not WAF wording: E3, in its own template.
    assert recs["/missing"].fingerprint == recs["/other/missing.html"].fingerprint
    assert recs["/deny"].fingerprint != recs["/missing"].fingerprint


def test_django_admin_login_and_404():
    with django_server() as base:
        login = fetch(base + "/admin/")
        login2 = fetch(base + "/admin/login/?next=/admin/auth/user/")
        missing = fetch(base + "/no/such/page")
    assert login.status == 200 and "/admin/login/" in login.final_url
    assert "csrfmiddlewaretoken" in login.text
    rec, rec2 = from_fetch(login), from_fetch(login2)
    assert rec.signals["pw"] == 1
    assert special_label(rec) == "L1"
    assert rec.fingerprint == rec2.fingerprint  # different CSRF token and next=, same template
    assert missing.status == 404 and special_label(from_fetch(missing)) == "E3"


def test_rule_scope_setting():
    from scrapy_websim.config import WebsimConfig, WebsimParams
    from scrapy_websim.config_values import ConfigError

    assert WebsimParams.from_settings({}, WebsimConfig()).assign.rules.scope == "template"
    params = WebsimParams.from_settings({"WEBSIM_RULE_SCOPE": "origin"}, WebsimConfig())
    assert params.assign.rules.scope == "origin"
    with pytest.raises(ConfigError, match="WEBSIM_RULE_SCOPE must be one of 'template', 'origin', got 'host'"):
        WebsimParams.from_settings({"WEBSIM_RULE_SCOPE": "host"}, WebsimConfig())


# --------------------------------------------------------------------------------------------
# Fleets: what the rules judge is the page itself (its status and own content), not its chrome,
# its topic or what it echoes of its URL; fingerprints survive per-host and per-request bytes.

WIKI_SKIN = ("<!doctype html><html><head><title>{title} - Wiki</title></head><body>"
             "<div id=mw-head><nav id=p-personal><a href=/login>Log in</a> <a href=/join>Create account</a></nav>"
             "<div role=search><form><input name=search><input type=submit value=Go></form></div></div>"
             "<div id=mw-panel><div class=portlet><h3>Navigation</h3><a href=/>Main page</a> "
             "<a href=/help>Help</a> <a href=/maint>Maintenance tasks</a></div></div>"
             "<main id=content><h1>{title}</h1>{body}</main>"
             "<footer>Last edited {stamp}. Request {rid}.</footer></body></html>")
MISSING = ("<p>This wiki does not have a page with this exact title. You can search for this page title "
           "in other pages, or create this page.</p>")


def wiki(title: str, body: str = MISSING) -> str:
    return WIKI_SKIN.format(title=title, body=body, stamp="2026-11-23 07:00", rid=os.urandom(16).hex())


def test_a_404_whose_sidebar_says_log_in_is_an_error_page_and_one_template():
    urls = ["/wiki/Fleet_Topology", "/wiki/Maintenance_window", "/wiki/Login", "/wiki/Access_denied"]
    records = [make_record(wiki(u.rsplit("/", 1)[1].replace("_", " ")), 404, "http://127.0.0.1:8080" + u)
               for u in urls]
    assert [special_label(r) for r in records] == ["E3"] * 4
    assert len({r.fingerprint for r in records}) == 1  # the echoed title is not part of the template
    other = make_record(wiki("Fleet Topology", "<p>Nothing here, the page was removed.</p>"), 404,
                        "http://127.0.0.1:8080/wiki/Fleet_Topology")
    assert other.fingerprint != records[0].fingerprint


def test_chrome_login_box_on_an_error_page_does_not_make_a_login_wall():
    sidebar_login = ("<aside><form action=/login><h3>Log in</h3><input name=u>"
                     "<input type=password name=p><button>Log in</button></form></aside>")
    html = page("Not found", "<h1>Not found</h1><p>No such page.</p>" + sidebar_login)
    assert special_label(make_record(html, 404)) == "E3"


def test_http_auth_wall_is_a_login_wall_whatever_its_body():
    rec = make_record("<html><head><title>401 Unauthorized</title></head><body><h1>Unauthorized</h1>"
                      "<p>This server could not verify that you are authorized.</p></body></html>", 401)
    assert special_label(rec) == "E3"  # a plain 401 page
    rec.www_authenticate = 'Basic realm="Restricted"'
    assert special_label(rec) == "L1"
    plain = PageRecord(id=1, url="http://h/", status_code=401, content_type="text/plain",
                       www_authenticate='Digest realm="x"')
    assert special_label(plain) == "L1"
    assert special_label(rec, RuleParams(enabled_rules=("E1", "E3"))) == "E3"


APACHE_ERROR = ("<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\"><html><head><title>{code} {reason}</title>"
                "</head><body><h1>{reason}</h1><p>{message}</p><hr><address>Apache/2.4.62 (Debian) Server at "
                "{host} Port {port}</address></body></html>")


def test_fingerprint_ignores_host_port_path_and_tokens():
    def apache(host, port, path, reason="Not Found"):
        return parse(APACHE_ERROR.format(code=404, reason=reason, host=host, port=port,
                                         message=f"The requested URL {path} was not found on this server."))

    fps = {template_fingerprint(apache(h, p, path)) for h, p, path in (
        ("127.0.0.1", 8080, "/a"), ("localhost", 80, "/b/c.html"), ("www.example.org", 443, "/x?y=1"),
        ("intranet.corp.example", 8443, "/%7Euser/"))}
    assert len(fps) == 1
    assert template_fingerprint(apache("127.0.0.1", 80, "/a", "Gone")) not in fps
    login = ("<html><body><h1>Sign in</h1><form><input type=hidden name=csrf value='{t}'><input name=u>"
             "<input type=password name=p><button>Sign in</button></form><p>Request {t} at {when}</p>"
             "</body></html>")
    a = template_fingerprint(parse(login.format(t=_token(), when="2026-11-23T07:00:01+00:00")))
    b = template_fingerprint(parse(login.format(t=_token(), when="2025-01-02T23:59:59+00:00")))
    assert a == b


CJK_SPECIAL = [
    (200, "系统维护中", "<h1>系统维护中</h1><p>本站正在进行系统维护，预计两小时后恢复访问。</p>", "M1"),
    (200, "メンテナンスのお知らせ", "<h1>ただいまメンテナンス中です</h1><p>ご迷惑をおかけしております。</p>", "M1"),
    (200, "網站維護中", "<h1>網站維護中</h1><p>本站正在進行例行維護，請稍後再來。</p>", "M1"),
    (404, "ページが見つかりません",
     "<h1>ページが見つかりません</h1><p>お探しのページは見つかりませんでした。</p>", "E3"),
    (200, "ログイン", "<h1>会員ログイン</h1><form><input name=mail><input type=password name=pw>"
                     "<button>ログイン</button></form>", "L1"),
    (403, "アクセスが拒否されました", "<h1>アクセスが拒否されました</h1><p>不正なアクセスと判断されました。</p>", "W1"),
]


@pytest.mark.parametrize("status, title, body, expected", CJK_SPECIAL)
def test_cjk_special_pages(status, title, body, expected):
    html = f"<html><head><meta charset=utf-8><title>{title}</title></head><body>{body}</body></html>"
    assert special_label(make_record(html, status)) == expected


DEBREF = "/usr/share/debian-reference"
MAINT_JA = "/usr/share/doc/maint-guide-ja/html"


def _cjk_doc_pages():
    import glob

    return sorted(glob.glob(f"{DEBREF}/*.zh-cn.html") + glob.glob(f"{DEBREF}/*.ja.html")
                  + glob.glob(f"{MAINT_JA}/*.html"))


@pytest.mark.skipif(not _cjk_doc_pages(), reason="debian-reference-zh-cn/-ja, maint-guide-ja not installed")
def test_cjk_keyword_lists_leave_real_cjk_documentation_alone():
    """Every chapter and every section of the Chinese/Japanese Debian documentation is content:
    chapters about authentication, access control, firewalls, upgrades and errors included, also
    when the main-text extractor misses most of a page (tables of contents, noisy copies)."""
    import re as _re

    sections = 0
    for path in _cjk_doc_pages():
        raw = _re.sub(rb"^<\?xml[^>]*>", b"", open(path, "rb").read())
        doc = lxml.html.document_fromstring(raw)
        title = (doc.findtext(".//title") or "").strip()
        html = raw.decode("utf-8", "replace")
        whole = make_record(html)
        assert special_label(whole) is None, (path, whole.signals["kw"])
        whole.text_len = 150  # an extractor that kept only a heading
        assert special_label(whole) is None, path
        for sec in doc.xpath('//div[contains(@class, "section")][not(.//div[contains(@class, "section")])]'):
            body = lxml.html.tostring(sec, encoding="unicode")  # a leaf section: the shortest pages
            rec = make_record(f"<html><head><meta charset=utf-8><title>{title}</title></head>"
                              f"<body>{body}</body></html>")
            assert special_label(rec) in (None, "T1"), (path, rec.signals["h"], rec.signals["kw"])
            sections += 1
    assert sections > 400


def test_a_list_page_with_real_entries_is_not_thin():
    entries = "".join(f"<li><a href='/f/report-{i}.txt'>report-{i}.txt</a> 12 KB</li>" for i in range(25))
    html = page("Index of /f/", f"<h1>Index of /f/</h1><ul>{entries}</ul>")
    rec = make_record(html)
    rec.text_len, rec.page_type = 40, "list"
    assert special_label(rec) is None
    rec.page_type = "detail"
    assert special_label(rec) == "T1"


def test_chromium_refusals_are_fetched_again_without_the_browser():
    """A 401 auth challenge Chromium will not show (and an unsafe port) is fetched again with
    Scrapy's own HTTP client, for the websim spider and for any spider's tracked requests."""
    from scrapy import Request

    from scrapy_websim.render import static_fallback_reason
    from scrapy_websim.render.middlewares import TRACK, WebsimFailureDownloaderMiddleware

    auth = Exception("Page.goto: net::ERR_INVALID_AUTH_CREDENTIALS at http://127.0.0.1:8080/secret/")
    assert static_fallback_reason(auth) == "ERR_INVALID_AUTH_CREDENTIALS"
    assert static_fallback_reason(type("Failure", (), {"value": auth})()) == "ERR_INVALID_AUTH_CREDENTIALS"
    assert static_fallback_reason(Exception("net::ERR_UNSAFE_PORT")) == "ERR_UNSAFE_PORT"
    assert static_fallback_reason(Exception("net::ERR_CONNECTION_REFUSED")) == ""
    from scrapy.utils.test import get_crawler

    from scrapy_websim.crawler.addon import Addon

    mw = WebsimFailureDownloaderMiddleware.from_crawler(get_crawler(settings_dict={"ADDONS": {Addon: 500}}))
    req = Request("http://127.0.0.1:8080/secret/", meta={TRACK: True, "playwright": True, "playwright_page_methods": [],
                                                         "handle_httpstatus_all": True, "websim_render": True})
    again = mw.process_exception(req, auth)
    assert isinstance(again, Request) and again.url == req.url and again.dont_filter
    assert not any(k.startswith("playwright") for k in again.meta)
    assert again.meta[TRACK] and again.meta["handle_httpstatus_all"] and again.meta["websim_static"]
    assert mw.process_exception(Request("http://127.0.0.1:8080/x"), auth) is None  # not tracked: not ours


def test_echo_is_a_whole_piece_or_quoted_not_a_word_in_a_sentence():
    form = page("Sign in", "<h1>Sign in to your account</h1><form><input name=u><input type=password name=p>"
                "<button>Sign in</button></form>")
    a, b = (make_record(form, 200, f"http://127.0.0.1:8080{p}") for p in ("/login", "/account"))
    assert a.fingerprint == b.fingerprint  # "account" in a sentence is the template's own word
    search = "<h1>Search</h1><p>No results for “{q}”. Try other words.</p>"
    c, d = (make_record(page("Search", search.format(q=q)), 200, f"http://127.0.0.1:8080/search?q={q}")
            for q in ("blue widgets", "maintenance"))
    assert c.fingerprint == d.fingerprint and special_label(d) != "M1"


def test_a_template_is_one_fingerprint_whatever_it_echoes_of_its_request():
    """What a rule page prints of its request does not split its template: a wiki's missing
    article names the title (in a sentence, with a namespace, in brackets), a login page says
    where it returns to (``returnto=``), a soft 404 quotes a Chinese path. Different templates
    still differ."""
    missing = ("<h1>{t}</h1><p>There is currently no text in this page. You can search for {t} in other "
               "pages, or create the page {t}.</p>")
    wiki = [make_record(page(t + " - Wiki", missing.format(t=t)), 404, f"http://127.0.0.1:8080/wiki/{u}")
            for t, u in (("Owl (bird)", "Owl_(bird)"), ("Talk:Grey heron", "Talk:Grey_heron"),
                         ("Main Page", "Main_Page"))]
    assert len({r.fingerprint for r in wiki}) == 1
    login = ("<h1>Log in</h1><p>You must be logged in to edit pages. Return to {t}.</p><form>"
             "<input name=u><input type=password name=p><button>Log in</button></form>")
    logins = [make_record(page("Log in", login.format(t=t)), 200,
                          f"http://127.0.0.1:8080/index.php?title=Special:UserLogin&returnto={u}")
              for t, u in (("Main Page", "Main_Page"), ("Grey heron", "Grey_heron"))]
    assert logins[0].fingerprint == logins[1].fingerprint
    assert {special_label(r) for r in logins} == {"L1"}
    soft = "<h1>页面不存在</h1><p>您访问的{p}页面不存在,请返回首页。</p>"
    cjk = [make_record(page("页面不存在", soft.format(p=p)), 200, f"http://127.0.0.1:8080{q}")
           for p, q in (("文档/安装指南", "/文档/安装指南"), ("新闻", "/%E6%96%B0%E9%97%BB"))]
    assert cjk[0].fingerprint == cjk[1].fingerprint
    other = make_record(page("Log in", login.replace("edit pages", "read this wiki").format(t="Main Page")), 200,
                        "http://127.0.0.1:8080/index.php?title=Special:UserLogin&returnto=Main_Page")
    assert other.fingerprint != logins[0].fingerprint


def _wiki_page(page_id: str, trace, content: str) -> str:
    """A page in the shape of DokuWiki's template: the site's h1 and a breadcrumb trail of the
    pages this browser visited in the header, the page id and its content in ``main``."""
    crumbs = " » ".join(f"<a href='/doku.php?id={p}'>{p.split(':')[-1]}</a>" for p in trace)
    menu = "".join(f"<li><a href='/doku.php?do={d}'>{d.title()}</a></li>" for d in ("recent", "media", "index"))
    sidebar = "".join(f"<li><a href='/doku.php?id=ns:{w}'>Articles about {w} and related matters</a></li>"
                      for w in ("atoms", "comets", "fossils", "markets", "tariffs", "wages", "opera", "novels",
                                "poetry", "bridges", "rivers", "forests", "harbours", "senates"))
    return (f"<!doctype html><html><head><title>{page_id} [Bench Wiki]</title></head><body>"
            f"<header id='dokuwiki__header'><h1><a href='/'>Bench Wiki</a></h1><div id='dokuwiki__sitetools'>"
            f"<form><input type=search name=q></form><ul>{menu}</ul></div><div class='breadcrumbs'><div class='trace'>"
            f"<span class='bchead'>Trace:</span> {crumbs}</div></div></header>"
            f"<nav id='dokuwiki__aside'><ul>{sidebar}</ul></nav>"
            f"<main id='dokuwiki__content'><div class='pageId'><span>{page_id}</span></div>{content}</main>"
            "<footer>Except where otherwise noted, content on this wiki is licensed under a free licence.</footer>"
            "</body></html>")


def test_a_breadcrumb_trail_of_the_visit_does_not_split_a_template():
    """A wiki's missing-page answer (a 200) and its login page, each met after other pages of a
    crawl: the trail in the header lists what this browser visited before, so it differs per
    page. Each is one template: the missing pages one E3 template ("does not exist"), the login
    pages one L1 template, although the login form's main text was not found (its own text
    outside the chrome is what the rules read, not the site's menus)."""
    missing = ("<h1>This topic does not exist yet</h1><p>You've followed a link to a topic that doesn't exist "
               "yet. If permissions allow, you may create it by clicking on Create this page.</p>")
    trails = (["start", "culture:opera"], ["start", "science:atoms", "science:comets", "business:wages"],
              ["culture:novels"])
    pages = [make_record(_wiki_page(pid, trail, missing), 200, f"http://127.0.0.1:8080/doku.php?id={pid}")
             for pid, trail in zip(("culture:prince_draft", "science:bring_draft", "business:disney_draft"), trails)]
    assert {special_label(r) for r in pages} == {"E3"}
    assert len({r.fingerprint for r in pages}) == 1
    login = ("<h1>Login</h1><p>You are currently not logged in! Enter your authentication credentials below to "
             "log in. You need to have cookies enabled to log in.</p><form><fieldset><legend>Log In</legend>"
             "<label>Username <input name=u></label><label>Password <input type=password name=p></label>"
             "<label><input type=checkbox name=r> Remember me</label><button>Log In</button></fieldset></form>"
             "<p>You don't have an account yet? Just get one: <a href='?do=register'>Register</a></p>"
             "<p>Forgotten your password? Get a new one: <a href='?do=resendpwd'>Set new password</a></p>")
    logins = [make_record(_wiki_page(pid, trail, login), 200, f"http://127.0.0.1:8080/doku.php?id={pid}&do=login")
              for pid, trail in zip(("culture:first", "science:electric"), trails)]
    for r in logins:
        r.text_len = 0  # the extractor found no main text in the form (what DokuWiki's login page gives)
    assert {special_label(r) for r in logins} == {"L1"}
    assert logins[0].fingerprint == logins[1].fingerprint != pages[0].fingerprint


# --------------------------------------------------------------------------------------------
# Items of an application whose own words name an error, and a login form in the chrome


def _tracker_page(title: str, fields: str, sidebar_login: bool = False) -> str:
    """A page in the shape of a small issue tracker's: a sidebar with its menus (and, for anonymous
    visitors, its login box), the item's fields in the content."""
    login = ("<form action='/login'><input name='__login_name'><input type=password name='__login_password'>"
             "<input type=submit value='Login'></form>") if sidebar_login else ""
    return (f"<!doctype html><html><head><title>{title} - Bench Tracker</title></head><body>"
            f"<div class='sidebar'><ul><li><a href='/issue'>Issues</a></li><li><a href='/issue?@template=search'>"
            f"Search</a></li>{TRACKER_MENU}</ul>{login}</div><div class='content'>{fields}</div></body></html>")


TRACKER_MENU = "".join(f"<li><a href='/issue?@filter=status&amp;status={s}'>Show {s} issues</a></li>"
                       for s in ("unread", "chatting", "in-progress", "resolved", "deferred", "need-eg"))


ISSUE_FIELDS = ("<table><tr><th>Title</th><td>{summary}</td></tr><tr><th>Priority</th><td>bug</td></tr>"
                "<tr><th>Status</th><td>chatting</td></tr><tr><th>Assigned to</th><td>nobody</td></tr>"
                "<tr><th>Keywords</th><td>python3.11</td></tr></table><p>Created on 2026-10-28 by admin, last "
                "changed by admin.</p><table><tr><th>Author</th><td>doko</td><td>2026-10-28</td></tr>"
                "<tr><td colspan=3>{summary}. Closes: #1026268.</td></tr></table>")


def test_an_item_whose_title_names_an_error_is_not_a_soft_404():
    """A ticket titled "Fix error message for ..." names what it is about: the keyword is one word of a
    long part of its title and of its heading. A title that is the error ("No such file", "Page not
    found") still says it."""
    summary = "Fix error message for 'python3 -m venv dir', when python3-venv is not installed"
    issue = make_record(_tracker_page(f"Issue 105: {summary}", f"<h1>#105 {summary}</h1>"
                                      + ISSUE_FIELDS.format(summary=summary)), 200, "http://127.0.0.1:8080/issue105")
    assert issue.signals["kw"]["E3"][:2] == [0, 0]  # not in the title, nor in the heading
    assert special_label(issue, item=True) is None  # one of the tracker's many issues
    missing = make_record(_tracker_page("Bench Tracker: No such file", "<p>File 'nosuch.py' does not exist in "
                                        "this repository.</p>"), 200, "http://127.0.0.1:8080/file?name=nosuch.py")
    assert missing.signals["kw"]["E3"][0] == 1
    assert special_label(missing) == "E3"


def test_hyphenated_words_and_the_numbers_of_the_url_are_no_error_words():
    """"error-prone-java" and "soft-404" name things; "Message 404" at ``/msg404`` is the message
    numbered 404; at another URL the same title says 404."""
    doc = parse("<html><body><h1>error-prone-java 2.3.2: initial release</h1><p>Packaging of the "
                "soft-404 probe.</p></body></html>")
    assert "E3" not in page_signals(doc, "Bug #137: error-prone-java 2.3.2")["kw"]
    html = _tracker_page("Message 404", "<p>Author: yadd</p><p>Fix various low security issues.</p>")
    assert "E3" not in page_signals(parse(html), "Message 404", url="http://127.0.0.1:8080/msg404")["kw"]
    assert page_signals(parse(html), "Message 404", url="http://127.0.0.1:8080/msg405")["kw"]["E3"][0] == 1
    row = parse("<html><body><h1>changes: 404</h1><p>A row of the table.</p></body></html>")
    assert "E3" not in page_signals(row, "debian: changes", url="http://127.0.0.1:8080/debian/changes/404")["kw"]


def test_an_item_is_not_a_soft_404_by_its_own_text():
    """A commit whose message speaks of errors twice ("404/403 error templates") has error phrases
    in its text, none in its title or headings: an item of its site (one of many commits) is not a
    soft 404 by that; the same page alone on its site still is."""
    message = ("<p>bench: a held-aside bench with its 404/403 error templates, and a note on the "
               "requests that time out.</p>")
    html = page("Bench git - repo/commit", "<table><tr><td>author</td><td>Seed</td></tr><tr><td>commit</td>"
                "<td>358c8369eb79</td></tr></table>" + message + "<ul>" + TRACKER_MENU + "</ul>")
    rec = make_record(html, 200, "http://127.0.0.1:8080/repo/commit?h=358c8369eb79")
    assert rec.signals["kw"]["E3"] == [0, 0, 2]
    assert special_label(rec) == "E3"
    assert special_label(rec, item=True) is None
    asked = []
    assert special_label(rec, item=lambda: asked.append(1) or True) is None and asked
    not_found = make_record(page("Not found - Bench git", "<h1>Not found</h1><p>No such commit.</p>"), 200,
                            "http://127.0.0.1:8080/repo/commit?h=deadbeef")
    assert special_label(not_found, item=lambda: asked.append(2) or True) == "E3" and 2 not in asked


def test_a_page_that_asks_to_log_in_beside_the_sites_login_box_is_a_login_wall():
    """An anonymous visitor's view of a tracker's user pages: one sentence of its own ("Please login
    with your username and password.") and the site's login box in the sidebar. Without a password
    field anywhere the same sentence is a thin page."""
    ask = "<p>Please login with your username and password.</p>"
    wall = make_record(_tracker_page("User listing", ask, sidebar_login=True), 200, "http://127.0.0.1:8080/user")
    assert wall.signals["pw"] == 0 and wall.signals["pwc"] == 1
    assert special_label(wall) == "L1"
    assert special_label(make_record(_tracker_page("User listing", ask), 200, "http://127.0.0.1:8080/user")) == "T1"
    content = make_record(_tracker_page("User listing", ARTICLE, sidebar_login=True), 200, "http://127.0.0.1:8080/x")
    assert special_label(content) is None
