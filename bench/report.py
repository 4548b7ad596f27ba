"""Report at scale: a synthetic 100k-URL result, the report written, then opened in headless Chromium.

    python bench/report.py [--urls 100000] [--thumb-share 0.55] [--out DIR] [--keep]

1. Thumbnails of real pages: renders pages of the Python documentation (python3-doc, served on
   127.0.0.1) at 1280x800 in Chromium, and measures the thumbnail cost (ms and bytes per page);
   those thumbnails are the pool the synthetic pages use (generated images when python3-doc is
   missing).
2. A synthetic result shaped like a scan of many hosts: content clusters with a long-tailed size
   distribution (a few of thousands of pages, many of 2-5), rule clusters across hosts (one nginx
   404 template on a thousand hosts, WAF challenges, login walls, 5xx ...), pages in no cluster,
   failed URLs with errors, long titles, CJK and hostile titles (``<img onerror>``,
   ``</script><script>``, ``javascript:`` URLs). Thumbnails for ``--thumb-share`` of the pages
   that have a status (as a crawl with WEBSIM_REPORT_DIR leaves them in ``report/thumbs``).
3. ``write_report`` timed (``write_s``), then the report opened from disk in a fresh headless
   Chromium page (new context: no cache): ``first_view_ms`` is the wall time from ``page.goto`` to
   the report's ready mark, set once the summary and the first clusters are painted. Also checked:
   no external request, the DOM size, a search and a filter, and that no hostile payload ran.

Last line exactly: ``urls=N write_s=X first_view_ms=Y report_mb=Z``.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser
from scrapy_websim.result.report.thumbs import make_thumbnail, thumbnail_stem
from scrapy_websim.result.report.writer import write_report

DOC_ROOTS = ("/usr/share/doc/python3-doc/html", "/usr/share/doc/python3.11/html", "/usr/share/doc/python3.12/html")
DOC_PAGES = ("index.html", "library/os.html", "library/json.html", "tutorial/index.html", "glossary.html",
             "library/index.html", "reference/datamodel.html", "library/asyncio.html", "genindex-A.html",
             "library/functions.html", "library/re.html", "howto/logging.html", "faq/general.html",
             "library/pathlib.html", "library/sqlite3.html", "using/cmdline.html")
HOSTILE_TITLES = (
    '<img src=x onerror="window.__pwned=1">',
    '</script><script>window.__pwned=2</script>',
    '<!-- <script>window.__pwned=3</script>',
    '"><svg onload="window.__pwned=4">',
    "\u202eevil\u202c title with bidi override",
)
ERRORS = ("net::ERR_CONNECTION_REFUSED", "timeout: no response in 10 s", "net::ERR_NAME_NOT_RESOLVED",
          "TLS: certificate has expired", "net::ERR_EMPTY_RESPONSE", "redirect loop (20 redirects)",
          "not a URL: <script>window.__pwned=5</script>")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def real_thumbnails(browser_path: str, pages: int):
    """Render python3-doc pages; returns (thumbnail bytes list, ms per thumbnail, PNG sizes)."""
    root = next((r for r in DOC_ROOTS if os.path.isdir(r)), None)
    if root is None:
        return [], 0.0
    from playwright.sync_api import sync_playwright

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    shots = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path, args=list(DEFAULT_ARGS))
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for name in DOC_PAGES[:pages]:
                if os.path.exists(os.path.join(root, name)):
                    page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/{name}")
                    shots.append(page.screenshot())
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    started = time.process_time()  # CPU time: what a crawl pays per page, whatever else runs on the machine
    thumbs = [make_thumbnail(s) for s in shots]
    ms = (time.process_time() - started) * 1000 / max(1, len(shots))
    return thumbs, ms


def generated_thumbnails(n: int):
    from PIL import Image, ImageDraw

    out = []
    rng = random.Random(7)
    for i in range(n):
        img = Image.new("RGB", (1280, 800), (245, 246, 248))
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, 1280, 70), fill=tuple(rng.randrange(40, 200) for _ in range(3)))
        for y in range(110, 780, 26):
            d.rectangle((80, y, 80 + rng.randrange(300, 1100), y + 12), fill=(90, 96, 110))
        buf = io.BytesIO()
        img.save(buf, "PNG")
        out.append(make_thumbnail(buf.getvalue()))
    return out


def _title(rng: random.Random, i: int) -> str:
    roll = rng.random()
    if roll < 0.01:
        return HOSTILE_TITLES[i % len(HOSTILE_TITLES)]
    if roll < 0.03:
        return ("A very long title that goes on and on " * 60)[: rng.randrange(300, 3000)]
    if roll < 0.06:
        return "数据中心维护通知 — 系统升级中 第%d页" % i
    if roll < 0.10:
        return ""
    words = ("Welcome", "Home", "Dashboard", "Products", "Article", "Docs", "Admin", "Status", "Index of /",
             "Blog", "Careers", "Pricing", "Support", "News", "API reference")
    return f"{rng.choice(words)} {rng.choice(words).lower()} — page {i}"


def _base_rows(n: int, rng: random.Random):
    """n pages with a response, on hosts with a long-tailed number of URLs each."""
    hosts = [f"host{h}.example{h % 7}.com" if h % 5 else f"10.{h // 250 % 250}.{h % 250}.{h % 9 + 1}"
             for h in range(max(50, n // 30))]
    weights = [1.0 / (k + 1) ** 0.8 for k in range(len(hosts))]
    host_of = rng.choices(range(len(hosts)), weights=weights, k=n)
    rows = []
    for i in range(n):
        host = hosts[host_of[i]]
        port = "" if i % 11 else f":{rng.choice((8080, 8443, 3000))}"
        scheme = "https" if i % 3 else "http"
        path = rng.choice(("/", "/login", "/admin/", "/index.php?id=%d" % i, "/docs/page-%d.html" % i,
                           "/api/v1/%d" % i))
        url = f"{scheme}://{host}{port}{path}"
        rows.append({
            "id": i + 1, "url": url, "normalized_url": url, "final_url": url, "redirect_chain": [url],
            "status_code": 200, "content_length": rng.randrange(500, 90000), "content_type": "text/html; charset=utf-8",
            "error": "", "title": _title(rng, i), "cluster_id": "", "is_canonical": True,
            "similarity_to_canonical": 0.0, "content_sim": 0.0, "structure_sim": 0.0, "visual_sim": 0.0,
            "behavior_sim": 0.0, "cluster_kind": "", "match_rule": "", "page_type": "unknown",
        })
    return rows


def _link_thumbnails(rows, pool, thumbs_dir: str, share: float, rng: random.Random) -> int:
    """Thumbnails for a share of the pages that got a response (a crawl makes one per rendered page)."""
    os.makedirs(thumbs_dir, exist_ok=True)
    originals = []
    for k, data in enumerate(pool):  # hard links to a few real thumbnails: the sizes of a real folder, fast to make
        originals.append(os.path.join(thumbs_dir, f"pool-{k}.webp.orig"))
        with open(originals[-1], "wb") as fh:
            fh.write(data)
    written = 0
    for r in rows:
        if r["status_code"] and "html" in r["content_type"] and rng.random() < share:
            target = os.path.join(thumbs_dir, thumbnail_stem(r["url"]) + ".webp")
            if not os.path.exists(target):
                try:
                    os.link(originals[r["id"] % len(pool)], target)
                except OSError:
                    shutil.copyfile(originals[r["id"] % len(pool)], target)
                written += 1
    for name in originals:
        os.remove(name)
    return written


def synthetic_result(n: int, thumb_share: float, pool, thumbs_dir: str, seed: int = 1):
    """(rows, clusters, meta) shaped like a scan of many hosts; writes thumbnails for a share of them."""
    rng = random.Random(seed)
    rows = _base_rows(n, rng)
    order = list(range(n))
    rng.shuffle(order)
    cursor = 0

    def take(k):
        nonlocal cursor
        part = order[cursor:cursor + k]
        cursor += len(part)
        return part

    clusters = []

    def make(cid, kind, members, status=200, title=None, rule=None, content_type=None):
        if not members:
            return
        canon = members[0]
        for j, m in enumerate(members):
            r = rows[m]
            r["cluster_id"], r["cluster_kind"] = cid, kind
            r["is_canonical"] = j == 0
            r["status_code"] = status if j or kind != "content" else 200
            if title is not None:
                r["title"] = title if rng.random() > 0.01 else HOSTILE_TITLES[j % len(HOSTILE_TITLES)]
            if content_type:
                r["content_type"] = content_type
            if j == 0:
                r["match_rule"] = "canonical"
                r.update(content_sim=1.0, structure_sim=1.0, visual_sim=1.0, behavior_sim=1.0,
                         similarity_to_canonical=1.0)
            elif kind == "content":
                r["match_rule"] = "rule1" if rng.random() < 0.85 else "rule2"
                sims = [round(rng.uniform(0.75, 1.0), 6), round(rng.uniform(0.85, 1.0), 6),
                        round(rng.uniform(0.8, 1.0), 6), round(rng.uniform(0.6, 1.0), 6)]
                r.update(content_sim=sims[0], structure_sim=sims[1], visual_sim=sims[2], behavior_sim=sims[3],
                         similarity_to_canonical=round(sum(sims[:3]) / 3, 6))
            else:
                r["match_rule"] = rule or kind
        clusters.append({"cluster_id": cid, "canonical_url": rows[canon]["url"],
                         "member_ids": sorted(rows[m]["id"] for m in members), "kind": kind})

    # content clusters: a long tail (share ~40% of the URLs)
    budget = int(n * 0.40)
    big = [5000, 2500, 1200, 800, 600, 400, 300, 250, 200]
    number = 0
    for size in big:
        size = min(size, max(2, n // 40))
        if budget <= 0:
            break
        number += 1
        make(f"cluster-{number:05d}", "content", take(min(size, budget)))
        budget -= size
    while budget > 1:
        size = min(budget, int(min(150, rng.paretovariate(1.6) + 1)))
        size = max(2, size)
        number += 1
        make(f"cluster-{number:05d}", "content", take(size))
        budget -= size
    # rule clusters across hosts (share ~20%)
    specs = [("E3", "errtpl", 404, "404 Not Found", 0.05, 12), ("E1", "err5xx", 502, "502 Bad Gateway", 0.02, 8),
             ("W1", "waf", 403, "Just a moment...", 0.03, 6), ("L1", "loginwall", 200, "Sign in", 0.04, 40),
             ("M1", "maint", 200, "Site under maintenance", 0.01, 10), ("T1", "thin", 200, "", 0.02, 60),
             ("R1", "redir", 200, None, 0.015, 300), ("U1", "urlcanon", 200, None, 0.015, 300)]
    for code, prefix, status, title, share, templates in specs:
        total = int(n * share)
        for t in range(templates):
            size = max(1, int(total * (0.5 ** (t + 1)))) if t < templates - 1 else max(1, total >> templates)
            make(f"{prefix}-{rng.getrandbits(64):016x}", code, take(size), status=status, title=title)
    # failed URLs (~8%)
    for m in take(int(n * 0.08)):
        r = rows[m]
        r.update(status_code=0, error=rng.choice(ERRORS), title="", content_type="", final_url="", content_length=0)
        if rng.random() < 0.05:
            r["url"] = "javascript:window.__pwned=6"
    # the rest: pages in no cluster, a few non-HTML
    for m in order[cursor:]:
        if rng.random() < 0.05:
            rows[m].update(content_type="application/json", title="")
        if rng.random() < 0.03:
            rows[m]["status_code"] = rng.choice((301, 401, 418))
    written = _link_thumbnails(rows, pool, thumbs_dir, thumb_share, rng)
    meta = {"total_urls": n, "eligible_html_urls": int(n * 0.6), "total_clusters": len(clusters),
            "sim_threshold": 0.85, "generated_at": "2026-01-01T00:00:00+00:00"}
    return rows, clusters, meta, written


def open_report(browser_path: str, index: str):
    """Open the report in a fresh headless Chromium page; timings and checks."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=list(DEFAULT_ARGS))
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        external = []
        page.on("request", lambda req: external.append(req.url) if not req.url.startswith("file://") else None)
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        started, started_epoch = time.perf_counter(), time.time()
        page.goto("file://" + os.path.abspath(index), wait_until="commit")
        page.wait_for_selector("html[data-ready='1']", state="attached", timeout=60000)
        out["observed_ms"] = (time.perf_counter() - started) * 1000
        # The report marks its first view (summary and first clusters painted) with performance.now(),
        # counted from the page's time origin: on the wall clock that is timeOrigin + mark, and the
        # first view took that minus the moment page.goto was called. (Polling for the mark from
        # Playwright adds the time the page then spends parsing the next data file.)
        origin, mark = page.evaluate("[performance.timeOrigin, window.WEBSIM_FIRST_VIEW_MS]")
        out["in_page_ms"] = mark
        out["first_view_ms"] = origin + mark - started_epoch * 1000
        out["cards"] = page.locator("article.card").count()
        page.wait_for_selector("html[data-loaded='1']", state="attached", timeout=120000)
        out["all_loaded_ms"] = (time.perf_counter() - started) * 1000
        out["dom_nodes"] = page.evaluate("document.getElementsByTagName('*').length")
        out["counts"] = [page.inner_text(f"#n-{tab}") for tab in ("clusters", "alone", "failed")]
        t = time.perf_counter()
        page.fill("#q", "page 4")
        page.wait_for_selector("#matched:has-text('match the filters')")
        out["search_ms"] = (time.perf_counter() - t) * 1000 - 150  # minus the input debounce
        t = time.perf_counter()
        page.select_option("#f-status", "4xx")
        page.wait_for_selector("#matched:has-text('match the filters')")
        out["filter_ms"] = (time.perf_counter() - t) * 1000
        out["pwned"] = page.evaluate("window.__pwned || 0")
        out["external"] = external
        out["errors"] = errors
        browser.close()
    return out


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _d, files in os.walk(path) for f in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--thumb-share", type=float, default=0.55,
                        help="share of pages with a response that have a thumbnail")
    parser.add_argument("--out", help="report folder (default: a temporary one, removed unless --keep)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    browser_path = find_browser()[0]
    pool, thumb_ms = real_thumbnails(browser_path, len(DOC_PAGES))
    if pool:
        print(f"thumbnails of {len(pool)} python3-doc pages (1280x800 PNG -> 320 px WebP q60): "
              f"{sum(map(len, pool)) / len(pool):.0f} bytes/page mean, {max(map(len, pool))} max, "
              f"{thumb_ms:.1f} ms CPU/page")
    else:
        pool = generated_thumbnails(16)
        print("python3-doc not installed: generated thumbnails")
    tmp = tempfile.mkdtemp(prefix="websim-report-bench-")
    out = args.out or os.path.join(tmp, "report")
    os.makedirs(out, exist_ok=True)
    t = time.perf_counter()
    rows, clusters, meta, n_thumbs = synthetic_result(args.urls, args.thumb_share, pool, os.path.join(out, "thumbs"))
    largest = max(len(c["member_ids"]) for c in clusters)
    print(f"synthetic result: {len(rows)} URLs, {len(clusters)} clusters (largest {largest}), "
          f"{n_thumbs} thumbnails ({time.perf_counter() - t:.1f} s)")
    t, cpu = time.perf_counter(), time.process_time()
    info = write_report(out, rows, clusters, meta, source="synthetic-100k.json")
    write_s, write_cpu = time.perf_counter() - t, time.process_time() - cpu
    data_mb = dir_bytes(os.path.join(out, "data")) / 1e6
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"write {write_s:.2f} s ({write_cpu:.2f} s CPU)")
    print(f"report: {info.path}, data {data_mb:.1f} MB in {len(os.listdir(os.path.join(out, 'data')))} files, "
          f"thumbnails {dir_bytes(os.path.join(out, 'thumbs')) / 1e6:.1f} MB")
    view = open_report(browser_path, info.path)
    print(f"browser: first view {view['first_view_ms']:.0f} ms from page.goto (in-page {view['in_page_ms']:.0f} ms "
          f"from the time origin, seen by Playwright's polling after {view['observed_ms']:.0f} ms, "
          f"{view['cards']} cluster cards), all data {view['all_loaded_ms']:.0f} ms, DOM {view['dom_nodes']} elements, "
          f"search {view['search_ms']:.0f} ms, filter {view['filter_ms']:.0f} ms, "
          f"external requests {len(view['external'])}, script errors {len(view['errors'])}, "
          f"hostile payload ran: {bool(view['pwned'])}")
    clusters_n = len(clusters)
    alone_n = sum(1 for r in rows if not r["cluster_id"] and not r["error"])
    failed_n = sum(1 for r in rows if r["error"])
    expected = [f"{clusters_n:,}", f"{alone_n:,}", f"{failed_n:,}"]
    if view["counts"] != expected:  # the counts come from the loaded rows: every data file arrived
        print(f"FAILED: counts {view['counts']} != {expected}", file=sys.stderr)
        return 1
    if view["external"] or view["errors"] or view["pwned"]:
        print("FAILED:", view["external"][:5], view["errors"][:5], file=sys.stderr)
        return 1
    report_mb = dir_bytes(out) / 1e6
    if not args.keep and not args.out:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"urls={len(rows)} write_s={write_s:.2f} first_view_ms={view['first_view_ms']:.0f} report_mb={report_mb:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
