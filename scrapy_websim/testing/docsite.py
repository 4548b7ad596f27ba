"""A small documentation site with URL variants, served on 127.0.0.1 by the standard library.

``/manual/`` holds an index and ``chapters`` chapter pages, each with text of its own. Every
chapter is also served at two query variants that show the very same page (``?sort=asc`` and
``?view=print``: a true group of three URLs). Every page of the manual carries a sidebar that
links to each URL of the chapters up to the next one (the index: chapter 1; chapter n: chapters 1
to n + 1), in an order that changes from page to page: a crawl discovers the chapters one by one,
meets a variant before its page as often as after it, and meets each URL again and again. The index
also links to a page that does not exist (a 404) and to ``/about/``, another site on the same host
with pages of its own. ``/robots.txt`` allows everything.

Used by the end-to-end tests of a user's Scrapy project and of the duplicate predictor.
"""

from __future__ import annotations

import contextlib
import html
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

WORDS = ("index table column query parser template dictionary configuration function trigger schema "
         "role privilege sequence aggregate operator collation domain extension publication "
         "subscription statistics tablespace transaction cursor vacuum analyze cluster listen notify "
         "prepare execute explain import foreign server mapping policy rule view materialized").split()
VARIANTS = ("", "?sort=asc", "?view=print")


class DocSite:
    """The site's pages by path (deterministic in ``chapters`` and ``seed``)."""

    def __init__(self, chapters: int = 6, seed: int = 1) -> None:
        self.chapters = chapters
        self.seed = seed

    def chapter_paths(self, n: int) -> List[str]:
        """The URLs (path and query) of chapter ``n``: one true group."""
        return [f"/manual/ch{n}.html{v}" for v in VARIANTS]

    def groups(self) -> List[List[str]]:
        return [self.chapter_paths(n) for n in range(1, self.chapters + 1)]

    def manual_paths(self) -> List[str]:
        """Every page of the manual a crawl from the index can reach (the 404 included)."""
        return ["/manual/index.html", "/manual/missing.html"] + [p for g in self.groups() for p in g]

    def _text(self, key: str) -> str:
        rng = random.Random(f"{self.seed}:{key}")
        return "".join(f"<p>{' '.join(rng.choice(WORDS) + str(rng.randrange(50)) for _ in range(40))}.</p>"
                       for _ in range(4))

    def _sidebar(self, key: str, upto: int) -> str:
        links = [p for g in self.groups()[:upto] for p in g]
        random.Random(f"{self.seed}:order:{key}").shuffle(links)
        return "".join(f'<li><a href="{html.escape(p)}">{html.escape(p)}</a></li>' for p in links)

    def page(self, path_qs: str) -> Optional[Tuple[int, str]]:
        """``(status, html)`` of ``path_qs``; None: not found."""
        parts = urlsplit(path_qs)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        if path == "/robots.txt":
            return 200, "User-agent: *\nAllow: /\n"
        if path.startswith("/about/"):
            name = path[len("/about/"):] or "index.html"
            links = "".join(f'<li><a href="/about/team{i}.html">Team {i}</a></li>' for i in range(1, 6))
            return 200, _html(f"About: {name}", f"About {name}", self._text("about" + name), f"<ul>{links}</ul>")
        if path == "/manual/index.html" or path == "/manual/":
            body = "<p>The manual of a database.</p><ul><li><a href='/manual/missing.html'>A missing page</a></li>" \
                   "<li><a href='/about/'>About the project</a></li></ul>"
            return 200, _html("Manual", "Manual", body, f"<ul>{self._sidebar('index', 1)}</ul>")
        if path.startswith("/manual/ch") and path.endswith(".html") and path[10:-5].isdigit():
            n = int(path[10:-5])
            if 1 <= n <= self.chapters and query.get("sort", "asc") == "asc" and query.get("view", "print") == "print":
                return 200, _html(f"Chapter {n}", f"Chapter {n}: {WORDS[n % len(WORDS)]}", self._text(f"ch{n}"),
                                  f"<ul>{self._sidebar(path_qs, n + 1)}</ul>")
        return None


def _html(title: str, h1: str, body: str, nav: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><nav>{nav}</nav><main><h1>{html.escape(h1)}</h1>{body}</main>"
            "<footer>A documentation site for tests.</footer></body></html>")


@contextlib.contextmanager
def serve(site: DocSite) -> Iterator[str]:
    """Serve ``site`` on a free port of 127.0.0.1; yields its base URL (``http://127.0.0.1:PORT``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = site.page(self.path)
            status, text = found if found else (404, _html("Not found", "Not found", "<p>No such page.</p>", ""))
            body = text.encode("utf-8")
            self.send_response(status)
            ctype = "text/plain" if self.path.startswith("/robots.txt") else "text/html; charset=utf-8"
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def group_of(site: DocSite) -> Dict[str, int]:
    """path and query -> chapter number, for every URL of a true group."""
    return {p: n for n, g in enumerate(site.groups(), start=1) for p in g}
