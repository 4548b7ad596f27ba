"""A fleet of small web servers on 127.0.0.1, each with its own "not found" answer, for the
soft-404 calibration (``core/match/soft404.py``): ``tests/test_soft404_e2e.py`` and
``bench/soft404.py``.

Each server has a home page, content pages (``/doc/<slug>``, several paragraphs of their own) and
answers every other path its own way. None of the "not found" templates uses a word of the E3
keyword list, so only the calibration can tell them:

* ``soft``: status 200 and a custom template (one per server: its own words and layout), some
  echoing the requested path, a request id and the time;
* ``hard``: status 404 with a custom template (E3 by its status, with or without calibration);
* ``spa``: a catch-all route that serves the home page for every unknown path (an SPA shell): the
  calibration must see it and label nothing there;
* ``home``: unknown paths redirect to ``/``.

:func:`dead_links` are list entries that do not exist on their server. The truth: on ``soft`` and
``hard`` servers a dead link is a "not found" page (E3); on ``spa`` and ``home`` servers it is the
home page (no E3), and no content page and no home page is ever E3.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional, Tuple

WORDS = ("harbour lantern orchard meadow granite willow ember quarry saddle beacon thistle copper "
         "falcon marble prairie hollow timber canyon river summit cedar basin glacier pebble ridge "
         "tundra delta mosaic fresco velvet compass anchor garnet harvest island lagoon mango "
         "nectar opal pepper quartz raven sable tulip umber violet walnut yarrow zephyr").split()

#: The servers' own "not found" answers: (title, body HTML; {path}, {rid}, {now} filled per request).
TEMPLATES = (
    ("Shelf empty", "<div class='notice'><h2>This shelf is empty</h2><p>The aisle {path} holds no items today. "
     "Browse the catalogue from the front desk instead.</p></div>"),
    ("Harbour office", "<section><h1>Nothing moored at this berth</h1><p>Request {rid} at {now}. The harbour "
     "master keeps a list of every berth at the office.</p><ul><li><a href='/'>Office</a></li></ul></section>"),
    ("Trail map", "<article><h3>The trail ends here</h3><p>Walkers who reach this marker should turn back and "
     "follow the blue signs to the car park.</p><p><small>marker {rid}</small></p></article>"),
    ("Garden", "<table><tr><td><b>No plants grow in this bed yet.</b></td></tr><tr><td>Plot {path} is "
     "unplanted this season; ask the gardener about the others.</td></tr></table>"),
    ("Observatory", "<div><p>The telescope points at empty sky.</p><p>No star is catalogued under "
     "{path}. Logged {now}.</p><p><a href='/'>Back to the dome</a></p></div>"),
    ("Depot", "<main><h1>Platform closed</h1><p>Trains do not stop at this platform. Consult the timetable "
     "in the main hall.</p></main>"),
    ("Library", "<div class='box'><h2>This drawer holds no cards</h2><p>Ticket {rid}: the index has no "
     "entry under {path}.</p></div>"),
    ("Studio", "<section><p>The easel stands bare.</p><p>Nothing hangs on this wall of the gallery; the "
     "curator lists the exhibits at the entrance.</p></section>"),
)


def _text(seed: int, n: int) -> str:
    words = [WORDS[(seed * 7 + i * 13 + i * i) % len(WORDS)] for i in range(n)]
    return " ".join(words).capitalize() + "."


def _page(site: int, title: str, body: str) -> bytes:
    nav = f"<nav><a href='/'>Site {site} home</a> <a href='/doc/a0'>Docs</a></nav>"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>{nav}"
            f"{body}<footer>Site {site} footer</footer></body></html>").encode()


def content_body(site: int, slug: str) -> Tuple[str, str]:
    seed = site * 1000 + sum(ord(c) * (i + 1) for i, c in enumerate(slug))
    paras = "".join(f"<p>{_text(seed + k, 40)}</p>" for k in range(5))
    title = f"{slug.title()} guide {site}"
    return title, f"<main><h1>{title}</h1>{paras}</main>"


def home_body(site: int) -> Tuple[str, str]:
    return f"Site {site}", (f"<main><h1>Welcome to site {site}</h1><p>{_text(site, 60)}</p>"
                            f"<p>{_text(site + 3, 50)}</p></main>")


_rid = itertools.count(1000)


def make_handler(site: int, kind: str, slugs: List[str]):
    template = TEMPLATES[site % len(TEMPLATES)]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
                  headers: Optional[Dict[str, str]] = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/favicon.ico":
                return self._send(200, f"icon-of-site-{site}".encode(), "image/x-icon")
            if path in ("/", "/index.html"):
                return self._send(200, _page(site, *home_body(site)))
            if path.startswith("/doc/") and path[5:] in slugs:
                return self._send(200, _page(site, *content_body(site, path[5:])))
            if kind == "spa":
                return self._send(200, _page(site, *home_body(site)))
            if kind == "home":
                return self._send(302, b"", headers={"Location": "/"})
            title, body = template
            body = body.format(path=path, rid=next(_rid), now=time.strftime("%H:%M:%S"))
            return self._send(404 if kind == "hard" else 200, _page(site, title, body))

    return Handler


@contextlib.contextmanager
def fleet(kinds: List[str], pages: int = 8) -> Iterator[List[Dict[str, Any]]]:
    """One server per entry of ``kinds`` on a free 127.0.0.1 port; yields ``[{"base", "kind",
    "site", "slugs"}]`` and stops them at the end."""
    servers = []
    try:
        for site, kind in enumerate(kinds):
            slugs = [f"{WORDS[(site + k * 5) % len(WORDS)]}{k}" for k in range(pages)]
            httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(site, kind, slugs))
            httpd.daemon_threads = True
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            servers.append((httpd, {"base": f"http://127.0.0.1:{httpd.server_address[1]}", "kind": kind,
                                    "site": site, "slugs": slugs}))
        yield [info for _httpd, info in servers]
    finally:
        for httpd, _info in servers:
            httpd.shutdown()
            httpd.server_close()


def dead_links(info: Dict[str, Any], n: int) -> List[str]:
    """``n`` list entries that do not exist on the server (old documents, renamed pages)."""
    base = info["base"]
    shapes = ("/doc/retired-{k}", "/doc/{w}-{k}.html", "/archive/{w}/{k}", "/doc/{w}?page={k}")
    return [f"{base}{shapes[k % len(shapes)].format(k=k, w=WORDS[(k * 3 + int(info['site'])) % len(WORDS)])}"
            for k in range(n)]


def url_list(servers: List[Dict[str, Any]], dead: int) -> Tuple[List[str], Dict[str, str]]:
    """The list to crawl and its truth: url -> ``"e3"`` (a "not found" answer), ``"home"`` (a dead
    link answered with the home page or redirected there), ``"content"`` (home and content pages)."""
    urls: List[str] = []
    truth: Dict[str, str] = {}
    for info in servers:
        base = info["base"]
        for url in [f"{base}/"] + [f"{base}/doc/{s}" for s in info["slugs"]]:
            urls.append(url)
            truth[url] = "content"
        for url in dead_links(info, dead):
            urls.append(url)
            truth[url] = "e3" if info["kind"] in ("soft", "hard") else "home"
    return urls, truth


def score(rows: List[Dict[str, Any]], truth: Dict[str, str]) -> Dict[str, float]:
    """E3 recall over the "not found" entries, and the home/content pages labelled E3."""
    e3 = [r for r in rows if truth.get(r["url"]) == "e3"]
    found = sum(1 for r in e3 if r["cluster_kind"] == "E3")
    wrong = sum(1 for r in rows if truth.get(r["url"]) in ("content", "home") and r["cluster_kind"] == "E3")
    return {"recall": found / len(e3) if e3 else 0.0, "e3": len(e3), "found": found, "content_as_e3": wrong}
