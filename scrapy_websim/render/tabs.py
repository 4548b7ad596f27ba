"""Browser tabs reused from one page to the next (``WEBSIM_PARAMS`` key ``crawl.tab_reuse``).

scrapy-playwright opens a new tab for every request and closes it after. Each new tab costs
Chromium a new renderer process (start-up, a fresh V8 heap and Blink document machinery), a good
part of a page's Chromium CPU (docs/performance.md, "Where the time goes"). A tab that navigates to
the next URL of the same site keeps its renderer.

:class:`TabPool` keeps the tabs of finished pages, per browser context, for the next request.
A kept tab still holds its page slot (``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT``, released when the
tab closes), so at most that many tabs exist; a request that finds no kept tab and no free slot
waits here until a tab comes back or closes (never in scrapy-playwright's slot semaphore, which a
kept tab would hold for ever; the handler closes a finished tab instead of keeping it when a
request may be waiting there). A tab is closed instead of kept after ``max_uses`` pages,
after any failure (timeout, crash, download, blocked) and when its context is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import Any, Dict, List, Optional


class TabPool:
    def __init__(self, max_uses: int) -> None:
        self.max_uses = max_uses
        self.idle: Dict[str, List[Any]] = {}
        self.uses: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()
        self._waiters: List[asyncio.Future] = []

    @property
    def enabled(self) -> bool:
        return self.max_uses > 1

    def take(self, context_name: str, context: Any) -> Optional[Any]:
        """A kept tab of ``context`` (the context's current object), or None."""
        idle = self.idle.get(context_name) or []
        while idle:
            page = idle.pop()
            if not page.is_closed() and context is not None and page.context is context:
                return page
        return None

    def keep(self, context_name: str, page: Any) -> bool:
        """Keep ``page`` for the next request; False when it has served ``max_uses`` pages or is closed."""
        uses = self.uses.get(page, 0) + 1
        self.uses[page] = uses
        if uses >= self.max_uses or page.is_closed():
            return False
        self.idle.setdefault(context_name, []).append(page)
        self.notify()
        return True

    def notify(self, *_: Any) -> None:
        """A tab came back or closed (its slot is free): wake the requests waiting for one."""
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait(self, timeout: float = 0.25) -> None:
        """Until :meth:`notify` or ``timeout`` seconds (a slot can also free without a notice)."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(fut, timeout)
