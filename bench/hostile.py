"""The hostile-page crawl (``scrapy_websim/testing/hostile_server.py``) with the shipped timeouts:
records, time, memory.

    python bench/hostile.py [--repeat 1] [--page-timeout 20] [--http-timeout 10] [--keep DIR]

Serves every hostile case on 127.0.0.1 (a 50 MB page, a gzip bomb, a million nodes, endless
streams, loops, popups, downloads, redirect loops, bad answers...; see the server's docstring), repeats
the list ``--repeat`` times (each line is its own record), crawls it with ``python -m scrapy_websim.cli``
in a subprocess with ``WEBSIM_DENY_NETWORKS=127.0.0.2/32`` (the server's forbidden twin), and checks the
result with the test's own checks (every line once, no local file read, transfers stopped, forbidden
network never reached). Memory is sampled every 0.2 s (``bench/memory.py``): the peak of the summed
PSS (RSS when PSS is unreadable) of websim and all its Chromium processes.

Last line, exactly: ``urls=N missing=0 duplicated=0 seconds=S peak_rss_mb=M``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

from memory import MB, MemorySampler  # noqa: E402

from scrapy_websim.testing.hostile_server import check_hostile_result, hostile_site  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="repeat the hostile list this many times")
    ap.add_argument("--page-timeout", type=float, default=20.0)
    ap.add_argument("--http-timeout", type=float, default=10.0)
    ap.add_argument("--keep", help="keep the list, log and result in this directory")
    args = ap.parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-hostile-")
    os.makedirs(workdir, exist_ok=True)
    try:
        with hostile_site() as site:
            urls = site.urls * args.repeat
            site.urls = urls
            listing = os.path.join(workdir, "urls.txt")
            with open(listing, "w", encoding="utf-8") as fh:
                fh.write("\n".join(urls) + "\n")
            out = os.path.join(workdir, "result.json")
            env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
            cmd = [sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-O", out,
                   "--page-timeout", str(args.page_timeout), "--http-timeout", str(args.http_timeout),
                   "-s", "WEBSIM_DENY_NETWORKS=127.0.0.2/32"]
            load = os.getloadavg()[0]
            started = time.monotonic()
            with open(os.path.join(workdir, "websim.log"), "w", encoding="utf-8") as log:
                proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
                sampler = MemorySampler(proc.pid)
                sampler.start()
                code = proc.wait()
                sampler.stop.set()
            seconds = time.monotonic() - started
            time.sleep(1.0)
            with open(out, encoding="utf-8") as fh:
                text = fh.read()
            rows = json.loads(text)["urls"]
            problems = check_hostile_result(site, rows, text)
            counters = dict(site.counters)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    got = Counter((row["id"], row["url"]) for row in rows)
    missing = sum(1 for i, url in enumerate(urls, start=1) if (i, url) not in got)
    duplicated = sum(n - 1 for n in got.values() if n > 1) + max(0, len(rows) - len(urls))
    errors = Counter(row["error"].split(":")[0].split("(")[0].strip() for row in rows if row["error"])
    print(f"exit status {code}; load avg at start {load:.1f}; server: {counters}")
    print("errors: " + "; ".join(f"{n} x {e}" for e, n in errors.most_common()))
    print(f"peak RSS of websim alone {sampler.peak_rss / MB:.0f} MB; peak {'PSS' if sampler.pss else 'RSS'} "
          f"websim+Chromium {sampler.peak_total / MB:.0f} MB over up to {sampler.peak_procs} processes")
    for problem in problems:
        print("PROBLEM:", problem)
    print(f"urls={len(urls)} missing={missing} duplicated={duplicated} seconds={seconds:.1f} "
          f"peak_rss_mb={sampler.peak_total / MB:.0f}")


if __name__ == "__main__":
    main()
