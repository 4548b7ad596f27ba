"""Crawl throughput and memory of the ``websim`` command (issue 2 figures), on 127.0.0.1 only.

    python bench/crawl.py [--pages 200] [--threads 20] [--keep DIR]

1. **demo**: the bundled demo site (``example_project/demo_site/server.py``, in its own process) on
   two free ports of 127.0.0.1, with the URL list ``server.py --urls`` writes (22 URLs: articles, copies, mirrors,
   redirects, special pages, one non-URL), crawled by ``python -m scrapy_websim.cli -l ... -o ...``
   in a subprocess.
2. **local200**: ``--pages`` distinct pages ``/item/N`` of the same server (different text each).

``pages_s`` = records in the output / wall time of the whole ``websim`` process (interpreter and
Chromium start-up, crawl, clustering, writing), which is what a user waits for; the crawl alone
(Scrapy's ``elapsed_time_seconds``) is printed too. Memory is sampled every 0.2 s with psutil:
``peak_rss_mb`` is the peak RSS of the websim (Python) process; ``peak_total_mb`` the peak of the
summed PSS of it and all its descendants (Chromium browser, renderer, GPU and utility processes),
PSS so that pages shared between Chromium processes count once (RSS when PSS is unreadable).
Both are the maxima over the two crawls. The machine is shared: rates vary with its load, which
is printed.

Last line, exactly: ``demo_pages_s=<x> local200_pages_s=<x> peak_rss_mb=<x> peak_total_mb=<x>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MB = 1024 * 1024


class MemorySampler(threading.Thread):
    """Peak RSS of one process and peak summed PSS (else RSS) of it and its descendants."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.interval = interval
        self.peak_rss = 0
        self.peak_total = 0
        self.peak_procs = 0
        self.pss = True
        self.stop = threading.Event()

    def _mem(self, proc: psutil.Process) -> int:
        if self.pss:
            try:
                return proc.memory_full_info().pss
            except (psutil.AccessDenied, AttributeError):
                self.pss = False
        return proc.memory_info().rss

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak_rss = max(self.peak_rss, self.proc.memory_info().rss)
                procs = [self.proc] + self.proc.children(recursive=True)
            except psutil.NoSuchProcess:
                return
            total = 0
            for p in procs:
                try:
                    total += self._mem(p)
                except (psutil.NoSuchProcess, psutil.ZombieProcess):
                    pass
            self.peak_total = max(self.peak_total, total)
            self.peak_procs = max(self.peak_procs, len(procs))
            self.stop.wait(self.interval)


def count_records(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        if path.endswith(".jsonl"):
            return sum(1 for line in fh if line.strip())
        data = json.load(fh)
    if isinstance(data, dict):
        for key in ("pages", "records", "urls", "items"):
            if isinstance(data.get(key), list):
                return len(data[key])
    return len(data)


def run_crawl(name: str, urls: List[str], workdir: str, threads: int) -> Dict[str, float]:
    listing = os.path.join(workdir, f"{name}.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("\n".join(urls) + "\n")
    out = os.path.join(workdir, f"{name}.jsonl")
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-O", out, "-t", str(threads),
           "--loglevel", "INFO"]
    log_path = os.path.join(workdir, f"{name}.log")
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
        sampler = MemorySampler(proc.pid)
        sampler.start()
        try:
            rc = proc.wait(timeout=1800)
        finally:
            if proc.poll() is None:
                proc.kill()
            sampler.stop.set()
            sampler.join()
    wall = time.perf_counter() - t0
    log_text = open(log_path, encoding="utf-8", errors="replace").read()
    if rc != 0 or not os.path.exists(out):
        sys.exit(f"{name}: websim exited {rc}; log {log_path}:\n{log_text[-3000:]}")
    pages = count_records(out)
    m = re.search(r"'elapsed_time_seconds': ([0-9.]+)", log_text)
    crawl_s = float(m.group(1)) if m else float("nan")
    res = {
        "urls": len(urls), "pages": pages, "wall_s": wall, "pages_s": pages / wall,
        "crawl_s": crawl_s, "crawl_pages_s": pages / crawl_s if crawl_s else float("nan"),
        "peak_rss_mb": sampler.peak_rss / MB, "peak_total_mb": sampler.peak_total / MB,
        "procs": sampler.peak_procs, "load": load_before,
    }
    print(f"{name}: {pages} records from {len(urls)} URLs in {wall:.1f} s = {res['pages_s']:.2f} pages/s "
          f"(crawl alone {crawl_s:.1f} s = {res['crawl_pages_s']:.2f} pages/s); peak RSS websim "
          f"{res['peak_rss_mb']:.0f} MB, peak {'PSS' if sampler.pss else 'RSS'} websim+Chromium "
          f"{res['peak_total_mb']:.0f} MB over up to {sampler.peak_procs} processes; load avg at start "
          f"{load_before:.1f} on {os.cpu_count()} cores", flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=200, help="distinct /item/N pages of the second crawl")
    ap.add_argument("--threads", type=int, default=20, help="websim -t (its default is 20)")
    ap.add_argument("--keep", help="keep URL lists, outputs and logs in this directory")
    args = ap.parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-bench-crawl-")
    os.makedirs(workdir, exist_ok=True)
    # The demo server in its own process, on two free ports (--port 0 twice: the site and its
    # mirror); it writes the demo URL list with the ports it got, then says where it serves.
    listing = os.path.join(workdir, "demo-urls.txt")
    server = subprocess.Popen(
        [sys.executable, "-m", "example_project.demo_site.server", "--port", "0", "--port", "0",
         "--urls", listing],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    try:
        line = server.stdout.readline()
        ports = [int(p) for p in re.findall(r"127\.0\.0\.1:(\d+)/", line)]
        if len(ports) != 2:
            sys.exit(f"demo server did not start: {line!r}")
        demo_urls = [u.strip() for u in open(listing, encoding="utf-8") if u.strip() and not u.startswith("#")]
        demo_res = run_crawl("demo", demo_urls, workdir, args.threads)
        items = [f"http://127.0.0.1:{ports[0]}/item/{i}" for i in range(args.pages)]
        local_res = run_crawl(f"local{args.pages}", items, workdir, args.threads)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    peak_rss = max(demo_res["peak_rss_mb"], local_res["peak_rss_mb"])
    peak_total = max(demo_res["peak_total_mb"], local_res["peak_total_mb"])
    print(f"demo_pages_s={demo_res['pages_s']:.2f} local200_pages_s={local_res['pages_s']:.2f} "
          f"peak_rss_mb={peak_rss:.0f} peak_total_mb={peak_total:.0f}")


if __name__ == "__main__":
    main()
