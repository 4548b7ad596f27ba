"""scrapy-redis's FIFO request queue, with a lease on every pop so that a dead worker loses nothing.

scrapy-redis pops a request from Redis and from then on it lives only in the worker's memory: a
worker killed with SIGKILL loses every request it held. :class:`LeaseQueue` is
``scrapy_redis.queue.FifoQueue`` (``SCHEDULER_QUEUE_CLASS``, used by scrapy-redis's own
``Scheduler``) whose ``pop`` moves the request into the job's lease set in the same atomic step;
the lease is renewed while the worker lives and dropped when the page's record is written
(:meth:`scrapy_websim.distributed.job.Job.record`). An expired lease goes back to the queue.

Only plain values travel through Redis: the request's URL, its callbacks by name and the
``websim_*`` meta keys. The rendering meta (scrapy-playwright page methods and callbacks) is
added by the worker spider after the pop.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from scrapy import Request
from scrapy_redis.queue import FifoQueue

from scrapy_websim.config_values import ConfigError
from scrapy_websim.distributed.job import Job
from scrapy_websim.distributed.spider import WebsimWorkerSpider

#: The request meta that goes through Redis (everything else is rebuilt by the worker).
PORTABLE_META = ("websim_id", "websim_url", "websim_static", "handle_httpstatus_all", "dont_redirect")

#: Seconds a popped request stays leased without renewal (``WEBSIM_REDIS_LEASE_TIMEOUT``).
DEFAULT_LEASE_SECONDS = 120.0


def portable(request: Request) -> Request:
    meta = {k: request.meta[k] for k in PORTABLE_META if k in request.meta}
    return request.replace(meta=meta)


class LeaseQueue(FifoQueue):
    """``FifoQueue`` whose pop leases the request (see the module docstring)."""

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None) -> None:
        if not hasattr(spider, "prepare_request"):
            raise ConfigError(f"WEBSIM_REDIS_URL is set, so this crawl is a worker of a distributed job: run the "
                              f"'websim-worker' spider, not {getattr(spider, 'name', spider)!r} (or unset it)")
        super().__init__(server, spider, key, serializer)
        self.job = Job.from_queue_key(server, self.key)
        self.lease_seconds = float(getattr(spider, "lease_seconds", DEFAULT_LEASE_SECONDS))
        #: page id -> encoded requests this worker holds a lease on
        self.held: Dict[int, List[bytes]] = {}
        spider.websim_queue = self

    def _encode_request(self, request: Request) -> bytes:
        return super()._encode_request(portable(request))

    def push(self, request: Request) -> None:
        """Queue a request (a worker's retry of a page it holds: its old lease goes once it is queued)."""
        self.server.lpush(self.key, self._encode_request(request))
        page_id = int(request.meta.get("websim_id") or 0)
        if page_id in self.held:
            self.job.release(self.held.pop(page_id))

    def pop(self, timeout: float = 0) -> Optional[Request]:
        while True:
            data = self.job.lease_pop(self.lease_seconds)
            if data is None:
                return None
            request = self._decode_request(data)
            page_id = int(request.meta.get("websim_id") or 0)
            if page_id and self.job.is_recorded(page_id):
                self.job.release([data])  # done already (by a worker that outlived its lease)
                continue
            self.held.setdefault(page_id, []).append(data)
            return self.spider.prepare_request(request)

    def take_leases(self, page_id: int) -> List[bytes]:
        """The leases of ``page_id``'s requests, forgotten here (its record is being written)."""
        return self.held.pop(page_id, [])

    def renew(self) -> int:
        members = [m for ms in self.held.values() for m in ms]
        return self.job.renew(members, self.lease_seconds)


def entry_encoder(job: Job) -> Any:
    """The function that turns an input entry into the encoded request scrapy-redis's queue holds."""
    spider = WebsimWorkerSpider()
    LeaseQueue(job.client, spider, job.queue_key)  # sets spider.websim_queue
    return spider.encode_entry
