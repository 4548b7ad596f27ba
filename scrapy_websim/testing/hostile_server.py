"""A web server of hostile pages on 127.0.0.1 (stdlib only), for the hostile-crawl test and bench.

``hostile_site()`` starts it on a free port (plus a twin on 127.0.0.2 that stands for a network the
crawl must not reach) and yields a :class:`Site` whose ``urls`` are the lines of a URL list: every
hostile case below once, plus list lines that are not fetchable at all. ``Site.counters`` says what
the server saw (bytes sent by endless streams, streams still open, requests to the forbidden twin,
popups opened) so a test can check that transfers really stopped.

Cases: infinite JS loops before and after DOMContentLoaded, dialogs, beforeunload, popups that open
popups, an attachment and an endless octet stream, slow-drip and never-answering responses, endless
streamed HTML, a 50 MB page, a gzip bomb, a million DOM nodes, an ever-growing DOM, a tab that eats
memory, websocket/SSE/long-poll that never idle, HTTP/meta/JS redirect loops, a 40-hop chain, bad
charsets, truncated and reset responses, a non-HTTP answer, statuses 204/304/999, endless 1xx,
huge headers, a huge URL, redirects/meta refresh/JS/iframes/fetch towards local files and a
redirect into the forbidden network.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, Iterator, List, Optional

#: The text that would prove a local file was read (``/etc/passwd`` starts with it).
LOCAL_FILE_MARK = "root:x:0:0"
#: The page the forbidden network serves; it must never be requested.
FORBIDDEN_HOST = "127.0.0.2"

PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        "<h1>{title}</h1><p>{text}</p>{extra}</body></html>")
FILLER = ("This page has ordinary content so that it is rendered like any other page of a site. " * 6).strip()


def page(title: str, extra: str = "", text: str = FILLER) -> bytes:
    return PAGE.format(title=title, text=text, extra=extra).encode("utf-8")


_GZIP_BOMB: List[bytes] = []


def gzip_bomb() -> bytes:
    """~1 MB of gzip that inflates to 1 GB of zeros (built once)."""
    if not _GZIP_BOMB:
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
            chunk = b"\0" * (1 << 20)
            for _ in range(1024):
                gz.write(chunk)
        _GZIP_BOMB.append(buf.getvalue())
    return _GZIP_BOMB[0]


@dataclass
class Site:
    base: str
    forbidden: str
    urls: List[str]
    counters: Dict[str, int] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args: object) -> None:
        pass

    # --- helpers ---
    def count(self, key: str, n: int = 1) -> None:
        with self.server.lock:
            self.server.counters[key] = self.server.counters.get(key, 0) + n

    def send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
             headers: Optional[Dict[str, str]] = None, reason: Optional[str] = None) -> None:
        self.send_response(status, reason)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.send(status, b"", headers={"Location": location})

    def client_gone(self, wait: float) -> bool:
        """Wait up to ``wait`` s; True once the client closed the connection."""
        readable, _, _ = select.select([self.connection], [], [], wait)
        if readable:
            try:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True
        return False

    def stream(self, key: str, head: bytes, chunk: bytes, interval: float, ctype: str,
               extra_headers: Optional[Dict[str, str]] = None) -> None:
        """Send ``head`` then ``chunk`` every ``interval`` s forever (until the client goes)."""
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self.count(key + "_open")
        self.count(key + "_active")
        try:
            self.wfile.write(head)
            self.count(key + "_bytes", len(head))
            while True:
                self.wfile.write(chunk)
                self.wfile.flush()
                self.count(key + "_bytes", len(chunk))
                if interval and self.client_gone(interval):
                    return
        except OSError:
            return
        finally:
            self.count(key + "_active", -1)

    def raw(self, data: bytes) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.write(data)
            self.wfile.flush()

    # --- dispatch ---
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if self.server.forbidden:
            self.count("forbidden_hits")
            self.send(200, page("Forbidden network reached", text="secret metadata"))
            return
        handler = ROUTES.get(path)
        if handler is None and path.startswith("/chain/"):
            handler = _chain
        if handler is None and path.startswith("/page/"):
            self.count("pages_served")
            handler = _ordinary
        if handler is None:
            self.send(404, page("Not found"))
            return
        handler(self)

    do_HEAD = do_GET


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple, forbidden: bool, counters: Dict[str, int], lock: threading.Lock) -> None:
        super().__init__(address, _Handler)
        self.forbidden = forbidden
        self.counters = counters
        self.lock = lock
        self.page_delay = 0.0

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients hang up on these pages all the time; that is the point


# --- the cases ---------------------------------------------------------------------------------

def _page(title: str, extra: str = "") -> Callable[[_Handler], None]:
    """A case that is just a page: ``title`` and ``extra`` HTML (usually the hostile script)."""

    def handler(h: _Handler) -> None:
        h.send(200, page(title, extra))

    return handler


def _popups(h: _Handler) -> None:
    h.count("popup_pages")
    h.send(200, page("Popups", "<a id=a href='/popups' target=_blank>again</a><script>"
                               "setInterval(() => { window.open('/popups'); "
                               "document.getElementById('a').click(); }, 20);"
                               "</script>"))


def _attachment(h: _Handler) -> None:
    h.send(200, b"%PDF-1.4 not really\n" * 100, ctype="application/pdf",
           headers={"Content-Disposition": "attachment; filename=report.pdf"})


def _octet_endless(h: _Handler) -> None:
    h.stream("octet", b"", b"\xff" * 65536, 0.0, "application/octet-stream",
             {"Content-Disposition": "attachment; filename=endless.bin"})


def _html_endless(h: _Handler) -> None:
    h.stream("html_stream", b"<!doctype html><html><head><title>Endless</title></head><body>",
             b"<p>more and more</p>" * 500, 0.001, "text/html")


def _slow_drip(h: _Handler) -> None:
    h.stream("drip", b"<!doctype html><html><head><title>Drip</title>", b"<!-- . -->", 1.0, "text/html")


def _never(h: _Handler) -> None:
    h.close_connection = True
    h.count("never_open")
    while not h.client_gone(1.0):
        pass


def _big(h: _Handler) -> None:
    para = ("<p>" + "Fifty megabytes of text in paragraphs. " * 50 + "</p>\n").encode()
    n = (50 << 20) // len(para)
    h.send_response(200)
    h.send_header("Content-Type", "text/html; charset=utf-8")
    h.send_header("Content-Length", str(len(para) * n + 60))
    h.end_headers()
    with contextlib.suppress(OSError):
        h.wfile.write(b"<!doctype html><html><head><title>50 MB</title></head><body>".ljust(60))
        for _ in range(n):
            h.wfile.write(para)


def _gzip_bomb(h: _Handler) -> None:
    h.send(200, gzip_bomb(), headers={"Content-Encoding": "gzip"})


def _sse(h: _Handler) -> None:
    h.stream("sse", b"", b"data: tick\n\n", 0.1, "text/event-stream")


def _ws(h: _Handler) -> None:
    # accept the upgrade and then say nothing, forever
    h.close_connection = True
    h.raw(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Accept: invalid\r\n\r\n")
    while not h.client_gone(1.0):
        pass


def _redirect_loop(h: _Handler) -> None:
    h.redirect("/redirect-loop")


def _chain(h: _Handler) -> None:
    n = int(h.path.split("?")[0].rsplit("/", 1)[1] or 0)
    if n > 0:
        h.redirect(f"/chain/{n - 1}")
    else:
        h.send(200, page("End of the chain"))


def _bad_charset(h: _Handler) -> None:
    body = "<html><head><title>Ch\u00e4rset</title></head><body>\u00e9t\u00e9 \u2603</body></html>"
    h.send(200, body.encode("utf-16"), ctype="text/html; charset=x-no-such-charset")


def _bad_bytes(h: _Handler) -> None:
    h.send(200, b"<html><head><title>Bad bytes \xff\xfe\xc3</title></head><body>\x80\x81\xc3\x28 text</body></html>")


def _mixed_encodings(h: _Handler) -> None:
    """Declared UTF-8 in the header, windows-1251 in a meta tag, bytes of both and of Latin-1."""
    h.send(200, "<html><head><meta charset='windows-1251'><title>Mixed \u00e9</title></head><body><p>utf-8: "
           "\u00e9t\u00e9 \u4e2d\u6587".encode("utf-8") + " cp1251: \u041f\u0440\u0438".encode("cp1251")
           + " latin-1: \u00fc\u00df".encode("latin-1") + b" " + FILLER.encode() + b"</p></body></html>")


def _odd_headers(h: _Handler) -> None:
    """Header values with bytes that are no UTF-8, a control character, RTL marks and a lone
    surrogate's UTF-8-like bytes."""
    utf8 = "Basic realm=\"\u202eevil\u202c\"".encode("utf-8").decode("latin-1")  # sent as its UTF-8 bytes
    h.send(200, page("Odd headers"), headers={
        "X-Latin": "\u00ff\u00fe caf\u00e9", "X-Control": "a\x01b\x7f", "WWW-Authenticate": utf8,
        "X-Surrogate": "\u00ed\u00a0\u0080"})


#: A script puts what no output can carry into the page: lone UTF-16 surrogates, NUL and other
#: control characters, right-to-left overrides, into the title, the text, an attribute and the URL.
_SURROGATES_JS = ("<script>document.title = 'Lone \\ud800 surrogate \\u0000 nul \\u202e rtl';"
                  "const p = document.createElement('p'); p.textContent = 'text \\udfff \\u0001\\u001f "
                  "\\ud83d end ' + 'word '.repeat(60); p.setAttribute('data-x', '\\udc00'); document.body.append(p);"
                  "history.replaceState(null, '', location.pathname + '?q=%ED%A0%80\\ud800');</script>")


def _deep_dom(h: _Handler) -> None:
    """20,000 nested elements (lxml and Chromium both have nesting limits far below a million)."""
    h.send(200, page("Deep DOM", "<div>" * 20_000 + "deep" + "</div>" * 20_000))


def _short_body(h: _Handler, reset: bool) -> None:
    """Promise 100,000 bytes, send a few, then close (or reset) the connection."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.raw(b"<html><head><title>Cut short</title></head><body><p>cut here")
    if reset:
        with contextlib.suppress(OSError):
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()


def _non_http(h: _Handler) -> None:
    h.raw(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n\0\1\2 this is not HTTP\r\n")


def _status(code: int, reason: Optional[str] = None) -> Callable[[_Handler], None]:
    def handler(h: _Handler) -> None:
        if code in (204, 304):
            h.send_response(code, reason)
            h.end_headers()
        else:
            h.send(code, page(f"Status {code}"), reason=reason)

    return handler


def _endless_1xx(h: _Handler) -> None:
    h.close_connection = True
    h.count("info_open")
    try:
        while True:
            h.wfile.write(b"HTTP/1.1 102 Processing\r\n\r\n")
            h.wfile.flush()
            if h.client_gone(0.05):
                return
    except OSError:
        return


def _huge_headers(h: _Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    for i in range(256):
        h.send_header(f"X-Big-{i}", "v" * 4096)
    body = page("Huge headers")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.raw(body)


def _huge_url(h: _Handler) -> None:
    h.send(200, page("Huge URL", text=f"the query had {len(h.path)} characters"))


def _file_redirect(h: _Handler) -> None:
    h.redirect("file:///etc/passwd")


WORDS = ("river stone forest harbour lantern meadow copper violet orchard glacier canyon willow ember "
         "falcon quarry thistle beacon marble prairie cobalt summit lagoon hazel pebble tundra saffron").split()


def ordinary_page(n: int) -> bytes:
    """``/page/N``: an ordinary article; pages 3k, 3k+1 and 3k+2 have the same text (a content cluster)."""
    import random  # noqa: PLC0415

    rng = random.Random(n // 3)
    paras = "".join("<p>" + " ".join(rng.choice(WORDS) for _ in range(60)) + ".</p>" for _ in range(6))
    return page(f"Article {n // 3}", paras, text=f"Article number {n // 3} of the test site.")


def _ordinary(h: _Handler) -> None:
    time.sleep(h.server.page_delay)
    h.send(200, ordinary_page(int(h.path.split("?")[0].rsplit("/", 1)[1] or 0)))


ROUTES: Dict[str, Callable[[_Handler], None]] = {
    "/ok": _page("An ordinary page"),
    "/loop-before-dcl": _page("Loop before DOMContentLoaded", "<script>while (true) {}</script>"),
    "/loop-after-dcl": _page("Loop after DOMContentLoaded",
        "<script>addEventListener('DOMContentLoaded', () => setTimeout(() => { while (true) {} }, 50));</script>"),
    "/dialogs": _page("Dialogs", "<script>alert('a'); confirm('b'); prompt('c'); print();"
        "setInterval(() => alert('again'), 10);</script>"),
    "/beforeunload": _page("Beforeunload", "<script>addEventListener('beforeunload', e => { e.preventDefault(); "
        "e.returnValue = 'stay'; return 'stay'; }); addEventListener('unload', () => "
        "{ const t = Date.now(); while (Date.now() - t < 60000) {} });</script>"),
    "/popups": _popups,
    "/attachment": _attachment,
    "/octet-endless": _octet_endless,
    "/html-endless": _html_endless,
    "/slow-drip": _slow_drip,
    "/never": _never,
    "/longpoll": _never,
    "/big": _big,
    "/gzip-bomb": _gzip_bomb,
    "/million-nodes": _page("A million nodes", "<div>" + "<b>x</b>" * 1_000_000 + "</div>"),
    "/dom-grows": _page("Growing DOM", "<div id=g></div><script>setInterval(() => { "
        "const g = document.getElementById('g');"
        " for (let i = 0; i < 2000; i++) g.appendChild(document.createElement('span'))"
        ".textContent = 'grow ' + i; }, 10);</script>"),
    "/memory-eater": _page("Memory eater", "<script>const keep = []; setInterval(() => { for (let i = 0; i < 20; i++) "
        "keep.push(new Array(1 << 20).fill(Math.random())); }, 10);</script>"),
    "/never-idle": _page("Never idle", "<script>new EventSource('/sse'); fetch('/longpoll');"
        "try { new WebSocket('ws://' + location.host + '/ws'); } catch (e) {}"
        "setInterval(() => fetch('/ok?' + Math.random()), 100);</script>"),
    "/sse": _sse,
    "/ws": _ws,
    "/redirect-loop": _redirect_loop,
    "/meta-loop": _page("Meta loop", "<meta http-equiv='refresh' content='0;url=/meta-loop'>"),
    "/js-loop-a": _page("JS loop A", "<script>location.href = '/js-loop-b';</script>"),
    "/js-loop-b": _page("JS loop B", "<script>location.href = '/js-loop-a';</script>"),
    "/bad-charset": _bad_charset,
    "/bad-bytes": _bad_bytes,
    "/truncated": lambda h: _short_body(h, reset=False),
    "/reset": lambda h: _short_body(h, reset=True),
    "/non-http": _non_http,
    "/status-204": _status(204),
    "/status-304": _status(304),
    "/status-999": _status(999, "Request denied"),
    "/endless-1xx": _endless_1xx,
    "/huge-headers": _huge_headers,
    "/huge-url": _huge_url,
    "/file-redirect": _file_redirect,
    "/file-meta": _page("Meta to a file", "<meta http-equiv='refresh' content='0;url=file:///etc/passwd'>"),
    "/file-js": _page("JS to a file", "<script>location.href = 'file:///etc/passwd';</script>"),
    "/file-frames": _page("Frames and fetch of a file", "<iframe src='file:///etc/passwd'></iframe>"
        "<object data='file:///etc/passwd'></object><script>fetch('file:///etc/passwd')"
        ".then(r => r.text()).then(t => { document.title = t; document.body.append(t); })"
        ".catch(() => {});</script>"),
    "/surrogates": _page("Surrogates", _SURROGATES_JS),
    "/nul-bytes": lambda h: h.send(200, page("NUL \x00 in the title", "<p>NUL \x00 and \x01\x02 in the text</p>")),
    "/mixed-encodings": _mixed_encodings,
    "/odd-headers": _odd_headers,
    "/deep-dom": _deep_dom,
    "/huge-title": _page("A" * 1_000_000),
    "/bad-escapes/%zz%ED%A0%80%/%C0%AF%": _page("Invalid percent-escapes in the URL"),
    "/rtl-\u202e-path": _page("\u202eRight to left\u202c \u200f title"),
    "/console-flood": _page("Console flood", "<script>for (let i = 0; i < 20000; i++) console.log('\\ud800' + i);"
                            "console.error('x'.repeat(1000000));</script>"),
    "/formula-title": _page("=HYPERLINK(&quot;http://evil.example&quot;)",
                            "<script>/* </script><b>data</b> */</script>"),
}

#: Paths that are list lines (``/chain/40`` is a 40-hop redirect chain; ``/longpoll``, ``/sse`` and
#: ``/ws`` are only fetched by the pages).
CASES = [p for p in ROUTES if p not in ("/longpoll", "/sse", "/ws", "/js-loop-b")] + ["/chain/40"]

#: List lines that must be records without any request.
UNFETCHABLE = ["file:///etc/passwd", "javascript:alert(1)", "ftp://127.0.0.1/x", "data:text/html,<h1>x</h1>",
               "not a url", "http://999.1.1.1/"]


@contextlib.contextmanager
def hostile_site(forbidden_redirect: bool = True, page_delay: float = 0.0) -> Iterator[Site]:
    """Serve the cases on 127.0.0.1 (and the forbidden twin on 127.0.0.2); yields the :class:`Site`.
    ``/page/N`` (ordinary pages, see :func:`ordinary_page`) answers after ``page_delay`` seconds."""
    counters: Dict[str, int] = {}
    lock = threading.Lock()
    main = _Server(("127.0.0.1", 0), False, counters, lock)
    main.page_delay = page_delay
    twin = _Server((FORBIDDEN_HOST, 0), True, counters, lock)
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
               for s in (main, twin)]
    for t in threads:
        t.start()
    base = f"http://127.0.0.1:{main.server_address[1]}"
    forbidden = f"http://{FORBIDDEN_HOST}:{twin.server_address[1]}"

    def _to_forbidden(h: _Handler) -> None:
        h.redirect(forbidden + "/latest/meta-data/")

    ROUTES["/to-forbidden"] = _to_forbidden
    urls = [base + p for p in CASES]
    if forbidden_redirect:
        urls.append(base + "/to-forbidden")
    urls.append(base + "/huge-url?q=" + "x" * 100_000)
    urls += UNFETCHABLE
    try:
        yield Site(base=base, forbidden=forbidden, urls=urls, counters=counters)
    finally:
        for s in (main, twin):
            s.shutdown()
            s.server_close()


def main() -> None:  # pragma: no cover - manual use: python -m scrapy_websim.testing.hostile_server
    with hostile_site() as site:
        print("\n".join(site.urls[:-len(UNFETCHABLE) - 1]))
        print("serving; Ctrl-C to stop")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)


if __name__ == "__main__":
    main()


def check_hostile_result(site: Site, rows: List[dict], outputs_text: str) -> List[str]:
    """What went wrong in a crawl of ``site.urls`` (empty when nothing did): ``rows`` are the url
    records of the result, ``outputs_text`` every output file's text. Shared by the test and the bench."""
    problems = []
    got = [row["url"] for row in rows]
    if got != site.urls:
        missing = [u for u in site.urls if u not in got]
        dup = len(got) - len(set(got))
        problems.append(f"records do not match the list: {len(missing)} missing, {dup} duplicated")
    if LOCAL_FILE_MARK in outputs_text:
        problems.append("a local file was read into the output")
    return problems + _server_problems(site.counters) + _record_problems(site, rows)


def _server_problems(counters: Dict[str, int]) -> List[str]:
    problems = []
    if counters.get("forbidden_hits", 0):
        problems.append(f"the forbidden network was requested {counters['forbidden_hits']} times")
    for key, value in counters.items():
        if key.endswith("_active") and value:
            problems.append(f"{key[:-7]}: {value} transfers still running after the crawl")
    if counters.get("popup_pages", 0) > 5:
        problems.append(f"popups were opened {counters['popup_pages']} times")
    return problems


#: Records that must look a certain way (path -> check).
EXPECT = {"/to-forbidden": lambda r: r["error"].startswith("blocked"),
          "/attachment": lambda r: r["status_code"] == 200 and r["content_type"] == "application/pdf",
          "/status-999": lambda r: r["status_code"] == 999,
          "/ok": lambda r: r["status_code"] == 200 and not r["error"],
          # strings no output can carry: the page keeps its record and features, the strings cleaned
          "/surrogates": lambda r: r["status_code"] == 200 and not r["error"] and "\ufffd" in r["title"],
          "/nul-bytes": lambda r: r["status_code"] == 200 and not r["error"] and "\x00" not in r["title"],
          "/mixed-encodings": lambda r: r["status_code"] == 200 and not r["error"],
          "/odd-headers": lambda r: r["status_code"] == 200 and not r["error"],
          "/huge-title": lambda r: r["status_code"] == 200 and not r["error"] and 0 < len(r["title"]) <= 2000}


def _record_problems(site: Site, rows: List[dict]) -> List[str]:
    problems = []
    for row in rows:
        if not row["status_code"] and not row["error"]:
            problems.append(f"{row['url'][:80]}: no status and no error")
        if row["error"].startswith("not fetched"):
            problems.append(f"{row['url'][:80]}: not fetched")
        path = row["url"][len(site.base):].split("?")[0] if row["url"].startswith(site.base) else None
        if path in EXPECT and not EXPECT[path](row):
            problems.append(f"{path}: unexpected record {row}")
        if row["url"] in UNFETCHABLE and not row["error"]:
            problems.append(f"{row['url']}: no error")
    return problems
