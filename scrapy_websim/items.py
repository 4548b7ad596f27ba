"""The item a rendered page travels in, from the spider to the pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_websim.core.types import PageRecord


@dataclass
class PageItem:
    """A page's record plus what its features are computed from.

    The pipeline computes the features, empties ``html`` and ``screenshot`` and keeps only
    ``record``: nothing large outlives the pipeline.
    """

    record: PageRecord
    html: str = ""
    screenshot: bytes = b""
