"""Screenshot kinds for the pHash: cost in the browser and agreement with the full-size PNG.

    python bench/screenshot.py [--pages 60] [--repeat 3]

On the pages ``bench/crawl.py`` crawls (real Debian documentation, served by nginx on 127.0.0.1),
each page is loaded once in Chromium (1280x800) and captured as

* ``png``: ``page.screenshot(type="png")``, what a bare crawl takes (and ``WEBSIM_SCREENSHOTS_DIR`` keeps);
* ``jpeg``: ``page.screenshot(type="jpeg", quality=80)``,
  what a crawl takes unless ``WEBSIM_SCREENSHOTS_DIR`` is set;
* ``cdp-jpeg-W``: CDP ``Page.captureScreenshot`` JPEG with ``clip.scale`` W/1280 (scaled by
  Chromium's compositor; q90, q80 at full width), a new CDP session each;
* ``jpeg-caret``: ``page.screenshot`` JPEG q80 without hiding the caret;
* ``cdp-jpeg-kept``: what a crawl takes (``render.capture.take_screenshot``): CDP
  ``Page.captureScreenshot`` JPEG q80 on the tab's kept CDP session.

For each kind: median wall milliseconds per capture (``--repeat`` captures per page), Chromium's
mean CPU milliseconds per capture (all its processes, from /proc), bytes, and the pHash bit distance to
the PNG's pHash (with :func:`scrapy_websim.core.page.visual.phash_png`): mean, max and the share of
pages at distance 0 and <= 2 (visual similarity is 1 - distance / ``decision.visual_max_distance``;
every page of one crawl is captured the same way, so what matters is that pages' distances to
each other keep their order).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench.crawl import ensure_docs, pick_pages, static_locations  # noqa: E402
from scrapy_websim.core.page.visual import phash_png  # noqa: E402
from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser  # noqa: E402
from scrapy_websim.testing.servers import nginx_server  # noqa: E402


async def small_screenshot(page, viewport: tuple, width: int, quality: int = 90) -> bytes:
    """The viewport as a JPEG ``width`` pixels wide, scaled by Chromium's compositor (CDP)."""
    vw, vh = viewport
    session = await page.context.new_cdp_session(page)
    try:
        shot = await session.send("Page.captureScreenshot", {
            "format": "jpeg", "quality": quality, "optimizeForSpeed": True,
            "clip": {"x": 0, "y": 0, "width": vw, "height": vh, "scale": min(1.0, width / vw)}})
    finally:
        await session.detach()
    return base64.b64decode(shot["data"])


async def viewport_jpeg(page) -> bytes:
    """What a crawl takes (scrapy_websim.render.capture.take_screenshot, no PNG asked for)."""
    from scrapy_websim.render.capture import CaptureOptions, take_screenshot

    return await take_screenshot(page, CaptureOptions(png=False))


def chromium_cpu(browser_pid: int) -> float:
    total = 0.0
    for p in [psutil.Process(browser_pid)] + psutil.Process(browser_pid).children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


async def run(urls, repeat: int) -> None:
    from playwright.async_api import async_playwright

    kinds = {
        "png": lambda page: page.screenshot(type="png"),
        "jpeg": lambda page: page.screenshot(type="jpeg", quality=80),
        "cdp-jpeg-320": lambda page: small_screenshot(page, (1280, 800), 320),
        "cdp-jpeg-640": lambda page: small_screenshot(page, (1280, 800), 640),
        "cdp-jpeg-1280": lambda page: small_screenshot(page, (1280, 800), 1280, 80),
        "jpeg-caret": lambda page: page.screenshot(type="jpeg", quality=80, caret="initial"),
        "cdp-jpeg-kept": lambda page: viewport_jpeg(page),
    }
    stats = {k: {"ms": [], "cpu": [], "bytes": [], "dist": []} for k in kinds}
    same_as_jpeg, jpeg_hash = [], None
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_browser()[0], args=list(DEFAULT_ARGS))
        pids = [p.pid for p in psutil.Process().children(recursive=True) if "chrom" in p.name().lower()]
        root = min(pids)
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        for url in urls:
            await page.goto(url, wait_until="load")
            ref = None
            for name, shoot in kinds.items():
                data = b""
                for _ in range(repeat):
                    cpu0, t0 = chromium_cpu(root), time.perf_counter()
                    data = await shoot(page)
                    stats[name]["ms"].append((time.perf_counter() - t0) * 1000)
                    stats[name]["cpu"].append((chromium_cpu(root) - cpu0) * 1000)
                if isinstance(data, str):
                    data = base64.b64decode(data)
                stats[name]["bytes"].append(len(data))
                h = phash_png(data)
                ref = h if ref is None else ref
                stats[name]["dist"].append(bin(h ^ ref).count("1"))
                if name == "jpeg":
                    jpeg_hash = h
                elif name == "cdp-jpeg-kept":
                    same_as_jpeg.append(h == jpeg_hash)
        await browser.close()
    n = len(urls)
    print(f"{n} pages, {repeat} captures each; load {os.getloadavg()[0]:.1f}")
    for name, s in stats.items():
        d = s["dist"]
        print(f"  {name:13s} {statistics.median(s['ms']):6.1f} ms  "
              f"chromium cpu {statistics.mean(s['cpu']):6.1f} ms (mean)  "
              f"{statistics.mean(s['bytes']) / 1024:6.1f} KB  phash distance to png: mean {statistics.mean(d):.2f} "
              f"max {max(d)}  =0 {sum(x == 0 for x in d) / n:.0%}  <=2 {sum(x <= 2 for x in d) / n:.0%}")
    print(f"  cdp-jpeg-kept pHash equal to jpeg's on {sum(same_as_jpeg)}/{len(same_as_jpeg)} pages")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ensure_docs()
    pages = pick_pages(args.pages)
    aliases = "".join(f"location /{name}/ {{ alias {os.path.dirname(paths[0])}/; }}\n" for name, paths in pages.items())
    aliases += static_locations()
    with nginx_server(locations=aliases) as base:
        urls = [f"{base}/{name}/{os.path.basename(p)}" for name, paths in pages.items() for p in paths]
        asyncio.run(run(urls, args.repeat))


if __name__ == "__main__":
    main()
