"""Spider middleware: do not render pages that a learned URL model predicts to be duplicates.

:class:`WebsimPredictMiddleware` (on only with ``WEBSIM_PREDICT_ENABLED``) learns from every
featured page (signal :data:`scrapy_websim.crawler.events.page_featured`) which URL components do not
change content (:class:`scrapy_websim.core.urls.predictor.DupePredictor`), and skips a request
whose duplicate probability is at least ``WEBSIM_PREDICT_THRESHOLD``: the URL is still one record
(``predicted_duplicate_of`` names the page it duplicates, sent with
:data:`~scrapy_websim.crawler.events.page_recorded`), in that page's cluster at the end, but it is never
fetched nor rendered.

A URL is skipped only as a duplicate of a page that was rendered (and learned from): never of one
that was itself skipped, nor of one still waiting for its turn. A request predicted to duplicate a
page that is requested but not rendered yet is held back until that page is recorded: it is
skipped once the page is rendered, and released to the scheduler when the page fails, renders
without text to learn from, or never comes (all held requests are released when the spider would
otherwise go idle). A request for a URL already requested, held or skipped is a repeat: a repeat of
a requested one goes on to Scrapy's duplicate filter, a repeat of a held or skipped one is
dropped (its record is made once); a ``dont_filter`` request is never treated as a repeat.

Its settings (``WEBSIM_PREDICT_*`` and the ``predict.*`` keys of ``WEBSIM_PARAMS``) and how the
model decides are in docs/prediction.md.

Stats: ``websim/predict/learned``, ``websim/predict/checked``, ``websim/predict/warmup``,
``websim/predict/dropped``, ``websim/predict/held``, ``websim/predict/released``,
``websim/predict/repeats``, ``websim/predict/explored``, ``websim/predict/explored_confirmed``,
``websim/predict/explored_refuted``, ``websim/predict/opted_out``.
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Dict, Iterable, List, Optional, Set, Tuple

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, NotConfigured

from scrapy_websim.config import PredictSettings
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.params.urls import PredictorParams
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.predictor import DupePredictor, url_key
from scrapy_websim.crawler import events

logger = logging.getLogger(__name__)

META_KEY = "websim_predict"
STATS = "websim/predict/"


def _key(url: str) -> int:
    """The 64-bit digest of the key under which the predictor knows ``url``."""
    return blake2b64(url_key(url))


class WebsimPredictMiddleware:
    """Skip requests for pages predicted to duplicate pages already rendered (see module doc)."""

    def __init__(self, crawler: Any, settings: Optional[PredictSettings] = None) -> None:
        self.crawler = crawler
        self.settings = settings or PredictSettings.from_settings(crawler.settings)
        self.stats = crawler.stats
        self.predictor: Optional[DupePredictor] = None
        self._warmup: List[Tuple[str, str]] = []
        self._passed_urls: List[str] = []  # requests let through during warm-up (pending for the model)
        self._explored: Dict[str, str] = {}  # canonical URL fetched for exploration -> predicted dupe
        self._passed: Set[int] = set()  # keys of the URLs requested (let through)
        self._recorded: Set[int] = set()  # keys of the requested URLs that have their record
        self._learned: Dict[int, str] = {}  # key -> the URL of the rendered page's record
        self._skipped: Set[int] = set()  # keys of the URLs skipped as predicted duplicates
        self._held: Dict[int, List[Tuple[Request, str]]] = {}  # original's key -> (request, original URL)
        self._held_keys: Set[int] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimPredictMiddleware":
        settings = PredictSettings.from_settings(crawler.settings)
        if not settings.enabled:
            raise NotConfigured  # off: not listed among the enabled middlewares, no warning
        mw = cls(crawler, settings)
        crawler.signals.connect(mw.page_featured, signal=events.page_featured)
        crawler.signals.connect(mw.page_recorded, signal=events.page_recorded)
        crawler.signals.connect(mw.spider_idle, signal=signals.spider_idle)
        return mw

    # ------------------------------------------------------------------ learning

    def page_featured(self, record: PageRecord, main_text: str, spider: Any = None) -> None:
        """Learn from a rendered page (connected to :data:`~scrapy_websim.crawler.events.page_featured`)."""
        if record.error or not 200 <= record.status_code < 300 or not main_text:
            return
        self.stats.inc_value(STATS + "learned")
        self._learned[_key(record.url)] = record.url
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

    def page_recorded(self, record: PageRecord) -> None:
        """A page has its record: the requests held for it are skipped (it was rendered and
        learned from) or released (it was not)."""
        key = _key(record.url)
        self._recorded.add(key)
        held = self._held.pop(key, None)
        if not held:
            return
        try:
            for request, _dupe in held:
                self._held_keys.discard(_key(request.url))
                if key in self._learned:
                    self._skip(request, self._learned[key])
                else:
                    self._release(request)
        except Exception:  # a record must never fail because of the predictor
            logger.exception("websim: the duplicate predictor failed on the requests held for %s", record.url)

    def _build(self) -> DupePredictor:
        sample = self._warmup
        self.predictor = predictor = DupePredictor(
            texts_sample=[text for _, text in sample],
            params=PredictorParams(jaccard_threshold=self.settings.jaccard, confidence=self.settings.confidence),
        )
        for url, text in sample:
            self.predictor.update_model(url, text)
        for url in self._passed_urls:
            self.predictor.add_pending(url)
        self._warmup, self._passed_urls = [], []
        logger.info("websim: duplicate predictor warmed up on %d pages", len(sample))
        return predictor

    # ------------------------------------------------------------------ deciding

    def _explore(self, url: str) -> bool:
        """Deterministic in (seed, URL): the same crawl explores the same URLs."""
        if self.settings.exploration <= 0.0:
            return False
        return blake2b64(f"{self.settings.seed}\x00{url}") / 2.0**64 < self.settings.exploration

    def _pass(self, request: Request, key: int) -> Request:
        self._passed.add(key)
        if self.predictor is not None:
            self.predictor.add_pending(request.url)
        elif len(self._passed_urls) < 1_000_000:
            self._passed_urls.append(request.url)
        return request

    def _skip(self, request: Request, original: str) -> None:
        """Record ``request`` as a predicted duplicate of the rendered page ``original``."""
        self._skipped.add(_key(request.url))
        self.stats.inc_value(STATS + "dropped")
        logger.debug("websim: not rendering %s (predicted duplicate of %s)", request.url, original)
        record = PageRecord(id=request.meta.get("websim_id", 0), url=request.meta.get("websim_url", request.url),
                            rendered=False, predicted_duplicate_of=original, error="")
        events.ask(self.crawler, events.page_recorded, record=record)

    def _release(self, request: Request) -> None:
        """A held request goes to the scheduler after all (its original was not rendered)."""
        self.stats.inc_value(STATS + "released")
        self._pass(request, _key(request.url))
        self.crawler.engine.crawl(request)

    def process_request(self, request: Request) -> Optional[Request]:
        """The request itself, or None when it is skipped (its record is sent), held back or a
        repeat of a held or skipped URL."""
        opt = request.meta.get(META_KEY)
        if opt is not None and not opt:
            self.stats.inc_value(STATS + "opted_out")
            return request
        key = _key(request.url)
        if not request.dont_filter and self._seen(key):
            self.stats.inc_value(STATS + "repeats")
            return request if key in self._passed else None  # a requested one: the dupefilter's business
        predictor = self.predictor
        if predictor is None:
            if self.settings.warmup > 0:
                self.stats.inc_value(STATS + "warmup")
                return self._pass(request, key)
            predictor = self._build()
        self.stats.inc_value(STATS + "checked")
        dupe = self._predicted_original(predictor, request.url)
        if dupe is None:
            return self._pass(request, key)
        return self._held_or_skipped(request, key, dupe)

    def _seen(self, key: int) -> bool:
        """The URL was requested, is held back or was skipped already."""
        return key in self._passed or key in self._held_keys or key in self._skipped

    def _predicted_original(self, predictor: DupePredictor, url: str) -> Optional[str]:
        """The URL whose duplicate ``url`` is predicted to be, when confident and not explored."""
        prob, dupe = predictor.predict(url)
        if dupe is None or prob < self.settings.threshold or url_key(dupe) == url_key(url):
            return None  # (an exact repeat is the dupefilter's business, not a prediction)
        if self._explore(url):
            self.stats.inc_value(STATS + "explored")
            if len(self._explored) < 100_000:
                self._explored[url_key(url)] = dupe
            return None
        return dupe

    def _held_or_skipped(self, request: Request, key: int, dupe: str) -> Optional[Request]:
        """A request predicted to duplicate ``dupe``: skipped when ``dupe`` was learned, held back
        while it is requested and not recorded, else let through."""
        original = _key(dupe)
        if original in self._learned:
            self._skip(request, self._learned[original])
            return None
        if original in self._passed and original not in self._recorded:
            # requested, not rendered yet: decided when it is recorded
            self.stats.inc_value(STATS + "held")
            self._held.setdefault(original, []).append((request, dupe))
            self._held_keys.add(key)
            return None
        return self._pass(request, key)  # its original was recorded without being rendered

    def spider_idle(self, spider: Any = None) -> None:
        """Nothing left to do but the held requests: their originals never got a record, so
        they are released (and the spider kept open for them)."""
        if not self._held:
            return
        held = [request for requests in self._held.values() for request, _dupe in requests]
        self._held.clear()
        self._held_keys.clear()
        for request in held:
            self._release(request)
        raise DontCloseSpider

    def _process(self, item: Any) -> Any:
        return self.process_request(item) if isinstance(item, Request) else item

    # ------------------------------------------------------------------ Scrapy hooks

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        for item in result:
            out = self._process(item)
            if out is not None:
                yield out

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for item in result:
            out = self._process(item)
            if out is not None:
                yield out

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in start:
            out = self._process(item)
            if out is not None:
                yield out

    def process_start_requests(self, start_requests: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        """Scrapy < 2.13 (2.13+ calls :meth:`process_start`)."""
        for item in start_requests:
            out = self._process(item)
            if out is not None:
                yield out
