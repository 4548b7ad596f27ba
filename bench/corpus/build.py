"""Build the labelled duplicate corpus: real Debian documentation served by a private nginx,
plus noisy duplicates, rendered by real Chromium, reduced to features.

    python bench/corpus/build.py [--pages 80] [--out tests/data/corpus/features.jsonl.gz]
                                 [--html-dir /tmp/websim-corpus-html] [--seed 1]

* Base pages: every k-th HTML page of python3-doc (/usr/share/doc/python3.11/html), all one Sphinx
  template with different content. Any two different base pages are a NON-duplicate pair.
* Duplicates of a base page ``p`` (same ``group``):
  - ``track``: ``/p?utm_source=...&utm_medium=...&fbclid=...`` (tracking parameters, same file);
  - ``redirect``: ``/r/p`` answered by nginx with a 301 to ``/p``;
  - ``index``: ``dir/`` vs ``dir/index.html`` (for index pages);
  - ``noisy1``/``noisy2``: a copy with per-request noise: a rotating promo banner at the top of
    the viewport, a "last updated" timestamp and a view counter inside the main content, a CSRF
    token, a random "recommended" block of 5 links to other pages, a footer timestamp;
  - ``js``: a copy whose body is written by JavaScript from a JSON string at load time.
* nginx runs from a temp prefix on a free 127.0.0.1 port with its own config; the system nginx
  is never touched. Chromium: /usr/bin/chromium through Playwright, 1280x800, PNG viewport shot.
* Output: one JSON line per rendered page: ``PageRecord.to_json()`` plus ``group`` and
  ``variant``. ``--html-dir`` also keeps the rendered HTML for ``bench/features.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import html as htmlmod
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import lxml.html

from scrapy_websim.core.fingerprints import simhash64
from scrapy_websim.core.page.dom import dom_features
from scrapy_websim.core.page.text import extract_main_text
from scrapy_websim.core.page.visual import phash_png
from scrapy_websim.core.types import PageRecord

DOCROOT = "/usr/share/doc/python3.11/html"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]

NGINX_CONF = """
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path {prefix}/tmp; proxy_temp_path {prefix}/tmp;
    fastcgi_temp_path {prefix}/tmp; uwsgi_temp_path {prefix}/tmp; scgi_temp_path {prefix}/tmp;
    server {{
        listen 127.0.0.1:{port};
        root {docroot};
        index index.html;
        location /v/ {{ alias {variants}/; }}
        location /r/ {{ rewrite ^/r/(.*)$ /$1 permanent; }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pick_pages(n: int):
    cands = []
    for dirpath, dirnames, filenames in os.walk(DOCROOT):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("_"))
        for f in sorted(filenames):
            if not f.endswith(".html") or f.startswith("genindex") or f in ("search.html",):
                continue
            path = os.path.join(dirpath, f)
            size = os.path.getsize(path)
            if 8_000 <= size <= 250_000:
                cands.append(os.path.relpath(path, DOCROOT))
    step = max(1, len(cands) // n)
    return cands[::step][:n], cands


WORDS = ("sale offer new spring summer discount members free shipping today limited deal "
         "webinar release launch conference tickets survey feedback").split()


def noisy_copy(src_html: str, rel: str, rng: random.Random, all_pages) -> str:
    base = f'<base href="/{rel}">'
    out = src_html.replace("<head>", "<head>" + base, 1)
    colour = "#%06x" % rng.randrange(1 << 24)
    banner = (f'<div class="promo-banner" style="background:{colour};color:#fff;padding:14px;'
              f'font-size:20px">{" ".join(rng.choice(WORDS) for _ in range(8)).title()} '
              f'- {rng.randrange(5, 60)}% off until {rng.randrange(1, 28)}/{rng.randrange(1, 12)}</div>')
    ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(rng.randrange(1_500_000_000, 1_800_000_000)))
    inside = (f'<p class="last-updated">Last updated: {ts}. Viewed {rng.randrange(1000, 99999)} times.</p>'
              f'<form><input type="hidden" name="csrf" value="{rng.getrandbits(128):032x}"></form>')
    recs = rng.sample(all_pages, 5)
    aside = ('<aside class="recommended"><h3>Recommended</h3><ul>'
             + "".join(f'<li><a href="/{p}">{htmlmod.escape(os.path.basename(p)[:-5])}</a></li>' for p in recs)
             + "</ul></aside>")
    foot = f'<div class="generated">Generated {ts} in {rng.randrange(5, 900)} ms</div>'
    out = re.sub(r"(<body[^>]*>)", r"\1" + banner.replace("\\", "\\\\"), out, count=1)
    out = re.sub(r'(<div class="body" role="main">)', lambda m: m.group(1) + inside, out, count=1)
    out = out.replace("</body>", aside + foot + "</body>", 1)
    return out


def js_copy(src_html: str, rel: str) -> str:
    m = re.search(r"<body[^>]*>(.*)</body>", src_html, re.S)
    body = m.group(1) if m else ""
    body = re.sub(r"<script\b.*?</script>", "", body, flags=re.S)
    head = src_html[: m.start()] if m else src_html
    head = head.replace("<head>", f'<head><base href="/{rel}">', 1)
    return (head + "<body><script>document.addEventListener('DOMContentLoaded',function(){"
            "document.body.insertAdjacentHTML('afterbegin'," + json.dumps(body).replace("</", "<\\/")
            + ");});</script></body></html>")


def make_urls(port: int, pages, all_pages, variants_dir: str, rng: random.Random):
    root = f"http://127.0.0.1:{port}"
    urls = []  # (url, group, variant)
    for i, rel in enumerate(pages):
        urls.append((f"{root}/{rel}", i, "base"))
        urls.append((f"{root}/{rel}?utm_source=newsletter&utm_medium=email&fbclid=x{i}", i, "track"))
        if rel.endswith("/index.html"):
            urls.append((f"{root}/{rel[: -len('index.html')]}", i, "index"))
        if i % 3 == 0:
            urls.append((f"{root}/r/{rel}", i, "redirect"))
        src = open(os.path.join(DOCROOT, rel), encoding="utf-8", errors="replace").read()
        for k in (1, 2):
            name = f"noisy{k}"
            dst = os.path.join(variants_dir, name, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w", encoding="utf-8") as fh:
                fh.write(noisy_copy(src, rel, rng, all_pages))
            urls.append((f"{root}/v/{name}/{rel}", i, name))
        if i % 3 == 1:
            dst = os.path.join(variants_dir, "js", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w", encoding="utf-8") as fh:
                fh.write(js_copy(src, rel))
            urls.append((f"{root}/v/js/{rel}", i, "js"))
    return urls


def features(rec: PageRecord, html: str, png: bytes) -> None:
    from scrapy_websim.core.page.lcs import tag_sequence

    doc = lxml.html.fromstring(html)
    text = extract_main_text(doc)
    rec.text_len = len(text)
    rec.simhash = simhash64(text)
    for key, value in dom_features(doc).items():
        setattr(rec, key, value)
    rec.tag_seq = tag_sequence(doc)
    rec.phash = phash_png(png)
    rec.html_len = len(html.encode("utf-8"))


async def render_all(urls, html_dir, concurrency=2):
    from playwright.async_api import async_playwright

    records = [None] * len(urls)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        queue = list(enumerate(urls))

        async def worker():
            while queue:
                idx, (url, group, variant) = queue.pop(0)
                page = await context.new_page()
                try:
                    resp = await page.goto(url, wait_until="load", timeout=30000)
                    await page.wait_for_timeout(100)
                    html = await page.content()
                    png = await page.screenshot(type="png")
                    timings = await page.evaluate(
                        "() => { const n = performance.getEntriesByType('navigation')[0];"
                        " return [n.responseStart, n.domContentLoadedEventEnd, n.loadEventEnd]; }")
                    rec = PageRecord(id=idx, url=url, final_url=page.url, status_code=resp.status if resp else 0,
                                     title=await page.title(), rendered=True, timings=[round(t, 1) for t in timings])
                    features(rec, html, png)
                    row = rec.to_json()
                    row["group"] = group
                    row["variant"] = variant
                    records[idx] = row
                    if html_dir:
                        with open(os.path.join(html_dir, f"{idx:04d}.html"), "w", encoding="utf-8") as fh:
                            fh.write(html)
                finally:
                    await page.close()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        await browser.close()
    return [r for r in records if r is not None]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--out", default="tests/data/corpus/features.jsonl.gz")
    ap.add_argument("--html-dir", default="/tmp/websim-corpus-html")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pages, all_pages = pick_pages(args.pages)
    tmp = tempfile.mkdtemp(prefix="websim-nginx-")
    os.chmod(tmp, 0o755)  # nginx workers run as an unprivileged user and must read the variants
    os.makedirs(os.path.join(tmp, "tmp"))
    variants = os.path.join(tmp, "variants")
    port = free_port()
    with open(os.path.join(tmp, "nginx.conf"), "w") as fh:
        fh.write(NGINX_CONF.format(prefix=tmp, port=port, docroot=DOCROOT, variants=variants))
    old_umask = os.umask(0o022)
    try:
        urls = make_urls(port, pages, all_pages, variants, rng)
    finally:
        os.umask(old_umask)
    if args.html_dir:
        os.makedirs(args.html_dir, exist_ok=True)
    proc = subprocess.Popen(["/usr/sbin/nginx", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf")])
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        t0 = time.time()
        rows = asyncio.run(render_all(urls, args.html_dir))
        print(f"rendered={len(rows)} of {len(urls)} in {time.time() - t0:.0f}s", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as fh:
        for row in rows:
            # the URL's port is random per build: store it as a placeholder
            row["url"] = row["url"].replace(f"127.0.0.1:{port}", "127.0.0.1:PORT")
            row["final_url"] = row["final_url"].replace(f"127.0.0.1:{port}", "127.0.0.1:PORT")
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    print(f"wrote {len(rows)} records to {args.out}")


if __name__ == "__main__":
    main()
