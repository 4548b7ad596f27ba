"""The extension owns the end of the crawl; the other components reach it only through signals."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.settings.default_settings import DOWNLOADER_MIDDLEWARES_BASE
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.url_list import Entry
from scrapy_websim.crawler import events
from scrapy_websim.crawler.addon import Addon
from scrapy_websim.crawler.extension import Registered
from scrapy_websim.crawler.inputs import NOT_FETCHED
from scrapy_websim.crawler.recorder import WebsimRecorder
from scrapy_websim.render.middlewares import RECORDED, WebsimFailureDownloaderMiddleware, WebsimRenderSpiderMiddleware


def _crawler(**settings):
    return get_crawler(settings_dict={"ADDONS": {Addon: 500}, **settings})


def _page(record_id: int, url: str) -> PageRecord:
    return PageRecord(id=record_id, url=url, final_url=url, status_code=200, content_type="text/html",
                      html_len=5000, text_len=400, title=url)


def test_records_go_in_and_the_result_comes_out_through_signals():
    crawler = _crawler()
    entries = [Entry(1, "http://a.test/", "http://a.test/"), Entry(2, "http://a.test/x", "http://a.test/x")]
    registered = events.ask(crawler, events.inputs_declared, entries=entries)
    assert isinstance(registered, Registered) and registered.probed == set()
    # the list is read as the spider asks for entries; the rest gets its placeholders at the end
    events.ask(crawler, events.page_recorded, record=_page(1, "http://a.test/"))
    for _ in range(2):  # a page a spider fetched twice is recorded once
        events.ask(crawler, events.page_recorded, record=_page(0, "http://a.test/found?utm_source=x"))
    result = events.ask(crawler, events.result_wanted)
    rows = {row["url"]: row for row in result.url_rows()}
    assert sorted(rows) == ["http://a.test/", "http://a.test/found?utm_source=x", "http://a.test/x"]
    assert rows["http://a.test/x"]["error"] == NOT_FETCHED  # the input that got no response
    assert rows["http://a.test/found?utm_source=x"]["normalized_url"] == "http://a.test/found"
    assert events.ask(crawler, events.result_wanted) is result  # computed once
    assert crawler.stats.get_value("websim/not_fetched") == 1


def test_without_the_extension_a_record_is_refused_with_the_way_to_enable_it():
    crawler = get_crawler()
    with pytest.raises(NotConfigured, match="ADDONS"):
        events.ask(crawler, events.page_recorded, record=_page(1, "http://a.test/"))


def test_config_and_parameters_are_built_once_per_crawler(monkeypatch):
    built = []
    original = WebsimConfig.from_settings.__func__

    def counted(cls, settings):
        built.append(settings)
        return original(cls, settings)

    params_built = []
    original_params = WebsimParams.from_settings.__func__

    def params_counted(cls, settings, config=None):
        params_built.append(settings)
        return original_params(cls, settings, config)

    monkeypatch.setattr(WebsimConfig, "from_settings", classmethod(counted))
    monkeypatch.setattr(WebsimParams, "from_settings", classmethod(params_counted))
    crawler = _crawler()  # the add-on checks the settings, the extensions are built
    WebsimRecorder.from_crawler(crawler)
    WebsimRenderSpiderMiddleware.from_crawler(crawler)
    WebsimFailureDownloaderMiddleware.from_crawler(crawler)
    assert len(built) == 1 and built[0] is crawler.settings
    assert WebsimConfig.from_crawler(crawler) is WebsimConfig.from_crawler(crawler)
    assert WebsimParams.from_crawler(crawler) is WebsimParams.from_crawler(crawler)
    assert len(params_built) == 1 and WebsimParams.from_crawler(crawler).config is WebsimConfig.from_crawler(crawler)
    assert WebsimConfig.from_crawler(_crawler()) is not WebsimConfig.from_crawler(crawler)


def test_the_failure_middleware_sees_only_final_failures():
    """Under RetryMiddleware: a failure that is retried is not recorded before the retry."""
    settings = _crawler().settings
    priorities = {load_object(k) if isinstance(k, str) else k: v
                  for k, v in settings.getdict("DOWNLOADER_MIDDLEWARES").items()}
    ours = priorities[WebsimFailureDownloaderMiddleware]
    assert ours < DOWNLOADER_MIDDLEWARES_BASE["scrapy.downloadermiddlewares.retry.RetryMiddleware"]


def test_one_failure_path_for_the_websim_spider_and_any_spider():
    crawler = _crawler()
    events.ask(crawler, events.inputs_declared,
                       entries=[Entry(3, "http://b.test/", "http://b.test/")])
    middleware = WebsimFailureDownloaderMiddleware.from_crawler(crawler)
    own = Request("http://b.test/", meta={"websim_id": 3, "websim_url": "http://b.test/", "playwright": True})
    tracked = Request("http://b.test/other", meta={"websim_track": True, "playwright": True})
    untracked = Request("http://b.test/theirs")
    for request in (own, tracked, untracked):
        assert middleware.process_exception(request, ConnectionRefusedError("Connection refused")) is None
    assert own.meta[RECORDED] and tracked.meta[RECORDED] and RECORDED not in untracked.meta
    # Chromium refuses the port: fetched again without the browser, nothing recorded yet
    refused = Request("http://b.test:6000/",
                      meta={"websim_track": True, "playwright": True, "playwright_page_methods": []})
    again = middleware.process_exception(refused, Exception("net::ERR_UNSAFE_PORT at http://b.test:6000/"))
    assert again.meta["websim_static"] and not any(k.startswith("playwright") for k in again.meta)
    # https:// on a port that speaks HTTP: tried over http://, rendered
    tls = Request("https://b.test:8080/", meta={"websim_id": 4, "websim_url": "https://b.test:8080/",
                                                 "playwright": True, "websim_fallback_url": "http://b.test:8080/"})
    retry = middleware.process_exception(tls, Exception("net::ERR_SSL_PROTOCOL_ERROR"))
    assert retry.url == "http://b.test:8080/" and retry.meta["playwright"] and retry.meta["websim_id"] == 4
    assert "websim_fallback_url" not in retry.meta
    rows = {row["url"]: row for row in events.ask(crawler, events.result_wanted).url_rows()}
    assert "connection refused" in rows["http://b.test/"]["error"].lower()
    assert "connection refused" in rows["http://b.test/other"]["error"].lower()
    assert "http://b.test/theirs" not in rows and "http://b.test:6000/" not in rows
