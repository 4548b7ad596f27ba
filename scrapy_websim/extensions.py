"""The extension that owns the end of the crawl: every page's compact record, the clustering, the report.

The other components reach it only through the signals of :mod:`scrapy_websim.signals`:

* ``inputs_declared`` (from the ``websim`` spider) hands over the input list as a stream: the
  answer's ``pending`` yields the entries to request, each with a placeholder record stored first
  (``inputs.InputRegistry``), so a URL whose request is lost (dropped by a middleware, crawl
  interrupted) still gets a record with ``error`` set, and the entries never reached get theirs at
  the end: no input URL is ever missing from the output.
* ``page_recorded`` (from the pipeline and the failure middleware) stores a page's record, in place
  of its placeholder.
* ``result_wanted`` (from the exporters and the CLI) is answered with the result, computed once.
  It is computed at the latest when the spider closes, and the HTML report written then.

When the store's folder cannot be written any more (a full disk, a folder made read-only), rendering
stops (the pages in flight are still recorded), the store goes on in a temporary copy and the result
is computed from it; the job folder is left as it was, so the same command resumes once it can be
written again (``websim/store_error`` says what happened).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Set

from scrapy import signals

from scrapy_websim import signals as websim_signals
from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.features import fill_normalized_url
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.store import StoreWriteError
from scrapy_websim.core.types import PageRecord
from scrapy_websim.inputs import NOT_FETCHED, InputRegistry

logger = logging.getLogger(__name__)

__all__ = ["NOT_FETCHED", "Registered", "WebsimExtension", "STORE_NAME", "refuse_appending_feeds"]
#: The record store's file name inside ``JOBDIR``.
STORE_NAME = "websim-store.sqlite"
#: Pending records are written to disk at least this often (a killed crawl loses at most this much).
FLUSH_SECONDS = 5.0


class Registered(NamedTuple):
    """The answer to ``inputs_declared``."""

    #: the entries to request, read from the list as they are asked for, each with its placeholder
    #: stored; an entry an earlier run of the same ``JOBDIR`` recorded is left out
    pending: Iterator[Any]
    probed: Set[str]  #: origins with a soft-404 probe record


def refuse_appending_feeds(feeds: dict) -> None:
    """``scrapy crawl ... -o result.json`` onto an existing result: Scrapy's ``-o`` appends, which
    would leave two JSON documents in one file. Refused before anything is rendered."""
    from scrapy_websim.addon import EXPORTERS  # noqa: PLC0415
    from scrapy_websim.config import ConfigError  # noqa: PLC0415

    for uri, options in feeds.items():
        path = str(uri)
        path = path[len("file://"):] if path.startswith("file://") else path
        if (options or {}).get("format") in EXPORTERS and not (options or {}).get("overwrite") \
                and "://" not in path and os.path.isfile(path) and os.path.getsize(path) > 0:
            raise ConfigError(f"-o {path}: the file exists and scrapy-websim never appends a second result "
                              f"to it (it would no longer be valid). Use -O {path} to overwrite it, or another name")


class WebsimExtension:
    def __init__(self, crawler: Any) -> None:
        from scrapy_websim.core.store import FeatureStore  # noqa: PLC0415
        from scrapy_websim.finalize import Finalizer  # noqa: PLC0415

        self.crawler = crawler
        self.stats = crawler.stats
        self.config = WebsimConfig.from_crawler(crawler)
        refuse_appending_feeds(crawler.settings.getdict("FEEDS"))
        self.params = Finalizer.params_for(crawler)
        self.jobdir = crawler.settings.get("JOBDIR") or ""
        #: why the store's folder could not be written (then the crawl stops), else None
        self.store_error: Optional[str] = None
        if self.jobdir:  # resumable: the store outlives the process
            self._tmpdir = None
            store_path = os.path.join(self.jobdir, STORE_NAME)
        else:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="websim-")
            store_path = os.path.join(self._tmpdir.name, "features.sqlite")
        try:
            if self.jobdir:
                os.makedirs(self.jobdir, exist_ok=True)
            self.store = FeatureStore(store_path, batch_size=self.config.batch_size)
        except (StoreWriteError, OSError) as exc:  # a read-only or full folder: what it holds, in a copy
            self.store = FeatureStore.temporary_copy_of(store_path, batch_size=self.config.batch_size)
            self._store_failed(exc if isinstance(exc, StoreWriteError) else StoreWriteError(store_path, str(exc)))
        self.inputs = InputRegistry(self.store, resumable=bool(self.jobdir), on_store_error=self._store_failed)
        self._last_flush = time.monotonic()
        self.total_inputs = 0
        self.recorded = 0  # records added by this run
        self._next_discovered_id = 1 << 40  # provisional ids of discovered pages, renumbered at the end
        self._started = time.monotonic()
        self._last_progress = self._started
        self._result: Any = None
        self._report_written = False
        self._discovered: Set[int] = set()  # 64-bit digests of the URLs of the discovered pages recorded
        self.sink: Any = None  # a distributed worker's record sink: its records go to Redis
        for handler, signal in ((self.spider_closed, signals.spider_closed),
                                (self.spider_opened, signals.spider_opened),
                                (self.add_record, websim_signals.page_recorded),
                                (self.register_inputs, websim_signals.inputs_declared),
                                (self.finalize, websim_signals.result_wanted),
                                (self.open_sink, websim_signals.sink_opened)):
            crawler.signals.connect(handler, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimExtension":
        return cls(crawler)

    # --- during the crawl ---

    @property
    def done(self) -> int:
        """Inputs with a record of their own: recorded by this run or an earlier run of the job."""
        return self.recorded + self.inputs.done_before

    def register_inputs(self, entries: Iterable[Any]) -> Registered:
        """The input list, read as the spider asks for its entries (see :class:`Registered`)."""
        probed = self.store.probe_origins()
        self.stats.set_value("websim/inputs", 0)  # the crawl started: the count is known once the list is read
        return Registered(self._pending(entries), probed)

    def _pending(self, entries: Iterable[Any]) -> Iterator[Any]:
        resumed = False
        for entry in self.inputs.pending(entries):
            if not resumed and self.inputs.done_before:
                resumed = True
                logger.info("websim: resuming %s: URLs done by an earlier run are not requested again", self.jobdir)
            yield entry
        self._inputs_read()

    def _inputs_read(self) -> None:
        if self.total_inputs == self.inputs.total and self.total_inputs:
            return
        self.total_inputs = self.inputs.total
        self.stats.set_value("websim/inputs", self.total_inputs)
        if self.inputs.done_before:
            self.stats.set_value("websim/resumed", self.inputs.done_before)
            logger.info("websim: resumed %s: %d of %d URLs were done already", self.jobdir, self.inputs.done_before,
                        self.total_inputs)

    def spider_opened(self, spider: Any) -> None:
        if self.store_error:  # the folder could not be written from the start: nothing is rendered
            self._stop()

    def open_sink(self, sink: Any, total_inputs: int) -> bool:
        """A distributed worker's records go to ``sink``; the job's collector clusters them."""
        self.sink = sink
        self.total_inputs = total_inputs
        return True

    def add_record(self, record: PageRecord) -> bool:
        """Store a page's record. A discovered page (id 0: found by a spider, not an input) whose URL
        has a record already is dropped: a page fetched twice is recorded once. True: the record is
        taken care of."""
        if record.probe_for:  # a soft-404 probe: kept apart, never a url record
            if self.sink is None:
                try:
                    self.store.add_probe(record)
                except StoreWriteError as exc:
                    self._store_failed(exc)
            self.stats.inc_value("websim/soft404_probes")
            return True
        if record.id <= 0:
            digest = blake2b64(record.url)
            if digest in self._discovered:
                return True
            self._discovered.add(digest)
            record.id = self._next_discovered_id
            self._next_discovered_id += 1
        fill_normalized_url(record, self.params.features)
        self.inputs.recorded(record.id)
        self.recorded += 1
        try:  # a record the store cannot write stays pending: it goes to the temporary copy
            (self.store if self.sink is None else self.sink).add(record)
            if time.monotonic() - self._last_flush > FLUSH_SECONDS:
                self._last_flush = time.monotonic()
                self.store.flush()
        except StoreWriteError as exc:
            self._store_failed(exc)
        self.stats.inc_value("websim/records")
        if record.error:
            self.stats.inc_value("websim/failed")
        elif record.predicted_duplicate_of:
            self.stats.inc_value("websim/predicted")
        elif record.rendered:
            self.stats.inc_value("websim/rendered")
        elif record.html_len:
            self.stats.inc_value("websim/static")
        elif record.status_code:
            self.stats.inc_value("websim/non_html")
        self._maybe_log_progress()
        return True

    def _maybe_log_progress(self) -> None:
        interval = self.config.progress_interval
        now = time.monotonic()
        if not interval or now - self._last_progress < interval:
            return
        self._last_progress = now
        elapsed = now - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        total = max(self.total_inputs or self.inputs.total, self.done)
        read_all = self.inputs.finished or self.sink is not None
        if rate > 0 and total > self.done and read_all:
            left = (total - self.done) / rate
            eta = f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m{int(left % 60):02d}s"
        else:
            eta = "-"
        logger.info("websim: %d/%d%s pages done, %.2f pages/s, ETA %s", self.done, total, "" if read_all else "+",
                    rate, eta)

    def _store_failed(self, exc: StoreWriteError) -> None:
        """The store's folder cannot be written: stop rendering (the pages in flight are still
        recorded), and go on in a temporary copy of the store (the folder is left as it was: the job
        resumes from it once it can be written)."""
        if self.store_error is None:
            folder = self.jobdir or os.path.dirname(exc.path)
            what = "the job folder" if self.jobdir else "the folder of the record store"
            self.store_error = f"{what} {folder} cannot be written: {exc.cause}"
            logger.error("websim: %s; rendering stops and the result holds what was recorded", self.store_error)
            self.stats.set_value("websim/store_error", self.store_error)
            self._stop()
        if exc.path == self.store.path:
            try:
                where = self.store.move_to_temporary()
                logger.info("websim: the records go on in a temporary copy of the store (%s)", where)
            except StoreWriteError as again:
                logger.error("websim: no temporary copy of the store could be made (%s); the records wait in "
                             "memory", again.cause)

    def _stop(self) -> None:
        """Close the spider (once it is open): no new page is rendered."""
        engine = getattr(self.crawler, "engine", None)
        if engine is None or getattr(engine, "spider", None) is None or not getattr(engine, "running", False):
            return
        from scrapy.utils.defer import deferred_from_coro  # noqa: PLC0415

        deferred_from_coro(engine.close_spider_async(reason="store_unwritable"))

    # --- at the end ---

    def finalize(self) -> Any:
        """The result, computed on the first call; also sets the stats ``websim/total_urls``,
        ``websim/total_clusters`` and ``websim/not_fetched`` (inputs left without a response)."""
        if self._result is None:
            from scrapy_websim.finalize import Finalizer  # noqa: PLC0415

            started = time.monotonic()
            self._close_inputs()
            self._result = Finalizer(self.params).run(self.store, self.total_inputs)
            meta = self._result.meta
            self.stats.set_value("websim/not_fetched", self.inputs.waiting)
            for key in ("total_urls", "eligible_html_urls", "total_clusters"):
                self.stats.set_value(f"websim/{key}", meta[key])
            self.stats.set_value("websim/finalize_seconds", round(time.monotonic() - started, 3))
            if self.config.features_file:
                try:
                    self.store.save_jsonl(self.config.features_file)
                    logger.info("websim: features of %d pages written to %s", len(self.store),
                                self.config.features_file)
                except (OSError, ValueError) as exc:  # the result files are written all the same
                    logger.error("websim: the features file %s could not be written: %s",
                                 self.config.features_file, exc)
                    self.stats.set_value("websim/features_file_error", str(exc))
            if meta.get("error"):
                logger.error("websim: %s", meta["error"])
                self.stats.set_value("websim/finalize_error", meta["error"])
            logger.info(
                "websim: %d URLs, %d eligible for content clustering, %d clusters",
                meta["total_urls"], meta["eligible_html_urls"], meta["total_clusters"],
            )
        return self._result

    def _close_inputs(self) -> None:
        """Before the result: every input has its record (the list read to its end), the pages
        discovered by following links have their final ids, everything is written."""
        from scrapy_websim.finalize import renumber_discovered  # noqa: PLC0415

        for _attempt in range(3):
            try:
                self.inputs.finish()
                renumber_discovered(self.store)
                self.store.flush()
                break
            except StoreWriteError as exc:
                self._store_failed(exc)
        self._inputs_read()

    def spider_closed(self, spider: Any, reason: str) -> None:
        if self.sink is not None:  # a distributed worker: its records are in Redis, 'websim collect' clusters
            return
        result = self.finalize()
        if self.config.report_dir and not self._report_written:
            self._report_written = True
            self.write_report(result)

    def write_report(self, result: Any) -> None:
        """``WEBSIM_REPORT_DIR``: the HTML report, with the thumbnails kept during the crawl."""
        from scrapy_websim.report import ReportError, write_report  # noqa: PLC0415

        try:
            info = write_report(self.config.report_dir, result.url_rows(), result.cluster_rows(), result.meta,
                                thumbs_dir=self.config.thumbnails_path or None)
        except (ReportError, OSError) as exc:
            logger.error("websim: the report could not be written to %s: %s", self.config.report_dir, exc)
            return
        except Exception:
            logger.exception("websim: the report could not be written to %s", self.config.report_dir)
            return
        self.stats.set_value("websim/report", info.path)
        logger.info("websim: report of %d URLs, %d clusters, %d thumbnails written to %s in %.1f s",
                    info.urls, info.clusters, info.thumbnails, info.path, info.seconds)
