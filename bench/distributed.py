"""One process vs two scrapy-redis workers on the same URL list, on 127.0.0.1 only.

    python bench/distributed.py [--items 250] [--workers 2] [--threads 20] [--kill-one] [--keep DIR]

Starts a real ``redis-server`` (AOF, ``appendfsync everysec``) on a free port, the bundled demo site
on two free ports (its 22-URL list: copies, mirrors, redirects, special pages, a non-URL) plus
``--items`` distinct pages ``/item/N``; crawls the list once with ``websim -l`` and once with
``websim push`` + ``--workers`` x ``websim worker`` + ``websim collect``, each a subprocess, and compares
the two results: ids, URLs, final URLs, statuses, errors, titles, cluster ids, canonicals, cluster
kinds, match rules and page types of every row, and every cluster (timings and similarity values,
which depend on timings and per-request noise, aside). ``--kill-one`` SIGKILLs the first worker
(and its Chromium) once a third of the URLs are recorded and starts a replacement.

``single_s`` is the wall time of the single ``websim`` process; ``distributed_s`` from the start of
``push`` to the end of ``collect``. Both runs share this machine's cores, so two workers on one
machine are not faster than one process; the figure that matters is that the answer is the same.

Last line, exactly: ``workers=N urls=N same_as_single=0|1 lost=N single_s=X distributed_s=Y``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from example_project.demo_site.server import running as demo_site  # noqa: E402
from scrapy_websim.testing.crawl import comparable, load  # noqa: E402
from scrapy_websim.testing.redis_server import RedisServer  # noqa: E402

DEMO_PATHS = ["/", "/article/rivers", "/article/rivers?utm_source=x", "/mirror/rivers", "/article/bread",
              "/article/comets", "/article/bees", "/js/bees", "/old/comets", "/login", "/account", "/no-such-page",
              "/gone", "/broken", "/maintenance", "/admin", "/thin", "/index.html", "/report.json", "/loop/a"]


def websim(args: List[str], cwd: str, log: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    fh = open(log, "w", encoding="utf-8")
    return subprocess.Popen([sys.executable, "-m", "scrapy_websim.cli", *args], cwd=cwd, env=env, stdout=fh,
                            stderr=subprocess.STDOUT, start_new_session=True)


def finish(proc: subprocess.Popen, what: str, log: str, timeout: float = 3600) -> None:
    rc = proc.wait(timeout=timeout)
    if rc != 0:
        sys.exit(f"{what} exited {rc}; log {log}:\n{open(log, encoding='utf-8', errors='replace').read()[-3000:]}")


def lost_count(rows: List[dict], n: int) -> int:
    ids = [r["id"] for r in rows]
    return sum(1 for i in range(1, n + 1) if ids.count(i) != 1) + sum(1 for i in ids if not 1 <= i <= n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=250, help="distinct /item/N pages besides the demo list")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--kill-one", action="store_true", help="SIGKILL the first worker mid-crawl, start another")
    ap.add_argument("--keep", help="keep the work directory here")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="websim-bench-dist-")
    os.makedirs(work, exist_ok=True)
    timeouts = ["--http-timeout", "5", "--page-timeout", "10", "-s", "WEBSIM_STABLE_TIMEOUT=5"]
    from scrapy_websim.distributed.job import Job, connect

    with demo_site(2) as (base, mirror), RedisServer(os.path.join(work, "redis")) as redis_server:
        urls = [base + p for p in DEMO_PATHS] + [mirror + "/article/rivers", "this is not a url"]
        urls += [f"{base}/item/{i}" for i in range(1, args.items + 1)]
        listing = os.path.join(work, "urls.txt")
        with open(listing, "w", encoding="utf-8") as fh:
            fh.write("\n".join(urls) + "\n")
        print(f"bench: {len(urls)} URLs, load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)

        single_out = os.path.join(work, "single.json")
        t0 = time.perf_counter()
        log = os.path.join(work, "single.log")
        finish(websim(["-l", listing, "-o", single_out, "-t", str(args.threads), *timeouts], work, log), "single", log)
        single_s = time.perf_counter() - t0
        print(f"single: {single_s:.1f} s", flush=True)

        t0 = time.perf_counter()
        log = os.path.join(work, "push.log")
        finish(websim(["push", "-l", listing, "--redis", redis_server.url, "--job", "bench"], work, log), "push", log)
        job = Job(connect(redis_server.url), "bench")
        worker_args = ["worker", "--redis", redis_server.url, "--job", "bench", "-t", str(args.threads),
                       "--lease-timeout", "30", *timeouts]
        logs = [os.path.join(work, f"worker{i}.log") for i in range(args.workers)]
        workers = [(websim(worker_args, work, log), log) for log in logs]
        if args.kill_one:
            while job.counts()["recorded"] < len(urls) // 3:
                time.sleep(0.5)
            victim, _ = workers.pop(0)
            os.killpg(victim.pid, signal.SIGKILL)
            victim.wait()
            print(f"killed worker 0 holding {job.counts()['leased']} leases; starting a replacement", flush=True)
            log = os.path.join(work, "worker-replacement.log")
            workers.append((websim(worker_args, work, log), log))
        for i, (proc, log) in enumerate(workers):
            finish(proc, f"worker {i}", log)
        out = os.path.join(work, "distributed.json")
        log = os.path.join(work, "collect.log")
        finish(websim(["collect", "--redis", redis_server.url, "--job", "bench", "-o", out], work, log), "collect", log)
        distributed_s = time.perf_counter() - t0
        print(f"distributed: {distributed_s:.1f} s", flush=True)

    single, distributed = load(single_out), load(out)
    same = comparable(single) == comparable(distributed)
    if not same:
        a, b = comparable(single), comparable(distributed)
        for ra, rb in zip(a[0], b[0]):
            if ra != rb:
                print(f"differs: single {ra}\n         distributed {rb}")
    lost = lost_count(distributed["urls"], len(urls))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"workers={args.workers} urls={len(urls)} same_as_single={int(same)} lost={lost} "
          f"single_s={single_s:.1f} distributed_s={distributed_s:.1f}")


if __name__ == "__main__":
    main()
