"""A 1,000,000-line URL list: how soon the first page is rendered and how much memory the list costs.

    python bench/biglist.py [--lines 1000000] [--seconds 60] [--origins 1] [--resume] [--finish]

A page server on 127.0.0.1 answers every path with a small HTML page of its own text; the list has
``--lines`` URLs of it (``--origins`` hosts 127.0.0.N, each on the same port). ``websim -l LIST -o
out.jsonl`` (with ``--resume JOB``: in a job folder) runs for ``--seconds`` after its first rendered page (Scrapy's
``Crawled (200)`` line: the page was rendered and captured), then is stopped with SIGKILL, as a
crawl of a million URLs is never waited for here (``--finish`` stops it with SIGINT instead and
waits for the result files: every line a record). The same is done with a list of 100 lines of
the same site. Figures:

* ``first_page_s``: seconds from the start of the ``websim`` process to its first rendered page;
* ``list_mb``: the peak RSS of the ``websim`` process (Python; Chromium apart) during the run with
  the large list minus the same with 100 lines: what the list costs;
* ``pages``: pages rendered in the window (both runs).

Last line, exactly: ``lines=N first_page_s=X list_mb=Y peak_rss_mb=Z small_peak_rss_mb=W``.
"""

from __future__ import annotations

import argparse
import http.server
import os
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

MB = 1024 * 1024
WORDS = ("owl", "heron", "kite", "wren", "crane", "finch", "swift", "lark", "rook", "teal")


class _Pages(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    served = 0

    def do_GET(self) -> None:  # every path is a page of its own
        n = sum(self.path.encode())
        text = " ".join(WORDS[(n + i * 7) % len(WORDS)] for i in range(120))
        body = (f"<html><head><title>Page {self.path[:60]}</title></head><body><main><h1>{self.path[:60]}</h1>"
                f"<p>{text}</p></main></body></html>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        _Pages.served += 1

    def log_message(self, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def write_list(path: str, lines: int, port: int, origins: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(f"http://127.0.0.{1 + i % origins}:{port}/item/{i}?page={i % 97}\n")


def run(listing: str, workdir: str, seconds: float, finish: bool, resume: bool) -> dict:
    """One crawl: seconds to its first rendered page, its peak RSS, pages rendered."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-o", os.path.join(workdir, "out.jsonl"),
            "--loglevel", "DEBUG", "--no-calibrate-404"]
    if resume:
        args += ["--resume", os.path.join(workdir, "job")]
    started = time.monotonic()
    proc = subprocess.Popen(args, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    state: dict = {"first": None, "pages": 0, "peak": 0, "tail": []}
    try:
        ps = psutil.Process(proc.pid)
    except psutil.NoSuchProcess:
        raise SystemExit(f"websim exited at once: {proc.communicate()[1][-3000:]}") from None

    def read_log() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            state["tail"] = (state["tail"] + [line])[-20:]
            if "Crawled (200)" in line:
                state["pages"] += 1
                if state["first"] is None:
                    state["first"] = time.monotonic() - started

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    deadline = None
    while proc.poll() is None:
        try:
            state["peak"] = max(state["peak"], ps.memory_info().rss)
        except psutil.Error:
            break
        if state["first"] is not None and deadline is None:
            deadline = time.monotonic() + seconds
        if deadline is not None and time.monotonic() > deadline:
            break
        if time.monotonic() - started > seconds + 120 and state["first"] is None:
            break  # no page at all: say so below
        time.sleep(0.2)
    if finish and proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        while proc.poll() is None:
            try:
                state["peak"] = max(state["peak"], ps.memory_info().rss)
            except psutil.Error:
                break
            time.sleep(0.5)
        state["exit"] = proc.wait()
    else:
        try:
            for child in ps.children(recursive=True):
                child.kill()
        except psutil.Error:  # the crawl ended already (a short list)
            pass
        proc.kill()
        proc.wait()
    reader.join(5)
    if state["first"] is None:
        print("no page was rendered; the end of websim's log:\n" + "".join(state["tail"]), file=sys.stderr)
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=60.0, help="crawl this long after the first page")
    parser.add_argument("--origins", type=int, default=1, help="hosts 127.0.0.1..N (one port)")
    parser.add_argument("--finish", action="store_true", help="stop with SIGINT and wait for the result files")
    parser.add_argument("--resume", action="store_true", help="crawl in a job folder (--resume JOB)")
    args = parser.parse_args()
    server = _Server(("0.0.0.0" if args.origins > 1 else "127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    figures = {}
    try:
        for name, lines in (("small", 100), ("big", args.lines)):
            with tempfile.TemporaryDirectory(prefix="websim-biglist-") as workdir:
                listing = os.path.join(workdir, "urls.txt")
                made = time.monotonic()
                write_list(listing, lines, port, args.origins)
                print(f"{name}: {lines} lines written in {time.monotonic() - made:.1f} s", file=sys.stderr)
                state = run(listing, workdir, args.seconds, args.finish, args.resume)
                figures[name] = state
                print(f"{name}: first page after {state['first']} s, {state['pages']} pages rendered, peak RSS "
                      f"{state['peak'] / MB:.0f} MB" + (f", exit {state['exit']}" if "exit" in state else ""),
                      file=sys.stderr)
    finally:
        server.shutdown()
    big, small = figures["big"], figures["small"]
    first = big["first"] if big["first"] is not None else float("inf")
    print(f"lines={args.lines} first_page_s={first:.1f} list_mb={(big['peak'] - small['peak']) / MB:.0f} "
          f"peak_rss_mb={big['peak'] / MB:.0f} small_peak_rss_mb={small['peak'] / MB:.0f}")


if __name__ == "__main__":
    main()
