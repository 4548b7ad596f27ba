"""Let *any* spider's pages be rendered and recorded, not only the ``websim`` spider's.

With the add-on on, :class:`WebsimRenderSpiderMiddleware` adds scrapy-websim's render meta to every
request a spider yields (unless ``meta["websim"] = False``), and
:class:`WebsimCaptureSpiderMiddleware` sends each such response's page to the recorder (signal
:data:`~scrapy_websim.crawler.events.page_captured`) before anything else of the spider sees it (below
Scrapy's HttpErrorMiddleware: an error page the spider does not handle is recorded all the same).
The spider's own requests, callbacks and items are otherwise as without the add-on: its items, and
only they, reach its item pipelines and feeds. The ``websim`` spider captures its own pages and is
left alone. :class:`WebsimFailureDownloaderMiddleware` records the download failures
(refused, timeout, DNS...) of both, which never reach a spider middleware.

Pages found this way get ids after the input URLs, in URL order, at the end of the crawl; a URL
the spider fetches twice is recorded once (the extension drops the second record).
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Iterable, Iterator

from scrapy import Request

from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.normalize import url_origin
from scrapy_websim.crawler import events
from scrapy_websim.crawler.items import PageItem
from scrapy_websim.render import record_from_failure, record_from_response, render_meta, static_fallback_reason

logger = logging.getLogger(__name__)

TRACK = "websim_track"
OPT_OUT = "websim"


def _own_spider(spider: Any) -> bool:
    return getattr(spider, "name", None) == "websim" or hasattr(spider, "render_request")


class WebsimRenderSpiderMiddleware:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.config = WebsimConfig.from_crawler(crawler)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimRenderSpiderMiddleware":
        return cls(crawler)

    def _prepare(self, request: Request) -> Request:
        meta = request.meta
        if meta.get(OPT_OUT) is False or meta.get("websim_render") or meta.get(TRACK):
            return request
        extra = render_meta(self.config)
        extra.pop("handle_httpstatus_all")  # which statuses reach the callback stays the spider's choice
        if meta.get("playwright_page_methods"):  # keep the user's page methods; capture runs last
            extra["playwright_page_methods"] = list(meta["playwright_page_methods"]) + extra["playwright_page_methods"]
        for key in ("playwright_page_init_callback", "playwright_page_goto_kwargs"):
            if meta.get(key):
                extra.pop(key)  # the user's own choice wins
        extra[TRACK] = True
        return request.replace(meta={**extra, **{k: v for k, v in meta.items() if k not in extra}})

    def _wrap(self, result: Iterable[Any], spider: Any) -> Iterator[Any]:
        for item in result:
            yield self._prepare(item) if isinstance(item, Request) and not _own_spider(spider) else item

    async def _wrap_async(self, result: AsyncIterator[Any], spider: Any) -> AsyncIterator[Any]:
        async for item in result:
            yield self._prepare(item) if isinstance(item, Request) and not _own_spider(spider) else item

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterator[Any]:
        yield from self._wrap(result, spider)

    async def process_spider_output_async(self, response: Any, result: AsyncIterator[Any], spider: Any = None
                                          ) -> AsyncIterator[Any]:
        async for item in self._wrap_async(result, spider):
            yield item

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        spider = self.crawler.spider
        async for item in self._wrap_async(start, spider):
            yield item

    def process_start_requests(self, start_requests: Iterable[Any], spider: Any = None) -> Iterator[Any]:
        yield from self._wrap(start_requests, spider)


class WebsimCaptureSpiderMiddleware:
    """Sends a tracked response's page to the recorder before the spider sees it. Placed under
    HttpErrorMiddleware (50): a 404 the spider does not handle is recorded, and still kept from the
    spider's callback as Scrapy's settings say; a callback that fails does not cost the page its
    record."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimCaptureSpiderMiddleware":
        return cls(crawler)

    def process_spider_input(self, response: Any, spider: Any = None) -> None:
        if response is None or not response.meta.get(TRACK):
            return
        try:
            record, html, screenshot = record_from_response(response, 0, response.request.url)
            events.ask(self.crawler, events.page_captured,
                               page=PageItem(record=record, html=html, screenshot=screenshot),
                               spider=self.crawler.spider)
        except Exception:  # the spider's callback runs whatever happened to websim's record
            logger.exception("websim: the page %s could not be recorded", response.url)


#: Chromium's errors when https:// meets a server that does not speak TLS on that port.
_TLS_HANDSHAKE_ERRORS = ("net::ERR_SSL_PROTOCOL_ERROR", "net::ERR_SSL_VERSION_OR_CIPHER_MISMATCH",
                         "net::ERR_CONNECTION_CLOSED", "net::ERR_CONNECTION_RESET", "net::ERR_EMPTY_RESPONSE",
                         "net::ERR_SSL_WRONG_VERSION", "wrong version number")

#: Set in a request's meta once its failure is recorded.
RECORDED = "websim_failure_recorded"


def is_tls_handshake_failure(text: str) -> bool:
    return any(code in text for code in _TLS_HANDSHAKE_ERRORS)


def failure_record(request: Any, exception: BaseException) -> PageRecord:
    """The record of a request that got no response (refused, timeout, DNS...)."""
    meta = request.meta
    record = record_from_failure(request, exception, meta.get("websim_id", 0), meta.get("websim_url", request.url))
    record.expanded_from = meta.get("websim_expanded_from", "")
    record.probe_for = meta.get("websim_probe", "")
    return record


class WebsimFailureDownloaderMiddleware:
    """The one place a failed download of a page scrapy-websim records (the ``websim`` spider's or
    any spider's) is handled. Placed under Scrapy's RetryMiddleware (550), so it sees only a
    failure that is final:

    * Chromium refuses some ports outright, and will not show the body of an HTTP auth challenge
      (401 + WWW-Authenticate): the page is fetched again with Scrapy's own HTTP client (recorded,
      not rendered).
    * ``https://`` on a port of unknown scheme (``websim_fallback_url`` in meta) failed at the TLS
      handshake: ``http://`` is tried, as httpx does.
    * Otherwise the failure is recorded (``page_recorded``) and the request's errback still runs.
    """

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.config = WebsimConfig.from_crawler(crawler)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimFailureDownloaderMiddleware":
        return cls(crawler)

    def process_exception(self, request: Any, exception: BaseException, spider: Any = None) -> Any:
        meta = request.meta
        if not (meta.get(TRACK) or "websim_id" in meta) or meta.get(RECORDED):
            return None
        reason = static_fallback_reason(exception) if meta.get("playwright") else ""
        if reason:
            logger.info("websim: Chromium refused %s (%s); fetching it without rendering", request.url, reason)
            static = {k: v for k, v in meta.items() if not k.startswith("playwright") and k != "websim_render"}
            static.update(websim_static=True, dont_redirect=False)
            return request.replace(meta=static, dont_filter=True)
        fallback = meta.get("websim_fallback_url")
        if fallback and is_tls_handshake_failure(str(exception)):
            logger.info("websim: %s does not speak TLS; trying %s", request.url, fallback)
            retry = {k: v for k, v in meta.items() if k != "websim_fallback_url"}
            retry.update(render_meta(self.config), websim_url=fallback)
            if meta.get("websim_probe"):
                retry["websim_probe"] = url_origin(fallback)
            return request.replace(url=fallback, meta=retry, dont_filter=True)
        meta[RECORDED] = True
        record = failure_record(request, exception)
        logger.info("websim: %s failed: %s", request.url, record.error)
        events.ask(self.crawler, events.page_recorded, record=record)
        return None
