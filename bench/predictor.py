"""Benchmark of the URL duplicate predictor and its spider middleware.

A generated forum/shop site is served on 127.0.0.1: list pages link to topic pages
(``/view?topic=T``), product pages (``/item/T``) and page 2 of some topics
(``/view?topic=T&start=20``, different content), and to parameter variants that show the same
content: ``&sid=<session>``, ``&start=0`` and ``?utm_source=listP``. About half the URLs are such
variants. The site is crawled twice with ``scrapy crawl websim -a follow=1`` (real Chromium),
without and with ``WEBSIM_PREDICT_ENABLED``; then the pure predictor is timed on a synthetic
100k-URL stream.

    python bench/predictor.py [--topics 400] [--timing-urls 100000] [--no-crawl]

``unique_lost`` counts distinct contents of the site that the crawl with the middleware never
rendered; ``wrong`` counts dropped URLs whose content differs from the URL they were predicted to
duplicate. The last line reads
``urls=<n> rendered_without=<n> rendered_with=<n> unique_lost=<n> update_ms=<x> query_ms=<x>``.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from scrapy_websim.testing.crawl import scrapy_env  # noqa: E402

WORDS = (
    "river bread comet bee stone forest market engine garden harbor lantern meadow orbit pepper "
    "quartz saddle timber velvet willow yarn anchor basket candle desert ember falcon glacier "
    "hammer island jungle kettle ladder magnet needle oyster pillow quiver ribbon shadow thunder "
    "umbrella violet wagon zephyr atlas beacon cinder dune echo fern grove haze iris jade kelp"
).split()
PER_LIST = 10


class Site:
    """The generated site: URL -> (content key, HTML). Deterministic in (topics, seed)."""

    def __init__(self, topics: int = 400, seed: int = 1) -> None:
        self.topics = topics
        self.seed = seed
        self.lists = (topics + PER_LIST - 1) // PER_LIST

    # -- content
    def body(self, key: str) -> str:
        rng = random.Random(f"{self.seed}:{key}")
        paras = []
        for _ in range(4):
            paras.append(" ".join(rng.choice(WORDS) + str(rng.randrange(100)) for _ in range(45)))
        return "".join(f"<p>{html.escape(p)}</p>\n" for p in paras)

    def sid(self, page: int, topic: int) -> str:
        return hashlib.md5(f"{self.seed}:{page}:{topic}".encode()).hexdigest()[:16]

    def links_of_list(self, page: int) -> List[str]:
        links = []
        if page < self.lists:
            links.append(f"/list?page={page + 1}")
        for t in range((page - 1) * PER_LIST, min(page * PER_LIST, self.topics)):
            links += [
                f"/view?topic={t}",
                f"/item/{t}",
                f"/view?topic={t}&sid={self.sid(page, t)}",
                f"/view?topic={t}&start=0",
                f"/item/{t}?utm_source=list{page}",
            ]
            if t % 5 == 0:
                links.append(f"/view?topic={t}&start=20")
        return links

    def all_paths(self) -> List[str]:
        paths = ["/"]
        for page in range(1, self.lists + 1):
            paths.append(f"/list?page={page}")
            paths += [p for p in self.links_of_list(page) if not p.startswith("/list")]
        return paths

    def content_key(self, path_qs: str) -> Optional[str]:
        """What the page shows (None: not a page of the site)."""
        parts = urlsplit(path_qs)
        q = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if parts.path == "/":
            return "home"
        if parts.path == "/list" and q.get("page", "").isdigit() and 1 <= int(q["page"]) <= self.lists:
            return f"list{int(q['page'])}"
        if parts.path == "/view" and q.get("topic", "").isdigit() and int(q["topic"]) < self.topics:
            t = int(q["topic"])
            if q.get("start", "0") == "20" and t % 5 == 0:
                return f"view{t}p2"
            return f"view{t}"
        if parts.path.startswith("/item/") and parts.path[6:].isdigit() and int(parts.path[6:]) < self.topics:
            return f"item{int(parts.path[6:])}"
        return None

    def render(self, path_qs: str) -> Optional[str]:
        key = self.content_key(path_qs)
        if key is None:
            return None
        if key == "home":
            links, main = ["/list?page=1"], "<p>Welcome to the generated forum and shop.</p>"
        elif key.startswith("list"):
            page = int(key[4:])
            links, main = self.links_of_list(page), f"<p>Listing page {page}.</p>"
        else:
            links, main = [], self.body(key)
        nav = "".join(f'<li><a href="{html.escape(h)}">{html.escape(h)}</a></li>' for h in links)
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Bench site {k}</title></head><body>"
            "<header><nav><a href='/'>Home</a> <a href='/list?page=1'>Topics</a></nav></header>"
            "<main><article><h1>{k}</h1>{m}<ul>{n}</ul></article></main>"
            "<footer>Generated site for the scrapy-websim predictor benchmark. All rights reserved.</footer>"
            "</body></html>"
        ).format(k=html.escape(key), m=main, n=nav)


def serve(site: Site) -> Tuple[ThreadingHTTPServer, str]:
    """Serve ``site`` on a free port of 127.0.0.1; returns (server, base URL)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            page = site.render(self.path)
            body = (page or "<html><body><h1>Not found</h1></body></html>").encode("utf-8")
            self.send_response(200 if page else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def crawl(base: str, workdir: str, name: str, settings: Dict[str, object], timeout: float = 3600
          ) -> Tuple[List[dict], str]:
    """``scrapy crawl websim -a follow=1`` from ``base``/ in a subprocess: (url records, log)."""
    listing = os.path.join(workdir, f"{name}.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write(base + "/\n")
    out = os.path.join(workdir, f"{name}.jsonl")
    # the features file holds every record (rendered, predicted_duplicate_of) whatever the feed format
    cmd = [sys.executable, "-m", "scrapy", "crawl", "websim", "-a", f"urls={listing}", "-a", "follow=1",
           "-s", f"WEBSIM_FEATURES_FILE={out}", "-s", "LOG_LEVEL=INFO"]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={json.dumps(value) if isinstance(value, dict) else value}"]
    env = scrapy_env(workdir)  # this checkout's package and its scrapy list command first
    proc = subprocess.run(cmd, cwd=os.path.join(REPO, "example_project"), env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl {name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    with open(out, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
        return [row for row in rows if row.get("kind") != "websim-features"], proc.stderr  # no header line


def path_qs(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def judge(site: Site, records: List[dict]) -> Dict[str, int]:
    """rendered, dropped, unique_lost (contents never rendered) and wrong (bad predictions)."""
    rendered_keys = set()
    rendered = dropped = wrong = 0
    for r in records:
        key = site.content_key(path_qs(r["url"]))
        if r.get("predicted_duplicate_of"):
            dropped += 1
            if site.content_key(path_qs(r["predicted_duplicate_of"])) != key:
                wrong += 1
        elif r.get("rendered"):
            rendered += 1
            rendered_keys.add(key)
    all_keys = {site.content_key(p) for p in site.all_paths()}
    return {"records": len(records), "rendered": rendered, "dropped": dropped,
            "unique_lost": len(all_keys - rendered_keys), "wrong": wrong}


def predictor_timing(n_urls: int, seed: int = 3) -> Tuple[float, float]:
    """Mean update and query milliseconds per URL on a synthetic stream of ``n_urls`` pages."""
    from scrapy_websim.core.urls.predictor import DupePredictor

    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(20000)]

    def text(key: int) -> str:
        r = random.Random(key)
        return "\n".join(" ".join(r.choice(vocab) for _ in range(15)) for _ in range(12))

    def url(i: int) -> Tuple[str, int]:
        kind = i % 4
        t = i // 4
        if kind == 0:
            return f"http://big.test/view?topic={t}", t
        if kind == 1:
            return f"http://big.test/view?topic={t}&sid={rng.getrandbits(48):x}", t
        if kind == 2:
            return f"http://big.test/item/{t}?utm_source=l{t % 50}&ref=x", 10**9 + t
        return f"http://big.test/c{t % 200}/p{t}", 2 * 10**9 + t

    stream = [url(i) for i in range(n_urls)]
    texts = {}
    dp = DupePredictor(texts_sample=[text(k) for _, k in stream[:300]])
    update_s = query_s = 0.0
    queries = 0
    for i, (u, k) in enumerate(stream):
        body = texts.pop(k, None) or text(k)
        if i % 4 == 0:
            texts[k] = body  # the variant that follows reuses it
        t0 = time.perf_counter()
        dp.update_model(u, body)
        update_s += time.perf_counter() - t0
        if i % 10 == 0:
            probe = f"http://big.test/view?topic={i // 4}&sid=q{i}"
            t0 = time.perf_counter()
            dp.get_dupe_prob(probe)
            query_s += time.perf_counter() - t0
            queries += 1
    return update_s / n_urls * 1000, query_s / max(queries, 1) * 1000


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=400, help="topics of the generated site (default 400)")
    ap.add_argument("--timing-urls", type=int, default=100_000, help="URLs in the timing stream")
    ap.add_argument("--no-crawl", action="store_true", help="skip the two real crawls")
    args = ap.parse_args(argv)

    site = Site(args.topics)
    n = len(site.all_paths())
    without = with_ = {"rendered": -1, "unique_lost": -1}
    if not args.no_crawl:
        httpd, base = serve(site)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                common = {"WEBSIM_HTTP_TIMEOUT": 10, "WEBSIM_PAGE_TIMEOUT": 20}
                t0 = time.perf_counter()
                without = judge(site, crawl(base, tmp, "without", common)[0])
                print(f"without middleware: {without} in {time.perf_counter() - t0:.0f} s", flush=True)
                t0 = time.perf_counter()
                with_ = judge(site, crawl(base, tmp, "with", dict(common, WEBSIM_PREDICT_ENABLED=True,
                                                                     WEBSIM_PARAMS={"predict.seed": 1}))[0])
                print(f"with middleware:    {with_} in {time.perf_counter() - t0:.0f} s", flush=True)
        finally:
            httpd.shutdown()
            httpd.server_close()
        if without["rendered"] > 0:
            saved = 1 - with_["rendered"] / without["rendered"]
            print(f"renders saved: {saved:.1%} (target >= 40%), wrong predictions: {with_['wrong']}")
    update_ms, query_ms = predictor_timing(args.timing_urls)
    print(f"predictor at {args.timing_urls} URLs: update {update_ms:.3f} ms, query {query_ms:.3f} ms "
          "(targets <= 5 ms, <= 1 ms)")
    print(f"urls={n} rendered_without={without['rendered']} rendered_with={with_['rendered']} "
          f"unique_lost={with_['unique_lost']} update_ms={update_ms:.3f} query_ms={query_ms:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
