"""A long URL list is read as a stream: the first page is rendered while most of the list is still
unread, and reading it costs no memory that grows with it (``python bench/biglist.py`` measures a
list of a million lines)."""

from __future__ import annotations

import http.server
import os
import socketserver
import subprocess
import sys
import threading
import time

import psutil
import pytest

from scrapy_websim.testing.crawl import PACKAGE_ROOT

pytestmark = pytest.mark.crawl

LINES = 300_000
MB = 1024 * 1024


class _Pages(http.server.BaseHTTPRequestHandler):
    first = threading.Event()

    def do_GET(self):
        body = f"<html><head><title>{self.path}</title></head><body><p>page {self.path}</p></body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.path.startswith("/item/"):
            _Pages.first.set()

    def log_message(self, *args):
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def _first_request(tmp_path, lines, port):
    """Start a crawl of ``lines`` URLs; at the server's first page request: ``(RSS of the crawl process,
    share of the list file read then, or None if the file is not open any more)``."""
    listing = tmp_path / f"urls-{lines}.txt"
    with open(listing, "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(f"http://127.0.0.1:{port}/item/{i}\n")
    size = os.path.getsize(listing)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    _Pages.first.clear()
    proc = subprocess.Popen([sys.executable, "-m", "scrapy_websim.cli", "-l", str(listing), "-o",
                             str(tmp_path / f"out-{lines}.jsonl"), "--no-calibrate-404"],
                            cwd=str(tmp_path), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    crawl = psutil.Process(proc.pid)
    try:
        assert _Pages.first.wait(600), "no page was requested"
        rss = crawl.memory_info().rss
        read = None
        for entry in os.scandir(f"/proc/{proc.pid}/fd"):
            try:
                if os.readlink(entry.path) == str(listing):
                    with open(f"/proc/{proc.pid}/fdinfo/{entry.name}") as info:
                        pos = int(next(line for line in info if line.startswith("pos:")).split()[1])
                    read = pos / size
            except (OSError, StopIteration):
                continue
        return rss, read
    finally:
        for child in crawl.children(recursive=True):
            child.kill()
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="reads the list file's position from /proc")
def test_a_long_list_is_rendered_as_it_is_read(tmp_path):
    server = _Server(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        small_rss, _ = _first_request(tmp_path, 10, server.server_address[1])
        started = time.monotonic()
        rss, read = _first_request(tmp_path, LINES, server.server_address[1])
    finally:
        server.shutdown()
    # before, the whole list was read, parsed and stored as placeholders before the first request
    assert read is not None and read < 0.05, f"{read} of the list read at the first request"
    assert rss - small_rss < 40 * MB, f"the list costs {(rss - small_rss) / MB:.0f} MB"
    assert time.monotonic() - started < 600
