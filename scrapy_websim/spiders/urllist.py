"""The ``websim`` spider: render every URL of a list (optionally following links within the start
URLs' sites)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, AsyncIterator, Dict, Iterable, Iterator, List, Optional, Set, Tuple
from urllib.parse import urlsplit

import numpy as np
import scrapy
from scrapy import signals
from scrapy.http import Request, Response, TextResponse
from scrapy.settings import SETTINGS_PRIORITIES
from w3lib.url import canonicalize_url

from scrapy_websim.config import FOLLOW_MAX_PAGES, WebsimConfig, get_bool, get_number
from scrapy_websim.config_values import ConfigError
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.match.soft404 import probe_urls
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.normalize import link_target, url_origin
from scrapy_websim.core.urls.url_list import Entry, UrlList, UrlListError, open_list, parse_ports
from scrapy_websim.crawler import events
from scrapy_websim.crawler.addon import Addon
from scrapy_websim.crawler.items import PageItem
from scrapy_websim.render import record_from_response, render_meta
from scrapy_websim.render.middlewares import RECORDED, failure_record

logger = logging.getLogger(__name__)

#: With ``follow``: pages discovered at most, unless ``max_pages`` says otherwise (0 = no limit).
DEFAULT_MAX_PAGES = FOLLOW_MAX_PAGES
NO_URLS = ("the websim spider needs a URL list: scrapy crawl websim -a urls=urls.txt (a .txt file, one URL per "
           "line) or -a urls=https://a.example,https://b.example")


def site_of(url: str) -> Tuple[str, str]:
    """``(host[:port], folder)`` of a start URL: links are followed within the folder of the
    start URL on its host (``https://h/docs/16/index.html`` -> ``("h", "/docs/16/")``; ``https://h/``
    -> the whole host), as ``wget --no-parent`` does."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return parts.netloc.lower(), path[:path.rfind("/") + 1] or "/"


def _narrowest(sites: Iterable[Tuple[str, str]]) -> Dict[str, Tuple[str, ...]]:
    """host -> the folders to follow on it, none inside another."""
    by_host: Dict[str, List[str]] = {}
    for host, folder in sites:
        by_host.setdefault(host, []).append(folder)
    out: Dict[str, Tuple[str, ...]] = {}
    for host, folders in by_host.items():
        kept: List[str] = []
        for folder in sorted(set(folders)):
            if not any(folder.startswith(k) for k in kept):
                kept.append(folder)
        out[host] = tuple(kept)
    return out


class UrlListSpider(scrapy.Spider):
    """``scrapy crawl websim -a urls=urls.txt -o result.json``

    Arguments: ``urls`` (a ``.txt`` file, one URL per line, blank lines and ``#`` comments skipped;
    ``-`` for standard input; an nmap XML report; or comma-separated URLs), ``ports`` (bare
    ``host`` / ``host:port`` lines are expanded with these, e.g. ``80,443,8080,8443``), ``follow``
    (``1`` to also render links found on the pages within a start URL's site: its host and the
    folder of its path, see :func:`site_of`), ``max_pages`` (with ``follow``: stop discovering after
    this many pages; default :data:`DEFAULT_MAX_PAGES`, 0 = no limit).

    A missing or unreadable ``urls`` is a one-line error: the spider renders nothing and the
    extension stops the crawl (``websim_usage_error``). An empty list is an empty result.

    The list is read as a stream (:class:`~scrapy_websim.core.urls.url_list.UrlList`): requests are
    made as the scheduler has room for them, so a list of a million lines starts rendering at once
    and is never held in memory.
    """

    name = "websim"
    #: set when the spider's arguments are unusable: the crawl renders nothing and fails with it
    websim_usage_error: str = ""

    def __init__(self, urls: Optional[str] = None, follow: Any = False, max_pages: Any = DEFAULT_MAX_PAGES,
                 *args: Any, ports: Any = None, entries: Optional[List[Entry]] = None, inputs: Optional[UrlList] = None,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        #: the input list: entries given by the caller (a list), else ``inputs``, read as a stream
        self.entries: Optional[List[Entry]] = None
        self.inputs: Optional[UrlList] = inputs
        try:
            if entries is not None:
                self.entries = list(entries)
            elif inputs is None:
                if urls is None:
                    raise UrlListError(NO_URLS)
                self.inputs = open_list(urls, ports=parse_ports(ports) if ports else ())
            self.follow = get_bool({"follow": follow}, "follow", False)
            self.max_pages = get_number({"max_pages": max_pages}, "max_pages", 0, 0, 100_000_000, integer=True)
        except ConfigError as exc:
            self.websim_usage_error = f"spider argument {exc}"
        except (UrlListError, ValueError) as exc:
            self.websim_usage_error = str(exc)
        if self.websim_usage_error:
            self.entries, self.inputs, self.follow, self.max_pages = [], None, False, 0
        self._sites: Dict[str, Tuple[str, ...]] = {}
        self._input_urls: Any = set()  # with follow: 64-bit digests of the input URLs (see _is_input)
        self._discovered = 0
        self._capped = 0  # links not followed because max_pages was reached
        self._followed: set = set()  # digests of the links followed (a page found again is not new)
        self._room = asyncio.Event()
        if self.follow:
            self._learn_inputs()

    def input_entries(self) -> Iterator[Entry]:
        """The entries of the input list, read as they are asked for."""
        if self.entries is not None:
            return iter(self.entries)
        return self.inputs.entries() if self.inputs is not None else iter(())

    def _learn_inputs(self) -> None:
        """With ``follow``: the start URLs' sites and the input URLs, from one pass over the list
        before the crawl (a link to an input URL is not followed). The URLs are kept as 64-bit
        digests."""
        digests, sites = [], set()
        for entry in self.input_entries():
            if entry.url:
                sites.add(site_of(entry.url))
                digests.append(blake2b64(entry.url))
        self._sites = _narrowest(sites)
        self._input_urls = np.unique(np.array(digests, dtype=np.uint64))

    def _is_input(self, url: str) -> bool:
        known = self._input_urls
        if isinstance(known, set):
            return url in known
        digest = np.uint64(blake2b64(url))
        at = int(np.searchsorted(known, digest))
        return at < len(known) and bool(known[at] == digest)

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        super().update_settings(settings)
        # The spider works without a project: make sure the add-on is on (never removes the user's).
        settings.setdefault_in_component_priority_dict("ADDONS", Addon, 500)
        # at the spider's priority: `scrapy runspider` lays the process's settings (an empty ADDONS
        # at default priority) over the crawler's again, which dropped the add-on
        settings.set("ADDONS", settings.getdict("ADDONS"),
                     priority=max(settings.getpriority("ADDONS") or 0, SETTINGS_PRIORITIES["spider"]))

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        spider = super().from_crawler(crawler, *args, **kwargs)
        if not hasattr(spider, "_room"):  # a subclass with its own __init__
            spider._room = asyncio.Event()
        crawler.signals.connect(spider._room.set, signal=signals.scheduler_empty)
        return spider

    @property
    def config(self) -> WebsimConfig:
        return WebsimConfig.from_crawler(self.crawler)

    async def start(self) -> AsyncIterator[Any]:
        if self.websim_usage_error:
            return  # the extension says why and fails the crawl
            yield  # an async generator all the same
        read = _Counted(self.input_entries())
        registered = events.ask(self.crawler, events.inputs_declared, entries=read)
        probes = ProbeCounter(self.config, registered.probed)
        max_len = self.crawler.settings.getint("URLLENGTH_LIMIT")
        logger.info("websim: rendering the URL list as it is read")
        for entry in registered.pending:
            await self._wait_for_room()
            for request in self._probes(probes.add(entry)):
                yield request
            if entry.error:
                self._record(PageRecord(id=entry.id, url=entry.raw, error=entry.error))
            elif max_len and len(entry.url) > max_len:  # Scrapy would drop it without a word
                self._record(PageRecord(id=entry.id, url=entry.raw, error=(
                    f"URL too long ({len(entry.url)} characters; URLLENGTH_LIMIT is {max_len})")))
            else:
                request = self.render_request(entry.url, entry.id, entry.raw)
                if entry.expanded_from:
                    request.meta["websim_expanded_from"] = entry.expanded_from
                if entry.fallback_url:
                    request.meta["websim_fallback_url"] = entry.fallback_url
                yield request
        for request in self._probes(probes.finish()):
            yield request
        if not read.count:
            logger.warning("websim: the URL list holds no URL: the result is empty")

    async def _wait_for_room(self) -> None:
        """Hold the next request while the downloader is full (Scrapy's lazy start requests): the
        list is read as fast as pages are rendered, not into the scheduler's memory."""
        engine = getattr(self.crawler, "engine", None)
        while engine is not None and engine.running and engine.needs_backout():
            self._room.clear()
            try:
                await asyncio.wait_for(self._room.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    def _probes(self, origins: Iterable[Tuple[str, str]]) -> Iterator[Request]:
        """Soft-404 probes (``core/match/soft404.py``): ``WEBSIM_SOFT404_PROBES`` random paths of
        each origin (with its http:// fallback origin for a port of unknown scheme)."""
        config = self.config
        for origin, fallback in origins:
            for url in probe_urls(origin, config.soft404_probes):
                request = self.render_request(url, 0, url)
                request.meta.update(websim_probe=origin, websim_predict=False)
                if fallback:  # the port may speak plain HTTP: probe it as its pages go
                    request.meta["websim_fallback_url"] = fallback + url[len(origin):]
                yield request

    def render_request(self, url: str, record_id: int, raw: str, dont_filter: bool = True) -> Request:
        meta = render_meta(self.config)
        meta.update({"websim_id": record_id, "websim_url": raw})
        return Request(url, callback=self.parse_page, errback=self.on_error, meta=meta, dont_filter=dont_filter)

    def parse_page(self, response: Response) -> Iterator[Any]:
        meta = response.meta
        requested = response.request.url if response.request is not None else response.url
        record, html, screenshot = record_from_response(response, meta.get("websim_id", 0),
                                                        meta.get("websim_url", requested))
        record.expanded_from = meta.get("websim_expanded_from", "")
        record.probe_for = meta.get("websim_probe", "")
        events.ask(self.crawler, events.page_captured,
                           page=PageItem(record=record, html=html, screenshot=screenshot), spider=self)
        if record.probe_for:
            return  # a soft-404 probe: its links are not the site's
        if self.follow and isinstance(response, TextResponse) and 200 <= response.status < 300:
            yield from self.follow_links(response)

    def _record(self, record: PageRecord) -> None:
        events.ask(self.crawler, events.page_recorded, record=record)

    def in_site(self, url: str) -> bool:
        """Whether a link stays within a start URL's site (:func:`site_of`)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        path = parts.path or "/"
        return any(path.startswith(folder) for folder in self._sites.get(parts.netloc.lower(), ()))

    def follow_links(self, response: TextResponse) -> Iterator[Request]:
        for href in response.css("a::attr(href)").getall():
            url = link_target(response.urljoin(href.strip()))
            if not self.in_site(url):
                continue
            if self._is_input(url):
                continue  # rendered already as an input URL
            # a link found again is not a new page (Scrapy's duplicate filter ignores fragments,
            # which would make every route of an app one request: routes are told apart here)
            route = bool(urlsplit(url).fragment)
            key = blake2b64(canonicalize_url(url, keep_fragments=route))
            if key in self._followed:
                continue
            if self.max_pages and self._discovered >= self.max_pages:
                if not self._capped:
                    logger.warning("websim: %d pages discovered: the page cap (max_pages, --max-pages) is reached; "
                                   "further links are not followed", self.max_pages)
                self._capped += 1
                self.crawler.stats.inc_value("websim/links_over_cap")
                continue
            self._followed.add(key)
            self._discovered += 1
            yield self.render_request(url, 0, url, dont_filter=route)

    def on_error(self, failure: Any) -> Iterator[Any]:
        """A failed download is recorded by the failure middleware, which also retries it without
        the browser or over ``http://`` where that helps; this only records a failure that did not
        pass through the downloader middlewares."""
        request = failure.request
        if not request.meta.get(RECORDED):
            request.meta[RECORDED] = True
            record = failure_record(request, failure.value)
            logger.info("websim: %s failed: %s", request.url, record.error)
            self._record(record)
        return iter(())


class _Counted:
    """An iterator that counts what it yields."""

    def __init__(self, items: Iterator[Any]) -> None:
        self.items, self.count = items, 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.items:
            self.count += 1
            yield item


class ProbeCounter:
    """Which origins get soft-404 probes, as the list is read: those with at least
    ``crawl.soft404_min_urls`` URLs in the list (``WEBSIM_PARAMS``), once each, unless an earlier run
    of the job probed them. Origins are counted as 64-bit digests in batches (numpy: 12 bytes per
    distinct origin, a million hosts fit in a few MB); an origin's probes are made when the batch
    in which it reaches the count is counted, the last ones at the end of the list."""

    BATCH = 20_000

    def __init__(self, config: WebsimConfig, probed: Iterable[str] = ()) -> None:
        self.per_origin = config.soft404_probes
        self.enabled = bool(config.soft404_probes)
        self.threshold = config.soft404_min_urls
        self._keys = np.zeros(0, np.uint64)
        self._counts = np.zeros(0, np.int64)
        self._batch: List[int] = []
        self._names: Dict[int, Tuple[str, str]] = {}  # digest -> (origin, its http:// fallback origin)
        self._done: Set[int] = {blake2b64(origin) for origin in probed}

    def add(self, entry: Entry) -> List[Tuple[str, str]]:
        """Count one entry; ``[(origin, fallback origin)]`` to probe now."""
        if not self.enabled or not entry.url or entry.error:
            return []
        origin = url_origin(entry.url)
        if not origin:
            return []
        digest = blake2b64(origin)
        self._batch.append(digest)
        if digest not in self._names or entry.fallback_url:
            self._names[digest] = (origin, url_origin(entry.fallback_url) if entry.fallback_url else "")
        return self._count() if len(self._batch) >= self.BATCH else []

    def finish(self) -> List[Tuple[str, str]]:
        """The origins to probe that the last entries made."""
        return self._count() if self._batch else []

    def _count(self) -> List[Tuple[str, str]]:
        keys, counts = np.unique(np.array(self._batch, dtype=np.uint64), return_counts=True)
        merged = np.concatenate([self._keys, keys])
        totals = np.concatenate([self._counts, counts])
        self._keys, inverse = np.unique(merged, return_inverse=True)
        self._counts = np.bincount(inverse, weights=totals).astype(np.int64)
        reached = self._keys[self._counts >= self.threshold]
        found = []
        for digest in keys[np.isin(keys, reached)].tolist():
            if digest not in self._done:
                self._done.add(digest)
                found.append(self._names[digest])
        self._batch.clear()
        self._names.clear()
        if found:
            logger.info("websim: soft-404 calibration: %d random path(s) for each of %d more origins",
                        self.per_origin, len(found))
        return found
