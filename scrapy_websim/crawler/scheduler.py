"""Scrapy's scheduler, for a ``JOBDIR`` whose disk fills up or turns read-only during the crawl.

Scrapy keeps its request queue (``requests.queue``) and its seen requests (``requests.seen``) in the
job folder. When the disk refuses a write there, Scrapy's own scheduler raises out of the engine
(the start requests stop, with a traceback) or leaves its queue files half-written. Here a request
that cannot be written to the disk queue goes to the memory queue, and a queue that cannot be saved
at the end is said in one line: the next ``websim --resume`` run starts an unreadable queue over
(``commands.jobdir.JobFolder.repair_scrapy_files``) and requests every URL not done again from the list.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from scrapy.core.scheduler import Scheduler

logger = logging.getLogger(__name__)


class WebsimScheduler(Scheduler):
    """Scrapy's ``Scheduler`` with disk writes that may fail (``SCHEDULER``, set by the add-on when
    it is Scrapy's own). Overrides Scrapy's private ``_dqpush`` and ``_dqpop`` (see setup.cfg)."""

    _disk_trouble: Optional[str] = None

    def _disk_failed(self, exc: OSError) -> None:
        if self._disk_trouble is None:
            self._disk_trouble = exc.strerror or str(exc)
            logger.error("websim: Scrapy's request queue in %s cannot be written (%s); requests are kept in memory "
                         "and the next run starts the queue over", self.dqdir, self._disk_trouble)
        if self.stats is not None:
            self.stats.set_value("websim/scheduler_disk_error", self._disk_trouble)

    def enqueue_request(self, request: Any) -> bool:
        try:
            return super().enqueue_request(request)
        except OSError as exc:  # requests.seen could not be written: the request is scheduled all the same
            self._disk_failed(exc)
            self._mqpush(request)
            return True

    def _dqpush(self, request: Any) -> bool:
        if self._disk_trouble is not None:
            return False  # the memory queue from now on
        try:
            return super()._dqpush(request)
        except OSError as exc:
            self._disk_failed(exc)
            return False

    def _dqpop(self) -> Any:
        # a disk queue that empties is closed, and closing writes its info file: on a full disk
        # that write fails after the request was taken; the run stops rendering then anyway, and
        # the next run requests again every URL not recorded
        try:
            return super()._dqpop()
        except OSError as exc:
            self._disk_failed(exc)
            return None

    def close(self, reason: str) -> Any:
        try:
            return super().close(reason)
        except OSError as exc:
            self._disk_failed(exc)
        try:
            return self.df.close(reason)
        except OSError as exc:
            self._disk_failed(exc)
        return None
