"""Scanning the hosts people actually scan: self-signed TLS, a real proxy, headers/cookies/UA,
per-host politeness and the inputs scanning tools produce (README "Scanning many hosts").

Two crawls with real Chromium against servers on 127.0.0.1 started here: one HTTPS server with a
self-signed certificate made by the test (``openssl``), one plain HTTP server serving the same
pages, both recording every request they receive; the second crawl goes through a real tinyproxy
started with its own configuration and log.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

from scrapy_websim.testing.crawl import load, run_websim
from scrapy_websim.testing.servers import _stop, _wait_port, free_port

pytestmark = pytest.mark.crawl

PARAGRAPHS = "".join(
    f"<p>Paragraph {n} of the asset inventory notes: the appliance keeps its configuration in a "
    f"versioned store, rotates its logs every night and reports its health to the monitoring host "
    f"over a signed channel, so operators can tell at a glance which node drifted.</p>"
    for n in range(1, 7)
)
ARTICLE = (f"<!doctype html><html><head><title>Appliance notes</title><link rel='stylesheet' href='/style.css'>"
           f"</head><body><main><h1>Appliance notes</h1>{PARAGRAPHS}<img src='/pixel.gif' alt=''></main>"
           f"<script>fetch('/api/ping?ua=' + encodeURIComponent(navigator.userAgent))</script></body></html>")
LOGIN = ("<!doctype html><html><head><title>Sign in</title></head><body><h1>Sign in</h1>"
         "<form method='post' action='/login'><label>Username <input name='user'></label>"
         "<label>Password <input type='password' name='pw'></label><button>Log in</button></form>"
         "<p>Please sign in to continue.</p></body></html>")
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


class Recorder:
    """Every request the test servers received: (time, port, path, headers), plus navigations in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: List[Dict[str, Any]] = []
        self.in_flight: Dict[str, int] = {}
        self.max_in_flight: Dict[str, int] = {}


def _handler(recorder: Recorder, slow_navigation: float):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10

        def log_message(self, *args: Any) -> None:
            pass

        def handle(self) -> None:
            # A TLS ClientHello on the plain port (https:// tried first on a port of unknown scheme):
            # close at once, as nginx or Apache answer garbage, instead of waiting for a request line.
            if not isinstance(self.connection, ssl.SSLSocket):
                with contextlib.suppress(OSError):
                    if self.connection.recv(1, socket.MSG_PEEK) == b"\x16":
                        return
            with contextlib.suppress(OSError, ssl.SSLError):
                super().handle()

        def do_GET(self) -> None:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            mode = self.headers.get("Sec-Fetch-Mode")  # Scrapy's own client sends none
            navigation = mode == "navigate" or (mode is None and self.path.split("?")[0] in ("/", "/article", "/login"))
            with recorder.lock:
                recorder.requests.append({"time": time.monotonic(), "port": self.server.server_address[1], "host": host,
                                          "path": self.path, "headers": dict(self.headers), "navigation": navigation})
                if navigation:
                    recorder.in_flight[host] = recorder.in_flight.get(host, 0) + 1
                    recorder.max_in_flight[host] = max(recorder.max_in_flight.get(host, 0), recorder.in_flight[host])
            try:
                if navigation and slow_navigation:
                    time.sleep(slow_navigation)
                self._respond()
            finally:
                if navigation:
                    with recorder.lock:
                        recorder.in_flight[host] -= 1

        def _respond(self) -> None:
            path = self.path.split("?")[0]
            status, ctype, body = 200, "text/html; charset=utf-8", ARTICLE.encode()
            if path == "/login":
                body = LOGIN.encode()
            elif path == "/style.css":
                ctype, body = "text/css", b"body{font-family:sans-serif}"
            elif path == "/pixel.gif":
                ctype, body = "image/gif", GIF
            elif path == "/api/ping":
                ctype, body = "application/json", b"{}"
            elif path not in ("/", "/article"):
                status, body = 404, b"<html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def serve(recorder: Recorder, port: int = 0, tls: Any = None, slow_navigation: float = 0.0) -> Iterator[int]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(recorder, slow_navigation))
    httpd.daemon_threads = True
    if tls is not None:  # handshake in the handler thread, not in accept()
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def tls_context(tmp_path_factory) -> ssl.SSLContext:
    """A self-signed certificate for ``localhost`` only, made here with openssl."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("cert")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "key.pem"),
                    "-out", str(d / "cert.pem"), "-days", "30", "-subj", "/CN=localhost/O=websim test",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(d / "cert.pem"), str(d / "key.pem"))
    # the certificate's identity as openssl prints it, for the records' tls_sha256
    out = subprocess.run(["openssl", "x509", "-in", str(d / "cert.pem"), "-noout", "-fingerprint", "-sha256"],
                         check=True, capture_output=True, text=True).stdout
    ctx.websim_sha256 = out.strip().split("=", 1)[1].replace(":", "").lower()
    return ctx


def _by_url(rows: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {row["url"]: row for row in rows}


def test_self_signed_tls_headers_inputs_and_politeness(tmp_path, tls_context):
    recorder = Recorder()
    unsafe = _unsafe_port()
    with contextlib.ExitStack() as stack:
        A = stack.enter_context(serve(recorder, tls=tls_context))
        B = stack.enter_context(serve(recorder))
        # HTTPS on a port Chromium refuses: Scrapy's own client fetches it, and checks the certificate
        U = stack.enter_context(serve(recorder, port=unsafe, tls=tls_context)) if unsafe else 0
        lines = [
            f"https://127.0.0.1:{A}/article",
            f"https://localhost:{A}/article",
            f"http://127.0.0.1:{B}/article",
            f"https://localhost:{A}/login",
            f"http://127.0.0.1:{B}/login",
            "localhost  # a bare host: one URL per --ports entry",
            f"127.0.0.1:{B}",
            json.dumps({"url": f"http://127.0.0.1:{B}/article?from=httpx", "title": "Appliance #1",
                        "status_code": 200}),
            '{"url": broken',
            "gopher://127.0.0.1/",
        ] + ([f"https://localhost:{U}/article"] if U else [])
        out = tmp_path / "result.json"
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy_websim.cli", "-l", "-", "-o", str(out), "--ports", f"{A},{B}",
             "-H", "X-Scan: websim-test", "-H", "Accept-Language: de", "--cookie", "session=abc123; theme=dark",
             "-s", "USER_AGENT=websim-test-UA/1.0", "--delay", "1", "--per-host", "2",
             "-s", "RANDOMIZE_DOWNLOAD_DELAY=false"],
            input="\n".join(lines) + "\n", cwd=str(tmp_path), capture_output=True, text=True, timeout=400,
            env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})
        assert proc.returncode == 0, proc.stderr[-6000:]
    data = load(str(out))
    rows = data["urls"]
    # ids: one per line, a bare host expanded into one record per port, in input order
    assert [r["id"] for r in rows] == list(range(1, 12 + bool(U)))
    urls = [r["url"] for r in rows]
    assert urls[5:8] == [f"https://localhost:{A}/", f"http://localhost:{B}/", f"http://127.0.0.1:{B}/"]
    assert [r["expanded_from"] for r in rows[5:8]] == ["localhost", "localhost", f"127.0.0.1:{B}"]
    assert all(r["expanded_from"] == "" for r in rows[:5] + rows[8:])
    if U:  # not rendered, but TLS is checked the way a browser would
        row = rows[11]
        assert row["status_code"] == 200 and row["error"] == "", row
        assert row["tls_error"] == "ERR_CERT_AUTHORITY_INVALID", row
        assert row["tls_subject"] == "localhost" and row["tls_valid_to"] > row["tls_valid_from"], row
        assert row["tls_sha256"] == tls_context.websim_sha256 and row["tls_sans"] == ["DNS:localhost"], row
    assert urls[8] == f"http://127.0.0.1:{B}/article?from=httpx" and not rows[8]["error"]
    assert "broken JSON line" in rows[9]["error"] and "unsupported scheme" in rows[10]["error"]
    by = _by_url(rows)

    # self-signed HTTPS renders like HTTP, with the certificate and the browser's verdict recorded
    for url in (f"https://127.0.0.1:{A}/article", f"https://localhost:{A}/article", f"https://localhost:{A}/"):
        row = by[url]
        assert row["status_code"] == 200 and row["error"] == "" and row["title"] == "Appliance notes", row
        assert row["tls_error"].startswith("ERR_CERT_"), row
        assert row["tls_subject"] == "localhost" and row["tls_issuer"] == "localhost", row
        assert row["tls_valid_from"].endswith("Z") and row["tls_valid_to"] > row["tls_valid_from"], row
        # the pivot: every page served with this certificate shares its SHA-256 (openssl's fingerprint)
        assert row["tls_sha256"] == tls_context.websim_sha256 and row["tls_sans"] == ["DNS:localhost"], row
    assert by[f"https://localhost:{A}/article"]["tls_error"] == "ERR_CERT_AUTHORITY_INVALID"
    for url in (f"http://127.0.0.1:{B}/article", f"http://localhost:{B}/"):
        assert by[url]["tls_error"] == "" and by[url]["tls_subject"] == "" and by[url]["status_code"] == 200
        assert by[url]["tls_sha256"] == "" and by[url]["tls_sans"] == []
    # ... clusters with its HTTP copies ...
    article_cluster = by[f"http://127.0.0.1:{B}/article"]["cluster_id"]
    assert article_cluster.startswith("cluster-")
    same = [u for u in (f"https://127.0.0.1:{A}/article", f"https://localhost:{A}/article", f"https://localhost:{A}/",
                        f"http://localhost:{B}/", f"http://127.0.0.1:{B}/", f"http://127.0.0.1:{B}/article?from=httpx")]
    assert {by[u]["cluster_id"] for u in same} == {article_cluster}
    # ... and is labelled like HTTP (a login wall on both)
    assert by[f"https://localhost:{A}/login"]["cluster_kind"] == "L1"
    assert by[f"http://127.0.0.1:{B}/login"]["cluster_kind"] == "L1"

    # headers (-H: Scrapy's DEFAULT_REQUEST_HEADERS), cookies and Scrapy's USER_AGENT on every navigation
    # and every sub-request, on both schemes
    got = recorder.requests
    for port in (A, B):
        for path in ("/article", "/style.css", "/pixel.gif", "/api/ping"):
            seen = [r for r in got if r["port"] == port and r["path"].split("?")[0] == path]
            assert seen, (port, path)
            for r in seen:
                h = {k.lower(): v for k, v in r["headers"].items()}
                assert h.get("x-scan") == "websim-test", (port, path, h)
                assert "session=abc123" in h.get("cookie", "") and "theme=dark" in h.get("cookie", ""), (port, path, h)
                assert h.get("user-agent") == "websim-test-UA/1.0", (port, path, h)
        # the page's own navigator.userAgent is Scrapy's USER_AGENT too
        pings = [r["path"] for r in got if r["port"] == port and r["path"].startswith("/api/ping")]
        assert pings and all(p == "/api/ping?ua=websim-test-UA%2F1.0" for p in pings), pings
        nav = [r for r in got if r["port"] == port and r["path"] == "/article"]
        assert all({k.lower(): v for k, v in r["headers"].items()}.get("accept-language") == "de" for r in nav)

    # politeness: with --delay 1 (not randomised here), navigations to one host leave Scrapy >= 1 s
    # apart; without it the two per-host slots start together. Per server (one browser each), the
    # first gap is left out: the first two requests may both wait for that browser to launch.
    for host, port in (("127.0.0.1", B), ("localhost", A)):
        starts = sorted(r["time"] for r in got if r["host"] == host and r["port"] == port and r["navigation"])
        gaps = [b - a for a, b in zip(starts, starts[1:])][1:]
        assert gaps and min(gaps) >= 0.6, (host, port, gaps)


def _tinyproxy(tmp_path, connect_ports: List[int]) -> Any:
    port = free_port()
    log = tmp_path / "tinyproxy.log"
    conf = tmp_path / "tinyproxy.conf"
    conf.write_text("\n".join([
        f"Port {port}", "Listen 127.0.0.1", "Timeout 60", f'LogFile "{log}"', "LogLevel Info",
        f'PidFile "{tmp_path / "tinyproxy.pid"}"', "MaxClients 50", "Allow 127.0.0.1",
        "BasicAuth scanner s3cret",  # --proxy with credentials in the URL
        *[f"ConnectPort {p}" for p in connect_ports], "",
    ]))
    proc = subprocess.Popen(["tinyproxy", "-d", "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=open(tmp_path / "tinyproxy.out", "w"))
    _wait_port(port, proc, str(tmp_path / "tinyproxy.out"))
    return proc, port, log


def _unsafe_port() -> int:
    """A port Chromium refuses (its pages go through Scrapy's own client), if one is free."""
    for port in (6665, 6666, 6667, 6668, 6669, 6697, 10080):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    return 0


@pytest.mark.skipif(not shutil.which("tinyproxy"), reason="tinyproxy is not installed (scripts/setup.sh installs it)")
def test_proxy_strict_tls_and_per_host_concurrency(tmp_path, tls_context):
    recorder = Recorder()
    unsafe = _unsafe_port()
    with contextlib.ExitStack() as stack:
        A = stack.enter_context(serve(recorder, tls=tls_context))
        B = stack.enter_context(serve(recorder, slow_navigation=0.6))
        C = stack.enter_context(serve(recorder, port=unsafe)) if unsafe else 0
        proxy, proxy_port, log = _tinyproxy(tmp_path, [A])
        try:
            urls = [f"https://localhost:{A}/article", f"http://127.0.0.1:{B}/article", f"http://127.0.0.1:{B}/login",
                    f"http://127.0.0.1:{B}/", f"http://127.0.0.1:{B}/article?x=2"]
            if C:
                urls.append(f"http://127.0.0.1:{C}/article")
            listing = tmp_path / "urls.txt"
            listing.write_text("\n".join(urls) + "\n")
            out = tmp_path / "result.csv"
            proc = run_websim(["-l", str(listing), "-o", str(out), "--strict-tls", "--per-host", "1",
                               "--proxy", f"http://scanner:s3cret@127.0.0.1:{proxy_port}", "-H", "X-Scan: proxied"],
                              cwd=str(tmp_path), timeout=400)
            assert proc.returncode == 0, proc.stderr[-6000:]
        finally:
            _stop(proxy)
    table = load(str(out))
    header, body = table[0], table[1:]
    # CSV: the seed's columns first, the new ones after them
    assert header[:20] == ["id", "url", "normalized_url", "final_url", "redirect_chain", "status_code",
                           "content_length", "content_type", "error", "title", "cluster_id", "is_canonical",
                           "similarity_to_canonical", "content_sim", "structure_sim", "visual_sim", "behavior_sim",
                           "cluster_kind", "match_rule", "page_type"]
    assert header[20:] == ["expanded_from", "tls_error", "tls_subject", "tls_issuer", "tls_valid_from", "tls_valid_to",
                           "tls_sha256", "tls_sans", "favicon_url", "favicon_hash", "match_reason", "excerpt",
                           "content_digest", "render_from"]
    rows = {r[1]: dict(zip(header, r)) for r in body}
    assert len(rows) == len(urls)
    # --strict-tls: the self-signed page is an error, with the reason in tls_error
    strict = rows[f"https://localhost:{A}/article"]
    assert strict["status_code"] == "0" and "TLS certificate error (ERR_CERT_AUTHORITY_INVALID)" in strict["error"]
    assert strict["tls_error"] == "ERR_CERT_AUTHORITY_INVALID"
    for url in urls[1:]:
        assert rows[url]["status_code"] == "200" and rows[url]["error"] == "", rows[url]
    # every page went through the proxy: tinyproxy logged it and added its Via header
    text = log.read_text(errors="replace")
    for url in urls[1:]:
        assert f"GET {url} " in text, (url, text[-3000:])
    assert f"CONNECT localhost:{A} " in text, text[-3000:]
    served = [{k.lower(): v for k, v in r["headers"].items()} for r in recorder.requests if r["port"] in (B, C)]
    assert served and all("tinyproxy" in h.get("via", "") for h in served), served[:3]
    assert all(h.get("x-scan") == "proxied" for h in served), [h for h in served if h.get("x-scan") != "proxied"][:3]
    # --per-host 1: never two navigations of 127.0.0.1 at once, although each takes 0.6 s to answer
    # (Scrapy 2.19 alone let 7 go at once with the asyncio reactor: scrapy_websim/downloader.py)
    assert recorder.max_in_flight.get("127.0.0.1") == 1, recorder.max_in_flight


@pytest.mark.skipif(not shutil.which("tinyproxy"), reason="tinyproxy is not installed (scripts/setup.sh installs it)")
def test_documents_fetched_first_go_through_the_proxy_with_its_credentials(tmp_path):
    """The fetch that comes before a render (render each distinct page once) uses --proxy and its
    user:password as the browser does: each document reaches the server once, through the proxy."""
    recorder = Recorder()
    with contextlib.ExitStack() as stack:
        B = stack.enter_context(serve(recorder))
        proxy, proxy_port, log = _tinyproxy(tmp_path, [])
        try:
            urls = [f"http://127.0.0.1:{B}/article", f"http://127.0.0.1:{B}/login", f"http://127.0.0.1:{B}/missing"]
            listing = tmp_path / "urls.txt"
            listing.write_text("\n".join(urls) + "\n")
            out = tmp_path / "result.json"
            proc = run_websim(["-l", str(listing), "-o", str(out), "--per-host", "1",
                               "--proxy", f"http://scanner:s3cret@127.0.0.1:{proxy_port}"],
                              cwd=str(tmp_path), timeout=400)
            assert proc.returncode == 0, proc.stderr[-6000:]
        finally:
            _stop(proxy)
    rows = {r["url"]: r for r in load(str(out))["urls"]}
    assert [rows[u]["status_code"] for u in urls] == [200, 200, 404]
    assert all(rows[u]["error"] == "" and rows[u]["title"] for u in urls), rows
    text = log.read_text(errors="replace")
    documents = [r for r in recorder.requests if r["path"] in ("/article", "/login", "/missing")]
    assert sorted(r["path"] for r in documents) == ["/article", "/login", "/missing"], documents
    assert all("tinyproxy" in r["headers"].get("Via", r["headers"].get("via", "")) for r in documents), documents
    for url in urls:  # once: the fetch had the credentials (a 407 would have sent the browser again)
        assert text.count(f"GET {url} ") == 1, (url, text[-3000:])
