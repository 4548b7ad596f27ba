"""Stable-page wait and capture, run inside scrapy-playwright's page lifecycle.

Two hooks plug into scrapy-playwright without replacing its download handler:

* :func:`init_page` is the ``playwright_page_init_callback``: it runs before ``page.goto`` and
  attaches a :class:`NetworkTracker` (Playwright's request events) and the viewport.
* :func:`capture` is a callable ``PageMethod``: it runs after navigation, waits until the page is
  stable (no request in flight for ``network_idle_ms`` *and* ``dom_stable_checks`` consecutive
  checks without a DOM mutation, made in the page, capped at ``stable_timeout``; sooner when the
  page is provably done, see :func:`wait_stable`), then takes the title, the navigation timings
  and a viewport screenshot. Its result dict lands in ``PageMethod.result``.

scrapy-playwright then reads ``page.content()`` (the rendered HTML, after our wait) and closes the
page itself, also on errors, so no page can leak.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import re
import time
import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import mmh3

from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.types import is_html_type
from scrapy_websim.render.guard import BLOCKED_HEADER, ERROR_HEADER, failure_for, guard_reason
from scrapy_websim.render.pagedata import DataLog
from scrapy_websim.render.scan import add_cookies, cdp_session, tls_state, watch_tls

logger = logging.getLogger(__name__)

# Installs the DOM mutation counter of the stable-page checks once per document: child lists,
# text and the attributes that show or swap content. Counting costs the renderer nothing, where
# serialising the document (outerHTML) and measuring its text (innerText forces a layout) on every
# check costs renderer CPU that grows with the page.
_DOM_COUNTER_JS = """
  let s = window.__websimDom;
  if (!s) {
    s = window.__websimDom = {n: 0};
    new MutationObserver((records) => { s.n += records.length; }).observe(document, {
      childList: true, subtree: true, characterData: true,
      attributes: true, attributeFilter: ['hidden', 'src', 'href', 'open', 'value']});
  }"""

# DOM quiet wait, in the page: each call waits, on the page's timers, until ``quiet``
# consecutive intervals of ``interval`` ms pass with no mutation and no readyState change (true),
# or ``budget`` ms pass (false). One call per wait, where asking every interval cost a round trip
# to the renderer each. A navigation that replaces the document fails the call (the caller
# starts again).
_DOM_QUIET_JS = """async ([quiet, interval, budget]) => {""" + _DOM_COUNTER_JS + """
  const w = window.__websimWatch;
  const sleep = w ? w.sleep : (ms) => new Promise((r) => setTimeout(r, ms));
  const start = performance.now();
  let last = s.n + ':' + document.readyState, still = 0;
  while (still < quiet) {
    if (performance.now() - start >= budget) return false;
    await sleep(interval);
    const now = s.n + ':' + document.readyState;
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return true;
}"""

# Runs before any script of each document of a websim tab: keeps the page's pending timers
# (setTimeout, setInterval), animation frames and idle callbacks, so the stable-page wait can tell
# a page that is done (nothing left that could change it soon) from one that will still change.
# The wrappers call the browser's own functions and look like them (``toString``); the waits of
# the stable-page checks use the browser's own setTimeout (``sleep``), so they are not counted.
WATCH_JS = """(() => {
  if (window.__websimWatch) return;
  const timeouts = new Map(), intervals = new Map(), frames = new Set(), idles = new Set();
  const own = {setTimeout, clearTimeout, setInterval, clearInterval,
               requestAnimationFrame: window.requestAnimationFrame,
               cancelAnimationFrame: window.cancelAnimationFrame,
               requestIdleCallback: window.requestIdleCallback, cancelIdleCallback: window.cancelIdleCallback};
  const now = () => performance.now();
  const looks = (wrapper, original) => {
    const text = Function.prototype.toString.call(original);
    Object.defineProperty(wrapper, 'toString', {value: () => text, configurable: true, writable: true});
    Object.defineProperty(wrapper, 'name', {value: original.name, configurable: true});
    return wrapper;
  };
  const watch = {
    sleep: (ms) => new Promise((r) => own.setTimeout.call(window, r, ms)),
    // true when no timer is due within ``horizon`` ms and no frame or idle callback is pending
    quiet(horizon) {
      const t = now(), until = t + horizon;
      if (frames.size || idles.size) return false;
      for (const due of timeouts.values()) if (due <= until) return false;
      for (const [since, every] of intervals.values()) {
        const period = Math.max(every, 4);
        if (since + period * Math.max(1, Math.ceil((t - since) / period)) <= until) return false;
      }
      return true;
    },
  };
  Object.defineProperty(window, '__websimWatch', {value: watch});
  window.setTimeout = looks(function (fn, ms, ...rest) {
    if (typeof fn !== 'function') return own.setTimeout.call(this, fn, ms, ...rest);
    let id;
    id = own.setTimeout.call(this, function () { timeouts.delete(id); return fn.apply(this, arguments); },
                             ms, ...rest);
    timeouts.set(id, now() + (Number(ms) || 0));
    return id;
  }, own.setTimeout);
  window.setInterval = looks(function (fn, ms, ...rest) {
    const id = own.setInterval.call(this, fn, ms, ...rest);
    intervals.set(id, [now(), Number(ms) || 0]);
    return id;
  }, own.setInterval);
  const clear = (original) => looks(function (id) {
    timeouts.delete(id);
    intervals.delete(id);
    return original.call(this, id);
  }, original);
  window.clearTimeout = clear(own.clearTimeout);
  window.clearInterval = clear(own.clearInterval);
  const callbacks = (request, cancel, pending) => {
    if (typeof own[request] !== 'function') return;
    window[request] = looks(function (fn, ...rest) {
      if (typeof fn !== 'function') return own[request].call(this, fn, ...rest);
      let id;
      id = own[request].call(this, function () { pending.delete(id); return fn.apply(this, arguments); }, ...rest);
      pending.add(id);
      return id;
    }, own[request]);
    window[cancel] = looks(function (id) { pending.delete(id); return own[cancel].call(this, id); }, own[cancel]);
  };
  callbacks('requestAnimationFrame', 'cancelAnimationFrame', frames);
  callbacks('requestIdleCallback', 'cancelIdleCallback', idles);
})();"""

# Is the page done? True when its load event has run, no DOM mutation happens for ``interval`` ms
# and then no timer is due within ``horizon`` ms (the time the network-idle wait would still take)
# and no animation frame or idle callback is pending.
_DONE_JS = """async ([interval, horizon]) => {
  const w = window.__websimWatch;
  const nav = performance.getEntriesByType('navigation')[0];
  if (!w || !nav || !(nav.loadEventEnd > 0)) return false;""" + _DOM_COUNTER_JS + """
  const before = s.n;
  await w.sleep(interval);
  return s.n === before && w.quiet(horizon);
}"""

#: Rendered HTML above this many characters is cut here (a 50 MB page or a million nodes would
#: otherwise cost hundreds of MB in this process); the page's own document is emptied so that
#: scrapy-playwright's ``page.content()`` stays cheap. A document that is not well-formed UTF-16 (a
#: script can put lone surrogates in its text, which no UTF-8 output can hold) is handed over the
#: same way, each lone surrogate replaced by U+FFFD, so that ``page.content()`` cannot fail on it.
#: The same call stops whatever still loads.
MAX_HTML_CHARS = 5_000_000

_CUT_HTML_JS = """(max) => {
  window.stop();
  const d = document.documentElement;
  if (!d) return null;
  const html = d.outerHTML;
  const wellFormed = (s) => (typeof s.isWellFormed === 'function' ? s.isWellFormed()
    : !/[\\uD800-\\uDFFF]/.test(s.replace(/[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]/g, '')));
  if (html.length <= max && wellFormed(html)) return null;
  d.innerHTML = '';
  const kept = html.slice(0, max);
  const lone = /[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]/g;
  return [wellFormed(kept) ? kept : kept.replace(lone, '\\uFFFD'), html.length];
}"""

# After two animation frames (so what the wait saw is painted; at most 250 ms, a page may stop
# its frames): the navigation timings.
_TIMINGS_JS = """async () => {
  await Promise.race([new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
                      new Promise((r) => setTimeout(r, 250))]);
  const e = performance.getEntriesByType('navigation')[0];
  if (!e) return null;
  return [e.responseStart, e.domContentLoadedEventEnd, e.loadEventEnd];
}"""


@dataclass(frozen=True)
class CaptureOptions:
    """What a render takes from the crawl's :class:`WebsimConfig` (``render.capture_options``); the
    defaults are the config's."""

    viewport: tuple = WebsimConfig.viewport
    stable_timeout: float = WebsimConfig.stable_timeout
    network_idle_ms: int = WebsimConfig.network_idle_ms
    dom_stable_checks: int = WebsimConfig.dom_stable_checks
    dom_check_interval_ms: int = WebsimConfig.dom_check_interval_ms
    #: End the wait as soon as the page is provably done (:func:`wait_stable`).
    stable_early: bool = WebsimConfig.stable_early
    screenshot: bool = True
    #: A PNG screenshot (``WEBSIM_SCREENSHOTS_DIR`` keeps them); otherwise a JPEG, all the pHash and
    #: the report's thumbnail need (:data:`SCREENSHOT_JPEG_QUALITY`).
    png: bool = True
    cookies: str = WebsimConfig.cookies  # WEBSIM_COOKIES, set in the page's context before navigation
    favicon: bool = WebsimConfig.favicon  # WEBSIM_FAVICON: hash the page's favicon (once per favicon URL and crawl)


class NetworkTracker:
    """Counts requests in flight from Playwright's events, and when the last one started or ended.

    Times come from one monotonic clock (the event loop's), so idle time is measured correctly
    (the reference system compared page-relative with epoch times and never waited). It also
    follows the main frame's navigations (redirect hops, meta refreshes, script navigations) and
    keeps why the last one failed, if it did (:func:`navigation_failure`).
    """

    #: Main-frame navigations kept per page (a redirect or refresh loop stops growing the list here).
    MAX_NAVIGATIONS = 50

    def __init__(self, page: Any) -> None:
        self.in_flight: set = set()
        self.last_activity = time.monotonic()
        self.main_response_headers: Optional[Dict[str, str]] = None
        self.main_status: Optional[int] = None
        self.main_url = ""
        self.navigations: List[str] = []
        #: the main frame's latest navigation request (a redirect hop is a request of its own)
        self.last_navigation: Any = None
        #: ``(url, why, by_guard)`` of the main frame's last navigation that got no page of its own
        self.failed_navigation: Optional[Tuple[str, str, bool]] = None
        #: navigation URL -> why websim's route refused it (``WEBSIM_DENY_NETWORKS``, a scheme)
        self.blocked: Dict[str, str] = {}
        #: requests for data a script made (XHR, fetch, event streams, WebSockets): a page that made
        #: none shows what its document and its static files say
        self.data_requests = 0
        #: the answers to those requests, when they can be fetched again (render/pagedata.py)
        self.data_log = DataLog()
        page.on("request", self._on_request)
        page.on("websocket", self._on_websocket)
        page.on("requestfinished", self._on_finished)
        page.on("requestfailed", self._on_failed)
        page.on("response", self._on_response)
        self._page_ref = weakref.ref(page)

    def reset(self) -> None:
        """Forget the previous page of a kept tab (render/tabs.py) before its next navigation."""
        self.in_flight.clear()
        self.last_activity = time.monotonic()
        self.main_response_headers = None
        self.main_status = None
        self.main_url = ""
        self.navigations = []
        self.last_navigation = None
        self.failed_navigation = None
        self.blocked = {}
        self.data_requests = 0
        self.data_log.reset()

    def _main_navigation(self, request: Any) -> bool:
        page = self._page_ref()
        return page is not None and request.frame == page.main_frame and request.is_navigation_request()

    def _on_websocket(self, _websocket: Any) -> None:
        self.data_requests += 1
        self.data_log.not_checkable()

    def _on_request(self, request: Any) -> None:
        self.in_flight.add(id(request))
        self.last_activity = time.monotonic()
        try:
            if self._main_navigation(request):
                self.last_navigation = request
                if len(self.navigations) < self.MAX_NAVIGATIONS:
                    self.navigations.append(request.url)
        except Exception:  # noqa: BLE001 - a detached frame must not break the crawl
            pass
        with contextlib.suppress(Exception):  # a request without a type (a detached frame's)
            if request.resource_type in _DATA_TYPES:
                self.data_requests += 1
                self.data_log.requested(request)

    def _on_done(self, request: Any) -> None:
        self.in_flight.discard(id(request))
        self.last_activity = time.monotonic()

    def _on_finished(self, request: Any) -> None:
        self._on_done(request)
        with contextlib.suppress(Exception):
            if request.resource_type in _DATA_TYPES:
                self.data_log.finished(request)

    def _on_failed(self, request: Any) -> None:
        self._on_done(request)
        try:
            # the latest navigation only: a document whose loading a newer navigation cut off
            # (a script's location change while it still loads) fails too, with ERR_ABORTED
            if request is self.last_navigation and self._main_navigation(request):
                self.failed_navigation = (request.url, str(request.failure or ""), False)
        except Exception:  # noqa: BLE001
            pass

    def _on_response(self, response: Any) -> None:
        try:
            page = self._page_ref()
            if page is not None and response.frame == page.main_frame and response.request.is_navigation_request():
                self.main_response_headers = response.headers
                self.main_status = response.status
                self.main_url = response.url
                refused = guard_reason(response.headers.get(BLOCKED_HEADER.lower())
                                       or response.headers.get(ERROR_HEADER.lower()))
                if refused:  # the guard's answer, not the host's: no connection, or a denied network
                    self.failed_navigation = (response.url, refused, True)
        except Exception:  # noqa: BLE001 - a detached frame must not break the crawl
            pass

    def idle_for(self) -> float:
        """Seconds with no request in flight (0 while any request is in flight)."""
        if self.in_flight:
            return 0.0
        return time.monotonic() - self.last_activity


_trackers: "weakref.WeakKeyDictionary[Any, NetworkTracker]" = weakref.WeakKeyDictionary()

#: Chromium's failure for an HTTP error (4xx, 5xx) answered with an empty body: it shows its own
#: error page instead, but the answer is the server's, with its status (:func:`empty_error_answer`).
EMPTY_ERROR_FAILURE = "net::ERR_HTTP_RESPONSE_CODE_FAILURE"

#: The page Chromium shows in place of one it could not load (a refused connection, a failed DNS
#: lookup, a request the route aborted): its title is the host, its text Chromium's own.
CHROME_ERROR_PAGE = "chrome-error://"


def note_blocked(page: Any, url: str, reason: str) -> None:
    """websim's route refused the navigation of ``page`` to ``url`` (``reason``: "blocked: ...")."""
    tracker = _trackers.get(page)
    if tracker is not None and len(tracker.blocked) < NetworkTracker.MAX_NAVIGATIONS:
        tracker.blocked[url] = reason


def navigation_failure(page: Any, tracker: Optional[NetworkTracker]) -> Optional[Tuple[str, str]]:
    """``(the URL the page failed to reach, why)`` when the page ended on no page of its own: a
    navigation after the first document (a meta refresh, a script, a redirect to it) failed, so
    Chromium shows its error page, or the guard answered for a host it could not reach or must not
    (its 502/403 page). None for a page that is its own."""
    try:
        url = page.url
    except Exception:  # noqa: BLE001
        return None
    failed = tracker.failed_navigation if tracker is not None else None
    if tracker is not None and failed is not None and failed[2] and failed[0] in (url, tracker.main_url):
        return failed[0], failed[1]  # the guard's answer is the page, or the one about to replace it
    if not url.startswith(CHROME_ERROR_PAGE):
        return None
    if failed is None:
        return "", "the browser showed its own error page: a navigation of the page failed"
    target, text = failed[0], failed[1]
    return target, (tracker.blocked.get(target) if tracker is not None else None) or net_error_text(text, target)


def same_document(current: str, url: str) -> bool:
    """``url`` is ``current`` or differs from it only in its fragment, with a fragment on either:
    navigating a tab from one to the other is a same-document navigation."""
    base, _, frag = url.partition("#")
    cur_base, _, cur_frag = current.partition("#")
    return bool(base) and base == cur_base and ("#" in url or "#" in current)


def make_init_callback(options: CaptureOptions):
    async def init_page(page: Any, request: Any) -> None:
        tracker = _trackers.get(page)
        if tracker is None:  # a new tab (a kept one has its tracker, TLS watch and viewport)
            _trackers[page] = NetworkTracker(page)
            await watch_tls(page)
            if options.stable_early:
                await page.add_init_script(WATCH_JS)
            width, height = options.viewport
            await page.set_viewport_size({"width": width, "height": height})
        else:
            if same_document(page.url, getattr(request, "url", "")):
                # Chromium only scrolls or fires hashchange for a URL that differs from the
                # tab's current one by its fragment: no load, no response, no headers. A
                # hash-routed app's next route must load like any other page.
                await page.goto("about:blank")
            tracker.reset()
        await add_cookies(page, getattr(request, "url", ""), options.cookies)

    return init_page


def _is_html(content_type: str) -> bool:
    return is_html_type(content_type, empty_is_html=True)


async def wait_stable(page: Any, tracker: Optional[NetworkTracker], options: CaptureOptions) -> Dict[str, Any]:
    """Wait for network idle and DOM stability; returns how long it took and whether it timed out.

    Stable: no request in flight for ``network_idle_ms`` and ``dom_stable_checks`` consecutive DOM
    checks ``dom_check_interval_ms`` apart that saw no change (the checks run in the page:
    ``_DOM_QUIET_JS``), capped at ``stable_timeout``.

    Or, sooner (``stable_early``), a page that is provably done: its load event has run, no request
    has been in flight for one check interval, its DOM did not change in that interval, and no timer
    of the page is due within ``network_idle_ms`` and no animation frame or idle callback is pending
    (``_DONE_JS``, with the timers kept by ``WATCH_JS``). Nothing is left that could change such a
    page before the network-idle wait would have ended; a page still loading, fetching or with a
    timer due soon waits as above. On a static page this is most of the wait (``network_idle_ms``
    after the last request, instead of one check interval).
    """
    start = time.monotonic()
    deadline = start + options.stable_timeout
    interval = options.dom_check_interval_ms / 1000.0
    idle_needed = options.network_idle_ms / 1000.0
    quiet = options.dom_stable_checks - 1  # intervals between the first and the last check
    # The DOM is first asked once the network is nearly idle: the quiet intervals that must follow
    # fit in the idle time still to come, and a page still loading is not asked in vain.
    ask_from = max(0.0, idle_needed - quiet * interval)
    early = options.stable_early and tracker is not None

    def done(timeout: bool, **more: Any) -> Dict[str, Any]:
        return {"stable_ms": round((time.monotonic() - start) * 1000), "stable_timeout": timeout, **more}

    while True:
        now = time.monotonic()
        if tracker is not None and tracker.idle_for() < ask_from and now < deadline:
            if early and not tracker.in_flight:
                if await _provably_done(page, tracker, options, deadline):
                    return done(False, stable_early=True)
                continue
            await asyncio.sleep(min(interval, max(0.01, ask_from - tracker.idle_for())))
            continue
        budget = max(0.0, deadline - now)
        try:  # bounded here too: a page may have replaced setTimeout
            dom_quiet = await asyncio.wait_for(
                page.evaluate(_DOM_QUIET_JS, [quiet, options.dom_check_interval_ms, budget * 1000]), budget + 1.0)
        except Exception:  # noqa: BLE001 - navigation in progress (JS redirect): start again
            dom_quiet = False
            await asyncio.sleep(interval)
        net_idle = tracker is None or tracker.idle_for() >= idle_needed
        if net_idle and dom_quiet:
            return done(False)
        if time.monotonic() >= deadline:
            return done(True)


async def _provably_done(page: Any, tracker: NetworkTracker, options: CaptureOptions, deadline: float) -> bool:
    """One ``_DONE_JS`` check (one check interval long); then no request may have started or ended
    during it either."""
    interval = options.dom_check_interval_ms / 1000.0
    asked = time.monotonic()
    try:
        ok = await asyncio.wait_for(
            page.evaluate(_DONE_JS, [options.dom_check_interval_ms, options.network_idle_ms]), interval + 1.0)
    except Exception:  # noqa: BLE001 - navigation in progress, or a page that stalls its timers
        ok = False
    if not ok:  # the next check one interval after this one began (not before the load event, say)
        await asyncio.sleep(max(0.0, min(asked + interval, deadline) - time.monotonic()))
        return False
    return not tracker.in_flight and tracker.idle_for() >= interval


#: Playwright resource types of a script's requests for data.
_DATA_TYPES = frozenset({"xhr", "fetch", "eventsource", "websocket"})


async def capture(page: Any, options: CaptureOptions) -> Dict[str, Any]:
    """Wait for a stable page, then capture what the features need. Never raises for page errors."""
    tracker = _trackers.get(page)
    result: Dict[str, Any] = {"rendered": False, "tls": tls_state(page)}
    failed = navigation_failure(page, tracker)
    if failed is not None:
        return _failed(result, failed, tracker)
    content_type = ""
    if tracker is not None and tracker.main_response_headers:
        content_type = tracker.main_response_headers.get("content-type", "")
    if page.url == "about:blank" or not _is_html(content_type):
        result["content_type"] = content_type
        return result  # a download (PDF...) or a non-HTML document: recorded, not rendered
    result.update(await wait_stable(page, tracker, options))
    failed = navigation_failure(page, tracker)  # a meta refresh or a script navigated on, and failed
    if failed is not None:
        return _failed(result, failed, tracker)
    result.update(await _page_data(page, tracker))  # before websim's favicon fetch below
    try:
        result["title"] = await page.title()
        result["timings"] = await page.evaluate(_TIMINGS_JS)
        if options.screenshot:
            result["screenshot"] = await take_screenshot(page, options)
        if options.favicon:
            result["favicon_url"], result["favicon_hash"] = await favicon_of(page)
        cut = await page.evaluate(_CUT_HTML_JS, MAX_HTML_CHARS)  # also stops what still loads
        if cut:
            result["html"], result["html_chars"] = cut
        result["rendered"] = True
    except Exception as exc:  # noqa: BLE001
        result["capture_error"] = short_error(exc)
        # Stop whatever is still loading (a hanging image, a long poll): scrapy-playwright waits
        # for the load event after page methods, and the page is captured already.
        try:
            await page.evaluate("() => window.stop()")
        except Exception:  # noqa: BLE001
            pass
    return result


async def _page_data(page: Any, tracker: Optional[NetworkTracker]) -> Dict[str, Any]:
    """The page's own requests for data: how many (-1: not followed), and when there were some,
    their answers when they can be fetched again (render/pagedata.py; else None)."""
    if tracker is None:
        return {"data_requests": -1}
    if not tracker.data_requests:
        return {"data_requests": 0}
    return {"data_requests": tracker.data_requests, "data": await tracker.data_log.data(page.url)}


def recheck(page: Any, result: Any) -> None:
    """After scrapy-playwright has read the page: a navigation that failed once the capture was
    taken (its error page or the guard's answer committed while the page was read) turns the
    capture ``result`` into that failure, as if it had been seen in time."""
    if not isinstance(result, dict) or "navigation_failed" in result or "empty_error" in result:
        return
    tracker = _trackers.get(page)
    failed = navigation_failure(page, tracker)
    if failed is not None:
        _failed(result, failed, tracker)


def _failed(result: Dict[str, Any], failed: Tuple[str, str], tracker: Optional[NetworkTracker]) -> Dict[str, Any]:
    """The capture of a page that ended on no page of its own: where it went and why it failed;
    or, when it went on to an HTTP error with an empty body, that answer (``empty_error``)."""
    target, why = failed
    chain = list(tracker.navigations) if tracker is not None else []
    if target and chain[-1:] != [target]:
        chain.append(target)
    answer = empty_error_answer(target, tracker)
    if answer is not None:
        result["empty_error"] = dict(answer, chain=chain)
    else:
        result["navigation_failed"] = {"url": target, "error": why, "chain": chain}
    return result


def empty_error_answer(target: str, tracker: Optional[NetworkTracker]) -> Optional[Dict[str, Any]]:
    """The server's answer at ``target`` when the main frame's navigation there failed only because
    it was an HTTP error with an empty body (:data:`EMPTY_ERROR_FAILURE`): ``{"url", "status",
    "headers"}``; None for any other failure (no connection, a refused network, the guard's answer)."""
    if tracker is None or not target or tracker.failed_navigation is None:
        return None
    url, why, by_guard = tracker.failed_navigation
    if by_guard or url != target or EMPTY_ERROR_FAILURE not in why:
        return None
    if tracker.main_url != target or (tracker.main_status or 0) < 400:
        return None
    return {"url": target, "status": tracker.main_status, "headers": dict(tracker.main_response_headers or {})}


# The page's icon: the first <link rel="icon"> (``shortcut icon`` too; not ``apple-touch-icon``),
# else /favicon.ico of the document's origin; http(s) only.
_FAVICON_URL_JS = """() => {
  const link = document.querySelector('link[rel~="icon" i][href]');
  const url = link ? link.href : location.origin + '/favicon.ico';
  return /^https?:/i.test(url) ? url : null;
}"""

# The icon's bytes, base64, through the page's own network stack (its proxy, headers, cookies,
# the WEBSIM_DENY_NETWORKS proxy), read as a stream and dropped past ``max`` bytes. null: not an
# image, too large, refused or not answered in 5 s. Playwright aborts every request whose URL ends
# in "/favicon.ico" while requests are routed (scrapy-playwright routes them all), so Chromium's own
# favicon request never reaches the server and that URL is asked with an empty query ("?"), which
# servers answer as the file itself.
_FAVICON_FETCH_JS = """async ([url, max]) => {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 5000);
  try {
    const u = new URL(url);
    if (u.pathname.endsWith('/favicon.ico') && !u.search) { url = u.href.split('#')[0] + '?'; }
    const r = await fetch(url, {credentials: 'include', signal: ctl.signal});
    const type = (r.headers.get('content-type') || '').toLowerCase();
    if (!r.ok || type.includes('html') || !r.body) return null;
    const reader = r.body.getReader();
    const parts = [];
    let size = 0;
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      size += value.length;
      if (size > max) { ctl.abort(); return null; }
      parts.push(value);
    }
    if (!size) return null;
    let s = '';
    for (const part of parts) {
      for (let i = 0; i < part.length; i += 32768) s += String.fromCharCode.apply(null, part.subarray(i, i + 32768));
    }
    return btoa(s);
  } catch (e) {
    return null;
  } finally {
    clearTimeout(timer);
  }
}"""

#: Icons above this size are not hashed (an icon is a few KB; a "favicon" of megabytes is not one).
MAX_FAVICON_BYTES = 1_000_000

#: favicon URL -> its hash (None: none), shared by the pages of a crawl; pages of one origin ask
#: once. Bounded: cleared when it reaches this many URLs.
_FAVICONS: Dict[str, "asyncio.Future[Optional[int]]"] = {}
_MAX_FAVICONS = 100_000


def favicon_hash(data: bytes) -> int:
    """Shodan's favicon hash (``http.favicon.hash``): MurmurHash3 (32-bit, signed, seed 0) of the
    bytes in base64 with a newline every 76 characters (Python's ``base64.encodebytes``)."""
    return mmh3.hash(base64.encodebytes(data))


async def favicon_of(page: Any) -> tuple:
    """``(favicon URL, hash)`` of the page; ``("", None)`` without one. Never raises."""
    try:
        url = await asyncio.wait_for(page.evaluate(_FAVICON_URL_JS), 5)
    except Exception:  # noqa: BLE001
        return "", None
    if not url:
        return "", None
    url = str(url)[:2048]
    future = _FAVICONS.get(url)
    if future is None:
        if len(_FAVICONS) >= _MAX_FAVICONS:
            _FAVICONS.clear()
        future = _FAVICONS[url] = asyncio.get_running_loop().create_future()
        value: Optional[int] = None
        try:
            data = await asyncio.wait_for(page.evaluate(_FAVICON_FETCH_JS, [url, MAX_FAVICON_BYTES]), 6)
            if data:
                value = favicon_hash(base64.b64decode(data))
        except Exception as exc:  # noqa: BLE001 - the page went away: ask again with the next page
            logger.debug("websim: favicon %s not read: %s", url, exc)
            _FAVICONS.pop(url, None)
        future.set_result(value)
    try:
        value = await asyncio.wait_for(asyncio.shield(future), 7)
    except Exception:  # noqa: BLE001
        value = None
    return url, value


#: JPEG quality of the screenshot when no PNG is asked for: its pHash is the PNG's or a few bits
#: away, for less of Chromium's encoding CPU (docs/performance.md, "Where the time goes";
#: ``python bench/screenshot.py``).
SCREENSHOT_JPEG_QUALITY = 80


async def take_screenshot(page: Any, options: CaptureOptions) -> bytes:
    if options.png:
        return await page.screenshot(type="png", full_page=False, timeout=10000)
    session = await cdp_session(page)
    if session is not None:
        # Straight from the compositor: Playwright's page.screenshot also waits for fonts (the
        # stable wait did) and hides the caret with a style sheet in every frame, added and then
        # removed, each a style recalculation of the whole document.
        try:
            shot = await asyncio.wait_for(session.send("Page.captureScreenshot", {
                "format": "jpeg", "quality": SCREENSHOT_JPEG_QUALITY, "optimizeForSpeed": True,
                "captureBeyondViewport": False, "fromSurface": True}), 10)
            return base64.b64decode(shot["data"])
        except asyncio.TimeoutError:
            raise
        except Exception as exc:  # noqa: BLE001 - a detached session: Playwright's way below
            logger.debug("websim: CDP screenshot failed (%s); using page.screenshot", exc)
    return await page.screenshot(type="jpeg", quality=SCREENSHOT_JPEG_QUALITY, full_page=False, timeout=10000)


_ERROR_CODES = {
    "ERR_CONNECTION_REFUSED": "connection refused",
    "ERR_NAME_NOT_RESOLVED": "DNS lookup failed",
    "ERR_NAME_RESOLUTION_FAILED": "DNS lookup failed",
    "ERR_CONNECTION_RESET": "connection reset",
    "ERR_CONNECTION_CLOSED": "connection closed before a response",
    "ERR_EMPTY_RESPONSE": "empty response (connection closed before a response)",
    "ERR_CONNECTION_TIMED_OUT": "connection timed out",
    "ERR_TIMED_OUT": "timed out",
    "ERR_TOO_MANY_REDIRECTS": "too many redirects (redirect loop)",
    "ERR_ADDRESS_UNREACHABLE": "address unreachable",
    "ERR_INTERNET_DISCONNECTED": "network unreachable",
    "ERR_UNSAFE_PORT": "port blocked by the browser (unsafe port)",
    "ERR_INVALID_URL": "invalid URL",
    "ERR_INVALID_RESPONSE": "invalid HTTP response",
    "ERR_INVALID_HTTP_RESPONSE": "invalid HTTP response",
    "ERR_CERT_": "TLS certificate error",
    "ERR_SSL_": "TLS error",
    "ERR_BAD_SSL_CLIENT_AUTH_CERT": "TLS client certificate required",
    "ERR_BLOCKED_BY_CLIENT": "blocked by the browser",
    "ERR_UNSAFE_REDIRECT": "unsafe redirect (to a non-http URL such as file:)",
    "ERR_RESPONSE_HEADERS_TOO_BIG": "response headers too big",
    "ERR_HTTP_RESPONSE_CODE_FAILURE": "HTTP error with no page to show",
    "ERR_CONTENT_LENGTH_MISMATCH": "truncated response (shorter than its Content-Length)",
    "ERR_INCOMPLETE_CHUNKED_ENCODING": "truncated response (incomplete chunked encoding)",
    "ERR_CONTENT_DECODING_FAILED": "content decoding failed (bad gzip/br body)",
    "ERR_TUNNEL_CONNECTION_FAILED": "no connection to the host (refused, unreachable or blocked)",
    "ERR_PROXY_CONNECTION_FAILED": "the proxy refused the connection",
    "ERR_ABORTED": "navigation aborted",
    "ERR_FAILED": "the request failed",
}

#: What Playwright and Twisted say, in words for a user: (what the message or class name holds, what
#: the record says). A timeout is told with its seconds (:func:`_timeout_text`).
_KNOWN_FAILURES = (
    ("page is navigating and changing the content",
     "the page kept navigating (a meta refresh or script redirect loop)"),
    ("Route is already handled", "the page was closed while it still loaded (a request of it was cut off)"),
    ("Target page, context or browser has been closed", "the page was closed before it was captured"),
    ("Target closed", "the page was closed before it was captured"),
    ("Target crashed", "the page's renderer crashed"),
    ("Page crashed", "the page's renderer crashed"),
    ("crashed", "the browser crashed"),
    ("DNSLookupError", "DNS lookup failed"),
    ("ConnectionRefusedError", "connection refused"),
    ("TCPTimedOutError", "connection timed out"),
    ("ResponseNeverReceived", "connection closed before a response"),
    ("ConnectionLost", "connection lost before the response was complete"),
    ("ConnectionDone", "connection closed before a response"),
    ("NoRouteError", "address unreachable"),
)
#: ``Page.goto: `` and the like, which start Playwright's messages; its call log.
_API_PREFIX = re.compile(r"^\s*[A-Z][A-Za-z]*\.[A-Za-z_]+:\s*")
_TIMEOUT = re.compile(r"Timeout (\d+)ms exceeded")


def net_error_text(text: str, url: str = "") -> str:
    """Chromium's ``net::ERR_...`` in ``text`` in words (``"connection refused (ERR_CONNECTION_REFUSED)"``);
    a tunnel the guard could not open says why the guard could not (``failure_for``); ``""`` if
    ``text`` holds no such code."""
    for code, label in _ERROR_CODES.items():
        pos = text.find("net::" + code)
        if pos >= 0:
            full = text[pos + 5:].split()[0].rstrip(".,;:")
            if code in ("ERR_TUNNEL_CONNECTION_FAILED", "ERR_EMPTY_RESPONSE") and url:
                reason = failure_for(url)
                if reason:
                    return reason
            return f"{label} ({full})"
    return ""


def _timeout_text(text: str) -> str:
    match = _TIMEOUT.search(text)
    seconds = f" after {int(match.group(1)) / 1000:g} s" if match else ""
    if "goto" in text.split(":", 1)[0] or "navigat" in text[:80].lower():
        return f"timed out{seconds}: the page did not load (WEBSIM_HTTP_TIMEOUT)"
    return f"timed out{seconds}"


def short_error(exc: BaseException, url: str = "") -> str:
    """A short message for a failed page, written for a user: what failed, not the library call
    that reported it (the full text goes to the log). ``url``: the page's, to tell why the guard
    could not reach it."""
    if getattr(exc, "readable", False):  # our own failures (page timeout, crash, blocked) say it already
        return str(exc)[:300]
    text = str(getattr(exc, "message", None) or exc)
    name = type(exc).__name__
    described = net_error_text(text, url)
    if described:
        return described
    if name == "TimeoutError" or _TIMEOUT.search(text):
        return _timeout_text(text)
    for phrase, words in _KNOWN_FAILURES:
        if phrase in text or phrase == name:
            return words
    message = _API_PREFIX.sub("", text.split("Call log")[0]).strip()
    first = message.splitlines()[0].strip().rstrip(".") if message else name
    if name == "IgnoreRequest" and first:  # a downloader middleware's reason ("blocked: ...")
        return first[:300]
    return f"the page could not be rendered: {first[:200]}"
