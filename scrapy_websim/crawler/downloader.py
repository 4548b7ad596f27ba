"""``DOWNLOADER`` that keeps ``CONCURRENT_REQUESTS_PER_DOMAIN`` with the asyncio reactor.

Scrapy 2.19's ``Downloader._process_queue`` pops requests off a slot's queue while
``slot.free_transfer_slots() > 0``, but a popped request only enters ``slot.transferring`` when its
download task first runs; with the asyncio reactor (which scrapy-playwright needs) that is after
the loop, so a slot's whole queue leaves at once: with ``CONCURRENT_REQUESTS_PER_DOMAIN = 1`` a
host got 7 requests at once (measured; 1 with the epoll reactor). Here a slot's queue marks a
request as transferring the moment it is popped. Scrapy's own ``transferring.add`` later is a
no-op and its ``remove`` still frees the place, so this stays correct once Scrapy fixes the race.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Tuple

from scrapy.core.downloader import Downloader


class _ReservingQueue(deque):
    def __init__(self, slot: Any) -> None:
        super().__init__(slot.queue)
        self._slot = slot

    def popleft(self) -> Any:
        item = super().popleft()
        self._slot.transferring.add(item[0])
        return item


class WebsimDownloader(Downloader):
    def _get_slot(self, request: Any, spider: Any = None) -> Tuple[str, Any]:
        key, slot = super()._get_slot(request)
        if not isinstance(slot.queue, _ReservingQueue):
            slot.queue = _ReservingQueue(slot)
        return key, slot
