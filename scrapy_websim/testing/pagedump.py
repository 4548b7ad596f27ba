"""A bench-only item pipeline that keeps every rendered page's HTML, so that a crawl's features can
be computed again offline with changed feature code (``bench/appbench.py --refeature``) without
rendering again.

Enabled by the benches with ``-s ITEM_PIPELINES='{"scrapy_websim.testing.pagedump.PageDump": 100}'``
(before websim's pipeline, which empties the HTML) and the environment variable
``WEBSIM_BENCH_PAGES`` naming a gzip JSON Lines file: one ``{"id", "url", "html"}`` line per page
(soft-404 probes included: their fingerprints calibrate the rules).
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from scrapy_websim.items import PageItem

#: The environment variable naming the file the pages go to.
ENV = "WEBSIM_BENCH_PAGES"


class PageDump:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fh: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PageDump":
        return cls(os.environ.get(ENV, ""))

    def open_spider(self, spider: Any = None) -> None:
        if self.path:
            self.fh = gzip.open(self.path, "at", encoding="utf-8")

    def close_spider(self, spider: Any = None) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def process_item(self, item: Any, spider: Any = None) -> Any:
        if self.fh is not None and isinstance(item, PageItem) and item.html:
            self.fh.write(json.dumps({"id": item.record.id, "url": item.record.url, "html": item.html}) + "\n")
        return item


def read_pages(path: str) -> dict:
    """``{url: html}`` of a dump (the last line of a URL wins)."""
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["url"]] = row["html"]
    return out
