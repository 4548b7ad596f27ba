"""What a rendered page travels in, from the spider (or the render middleware) to the recorder."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_websim.core.types import PageRecord


@dataclass
class PageItem:
    """A page's record plus what its features are computed from.

    Sent with the :data:`~scrapy_websim.crawler.events.page_captured` signal, never yielded as a Scrapy
    item (it would reach the user's pipelines and feeds). The recorder computes the features,
    empties ``html`` and ``screenshot`` and keeps only ``record``: nothing large outlives it.
    """

    record: PageRecord
    html: str = ""
    screenshot: bytes = b""
