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
import base64
import contextlib
import hashlib
import inspect
import ipaddress
import logging
import socket
import weakref
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urljoin, urlsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.http.headers import Headers
from scrapy.utils.misc import load_object
from scrapy_playwright.handler import DEFAULT_CONTEXT_NAME, ScrapyPlaywrightDownloadHandler

from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError, Network, proxy_parts
from scrapy_websim.core.features import parse_html
from scrapy_websim.core.served import page_signature, renders_as_served, response_key, script_set, spellings, swap_host
from scrapy_websim.core.types import is_html_type
from scrapy_websim.render.capture import EMPTY_ERROR_FAILURE, capture, note_blocked, recheck, short_error
from scrapy_websim.render.guard import GuardProxy, bind_local
from scrapy_websim.render.once import CANDIDATE, DATA, NEVER, SHARED, UNJUDGED, Render, RenderShare
from scrapy_websim.render.pagedata import PageData, data_key
from scrapy_websim.render.pagedata import where as _where
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



@dataclass
class RenderState:
    """What the handler knows of one rendered request while it runs: ``meta["_websim"]``, the one
    meta key of its own besides ``websim_render`` and ``websim_started``."""

    #: websim keeps the tab for the next page (scrapy-playwright leaves it open: ``playwright_include_page``)
    tab_pool: bool = False
    page: Any = None  #: the tab rendering the request now
    page_started: Optional[float] = None  #: loop time the tab was had: the page budget runs from here
    #: the main document's answer as the tab saw it: (status, headers, URL, redirect hops, Playwright response)
    main: Optional[tuple] = None
    download: str = ""  #: URL of a download the tab cancelled (the page is answered without a render)
    crashed: bool = False  #: the renderer or the browser died during the request


def _state(request: Any) -> RenderState:
    state = request.meta.get("_websim")
    if not isinstance(state, RenderState):
        state = request.meta["_websim"] = RenderState()
    return state


class PageTimeout(Exception):
    """A rendered request exceeded its page budget."""

    readable = True


class BrowserCrashed(Exception):
    """The browser or the page's renderer died twice for one request."""

    readable = True


class FetchTimeout(Exception):
    """The document did not arrive within ``WEBSIM_HTTP_TIMEOUT`` (the browser would not have
    loaded it either: its navigation waits as long for the whole document)."""

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


class AbortRequest:
    """``PLAYWRIGHT_ABORT_REQUEST`` as the add-on sets it: a request of a page to a scheme or a
    network the crawl must not reach is aborted (a navigation's reason is kept for its record),
    then the user's own ``PLAYWRIGHT_ABORT_REQUEST`` (a function or a coroutine function, or its
    import path) decides."""

    def __init__(self, networks: Sequence[Network] = (), user: Any = None) -> None:
        self.networks = tuple(networks)
        self.user = user
        self._user_fn: Any = None

    async def __call__(self, playwright_request: Any) -> bool:
        reason = await check_url(playwright_request.url, self.networks)
        if reason:
            frame = _safe(lambda: playwright_request.frame)
            page = _safe(lambda: frame.page) if frame is not None else None
            if page is not None and playwright_request.is_navigation_request():
                _blocked_reasons[page] = reason
                note_blocked(page, playwright_request.url, reason)
            logger.info("websim: %s (%s)", reason, playwright_request.url)
            return True
        if self.user is None:
            return False
        if self._user_fn is None:
            self._user_fn = load_object(self.user)
        verdict = self._user_fn(playwright_request)
        return bool(await verdict if inspect.isawaitable(verdict) else verdict)


def _is_crash(exc: BaseException) -> bool:
    text = str(exc)
    return type(exc).__name__ == "TargetClosedError" or any(
        marker in text for marker in ("Target crashed", "Page crashed", "Browser has been closed",
                                      "Target page, context or browser has been closed", "browser has disconnected"))


class WebsimPlaywrightHandler(ScrapyPlaywrightDownloadHandler):
    """See the module docstring. Requests without ``meta["websim_render"]`` are left as they were."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        websim = WebsimConfig.from_crawler(crawler)
        self.page_budget = websim.page_timeout + PAGE_MARGIN
        self.http_timeout = websim.http_timeout
        self.deny_networks = websim.deny_networks
        self.config.target_closed_max_retries = 0  # one retry, ours, then the page is recorded
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
        self._context_proxy: Optional[Dict[str, str]] = None
        users_proxy = self._set_up_proxies(websim)
        #: render each distinct page once (see _fetch_first), unless WEBSIM_RENDER_ALL or the
        #: document cannot be fetched as the browser would: through the user's own browser proxy, a
        #: remote browser, a SOCKS proxy (Scrapy's client has none) or with certificate errors fatal
        self.share: Optional[RenderShare] = None
        self._fetch_proxy, self._fetch_proxy_auth = _proxy_and_auth(
            websim.proxy or (self._context_proxy["server"] if self._context_proxy else ""))
        if not (websim.render_all or users_proxy or self.config.cdp_url or self.config.connect_url
                or websim.strict_tls or websim.proxy.lower().startswith("socks")):
            self.share = RenderShare()

    def _set_up_proxies(self, websim: WebsimConfig) -> bool:
        """The pages' proxy (the guard, or ``WEBSIM_PROXY``) and the refuser of the browser's own
        requests, in the launch options; whether the user gave the browser a proxy of their own."""
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
        return users_proxy

    def _serve(self, proxy: GuardProxy) -> str:
        """A socket for ``proxy`` (served once the browser is launched); its URL."""
        sock = bind_local()
        self._proxies.append((proxy, sock))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def _start_proxies(self) -> None:
        for proxy, sock in self._proxies:
            if proxy.server is None:
                await proxy.start(sock)

    async def _close_proxies(self) -> None:
        for proxy, _sock in self._proxies:
            await proxy.close()
        if self.refuser is not None and self.refuser.refused:
            self.stats.set_value("websim/browser_own_requests_refused", self.refuser.refused)

    async def close(self) -> None:
        """The browser first (scrapy-playwright), then the proxies its pages used."""
        try:
            await super().close()
        finally:
            if self.share is not None:
                self.share.close()
            await self._maybe_future_from_coro(self._close_proxies())

    async def _create_browser_context(self, name: str, context_kwargs: Optional[dict], spider: Any = None) -> Any:
        """Every context of the crawl (the user's ``PLAYWRIGHT_CONTEXTS`` too): no service worker (it
        would outlive its page, serve the next page of its origin from its own cache and fetch on
        its own), and the pages' proxy (the guard, ``WEBSIM_PROXY``, or direct connections), unless
        the context sets its own."""
        await self._start_proxies()  # before the first context launches the browser, which uses them
        kwargs = dict(context_kwargs or {})
        kwargs.setdefault("service_workers", "block")
        if self._context_proxy is not None and "proxy" not in kwargs:
            kwargs["proxy"] = dict(self._context_proxy)
        return await super()._create_browser_context(name, kwargs, spider)

    # --- per page ---

    async def _create_page(self, request: Any, spider: Any) -> Any:
        meta = request.meta
        pooled = _state(request).tab_pool
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
            state = _state(request)
            _tab_state[page] = state  # what the tab's event handlers report to, for this request
            state.page = page
            state.page_started = asyncio.get_running_loop().time()
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
        _state(request).crashed = True
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
        _state(request).tab_pool = False
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

    # --- per request ---

    async def download_request(self, request: Any) -> Response:
        if not request.meta.get("websim_render"):
            return await super().download_request(request)
        return await self._maybe_future_from_coro(self._websim_download(request, self._crawler.spider))

    async def _websim_download(self, request: Any, spider: Any) -> Response:
        """A page websim renders (``meta["websim_render"]``): fetched first, maybe answered
        without a render (see ``_fetch_first``), else rendered."""
        if self.share is not None and _shareable(request):
            return await self._fetch_first(request, spider)
        return await self._render_request(request, spider)

    async def _render_request(self, request: Any, spider: Any, served: Optional[Response] = None) -> Response:
        """Render ``request`` in a tab; ``served``: its document, fetched already, which the browser
        is given instead of requesting it again."""
        meta = request.meta
        pooled = self.tabs.enabled and not meta.get("playwright_include_page")  # the user's own page wins
        if pooled:  # scrapy-playwright then leaves the tab open; _release_tab keeps or closes it
            meta["playwright_include_page"] = True
            _state(request).tab_pool = True
        serving = _Serving(served, meta.get("playwright_page_init_callback")) if served is not None else None
        if serving is not None:
            meta["playwright_page_init_callback"] = serving.init_page
        ok = False
        self.stats.inc_value("websim/renders")
        try:
            response = await self._render(request, spider)
            ok = True
            self._count_wait(request)
            return response
        except _AnswerInstead as answer:
            return answer.response
        finally:
            if serving is not None:
                meta["playwright_page_init_callback"] = serving.user_init
                await serving.unroute()
            if pooled:
                await self._release_tab(request, ok)
            request.meta.pop("_websim", None)

    # --- render each distinct page once ---

    async def _fetch_first(self, request: Any, spider: Any) -> Response:
        """Fetch the document with Scrapy's client; answer from it, from a render of the same
        document, or render it (see :mod:`~scrapy_websim.render.once`)."""
        assert self.share is not None
        fetched = await self._fetch(request)
        if fetched is None:  # refused, timed out, too large...: the browser tells what happened
            self.stats.inc_value("websim/fetch_first_failed")
            return await self._render_request(request, spider)
        response, hops = fetched
        if _header(response, "Content-Encoding").strip().lower() not in ("", "identity"):
            return await self._render_request(request, spider)  # encoded though none was asked for
        answer = _answer_without_render(request, response, hops)
        if answer is not None:
            self.stats.inc_value("websim/renders_not_needed")
            return answer
        if response.status in _REDIRECTS:  # a redirect the fetch did not follow: the browser follows it
            return await self._render_request(request, spider)
        hosts = spellings(response.url)
        claim = _Claim(response_key(response.status, _header(response, "Content-Type"), response.body, hosts),
                       response.url)
        state, render, claimed = await self._claim(claim)
        if state == SHARED and render is not None:
            self.stats.inc_value("websim/renders_reused")
            return _reused(request, response, hops, render, hosts)
        # after redirects the browser requests the hops itself; so it does a document that sets
        # several cookies (a tab takes one value per header name from a fulfilled response)
        served = None if hops or len(response.headers.getlist(b"Set-Cookie")) > 1 else response
        if not claimed:
            return _without_served_tls(await self._render_request(request, spider, served), served)
        new_state, kept, judged = NEVER, None, False
        try:
            rendered = await self._render_request(request, spider, served)
            new_state, kept = _judge(request, response, rendered, hosts, render if state == CANDIDATE else None,
                                     self.share, claim.data)
            judged = True
            return _without_served_tls(rendered, served)
        finally:
            self.share.finish(claim.key, new_state, kept, judged)

    async def _claim(self, claim: "_Claim") -> Tuple[str, Optional[Render], bool]:
        """What is known of ``claim.key`` once no other request is rendering it (an unjudged
        render judged now), and whether this request claimed its render: ``(state, render,
        claimed)``; ``claim.key`` may change on the way (:meth:`_rescope`)."""
        assert self.share is not None
        while True:
            state, render = self.share.known(claim.key)
            if state == UNJUDGED and render is not None:
                state = _settle(render, self.share, data_checked=claim.data is not None)
                self.share.settle(claim.key, state, render)
            if await self._rescope(claim, state, render):
                continue
            if state == SHARED and render is not None or state == NEVER:
                return state, render, False  # NEVER: its renders differ, every page with the key is rendered
            if self.share.begin(claim.key):
                return state, render, True
            if not await self.share.wait(claim.key, self.page_budget + self.http_timeout):
                return state, render, False  # waited for as long as a page may take: render it too

    async def _rescope(self, claim: "_Claim", state: str, render: Optional[Render]) -> bool:
        """Whether the page's key is another now: a document whose script changed it is keyed by
        its path and query too (another path may be another view of it), and one whose script
        filled it in from data (``DATA``) by its own host's answers to the same data requests
        too (a page whose data cannot be fetched so is rendered: its key is made its own)."""
        if render is None:
            return False
        if render.scripted and not claim.scoped and _where(render.url) != claim.where:
            claim.scoped = True
            claim.key = _subkey(claim.key, b"\x02", claim.where.encode("utf-8"))
            return True
        return state == DATA and claim.data is None and await self._scope_by_data(claim, render)

    async def _scope_by_data(self, claim: "_Claim", render: Render) -> bool:
        """``claim.key`` scoped by the page's own answers to the data requests of ``render``."""
        assert self.share is not None
        if render.data is None:
            return False
        data = await self._page_data(render.data, claim.url)
        self.stats.inc_value("websim/data_checked")
        claim.data = data if data is not None else ()
        claim.key = _subkey(claim.key, b"\x03", repr(claim.data).encode("utf-8"))
        if data == render.data:
            self.share.adopt(claim.key, render)
        return True

    async def _page_data(self, data: PageData, url: str) -> Optional[PageData]:
        """This page's host's answers to the data requests of ``data`` (keyed as ``data`` is),
        fetched with Scrapy's client; None when one could not be fetched or was redirected."""
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        answers = []
        for path in (p for p, _ in data):
            try:
                fetched = await self._fetch(Request(origin + path, headers={"Accept": "*/*"}))
            except FetchTimeout:
                return None
            if fetched is None or fetched[1]:
                return None
            response = fetched[0]
            answers.append((response.url, response.status, _header(response, "Content-Type"), response.body))
        return data_key(answers, url)

    async def _fetch(self, request: Any) -> Optional[Tuple[Response, List[str]]]:
        """The document of ``request`` by Scrapy's client, redirects followed (the browser's
        proxy, the guard, checks each hop); None when it could not be fetched."""
        await self._start_proxies()
        url, hops = request.url, []
        request.meta.pop("download_latency", None)
        headers = request.headers.copy()
        headers.pop(b"Accept-Encoding", None)  # Scrapy's decompression is a middleware: ask for none
        if self._fetch_proxy_auth:  # what Scrapy's HttpProxyMiddleware does with a proxy URL's user:password
            headers[b"Proxy-Authorization"] = self._fetch_proxy_auth
        for _ in range(_MAX_HOPS + 1):
            if urlsplit(url).scheme.lower() not in ALLOWED_SCHEMES:
                return None
            meta: dict = {"download_timeout": self.http_timeout, "download_maxsize": _FETCH_MAX_BYTES,
                          "download_warnsize": 0}
            if self._fetch_proxy:
                meta["proxy"] = self._fetch_proxy
            fetch = Request(url, headers=headers, meta=meta, dont_filter=True)
            try:
                response = await self._http_download(fetch)
            except Exception as exc:  # noqa: BLE001 - any other failure: the browser tries and tells
                if type(exc).__name__ == "TimeoutError":  # rendering would cost the same wait again
                    raise FetchTimeout(f"timed out after {self.http_timeout:g} s: the page did not load "
                                       "(WEBSIM_HTTP_TIMEOUT)") from None
                logger.debug("websim: fetching %s first failed (%s); rendering it", url, exc)
                return None
            latency = fetch.meta.get("download_latency")
            if latency is not None:  # the time to the page's answer, for the per-host ramp (perhost.py)
                request.meta["download_latency"] = float(latency) + float(request.meta.get("download_latency") or 0)
            if response.status == 407:  # the proxy wants what the browser has: let the browser fetch
                return None
            location = _header(response, "Location")
            if response.status in _REDIRECTS and location:
                hops.append(url)
                url = urljoin(url, location)
                if url in hops:
                    return None
                continue
            return response, hops
        return None

    async def _http_download(self, request: Any) -> Response:
        """Scrapy's own HTTP client (the handler scrapy-playwright's is built on)."""
        return await super(ScrapyPlaywrightDownloadHandler, self).download_request(request)

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
            state = _state(request)
            state.crashed = False
            if state.tab_pool:  # never the tab of a failed try
                await _close_page(request.meta.pop("playwright_page", None))
            try:
                return await self._bounded(request, spider)
            except (PageTimeout, Blocked):
                raise
            except Exception as exc:  # noqa: BLE001
                answer = self._download_answer(request, exc)
                if answer is exc and EMPTY_ERROR_FAILURE in str(exc):
                    answer = await _empty_error_answer(request) or exc
                if answer is not exc or not (_is_crash(exc) or _state(request).crashed):
                    raise answer from None
                if attempt == 2:
                    raise BrowserCrashed(f"browser crashed twice on this page: {short_error(exc)}") from None
                logger.warning("websim: the browser crashed on %s (%s); retrying once", request.url, exc)
        raise AssertionError("unreachable")

    async def _bounded(self, request: Any, spider: Any) -> Response:
        """Run scrapy-playwright's download, closing the page once its budget is spent."""
        meta = request.meta
        state = _state(request)
        state.page = state.page_started = None
        task = asyncio.ensure_future(super()._download_request(request, spider))
        loop = asyncio.get_running_loop()
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.5)
            if done:
                break
            started = state.page_started
            if started is not None and loop.time() - started > self.page_budget:
                task.cancel()
                if not await _close_page(state.page):
                    await self._restart_browser("a page did not close")
                with contextlib.suppress(BaseException):  # bounded: a task stuck in a wedged browser call
                    await asyncio.wait_for(task, 15)
                raise PageTimeout(f"page timeout: timed out after {self.page_budget:g} s without a result "
                                  f"(WEBSIM_PAGE_TIMEOUT + {PAGE_MARGIN:g} s); the page was closed")
        page = state.page
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
        state = _state(request)
        info, main = state.download, state.main
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
    main = _state(request).main
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
_tab_state: "weakref.WeakKeyDictionary[Any, RenderState]" = weakref.WeakKeyDictionary()


async def _new_tab(page: Any, tabs: TabPool) -> None:
    """Once per tab: the hostile-page guards, reporting to the request the tab renders now."""
    def state() -> RenderState:
        return _tab_state.get(page) or RenderState()

    page.on("popup", _close_quietly)
    page.on("download", lambda download: asyncio.ensure_future(_cancel_download(download, state())))
    page.on("response", lambda response: _note_main_response(page, response, state()))
    page.on("crash", lambda *_: setattr(state(), "crashed", True))
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


async def _cancel_download(download: Any, state: RenderState) -> None:
    state.download = download.url
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


def _note_main_response(page: Any, response: Any, state: RenderState) -> None:
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
        state.main = (response.status, headers, response.url, hops, response)
        if 200 <= response.status < 300 and _is_download(headers):
            state.download = response.url
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
            raise IgnoreRequest(reason)
        return None


# --- render each distinct page once (helpers of WebsimPlaywrightHandler._fetch_first) ---

#: Redirect hops the first fetch follows (Chromium follows 20; a longer chain is rendered).
_MAX_HOPS = 10
_REDIRECTS = (301, 302, 303, 307, 308)
#: A document larger than this is rendered without being fetched first.
_FETCH_MAX_BYTES = 16 * 1024 * 1024
#: Response headers the browser must not be given with a body it did not transfer itself.
_HOP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"})


def _header(response: Any, name: str) -> str:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else ""


def _proxy_and_auth(proxy: str) -> Tuple[str, bytes]:
    """A proxy URL without its ``user:password@`` and the ``Proxy-Authorization`` value they make."""
    parts = urlsplit(proxy)
    if not proxy or parts.username is None:
        return proxy, b""
    user, password = unquote(parts.username), unquote(parts.password or "")
    netloc = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=netloc).geturl(), b"Basic " + base64.b64encode(f"{user}:{password}".encode())


def _shareable(request: Any) -> bool:
    """A plain GET of websim's capture, nothing of the user's in the tab (their page methods,
    their page object) and no ``meta["websim_render_all"]``."""
    meta = request.meta
    if request.method != "GET" or request.body or meta.get("playwright_include_page") or meta.get("websim_render_all"):
        return False
    return all(getattr(pm, "method", None) is capture for pm in meta.get("playwright_page_methods") or ())


def _answer_without_render(request: Any, response: Response, hops: List[str]) -> Optional[Response]:
    """The fetched answer itself when rendering would add nothing: a document that is no HTML
    (never rendered), an HTTP auth challenge (Chromium shows no page for it), an HTTP error with an
    empty body (Chromium shows its own error page instead)."""
    content_type = _header(response, "Content-Type")
    body = response.body
    empty_error = response.status >= 400 and not body.strip()
    auth = response.status == 401 and bool(_header(response, "WWW-Authenticate"))
    html = is_html_type(content_type, empty_is_html=b"<html" in body[:2048].lower())
    if html and not empty_error and not auth:
        return None
    if hops:
        request.meta["redirect_urls"] = hops
    flags = ["empty-error"] if empty_error else ["fetched"]
    return response.replace(request=request, flags=flags)


def _capture_method(request: Any) -> Any:
    return next((pm for pm in request.meta.get("playwright_page_methods") or ()
                 if getattr(pm, "method", None) is capture), None)


def _judge(request: Any, fetched: Response, rendered: Response, hosts: Tuple[str, ...],
           candidate: Optional[Render], share: Optional[RenderShare] = None,
           data: Optional[PageData] = None) -> Tuple[str, Optional[Render]]:
    """What pages with this response's key do from now on and the render kept for them. A first
    render is kept ``UNJUDGED`` with the document it was given (:func:`_settle` judges it when a
    second page with the key comes); a second one (``candidate``: the first, whose script changed
    the page without fetching data, or fetched the same data) shares the first when it says the
    same, and ``share`` learns whether the first's scripts did the same on two hosts. Never shared:
    a page that went elsewhere, a failed capture, two renders that differ, a render whose scripts
    fetched other data than ``data`` (the answers its key was made of)."""
    cap = _shareable_capture(request, fetched, rendered)
    if cap is None:
        return NEVER, None
    html = cap.get("html") or rendered.text
    try:
        served_html = fetched.text
    except AttributeError:
        return NEVER, None
    render = _kept_render(rendered.url, hosts, cap, html, served_html)
    if data is not None and render.data != data:
        return NEVER, None
    if candidate is not None:
        same = _same_data(render, candidate) and _signature(render) == _signature(candidate)
        if share is not None:
            share.found(candidate.scripts, same)
        return (SHARED, candidate) if same else (NEVER, None)
    return UNJUDGED, render


def _kept_render(url: str, hosts: Tuple[str, ...], cap: dict, html: str, served_html: str) -> Render:
    kept = {k: v for k, v in cap.items() if k not in _NOT_KEPT}
    kept["html"] = html
    return Render(url=url, hosts=hosts, capture=kept, served=served_html,
                  scripted_data=cap.get("data_requests") != 0, data=cap.get("data"))


def _settle(render: Render, share: Optional[RenderShare] = None, data_checked: bool = False) -> str:
    """A first render, judged: ``SHARED`` when it says what its HTML says; when its script
    changed the page without fetching data (or ``data_checked``: the page's own data is the
    render's), ``CANDIDATE`` (a second render on another host tells), or ``SHARED`` at once when
    ``share`` has seen its very scripts do the same on two hosts (with another document); when
    its script fetched data that can be fetched again, ``DATA`` (each page's data is checked);
    else ``NEVER``."""
    if not render.scripted:
        html = render.capture.get("html") or ""
        if renders_as_served(render.served, html, _served_title(render.served), render.capture.get("title")):
            return SHARED
        if render.scripted_data and render.data is None:
            return NEVER
        render.scripted = True
        render.scripts = script_set(render.served, render.url, render.hosts)
    if render.scripted_data and not data_checked:
        return DATA
    return SHARED if share is not None and share.trusts(render.scripts) else CANDIDATE


def _same_data(render: Render, candidate: Render) -> bool:
    """Whether a second render's scripts fetched nothing, or the very data of the first's."""
    return not render.scripted_data or render.data is not None and render.data == candidate.data


def _signature(render: Render) -> bytes:
    """What ``render`` says, its host masked (worked out once, when two renders are compared)."""
    if not render.signature:
        render.signature = page_signature(render.capture.get("html") or "", render.hosts)
    return render.signature


def _shareable_capture(request: Any, fetched: Response, rendered: Response) -> Optional[dict]:
    """The render's capture if other pages could take it: captured whole, with a screenshot, by
    the browser, at the fetched document's status and URL; else None."""
    cap = getattr(_capture_method(request), "result", None)
    if not isinstance(cap, dict) or cap.get("capture_error") or not cap.get("screenshot"):
        return None
    if "playwright" not in (rendered.flags or ()) or rendered.status != fetched.status:
        return None
    return cap if _url_key(rendered.url) == _url_key(fetched.url) else None


def _served_title(html: str) -> str:
    doc = parse_html(html)
    title = doc.find(".//title") if doc is not None else None
    return (title.text_content() if title is not None else "") or ""


def _reused(request: Any, fetched: Response, hops: List[str], render: Render, hosts: Tuple[str, ...]) -> Response:
    """The response of a page that takes ``render``: its own URL, status, headers and certificate,
    the render's HTML and screenshot (its host's name swapped for this page's)."""
    cap = dict(render.capture)
    html = swap_host(cap.pop("html"), render.hosts, hosts)
    cap["title"] = swap_host(cap.get("title") or "", render.hosts, hosts)
    cap["html"] = html
    cap["render_from"] = render.url
    latency = request.meta.get("download_latency")  # not rendered: the fetch's time to its whole document
    cap["timings"] = [round(float(latency) * 1000.0, 1)] if latency is not None else []
    pm = _capture_method(request)
    if pm is not None:
        pm.result = cap
    if hops:
        request.meta["redirect_urls"] = hops
    return HtmlResponse(url=fetched.url, status=fetched.status, headers=fetched.headers, body=html.encode("utf-8"),
                        encoding="utf-8", request=request, flags=["render-reused"],
                        certificate=fetched.certificate, ip_address=fetched.ip_address, protocol=fetched.protocol)


def _without_served_tls(rendered: Response, fetched: Optional[Response]) -> Response:
    """A render whose document the browser was given (``fetched``): Chromium saw no certificate
    for it, so the certificate is the fetch's (checked as for any page of Scrapy's client)."""
    if fetched is None or not rendered.url.lower().startswith("https:") or "playwright" not in (rendered.flags or ()):
        return rendered
    pm = _capture_method(rendered.request) if rendered.request is not None else None
    if pm is not None and isinstance(pm.result, dict):
        pm.result.pop("tls", None)
    flags = [f for f in rendered.flags or () if f != "playwright"] + ["served"]
    return rendered.replace(flags=flags, certificate=fetched.certificate)


@dataclass
class _Claim:
    """A page's way to its render: its response key (scoped on the way by its path and query, and
    by its data), its URL, and the data its key was scoped by (``()``: its data could not be
    fetched)."""

    key: bytes
    url: str
    scoped: bool = False
    data: Optional[PageData] = None

    @property
    def where(self) -> str:
        return _where(self.url)


def _subkey(key: bytes, kind: bytes, what: bytes) -> bytes:
    return hashlib.blake2b(key + kind + what, digest_size=20).digest()


#: Capture entries a kept render leaves out (the page's own timings and certificate, the wait's
#: figures, its data requests: the record of a page that takes the render has its own).
_NOT_KEPT = frozenset({"timings", "tls", "stable_ms", "stable_early", "data_requests", "data"})


def _url_key(url: str) -> Tuple[str, str, int, str, str]:
    """A URL as the browser and Scrapy may spell it differently (default port, empty path, case)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = 0
    return scheme, (parts.hostname or "").lower(), port, parts.path or "/", parts.query


class _Serving:
    """Gives the browser a document fetched already: a route, added after scrapy-playwright's own
    (the last added is tried first), fulfils the tab's first navigation to the request's URL with
    the fetched response and passes every other request on."""

    def __init__(self, response: Response, user_init: Any) -> None:
        self.response = response
        self.user_init = user_init
        self.target = _url_key(response.url)
        self._routes: List[Tuple[Any, Any, Any]] = []

    async def init_page(self, page: Any, request: Any) -> None:
        used: List[bool] = []
        target = self.target

        def matches(url: str) -> bool:
            return not used and _url_key(url) == target

        async def fulfil(route: Any, pw_request: Any) -> None:
            if used or not _is_main_navigation(page, pw_request):
                await route.fallback()
                return
            used.append(True)
            await route.fulfill(status=self.response.status, headers=_fulfil_headers(self.response),
                                body=self.response.body)

        await page.route(matches, fulfil)
        self._routes.append((page, matches, fulfil))
        if self.user_init:
            await load_object(self.user_init)(page, request)

    async def unroute(self) -> None:
        for page, matches, fulfil in self._routes:
            with contextlib.suppress(Exception):  # a closed tab has no routes left
                if not page.is_closed():
                    await page.unroute(matches, fulfil)
        self._routes.clear()


def _is_main_navigation(page: Any, pw_request: Any) -> bool:
    try:
        return bool(pw_request.is_navigation_request()) and pw_request.frame == page.main_frame
    except Exception:  # noqa: BLE001 - a service worker's request has no frame
        return False


def _fulfil_headers(response: Response) -> dict:
    """The headers the browser is given with a fetched document: one value per name (several
    joined by ", ", as HTTP allows: a newline in a fulfilled header stalls the navigation; a
    document that sets several cookies, which cannot be joined, is not given), none of the
    connection's own."""
    headers = {}
    for name, values in response.headers.items():
        key = name.decode("latin-1")
        if key.lower() not in _HOP_HEADERS:
            headers[key] = ", ".join(v.decode("latin-1") for v in values)
    return headers
