"""Pages of one host in flight: start low, rise while the host answers as fast as before.

A list of one site (a sitemap, a crawl with ``follow``) or one where a few hosts hold most URLs
would render only ``PER_HOST_START`` pages at once with a fixed per-host limit, while a page
spends most of its wall time waiting with the CPU free. :class:`PerHostRamp` (an extension the
add-on enables) raises a host's limit, Scrapy's downloader slot ``concurrency``, by one each time a
full round of its pages (as many as the limit) came back with a time to first byte no worse than
the host's best round so far (x 1.5 + 50 ms) while more of its pages were waiting, up to
``WEBSIM_PER_HOST_MAX``. A slower round (x 2 + 200 ms) takes one place away again; a 429 or 503
answer, or a request that failed (timeout, refused, reset), halves the limit (at least 1).

The time to first byte is the main document's (``PerformanceNavigationTiming.responseStart`` of
the rendered page; ``download_latency`` for pages of Scrapy's own client): what the host's server
took, not how long Chromium took to render the page on a busy machine.

It is off (the host's limit stays ``CONCURRENT_REQUESTS_PER_DOMAIN``) when the user chose the
politeness: ``CONCURRENT_REQUESTS_PER_DOMAIN`` (``--per-host``), ``CONCURRENT_REQUESTS_PER_IP``,
``DOWNLOAD_DELAY`` (``--delay``) or ``AUTOTHROTTLE_ENABLED`` (``--autothrottle``) set anywhere
but Scrapy's defaults; and for a host with its own ``DOWNLOAD_SLOTS`` entry.
"""

from __future__ import annotations

import logging
import statistics
import weakref
from typing import Any, Dict, List, Optional

logger = logging.getLogger(__name__)

#: A host's pages in flight at first (docs/scanning.md).
PER_HOST_START = 2
#: A round is "as fast as before" when its median time to first byte is at most this many times
#: the host's best round plus :data:`SAME_SLACK` seconds (a busy machine adds a few ms to any answer).
SAME_FACTOR, SAME_SLACK = 1.5, 0.05
#: A round slower than this many times the best plus :data:`SLOWER_SLACK` seconds gives a place back.
SLOWER_FACTOR, SLOWER_SLACK = 2.0, 0.2
#: Answers that say the host is overloaded (Too Many Requests, Service Unavailable).
OVERLOAD_STATUSES = (429, 503)


class HostRamp:
    """The limit of one host (no Scrapy here): fed each finished request, it says the new limit."""

    def __init__(self, start: int, ceiling: int) -> None:
        self.limit = start
        self.ceiling = ceiling
        self.best: Optional[float] = None
        self.round: List[float] = []

    def answered(self, ttfb: Optional[float], status: int, waiting: bool) -> int:
        """A response (``ttfb`` seconds, ``None`` when unknown) with ``status``; ``waiting``: more
        pages of the host wait for a place."""
        if status in OVERLOAD_STATUSES:
            return self.overloaded()
        if ttfb is None or ttfb < 0:
            return self.limit
        self.round.append(ttfb)
        if len(self.round) < max(2, self.limit):
            return self.limit
        median = statistics.median(self.round)
        self.round = []
        if self.best is None or median < self.best:
            self.best = median
        if median > self.best * SLOWER_FACTOR + SLOWER_SLACK:
            self.limit = max(1, self.limit - 1)
        elif median <= self.best * SAME_FACTOR + SAME_SLACK and waiting:
            self.limit = min(self.ceiling, self.limit + 1)
        return self.limit

    def failed(self) -> int:
        """A request of the host got no response (timeout, refused, reset, crash)."""
        return self.overloaded()

    def overloaded(self) -> int:
        self.limit = max(1, self.limit // 2)
        self.round = []
        return self.limit


def ramp_allowed(settings: Any, per_host_max: int) -> bool:
    """True unless the user set the per-host politeness themselves (see the module docstring)."""
    from scrapy.settings import SETTINGS_PRIORITIES  # noqa: PLC0415

    default = SETTINGS_PRIORITIES["default"]
    if (settings.getpriority("CONCURRENT_REQUESTS_PER_DOMAIN") or 0) > SETTINGS_PRIORITIES["addon"]:
        return False
    if (settings.getpriority("CONCURRENT_REQUESTS_PER_IP") or 0) > default or settings.getbool("AUTOTHROTTLE_ENABLED"):
        return False
    if settings.getfloat("DOWNLOAD_DELAY") or (settings.getpriority("DOWNLOAD_DELAY") or 0) > default:
        return False
    return per_host_max > settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")


def ttfb_of(request: Any, response: Any) -> Optional[float]:
    """Seconds to the main document's first byte: the rendered page's navigation timing, else
    Scrapy's ``download_latency``."""
    from scrapy_websim.render.capture import capture  # noqa: PLC0415

    for pm in request.meta.get("playwright_page_methods") or ():
        if getattr(pm, "method", None) is capture:
            timings = (pm.result or {}).get("timings") if isinstance(pm.result, dict) else None
            return timings[0] / 1000.0 if timings and timings[0] is not None else None
    if "playwright" in (getattr(response, "flags", None) or ()):
        return None  # a rendered page without our capture: its latency is the whole render
    latency = request.meta.get("download_latency")
    return float(latency) if latency is not None else None


class PerHostRamp:
    """The extension: one :class:`HostRamp` per downloader slot (host)."""

    def __init__(self, crawler: Any, ceiling: int) -> None:
        self.crawler = crawler
        self.start = crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        self.ceiling = ceiling
        self.own_slots = set(crawler.settings.getdict("DOWNLOAD_SLOTS"))
        self.hosts: Dict[str, HostRamp] = {}
        self.answered: "weakref.WeakSet[Any]" = weakref.WeakSet()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PerHostRamp":
        from scrapy import signals  # noqa: PLC0415
        from scrapy.exceptions import NotConfigured  # noqa: PLC0415

        from scrapy_websim.config import WebsimConfig  # noqa: PLC0415

        settings = crawler.settings
        ceiling = WebsimConfig.from_crawler(crawler).per_host_max
        if not ramp_allowed(settings, ceiling):
            raise NotConfigured  # the per-host limit is the user's (the add-on says so at start, with the numbers)
        pages = settings.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT")
        if pages > 0:  # more places than the browser renders pages at once only wait in the handler
            ceiling = max(settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"), min(ceiling, pages))
        ext = cls(crawler, ceiling)
        crawler.signals.connect(ext.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(ext.request_left_downloader, signal=signals.request_left_downloader)
        return ext

    def _slot(self, request: Any) -> tuple:
        key = request.meta.get("download_slot")
        engine = getattr(self.crawler, "engine", None)
        slots = getattr(getattr(engine, "downloader", None), "slots", {})
        if key is None or key in self.own_slots or key not in slots:
            return key, None
        return key, slots[key]

    def _apply(self, key: str, slot: Any, limit: int, why: str) -> None:
        if limit == slot.concurrency:
            return
        log = logger.info if limit < slot.concurrency else logger.debug
        log("websim: %s: %d pages at once (was %d; %s)", key, limit, slot.concurrency, why)
        slot.concurrency = limit
        self.crawler.stats.max_value("websim/per_host_max", limit)

    def _ramp(self, key: str) -> HostRamp:
        ramp = self.hosts.get(key)
        if ramp is None:
            ramp = self.hosts[key] = HostRamp(self.start, self.ceiling)
        return ramp

    def response_downloaded(self, response: Any, request: Any, spider: Any = None) -> None:
        self.answered.add(request)
        key, slot = self._slot(request)
        if slot is None:
            return
        ramp = self._ramp(key)
        ttfb = ttfb_of(request, response)
        limit = ramp.answered(ttfb, int(response.status), waiting=bool(slot.queue))
        why = (f"HTTP {response.status}" if response.status in OVERLOAD_STATUSES
               else f"time to first byte {ttfb * 1000:.0f} ms, best round {(ramp.best or 0) * 1000:.0f} ms"
               if ttfb is not None else "")
        self._apply(key, slot, limit, why)

    def request_left_downloader(self, request: Any, spider: Any = None) -> None:
        if request in self.answered:
            self.answered.discard(request)
            return
        key, slot = self._slot(request)
        if slot is not None:
            self._apply(key, slot, self._ramp(key).failed(), "a request failed")
