"""A bench-only extension that keeps every rendered page's HTML, so that a crawl's features can
be computed again offline with changed feature code (``bench/appbench.py --refeature``) without
rendering again.

Enabled by the benches with ``-s EXTENSIONS='{"scrapy_websim.testing.pagedump.PageDump": 100}'``
(built before websim's recorder, so it sees a page before the recorder empties its HTML) and the
environment variable ``WEBSIM_BENCH_PAGES`` naming a gzip JSON Lines file: one
``{"id", "url", "html"}`` line per page (soft-404 probes included: their fingerprints calibrate the
rules).
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from scrapy import signals

from scrapy_websim.crawler import events
from scrapy_websim.crawler.items import PageItem

#: The environment variable naming the file the pages go to.
ENV = "WEBSIM_BENCH_PAGES"


class PageDump:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fh: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PageDump":
        dump = cls(os.environ.get(ENV, ""))
        crawler.signals.connect(dump.open_spider, signal=signals.spider_opened)
        crawler.signals.connect(dump.close_spider, signal=signals.spider_closed)
        crawler.signals.connect(dump.page_captured, signal=events.page_captured)
        return dump

    def open_spider(self, spider: Any = None) -> None:
        if self.path:
            self.fh = gzip.open(self.path, "at", encoding="utf-8")

    def close_spider(self, spider: Any = None) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def page_captured(self, page: PageItem, spider: Any = None) -> None:
        if self.fh is not None and page.html:
            self.fh.write(json.dumps({"id": page.record.id, "url": page.record.url, "html": page.html}) + "\n")


def read_pages(path: str) -> dict:
    """``{url: html}`` of a dump (the last line of a URL wins)."""
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["url"]] = row["html"]
    return out
