"""``ADDONS = {"scrapy_websim.Addon": 500}``: one line enables everything.

It sets components with ``setdefault`` semantics: a value the user set (in settings.py, a
spider's ``custom_settings`` or ``-s``) is never overwritten.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from scrapy_websim.perhost import PER_HOST_START
from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLER = "scrapy_websim.render.handler.WebsimPlaywrightHandler"
#: scrapy-playwright's own handler: accepted when a user sets it (pages render without the page budget).
BASE_PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
SPIDER_MODULE = "scrapy_websim.spiders.urllist"
#: Schemes the crawler never fetches (a page or a redirect must not make it read local files).
DISABLED_SCHEMES = ("file", "ftp", "s3", "gs")
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

EXPORTERS = {
    "json": "scrapy_websim.exporters.WebsimJsonExporter",
    "jsonlines": "scrapy_websim.exporters.WebsimJsonLinesExporter",
    "jsonl": "scrapy_websim.exporters.WebsimJsonLinesExporter",
    "csv": "scrapy_websim.exporters.WebsimCsvExporter",
}


def _set_if_default(settings: Any, name: str, value: Any) -> None:
    """Set ``name`` at add-on priority: Scrapy keeps any value set at project, spider or command-line
    priority (all higher), so the user's value always wins."""
    settings.set(name, value, priority="addon")


def _setdefault_component(settings: Any, name: str, path: str, priority: int) -> None:
    """Add a component unless the user already has it (as a class or as any import string)."""
    from scrapy.utils.misc import load_object  # noqa: PLC0415

    settings.setdefault_in_component_priority_dict(name, load_object(path), priority)


class Addon:
    """Wires rendering, features, clustering, prediction and exporters into a Scrapy project."""

    def __init__(self, crawler: Any = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "Addon":
        return cls(crawler)

    @classmethod
    def update_pre_crawler_settings(cls, settings: Any) -> None:
        """`scrapy crawl websim` in any project: the bundled spider is found without SPIDER_MODULES
        (Scrapy >= 2.13 calls this before it loads the spiders)."""
        modules = settings.getlist("SPIDER_MODULES")
        if SPIDER_MODULE not in modules:
            settings.set("SPIDER_MODULES", [*modules, SPIDER_MODULE],
                         priority=max(settings.getpriority("SPIDER_MODULES") or 0, 15))

    def update_settings(self, settings: Any) -> None:
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        for scheme in ("http", "https"):
            if scheme in handlers and handlers[scheme] not in (None, PLAYWRIGHT_HANDLER, BASE_PLAYWRIGHT_HANDLER):
                logger.warning(
                    "websim: DOWNLOAD_HANDLERS[%r] is set to %r by you; pages of that scheme will not be "
                    "rendered unless it subclasses scrapy-playwright's handler", scheme, handlers[scheme])
            else:
                handlers[scheme] = handlers.get(scheme) or PLAYWRIGHT_HANDLER
        for scheme in DISABLED_SCHEMES:
            handlers.setdefault(scheme, None)
        settings.set("DOWNLOAD_HANDLERS", handlers, priority=max(settings.getpriority("DOWNLOAD_HANDLERS") or 0, 15))

        reactor = settings.get("TWISTED_REACTOR")
        if reactor and reactor != ASYNCIO_REACTOR and settings.getpriority("TWISTED_REACTOR") > 15:
            from scrapy_websim.config import ConfigError  # noqa: PLC0415

            raise ConfigError(
                f"TWISTED_REACTOR={reactor!r}: scrapy-websim renders with scrapy-playwright, which needs "
                f"TWISTED_REACTOR={ASYNCIO_REACTOR!r}"
            )
        _set_if_default(settings, "TWISTED_REACTOR", ASYNCIO_REACTOR)

        for name, path, priority in (
            ("ITEM_PIPELINES", "scrapy_websim.pipelines.WebsimPipeline", 300),
            ("EXTENSIONS", "scrapy_websim.extensions.WebsimExtension", 500),
            ("SPIDER_MIDDLEWARES", "scrapy_websim.spidermiddlewares.WebsimPredictMiddleware", 600),
            # any spider's requests are rendered and its pages recorded (the websim spider does it itself)
            ("SPIDER_MIDDLEWARES", "scrapy_websim.render.middlewares.WebsimRenderSpiderMiddleware", 650),
            # under RetryMiddleware (550): it sees only the failures that are final
            ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.middlewares.WebsimFailureDownloaderMiddleware", 540),
            # headers, cookies, User-Agent on every request; the proxy for Scrapy's own client (after
            # DefaultHeadersMiddleware 400, before UserAgentMiddleware 500 and HttpProxyMiddleware 750)
            ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.scan.WebsimScanDownloaderMiddleware", 450),
            ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.handler.DenyNetworksDownloaderMiddleware", 50),
        ):
            _setdefault_component(settings, name, path, priority)
        self.update_pre_crawler_settings(settings)

        exporters = settings.getdict("FEED_EXPORTERS")
        for fmt, path in EXPORTERS.items():
            exporters.setdefault(fmt, path)
        settings.set("FEED_EXPORTERS", exporters, priority=max(settings.getpriority("FEED_EXPORTERS") or 0, 15))

        # 4xx/5xx pages are data here: they must reach the spider with their real status and body.
        _set_if_default(settings, "HTTPERROR_ALLOW_ALL", True)
        _set_if_default(settings, "REMOTE_CONTROL_ENABLED", False)
        _set_if_default(settings, "PLAYWRIGHT_BROWSER_TYPE", "chromium")
        _set_if_default(settings, "ROBOTSTXT_OBEY", False)
        _set_if_default(settings, "RETRY_ENABLED", False)
        _set_if_default(settings, "TELNETCONSOLE_ENABLED", False)
        # Chromium takes URLs up to 2 MB; Scrapy's 2083 would drop longer list lines
        _set_if_default(settings, "URLLENGTH_LIMIT", 2 * 1024 * 1024)

        from scrapy_websim.config import WebsimConfig  # noqa: PLC0415

        # every WEBSIM_* setting checked here first; the crawler's components get this same object
        crawler = self.crawler
        if crawler is not None and crawler.settings is settings:
            websim = WebsimConfig.from_crawler(crawler)
        else:  # applied to a settings object of its own
            websim = WebsimConfig.from_settings(settings)
        _set_if_default(settings, "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", websim.page_timeout * 1000)
        _set_if_default(settings, "DOWNLOAD_TIMEOUT", max(websim.http_timeout, websim.page_timeout))

        launch = dict(settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"))
        if not launch.get("executable_path") and settings.get("PLAYWRIGHT_BROWSER_TYPE", "chromium") == "chromium":
            launch["executable_path"], _tried = find_browser(websim.browser_executable)
        launch.setdefault("headless", True)
        launch.setdefault("args", list(DEFAULT_ARGS))
        _scan_settings(settings, launch, websim)
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", launch,
                     priority=max(settings.getpriority("PLAYWRIGHT_LAUNCH_OPTIONS") or 0, 15))
        if websim.redis_url:
            _wire_redis(settings, websim)
        elif settings.get("SCHEDULER") == "scrapy.core.scheduler.Scheduler":  # the user's own one wins
            # a JOBDIR on a disk that fills up or turns read-only: requests go on in memory
            _set_if_default(settings, "SCHEDULER", "scrapy_websim.scheduler.WebsimScheduler")
        # Pages in flight: docs/performance.md (measured 2, 4, 6, 8 on 2 cores: 6 rendered ~10 %
        # more pages/s than 4 at the same CPU per page, 8 no more than 6).
        concurrency = settings.getint("CONCURRENT_REQUESTS")
        _set_if_default(settings, "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", max(1, min(concurrency, max_pages_in_flight())))


def _wire_redis(settings: Any, websim: Any) -> None:
    """``WEBSIM_REDIS_URL``: scrapy-redis's scheduler on the job's queue, with leases (distributed mode)."""
    from scrapy_websim.config import ConfigError  # noqa: PLC0415
    from scrapy_websim.distributed.job import JobError, scheduler_settings  # noqa: PLC0415

    try:
        import scrapy_redis  # noqa: F401, PLC0415
    except ImportError:
        raise ConfigError("WEBSIM_REDIS_URL needs scrapy-redis: pip install 'scrapy-websim[redis]'") from None
    try:
        wiring = scheduler_settings(websim.redis_url, websim.redis_job or "websim")
    except JobError as exc:
        raise ConfigError(f"WEBSIM_REDIS_JOB: {exc}") from None
    for name, value in wiring.items():
        _set_if_default(settings, name, value)
def _scan_settings(settings: Any, launch: dict, websim: Any) -> None:
    """Proxy for Chromium, TLS policy of Scrapy's own client, per-host politeness."""
    from scrapy_websim.config import proxy_parts  # noqa: PLC0415

    proxy = websim.proxy
    if proxy and not _websim_renders(settings):
        # scrapy-playwright's own handler: the proxy for the whole browser (websim's handler gives it
        # to the pages' contexts, and the browser's own requests go nowhere). Playwright also adds
        # Chromium's "<-loopback>" bypass rule, so 127.0.0.1 goes through it too.
        launch.setdefault("proxy", proxy_parts(proxy))
    if websim.strict_tls:
        # Scrapy's default client context factory accepts any certificate; this one verifies like a browser.
        _set_if_default(settings, "DOWNLOADER_CLIENTCONTEXTFACTORY",
                        "scrapy.core.downloader.contextfactory.BrowserLikeContextFactory")
    # A host's pages in flight start at 2 and rise while it answers as fast (scrapy_websim.perhost),
    # unless the user set the per-host politeness (docs/scanning.md).
    _set_if_default(settings, "CONCURRENT_REQUESTS_PER_DOMAIN", min(PER_HOST_START, websim.per_host_max))
    _setdefault_component(settings, "EXTENSIONS", "scrapy_websim.perhost.PerHostRamp", 500)
    if settings.get("DOWNLOADER") == "scrapy.core.downloader.Downloader":  # the user's own one wins
        _set_if_default(settings, "DOWNLOADER", "scrapy_websim.downloader.WebsimDownloader")


def _websim_renders(settings: Any) -> bool:
    """The https download handler is websim's (or a subclass of it)."""
    from scrapy.utils.misc import load_object  # noqa: PLC0415

    from scrapy_websim.render.handler import WebsimPlaywrightHandler  # noqa: PLC0415

    path = settings.getdict("DOWNLOAD_HANDLERS").get("https")
    try:
        handler = load_object(path) if isinstance(path, str) else path
    except (ImportError, NameError, ValueError):
        return False
    return isinstance(handler, type) and issubclass(handler, WebsimPlaywrightHandler)


def max_pages_in_flight() -> int:
    """Pages rendered at once: a page spends ~0.7 s of its wall time waiting (network idle, DOM
    quiet) with the CPU free, so ~3 per core keep the cores busy (docs/performance.md)."""
    return max(4, 3 * (os.cpu_count() or 1))
