"""Let *any* spider's pages be rendered and recorded, not only the ``websim`` spider's.

With the add-on on, :class:`WebsimRenderSpiderMiddleware` adds scrapy-websim's render meta to every
request a spider yields (unless ``meta["websim"] = False``), and for each such response emits a
:class:`~scrapy_websim.items.PageItem` before the spider's own output, so the pipeline computes its
features and the result file has one record per page. :class:`WebsimFailureDownloaderMiddleware`
records download failures (refused, timeout, DNS...) of those requests, which never reach a spider
middleware. The ``websim`` spider records its pages itself and is left alone.

Pages found this way get ids after the input URLs, in URL order, at the end of the crawl; a URL
the spider fetches twice is recorded once.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Iterable, Iterator

from scrapy import Request

from scrapy_websim.core.features import fill_normalized_url
from scrapy_websim.items import PageItem
from scrapy_websim.render import record_from_failure, record_from_response, render_meta, static_fallback_reason

TRACK = "websim_track"
OPT_OUT = "websim"


def _own_spider(spider: Any) -> bool:
    return getattr(spider, "name", None) == "websim" or hasattr(spider, "render_request")


class WebsimRenderSpiderMiddleware:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimRenderSpiderMiddleware":
        return cls(crawler)

    def _prepare(self, request: Request) -> Request:
        from scrapy_websim.extensions import get_extension  # noqa: PLC0415

        meta = request.meta
        if meta.get(OPT_OUT) is False or meta.get("websim_render") or meta.get(TRACK):
            return request
        extra = render_meta(get_extension(self.crawler).config)
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

    def _page_item(self, response: Any) -> Any:
        from scrapy_websim.extensions import get_extension  # noqa: PLC0415

        if response is None or not response.meta.get(TRACK):
            return None
        if not get_extension(self.crawler).first_visit(response.request.url):
            return None
        record, html, screenshot = record_from_response(response, 0, response.request.url)
        return PageItem(record=record, html=html, screenshot=screenshot)

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterator[Any]:
        page = self._page_item(response)
        if page is not None:
            yield page
        yield from self._wrap(result, spider)

    async def process_spider_output_async(self, response: Any, result: AsyncIterator[Any], spider: Any = None
                                          ) -> AsyncIterator[Any]:
        page = self._page_item(response)
        if page is not None:
            yield page
        async for item in self._wrap_async(result, spider):
            yield item

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        spider = self.crawler.spider
        async for item in self._wrap_async(start, spider):
            yield item

    def process_start_requests(self, start_requests: Iterable[Any], spider: Any = None) -> Iterator[Any]:
        yield from self._wrap(start_requests, spider)


class WebsimFailureDownloaderMiddleware:
    """Records a failed download of a tracked request as a page record with ``error`` set."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimFailureDownloaderMiddleware":
        return cls(crawler)

    def process_exception(self, request: Any, exception: BaseException, spider: Any = None) -> Any:
        if not request.meta.get(TRACK):
            return None
        if request.meta.get("playwright") and static_fallback_reason(exception):
            # As the websim spider does: a port Chromium refuses, or an HTTP auth challenge it will
            # not show, is fetched again with Scrapy's own HTTP client (recorded, not rendered).
            meta = {k: v for k, v in request.meta.items() if not k.startswith("playwright")}
            meta["websim_static"] = True
            return request.replace(meta=meta, dont_filter=True)
        from scrapy_websim.extensions import get_extension  # noqa: PLC0415

        ext = get_extension(self.crawler)
        if not ext.first_visit(request.url):
            return None
        record = record_from_failure(request, exception, 0, request.url)
        fill_normalized_url(record, ext.params.features)
        ext.add_record(record)
        return None  # the spider's errback (if any) still runs
