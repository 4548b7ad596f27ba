"""A navigation that fails is an error record, never content; the ``url`` field is the line as given;
``error`` is written for a user.

A real crawl (real Chromium, a server on 127.0.0.1): pages that move on by a meta refresh, a
script or a redirect to a closed port, a denied network or a name that does not resolve end on
Chromium's error page (or the guard's answer): each is recorded with status 0, no title, no
cluster and an ``error`` that says what failed, the redirect chain ending at the URL that failed.
"""

from __future__ import annotations

import csv
import http.server
import json
import re
import socketserver
import threading

import pytest

from scrapy_websim.render.capture import short_error
from scrapy_websim.testing.crawl import run_websim
from scrapy_websim.testing.servers import free_port

pytestmark = pytest.mark.crawl

ARTICLE = ("<html><head><title>Owls</title></head><body><main><h1>Owls</h1>"
           + "<p>Owls are birds of prey that hunt at night and see well in the dark, which the page explains "
             "at some length so that it has main text of its own.</p>" * 14 + "</main></body></html>")


def _pages(closed: int, port: int):
    """path -> (status, headers, body)."""
    move = "<html><head><title>{t}</title>{head}</head><body><p>moving on</p>{body}</body></html>"
    return {
        "/meta-closed": (200, {}, move.format(t="meta", body="", head=(
            f'<meta http-equiv="refresh" content="0;url=http://127.0.0.1:{closed}/gone">'))),
        "/js-closed": (200, {}, move.format(t="script", head="", body=(
            f"<script>location.href = 'http://127.0.0.1:{closed}/gone';</script>"))),
        "/js-denied": (200, {}, move.format(t="denied", head="", body=(
            f"<script>location.href = 'http://127.0.0.2:{port}/inside';</script>"))),
        "/meta-denied": (200, {}, move.format(t="denied", body="", head=(
            f'<meta http-equiv="refresh" content="0;url=http://127.0.0.2:{port}/inside">'))),
        "/js-dns": (200, {}, move.format(t="dns", head="", body=(
            "<script>location.href = 'http://no-such-host.invalid/';</script>"))),
        "/redirect-then-js": (302, {"Location": "/js-closed"}, ""),
        "/redirect-closed": (302, {"Location": f"http://127.0.0.1:{closed}/gone"}, ""),
        "/article": (200, {}, ARTICLE),
        "/article-copy": (200, {}, ARTICLE),
        "/inside": (200, {}, ARTICLE),
        "/nul": (200, {}, ARTICLE.replace("Owls</title>", "Owls with a NUL</title>")),
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict = {}

    def do_GET(self):
        status, headers, body = self.pages.get(self.path.split("?")[0].split("%00")[0], (404, {}, ""))
        data = body.encode()
        self.send_response(status)
        for key, value in {"Content-Type": "text/html; charset=utf-8", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


FAILED = {  # path -> what its error must say
    "/meta-closed": "connection refused",
    "/js-closed": "connection refused",
    "/js-denied": "blocked: 127.0.0.2",
    "/meta-denied": "blocked: 127.0.0.2",
    "/js-dns": "DNS lookup failed",
    "/redirect-then-js": "connection refused",
    "/redirect-closed": "connection refused",
}
#: What a library's internals look like in a message (an API name, a call log, a raw net:: code).
INTERNALS = re.compile(r"\b(Page|Route|Frame|BrowserContext|Browser|Locator|ElementHandle)\.[a-z_]+\w*:|Call log"
                       r"|^net::|Error: |Traceback")


def test_failed_navigations_are_error_records_and_urls_are_kept_as_given(tmp_path):
    closed = free_port()  # nothing listens there
    server = _Server(("127.0.0.1", 0), _Handler)  # 0.0.0.0 would serve 127.0.0.2 too
    port = server.server_address[1]
    _Handler.pages = _pages(closed, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{port}"
        nul_line = base + "/nul\x00here"
        lines = [base + path for path in FAILED] + [base + "/article", base + "/article-copy", nul_line]
        (tmp_path / "urls.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        proc = run_websim(["-l", str(tmp_path / "urls.txt"), "-o", str(tmp_path / "r.json"),
                           "-o", str(tmp_path / "r.csv"), "--no-calibrate-404",
                           "-s", "WEBSIM_DENY_NETWORKS=127.0.0.2/32"], cwd=str(tmp_path), timeout=600)
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["urls"]
    assert [r["url"] for r in rows] == lines  # the NUL line as given (JSON writes it as \u0000)
    by_path = {r["url"][len(base):]: r for r in rows}
    for path, cause in FAILED.items():
        row = by_path[path]
        assert row["error"].startswith(cause), (path, row["error"])
        assert not INTERNALS.search(row["error"]), row["error"]
        assert row["status_code"] == 0 and row["title"] == "" and row["cluster_id"] == "", row
        assert not row["final_url"].startswith("chrome-error:"), row
        assert not any(u.startswith("chrome-error:") for u in row["redirect_chain"]), row
        assert row["redirect_chain"][0] == base + path and len(row["redirect_chain"]) >= 2, row
    assert by_path["/redirect-then-js"]["redirect_chain"] == [
        base + "/redirect-then-js", base + "/js-closed", f"http://127.0.0.1:{closed}/gone"]
    # the copies of the article are a content cluster; the failed navigations are in none (before, two of
    # them were one content cluster of Chromium's error page)
    assert by_path["/article"]["cluster_kind"] == "content"
    assert by_path["/article"]["cluster_id"] == by_path["/article-copy"]["cluster_id"]
    nul = rows[-1]
    assert nul["status_code"] == 200 and nul["error"] == "" and nul["title"] == "Owls with a NUL", nul
    with open(tmp_path / "r.csv", encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert table[-1]["url"] == nul_line.replace("\x00", "\ufffd")  # CSV cannot carry a NUL, and says so
    assert "U+FFFD" in table[-1]["error"] and "as given" in table[-1]["error"]
    assert [t["url"] for t in table[:-1]] == lines[:-1]


@pytest.mark.parametrize("message, expected", [
    ("Error: Route.continue_: Route is already handled!", "the page was closed while it still loaded"),
    ("Page.goto: Timeout 20000ms exceeded.\nCall log:\n  - navigating to \"http://x/\", waiting until "
     "\"domcontentloaded\"", "timed out after 20 s: the page did not load (WEBSIM_HTTP_TIMEOUT)"),
    ("Page.content: Target crashed", "the page's renderer crashed"),
    ("Page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/", "connection refused (ERR_CONNECTION_REFUSED)"),
    ("Page.evaluate: Execution context was destroyed, most likely because of a navigation",
     "the page could not be rendered: Execution context was destroyed, most likely because of a navigation"),
    ("Target page, context or browser has been closed", "the page was closed before it was captured"),
])
def test_errors_are_written_for_a_user(message, expected):
    error = short_error(Exception(message))
    assert error.startswith(expected), error
    assert not INTERNALS.search(error), error
