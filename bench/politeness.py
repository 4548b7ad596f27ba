"""What per-host concurrency costs: one host, many URLs, ``websim --per-host K`` for several K.

    python bench/politeness.py [--pages 40] [--per-host 1,2,4,8] [--server-ms 50]

A threaded server on 127.0.0.1 serves ``--pages`` distinct pages (own text, a stylesheet, an
image), each page answered after ``--server-ms`` (a host's own think time), and counts how many
page requests it is serving at once. For each K: crawl wall time of the ``websim`` process,
pages/s, and the most page requests the host saw at once (it must not exceed K).

Last line, exactly: ``per_host=<K>:<pages/s>:<max_at_once> ...``.
"""

from __future__ import annotations

import argparse
import http.server
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("inventory appliance host service port banner certificate proxy header cookie politeness "
         "scan render cluster label error login maintenance mirror redirect variant").split()


class Host:
    def __init__(self, server_ms: int) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.delay = server_ms / 1000.0

    def handler(self):
        host = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                page = self.path.startswith("/item/")
                if page:
                    with host.lock:
                        host.now += 1
                        host.most = max(host.most, host.now)
                try:
                    if page:
                        time.sleep(host.delay)
                        n = int(self.path.rsplit("/", 1)[1] or 0)
                        text = " ".join(WORDS[(n * 7 + i * 3) % len(WORDS)] + str(i % (n + 2)) for i in range(400))
                        body = (f"<html><head><title>Item {n}</title><link rel=stylesheet href=/s.css></head><body>"
                                f"<main><h1>Item {n}</h1><p>{text}</p><img src=/i.gif></main></body></html>").encode()
                        ctype = "text/html"
                    elif self.path == "/s.css":
                        body, ctype = b"body{margin:2em}", "text/css"
                    else:
                        body, ctype = b"GIF89a", "image/gif"
                    self.send_response(200)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                finally:
                    if page:
                        with host.lock:
                            host.now -= 1

        return H


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--per-host", default="1,2,4,8")
    ap.add_argument("--server-ms", type=int, default=50)
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in [int(x) for x in args.per_host.split(",")]:
            host = Host(args.server_ms)
            httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), host.handler())
            httpd.daemon_threads = True
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            listing = os.path.join(tmp, "urls.txt")
            with open(listing, "w") as fh:
                fh.write("\n".join(f"http://127.0.0.1:{httpd.server_address[1]}/item/{i}" for i in range(args.pages)))
            out = os.path.join(tmp, f"out{k}.jsonl")
            env = {**os.environ, "PYTHONPATH": REPO}
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-o", out,
                                   "--per-host", str(k)], env=env, capture_output=True, text=True, timeout=1800)
            wall = time.perf_counter() - t0
            httpd.shutdown()
            httpd.server_close()
            if proc.returncode != 0:
                sys.exit(proc.stderr[-3000:])
            m = re.search(r"'elapsed_time_seconds': ([0-9.]+)", proc.stderr)
            crawl = float(m.group(1)) if m else float("nan")
            print(f"per-host {k}: {args.pages} pages in {wall:.1f} s wall ({crawl:.1f} s crawl) = "
                  f"{args.pages / crawl:.2f} pages/s of crawl; at most {host.most} page requests at once "
                  f"(load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)", flush=True)
            results.append(f"per_host={k}:{args.pages / crawl:.2f}:{host.most}")
    print(" ".join(results))


if __name__ == "__main__":
    main()
