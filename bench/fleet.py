"""A fleet of real server software on many 127.0.0.1 ports: pair F1 against a written truth.

    python bench/fleet.py [--sets fleet,wiki] [--keep DIR] [--code DIR]

``fleet``: nginx (4 ports), Apache httpd (3), lighttpd (3) and Django (2), started from the Debian
packages with scrapy_websim/testing/servers.py. Each serves its real default/error pages (404, 403, 5xx, proxy
errors, basic-auth 401), directory listings, a login page with a per-request CSRF token (nginx
``$request_id``; Django's admin login), a WAF page with a per-request incident id, maintenance
pages, and python3-doc pages mirrored on several servers with a per-mirror banner (mirror name and
last-sync time), besides pages found on one server only. Apache prints its signature ("Server at
127.0.0.1 Port N"), so its error pages differ per port byte for byte.

``wiki``: a MediaWiki-like site (Python's http.server) with a "Log in" sidebar, its "there is no
page with this title" 404 that echoes the title, its login page, and Chinese/Japanese pages from
debian-reference-zh-cn/-ja and maint-guide-ja (chapters about authentication and access control,
index pages, short chapters: all content) beside CJK maintenance, 404, login and WAF pages.

Truth (written below, per URL): a group key (pages with the same key are duplicates: the same
template, the same document) and the expected rule label (``None`` for content). The crawl is
the ``websim`` CLI with default settings. Scores, by pairs of URLs: websim (same non-empty
``cluster_id``) and the exact-body-hash baseline (SHA-256 of the raw response body, fetched by
this script in the same run), and rule-label accuracy on the special pages (and how many content
pages got a rule label). The last line per set is
``<set> websim_f1=... body_hash_f1=... labels=right/special (pct) content_mislabelled=n urls=n``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import combinations
from typing import Dict, List, Optional, Tuple
from urllib.parse import quote, unquote, urlsplit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench

from scrapy_websim.testing.servers import (
    apache_server,
    django_server,
    fetch,
    free_port,
    have,
    htpasswd_line,
    lighttpd_server,
    nginx_server,
)

PYDOC = "/usr/share/doc/python3.11/html"
DEBREF = "/usr/share/debian-reference"
MAINT_JA = "/usr/share/doc/maint-guide-ja/html"
RULES = ("E1", "E3", "L1", "W1", "M1", "T1", "R1", "U1")

Truth = Dict[str, Tuple[str, Optional[str]]]  # url -> (group key, expected label or None)


# ---------------------------------------------------------------------------------------------
# The fleet of real servers

MIRRORED = ["library/getpass.html", "library/secrets.html", "tutorial/errors.html", "library/pwd.html",
            "howto/logging.html", "library/urllib.error.html"]
SINGLE = ["library/crypt.html", "library/ftplib.html", "library/devmode.html", "library/email.errors.html",
          "library/hmac.html", "library/ssl.html", "library/netrc.html", "library/base64.html",
          "library/binascii.html", "library/zlib.html", "library/gzip.html", "library/bz2.html"]
LISTING_FILES = {f"files/report-{i:02d}-{name}.txt": f"report {i}\n" for i, name in enumerate(
    ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
     "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"])}


def mirror_copy(rel: str, mirror: str) -> str:
    """A python3-doc page as a mirror serves it: the same document with the mirror's banner."""
    with open(os.path.join(PYDOC, rel), encoding="utf-8") as fh:
        html = fh.read()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - hash(mirror) % 86400))
    banner = (f'<div class="mirror-banner">Mirror {mirror} &middot; last synced {stamp} UTC</div>')
    return re.sub(r"(<body[^>]*>)", r"\1" + banner, html, count=1)


LOGIN = ("<!doctype html><html><head><title>Sign in - Acme Portal</title></head><body>"
         "<div class=card><h1>Sign in to Acme Portal</h1><form method=post action=/session>"
         '<input type=hidden name=authenticity_token value="$request_id">'
         "<label>Email <input name=email></label><label>Password <input type=password name=password>"
         "</label><label><input type=checkbox name=remember> Remember me</label><button>Sign in</button>"
         "</form><a href=/password/reset>Forgot your password?</a><p>Request $request_id at $time_iso8601"
         "</p></div></body></html>")
WAF = ("<!doctype html><html><head><title>Request blocked</title></head><body><h1>Request blocked</h1>"
       "<p>This request was blocked by the web application firewall of this site.</p>"
       "<p>Incident ID: $request_id</p><p>Time: $time_iso8601</p><p>Client: $remote_addr</p></body></html>")
# A login screen written by JavaScript (a single-page app) with a per-load build id, and a web
# shop's 404 that echoes the requested path and the host:port.
JS_LOGIN = ("<!doctype html><html><head><title>Grafite</title></head><body><div id=root>Loading...</div><script>"
            "document.getElementById(\"root\").innerHTML = \"<h1>Welcome to Grafite</h1><form><label>Email or "
            "username <input name=user></label><label>Password <input type=password name=password></label>"
            "<button>Log in</button></form><p>Session \" + Math.random().toString(16).slice(2) + \"</p>\";"
            "</script></body></html>")
SHOP_404 = ("<!doctype html><html><head><title>Product not found - Widgets</title></head><body><header><nav>"
            "<a href=/>Home</a> <a href=/shop/>Shop</a> <a href=/account/login>Log in</a></nav></header>"
            "<main><h1>Sorry, we could not find that product</h1><p>Nothing is sold at $uri on $host:$server_port "
            "any more. Try the search box.</p></main></body></html>")
MAINT = ("<!doctype html><html><head><meta charset=utf-8><title>Down for maintenance</title></head>"
         "<body><h1>We'll be back soon</h1><p>Sorry for the inconvenience: the site is down for "
         "scheduled maintenance. Please try again in a few minutes.</p></body></html>")


def nginx_locations(htpasswd: str, dead: int) -> str:
    return f"""
location /forbidden/ {{ deny all; }}
location = /bad {{ proxy_pass http://127.0.0.1:{dead}; }}
location /secret/ {{ auth_basic "Restricted area"; auth_basic_user_file {htpasswd}; }}
location /files/ {{ autoindex on; }}
location = /login {{ default_type text/html; return 200 '{LOGIN}'; }}
location = /blocked {{ default_type text/html; return 403 '{WAF}'; }}
location = /maintenance {{ error_page 503 /maint.html; return 503; }}
location = /app/login {{ default_type text/html; return 200 '{JS_LOGIN}'; }}
location /shop/ {{ default_type text/html; return 404 '{SHOP_404}'; }}
"""


def apache_config(dead: int) -> str:
    return f"""ServerSignature On
ServerTokens Full
<Location /deny>
    Require all denied
</Location>
<Location /secret>
    AuthType Basic
    AuthName "Restricted area"
    AuthUserFile {{tmp}}/htpasswd
    Require valid-user
</Location>
<Directory {{root}}/files>
    Options +Indexes
</Directory>
DirectoryIndex index.html
RewriteEngine on
RewriteRule ^/boom$ - [R=500]
ProxyPass /app/ http://127.0.0.1:{dead}/
"""


LIGHTTPD_CONFIG = """auth.backend = "htpasswd"
auth.backend.htpasswd.userfile = "{tmp}/htpasswd"
auth.require = ( "/secret/" => ( "method" => "basic", "realm" => "Restricted area", "require" => "valid-user" ) )
$HTTP["url"] =~ "^/files/" { dir-listing.activate = "enable" }
url.access-deny = ( ".inc" )
"""


def build_fleet(stack: ExitStack, tmp: str) -> Truth:
    truth: Truth = {}
    htpasswd = os.path.join(tmp, "htpasswd")
    with open(htpasswd, "w") as fh:
        fh.write(htpasswd_line("admin", "secret"))
    os.chmod(tmp, 0o755)
    os.chmod(htpasswd, 0o644)
    singles = iter(SINGLE)

    def with_docs(files: Dict[str, str], mirror: str, n_mirrored: int) -> List[str]:
        """Add the mirrored doc pages and one page of this server's own; their paths."""
        rels = MIRRORED[:n_mirrored] + [next(singles)]
        files.update({f"docs/{rel}": mirror_copy(rel, mirror) for rel in rels})
        return rels

    def docs_truth(base: str, rels: List[str]) -> None:
        truth.update({f"{base}/docs/{rel}": (f"doc:{rel}", None) for rel in rels})

    def read(path: str) -> str:
        with open(path, encoding="utf-8") as fh:
            return fh.read()

    for n in range(4):  # nginx
        files = dict(LISTING_FILES, **{"maint.html": MAINT, "index.html": read("/usr/share/nginx/html/index.html")})
        rels = with_docs(files, f"ng{n}", 6)
        ng = stack.enter_context(nginx_server(nginx_locations(htpasswd, free_port()), files))
        docs_truth(ng, rels)
        truth.update({
            ng + "/": ("nginx-welcome", "T1"),
            ng + f"/missing-{n}": ("nginx-404", "E3"), ng + "/old/page.html": ("nginx-404", "E3"),
            ng + "/forbidden/": ("nginx-403", "E3"),
            ng + "/bad": ("nginx-502", "E1"),
            ng + "/maintenance": ("maint-503", "E1"),
            ng + "/secret/": ("nginx-401", "L1"),
            ng + "/files/": ("nginx-listing", None),
            ng + "/login": ("acme-login", "L1"),
            ng + "/blocked": ("acme-waf", "W1"),
            ng + "/maint.html": ("maint-200", "M1"),
            ng + "/app/login": ("grafite-login", "L1"),
            ng + f"/shop/blue-widget-{n}": ("shop-404", "E3"),
            ng + "/shop/a/very/long/product/path/x": ("shop-404", "E3"),
        })
    for n in range(3):  # Apache httpd
        files = dict(LISTING_FILES, **{"index.html": read("/usr/share/apache2/default-site/index.html")})
        rels = with_docs(files, f"ap{n}", 4)
        ap = stack.enter_context(apache_server(
            apache_config(free_port()).replace("{tmp}/htpasswd", htpasswd), files,
            modules=("auth_basic", "authn_core", "authn_file", "authz_user", "autoindex", "proxy", "proxy_http")))
        docs_truth(ap, rels)
        truth.update({
            ap + "/": ("apache-default", None),
            ap + f"/missing-{n}": ("apache-404", "E3"), ap + "/old/page.html": ("apache-404", "E3"),
            ap + "/deny": ("apache-403", "E3"),
            ap + "/boom": ("apache-500", "E1"),
            ap + "/app/status": ("apache-proxy-503", "E1"),
            ap + "/secret/": ("apache-401", "L1"),
            ap + "/files/": ("apache-listing", None),
        })
    for n in range(3):  # lighttpd
        files = dict(LISTING_FILES, **{"index.html": read("/usr/share/lighttpd/index.html"),
                                       "config.inc": "secret = 1\n"})
        rels = with_docs(files, f"lt{n}", 4)
        lt = stack.enter_context(lighttpd_server(
            LIGHTTPD_CONFIG.replace("{tmp}/htpasswd", htpasswd), files,
            modules=("mod_auth", "mod_authn_file", "mod_dirlisting")))
        docs_truth(lt, rels)
        truth.update({
            lt + "/": ("lighttpd-placeholder", None),
            lt + f"/missing-{n}": ("lighttpd-404", "E3"), lt + "/old/page.html": ("lighttpd-404", "E3"),
            lt + "/config.inc": ("lighttpd-403", "E3"),
            lt + "/secret/": ("lighttpd-401", "L1"),
            lt + "/files/": ("lighttpd-listing", None),
        })
    for n in range(2):  # Django
        dj = stack.enter_context(django_server())
        truth.update({
            dj + "/admin/login/": ("django-login", "L1"),
            dj + f"/admin/login/?next=/admin/{n}/": ("django-login", "L1"),
            dj + f"/no/such/page-{n}": ("django-404", "E3"),
        })
    return truth


# ---------------------------------------------------------------------------------------------
# The wiki + CJK set

WIKI_SKIN = """<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title} - Fleetwiki</title>
</head><body><div id="mw-page-base"></div>
<div id="mw-head"><nav id="p-personal" aria-label="Personal tools"><ul>
<li><a href="/wiki/Special:CreateAccount">Create account</a></li>
<li><a href="/wiki/Special:UserLogin">Log in</a></li></ul></nav>
<div id="p-search" role="search"><form action="/w/index.php"><input type="search" name="search"
placeholder="Search Fleetwiki"><input type="submit" value="Go"></form></div></div>
<div id="mw-panel"><nav id="p-navigation"><h3>Navigation</h3><ul><li><a href="/wiki/Main_Page">Main page</a></li>
<li><a href="/wiki/Special:Random">Random page</a></li><li><a href="/wiki/Help:Contents">Help</a></li></ul></nav>
<nav id="p-tb"><h3>Tools</h3><ul><li><a href="/wiki/Special:SpecialPages">Special pages</a></li></ul></nav></div>
<main id="content"><h1 id="firstHeading">{heading}</h1><div id="bodyContent">{body}</div></main>
<footer id="footer"><ul><li>This page was last edited on {stamp}.</li>
<li><a href="/wiki/Privacy">Privacy policy</a></li>
<li><a href="/wiki/About">About Fleetwiki</a></li><li>Request {rid}</li></ul></footer></body></html>"""

MISSING_BODY = ("<p><b>Fleetwiki does not have an article with this exact name.</b> There is currently no text "
                "in this page. You can <a href=\"/wiki/Special:Search?search={q}\">search for this page title</a> "
                "in other pages, or <a href=\"/w/index.php?title={q}&action=edit\">create this page</a>.</p>"
                "<p>Other reasons this message may be displayed: the page may have been deleted, or the "
                "title may be spelled differently.</p>")
LOGIN_BODY = ("<form method=post action=\"/w/index.php?title=Special:UserLogin\"><label>Username"
              "<input name=wpName></label><label>Password<input type=password name=wpPassword></label>"
              "<input type=hidden name=wpLoginToken value=\"{rid}\"><label><input type=checkbox "
              "name=wpRemember> Keep me logged in</label><button>Log in</button></form>"
              "<p><a href=\"/wiki/Special:PasswordReset\">Forgot your password?</a></p>")
CJK_SPECIAL = {
    "/cjk/maint-zh": (200, "系统维护中",
                      "<h1>系统维护中</h1><p>"
                      "尊敬的用户，本站正在进行系统维护，预计两小时后恢复访问。"
                      "给您带来的不便，敬请谅解。"
                      "</p>", "M1"),
    "/cjk/maint-ja": (200, "メンテナンスのお知らせ",
                      "<h1>ただいまメンテナンス中です</h1><p>"
                      "ご迷惑をおかけしております。現在、システムメンテナンスを実施しております。"
                      "終了まで今しばらくお待ちください。"
                      "</p>", "M1"),
    "/cjk/maint-tw": (200, "網站維護中",
                      "<h1>網站維護中</h1><p>"
                      "本站正在進行例行維護，請稍後再來。造成不便，敬請見諒。</p>", "M1"),
    "/cjk/maint-ja-503": (503, "メンテナンス中",
                          "<h1>メンテナンス中</h1><p>"
                          "現在メンテナンス中のため、サービスを一時停止しております。</p>", "E1"),
    "/cjk/notfound-zh": (200, "页面不存在",
                         "<h1>抱歉，您访问的页面不存在</h1><p>"
                         "您要找的页面可能已被删除或暂时不可用。<a href=/>返回首页</a></p>", "E3"),
    "/cjk/notfound-ja": (404, "ページが見つかりません",
                         "<h1>ページが見つかりません</h1><p>"
                         "お探しのページは見つかりませんでした。URLをご確認ください。</p>", "E3"),
    "/cjk/login-ja": (200, "ログイン",
                      "<h1>会員ログイン</h1><form method=post><label>メールアドレス"
                      "<input name=mail></label><label>パスワード"
                      "<input type=password name=pw></label><button>ログイン</button></form>"
                      "<a href=/reset>パスワードを忘れた方はこちら</a>", "L1"),
    "/cjk/login-zh": (200, "用户登录",
                      "<h1>用户登录</h1><form method=post><input name=u placeholder=用户名>"
                      "<input type=password name=p placeholder=密码><button>登录</button>"
                      "</form><a href=/forgot>忘记密码？</a>", "L1"),
    "/cjk/waf-zh": (403, "访问被拒绝",
                    "<h1>访问被拒绝</h1><p>"
                    "您的请求已被网站防火墙拦截。如有疑问请联系管理员。</p><p>"
                    "事件编号：{rid}</p>", "W1"),
    "/cjk/waf-ja": (403, "アクセスが拒否されました",
                    "<h1>アクセスが拒否されました</h1><p>"
                    "不正なアクセスと判断されたため、リクエストはブロックされました。</p>"
                    "<p>ID: {rid}</p>", "W1"),
}
CJK_CONTENT = [  # (path under DEBREF or MAINT_JA, why it must stay content)
    f"{DEBREF}/ch04.zh-cn.html", f"{DEBREF}/ch04.ja.html",  # authentication and access control
    f"{DEBREF}/ch05.zh-cn.html", f"{DEBREF}/ch06.ja.html", f"{DEBREF}/ch09.zh-cn.html",
    f"{DEBREF}/index.zh-cn.html", f"{DEBREF}/index.ja.html",  # index pages (table of contents)
    f"{DEBREF}/apa.zh-cn.html", f"{DEBREF}/apa.ja.html", f"{DEBREF}/pr01.zh-cn.html",  # short chapters
    f"{MAINT_JA}/upload.ja.html", f"{MAINT_JA}/update.ja.html", f"{MAINT_JA}/index.ja.html",
    f"{MAINT_JA}/checkit.ja.html",
]
WIKI_ARTICLES = ["ch01.en.html", "ch04.en.html", "ch07.en.html"]
MISSING_TITLES = ["Fleet_Topology", "Apache Module Matrix", "Login_Wall", "Maintenance window", "Q3-2026",
                  "Caching_proxy_notes", "日本語のページ", "访问控制列表"]


def _doc_main(path: str) -> Tuple[str, str]:
    """(title, inner HTML of the body) of a debian doc page, in a wiki skin's content slot."""
    import lxml.html

    doc = lxml.html.document_fromstring(open(path, "rb").read())
    title = (doc.findtext(".//title") or "").strip()
    body = doc.find(".//body")
    inner = "".join(lxml.html.tostring(child, encoding="unicode") for child in body)
    return title, inner


class WikiHandler(BaseHTTPRequestHandler):
    pages: Dict[str, Tuple[int, str]] = {}

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        try:
            self._get()
        except (BrokenPipeError, ConnectionResetError):  # the browser stopped loading: fine
            pass

    def _get(self) -> None:
        path = urlsplit(self.path).path
        rid = os.urandom(8).hex()
        stamp = time.strftime("%d %B %Y, at %H:%M:%S")
        if path in self.pages:
            status, html = self.pages[path]
        elif path.startswith("/wiki/"):
            title = unquote(path[len("/wiki/"):]).replace("_", " ")
            q = quote(title)
            status, html = 404, WIKI_SKIN.format(lang="en", title=title, heading=title,
                                                 body=MISSING_BODY.format(q=q), stamp="{stamp}", rid="{rid}")
        else:
            status, html = 404, "<html><body><h1>Not Found</h1></body></html>"
        body = html.replace("{rid}", rid).replace("{stamp}", stamp).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def build_wiki(stack: ExitStack) -> Truth:
    pages: Dict[str, Tuple[int, str]] = {}
    truth_paths: Dict[str, Tuple[str, Optional[str]]] = {}
    for name in WIKI_ARTICLES:
        title, inner = _doc_main(os.path.join(DEBREF, name))
        path = "/wiki/" + quote(title.replace(" ", "_"))
        pages[path] = (200, WIKI_SKIN.format(lang="en", title=title, heading=title, body=inner,
                                             stamp="{stamp}", rid="{rid}"))
        truth_paths[path] = (f"wiki:{name}", None)
    pages["/wiki/Special:UserLogin"] = (200, WIKI_SKIN.format(lang="en", title="Log in", heading="Log in",
                                                              body=LOGIN_BODY, stamp="{stamp}", rid="{rid}"))
    truth_paths["/wiki/Special:UserLogin"] = ("wiki-login", "L1")
    for title in MISSING_TITLES:
        truth_paths["/wiki/" + quote(title.replace(" ", "_"))] = ("wiki-missing", "E3")
    for src in CJK_CONTENT:
        title, inner = _doc_main(src)
        lang = "ja" if ".ja." in src else "zh"
        path = "/cjk/doc/" + os.path.basename(src)
        pages[path] = (200, WIKI_SKIN.format(lang=lang, title=title, heading=title, body=inner,
                                             stamp="{stamp}", rid="{rid}"))
        truth_paths[path] = (f"cjk:{src}", None)
    for path, (status, title, body, label) in CJK_SPECIAL.items():
        pages[path] = (status, f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>"
                               f"<body>{body}</body></html>")
        truth_paths[path] = (f"cjk-special:{path}", label)
    WikiHandler.pages = pages
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), WikiHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    stack.callback(httpd.server_close)
    stack.callback(httpd.shutdown)
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    return {base + p: v for p, v in truth_paths.items()}


# ---------------------------------------------------------------------------------------------
# Scoring


def pairs_of(groups: Dict[str, str]) -> set:
    by: Dict[str, List[str]] = {}
    for url, key in groups.items():
        if key:
            by.setdefault(key, []).append(url)
    return {tuple(sorted(p)) for members in by.values() for p in combinations(members, 2)}


def f1(pred: set, true: set) -> Tuple[float, float, float]:
    tp = len(pred & true)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(true) if true else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(name: str, truth: Truth, rows: Dict[str, dict], bodies: Dict[str, str]) -> str:
    true_pairs = pairs_of({u: k for u, (k, _) in truth.items()})
    ws = f1(pairs_of({u: rows[u]["cluster_id"] for u in truth}), true_pairs)
    bh = f1(pairs_of(bodies), true_pairs)
    special = [u for u, (_, lab) in truth.items() if lab]
    wrong = [(u, truth[u][1], rows[u]["cluster_kind"]) for u in special
             if rows[u]["cluster_kind"] != truth[u][1]]
    content_bad = [(u, rows[u]["cluster_kind"]) for u, (_, lab) in truth.items()
                   if not lab and rows[u]["cluster_kind"] in RULES]
    missing_pairs = sorted(true_pairs - pairs_of({u: rows[u]["cluster_id"] for u in truth}))
    extra_pairs = sorted(pairs_of({u: rows[u]["cluster_id"] for u in truth}) - true_pairs)
    for label, items in (("wrong label", wrong), ("content page labelled", content_bad),
                         ("missed pair", missing_pairs[:15]), ("wrong pair", extra_pairs[:15])):
        for item in items:
            print(f"  {name}: {label}: {item}")
    rule_clusters = {}
    for u in truth:
        if rows[u]["cluster_kind"] in RULES:
            rule_clusters.setdefault(rows[u]["cluster_id"], set()).add(truth[u][0])
    print(f"{name}: urls={len(truth)} true pairs={len(true_pairs)} "
          f"websim P={ws[0]:.3f} R={ws[1]:.3f} F1={ws[2]:.3f}  body-hash P={bh[0]:.3f} R={bh[1]:.3f} F1={bh[2]:.3f}")
    right = len(special) - len(wrong)
    return (f"{name} websim_f1={ws[2]:.3f} body_hash_f1={bh[2]:.3f} labels={right}/{len(special)} "
            f"({100.0 * right / max(1, len(special)):.1f}%) content_mislabelled={len(content_bad)} urls={len(truth)}")


def run_set(name: str, truth: Truth, workdir: str, code: str = "") -> str:
    urls = list(truth)
    bodies = {}
    for u in urls:  # the baseline: exact hash of the raw body, fetched in the same run
        bodies[u] = hashlib.sha256(fetch(u).body).hexdigest()
    workdir = os.path.join(workdir, name)
    appbench.save_truth(truth, workdir, name)
    started = time.monotonic()
    try:
        appbench.crawl(urls, workdir, ["-s", "WEBSIM_STABLE_TIMEOUT=4"], code=code)
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None
    with open(os.path.join(workdir, "result.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    rows = {r["url"]: r for r in data["urls"]}
    missing = [u for u in urls if u not in rows]
    assert not missing and len(data["urls"]) == len(urls), f"URLs missing from the output: {missing}"
    rule_origins = sorted((c["kind"], c.get("origins", 0), len(c["member_ids"]))
                          for c in data["clusters"] if c["kind"] != "content")
    print(f"{name}: crawled {len(urls)} URLs in {time.monotonic() - started:.0f} s; "
          f"{len(data['clusters'])} clusters, origins of the rule clusters: {rule_origins}")
    return score(name, truth, rows, bodies)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="fleet,wiki")
    ap.add_argument("--keep", default="", help="write the URL lists and results here")
    ap.add_argument("--code", default="", help="crawl with the scrapy_websim of this tree (e.g. another checkout)")
    args = ap.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    for binary in ("nginx", "apache2", "lighttpd"):
        if "fleet" in sets and not have(binary):
            raise SystemExit(f"{binary} is not installed")
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-fleet-")
    os.makedirs(workdir, exist_ok=True)
    lines = []
    with ExitStack() as stack:
        if "fleet" in sets:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="websim-fleet-auth-"))
            lines.append(run_set("fleet", build_fleet(stack, tmp), workdir, args.code))
        if "wiki" in sets:
            lines.append(run_set("wiki", build_wiki(stack), workdir, args.code))
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
