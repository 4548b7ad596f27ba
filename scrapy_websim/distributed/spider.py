"""The ``websim-worker`` spider: render the URLs of a job from its shared scrapy-redis queue.

Run it with ``websim worker --redis URL --job NAME`` or, in a Scrapy project with the add-on,
``scrapy crawl websim-worker -s WEBSIM_REDIS_URL=redis://HOST:6379/0 -s WEBSIM_REDIS_JOB=NAME``
(``SPIDER_MODULES`` must list ``scrapy_websim.distributed.spider``). The add-on then runs
scrapy-redis's ``Scheduler`` on the job's queue with :class:`~scrapy_websim.distributed.queue.LeaseQueue`.

Each page goes through the same rendering, recorder and features as in a single crawl; its record
is written to the job's ``records`` hash in Redis instead of the local store, and nothing is
clustered here (``websim collect`` does that). A worker stops when every URL of the job has a
record; while other workers still hold leases it waits, and re-queues the leases that expire.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, AsyncIterator

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Request
from twisted.internet import task

from scrapy_websim.config import WebsimConfig
from scrapy_websim.config_values import ConfigError
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.url_list import Entry
from scrapy_websim.crawler import events
from scrapy_websim.distributed.job import Job, JobError, connect, worker_id
from scrapy_websim.spiders.urllist import UrlListSpider

logger = logging.getLogger(__name__)


class RecordSink:
    """Where a worker's extension puts records: the job's Redis hash, leases dropped atomically."""

    def __init__(self, job: Job, queue: Any) -> None:
        self.job, self.queue = job, queue
        self.done = 0

    def add(self, record: PageRecord) -> None:
        if record.id <= 0:
            logger.warning("websim: %s is not a URL of job %r; not recorded", record.url, self.job.name)
            return
        self.job.record(record, self.queue.take_leases(record.id))
        self.done += 1

    def flush(self) -> None:
        """Records are written one by one as they come (nothing buffered to lose)."""

    def __len__(self) -> int:
        return self.done


class WebsimWorkerSpider(UrlListSpider):
    """``scrapy crawl websim-worker`` (settings ``WEBSIM_REDIS_URL`` and ``WEBSIM_REDIS_JOB``)."""

    name = "websim-worker"
    #: the Redis job, set by from_crawler (which refuses to start without one)
    job: Job
    #: the job's queue, set by the LeaseQueue when Scrapy's scheduler opens it
    websim_queue: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        scrapy.Spider.__init__(self, *args, **kwargs)
        self.entries, self.follow, self.max_pages = [], False, 0
        self._sites, self._input_urls, self._discovered, self._capped, self._followed = {}, set(), 0, 0, set()
        self.lease_seconds = 120.0
        self.worker_id = worker_id()
        self._loop: Any = None
        self._started = time.time()
        self._last_wait_log = 0.0

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "WebsimWorkerSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        config = WebsimConfig.from_crawler(crawler)
        if not config.redis_url:
            raise ConfigError("the websim-worker spider needs WEBSIM_REDIS_URL (and WEBSIM_REDIS_JOB): "
                              "-s WEBSIM_REDIS_URL=redis://HOST:6379/0 -s WEBSIM_REDIS_JOB=NAME")
        spider.lease_seconds = config.redis_lease_timeout
        try:
            spider.job = Job(connect(config.redis_url), config.redis_job)
            spider.job.require_pushed()
        except JobError as exc:
            raise ConfigError(str(exc)) from None
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.worker_closed, signal=signals.spider_closed)
        return spider

    # ------------------------------------------------------------------ requests
    def entry_request(self, entry: Entry) -> Request:
        """What ``websim push`` queues for one input entry: plain values, no callbacks (the worker's
        :meth:`prepare_request` sets them, sparing Scrapy's lookup of callback names per request)."""
        return Request(entry.url, dont_filter=True, meta={"websim_id": entry.id, "websim_url": entry.raw})

    def encode_entry(self, entry: Entry) -> bytes:
        return self.websim_queue._encode_request(self.entry_request(entry))

    def prepare_request(self, request: Request) -> Request:
        """A request popped from Redis, with this worker's rendering meta (LeaseQueue calls it)."""
        meta = request.meta
        if meta.get("websim_static"):
            return request
        return self.render_request(request.url, int(meta.get("websim_id") or 0), meta.get("websim_url", request.url))

    async def start(self) -> AsyncIterator[Any]:
        queue = getattr(self, "websim_queue", None)
        if queue is None:
            raise ConfigError("websim-worker: the scheduler is not scrapy-redis's with the websim LeaseQueue; "
                              "enable the add-on and set WEBSIM_REDIS_URL")
        self.sink = RecordSink(self.job, queue)
        counts = self.job.counts()
        events.ask(self.crawler, events.sink_opened, sink=self.sink, total_inputs=counts["fetchable"])
        logger.info("websim: worker %s on job %r: %d of %d URLs left, %d queued, %d leased (lease %.0f s)",
                    self.worker_id, self.job.name, counts["unrecorded"], counts["fetchable"], counts["queued"],
                    counts["leased"], self.lease_seconds)
        self._loop = task.LoopingCall(self.tick)
        self._loop.start(self.lease_seconds / 4, now=True)
        return
        yield  # an async generator that yields nothing: requests come from the Redis queue

    # ------------------------------------------------------------------ liveness
    def tick(self) -> None:
        """Renew this worker's leases, put expired ones (dead workers) back, say we are alive."""
        try:
            self.websim_queue.renew()
            reclaimed = self.job.reclaim_expired()
            if reclaimed:
                logger.info("websim: %d expired leases (a worker died or stalled) put back in the queue", reclaimed)
            sink = getattr(self, "sink", None)
            self.job.heartbeat(self.worker_id, {"host": os.uname().nodename, "pid": os.getpid(),
                                                "started": self._started, "every": self.lease_seconds / 4,
                                                "held": len(self.websim_queue.held),
                                                "done": sink.done if sink else None})
        except Exception:
            logger.exception("websim: worker heartbeat failed")

    def spider_idle(self) -> None:
        """Close only when every URL of the job has a record; otherwise wait for the others."""
        job = self.job
        if job.reclaim_expired() or job.client.llen(job.queue_key):
            raise DontCloseSpider
        counts = job.counts()
        if counts["unrecorded"] == 0:
            logger.info("websim: job %r complete (%d URLs recorded)", job.name, counts["recorded"])
            return
        requeued = job.requeue_missing(self.encode_entry)
        if requeued:
            logger.warning("websim: %d unrecorded URLs were in no queue and no lease (Redis lost state); "
                           "queued again", requeued)
        elif time.monotonic() - self._last_wait_log > 60:
            self._last_wait_log = time.monotonic()
            logger.info("websim: %d URLs left, leased by other workers; waiting for their records or for "
                        "their leases to expire", counts["unrecorded"])
        raise DontCloseSpider

    def worker_closed(self, spider: Any, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        try:
            self.job.client.hdel(self.job.workers_key, self.worker_id)
        except Exception:  # noqa: BLE001
            pass
