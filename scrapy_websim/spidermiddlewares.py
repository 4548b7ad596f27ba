"""Spider middleware: do not render pages that a learned URL model predicts to be duplicates.

:class:`WebsimPredictMiddleware` learns from every featured page (signal
:data:`scrapy_websim.signals.page_featured`) which URL components do not change content
(:class:`scrapy_websim.core.urls.predictor.DupePredictor`), and replaces a request whose duplicate
probability is at least ``WEBSIM_PREDICT_THRESHOLD`` by a :class:`PageRecord` that names the URL
it duplicates (``predicted_duplicate_of``), so the URL is still one record in the output, but it is
never fetched nor rendered.

Its settings (``WEBSIM_PREDICT_*`` and the ``predict.*`` keys of ``WEBSIM_PARAMS``) and how the
model decides are in docs/prediction.md.

Stats: ``websim/predict/learned``, ``websim/predict/checked``, ``websim/predict/warmup``,
``websim/predict/dropped``, ``websim/predict/explored``, ``websim/predict/explored_confirmed``,
``websim/predict/explored_refuted``, ``websim/predict/opted_out``.
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Dict, Iterable, List, Optional, Tuple

from scrapy import Request

from scrapy_websim import signals as websim_signals
from scrapy_websim.config import PredictSettings
from scrapy_websim.core.urls.predictor import DupePredictor, PredictorParams, url_key
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.fingerprints import blake2b64

logger = logging.getLogger(__name__)

META_KEY = "websim_predict"
STATS = "websim/predict/"


class WebsimPredictMiddleware:
    """Drop requests for pages predicted to duplicate pages already rendered (see module doc)."""

    def __init__(self, crawler: Any, settings: Optional[PredictSettings] = None) -> None:
        self.crawler = crawler
        self.settings = settings or PredictSettings.from_settings(crawler.settings)
        self.stats = crawler.stats
        self.learning = self.settings.enabled
        self.predictor: Optional[DupePredictor] = None
        self._warmup: List[Tuple[str, str]] = []
        self._passed: List[str] = []  # requests let through during warm-up (pending for the model)
        self._explored: Dict[str, str] = {}  # canonical URL fetched for exploration -> predicted dupe

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimPredictMiddleware":
        mw = cls(crawler)
        crawler.signals.connect(mw.page_featured, signal=websim_signals.page_featured)
        return mw

    # ------------------------------------------------------------------ learning

    def page_featured(self, record: PageRecord, main_text: str, spider: Any = None) -> None:
        """Learn from a rendered page (connected to :data:`~scrapy_websim.signals.page_featured`)."""
        if not self.learning or record.error or not 200 <= record.status_code < 300 or not main_text:
            return
        self.stats.inc_value(STATS + "learned")
        if self.predictor is None:
            self._warmup.append((record.url, main_text))
            if len(self._warmup) >= self.settings.warmup:
                self._build()
            return
        self.predictor.update_model(record.url, main_text)
        dupe = self._explored.pop(url_key(record.url), None)
        if dupe is not None:
            sim = self.predictor.content_similarity(record.url, dupe)
            if sim is not None:
                ok = sim >= self.settings.jaccard
                self.stats.inc_value(STATS + ("explored_confirmed" if ok else "explored_refuted"))

    def _build(self) -> DupePredictor:
        sample = self._warmup
        self.predictor = predictor = DupePredictor(
            texts_sample=[text for _, text in sample],
            params=PredictorParams(jaccard_threshold=self.settings.jaccard, confidence=self.settings.confidence),
        )
        for url, text in sample:
            self.predictor.update_model(url, text)
        for url in self._passed:
            self.predictor.add_pending(url)
        self._warmup, self._passed = [], []
        logger.info("websim: duplicate predictor warmed up on %d pages", len(sample))
        return predictor

    # ------------------------------------------------------------------ deciding

    def _explore(self, url: str) -> bool:
        """Deterministic in (seed, URL): the same crawl explores the same URLs."""
        if self.settings.exploration <= 0.0:
            return False
        return blake2b64(f"{self.settings.seed}\x00{url}") / 2.0**64 < self.settings.exploration

    def process_request(self, request: Request) -> Any:
        """The request itself, or the :class:`PageRecord` that replaces a dropped one."""
        opt = request.meta.get(META_KEY)
        if opt is not None and not opt:
            self.stats.inc_value(STATS + "opted_out")
            return request
        if opt is None and not self.settings.enabled:
            return request
        self.learning = True
        predictor = self.predictor
        if predictor is None:
            if self.settings.warmup > 0:
                self.stats.inc_value(STATS + "warmup")
                if len(self._passed) < 1_000_000:
                    self._passed.append(request.url)
                return request
            predictor = self._build()
        self.stats.inc_value(STATS + "checked")
        prob, dupe = predictor.predict(request.url)
        if dupe is None or prob < self.settings.threshold or url_key(dupe) == url_key(request.url):
            # (an exact repeat is the dupefilter's business, not a prediction)
            predictor.add_pending(request.url)
            return request
        if self._explore(request.url):
            self.stats.inc_value(STATS + "explored")
            if len(self._explored) < 100_000:
                self._explored[url_key(request.url)] = dupe
            predictor.add_pending(request.url)
            return request
        self.stats.inc_value(STATS + "dropped")
        logger.debug("websim: not rendering %s (p=%.4f duplicate of %s)", request.url, prob, dupe)
        return PageRecord(
            id=request.meta.get("websim_id", 0),
            url=request.meta.get("websim_url", request.url),
            rendered=False,
            predicted_duplicate_of=dupe,
            error="",
        )

    def _process(self, item: Any) -> Any:
        return self.process_request(item) if isinstance(item, Request) else item

    # ------------------------------------------------------------------ Scrapy hooks

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        for item in result:
            yield self._process(item)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for item in result:
            yield self._process(item)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in start:
            yield self._process(item)

    def process_start_requests(self, start_requests: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        """Scrapy < 2.13 (2.13+ calls :meth:`process_start`)."""
        for item in start_requests:
            yield self._process(item)
