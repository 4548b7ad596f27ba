"""The data a page's scripts fetched, as the render saw it, so another host's page can be checked
against it without rendering.

A shell page (its scripts fill it in from ``fetch``/XHR answers) renders as a function of its
document, its scripts, the data they fetched and its URL. Render-once
(:mod:`~scrapy_websim.render.once`) may give such a page's render to a page of another host whose
document, path and query are the same *and* whose data answers are the same (fetched with Scrapy's
client, compared with :func:`data_key`). That is only sound when every data request is one that can
be fetched again: a GET of the page's own origin, not redirected, with an answer of bounded size,
and no WebSocket or event stream. :class:`DataLog` records them per page and says ``None`` (not
checkable: such a page is rendered on every host, as before) when any is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from scrapy_websim.core.served import response_key, spellings

logger = logging.getLogger(__name__)

__all__ = ["MAX_DATA_BYTES", "MAX_DATA_REQUESTS", "DataLog", "data_key", "where"]

#: Data requests a checkable page may make (each is fetched again for every other host's page).
MAX_DATA_REQUESTS = 8
#: Bytes of one data answer that are compared; a larger one makes the page not checkable.
MAX_DATA_BYTES = 1024 * 1024
#: Seconds the capture waits for the answers' bodies still being read.
READ_TIMEOUT = 2.0

#: The page's data as it was fetched: ``((path and query, key of the answer), ...)``, sorted.
PageData = Tuple[Tuple[str, bytes], ...]


def where(url: str) -> str:
    """A URL's path and query: what a script may read of its location besides the host."""
    parts = urlsplit(url)
    return (parts.path or "/") + ("?" + parts.query if parts.query else "")


def _origin(url: str) -> Tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def data_key(answers: List[Tuple[str, int, str, bytes]], page_url: str) -> Optional[PageData]:
    """``answers`` (URL, status, content type, body) keyed as one page's data: each answer's key
    (:func:`~scrapy_websim.core.served.response_key`, the page's host masked) by its path and
    query; None when one is of another origin, too large, or one URL had two different answers."""
    hosts = spellings(page_url)
    origin = _origin(page_url)
    keys: Dict[str, bytes] = {}
    for url, status, content_type, body in answers:
        if _origin(url) != origin or len(body) > MAX_DATA_BYTES:
            return None
        key = response_key(status, content_type, body, hosts)
        if keys.setdefault(where(url), key) != key:
            return None
    return tuple(sorted(keys.items()))


class DataLog:
    """The data requests of one page (see the module docstring): fed by the page's ``request``,
    ``requestfinished`` and ``websocket`` events, read once by :meth:`data`."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.checkable = True
        self._answers: List[Tuple[str, int, str, bytes]] = []
        self._reads: List[asyncio.Future] = []
        self._requests = 0

    def not_checkable(self) -> None:
        """A request that cannot be fetched again (a WebSocket, an event stream, a POST...)."""
        self.checkable = False

    def requested(self, request: Any) -> None:
        """A data request started (``request.resource_type`` is one of data)."""
        self._requests += 1
        with contextlib.suppress(Exception):
            if (self._requests > MAX_DATA_REQUESTS or request.resource_type not in ("xhr", "fetch")
                    or request.method != "GET" or request.redirected_from is not None):
                self.checkable = False

    def finished(self, request: Any) -> None:
        """A data request's answer is in: its body is read (in the background) while checkable."""
        if self.checkable:
            self._reads.append(asyncio.ensure_future(self._read(request)))

    async def _read(self, request: Any) -> None:
        try:
            response = await request.response()
            if response is None or 300 <= response.status < 400:
                self.checkable = False
                return
            body = await response.body()
            self._answers.append((request.url, response.status, response.headers.get("content-type", ""), body))
        except Exception as exc:  # noqa: BLE001 - a body the browser let go: not checkable
            logger.debug("websim: a data answer of the page could not be read (%s)", exc)
            self.checkable = False

    async def data(self, page_url: str) -> Optional[PageData]:
        """The page's data (:func:`data_key`) once its answers are read; None when not checkable."""
        if self._reads:
            _, pending = await asyncio.wait(self._reads, timeout=READ_TIMEOUT)
            for read in pending:
                read.cancel()
                self.checkable = False
        if not self.checkable or len(self._answers) != self._requests:
            return None
        return data_key(self._answers, page_url)
