"""``websim diff`` against a fleet that changed: per-URL precision and recall of two scans, and an
unchanged rescan that must report nothing.

    python bench/diff.py [--keep DIR] [-v]
    python bench/diff.py --rescore DIR [-v]     # digests again from DIR's kept HTML, then diff
    python bench/diff.py --score DIR [-v]       # diff DIR's kept results again (thresholds changed)
    python bench/diff.py --baseline main        # also score the diff.py of another revision

A fleet of real servers on 127.0.0.1: nginx (3 ports), Apache httpd (2, ``.htaccess`` read per
request), lighttpd (2), phpMyAdmin (Debian's package under PHP's built-in server, 2 ports, when
installed) and five small Python applications (a news site, a shop, a city portal, one that goes
down, one that comes up), about 140 URLs. More than half of the unchanged pages carry per-request
noise: rotating banners and ads, timestamps, view counters and a quote of the day inside the
article text, CSRF tokens, session ids in links and in a redirect's target, shuffled related
links, a rotating deal of the day in product lists, thin status pages with a rotating tip, login
pages (the application's, phpMyAdmin's) with fresh tokens that add hidden inputs when the browser
has no cookie yet; the mirrored documentation pages carry the mirror's last-sync time and the
directory listings the files' times, rewritten before every scan.

The fleet is scanned (``websim`` with the shipped defaults, URLs shuffled, thumbnails kept),
changed in 39 ways of 15 kinds (``python bench/diff.py --list`` prints them: content replaced on
pages with and without copies, a default page replaced, a big addition, pages gone and a soft 404,
new redirects to listed pages and outside the list, a redirect removed and one retargeted, basic
auth added and removed, a login wall and a WAF page appearing, a login wall opening, maintenance
on and off, server errors, files added to and removed from directory listings, a new error
template, a title, a content type, a status within the 4xx, a layout, a server down and one up),
scanned again, and scanned a third time with nothing changed. Scores per URL: a URL the diff
names as changed (its own change, an added or a removed URL; collateral is not a naming) is right
when the truth changed it. The baseline is the SHA-256 of each raw response body, fetched in the
same phase (``noisy_unchanged``: unchanged URLs whose body differed between the last two
fetches). With ``--keep DIR``, ``DIR/changes-report`` is the report of the diff (each changed
URL's screenshots before and after). The last line:

    diff urls=N changes=C kinds=K noisy_unchanged=S precision=P recall=R f1=F false=... missed=...
    noise_clusters=0 rescan_reports=0 rescan_exit=0 body_hash_precision=... body_hash_recall=...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Tuple
from urllib.parse import parse_qs, urlsplit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from bench.appbench import crawl as appcrawl  # noqa: E402
from bench.appbench import refeature  # noqa: E402
from bench.fleet import LOGIN, MAINT, SHOP_404, WAF  # noqa: E402
from scrapy_websim.testing.crawl import run_websim  # noqa: E402
from scrapy_websim.testing.servers import (  # noqa: E402
    apache_server,
    fetch,
    free_port,
    have,
    htpasswd_line,
    lighttpd_server,
    nginx_server,
    php_server,
)

PYDOC = "/usr/share/doc/python3.11/html"
PMA = "/usr/share/phpmyadmin"
#: Which scan the servers answer for: 1, then 2 (changed), then 3 (2 again, fresh noise).
PHASE = {"scan": 1}


def _doc_body(rel: str) -> Tuple[str, str]:
    """(title, inner HTML of the article) of a python3-doc page."""
    import lxml.html

    doc = lxml.html.document_fromstring(open(os.path.join(PYDOC, rel), "rb").read())
    title = (doc.findtext(".//title") or rel).strip()
    body = doc.find_class("body")[0]
    return title, "".join(lxml.html.tostring(child, encoding="unicode") for child in body)


def _read(rel: str) -> str:
    with open(os.path.join(PYDOC, rel), encoding="utf-8") as fh:
        return fh.read()


def _mirror(rel: str, mirror: str) -> str:
    """A python3-doc page as a mirror serves it, with its banner and last-sync time (new each scan)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - random.randrange(86400)))
    banner = f'<div class="mirror-banner">Mirror {mirror} &middot; last synced {stamp} UTC</div>'
    html = _read(rel)
    at = html.index(">", html.index("<body")) + 1
    return html[:at] + banner + html[at:]


# ---------------------------------------------------------------------------------------------
# The noisy applications (Python's http.server)

BANNERS = ["Spring sale: everything in the garden section is half price until Sunday",
           "New: our mobile app is out now for phones and tablets of every kind",
           "Join the community meetup next month in the big hall downtown",
           "Free shipping on all orders over fifty euros this week only",
           "We are hiring engineers, designers and support staff in three cities",
           "Read the annual report and find out where your donations went"]
ADS = ["Advertisement: Cheap flights to sunny islands, book today and save more",
       "Advertisement: The best coffee beans roasted fresh every single morning",
       "Advertisement: Learn a new language in ten minutes a day with Lingo",
       "Advertisement: Insurance that actually answers the phone when you call",
       "Advertisement: Handmade leather shoes shipped from a small family workshop"]
TIPS = ["Press the question mark key anywhere to see every keyboard shortcut",
        "You can drag files onto the upload area instead of browsing for them",
        "Night mode lives in the settings menu under appearance options",
        "Pin a project to keep it at the top of your list forever",
        "Search understands quotes for exact phrases and a minus to exclude words"]
NOISES = ("banner", "time", "csrf", "sid", "related", "ad", "counter")


def _token(rnd: random.Random, n: int = 24) -> str:
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(n))


def skin(site: str, title: str, body: str, noise: Tuple[str, ...], rnd: random.Random, links: List[str]) -> str:
    """A page of an application: header with navigation (and a search form), the article with
    the noise asked for, a footer."""
    sid = f"?sid={_token(rnd)}" if "sid" in noise else ""
    nav = "".join(f'<a href="{p}{sid}">{p.strip("/").title() or "Home"}</a> ' for p in links[:5])
    search = (f'<form action="/search"><input type="hidden" name="csrf" value="{_token(rnd, 40)}">'
              '<input name="q" placeholder="Search"><button>Search</button></form>') if "csrf" in noise else ""
    top = f'<div class="promo">{rnd.choice(BANNERS)}</div>' if "banner" in noise else ""
    ad = f'<div class="ad-slot"><p>{rnd.choice(ADS)}</p></div>' if "ad" in noise else ""
    related = ""
    if "related" in noise:
        items = [f'<li><a href="{p}{sid}">More about {p.strip("/").replace("/", " ")}</a></li>' for p in links]
        rnd.shuffle(items)
        related = f'<section class="related"><h2>Related pages</h2><ul>{"".join(items)}</ul></section>'
    meta = ""
    if "time" in noise:
        meta += (f'<p class="meta">Page generated {time.strftime("%Y-%m-%d %H:%M:%S")} in '
                 f'{rnd.uniform(3, 90):.1f} ms by node {rnd.randint(1, 40)}</p>')
    if "counter" in noise:
        meta += f'<p class="meta">Visitors today: {rnd.randint(100, 99999)}</p>'
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{title} - {site}</title>"
            "<style>body{font-family:sans-serif;margin:0} header{background:#234;color:#fff;padding:8px}"
            "header a{color:#fff;margin-right:10px} main{max-width:52em;margin:20px auto}"
            ".promo{background:#fd4;padding:6px} .ad-slot{border:1px dashed #999;padding:6px}</style></head>"
            f"<body><header><nav>{nav}</nav>{search}</header><main>{top}<h1>{title}</h1>{body}{ad}{related}"
            f"{meta}</main><footer><p>&copy; {site}</p></footer></body></html>")


@dataclass
class Answer:
    status: int = 200
    body: str = ""
    ctype: str = "text/html; charset=utf-8"
    location: str = ""
    cookie: str = ""


Route = Callable[[str, Dict[str, List[str]], str, random.Random], Answer]


class AppHandler(BaseHTTPRequestHandler):
    routes: Dict[str, Route] = {}

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        route = self.routes.get(parts.path)
        rnd = random.Random()
        if route is None:
            answer = Answer(404, "<html><head><title>Not found</title></head><body><h1>Not found</h1>"
                                 "<p>There is nothing at this address.</p></body></html>")
        else:
            answer = route(parts.path, parse_qs(parts.query), self.headers.get("Cookie", ""), rnd)
        data = answer.body.encode("utf-8")
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.ctype)
            self.send_header("Content-Length", str(len(data)))
            if answer.location:
                self.send_header("Location", answer.location)
            if answer.cookie:
                self.send_header("Set-Cookie", answer.cookie)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def serve_app(stack: ExitStack, routes: Dict[str, Route], port: int = 0) -> str:
    handler = type("App", (AppHandler,), {"routes": routes})
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    stack.callback(httpd.server_close)
    stack.callback(httpd.shutdown)
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def second() -> bool:
    return PHASE["scan"] >= 2


#: Pages of the applications (none of them is also on a real server of the fleet).
DOCS = ["library/bisect.html", "library/heapq.html", "library/colorsys.html", "library/keyword.html",
        "library/reprlib.html", "library/graphlib.html", "library/numbers.html", "library/fractions.html",
        "library/statistics.html", "library/textwrap.html", "library/stringprep.html", "library/copy.html",
        "library/pprint.html", "library/weakref.html", "library/operator.html", "library/cmath.html",
        "library/sched.html", "library/queue.html", "library/contextvars.html", "library/atexit.html",
        "library/errno.html", "library/shlex.html", "library/getopt.html", "library/gettext.html",
        "library/locale.html", "library/mimetypes.html", "library/mailcap.html", "library/quopri.html",
        "library/uu.html", "library/html.html", "library/html.entities.html", "library/webbrowser.html",
        "library/uuid.html", "library/ipaddress.html", "library/timeit.html", "library/tabnanny.html",
        "library/pyclbr.html", "library/py_compile.html", "library/compileall.html", "library/zipapp.html",
        "library/tty.html", "library/pty.html"]
_doc_iter = iter(DOCS)


def next_doc() -> Tuple[str, str]:
    return _doc_body(next(_doc_iter))


LOGIN_FORM = ('<form method="post" action="/session">{hidden}<label>Email <input name="email"></label>'
              '<label>Password <input type="password" name="password"></label><button>Sign in</button></form>'
              '<p><a href="/reset">Forgot your password?</a></p>')
WAF_PAGE = ("<!doctype html><html><head><title>Access denied</title></head><body><h1>Access denied</h1>"
            "<p>Your request was blocked by the web application firewall because it looked like an attack."
            "</p><p>If you think this is a mistake, contact the site owner with the incident ID below.</p>"
            "<p>Incident ID: {rid}</p></body></html>")
MAINT_PAGE = ("<!doctype html><html><head><title>Down for maintenance</title></head><body><h1>We'll be back soon"
              "</h1><p>Sorry for the inconvenience: this part of the site is down for scheduled maintenance. "
              "Please try again in a few minutes.</p></body></html>")
ERROR_500 = ("<!doctype html><html><head><title>500 Internal Server Error</title></head><body>"
             "<h1>Internal Server Error</h1><p>The server encountered an unexpected condition. Request {rid}."
             "</p></body></html>")
SOFT_404 = ("The page you were looking for could not be found. It may have been moved or deleted. "
            "Check the address or go back to the home page.")


def login_route(site: str, links: List[str]) -> Route:
    """A login page that adds two hidden inputs when the browser has no session cookie yet."""
    def route(path, query, cookie, rnd):
        hidden = f'<input type="hidden" name="token" value="{_token(rnd, 32)}">'
        set_cookie = ""
        if "sid=" not in cookie:
            hidden += (f'<input type="hidden" name="set_session" value="{_token(rnd)}">'
                       '<input type="hidden" name="server" value="1">')
            set_cookie = f"sid={_token(rnd)}; Path=/"
        body = "<p>Sign in with your work account to continue.</p>" + LOGIN_FORM.format(hidden=hidden)
        return Answer(200, skin(site, "Sign in", body, ("csrf",), rnd, links), cookie=set_cookie)
    return route


def inline_noise(body: str, rnd: random.Random) -> str:
    """An article with noise inside its own text: a "views / updated" line and a quote of the day
    in its first paragraph, as a CMS prints them."""
    note = (f"<p>Updated {rnd.randint(2, 59)} minutes ago &middot; {rnd.randint(100, 99999):,} views &middot; "
            f"Quote of the day: {rnd.choice(QUOTES)}</p>")
    return note + body


def home(site: str, stories: List[Tuple[str, str]], rnd: random.Random, links: List[str], title: str = "") -> str:
    """A home page that is a list: a teaser per story, a rotating banner, shuffled trending links
    and a counter, all in its main text."""
    teasers = "".join(f'<li><a href="/article/{i + 1}">{t}</a> <span>{rnd.randint(1, 400)} comments</span></li>'
                      for i, (t, _body) in enumerate(stories))
    trending = [f'<li><a href="/article/{i + 1}?sid={_token(rnd)}">Trending: {t.split(" — ")[0]}</a></li>'
                for i, (t, _b) in enumerate(stories)]
    rnd.shuffle(trending)
    body = (f'<p class="promo">{rnd.choice(BANNERS)}</p><h2>Latest stories</h2><ul>{teasers}</ul>'
            f'<h2>Trending now</h2><ul>{"".join(trending[:5])}</ul>'
            f'<p>{rnd.randint(1000, 99999)} readers online at {time.strftime("%H:%M:%S")}</p>')
    return skin(site, title or f"{site} - front page", body, ("csrf", "sid", "ad"), rnd, links)


QUOTES = ["the best way out is always through", "well begun is half done, as the old saying goes",
          "simplicity is the ultimate sophistication", "what we know is a drop, what we do not an ocean",
          "the journey of a thousand miles begins with one step"]
NOT_FOUND_APP = ("<html><head><title>Not found</title></head><body><h1>Not found</h1>"
                 "<p>There is nothing at this address.</p></body></html>")


def news_app(stack: ExitStack, truth: Dict[str, str]) -> List[str]:
    """A news site: every noise; content replaced, a copy, a page gone, a login wall appearing and
    one opening, a title, a redirect whose target carries a session id (noise)."""
    site, links = "Daily Harbour", ["/", "/about", "/article/1", "/article/2", "/contact"]
    docs = {f"/article/{i}": next_doc() for i in range(1, 9)}
    about, replaced, members, dashboard, report, landing, contact = (next_doc() for _ in range(7))
    routes: Dict[str, Route] = {}

    def article(path: str, inline: bool) -> Route:
        title, body = docs[path]
        return lambda p, q, c, rnd: Answer(200, skin(site, title, inline_noise(body, rnd) if inline else body,
                                                     NOISES if inline else ("time", "sid", "related"), rnd, links))
    for i, path in enumerate(docs):
        routes[path] = article(path, i % 2 == 0)
    stories = list(docs.values())
    routes["/"] = lambda p, q, c, rnd: Answer(200, home(site, stories, rnd, links))
    routes["/about"] = lambda p, q, c, rnd: Answer(200, skin(
        site, *(replaced if second() else about), ("banner", "time", "ad"), rnd, links))
    copy = article("/article/1", True)
    own = article("/article/3", True)
    routes["/article/3"] = lambda p, q, c, rnd: copy(p, q, c, rnd) if second() else own(p, q, c, rnd)
    gone = article("/article/7", True)
    routes["/article/7"] = lambda p, q, c, rnd: Answer(404, NOT_FOUND_APP) if second() else gone(p, q, c, rnd)
    login = login_route(site, links)
    routes["/members"] = lambda p, q, c, rnd: (login(p, q, "", rnd) if second() else Answer(200, skin(
        site, members[0], members[1], ("time", "counter"), rnd, links)))
    routes["/admin"] = lambda p, q, c, rnd: (Answer(200, skin(site, dashboard[0], dashboard[1], ("time",), rnd, links))
                                             if second() else login(p, q, c, rnd))
    routes["/login"] = login
    routes["/contact"] = lambda p, q, c, rnd: Answer(200, skin(site, contact[0], inline_noise(contact[1], rnd),
                                                                ("time", "counter"), rnd, links))
    routes["/status"] = lambda p, q, c, rnd: Answer(200, skin(
        site, "Status", f"<p>All systems operational.</p><p class=tip>Tip: {rnd.choice(TIPS)}</p>", (), rnd, links))
    routes["/report"] = lambda p, q, c, rnd: Answer(200, skin(
        site, "Annual report 2025 (corrected)" if second() else report[0], report[1], ("time",), rnd, links))
    routes["/go"] = lambda p, q, c, rnd: Answer(302, "", location=f"/landing?sid={_token(rnd)}")
    routes["/landing"] = lambda p, q, c, rnd: Answer(200, skin(site, landing[0], landing[1], ("banner",), rnd, links))
    base = serve_app(stack, routes)
    truth.update({base + "/about": "content", base + "/article/3": "content", base + "/article/7": "gone",
                  base + "/members": "locked", base + "/admin": "opened", base + "/report": "title"})
    return [base + p for p in routes if p != "/landing"]


def shop_app(stack: ExitStack, truth: Dict[str, str]) -> List[str]:
    """A shop: a WAF page, maintenance, a server error, a redirect retargeted, HTML that became
    JSON, a layout change; product lists with a rotating deal of the day."""
    site, links = "Widget Shop", ["/", "/sale", "/cart", "/deals", "/gallery"]
    pages = {path: next_doc() for path in ("/sale", "/checkout", "/cart", "/faq", "/shipping", "/returns")}
    products = [f"{c} {k} widget" for c in ("red", "blue", "green", "black", "silver")
                for k in ("small", "large", "pro")]

    def grid(rnd: random.Random, extra: str = "") -> str:
        items = "".join(f'<li><a href="/p/{i}">{name}</a> {rnd.randint(5, 99)}.{rnd.randint(0, 99):02d} EUR</li>'
                        for i, name in enumerate(products))
        return (f"<p>Deal of the day: {rnd.choice(products)} at {rnd.randint(10, 60)} % off</p>"
                f"<ul>{items}</ul>{extra}")

    routes: Dict[str, Route] = {}

    def page(path: str) -> Route:
        title, body = pages[path]
        return lambda p, q, c, rnd: Answer(200, skin(site, title, body, ("banner", "ad", "counter", "sid"), rnd, links))
    for path in pages:
        routes[path] = page(path)
    routes["/"] = lambda p, q, c, rnd: Answer(200, skin(site, "Widget Shop", grid(rnd), ("banner", "sid"), rnd, links))
    routes["/deals"] = lambda p, q, c, rnd: Answer(200, skin(site, "Deals", grid(rnd, "<p>Deals end Sunday.</p>"),
                                                             ("ad", "counter"), rnd, links))
    routes["/deals-b"] = lambda p, q, c, rnd: Answer(200, skin(site, "More deals", grid(rnd), ("ad",), rnd, links))
    sale, checkout, cart = routes["/sale"], routes["/checkout"], routes["/cart"]
    routes["/sale"] = lambda p, q, c, rnd: (Answer(403, WAF_PAGE.format(rid=_token(rnd, 12))) if second()
                                            else sale(p, q, c, rnd))
    routes["/checkout"] = lambda p, q, c, rnd: Answer(200, MAINT_PAGE) if second() else checkout(p, q, c, rnd)
    routes["/cart"] = lambda p, q, c, rnd: (Answer(500, ERROR_500.format(rid=_token(rnd, 10))) if second()
                                            else cart(p, q, c, rnd))
    routes["/promo"] = lambda p, q, c, rnd: Answer(302, "", location="/deals-b" if second() else "/deals")
    routes["/info"] = lambda p, q, c, rnd: (
        Answer(200, json.dumps({"name": site, "products": len(products), "served": time.time()}),
               ctype="application/json") if second()
        else Answer(200, skin(site, "About the shop", "<p>" + "Widget Shop sells widgets of every size. " * 12
                              + "</p>", ("ad",), rnd, links)))
    gallery = _doc_body("library/zipfile.html")
    table = ("<!doctype html><html><head><title>" + gallery[0] + " - Widget Shop</title><style>body{background:#111;"
             "color:#eee;font:20px serif} table{width:100%} td{border:4px solid #c33;padding:30px}</style></head>"
             "<body><table><tr><td><h1>" + gallery[0] + "</h1></td></tr><tr><td><div><div><section>" + gallery[1]
             + "</section></div></div></td></tr></table></body></html>")
    routes["/gallery"] = lambda p, q, c, rnd: Answer(200, table if second() else skin(site, gallery[0], gallery[1], (),
                                                                                      rnd, links))
    base = serve_app(stack, routes)
    truth.update({base + "/sale": "locked", base + "/checkout": "maintenance", base + "/cart": "5xx",
                  base + "/promo": "moved", base + "/info": "type", base + "/gallery": "layout"})
    return [base + p for p in routes if p != "/deals-b"]


def portal_app(stack: ExitStack, truth: Dict[str, str]) -> List[str]:
    """A city portal: a status within the 4xx, a soft 404, maintenance over, a big addition."""
    site, links = "City Portal", ["/", "/news", "/help", "/dashboard", "/search"]
    routes: Dict[str, Route] = {}

    def page(doc: Tuple[str, str], inline: bool) -> Route:
        return lambda p, q, c, rnd: Answer(200, skin(site, doc[0], inline_noise(doc[1], rnd) if inline else doc[1],
                                                     ("time", "csrf", "related", "counter"), rnd, links))
    for i, path in enumerate(("/", "/events", "/parking", "/waste", "/library", "/pools")):
        routes[path] = page(next_doc(), i % 2 == 1)
    routes["/news"] = lambda p, q, c, rnd: Answer(
        410 if second() else 404, "<html><head><title>Gone</title></head><body><h1>This page is not here</h1>"
                                  "<p>The page you asked for is not available.</p></body></html>")
    help_doc, dash, search_doc, extra_doc = next_doc(), next_doc(), next_doc(), next_doc()
    routes["/help"] = lambda p, q, c, rnd: Answer(200, skin(
        site, *(("Page not found", f"<p>{SOFT_404}</p>") if second() else help_doc), ("time",), rnd, links))
    routes["/dashboard"] = lambda p, q, c, rnd: (Answer(200, skin(site, dash[0], dash[1], ("time", "counter"), rnd,
                                                                  links)) if second() else Answer(200, MAINT_PAGE))
    routes["/search"] = lambda p, q, c, rnd: Answer(200, skin(
        site, search_doc[0], search_doc[1] + (extra_doc[1] if second() else ""), ("csrf", "time"), rnd, links))
    routes["/ping"] = lambda p, q, c, rnd: Answer(200, skin(site, "Ping", f"<p>OK.</p><p>Tip: {rnd.choice(TIPS)}</p>",
                                                            (), rnd, links))
    base = serve_app(stack, routes)
    truth.update({base + "/news": "status", base + "/help": "gone", base + "/dashboard": "back",
                  base + "/search": "content"})
    return [base + p for p in routes]


def down_and_up(stack: ExitStack, truth: Dict[str, str]) -> List[str]:
    """A server that goes down after scan 1, and one that comes up for scan 2 (its port chosen now)."""
    def page(site: str, doc: Tuple[str, str], noise: Tuple[str, ...]) -> Route:
        return lambda p, q, c, rnd: Answer(200, skin(site, doc[0], doc[1], noise, rnd, ["/"]))

    routes = {"/": page("Old Intranet", next_doc(), ("time",)), "/phones": page("Old Intranet", next_doc(), ())}
    down_stack = ExitStack()
    stack.callback(down_stack.close)
    down = serve_app(down_stack, routes)
    DOWN.append(down_stack)
    up_routes = {"/": page("New Wiki", next_doc(), ("banner",)), "/start": page("New Wiki", next_doc(), ())}
    port = free_port()
    UP.append((stack, up_routes, port))
    up = f"http://127.0.0.1:{port}"
    truth.update({down + "/": "failed", down + "/phones": "failed", up + "/": "back", up + "/start": "back"})
    return [down + "/", down + "/phones", up + "/", up + "/start"]


def phpmyadmin(stack: ExitStack, tmp: str) -> List[str]:
    """phpMyAdmin (Debian's package, PHP's built-in server) on two ports: its login page holds
    per-request tokens and adds two hidden inputs when the browser has no session cookie yet
    (cookies are shared across the ports of one host). Unchanged between the scans."""
    if not os.path.isfile(os.path.join(PMA, "index.php")) or not have("php"):
        return []
    router = os.path.join(tmp, "pma-router.php")
    with open(router, "w") as fh:
        fh.write("<?php return false;\n")
    urls = []
    for n in range(2):
        base = stack.enter_context(php_server(free_port(), PMA, router, os.path.join(tmp, f"pma{n}.log")))
        urls += [base + "/", base + "/index.php?route=/&lang=en"]
    return urls


def build_apps(stack: ExitStack, tmp: str, truth: Dict[str, str]) -> List[str]:
    """The applications; ``truth`` gets each changed URL's kind. Returns every URL."""
    return (news_app(stack, truth) + shop_app(stack, truth) + portal_app(stack, truth) + down_and_up(stack, truth)
            + phpmyadmin(stack, tmp))


DOWN: List[ExitStack] = []
UP: List[tuple] = []


# ---------------------------------------------------------------------------------------------
# The real servers: their document roots are ours, so files change between the scans


LISTING = [f"report-{i:02d}-{name}.txt" for i, name in enumerate(
    ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"])]
MIRRORED = ["library/secrets.html", "library/getpass.html", "library/hmac.html", "library/base64.html"]
NGINX_DEFAULT = "/usr/share/nginx/html/index.html"


class Root:
    """A document root that every server user can read, with files written and removed by phase."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.removed: set = set()
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o755)

    def write(self, rel: str, text: str) -> None:
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        for d in (os.path.dirname(full),):
            os.chmod(d, 0o755)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(full, 0o644)

    def remove(self, rel: str) -> None:
        full = os.path.join(self.path, rel)
        self.removed.add(rel)
        if os.path.exists(full):
            os.remove(full)

    def fix_modes(self) -> None:
        for dirpath, _dirs, names in os.walk(self.path):
            os.chmod(dirpath, 0o755)
            for n in names:
                os.chmod(os.path.join(dirpath, n), 0o644)


def nginx_locations(root: str, htpasswd: str) -> str:
    return f"""
location / {{ root {root}; autoindex on; }}
location /secret/ {{ root {root}; auth_basic "Restricted area"; auth_basic_user_file {htpasswd}; }}
location = /login {{ default_type text/html; return 200 '{LOGIN}'; }}
location = /blocked {{ default_type text/html; return 403 '{WAF}'; }}
location = /maintenance {{ root {root}; error_page 503 /maint.html; return 503; }}
location = /maint.html {{ root {root}; }}
location = /go/old {{ root {root}; if (-f {root}/.flags/go-old) {{ return 301 /docs/library/secrets.html; }}
    try_files /go/old.html =404; }}
location = /promo {{ root {root}; if (-f {root}/.flags/promo) {{ return 302 /campaign/spring.html; }}
    try_files /promo.html =404; }}
location /shop/ {{ default_type text/html; if (-f {root}/.flags/shop404) {{ return 404 '{SHOP_404_NEW}'; }}
    return 404 '{SHOP_404}'; }}
"""


SHOP_404_NEW = ("<!doctype html><html><head><title>Oops - Widgets</title></head><body><div class=oops>"
                "<h2>Oops! This product took a vacation</h2><ul><li>Check the spelling of the address</li>"
                "<li>Browse our categories from the home page</li><li>Ask our support team for help</li></ul>"
                "<p>Error code: $request_id</p></div></body></html>")

APACHE_CONFIG = """ServerSignature On
ServerTokens Full
DocumentRoot {myroot}
<Directory {myroot}>
    Require all granted
    Options +Indexes
    AllowOverride All
</Directory>
<Location /deny>
    Require all denied
</Location>
<Location /secret>
    AuthType Basic
    AuthName "Restricted area"
    AuthUserFile {htpasswd}
    Require valid-user
</Location>
"""
LIGHTTPD_CONFIG = """auth.backend = "htpasswd"
auth.backend.htpasswd.userfile = "{htpasswd}"
auth.require = ( "/secret/" => ( "method" => "basic", "realm" => "Restricted area", "require" => "valid-user" ) )
$HTTP["url"] =~ "^/files/" {{ dir-listing.activate = "enable" }}
url.access-deny = ( ".inc" )
$HTTP["host"] =~ "" {{ server.document-root = "{myroot}" }}
"""
HTACCESS_AUTH = ('AuthType Basic\nAuthName "Members only"\nAuthUserFile {htpasswd}\nRequire valid-user\n')


@dataclass
class Phased:
    """What a real server's root holds in each phase."""

    root: Root
    phase1: Callable[[], None]
    phase2: Callable[[], None]
    every: Callable[[], None]  # before every scan (fresh noise: mirror sync times, file times)


def build_servers(stack: ExitStack, tmp: str, truth: Dict[str, str]) -> Tuple[List[str], List[Phased]]:
    urls: List[str] = []
    phased: List[Phased] = []
    htpasswd = os.path.join(tmp, "htpasswd")
    with open(htpasswd, "w") as fh:
        fh.write(htpasswd_line("admin", "secret"))
    os.chmod(tmp, 0o755)
    os.chmod(htpasswd, 0o644)

    def listing(root: Root) -> None:
        for name in LISTING:
            if f"files/{name}" not in root.removed:
                root.write(f"files/{name}", f"{name}\n")

    def docs(root: Root, mirror: str, own: str) -> Callable[[], None]:
        def every() -> None:
            for rel in MIRRORED:
                if not (PHASE["scan"] >= 2 and (mirror, rel) in GONE):
                    root.write(f"docs/{rel}", _mirror(rel, mirror))
            listing(root)
        root.write(f"docs/{own}", _read(own))
        return every

    # nginx x3
    for n in range(3):
        root = Root(os.path.join(tmp, f"nginx{n}"))
        own = ["library/crypt.html", "library/netrc.html", "library/ftplib.html"][n]
        every = docs(root, f"ng{n}", own)
        root.write("index.html", open(NGINX_DEFAULT, encoding="utf-8").read())
        root.write("maint.html", MAINT)
        root.write("go/old.html", _read("library/pwd.html").replace("pwd", "pwd (old copy)"))
        root.write("promo.html", _read("library/grp.html"))
        root.write("campaign/spring.html", _read("library/calendar.html"))
        os.makedirs(os.path.join(root.path, ".flags"), exist_ok=True)
        every()
        root.fix_modes()
        ng = stack.enter_context(nginx_server(nginx_locations(root.path, htpasswd)))
        urls += [ng + p for p in ("/", f"/docs/{own}", "/files/", "/secret/", "/login", "/blocked", "/maintenance",
                                  "/maint.html", f"/missing-{n}", "/shop/blue-widget")]
        urls += [ng + f"/docs/{rel}" for rel in MIRRORED]
        if n == 0:
            urls.append(ng + "/go/old")
            truth.update({ng + f"/docs/{own}": "content", ng + "/files/": "listing", ng + "/go/old": "moved"})

            def p2(root=root, own=own) -> None:
                root.write(f"docs/{own}", _read("library/tomllib.html"))
                root.write("files/backup-2025.tar.gz", "x" * 1000)
                root.write(".flags/go-old", "1")
        elif n == 1:
            urls.append(ng + "/promo")
            truth.update({ng + f"/docs/{MIRRORED[0]}": "gone", ng + "/promo": "moved", ng + "/shop/blue-widget":
                          "template"})
            GONE.add(("ng1", MIRRORED[0]))

            def p2(root=root, own=own) -> None:
                root.remove(f"docs/{MIRRORED[0]}")
                root.write(".flags/promo", "1")
                root.write(".flags/shop404", "1")
        else:
            truth.update({ng + "/": "content", ng + "/files/": "listing", ng + f"/docs/{own}": "title"})

            def p2(root=root, own=own) -> None:
                title, body = _doc_body("library/sqlite3.html")
                root.write("index.html", f"<!doctype html><html><head><title>{title}</title></head><body>"
                                         f"<main>{body}</main></body></html>")
                root.remove(f"files/{LISTING[3]}")
                root.write(f"docs/{own}", _read(own).replace("<title>", "<title>Legacy: ", 1))
        phased.append(Phased(root, lambda: None, p2, every))

    # Apache x2 (.htaccess read per request)
    for n in range(2):
        root = Root(os.path.join(tmp, f"apache{n}"))
        own = ["library/glob.html", "library/stat.html"][n]
        every = docs(root, f"ap{n}", own)
        root.write("index.html", open("/usr/share/apache2/default-site/index.html", encoding="utf-8").read())
        root.write("private/report.html", _read("library/filecmp.html"))
        root.write("members/index.html", _read("library/fnmatch.html"))
        root.write("status.html", _read("library/linecache.html"))
        root.write("legacy/index.html", _read("library/shelve.html"))
        root.write("old-location.html", _read("library/marshal.html"))
        every()
        config = APACHE_CONFIG.replace("{myroot}", root.path).replace("{htpasswd}", htpasswd)
        if n == 1:
            root.write("members/.htaccess", HTACCESS_AUTH.replace("{htpasswd}", htpasswd))
            root.write(".htaccess", "Redirect 302 /legacy/ /docs/library/getpass.html\n")
        root.fix_modes()
        ap = stack.enter_context(apache_server(config, modules=(
            "auth_basic", "authn_core", "authn_file", "authz_user", "autoindex")))
        urls += [ap + p for p in ("/", f"/docs/{own}", "/files/", "/deny", "/secret/", f"/missing-{n}",
                                  "/private/report.html", "/members/", "/status.html", "/legacy/",
                                  "/old-location.html")]
        urls += [ap + f"/docs/{rel}" for rel in MIRRORED]
        if n == 0:
            truth.update({ap + "/private/report.html": "locked", ap + "/files/": "listing",
                          ap + f"/docs/{own}": "gone"})

            def p2(root=root, own=own) -> None:
                root.write("private/.htaccess", HTACCESS_AUTH.replace("{htpasswd}", htpasswd))
                root.write("files/site-backup.tar.gz", "y" * 2000)
                root.remove(f"docs/{own}")
        else:
            truth.update({ap + "/members/": "opened", ap + "/legacy/": "moved", ap + "/old-location.html": "moved",
                          ap + "/status.html": "5xx"})

            def p2(root=root) -> None:
                root.remove("members/.htaccess")
                root.write(".htaccess", "Redirect 301 /old-location.html /docs/library/hmac.html\n"
                                        "RewriteEngine on\nRewriteRule ^status\\.html$ - [R=500]\n")
        phased.append(Phased(root, lambda: None, p2, every))

    # lighttpd x2
    for n in range(2):
        root = Root(os.path.join(tmp, f"lighttpd{n}"))
        own = ["library/lzma.html", "library/tarfile.html"][n]
        every = docs(root, f"lt{n}", own)
        root.write("index.html", open("/usr/share/lighttpd/index.html", encoding="utf-8").read())
        root.write("config.inc", "secret = 1\n")
        every()
        root.fix_modes()
        lt = stack.enter_context(lighttpd_server(
            LIGHTTPD_CONFIG.replace("{myroot}", root.path).replace("{htpasswd}", htpasswd).replace("{{", "{")
            .replace("}}", "}"), modules=("mod_auth", "mod_authn_file", "mod_dirlisting")))
        urls += [lt + p for p in ("/", f"/docs/{own}", "/files/", "/config.inc", "/secret/", f"/missing-{n}")]
        urls += [lt + f"/docs/{rel}" for rel in MIRRORED[:2]]
        if n == 0:
            truth.update({lt + "/files/": "listing", lt + f"/docs/{own}": "content"})

            def p2(root=root, own=own) -> None:
                root.write("files/db-dump.sql.gz", "z" * 3000)
                html = _read(own)
                at = html.index('<div class="body"')
                extra = _doc_body("library/csv.html")[1]
                root.write(f"docs/{own}", html[:at] + f'<div class="body">{extra}</div>' + html[at:])
        else:
            truth.update({lt + "/": "content"})

            def p2(root=root) -> None:
                title, body = _doc_body("library/configparser.html")
                root.write("index.html", f"<!doctype html><html><head><title>{title}</title></head><body>"
                                         f"<div class=body>{body}</div></body></html>")
        phased.append(Phased(root, lambda: None, p2, every))
    return urls, phased


GONE: set = set()


# ---------------------------------------------------------------------------------------------
# Scans, the diff and the scores


def raw_hashes(urls: List[str]) -> Dict[str, str]:
    """SHA-256 of each raw response body (no browser), "" when nothing answered."""
    out = {}
    for u in urls:
        try:
            out[u] = hashlib.sha256(fetch(u, timeout=10).body).hexdigest()
        except OSError:
            out[u] = ""
    return out


def run_diff(old: str, new: str, out: str, workdir: str, extra: List[str] = ()) -> Tuple[int, dict, str]:  # type: ignore[assignment]
    proc = run_websim(["diff", old, new, "-o", out, "--limit", "1000", *extra], cwd=workdir, timeout=600)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"websim diff failed ({proc.returncode}): {proc.stderr[-3000:]}")
    with open(out, encoding="utf-8") as fh:
        return proc.returncode, json.load(fh), proc.stdout


def named(d: dict) -> set:
    """The URLs a diff names as changed: their own changes, added and removed URLs."""
    return {u["url"] for u in d["urls"]["changed"]} | set(d["urls"]["added"]) | set(d["urls"]["removed"])


def prf(pred: set, true: set) -> Tuple[float, float, float]:
    tp = len(pred & true)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(true) if true else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def noise_clusters(d: dict, true: set) -> int:
    """Clusters the diff lists with no truly changed URL among what changed in them."""
    bad = 0
    for c in d["clusters"]["appeared"] + d["clusters"]["vanished"]:
        bad += not (set(c["changed_urls"]) & true)
    for c in d["clusters"]["changed"]:
        bad += not (set(c["because"]) & true)
    return bad


def baseline(workdir: str, rev: str, true: set) -> str:
    """Precision / recall of ``websim diff`` as revision ``rev`` of this repository wrote it (its
    diff.py run on the same two results): the URLs it names anywhere (changed URLs, the members
    of clusters that appeared, vanished, grew or shrank, changed canonicals)."""
    import importlib.util
    import subprocess

    for where in ("scrapy_websim/result/diff.py", "scrapy_websim/diff.py"):  # the module before it moved too
        source = subprocess.run(["git", "-C", REPO, "show", f"{rev}:{where}"], capture_output=True, text=True)
        if source.returncode == 0:
            break
    else:
        return f" baseline_{rev}=unavailable"
    path = os.path.join(workdir, f"diff_{rev.replace('/', '_')}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source.stdout)
    spec = importlib.util.spec_from_file_location("websim_old_diff", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:  # it imports a name this checkout's package no longer has there
        return f" baseline_{rev}=unavailable ({exc})"
    d = module.diff_files(*(os.path.join(workdir, f"scan{i}", "result.json") for i in (1, 2)))
    d23 = module.diff_files(*(os.path.join(workdir, f"scan{i}", "result.json") for i in (2, 3)))
    names = set(d["urls"]["added"]) | set(d["urls"]["removed"]) | {u["url"] for u in d["urls"]["changed"]}
    for c in d["clusters"]["appeared"] + d["clusters"]["vanished"]:
        names |= set(c["urls"])
    for c in d["clusters"]["changed"]:
        names |= set(c["added"]) | set(c["removed"])
    for c in d["canonicals"]:
        names |= {c["old_canonical"], c["new_canonical"]}
    p, r, _f = prf(names, true)
    return (f" baseline_{rev}_precision={p:.3f} baseline_{rev}_recall={r:.3f} "
            f"baseline_{rev}_rescan_changed={d23['changed']}")


def score(workdir: str, truth: Dict[str, str], urls: List[str], verbose: bool, rev: str = "") -> str:
    results = [os.path.join(workdir, f"scan{i}", "result.json") for i in (1, 2, 3)]
    thumbs = [os.path.join(workdir, f"scan{i}", "thumbs") for i in (1, 2)]
    report = ["--report", os.path.join(workdir, "changes-report"), "--old-thumbnails", thumbs[0], "--thumbnails",
              thumbs[1]] if all(os.path.isdir(t) for t in thumbs) else []
    code12, d12, text12 = run_diff(results[0], results[1], os.path.join(workdir, "diff12.json"), workdir, report)
    code23, d23, text23 = run_diff(results[1], results[2], os.path.join(workdir, "diff23.json"), workdir)
    with open(os.path.join(workdir, "diff12.txt"), "w", encoding="utf-8") as fh:
        fh.write(text12)
    true = set(truth)
    pred = named(d12)
    p, r, f = prf(pred, true)
    false, missed = sorted(pred - true), sorted(true - pred)
    kinds_of = {u["url"]: u["kinds"] for u in d12["urls"]["changed"]}
    if verbose:
        for u in false:
            entry = next((x for x in d12["urls"]["changed"] if x["url"] == u), {})
            print(f"FALSE  {u} {entry.get('kinds')} {entry.get('what', '')} {entry.get('figures', '')}")
        for u in missed:
            print(f"MISSED {u} (truth: {truth[u]})")
        wrong = [(u, truth[u], kinds_of[u]) for u in sorted(true & pred) if truth[u] not in kinds_of.get(u, [truth[u]])]
        for u, want, got in wrong:
            print(f"KIND   {u} truth {want}, diff {got}")
        for u in d23["urls"]["changed"]:
            print(f"RESCAN {u['url']} {u['kinds']} {u['what']} {u['figures']}")
    extra = ""
    hashes = [os.path.join(workdir, f"hashes{i}.json") for i in (1, 2)]
    if all(os.path.exists(h) for h in hashes):
        h1, h2 = (json.load(open(h, encoding="utf-8")) for h in hashes)
        bp, br, bf = prf({u for u in urls if h1.get(u) != h2.get(u)}, true)
        extra = f" body_hash_precision={bp:.3f} body_hash_recall={br:.3f} body_hash_f1={bf:.3f}"
    kinds = len(set(truth.values()))
    noisy = _noisy_unchanged(workdir, urls, true)
    if rev:
        extra += baseline(workdir, rev, true)
    return (f"diff urls={len(urls)} changes={len(true)} kinds={kinds} noisy_unchanged={noisy} precision={p:.3f} "
            f"recall={r:.3f} f1={f:.3f} false={len(false)} missed={len(missed)} collateral="
            f"{d12['counts']['collateral']} noise_clusters={noise_clusters(d12, true)} "
            f"rescan_reports={len(named(d23))} rescan_exit={code23} exit={code12}{extra}")


def _noisy_unchanged(workdir: str, urls: List[str], true: set) -> str:
    """Share of the unchanged URLs whose raw body differed between the two fetches of scan 2 and 3."""
    hashes = [os.path.join(workdir, f"hashes{i}.json") for i in (2, 3)]
    if not all(os.path.exists(h) for h in hashes):
        return "?"
    h2, h3 = (json.load(open(h, encoding="utf-8")) for h in hashes)
    unchanged = [u for u in urls if u not in true]
    noisy = sum(1 for u in unchanged if h2.get(u) != h3.get(u))
    return f"{noisy}/{len(unchanged)}"


def set_phase(scan: int, phased: List[Phased]) -> None:
    PHASE["scan"] = scan
    if scan == 2:
        for p in phased:
            p.phase2()
        for down in DOWN:
            down.close()
        for stack, routes, port in UP:
            serve_app(stack, routes, port)
    for p in phased:
        p.every()
        p.root.fix_modes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", default="", help="keep the scans (lists, results, features, HTML, diffs) here")
    ap.add_argument("--rescore", default="", metavar="DIR",
                    help="compute the digests again from DIR's kept HTML, cluster each scan again and diff")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the false and missed URLs")
    ap.add_argument("--check", action="store_true", help="set up, fetch every URL in each phase (no browser), stop")
    ap.add_argument("--list", action="store_true", help="print the changes (URL and kind) and stop")
    ap.add_argument("--score", default="", metavar="DIR", help="only diff and score DIR's kept scans again")
    ap.add_argument("--baseline", default="", metavar="REV",
                    help="also score the diff.py of this git revision on the same scans (e.g. main)")
    args = ap.parse_args()
    if args.rescore or args.score:
        return rescore(args.rescore or args.score, args.verbose, args.baseline, refeaturing=bool(args.rescore))
    for binary in ("nginx", "apache2", "lighttpd"):
        if not have(binary):
            raise SystemExit(f"{binary} is not installed (bash scripts/setup.sh test)")
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-diffbench-")
    os.makedirs(workdir, exist_ok=True)
    truth: Dict[str, str] = {}
    try:
        with ExitStack() as stack:
            servers_tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="websim-diffbench-roots-"))
            urls, phased = build_servers(stack, servers_tmp, truth)
            urls += build_apps(stack, servers_tmp, truth)
            missing = sorted(set(truth) - set(urls))
            assert not missing, missing
            with open(os.path.join(workdir, "truth.json"), "w", encoding="utf-8") as fh:
                json.dump({"truth": truth, "urls": urls}, fh, indent=0)
            if args.list or args.check:
                return check(urls, truth, phased, fetching=args.check)
            for scan in (1, 2, 3):
                set_phase(scan, phased)
                started = time.monotonic()
                folder = os.path.join(workdir, f"scan{scan}")
                rows = appcrawl(urls, folder, extra=["-s", "WEBSIM_STABLE_TIMEOUT=4", "--thumbnails-dir",
                                                     os.path.join(folder, "thumbs")])
                with open(os.path.join(workdir, f"hashes{scan}.json"), "w", encoding="utf-8") as fh:
                    json.dump(raw_hashes(urls), fh)
                print(f"scan {scan}: {len(rows)} URLs in {time.monotonic() - started:.0f} s", flush=True)
        print(score(workdir, truth, urls, args.verbose, args.baseline), flush=True)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def check(urls: List[str], truth: Dict[str, str], phased: List[Phased], fetching: bool) -> int:
    """Print each URL's status and final URL per phase (``--check``), or the changes (``--list``)."""
    if not fetching:
        for u in sorted(truth):
            print(f"{truth[u]:12} {u}")
        print(f"{len(truth)} changes of {len(set(truth.values()))} kinds, {len(urls)} URLs")
        return 0
    seen: Dict[str, List[str]] = {u: [] for u in urls}
    for scan in (1, 2, 3):
        set_phase(scan, phased)
        for u in urls:
            try:
                got = fetch(u, timeout=10)
                seen[u].append(f"{got.status} {got.final_url if got.final_url != u else ''} "
                               f"{hashlib.sha256(got.body).hexdigest()[:6]} {len(got.body)}")
            except OSError as exc:
                seen[u].append(f"error {type(exc).__name__}")
    for u in urls:
        print(f"{truth.get(u, '-'):12} {u}\n      " + "\n      ".join(seen[u]))
    return 0


def rescore(workdir: str, verbose: bool, rev: str = "", refeaturing: bool = True) -> int:
    with open(os.path.join(workdir, "truth.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    for scan in (1, 2, 3) if refeaturing else ():
        folder = os.path.join(workdir, f"scan{scan}")
        features = refeature(folder)
        proc = run_websim(["cluster", features, "-O", os.path.join(folder, "result.json")], cwd=folder, timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"websim cluster failed: {proc.stderr[-3000:]}")
    print(score(workdir, data["truth"], data["urls"], verbose, rev), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
