"""Crawl throughput yardstick: websim against a bare scrapy-playwright crawl, on 127.0.0.1 only.

    python bench/crawl.py [--pages 240] [--rounds 3] [--hosts one|mixed] [--in-flight 4]
                          [--equal] [--keep DIR] [--only websim|bare]

A few hundred real pages of several Debian documentation sets (python3-doc, postgresql-doc-15,
apache2-doc, git-doc; the bench installs missing ones with apt when run as root) are served by a
real nginx on a free port of 127.0.0.1. In each round, alternating which goes first, the same URL
list is crawled by

* **websim**: ``python -m scrapy_websim.cli -l urls.txt -o out.jsonl`` at its defaults, as a user
  runs it (no ``--per-host``, its own pages in flight). With ``--equal``, websim gets the bare
  crawl's pages in flight and ``--per-host`` as many (the equalised comparison);
* **bare**: ``bench/bare_crawl.py`` — Scrapy + scrapy-playwright, ``goto`` (load), a viewport PNG
  screenshot and the HTML in the item; same browser, launch flags and viewport; ``--in-flight``
  pages in flight (4 by default) and no per-host limit.

``--hosts one`` (default): every page is on one host, 127.0.0.1 (a site crawl, a sitemap).
``--hosts mixed``: the same pages on 10 hosts (127.0.0.1 to 127.0.0.10, one nginx listening on
each), 80 % of them on 2 hosts (40 % each) and 2.5 % on each of the 8 others, in a shuffled but
fixed order (an inventory where a few hosts hold most URLs).

Figures, per crawl:

* ``pps``: pages per second from the first to the last listed page nginx served to that crawl
  (nginx's ``$msec`` access log; the pages' missing stylesheets are 404 pages and do not count),
  which is the crawl's steady rate without interpreter and browser start-up;
* CPU seconds per page of the whole process tree (the crawl process, Playwright's node driver and
  every Chromium process), from per-process samples every 0.2 s, split by process kind, or from
  ``wait4``'s rusage of the reaped tree when that is larger (Chromium's processes are not all
  reaped through the crawl process, and a sample misses a process shorter than 0.2 s);
* for websim, from its stats (log): the share of the pages' render time (page opened to response)
  spent in the stable-page wait, the pages captured early (provably done) and the most pages of
  one host it had in flight;
* the busiest second of any host: the most listed pages nginx sent one host within one second.

The machine may be shared: the ratio is taken per round (the two crawls of a round run back to
back) and the median over rounds is printed. Last line, exactly:
``websim_pps=X bare_pps=Y ratio=R websim_cpu_per_page=A bare_cpu_per_page=B``
(medians over rounds; ratio = websim_pps / bare_pps).
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Dict, List
from urllib.parse import urlsplit

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.crawler.addon import max_pages_in_flight  # noqa: E402
from scrapy_websim.testing.servers import nginx_server  # noqa: E402

DOCS = {  # name -> (apt package, glob of pages, share of the list)
    "python": ("python3-doc", "/usr/share/doc/python3.11/html/library/*.html", 0.35),
    "postgresql": ("postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html/*.html", 0.30),
    "apache": ("apache2-doc", "/usr/share/doc/apache2-doc/manual/en/mod/*.html", 0.20),
    "git": ("git-doc", "/usr/share/doc/git-doc/git-*.html", 0.15),
}


def ensure_docs() -> None:
    missing = [pkg for pkg, pattern, _ in DOCS.values() if not glob.glob(pattern)]
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {' '.join(missing)} with apt-get", flush=True)
        subprocess.run(["flock", "/tmp/apt.lock", "apt-get", "install", "-y", "-qq", "--no-install-recommends",
                        *missing], check=False, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def pick_pages(total: int) -> Dict[str, List[str]]:
    """name -> absolute paths: every n-th page of each set (sorted, so the choice is fixed)."""
    chosen: Dict[str, List[str]] = {}
    for name, (_pkg, pattern, share) in DOCS.items():
        files = sorted(glob.glob(pattern))
        want = max(1, round(total * share))
        if not files:
            continue
        step = max(1, len(files) // want)
        chosen[name] = files[::step][:want]
    return chosen


#: The pages' stylesheets, scripts and images (``../_static/``, ``../../style/`` resolve to the
#: server's root), served with their real types, so pages render as they do on the real sites.
STATIC = {"_static": "/usr/share/doc/python3.11/html/_static", "_images": "/usr/share/doc/python3.11/html/_images",
          "style": "/usr/share/doc/apache2-doc/manual/style", "images": "/usr/share/doc/apache2-doc/manual/images"}
TYPES = "types { text/css css; text/javascript js; image/png png; image/gif gif; image/jpeg jpg; image/svg+xml svg; }"


def static_locations() -> str:
    return "".join(f"location /{url}/ {{ alias {path}/; {TYPES} }}\n"
                   for url, path in STATIC.items() if os.path.isdir(path))


class TreeSampler(threading.Thread):
    """CPU seconds per process kind (python / node / chromium) of a process tree, sampled."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.interval = interval
        self.last: Dict[int, tuple] = {}  # pid -> (kind, cpu seconds)
        self.stop = threading.Event()

    @staticmethod
    def kind(p: psutil.Process) -> str:
        name = (p.name() or "").lower()
        if "node" in name:
            return "node"
        if "chrom" in name or "chrome" in name:
            return "chromium"
        return "python" if "python" in name else "other"

    def sample(self) -> None:
        try:
            procs = [self.root] + self.root.children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for p in procs:
            try:
                t = p.cpu_times()
                kind = self.last.get(p.pid, (None,))[0] or self.kind(p)
                self.last[p.pid] = (kind, t.user + t.system)
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                pass

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)

    def by_kind(self) -> Dict[str, float]:
        out: Dict[str, float] = {}
        for kind, cpu in self.last.values():
            out[kind] = out.get(kind, 0.0) + cpu
        return out


def served(log_path: str, start: float, end: float, paths: frozenset) -> List[tuple]:
    """``(time, host)`` of the listed pages (``paths``) nginx served between ``start`` and ``end``
    (epoch seconds), sorted. Only those count: the pages' missing stylesheets and scripts are 404
    pages, HTML too."""
    times = []
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 4 and parts[1] == "200" and parts[2] in paths:
                t = float(parts[0])
                if start <= t <= end:
                    times.append((t, parts[3]))
    return sorted(times)


def busiest_second(times: List[tuple]) -> int:
    """The most listed pages one host was sent within any one second."""
    best = 0
    for host in {h for _t, h in times}:
        mine = [t for t, h in times if h == host]
        lo = 0
        for hi, t in enumerate(mine):
            while mine[lo] < t - 1.0:
                lo += 1
            best = max(best, hi - lo + 1)
    return best


def run_one(name: str, cmd: List[str], workdir: str, access_log: str, paths: frozenset) -> Dict[str, float]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = open(os.path.join(workdir, f"{name}.log"), "w", encoding="utf-8")
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _pid, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop.set()
    sampler.join()
    log.close()
    end = time.time()
    if proc.returncode != 0:
        sys.exit(f"{name} exited {proc.returncode}; see {log.name}")
    n_pages = len(paths)
    times = served(access_log, start, end, paths)
    if len(times) < n_pages:
        sys.exit(f"{name}: nginx served {len(times)} HTML pages, expected {n_pages}; see {log.name}")
    pps = (len(times) - 1) / max(1e-6, times[-1][0] - times[0][0])
    kinds = sampler.by_kind()
    # Chromium's processes are not all reaped through the crawl process (rusage then misses them)
    # and the samples miss the last 0.2 s and processes shorter than that: take the larger.
    cpu = max(rusage.ru_utime + rusage.ru_stime, sum(kinds.values()))
    res = {"pps": pps, "cpu_per_page": cpu / n_pages, "wall": end - start, "busiest": busiest_second(times)}
    res.update({f"{k}_per_page": v / n_pages for k, v in kinds.items()})
    split = " ".join(f"{k}={v / n_pages:.3f}" for k, v in sorted(kinds.items()))
    extra = ""
    if name == "websim":
        stats = websim_stats(log.name)
        render = stats.get("websim/render_seconds", 0.0)
        if render:
            res["stable_share"] = stats.get("websim/stable_seconds", 0.0) / render
            extra = (f"  stable wait {100 * res['stable_share']:.0f} % of render time, "
                     f"{stats.get('websim/stable_early', 0):.0f} pages done early")
        if stats.get("websim/per_host_max"):
            extra += f", per host at most {stats['websim/per_host_max']:.0f} in flight"
    print(f"  {name:7s} {pps:5.2f} pages/s  cpu/page {cpu / n_pages:.3f} s ({split})  wall {end - start:.1f} s  "
          f"load {os.getloadavg()[0]:.1f}  busiest second {res['busiest']} pages of one host{extra}", flush=True)
    return res


#: ``--hosts mixed``: the hosts (all loopback) and each one's share of the list.
MIXED_HOSTS = [("127.0.0.1", 0.40), ("127.0.0.2", 0.40)] + [(f"127.0.0.{i}", 0.025) for i in range(3, 11)]


def url_list(base: str, pages: Dict[str, List[str]], hosts: str) -> List[str]:
    """The crawl's URLs: every page on 127.0.0.1, or spread over :data:`MIXED_HOSTS`."""
    paths = [f"/{name}/{os.path.basename(p)}" for name, files in pages.items() for p in files]
    if hosts == "one":
        return [base + path for path in paths]
    port = urlsplit(base).port
    rng = random.Random(0)
    rng.shuffle(paths)
    counts = [round(len(paths) * share) for _host, share in MIXED_HOSTS]
    counts[0] += len(paths) - sum(counts)
    urls, start = [], 0
    for (host, _share), count in zip(MIXED_HOSTS, counts):
        urls += [f"http://{host}:{port}{path}" for path in paths[start:start + count]]
        start += count
    rng.shuffle(urls)
    return urls


_STAT = re.compile(r"'(websim/[a-z_]+)': ([0-9.]+)")


def websim_stats(log_path: str) -> Dict[str, float]:
    """The ``websim/*`` numbers of the stats Scrapy dumps at the end of the crawl's log."""
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        return {m.group(1): float(m.group(2)) for m in _STAT.finditer(fh.read())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=240)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hosts", choices=("one", "mixed"), default="one",
                    help="all pages on one host, or on 10 hosts with 80 %% on 2 of them")
    ap.add_argument("--keep", help="keep URL lists, outputs and logs in this directory")
    ap.add_argument("--in-flight", type=int, default=4, help="pages in flight of the bare crawl (default 4)")
    ap.add_argument("--equal", action="store_true",
                    help="give websim the bare crawl's pages in flight and --per-host as many")
    ap.add_argument("--websim-args", default="",
                    help="extra arguments for the websim crawl, e.g. '--per-host 2' (measures a choice)")
    ap.add_argument("--only", choices=("websim", "bare"), help="run one of the two crawls (no ratio)")
    args = ap.parse_args()
    ensure_docs()
    pages = pick_pages(args.pages)
    if sum(len(v) for v in pages.values()) < 20:
        sys.exit("too few documentation pages found; install python3-doc postgresql-doc-15 apache2-doc git-doc")
    workdir = args.keep or tempfile.mkdtemp(prefix="websim-bench-crawl-")
    os.makedirs(workdir, exist_ok=True)
    access_log = os.path.join(workdir, "access.log")
    open(access_log, "w").close()
    os.chmod(access_log, 0o666)
    os.chmod(workdir, 0o755)
    aliases = "".join(
        f"location /{name}/ {{ alias {os.path.dirname(paths[0])}/; }}\n" for name, paths in pages.items())
    locations = (f"access_log {access_log} websim_bench;\n" + aliases + static_locations())
    in_flight = args.in_flight
    websim_extra = shlex.split(args.websim_args)
    if args.equal:
        websim_extra += ["--per-host", str(in_flight), "-s", f"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT={in_flight}"]
    addresses = [host for host, _share in MIXED_HOSTS] if args.hosts == "mixed" else ["127.0.0.1"]
    with nginx_server(locations=locations, http='log_format websim_bench "$msec $status $uri $host";',
                      addresses=addresses) as base:
        urls = url_list(base, pages, args.hosts)
        listing = os.path.join(workdir, "urls.txt")
        with open(listing, "w", encoding="utf-8") as fh:
            fh.write("\n".join(urls) + "\n")
        n = len(urls)
        paths = frozenset(urlsplit(u).path for u in urls)
        per_host = Counter(urlsplit(u).hostname for u in urls)
        websim_in_flight = in_flight if args.equal else max_pages_in_flight()
        print(f"{n} pages ({', '.join(f'{k} {len(v)}' for k, v in pages.items())}) on {len(per_host)} host(s) "
              f"({' '.join(str(c) for _h, c in per_host.most_common())} pages); bare: {in_flight} pages in flight; "
              f"websim: {websim_in_flight} pages in flight, {' '.join(websim_extra) or 'its defaults'}; "
              f"{os.cpu_count()} cores", flush=True)
        crawls = {
            "websim": lambda r: [sys.executable, "-m", "scrapy_websim.cli", "-l", listing, "-O",
                                 os.path.join(workdir, f"websim{r}.jsonl"), "--loglevel", "INFO", *websim_extra],
            "bare": lambda r: [sys.executable, os.path.join(REPO, "bench", "bare_crawl.py"), listing,
                               os.path.join(workdir, f"bare{r}.jsonl"), str(in_flight)],
        }
        results: Dict[str, List[Dict[str, float]]] = {"websim": [], "bare": []}
        for r in range(args.rounds):
            print(f"round {r + 1}", flush=True)
            order = ("websim", "bare") if r % 2 == 0 else ("bare", "websim")
            order = tuple(name for name in order if args.only in (None, name))
            for name in order:
                results[name].append(run_one(name, crawls[name](r), workdir, access_log, paths))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)

    summary(results, args.only, in_flight)


def summary(results: Dict[str, List[Dict[str, float]]], only: str, in_flight: int) -> None:
    def med(name: str, key: str) -> float:
        return statistics.median(r.get(key, 0.0) for r in results[name])

    if only:
        print(f"{only}_pps={med(only, 'pps'):.2f} {only}_cpu_per_page={med(only, 'cpu_per_page'):.3f} "
              f"in_flight={in_flight}")
        return
    ratios = [w["pps"] / b["pps"] for w, b in zip(results["websim"], results["bare"])]
    for key in ("python_per_page", "node_per_page", "chromium_per_page"):
        print(f"median {key}: websim {med('websim', key):.3f} s, bare {med('bare', key):.3f} s")
    print(f"per-round ratios: {' '.join(f'{x:.2f}' for x in ratios)}")
    print(f"websim_pps={med('websim', 'pps'):.2f} bare_pps={med('bare', 'pps'):.2f} "
          f"ratio={statistics.median(ratios):.2f} websim_cpu_per_page={med('websim', 'cpu_per_page'):.3f} "
          f"bare_cpu_per_page={med('bare', 'cpu_per_page'):.3f}")


if __name__ == "__main__":
    main()
