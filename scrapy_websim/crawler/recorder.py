"""The recorder: the four feature groups and the rule signals of every rendered page, then its record.

A page reaches it with the :data:`~scrapy_websim.crawler.events.page_captured` signal (sent by the
``websim`` spider and by the render spider middleware for any other spider), never as a Scrapy
item: nothing of websim's goes through the user's item pipelines, feeds or item log lines. The HTML
and the screenshot are dropped here, right after the features are taken; the record goes on to
the extension (:data:`~scrapy_websim.crawler.events.page_recorded`).

Screenshots (``WEBSIM_SCREENSHOTS_DIR``) and thumbnails (the report's) are written here. The first
write that fails stops that kind of file for the rest of the crawl (one error logged, the stats
``websim/screenshots_error`` / ``websim/thumbnails_error`` say why and ``*_skipped`` how many pages
have none): a full disk costs those files, never a page's record.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import OrderedDict
from typing import Any, Optional

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.features import compute_features
from scrapy_websim.core.page.visual import decode_image
from scrapy_websim.core.types import PageRecord
from scrapy_websim.crawler import events
from scrapy_websim.crawler.items import PageItem
from scrapy_websim.result.report.thumbs import save_thumbnail
from scrapy_websim.result.safefile import describe, write_bytes

logger = logging.getLogger(__name__)

#: Screenshots whose pHash is remembered (the most recently seen; a fleet shows a few hundred things).
PHASHES_KEPT = 4096


class WebsimRecorder:
    """The extension that turns a captured page into its record (see the module docstring)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        config = WebsimConfig.from_crawler(crawler)
        self.params = WebsimParams.from_crawler(crawler).features
        self.screenshots_dir = config.screenshots_dir
        self.thumbnails_dir = config.thumbnails_path
        self.thumbnail_args = (config.thumbnail_width, config.thumbnail_format, config.thumbnail_quality)
        for directory in (self.screenshots_dir, self.thumbnails_dir):
            if directory:
                try:
                    os.makedirs(directory, exist_ok=True)
                except OSError:
                    pass  # found before the crawl by the extension; a write then says why
        self.failed = {"screenshots": "", "thumbnails": ""}  # kind -> why its first write failed
        #: pHash by screenshot digest: a page that took another page's render has its screenshot,
        #: byte for byte, so it is not decoded and hashed again (without thumbnails to make)
        self._phashes: "OrderedDict[bytes, int]" = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimRecorder":
        recorder = cls(crawler)
        crawler.signals.connect(recorder.page_captured, signal=events.page_captured)
        return recorder

    def page_captured(self, page: PageItem, spider: Any = None) -> bool:
        """A rendered (or fetched) page: features, files, then its record. True: taken care of."""
        record = page.record
        started = time.perf_counter()
        main_text = ""
        digest = hashlib.blake2b(page.screenshot, digest_size=16).digest() if page.screenshot else b""
        known = self._phashes.get(digest) if digest and not self.thumbnails_dir else None
        image = self._decode(record, page.screenshot) if known is None else None
        if known is not None:
            record.phash = known
            self._phashes.move_to_end(digest)
        try:
            main_text = compute_features(record, page.html, image, self.params)
        except Exception as exc:
            logger.exception("websim: features of %s failed", record.url)
            record.error = record.error or f"feature extraction failed: {type(exc).__name__}: {exc}"[:300]
        self._remember_phash(digest, record.phash)
        self.crawler.stats.inc_value("websim/features_ms", round((time.perf_counter() - started) * 1000))
        if record.probe_for:  # a soft-404 probe: features for the calibration, nothing else
            if image is not None:
                image.close()
            self._recorded(record)
            return True
        self._keep_images(record, page.screenshot, image)
        if page.html and not record.error:  # first: the predictor knows the page is rendered when it is recorded
            self.crawler.signals.send_catch_log(
                events.page_featured, record=record, main_text=main_text, spider=spider)
        self._recorded(record)
        page.html, page.screenshot = "", b""
        return True

    def _remember_phash(self, digest: bytes, phash: Optional[int]) -> None:
        if digest and phash is not None and digest not in self._phashes:
            self._phashes[digest] = phash
            if len(self._phashes) > PHASHES_KEPT:
                self._phashes.popitem(last=False)

    def _keep_images(self, record: PageRecord, screenshot: bytes, image: Any) -> None:
        """The screenshot and the thumbnail kept where asked; the decoded image closed."""
        if self.screenshots_dir and screenshot:
            self._file("screenshots", self.screenshots_dir, lambda: write_bytes(
                os.path.join(self.screenshots_dir, f"{record.id}.png"), screenshot))
        if self.thumbnails_dir and image is not None:
            self._thumbnail(record, image)
        if image is not None:
            image.close()

    def _recorded(self, record: PageRecord) -> None:
        events.ask(self.crawler, events.page_recorded, record=record)

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

    def _file(self, kind: str, directory: str, write: Any) -> bool:
        """Run ``write()`` unless an earlier write of this ``kind`` failed; the first failure is
        logged once and stops the kind. True: written."""
        stats = self.crawler.stats
        if self.failed[kind]:
            stats.inc_value(f"websim/{kind}_skipped")
            return False
        try:
            write()
            return True
        except OSError as exc:
            self.failed[kind] = why = describe(exc)
            logger.error("websim: error: %s cannot be written to %s (%s); no more are written in this crawl",
                         kind, directory, why)
            stats.set_value(f"websim/{kind}_error", why)
            stats.inc_value(f"websim/{kind}_skipped")
            return False

    def _thumbnail(self, record: PageRecord, screenshot: Any) -> None:
        """The report's small image of the page, from the screenshot already taken, straight to disk."""
        started = time.perf_counter()
        try:
            if not self._file("thumbnails", self.thumbnails_dir, lambda: save_thumbnail(
                    self.thumbnails_dir, record.url, screenshot, *self.thumbnail_args)):
                return
        except ValueError as exc:
            logger.warning("websim: no thumbnail for %s: %s", record.url, exc)
            return
        self.crawler.stats.inc_value("websim/thumbnails")
        self.crawler.stats.inc_value("websim/thumbnails_ms", round((time.perf_counter() - started) * 1000))
