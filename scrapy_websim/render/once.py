"""Render each distinct page once: the renders a page may take instead of its own.

The handler fetches a page's document with Scrapy's client first
(:meth:`~scrapy_websim.render.handler.WebsimPlaywrightHandler._fetch_first`). A response whose key
(:func:`scrapy_websim.core.served.response_key`) is the key of a page rendered before takes that
render when it said what its HTML says (:func:`~scrapy_websim.core.served.renders_as_served`), or
when a script changed the page without fetching data and a second render, on another host, said
the same; any other is rendered, with its document served to the browser from the fetch (the host sees one
request for it). :class:`RenderShare` holds the renders by key, bounded in bytes (the least recently
used go first), and makes requests with a key being rendered wait for that render rather than
render it too.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

__all__ = ["CANDIDATE", "NEVER", "SHARED", "UNJUDGED", "Render", "RenderShare"]

#: Bytes of renders kept (HTML and screenshot); a fleet shows a few hundred things.
MAX_BYTES = 64 * 1024 * 1024
#: Keys remembered as "must render" (a marker of a few dozen bytes each).
MAX_KEYS = 200_000


#: What pages with one key do: take the render kept under it; render each (their renders differ,
#: or a script fetched data); render once more (the first render's script changed what the HTML
#: says without fetching data: a second render on another host tells whether it always does the same);
#: judge the first render, kept with the document it was given, when a second page with the key
#: comes (most keys of a site crawl never see a second page: their render is never judged).
SHARED, NEVER, CANDIDATE, UNJUDGED = "shared", "never", "candidate", "unjudged"


@dataclass
class Render:
    """A page's render another page may take: the capture result (rendered HTML, screenshot,
    title, favicon...), the URL and the host spellings it was made for, its signature once worked
    out (what it says, its host masked: two renders of one document compare by it), and until it
    is judged the document it was given (``served``) and whether its scripts fetched data."""

    url: str
    hosts: Tuple[str, ...]
    capture: Dict[str, Any] = field(default_factory=dict)
    signature: bytes = b""
    served: str = ""
    scripted_data: bool = False

    @property
    def size(self) -> int:
        return (len(self.capture.get("html") or "") + len(self.capture.get("screenshot") or b"")
                + len(self.served) + 256)


class RenderShare:
    """What is known of each response key: ``(UNJUDGED, render)``, ``(SHARED, render)``,
    ``(CANDIDATE, render)`` or ``(NEVER, None)``; keys in flight are claimed by one request and the
    others wait for it."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_keys: int = MAX_KEYS) -> None:
        self.max_bytes = max_bytes
        self.max_keys = max_keys
        self._known: "OrderedDict[bytes, Tuple[str, Optional[Render]]]" = OrderedDict()
        self._pending: Dict[bytes, asyncio.Future] = {}
        self._bytes = 0

    def known(self, key: bytes) -> Tuple[str, Optional[Render]]:
        """``(state, render)`` of ``key``; ``("", None)`` for a key never rendered."""
        if key not in self._known:
            return "", None
        self._known.move_to_end(key)
        return self._known[key]

    async def wait(self, key: bytes, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for the render of ``key`` in flight to be judged;
        False when it was not within ``timeout`` (the caller renders itself)."""
        future = self._pending.get(key)
        if future is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            return False
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

    def finish(self, key: bytes, state: str = NEVER, render: Optional[Render] = None, judged: bool = True) -> None:
        """The claimed render of ``key`` is done and judged: ``state`` (and the render kept with it).
        ``judged`` False: the render failed and nothing more is known of the key."""
        if judged:
            self._put(key, state, render if state != NEVER else None)
        future = self._pending.pop(key, None)
        if future is not None and not future.done():
            future.set_result(None)

    def settle(self, key: bytes, state: str, render: Optional[Render]) -> None:
        """An unjudged render of ``key`` judged: ``state``; the document it was given is let go."""
        if render is None:
            return
        entry = self._known.get(key)
        kept = entry is not None and entry[1] is render
        if kept:
            self._bytes -= render.size
        render.served = ""
        if not kept:
            return
        self._known[key] = (state, render if state != NEVER else None)
        if state != NEVER:
            self._bytes += render.size

    def _put(self, key: bytes, state: str, render: Optional[Render]) -> None:
        old = self._known.pop(key, None)
        if old is not None and old[1] is not None:
            self._bytes -= old[1].size
        self._known[key] = (state, render)
        if render is not None:
            self._bytes += render.size
        while self._known and (self._bytes > self.max_bytes or len(self._known) > self.max_keys):
            _, (_, dropped) = self._known.popitem(last=False)
            if dropped is not None:
                self._bytes -= dropped.size

    @property
    def bytes(self) -> int:
        return self._bytes
