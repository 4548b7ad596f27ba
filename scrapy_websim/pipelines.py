"""Item pipeline: the four feature groups and the rule signals of every page, then the store.

The HTML and the screenshot are dropped here, right after the features are taken.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from scrapy_websim import signals as websim_signals
from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.features import compute_features
from scrapy_websim.core.page.visual import decode_image
from scrapy_websim.core.types import PageRecord
from scrapy_websim.finalize import Finalizer
from scrapy_websim.items import PageItem
from scrapy_websim.report.thumbs import save_thumbnail

logger = logging.getLogger(__name__)


class WebsimPipeline:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        config = WebsimConfig.from_crawler(crawler)
        self.params = Finalizer.params_for(crawler).features
        self.screenshots_dir = config.screenshots_dir
        if self.screenshots_dir:
            os.makedirs(self.screenshots_dir, exist_ok=True)
        self.thumbnails_dir = config.thumbnails_path
        self.thumbnail_args = (config.thumbnail_width, config.thumbnail_format, config.thumbnail_quality)
        if self.thumbnails_dir:
            os.makedirs(self.thumbnails_dir, exist_ok=True)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimPipeline":
        return cls(crawler)

    def process_item(self, item: Any, spider: Any = None) -> Any:
        if isinstance(item, PageItem):
            record = item.record
            started = time.perf_counter()
            main_text = ""
            image = self._decode(record, item.screenshot)
            try:
                main_text = compute_features(record, item.html, image, self.params)
            except Exception as exc:
                logger.exception("websim: features of %s failed", record.url)
                record.error = record.error or f"feature extraction failed: {type(exc).__name__}: {exc}"[:300]
            self.crawler.stats.inc_value("websim/features_ms", round((time.perf_counter() - started) * 1000))
            if record.probe_for:  # a soft-404 probe: features for the calibration, nothing else
                if image is not None:
                    image.close()
                self._recorded(record)
                item.html, item.screenshot = "", b""
                return item
            if self.screenshots_dir and item.screenshot:
                path = os.path.join(self.screenshots_dir, f"{record.id}.png")
                with open(path, "wb") as fh:
                    fh.write(item.screenshot)
            if self.thumbnails_dir and image is not None:
                self._thumbnail(record, image)
            if image is not None:
                image.close()
            self._recorded(record)
            if item.html and not record.error:
                self.crawler.signals.send_catch_log(
                    websim_signals.page_featured, record=record, main_text=main_text, spider=spider)
            item.html, item.screenshot = "", b""
            return item
        if isinstance(item, PageRecord):
            self._recorded(item)
        return item

    def _recorded(self, record: PageRecord) -> None:
        websim_signals.ask(self.crawler, websim_signals.page_recorded, record=record)

    def _decode(self, record: PageRecord, screenshot: bytes) -> Any:
        """The screenshot decoded once, for the pHash and the thumbnail (None: none or undecodable)."""
        if not screenshot:
            return None
        try:
            return decode_image(screenshot, max(256, self.thumbnail_args[0] if self.thumbnails_dir else 0))
        except ValueError as exc:
            logger.warning("websim: the screenshot of %s is not an image: %s", record.url, exc)
            record.error = record.error or f"feature extraction failed: ValueError: {exc}"[:300]
            return None

    def _thumbnail(self, record: PageRecord, screenshot: Any) -> None:
        """The report's small image of the page, from the screenshot already taken, straight to disk."""
        started = time.perf_counter()
        try:
            save_thumbnail(self.thumbnails_dir, record.url, screenshot, *self.thumbnail_args)
        except (ValueError, OSError) as exc:
            logger.warning("websim: no thumbnail for %s: %s", record.url, exc)
            return
        self.crawler.stats.inc_value("websim/thumbnails")
        self.crawler.stats.inc_value("websim/thumbnails_ms", round((time.perf_counter() - started) * 1000))
