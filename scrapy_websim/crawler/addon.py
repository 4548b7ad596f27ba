"""``ADDONS = {"scrapy_websim.Addon": 500}``: one line enables everything.

It sets components with ``setdefault`` semantics: a value the user set (in settings.py, a
spider's ``custom_settings`` or ``-s``) is never overwritten.
"""

from __future__ import annotations

import logging
import os
import weakref
from typing import Any, Dict, List, Tuple

from scrapy_websim.config import WebsimConfig, result_format
from scrapy_websim.config_values import ConfigError, proxy_parts
from scrapy_websim.crawler.perhost import PER_HOST_START
from scrapy_websim.render.browser import DEFAULT_ARGS, find_browser

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLER = "scrapy_websim.render.handler.WebsimPlaywrightHandler"
#: scrapy-playwright's own handler: accepted when a user sets it (pages render without the page budget).
BASE_PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
SPIDER_MODULE = "scrapy_websim.spiders.urllist"
#: Schemes the crawler never fetches (a page or a redirect must not make it read local files).
DISABLED_SCHEMES = ("file", "ftp", "s3", "gs")
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

#: Scrapy feed formats a result file can be written in (the websim spider's ``-o``).
RESULT_FEED_FORMATS = {"json": "json", "jsonlines": "jsonl", "jsonl": "jsonl", "csv": "csv"}

#: Per crawler: what is wrong with the websim spider's ``-o`` (found while moving it to ``WEBSIM_OUTPUT``).
_FEED_PROBLEMS: "weakref.WeakKeyDictionary[Any, List[str]]" = weakref.WeakKeyDictionary()


def _set_if_default(settings: Any, name: str, value: Any) -> None:
    """Set ``name`` at add-on priority: Scrapy keeps any value set at project, spider or command-line
    priority (all higher), so the user's value always wins."""
    settings.set(name, value, priority="addon")


def _setdefault_component(settings: Any, name: str, path: str, priority: int) -> None:
    """Add a component unless the user already has it (as a class or as any import string)."""
    from scrapy.utils.misc import load_object  # noqa: PLC0415

    settings.setdefault_in_component_priority_dict(name, load_object(path), priority)


class Addon:
    """Wires rendering, features, clustering, prediction and the result files into a Scrapy project."""

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
        _wire_download_handlers(settings)
        _require_asyncio_reactor(settings)
        crawler = self.crawler
        mine = crawler is not None and crawler.settings is settings  # the settings of this add-on's crawler
        spidercls = getattr(crawler, "spidercls", None)
        if mine and own_spider(spidercls):
            _FEED_PROBLEMS[crawler] = result_feeds_to_output(settings)
        for name, path, priority in COMPONENTS:
            _setdefault_component(settings, name, path, priority)
        self.update_pre_crawler_settings(settings)
        own = not mine or own_spider(spidercls)
        for name, value in QUIET_DEFAULTS + (OWN_SPIDER_DEFAULTS if own else ()):
            _set_if_default(settings, name, value)
        # every WEBSIM_* setting checked here first; the crawler's components get this same object
        # (applied to a settings object of its own: an object of its own)
        websim = WebsimConfig.from_crawler(crawler) if mine else WebsimConfig.from_settings(settings)
        _set_if_default(settings, "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", websim.page_timeout * 1000)
        _abort_requests(settings, websim)
        _set_if_default(settings, "DOWNLOAD_TIMEOUT", max(websim.http_timeout, websim.page_timeout))
        _set_launch_options(settings, websim)
        _set_scheduler(settings, websim)
        # Pages in flight: docs/performance.md, "How many pages in flight".
        concurrency = settings.getint("CONCURRENT_REQUESTS")
        _set_if_default(settings, "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", max(1, min(concurrency, max_pages_in_flight())))
        for line in slowing_settings(settings, websim, own):
            logger.warning("websim: %s", line)


#: The components the add-on adds unless the user has them: (setting, class path, order).
COMPONENTS = (
    # a rendered page's features and record (never a Scrapy item: the user's pipelines and feeds see none)
    ("EXTENSIONS", "scrapy_websim.crawler.recorder.WebsimRecorder", 500),
    ("EXTENSIONS", "scrapy_websim.crawler.extension.WebsimExtension", 500),
    ("SPIDER_MIDDLEWARES", "scrapy_websim.crawler.prediction.WebsimPredictMiddleware", 600),
    # any spider's requests are rendered and its pages recorded (the websim spider does it itself);
    # the pages are captured under HttpErrorMiddleware (50), so an error page is recorded too
    ("SPIDER_MIDDLEWARES", "scrapy_websim.render.middlewares.WebsimRenderSpiderMiddleware", 650),
    ("SPIDER_MIDDLEWARES", "scrapy_websim.render.middlewares.WebsimCaptureSpiderMiddleware", 40),
    # under RetryMiddleware (550): it sees only the failures that are final
    ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.middlewares.WebsimFailureDownloaderMiddleware", 540),
    # headers, cookies, User-Agent on every request; the proxy for Scrapy's own client (after
    # DefaultHeadersMiddleware 400, before UserAgentMiddleware 500 and HttpProxyMiddleware 750)
    ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.scan.WebsimScanDownloaderMiddleware", 450),
    ("DOWNLOADER_MIDDLEWARES", "scrapy_websim.render.handler.DenyNetworksDownloaderMiddleware", 50),
)

#: Set for every crawl (at add-on priority: the user's value wins).
QUIET_DEFAULTS = (("REMOTE_CONTROL_ENABLED", False), ("PLAYWRIGHT_BROWSER_TYPE", "chromium"),
                  ("ROBOTSTXT_OBEY", False), ("TELNETCONSOLE_ENABLED", False))

#: The websim spider's list is the scan: 4xx/5xx pages are data (they reach it with their status
#: and body), a failed page is recorded as such, not tried again, and Chromium takes URLs up to
#: 2 MB (Scrapy's 2083 would drop longer list lines). A user's spider keeps Scrapy's behaviour, so
#: its callbacks and items are as without the add-on (its error pages are recorded all the same:
#: WebsimCaptureSpiderMiddleware).
OWN_SPIDER_DEFAULTS = (("HTTPERROR_ALLOW_ALL", True), ("RETRY_ENABLED", False), ("URLLENGTH_LIMIT", 2 * 1024 * 1024))


def _wire_download_handlers(settings: Any) -> None:
    """http and https to websim's handler (a user's other handler is kept, with a warning); no
    handler for the schemes that would read local files."""
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


def _require_asyncio_reactor(settings: Any) -> None:
    """scrapy-playwright needs the asyncio reactor: a user's other reactor is an error."""
    reactor = settings.get("TWISTED_REACTOR")
    if reactor and reactor != ASYNCIO_REACTOR and settings.getpriority("TWISTED_REACTOR") > 15:
        raise ConfigError(
            f"TWISTED_REACTOR={reactor!r}: scrapy-websim renders with scrapy-playwright, which needs "
            f"TWISTED_REACTOR={ASYNCIO_REACTOR!r}"
        )
    _set_if_default(settings, "TWISTED_REACTOR", ASYNCIO_REACTOR)


def _set_launch_options(settings: Any, websim: WebsimConfig) -> None:
    """``PLAYWRIGHT_LAUNCH_OPTIONS``: the browser found, headless, websim's arguments, the proxy."""
    launch = dict(settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"))
    if not launch.get("executable_path") and settings.get("PLAYWRIGHT_BROWSER_TYPE", "chromium") == "chromium":
        launch["executable_path"], _tried = find_browser(websim.browser_executable)
    launch.setdefault("headless", True)
    launch.setdefault("args", list(DEFAULT_ARGS))
    _scan_settings(settings, launch, websim)
    settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", launch,
                 priority=max(settings.getpriority("PLAYWRIGHT_LAUNCH_OPTIONS") or 0, 15))


def _set_scheduler(settings: Any, websim: WebsimConfig) -> None:
    """scrapy-redis's on a distributed job's queue; else websim's, unless the user has their own."""
    if websim.redis_url:
        _wire_redis(settings, websim)
    elif settings.get("SCHEDULER") == "scrapy.core.scheduler.Scheduler":  # the user's own one wins
        # a JOBDIR on a disk that fills up or turns read-only: requests go on in memory
        _set_if_default(settings, "SCHEDULER", "scrapy_websim.crawler.scheduler.WebsimScheduler")


def own_spider(spidercls: Any) -> bool:
    """The bundled ``websim`` spider or a subclass: its ``-o`` is the websim result."""
    return spidercls is not None and (getattr(spidercls, "name", None) == "websim"
                                      or hasattr(spidercls, "render_request"))


def feed_problems(crawler: Any) -> List[str]:
    """What is wrong with the websim spider's ``-o`` files (the crawl is refused with it)."""
    return list(_FEED_PROBLEMS.get(crawler, ()))


def result_feeds_to_output(settings: Any) -> List[str]:
    """The websim spider's ``-o``/``-O``/``FEEDS`` files in a result format become ``WEBSIM_OUTPUT``
    files (written by the extension, with the checks and fallbacks of every output) and leave
    ``FEEDS``, so Scrapy's feed exporter, which gets no websim item, writes none of them. Returns
    the problems: ``-o`` onto an existing result (Scrapy's ``-o`` appends; a second JSON document
    would make the file invalid), a remote or oddly named result feed, ``-o`` in another format."""
    from scrapy.settings import SETTINGS_PRIORITIES  # noqa: PLC0415

    feeds = settings.getdict("FEEDS")
    cmdline = (settings.getpriority("FEEDS") or 0) >= SETTINGS_PRIORITIES["cmdline"]
    kept: Dict[Any, Any] = {}
    paths: List[str] = []
    problems: List[str] = []
    for uri, options in feeds.items():
        options = dict(options or {})
        path = str(uri)
        path = path[len("file://"):] if path.startswith("file://") else path
        fmt = options.get("format")
        if fmt not in RESULT_FEED_FORMATS:
            kept[uri] = options
            if cmdline:
                problems.append(f"-o {path}: the websim spider's -o is its result, a .json, .jsonl or .csv file "
                                f"(format {fmt!r} would be empty)")
            continue
        problem = _result_feed_problem(path, fmt, options)
        if problem:
            problems.append(problem)
        else:
            paths.append(path)
    if len(kept) != len(feeds):
        _feeds_to_output(settings, kept, paths)
    return problems


def _result_feed_problem(path: str, fmt: str, options: Dict[str, Any]) -> str:
    """Why a result feed of the websim spider cannot be its result file, or ``""``."""
    if "://" in path or "%(" in path:
        return f"-o {path}: the websim result is written to a local file (no URI, no %(name)s)"
    if result_format(path) != RESULT_FEED_FORMATS[fmt]:
        return f"-o {path}: a {fmt} result file must end in .{'jsonl' if fmt == 'jsonlines' else fmt}"
    if not options.get("overwrite") and os.path.isfile(path) and os.path.getsize(path) > 0:
        return (f"-o {path}: the file exists and scrapy-websim never appends a second result to it "
                f"(it would no longer be valid). Use -O {path} to overwrite it, or another name")
    return ""


def _feeds_to_output(settings: Any, kept: Dict[Any, Any], paths: List[str]) -> None:
    """``FEEDS`` without the result feeds, whose paths go to ``WEBSIM_OUTPUT``."""
    priority = settings.getpriority("FEEDS") or 0
    settings.set("FEEDS", kept, priority=priority)
    output = settings.get("WEBSIM_OUTPUT") or ()
    output = [p.strip() for p in output.split(",") if p.strip()] if isinstance(output, str) else list(output)
    settings.set("WEBSIM_OUTPUT", [*output, *(p for p in paths if p not in output)],
                 priority=max(priority, settings.getpriority("WEBSIM_OUTPUT") or 0))


#: Where a setting was set, by its priority (what the user set: settings.py, a spider, the command line).
_WHERE = ((40, "the command line"), (30, "the spider's custom_settings"), (20, "settings.py"))


def _where(settings: Any, name: str) -> str:
    priority = settings.getpriority(name) or 0
    return next((where for at, where in _WHERE if priority >= at), "")


def slowing_settings(settings: Any, websim: Any, own: bool = True) -> List[str]:
    """One line per setting of the user's (``settings.py`` or a spider's ``custom_settings``; a
    value given on the command line is taken as meant for this run) that slows websim down or
    changes its result, with the value websim would use instead (``own``: the crawl is the
    ``websim`` spider's, whose retries are websim's business; a user's spider keeps its own)."""
    from scrapy.settings import SETTINGS_PRIORITIES, default_settings  # noqa: PLC0415

    project, cmdline = SETTINGS_PRIORITIES["project"], SETTINGS_PRIORITIES["cmdline"]

    def user(name: str) -> bool:
        return project <= (settings.getpriority(name) or 0) < cmdline

    ramp = f"websim would start at {min(PER_HOST_START, websim.per_host_max)} and rise to {websim.per_host_max} " \
           "while the host answers as fast"
    checks: List[Tuple[str, bool, str]] = [
        ("CONCURRENT_REQUESTS_PER_DOMAIN", settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") < websim.per_host_max,
         f"renders at most {settings.getint('CONCURRENT_REQUESTS_PER_DOMAIN')} page(s) of a host at a time; {ramp}"),
        ("CONCURRENT_REQUESTS_PER_IP", 0 < settings.getint("CONCURRENT_REQUESTS_PER_IP") < websim.per_host_max,
         f"renders at most {settings.getint('CONCURRENT_REQUESTS_PER_IP')} page(s) of an address at a time; {ramp}"),
        ("DOWNLOAD_DELAY", settings.getfloat("DOWNLOAD_DELAY") > 0,
         "waits between two pages of a host; websim would use 0"),
        ("AUTOTHROTTLE_ENABLED", settings.getbool("AUTOTHROTTLE_ENABLED"),
         "adds delays by the host's latency; websim would leave it off"),
        ("CONCURRENT_REQUESTS", settings.getint("CONCURRENT_REQUESTS") < max_pages_in_flight(),
         f"renders fewer pages at once than this machine can ({max_pages_in_flight()}); websim would leave "
         f"Scrapy's {default_settings.CONCURRENT_REQUESTS}"),
        ("ROBOTSTXT_OBEY", settings.getbool("ROBOTSTXT_OBEY"),
         "fetches robots.txt first and renders none of the pages it disallows; websim would use False"),
        ("RETRY_ENABLED", own and settings.getbool("RETRY_ENABLED"),
         "renders a page that failed again (RETRY_TIMES); websim would use False"),
        ("DOWNLOAD_TIMEOUT", settings.getfloat("DOWNLOAD_TIMEOUT") < websim.page_timeout,
         f"stops a page before its budget; websim would use {websim.page_timeout:g} (WEBSIM_PAGE_TIMEOUT)"),
    ]
    return [f"your {name} = {settings.get(name)!r} ({_where(settings, name)}) {what}"
            for name, slows, what in checks if slows and user(name)]


def _wire_redis(settings: Any, websim: Any) -> None:
    """``WEBSIM_REDIS_URL``: scrapy-redis's scheduler on the job's queue, with leases (distributed mode)."""
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
    # A host's pages in flight start at 2 and rise while it answers as fast (scrapy_websim.crawler.perhost),
    # unless the user set the per-host politeness (docs/scanning.md).
    _set_if_default(settings, "CONCURRENT_REQUESTS_PER_DOMAIN", min(PER_HOST_START, websim.per_host_max))
    _setdefault_component(settings, "EXTENSIONS", "scrapy_websim.crawler.perhost.PerHostRamp", 500)
    if settings.get("DOWNLOADER") == "scrapy.core.downloader.Downloader":  # the user's own one wins
        _set_if_default(settings, "DOWNLOADER", "scrapy_websim.crawler.downloader.WebsimDownloader")


def _abort_requests(settings: Any, websim: Any) -> None:
    """``PLAYWRIGHT_ABORT_REQUEST``: websim's network policy in the browser, then the user's own."""
    from scrapy_websim.render.handler import AbortRequest  # noqa: PLC0415 - imports scrapy-playwright

    user = settings.get("PLAYWRIGHT_ABORT_REQUEST")
    if not isinstance(user, AbortRequest):
        settings.set("PLAYWRIGHT_ABORT_REQUEST", AbortRequest(websim.deny_networks, user or None),
                     priority=max(settings.getpriority("PLAYWRIGHT_ABORT_REQUEST") or 0, 15))


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
    """Pages rendered at once: a page spends much of its wall time waiting (network idle, DOM
    quiet) with the CPU free, so 3 per core keep the cores busy (docs/performance.md, "How many
    pages in flight")."""
    return max(4, 3 * (os.cpu_count() or 1))
