"""scrapy-playwright's download handler with the guarantees a crawl of hostile hosts needs.

:class:`WebsimPlaywrightHandler` subclasses ``ScrapyPlaywrightDownloadHandler`` (the add-on maps
http and https to it) and changes only what happens around a rendered request:

* **Hard page budget**: from the moment its page exists, a request gets ``WEBSIM_PAGE_TIMEOUT``
  plus :data:`PAGE_MARGIN` seconds; then its page is closed and the request fails with "page
  timeout". A renderer stuck in ``while(true)``, an endless stream or a page that never stops
  loading costs no more (Playwright's ``page.content()`` and ``evaluate`` have no timeout of
  their own). Waiting for a free page slot does not count.
* **Browser crash**: a request whose browser or renderer died is retried once (scrapy-playwright
  relaunches a disconnected browser), then fails with "browser crashed".
* **Hostile pages**: dialogs are dismissed (Playwright's default), ``window.open``/``print`` are
  disabled and any popup is closed at once, a download is cancelled as soon as it starts (the
  transfer stops; the page is recorded with the response's status and content type, not rendered).
* **Network policy**: only http/https requests leave the browser (routes abort the rest). The
  pages' browser contexts connect through :class:`~scrapy_websim.render.guard.GuardProxy` (or the
  user's ``WEBSIM_PROXY``), which resolves their hosts and refuses ``WEBSIM_DENY_NETWORKS``, redirect
  hops, WebSockets and WebRTC's TURN over TCP included ("blocked: ..."); the browser itself resolves
  no name, sends no WebRTC UDP (``browser.DEFAULT_ARGS``), runs no service worker, and what it asks
  for on its own goes to a proxy that refuses everything (the refuser).
  :class:`DenyNetworksDownloaderMiddleware` checks the requests that Scrapy's own client fetches.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import logging
import socket
import weakref
from typing import Any, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from scrapy.http import Response
from scrapy.http.headers import Headers
from scrapy_playwright.handler import DEFAULT_CONTEXT_NAME, ScrapyPlaywrightDownloadHandler

from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError, Network, proxy_parts
from scrapy_websim.render.capture import EMPTY_ERROR_FAILURE, capture, note_blocked, recheck, short_error
from scrapy_websim.render.guard import GuardProxy, bind_local
from scrapy_websim.render.tabs import TabPool

logger = logging.getLogger(__name__)

#: Seconds a rendered request may take beyond ``WEBSIM_PAGE_TIMEOUT`` (screenshot, content, close).
PAGE_MARGIN = 5.0


def resolve_nothing(proxy_host: str) -> str:
    """The Chromium flag with which the browser resolves no host name itself but the proxy's (the
    pages' proxy resolves what they request; DNS prefetch, a STUN or TURN server's name and the
    like resolve to nothing)."""
    return f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {proxy_host}"

#: Schemes a page may request; every other request is aborted in the browser.
ALLOWED_SCHEMES = ("http", "https")
#: Runs before any script of the page: no popups (window.open, target=_blank clicks), no print dialog.
INIT_SCRIPT = """window.open = function () { return null; };
window.print = function () {};
addEventListener('click', function (e) {
  const a = e.target && e.target.closest && e.target.closest('a[target], area[target]');
  if (a && !['', '_self', '_top', '_parent'].includes(a.target.toLowerCase())) e.preventDefault();
}, true);"""



class PageTimeout(Exception):
    """A rendered request exceeded its page budget."""

    readable = True


class BrowserCrashed(Exception):
    """The browser or the page's renderer died twice for one request."""

    readable = True


class Blocked(Exception):
    """A request went to a scheme or a network the crawl must not reach."""

    readable = True


def _denied(addresses: Iterable[str], networks: Sequence[Network]) -> Optional[str]:
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.split("%")[0])
        except ValueError:
            continue
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        for net in networks:
            if address.version == net.version and address in net:
                return f"{address} is in {net}"
    return None


async def check_url(url: str, networks: Sequence[Network]) -> Optional[str]:
    """Why ``url`` must not be requested (scheme, or an address in ``networks``), else None."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        return f"blocked: scheme {scheme!r} (only http and https are requested)"
    if not networks:
        return None
    host = (parts.hostname or "").strip("[]")
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or None, type=socket.SOCK_STREAM)
        except OSError:
            return None  # the browser reports the DNS failure itself
        addresses = [str(info[4][0]) for info in infos]
    reason = _denied(addresses, networks)
    return f"blocked: {host} ({reason}, WEBSIM_DENY_NETWORKS)" if reason else None


def _is_crash(exc: BaseException) -> bool:
    text = str(exc)
    return type(exc).__name__ == "TargetClosedError" or any(
        marker in text for marker in ("Target crashed", "Page crashed", "Browser has been closed",
                                      "Target page, context or browser has been closed", "browser has disconnected"))


class WebsimPlaywrightHandler(ScrapyPlaywrightDownloadHandler):
    """See the module docstring. Requests without ``meta["websim_render"]`` are left as they were."""

    abort_request: Any  #: set by scrapy-playwright from PLAYWRIGHT_ABORT_REQUEST; wrapped below

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        websim = WebsimConfig.from_crawler(crawler)
        self.page_budget = websim.page_timeout + PAGE_MARGIN
        self.deny_networks = websim.deny_networks
        self.config.target_closed_max_retries = 0  # one retry, ours, then the page is recorded
        self._user_abort: Any = self.abort_request  # PLAYWRIGHT_ABORT_REQUEST, read by scrapy-playwright
        self.abort_request = self._abort_request
        self.tabs = TabPool(websim.tab_reuse)
        #: context name -> requests inside scrapy-playwright's ``_create_page`` (maybe waiting for a slot)
        self._opening: dict = {}
        _quiet_page_loggers(crawler.settings.get("LOG_LEVEL", "DEBUG"))
        if self.deny_networks and websim.proxy:
            raise ConfigError("WEBSIM_DENY_NETWORKS and WEBSIM_PROXY cannot be combined: the networks are enforced "
                              "by a local guard proxy that the browser must use directly")
        self.guard: Optional[GuardProxy] = None
        self.refuser: Optional[GuardProxy] = None
        self._proxies: List[Tuple[GuardProxy, socket.socket]] = []
        #: the proxy of every page context; the browser's own requests never use it
        self._context_proxy: Optional[dict] = None
        launch = dict(self.config.launch_options)
        args = list(launch.get("args", []))
        users_proxy = bool(launch.get("proxy")) or any(a.startswith("--proxy-server") for a in args)
        if websim.proxy:
            self._context_proxy = proxy_parts(websim.proxy)
        elif self.deny_networks or not users_proxy:
            # the pages connect through the guard, which resolves their hosts itself and refuses
            # WEBSIM_DENY_NETWORKS, redirect hops included (with no networks denied it only forwards)
            networks = self.deny_networks
            self.guard = GuardProxy(lambda addresses: _denied(addresses, networks))
            self._context_proxy = {"server": self._serve(self.guard)}
        if self._context_proxy is not None:
            args.append(resolve_nothing(urlsplit(self._context_proxy["server"]).hostname or ""))
        if not users_proxy and not (self.config.cdp_url or self.config.connect_url):
            # what no page asked for (component updates, account checks...) goes to the refuser
            self.refuser = GuardProxy(None)
            args += [f"--proxy-server={self._serve(self.refuser)}", "--proxy-bypass-list=<-loopback>"]
        launch["args"] = args
        self.config.launch_options = launch

    def _serve(self, proxy: GuardProxy) -> str:
        """A socket for ``proxy`` (served once the browser is launched); its URL."""
        sock = bind_local()
        self._proxies.append((proxy, sock))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def _launch(self) -> None:
        for proxy, sock in self._proxies:
            if proxy.server is None:
                await proxy.start(sock)
        await super()._launch()

    async def _close(self) -> None:
        await super()._close()
        for proxy, _sock in self._proxies:
            await proxy.close()
        if self.refuser is not None and self.refuser.refused:
            self.stats.set_value("websim/browser_own_requests_refused", self.refuser.refused)

    async def _create_browser_context(self, name: str, context_kwargs: Optional[dict], spider: Any = None) -> Any:
        """Every context of the crawl (the user's ``PLAYWRIGHT_CONTEXTS`` too): no service worker (it
        would outlive its page, serve the next page of its origin from its own cache and fetch on
        its own), and the pages' proxy (the guard, ``WEBSIM_PROXY``, or direct connections), unless
        the context sets its own."""
        kwargs = dict(context_kwargs or {})
        kwargs.setdefault("service_workers", "block")
        if self._context_proxy is not None and "proxy" not in kwargs:
            kwargs["proxy"] = dict(self._context_proxy)
        return await super()._create_browser_context(name, kwargs, spider)

    # --- per page ---

    async def _create_page(self, request: Any, spider: Any) -> Any:
        meta = request.meta
        pooled = bool(meta.get("_websim_tab_pool"))
        page = await self._kept_tab(request) if pooled else None
        if page is None:
            name = meta.setdefault("playwright_context", DEFAULT_CONTEXT_NAME)
            self._opening[name] = self._opening.get(name, 0) + 1
            try:
                page = await self._open_page(request, spider, pooled)
            finally:
                self._opening[name] -= 1
            if meta.get("websim_render"):
                await _new_tab(page, self.tabs)
        if meta.get("websim_render"):
            _tab_meta[page] = meta  # what the tab's event handlers report to, for this request
            meta["_websim_page"] = page
            meta["_websim_page_started"] = asyncio.get_running_loop().time()
        return page

    async def _open_page(self, request: Any, spider: Any, pooled: bool) -> Any:
        """scrapy-playwright's new page. A pooled request comes here only when a page slot is free
        (or to create the context), so opening the page takes a moment; a browser that was killed
        or wedged can leave it unanswered for ever, before any page budget runs. After
        ``page_budget`` seconds the browser is restarted and the request is retried once, like the
        pages of a crashed browser (an unpooled request may wait here for a slot: not bounded)."""
        if not pooled:
            return await super()._create_page(request, spider)
        # A timer that cancels this very task, not asyncio.wait_for: that would run the call in a
        # new task, which yields before scrapy-playwright takes the free slot (see _kept_tab).
        task = asyncio.current_task()
        assert task is not None  # called from a coroutine that scrapy-playwright runs as a task
        expired: List[bool] = []

        def expire() -> None:
            expired.append(True)
            task.cancel()

        timer = asyncio.get_running_loop().call_later(self.page_budget, expire)
        try:
            return await super()._create_page(request, spider)
        except asyncio.CancelledError:
            if not expired:
                raise
            getattr(task, "uncancel", lambda: None)()
        finally:
            timer.cancel()
        request.meta["_websim_crashed"] = True
        await self._restart_browser(f"no new page opened within {self.page_budget:g} s")
        raise BrowserCrashed(f"no new page opened within {self.page_budget:g} s; the browser was restarted")

    async def _kept_tab(self, request: Any) -> Any:
        """A tab kept from an earlier page (:mod:`~scrapy_websim.render.tabs`); None when a new
        tab may be opened (a page slot is free). Waits while every slot holds a busy tab."""
        name = request.meta.setdefault("playwright_context", DEFAULT_CONTEXT_NAME)
        while True:
            wrapper = self.context_wrappers.get(name)
            page = self.tabs.take(name, wrapper.context if wrapper else None)
            if page is not None:
                try:  # scrapy-playwright routes the tab again for this request
                    await page.unroute("**")
                except Exception:  # noqa: BLE001 - a tab that died while kept: open a new one
                    await _close_page(page)
                    continue
                self.stats.inc_value("websim/tabs_reused")
                return page
            if wrapper is not None and not wrapper.semaphore.locked():
                return None  # a free slot: scrapy-playwright takes it without yielding to other requests
            if wrapper is None and not self._opening.get(name):
                return None  # the first page creates the context; the others wait for it here
            await self.tabs.wait()

    async def _release_tab(self, request: Any, ok: bool) -> None:
        """After a pooled request: keep its tab for the next page, or close it."""
        meta = request.meta
        page = meta.pop("playwright_page", None)
        meta.pop("playwright_include_page", None)
        meta.pop("_websim_tab_pool", None)
        if page is None:
            return
        name = meta.get("playwright_context", DEFAULT_CONTEXT_NAME)
        if not (ok and not self._slot_wanted(name) and self.tabs.keep(name, page)):
            await _close_page(page)

    def _slot_wanted(self, name: str) -> bool:
        """A request of context ``name`` may be waiting in scrapy-playwright for a page slot (it
        found no kept tab and every slot taken, or came before the context existed): a slot held
        by a kept tab is freed only when the tab closes, so the tab must close or the request waits
        for ever (seen with more requests in flight than ``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT``)."""
        if not self._opening.get(name):
            return False
        wrapper = self.context_wrappers.get(name)
        return wrapper is None or wrapper.semaphore.locked()

    async def _abort_request(self, playwright_request: Any) -> bool:
        reason = await check_url(playwright_request.url, self.deny_networks)
        if reason:
            frame = _safe(lambda: playwright_request.frame)
            page = _safe(lambda: frame.page) if frame is not None else None
            if page is not None and playwright_request.is_navigation_request():
                _blocked_reasons[page] = reason
                note_blocked(page, playwright_request.url, reason)
            logger.info("websim: %s (%s)", reason, playwright_request.url)
            return True
        if self._user_abort is not None:  # PLAYWRIGHT_ABORT_REQUEST: a function or a coroutine function
            verdict = self._user_abort(playwright_request)
            return bool(await verdict if inspect.isawaitable(verdict) else verdict)
        return False

    # --- per request ---

    async def _download_request(self, request: Any, spider: Any = None) -> Response:
        meta = request.meta
        if not meta.get("websim_render"):
            return await super()._download_request(request, spider)
        pooled = self.tabs.enabled and not meta.get("playwright_include_page")  # the user's own page wins
        if pooled:  # scrapy-playwright then leaves the tab open; _release_tab keeps or closes it
            meta["playwright_include_page"] = meta["_websim_tab_pool"] = True
        ok = False
        try:
            response = await self._render(request, spider)
            ok = True
            self._count_wait(request)
            return response
        except _AnswerInstead as answer:
            return answer.response
        finally:
            if pooled:
                await self._release_tab(request, ok)
            for key in ("_websim_page", "_websim_page_started", "_websim_main", "_websim_download", "_websim_crashed"):
                request.meta.pop(key, None)

    def _count_wait(self, request: Any) -> None:
        """Stats of the stable-page wait: its seconds, the pages' render seconds (navigation to
        content), and how many pages were provably done early (docs/performance.md)."""
        result = next((pm.result for pm in request.meta.get("playwright_page_methods") or ()
                       if getattr(pm, "method", None) is capture), None)
        latency = request.meta.get("download_latency")
        if not isinstance(result, dict) or "stable_ms" not in result or latency is None:
            return
        self.stats.inc_value("websim/render_seconds", round(float(latency), 3))
        self.stats.inc_value("websim/stable_seconds", result["stable_ms"] / 1000.0)
        if result.get("stable_early"):
            self.stats.inc_value("websim/stable_early")

    async def _render(self, request: Any, spider: Any) -> Response:
        """One try, and one more if the browser or the renderer died."""
        for attempt in (1, 2):
            request.meta.pop("_websim_crashed", None)
            if request.meta.get("_websim_tab_pool"):  # never the tab of a failed try
                await _close_page(request.meta.pop("playwright_page", None))
            try:
                return await self._bounded(request, spider)
            except (PageTimeout, Blocked):
                raise
            except Exception as exc:  # noqa: BLE001
                answer = self._download_answer(request, exc)
                if answer is exc and EMPTY_ERROR_FAILURE in str(exc):
                    answer = await _empty_error_answer(request) or exc
                if answer is not exc or not (_is_crash(exc) or request.meta.get("_websim_crashed")):
                    raise answer from None
                if attempt == 2:
                    raise BrowserCrashed(f"browser crashed twice on this page: {short_error(exc)}") from None
                logger.warning("websim: the browser crashed on %s (%s); retrying once", request.url, exc)
        raise AssertionError("unreachable")

    async def _bounded(self, request: Any, spider: Any) -> Response:
        """Run scrapy-playwright's download, closing the page once its budget is spent."""
        meta = request.meta
        for key in ("_websim_page", "_websim_page_started"):
            meta.pop(key, None)
        task = asyncio.ensure_future(super()._download_request(request, spider))
        loop = asyncio.get_running_loop()
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.5)
            if done:
                break
            started = meta.get("_websim_page_started")
            if started is not None and loop.time() - started > self.page_budget:
                task.cancel()
                if not await _close_page(meta.get("_websim_page")):
                    await self._restart_browser("a page did not close")
                with contextlib.suppress(BaseException):  # bounded: a task stuck in a wedged browser call
                    await asyncio.wait_for(task, 15)
                raise PageTimeout(f"page timeout: timed out after {self.page_budget:g} s without a result "
                                  f"(WEBSIM_PAGE_TIMEOUT + {PAGE_MARGIN:g} s); the page was closed")
        page = meta.get("_websim_page")
        try:
            response = task.result()
            if page is not None:
                recheck(page, next((pm.result for pm in meta.get("playwright_page_methods") or ()
                                    if getattr(pm, "method", None) is capture), None))
            return response
        except Exception:
            if page is not None and page in _blocked_reasons:
                raise Blocked(_blocked_reasons.pop(page)) from None
            raise
        finally:
            if page is not None:
                _blocked_reasons.pop(page, None)

    async def _restart_browser(self, why: str) -> None:
        """Kill a wedged browser: scrapy-playwright relaunches it for the next page, and the pages
        that were in it fail as crashed (and are retried once)."""
        browser = getattr(self, "browser", None)
        if browser is None:
            return
        logger.warning("websim: restarting the browser (%s)", why)
        self.stats.inc_value("websim/browser_restarts")
        try:
            await asyncio.wait_for(browser.close(), 10)
        except BaseException:  # noqa: BLE001
            logger.warning("websim: the browser did not close in 10 s; its pages are abandoned")
        if getattr(self, "browser", None) is browser:  # no disconnect event came: forget it ourselves
            await self._browser_disconnected_callback()

    def _download_answer(self, request: Any, exc: BaseException) -> BaseException:
        """A cancelled download becomes a response (status and headers, empty body), else ``exc``."""
        info = request.meta.get("_websim_download")
        main = request.meta.get("_websim_main")
        if not info or not main:
            return exc
        status, headers = main[:2]
        return _AnswerInstead(Response(url=info, status=status, headers=Headers(headers), body=b"",
                                       request=request, flags=["download"]))


def _quiet_page_loggers(log_level: Any) -> None:
    """scrapy-playwright attaches a request and a response logger to every tab when its logger is
    enabled for DEBUG, and Scrapy leaves loggers at NOTSET (``LOG_LEVEL`` filters in the handler):
    so at INFO every sub-request still cost a ``Referer`` header lookup in the browser (a round
    trip to the driver) to build a message nobody sees. Its logger gets ``LOG_LEVEL`` instead."""
    level = logging.getLevelName(log_level) if isinstance(log_level, str) else log_level
    target = logging.getLogger("scrapy-playwright")
    if isinstance(level, int) and level > logging.DEBUG and target.level == logging.NOTSET:
        target.setLevel(level)


class _AnswerInstead(Exception):
    """Carries a response out of the retry logic (see ``download_request``)."""

    def __init__(self, response: Response) -> None:
        super().__init__("download")
        self.response = response


async def _empty_error_answer(request: Any) -> Optional[_AnswerInstead]:
    """The server's answer to a navigation that Chromium failed because it was an HTTP error (4xx,
    5xx) with an empty body (it shows its own error page instead): that status, those headers, no
    body, and the redirect hops that led to it; None when no such answer was seen."""
    main = request.meta.get("_websim_main")
    if not main or main[0] < 400:
        return None
    status, headers, url, hops, response = main
    if hops:
        request.meta["redirect_urls"] = hops
    # an https answer: the certificate's names and dates as Chromium got them; Chromium's verdict
    # on it is lost with the page it replaced, so the answer is not flagged "playwright" and the
    # certificate is checked as for a page of Scrapy's own client (scan.WebsimScanDownloaderMiddleware)
    with contextlib.suppress(Exception):
        request.meta["playwright_security_details"] = await asyncio.wait_for(response.security_details(), 5)
    return _AnswerInstead(Response(url=url, status=status, headers=Headers(headers), body=b"", request=request,
                                   flags=["empty-error"]))


_blocked_reasons: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
#: tab -> meta of the request it renders now (a kept tab serves several requests)
_tab_meta: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


async def _new_tab(page: Any, tabs: TabPool) -> None:
    """Once per tab: the hostile-page guards, reporting to the request the tab renders now."""
    def meta() -> dict:
        return _tab_meta.get(page, {})

    page.on("popup", _close_quietly)
    page.on("download", lambda download: asyncio.ensure_future(_cancel_download(download, meta())))
    page.on("response", lambda response: _note_main_response(page, response, meta()))
    page.on("crash", lambda *_: meta().__setitem__("_websim_crashed", True))
    page.on("close", tabs.notify)
    try:
        await page.add_init_script(INIT_SCRIPT)
    except Exception:  # noqa: BLE001 - a page closing already fails later with a clear error
        pass


def _safe(get: Any) -> Any:
    try:
        return get()
    except Exception:  # noqa: BLE001
        return None


def _close_quietly(page: Any) -> None:
    asyncio.ensure_future(_close_page(page))


async def _close_page(page: Any) -> bool:
    """Close ``page``; False if the browser did not manage to within 10 s (it is wedged)."""
    if page is None:
        return True
    try:
        await asyncio.wait_for(page.close(run_before_unload=False), 10)
    except BaseException:  # noqa: BLE001 - closing a dead page must not fail the crawl
        pass
    return page.is_closed()


async def _cancel_download(download: Any, meta: dict) -> None:
    meta["_websim_download"] = download.url
    try:
        await download.cancel()
    except Exception:  # noqa: BLE001
        pass


#: Content types Chromium shows in the tab; any other main document is a download.
_INLINE_TYPES = ("text/", "image/", "application/xhtml", "application/xml", "application/json",
                 "application/javascript", "application/rss", "application/atom", "multipart/x-mixed-replace")


def _is_download(headers: dict) -> bool:
    if headers.get("content-disposition", "").strip().lower().startswith("attachment"):
        return True
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    return bool(ctype) and not ctype.startswith(_INLINE_TYPES)


def _note_main_response(page: Any, response: Any, meta: dict) -> None:
    """Keep the main document's status, headers, URL and the redirect hops before it (an HTTP error
    with an empty body is answered with them: ``_empty_error_answer``). A download (an attachment,
    an endless octet stream...) is not rendered: its page is closed at once, so the transfer stops,
    and the request is answered with the status and headers (see ``_download_answer``)."""
    try:
        if response.frame != page.main_frame or not response.request.is_navigation_request():
            return
        headers = dict(response.headers)
        hops: List[str] = []
        hop = response.request.redirected_from
        while hop is not None:  # Chromium follows 20 redirects at most
            hops.insert(0, hop.url)
            hop = hop.redirected_from
        meta["_websim_main"] = (response.status, headers, response.url, hops, response)
        if 200 <= response.status < 300 and _is_download(headers):
            meta["_websim_download"] = response.url
            _close_quietly(page)
    except Exception:  # noqa: BLE001 - a detached frame
        pass


class DenyNetworksDownloaderMiddleware:
    """``WEBSIM_DENY_NETWORKS`` and the http/https-only rule for requests Scrapy's client fetches
    (the unsafe-port fallback, redirect hops it follows); rendered requests are checked in the browser."""

    def __init__(self, networks: Sequence[Network]) -> None:
        self.networks = list(networks)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DenyNetworksDownloaderMiddleware":
        return cls(WebsimConfig.from_crawler(crawler).deny_networks)

    async def process_request(self, request: Any, spider: Any = None) -> None:
        if request.meta.get("playwright"):
            return None
        reason = await check_url(request.url, self.networks)
        if reason:
            from scrapy.exceptions import IgnoreRequest  # noqa: PLC0415

            raise IgnoreRequest(reason)
        return None
