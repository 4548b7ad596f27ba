"""scrapy-playwright glue: browser discovery, the stable-page wait, capture and request meta."""

from __future__ import annotations

import re
import time
from html import unescape
from typing import Any, Dict, List, Optional, Tuple

from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.types import PageRecord, clean_text, is_html_type
from scrapy_websim.render.capture import CHROME_ERROR_PAGE, CaptureOptions, capture, make_init_callback, short_error
from scrapy_websim.render.guard import BLOCKED_HEADER, ERROR_HEADER, guard_reason
from scrapy_websim.render.scan import (
    apply_tls,
    context_kwargs,
    tls_error_of_failure,
    tls_from_certificate,
    tls_from_security_details,
)

__all__ = ["render_meta", "record_from_response", "record_from_failure", "capture_options"]

_init_callbacks: Dict[CaptureOptions, Any] = {}

#: A title is cut to this many characters: a page can set a megabyte one, which no spreadsheet
#: cell holds (Excel: 32,767) and Python's CSV reader refuses (over 128 KB).
MAX_TITLE_CHARS = 2000


def capture_options(config: WebsimConfig) -> CaptureOptions:
    return CaptureOptions(
        viewport=tuple(config.viewport),
        stable_timeout=min(config.stable_timeout, max(0.0, config.page_timeout - config.http_timeout)),
        network_idle_ms=config.network_idle_ms,
        dom_stable_checks=config.dom_stable_checks,
        dom_check_interval_ms=config.dom_check_interval_ms,
        stable_early=config.stable_early,
        cookies=config.cookies,
        png=bool(config.screenshots_dir),  # kept as ID.png; else a JPEG (pHash and thumbnail only)
        favicon=config.favicon,
    )


def render_meta(config: WebsimConfig) -> Dict[str, Any]:
    """Request meta that makes scrapy-playwright render the page and run our capture.

    A new PageMethod per request: its ``result`` is where the capture lands.
    """
    from scrapy_playwright.page import PageMethod  # noqa: PLC0415

    options = capture_options(config)
    init = _init_callbacks.get(options)
    if init is None:
        init = _init_callbacks[options] = make_init_callback(options)
    return {
        "playwright": True,
        "playwright_page_init_callback": init,
        "playwright_page_methods": [PageMethod(capture, options)],
        "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded", "timeout": config.http_timeout * 1000},
        "playwright_context_kwargs": context_kwargs(config),
        "handle_httpstatus_all": True,
        "websim_render": True,
        "websim_started": time.time(),
    }


def _capture_result(response: Any) -> Dict[str, Any]:
    for pm in response.meta.get("playwright_page_methods") or ():
        if getattr(pm, "method", None) is capture:
            return pm.result or {}
    return {}


def _header(response: Any, name: str) -> str:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else ""


def _redirect_chain(response: Any) -> List[str]:
    redirects: List[str] = list(response.meta.get("redirect_urls") or [])
    chain = redirects + [response.url] if redirects else [response.request.url]
    if response.url != chain[-1]:  # a JavaScript redirect: no redirect keys, final URL differs
        chain.append(response.url)
    return chain


def _content_length(response: Any) -> int:
    try:
        return int(_header(response, "Content-Length"))
    except ValueError:
        return len(response.body)


def _is_html(response: Any, content_type: str) -> bool:
    """HTML by type; a response without a type when its start says ``<html``."""
    return is_html_type(content_type, empty_is_html=b"<html" in response.body[:2048].lower())


def _html_of(response: Any, cap: Dict[str, Any]) -> str:
    html = cap.get("html") or ""  # a huge page, cut in the browser (capture.MAX_HTML_CHARS)
    if html:
        return html
    try:
        return response.text
    except AttributeError:  # not a TextResponse
        return response.body.decode("utf-8", "replace")


def _apply_response_tls(record: PageRecord, response: Any, cap: Dict[str, Any]) -> None:
    tls = cap.get("tls") or tls_from_security_details(response.meta.get("playwright_security_details"))
    if "playwright" not in (response.flags or ()):  # no verdict of Chromium's: scan.verify_tls's
        tls = tls or tls_from_certificate(getattr(response, "certificate", None))
        tls["tls_error"] = response.meta.get("websim_tls_error", "")
    apply_tls(record, tls)


def _failed_navigation(response: Any, cap: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Where the page went and why it got no page of its own (``capture``'s ``navigation_failed``):
    a meta refresh, a script or a redirect led to a host that could not be reached, or must not be
    (Chromium's error page, or the guard's answer in its place); None for a page of its own."""
    failed = cap.get("navigation_failed")
    if failed:
        return dict(failed)
    refused = guard_reason(_header(response, BLOCKED_HEADER) or _header(response, ERROR_HEADER))
    if refused:
        return {"url": response.url, "error": refused, "chain": []}
    if response.url.startswith(CHROME_ERROR_PAGE):
        return {"url": "", "error": "the browser showed its own error page: a navigation of the page failed",
                "chain": []}
    return None


def failed_navigation_record(response: Any, record_id: int, url: str, failed: Dict[str, Any]) -> PageRecord:
    """The error record of a page whose navigation failed, as for a page that got no response at all:
    no status, no content, no final URL; the redirect chain ends at the URL that could not be
    reached."""
    target = failed.get("url") or ""
    chain = [u for u in (failed.get("chain") or _redirect_chain(response)) if not u.startswith(CHROME_ERROR_PAGE)]
    if not chain:
        chain = [response.request.url if response.request is not None else url]
    if target and chain[-1] != target:
        chain.append(target)
    record = PageRecord(id=record_id, url=url, final_url="", redirect_chain=chain, error=failed["error"][:300])
    record.clean()
    return record


def empty_error_record(record_id: int, url: str, answer: Dict[str, Any]) -> PageRecord:
    """The record of a page that went on (a meta refresh, a script) to an HTTP error with an empty
    body, which Chromium replaced by its own error page: the server's status, headers and URL, no
    content (``capture``'s ``empty_error``)."""
    headers = {str(k).lower(): str(v) for k, v in (answer.get("headers") or {}).items()}
    try:
        length = int(headers.get("content-length") or 0)
    except ValueError:
        length = 0
    record = PageRecord(id=record_id, url=url, final_url=answer["url"],
                        redirect_chain=list(answer.get("chain") or [url]), status_code=int(answer["status"]),
                        content_length=length, content_type=headers.get("content-type", ""),
                        www_authenticate=headers.get("www-authenticate", "")[:200])
    record.clean()
    return record


def record_from_response(response: Any, record_id: int, url: str) -> tuple:
    """``(record, html, screenshot)`` for a response that reached the spider."""
    cap = _capture_result(response)
    if cap.get("empty_error"):
        return empty_error_record(record_id, url, cap["empty_error"]), "", b""
    failed = _failed_navigation(response, cap)
    if failed is not None:
        return failed_navigation_record(response, record_id, url, failed), "", b""
    record, html = _page_record(response, record_id, url, cap)
    if response.url.lower().startswith("https:"):
        _apply_response_tls(record, response, cap)
    record.clean()
    return record, html, cap.get("screenshot") or b""


def _page_record(response: Any, record_id: int, url: str, cap: Dict[str, Any]) -> Tuple[PageRecord, str]:
    """The record of a page of its own (before TLS and cleaning), and its HTML ("" when not HTML)."""
    content_type = _header(response, "Content-Type") or cap.get("content_type", "")
    is_html = _is_html(response, content_type)
    html = clean_text(_html_of(response, cap)) if is_html else ""  # the features parse it
    title = cap.get("title") or (_html_title(html) if html and not cap else "")
    timings = cap.get("timings") or []
    record = PageRecord(
        id=record_id,
        url=url,
        final_url=response.url,
        redirect_chain=_redirect_chain(response),
        status_code=int(response.status),
        content_length=_content_length(response),
        content_type=content_type,
        error=cap.get("capture_error", ""),
        title=title.strip()[:MAX_TITLE_CHARS],
        html_len=len(html.encode("utf-8")) if html else 0,
        rendered=bool(cap.get("rendered")) and is_html,
        render_from=str(cap.get("render_from") or "") if is_html else "",
        timings=[round(float(t), 1) for t in timings if t is not None],
        www_authenticate=_header(response, "WWW-Authenticate")[:200],
        favicon_url=cap.get("favicon_url") or "",
        favicon_hash=cap.get("favicon_hash"),
    )
    return record, html


def record_from_failure(request: Any, exc: BaseException, record_id: int, url: str) -> PageRecord:
    """The record of a request that got no response (refused, DNS, timeout, TLS, crash...)."""
    chain: List[str] = list(request.meta.get("redirect_urls") or [])
    record = PageRecord(id=record_id, url=url, final_url="", redirect_chain=chain or [request.url],
                        error=short_error(exc, request.url), tls_error=tls_error_of_failure(str(exc)))
    record.clean()
    return record


def is_unsafe_port_error(failure: Any) -> bool:
    return "ERR_UNSAFE_PORT" in str(getattr(failure, "value", ""))


#: Chromium errors after which Scrapy's own HTTP client fetches the page (not rendered): a port
#: Chromium refuses, and an HTTP auth challenge (401 + ``WWW-Authenticate``) it will not show.
STATIC_FALLBACK_ERRORS = ("ERR_UNSAFE_PORT", "ERR_INVALID_AUTH_CREDENTIALS")


def static_fallback_reason(failure: Any) -> str:
    """The Chromium error code that calls for a plain HTTP fetch of the page, or ``""``
    (``failure`` is a Twisted Failure or the exception itself)."""
    text = str(getattr(failure, "value", failure))
    return next((code for code in STATIC_FALLBACK_ERRORS if code in text), "")


def _html_title(html: str) -> str:
    """``<title>`` of a page that was fetched but not rendered (a plain HTTP fetch)."""
    match = re.search(r"<title[^>]*>(.*?)</title\s*>", html[:65536], re.I | re.S)
    return " ".join(unescape(match.group(1)).split())[:500] if match else ""
