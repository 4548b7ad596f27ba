"""An HTTP error answered with an empty body is a page with its real status, not a failure.

Chromium shows its own error page for a 4xx or 5xx response with no body and fails the navigation
(``net::ERR_HTTP_RESPONSE_CODE_FAILURE``); websim records the status the server sent, with no
``error``, so the page gets its label (E1 for 5xx, E3 for 4xx) like an error page with a body. A
real crawl: real Chromium, a server on 127.0.0.1 answering 500/502/503/404/410/403 with nothing.
"""

from __future__ import annotations

import http.server
import json
import socketserver
import threading

import pytest

from scrapy_websim.testing.crawl import run_websim

pytestmark = pytest.mark.crawl

ARTICLE = ("<html><head><title>Owls</title></head><body><main><h1>Owls</h1>"
           + "<p>Owls are birds of prey that hunt at night and see well in the dark, which the page explains "
             "at some length so that it has main text of its own.</p>" * 14 + "</main></body></html>")
ERROR_500 = ("<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1>"
             "<p>The server could not complete your request.</p></body></html>")


def _pages():
    """path -> (status, headers, body); an empty body is sent with ``Content-Length: 0``."""
    html = {"Content-Type": "text/html; charset=utf-8"}
    return {
        "/empty-500": (500, html, ""),
        "/empty-500-untyped": (500, {}, ""),
        "/empty-502": (502, html, ""),
        "/empty-503": (503, {**html, "Retry-After": "120"}, ""),
        "/empty-404": (404, html, ""),
        "/empty-410": (410, {}, ""),
        "/empty-403": (403, html, ""),
        "/empty-401-basic": (401, {**html, "WWW-Authenticate": 'Basic realm="staff"'}, ""),
        "/to-empty-500": (302, {"Location": "/hop"}, ""),
        "/hop": (301, {"Location": "/empty-500"}, ""),
        "/refresh-to-empty-503": (200, html, '<html><head><meta http-equiv="refresh" content="0;url=/empty-503">'
                                             "</head><body><p>moving on</p></body></html>"),
        "/body-500": (500, html, ERROR_500),
        "/article": (200, html, ARTICLE),
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict = {}

    def do_GET(self):
        status, headers, body = self.pages.get(self.path.split("?")[0], (404, {}, "not here"))
        data = body.encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


#: path -> (status, label) the record must have
EXPECTED = {
    "/empty-500": (500, "E1"),
    "/empty-500-untyped": (500, "E1"),
    "/empty-502": (502, "E1"),
    "/empty-503": (503, "E1"),
    "/empty-404": (404, "E3"),
    "/empty-410": (410, "E3"),
    "/empty-403": (403, "E3"),
    "/empty-401-basic": (401, "L1"),
    "/to-empty-500": (500, "E1"),
    "/body-500": (500, "E1"),
}


def test_empty_error_answers_keep_their_status_and_label(tmp_path):
    server = _Server(("127.0.0.1", 0), _Handler)
    _Handler.pages = _pages()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        paths = [*EXPECTED, "/refresh-to-empty-503", "/article"]
        (tmp_path / "urls.txt").write_text("".join(base + p + "\n" for p in paths), encoding="utf-8")
        proc = run_websim(["-l", str(tmp_path / "urls.txt"), "-o", str(tmp_path / "r.json"), "--no-calibrate-404"],
                          cwd=str(tmp_path), timeout=600)
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = {r["url"][len(base):]: r for r in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["urls"]}
    for path, (status, label) in EXPECTED.items():
        row = rows[path]
        assert (row["status_code"], row["error"], row["cluster_kind"]) == (status, "", label), (path, row)
        assert row["final_url"] == base + ("/empty-500" if path == "/to-empty-500" else path), (path, row)
        assert not row["title"].startswith("127.0.0.1"), row  # not Chromium's error page
    for path in ("/empty-500", "/empty-503", "/empty-404"):
        assert rows[path]["content_type"] == "text/html; charset=utf-8", rows[path]
        assert rows[path]["content_length"] == 0, rows[path]
    assert rows["/to-empty-500"]["redirect_chain"] == [base + "/to-empty-500", base + "/hop", base + "/empty-500"]
    # one empty 500 template: the two of status 500 with no body are one E1 group
    assert rows["/empty-500"]["cluster_id"] == rows["/to-empty-500"]["cluster_id"] != ""
    # a page that moves on by a meta refresh to an empty error page ends there, with its status
    moved = rows["/refresh-to-empty-503"]
    assert (moved["status_code"], moved["error"], moved["final_url"]) == (503, "", base + "/empty-503"), moved
    assert moved["redirect_chain"] == [base + "/refresh-to-empty-503", base + "/empty-503"], moved
    assert moved["cluster_kind"] == "E1", moved
    assert rows["/article"]["status_code"] == 200 and rows["/article"]["error"] == ""
