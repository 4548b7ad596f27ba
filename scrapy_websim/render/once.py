"""Render each distinct page once: the renders a page may take instead of its own.

The handler fetches a page's document with Scrapy's client first
(:meth:`~scrapy_websim.render.handler.WebsimPlaywrightHandler._fetch_first`). A response whose key
(:func:`scrapy_websim.core.served.response_key`) is the key of a page rendered before, whose render
said what its HTML says (:func:`~scrapy_websim.core.served.renders_as_served`), takes that render;
any other is rendered, with its document served to the browser from the fetch (the host sees one
request for it). :class:`RenderShare` holds the renders by key, bounded in bytes (the least recently
used go first), and makes requests with a key being rendered wait for that render rather than
render it too.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

__all__ = ["Render", "RenderShare"]

#: Bytes of renders kept (HTML and screenshot); a fleet shows a few hundred things.
MAX_BYTES = 64 * 1024 * 1024
#: Keys remembered as "must render" (a marker of a few dozen bytes each).
MAX_KEYS = 200_000


@dataclass
class Render:
    """A page's render another page may take: the capture result (rendered HTML, screenshot,
    title, favicon...), the URL and the host spellings it was made for."""

    url: str
    hosts: Tuple[str, str]
    capture: Dict[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.capture.get("html") or "") + len(self.capture.get("screenshot") or b"") + 256


class RenderShare:
    """Renders by response key. ``None`` under a key: pages with it are rendered each (their
    render changed what the HTML says)."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_keys: int = MAX_KEYS) -> None:
        self.max_bytes = max_bytes
        self.max_keys = max_keys
        self._known: "OrderedDict[bytes, Optional[Render]]" = OrderedDict()
        self._pending: Dict[bytes, asyncio.Future] = {}
        self._bytes = 0

    def known(self, key: bytes) -> Tuple[bool, Optional[Render]]:
        """``(seen, render)``: whether a page with ``key`` was rendered, and its render if pages
        with the key may take it."""
        if key not in self._known:
            return False, None
        self._known.move_to_end(key)
        return True, self._known[key]

    async def wait(self, key: bytes, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for the render of ``key`` in flight; False when none is."""
        future = self._pending.get(key)
        if future is None:
            return False
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            if future.cancelled() or not future.done():
                return True  # gave up waiting: the caller renders itself
        return True

    def rendering(self, key: bytes) -> bool:
        """Whether a request renders ``key`` now."""
        return key in self._pending

    def begin(self, key: bytes) -> bool:
        """Claim the render of ``key``; False when another request renders it now."""
        if key in self._pending:
            return False
        self._pending[key] = asyncio.get_running_loop().create_future()
        return True

    def finish(self, key: bytes, render: Optional[Render], judged: bool = True) -> None:
        """The claimed render of ``key`` is done: ``render`` (or None: pages with the key are
        rendered each). ``judged`` False: the render failed and nothing is known of the key."""
        if judged:
            self._put(key, render)
        future = self._pending.pop(key, None)
        if future is not None and not future.done():
            future.set_result(None)

    def _put(self, key: bytes, render: Optional[Render]) -> None:
        old = self._known.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        self._known[key] = render
        if render is not None:
            self._bytes += render.size
        while self._known and (self._bytes > self.max_bytes or len(self._known) > self.max_keys):
            _, dropped = self._known.popitem(last=False)
            if dropped is not None:
                self._bytes -= dropped.size

    @property
    def bytes(self) -> int:
        return self._bytes
