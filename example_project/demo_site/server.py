"""The bundled demo site: duplicates with per-request noise and every kind of special page.

``python -m example_project.demo_site.server --port 8701 [--port 8702] [--urls urls.txt]`` serves
the site on 127.0.0.1 (each ``--port`` serves the same site: a mirror on another origin) and
writes the list of demo URLs. Only the standard library, so tests can start it too.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

TOPICS = {
    "rivers": (
        "How rivers shape valleys",
        "A river carries sediment from the mountains to the sea, and the amount it can move grows with "
        "the speed of the water. In spring the snow melts and the current cuts deeper into the bed, "
        "while in late summer the water slows down and drops sand and gravel on the inside of each bend. "
        "Over thousands of years these small changes add up: meanders migrate across the plain, oxbow "
        "lakes are left behind when a loop is cut off, and terraces mark the levels where the river "
        "once flowed. Geologists read these terraces like the rings of a tree to date floods and "
        "climate shifts that happened long before anyone wrote them down.",
    ),
    "bread": (
        "Baking bread with a slow rise",
        "Flour, water, salt and a little yeast are all a loaf needs, but time is the ingredient that "
        "changes the taste most. A dough left in a cool kitchen overnight develops acids and aromas "
        "that a quick two-hour rise never reaches. The gluten network also relaxes, so the crumb opens "
        "up with large irregular holes. Shape the dough gently in the morning, let it proof until a "
        "fingertip leaves a dent that springs back slowly, then bake it in a very hot covered pot for "
        "the first twenty minutes so the steam keeps the crust soft while the loaf expands.",
    ),
    "comets": (
        "Where comets come from",
        "Most long-period comets fall towards the Sun from the Oort cloud, a spherical shell of icy "
        "bodies far beyond the orbit of Neptune. A passing star or the tide of the galaxy nudges one "
        "of them inward, and the journey takes millions of years. As the comet approaches, sunlight "
        "turns its ice into gas, which drags dust off the nucleus and forms a coma and two tails: a "
        "curved yellow one of dust and a straight blue one of ions pushed by the solar wind. Short "
        "period comets instead come from the Kuiper belt and return every few decades.",
    ),
    "bees": (
        "How honey bees find flowers",
        "A forager bee that finds a rich patch of flowers returns to the hive and performs a waggle "
        "dance on the comb. The angle of the straight run relative to vertical tells the other bees "
        "the direction of the food relative to the Sun, and the length of the run encodes the "
        "distance. Recruits also smell the scent of the flowers on the dancer's body. Because the Sun "
        "moves across the sky, the dancers adjust the angle through the day, an internal clock "
        "correcting the map without any of the bees having to see the sky from inside the hive.",
    ),
}

STYLE = "body{font-family:sans-serif;margin:0}header,footer{background:#234;color:#fff;padding:12px}" \
        "main{padding:24px;max-width:760px}nav a{color:#fff;margin-right:12px}.banner{padding:8px;color:#fff}"


def _page(title: str, body: str, noise: bool = True, extra_head: str = "") -> str:
    banner = ""
    if noise:  # per-request noise a real site has: rotating banner, timestamp, CSRF token, recommendations
        colour = random.choice(["#a33", "#3a3", "#33a", "#aa3"])
        banner = (
            f'<div class="banner" style="background:{colour}">Offer of the day #{random.randint(1, 999)}</div>'
            f'<p class="stamp">Generated at {time.strftime("%H:%M:%S")}.{random.randint(0, 999):03d}</p>'
            f'<form><input type="hidden" name="csrf" value="{uuid.uuid4().hex}"></form>'
        )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style>{extra_head}</head><body>"
        "<header><nav><a href='/'>Home</a><a href='/article/rivers'>Rivers</a>"
        "<a href='/article/bread'>Bread</a><a href='/article/comets'>Comets</a></nav></header>"
        f"{banner}<main>{body}</main>"
        "<footer>Demo site of scrapy-websim. Nothing here is real.</footer></body></html>"
    )


def article(topic: str, noise: bool = True) -> str:
    title, text = TOPICS[topic]
    paragraphs = "".join(f"<p>{s.strip()}.</p>" for s in text.split(". ") if s.strip())
    return _page(title, f"<article><h1>{title}</h1>{paragraphs}</article>", noise=noise)


def js_page(topic: str) -> str:
    """The article, but its paragraphs arrive by fetch() after the load event (a static fetch sees none)."""
    title = TOPICS[topic][0]
    return _page(
        title,
        f"<article id='content'><h1>{title}</h1><p class='loading'>Loading...</p></article>"
        "<script>window.addEventListener('load', function () {"
        f"fetch('/api/text/{topic}').then(r => r.json()).then(d => {{"
        "const a = document.getElementById('content'); a.querySelector('.loading').remove();"
        "a.insertAdjacentHTML('beforeend', d.html); });});</script>",
    )

LOGIN = _page(
    "Sign in",
    "<h1>Sign in to your account</h1><form method='post' action='/login'>"
    "<label>Username <input name='username'></label><label>Password <input type='password' name='password'></label>"
    "<button>Log in</button></form><p>Forgot your password?</p>",
    noise=False,
)

SOFT404 = _page(
    "Page not found",
    "<h1>Page not found</h1><p>Sorry, the page you are looking for does not exist or has been moved. "
    "Check the address or go back to the <a href='/'>home page</a>.</p>",
    noise=False,
)

ERROR500 = "<!doctype html><html><head><title>500 Internal Server Error</title></head><body>" \
           "<h1>Internal Server Error</h1><p>The server encountered an internal error and was unable " \
           "to complete your request.</p></body></html>"

MAINTENANCE = _page(
    "Down for maintenance",
    "<h1>We'll be back soon</h1><p>The site is down for scheduled maintenance. "
    "We are upgrading our servers and expect to be back within the hour. Thank you for your patience.</p>",
    noise=False,
)


def waf_page() -> str:
    return (
        "<!doctype html><html><head><title>Access denied</title></head><body><h1>Access denied</h1>"
        "<p>Your request was blocked by the web application firewall for security reasons.</p>"
        f"<p>Incident ID: {uuid.uuid4().hex[:16]}</p></body></html>"
    )


def demo_paths() -> List[str]:
    """The demo URL list (paths), in the order the demo crawls them."""
    return [
        "/",
        "/article/rivers",
        "/article/rivers?utm_source=newsletter&utm_medium=email",  # tracking-parameter variant
        "/mirror/rivers",  # the same article under another path, with its own noise
        "/article/bread",
        "/article/comets",
        "/article/bees",
        "/js/bees",  # text arrives by fetch() after load
        "/old/comets",  # 301 -> /moved/comets (302) -> /article/comets
        "/login",
        "/account",  # 401 with the same login form
        "/no-such-page",  # a real 404
        "/gone",  # soft 404: 200 with a not-found page
        "/broken",  # 500
        "/maintenance",  # 503 with maintenance wording
        "/admin",  # 403 WAF page with a random incident id
        "/thin",  # almost empty
        "/index.html",  # the home page again (URL variant)
        "/report.json",  # not HTML
    ]


class Handler(BaseHTTPRequestHandler):
    server_version = "websim-demo/1.0"

    def log_message(self, fmt: str, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: str, ctype: str = "text/html; charset=utf-8",
              headers: Optional[Dict[str, str]] = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path
        query = parse_qs(parts.query)
        routes = {
            "/": lambda: self._send(200, home()),
            "/index.html": lambda: self._send(200, home()),
            "/js/bees": lambda: self._send(200, js_page("bees")),
            "/login": lambda: self._send(200, LOGIN),
            "/account": lambda: self._send(401, LOGIN),
            "/gone": lambda: self._send(200, SOFT404),
            "/broken": lambda: self._send(500, ERROR500),
            "/maintenance": lambda: self._send(503, MAINTENANCE, headers={"Retry-After": "3600"}),
            "/admin": lambda: self._send(403, waf_page()),
            "/thin": lambda: self._send(200, "<html><head><title>ok</title></head><body>ok</body></html>"),
            "/report.json": lambda: self._send(200, json.dumps({"pages": 20, "ok": True}), "application/json"),
            "/old/comets": lambda: self._redirect(301, "/moved/comets"),
            "/moved/comets": lambda: self._redirect(302, "/article/comets"),
            "/loop/a": lambda: self._redirect(302, "/loop/b"),
            "/loop/b": lambda: self._redirect(302, "/loop/a"),
            "/hang": self._hang,
            "/slow-image": lambda: self._send(200, _page("Slow image", "<h1>Slow image</h1><p>" + TOPICS["rivers"][1]
                                                           + "</p><img src='/hang'>", noise=False)),
        }
        if path in routes:
            return routes[path]()
        if path.startswith("/article/") and path.split("/")[2] in TOPICS:
            return self._send(200, article(path.split("/")[2]))
        if path.startswith("/mirror/") and path.split("/")[2] in TOPICS:
            return self._send(200, article(path.split("/")[2]))
        if path.startswith("/api/text/") and path.split("/")[3] in TOPICS:
            time.sleep(0.3)  # arrives well after the load event
            return self._send(200, json.dumps({"html": article_body(path.split("/")[3])}), "application/json")
        if path.startswith("/item/"):  # many pages for load tests: /item/N, distinct content
            return self._send(200, generated_item(path.split("/")[2], query))
        self._send(404, SOFT404.replace("Page not found", "404 Not Found"))

    def _redirect(self, status: int, location: str) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _hang(self) -> None:
        # Headers and nothing else, for a long time: a page/resource that never finishes loading.
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.flush()
        deadline = time.time() + 120
        while time.time() < deadline and not getattr(self.server, "stopping", False):
            time.sleep(0.2)


def article_body(topic: str) -> str:
    title, text = TOPICS[topic]
    return "".join(f"<p>{s.strip()}.</p>" for s in text.split(". ") if s.strip())


def home() -> str:
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in demo_paths()[1:9])
    return _page("Demo home", "<h1>Welcome to the demo site</h1><p>Articles about rivers, bread, comets and bees, "
                 "with copies, mirrors, redirects and the special pages a crawler meets.</p>"
                 f"<ul>{links}</ul>", noise=True)


_WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
          "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber birch cedar dune ember fjord "
          "grove harbor island jungle knoll lagoon meadow nectar orchard prairie quarry ridge summit tundra "
          "upland valley willow yarrow zephyr").split()


def generated_item(key: str, query: Dict[str, List[str]]) -> str:
    """Distinct text per key (seeded), so /item/N pages are all different documents."""
    seed = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    rng = random.Random(seed)
    sentences = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
                 for _ in range(24)]
    body = f"<article><h1>Item {key}</h1>" + "".join(f"<p>{' '.join(sentences[i:i + 4])}</p>"
                                                      for i in range(0, 24, 4)) + "</article>"
    return _page(f"Item {key}", body, noise=True)


def serve(ports: List[int], host: str = "127.0.0.1") -> List[Tuple[ThreadingHTTPServer, threading.Thread]]:
    out = []
    for port in ports:
        httpd = ThreadingHTTPServer((host, port), Handler)
        httpd.daemon_threads = True
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        out.append((httpd, thread))
    return out


@contextlib.contextmanager
def running(n_ports: int = 1) -> Iterator[List[str]]:
    """Serve the site on ``n_ports`` free ports of 127.0.0.1; yields their base URLs."""
    servers = serve([0] * n_ports)
    try:
        yield [f"http://127.0.0.1:{httpd.server_address[1]}" for httpd, _ in servers]
    finally:
        for httpd, _thread in servers:
            httpd.stopping = True
            httpd.shutdown()
            httpd.server_close()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, action="append", help="port on 127.0.0.1 (repeat for a mirror)")
    parser.add_argument("--urls", help="write the demo URL list to this file")
    args = parser.parse_args(argv)
    ports = args.port or [8701]
    servers = serve(ports)
    ports = [s.server_address[1] for s, _ in servers]
    if args.urls:
        partial = args.urls + ".part"
        with open(partial, "w", encoding="utf-8") as fh:
            fh.write("# scrapy-websim demo: one URL per line\n")
            for p in demo_paths():
                fh.write(f"http://127.0.0.1:{ports[0]}{p}\n")
            if len(ports) > 1:
                fh.write("# the same articles on a mirror (another origin)\n")
                for p in ("/article/rivers", "/article/bees"):
                    fh.write(f"http://127.0.0.1:{ports[1]}{p}\n")
            fh.write("# not a URL at all: still one record, with error set\n")
            fh.write("this is not a url\n")
        os.replace(partial, args.urls)  # appears whole: a script may wait for it
    print("serving demo site on " + ", ".join(f"http://127.0.0.1:{p}/" for p in ports), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
