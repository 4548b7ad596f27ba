"""The baseline of ``bench/crawl.py``: a bare Scrapy + scrapy-playwright crawl, nothing of websim.

    python bench/bare_crawl.py URLS.txt OUT.jsonl IN_FLIGHT [--wait load|networkidle]

Per URL: ``page.goto`` (``wait_until="load"`` by default), a viewport PNG screenshot (1280x800) and
the HTML in the item, with the same browser executable, launch flags and pages in flight as a
websim crawl. It writes one JSON line per page (url, status, HTML and screenshot sizes) so the
bench can check that every page really was rendered.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import scrapy
from scrapy.crawler import CrawlerProcess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser  # noqa: E402

VIEWPORT = {"width": 1280, "height": 800}


async def _init_page(page, request):
    await page.set_viewport_size(VIEWPORT)


class BareSpider(scrapy.Spider):
    name = "bare"

    def __init__(self, urls, out, wait, **kw):
        super().__init__(**kw)
        self.urls = urls
        self.out = open(out, "w", encoding="utf-8")
        self.wait = wait

    async def start(self):
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed, meta={
                "playwright": True, "playwright_include_page": True,
                "playwright_page_init_callback": _init_page,
                "playwright_page_goto_kwargs": {"wait_until": self.wait},
                "handle_httpstatus_all": True,
            })

    async def parse(self, response):
        page = response.meta["playwright_page"]
        try:
            shot = await page.screenshot(type="png", full_page=False)
            html = await page.content()
        finally:
            await page.close()
        self.out.write(json.dumps({"url": response.url, "status": response.status,
                                   "html": len(html), "png": len(shot)}) + "\n")
        yield {"url": response.url, "html": html}

    async def failed(self, failure):
        page = failure.request.meta.get("playwright_page")
        if page is not None:
            await page.close()
        self.out.write(json.dumps({"url": failure.request.url, "error": str(failure.value)[:200]}) + "\n")

    def closed(self, reason):
        self.out.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urls")
    ap.add_argument("out")
    ap.add_argument("in_flight", type=int)
    ap.add_argument("--wait", default="load", choices=("load", "domcontentloaded", "networkidle"))
    args = ap.parse_args()
    urls = [u.strip() for u in open(args.urls, encoding="utf-8") if u.strip()]
    executable, _tried = find_browser("")
    process = CrawlerProcess({
        "DOWNLOAD_HANDLERS": {s: "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
                              for s in ("http", "https")},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": executable, "headless": True, "args": list(DEFAULT_ARGS)},
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": args.in_flight,
        "CONCURRENT_REQUESTS": args.in_flight,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.in_flight,
        "HTTPERROR_ALLOW_ALL": True,
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "REMOTE_CONTROL_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
    })
    process.crawl(BareSpider, urls=urls, out=args.out, wait=args.wait)
    process.start()


if __name__ == "__main__":
    main()
