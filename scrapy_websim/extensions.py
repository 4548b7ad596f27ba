"""The extension that owns the end of the crawl: every page's compact record, the clustering, the report.

The other components reach it only through the signals of :mod:`scrapy_websim.signals`:

* ``inputs_declared`` (from the ``websim`` spider) stores a placeholder record for every input URL,
  so a URL whose request is lost (dropped by a middleware, crawl interrupted) still gets a record
  with ``error`` set: no input URL is ever missing from the output.
* ``page_recorded`` (from the pipeline and the failure middleware) stores a page's record, in place
  of its placeholder.
* ``result_wanted`` (from the exporters and the CLI) is answered with the result, computed once.
  It is computed at the latest when the spider closes, and the HTML report written then.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from typing import Any, Iterable, List, NamedTuple, Set

from scrapy import signals

from scrapy_websim import signals as websim_signals
from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.features import fill_normalized_url
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.types import PageRecord

logger = logging.getLogger(__name__)

NOT_FETCHED = "not fetched: the crawl ended before this URL got a response"
#: The record store's file name inside ``JOBDIR``.
STORE_NAME = "websim-store.sqlite"
#: Pending records are written to disk at least this often (a killed crawl loses at most this much).
FLUSH_SECONDS = 5.0


class Registered(NamedTuple):
    """The answer to ``inputs_declared``: what an earlier run of the same ``JOBDIR`` did already."""

    done: Set[int]  #: input ids with a record of their own (not requested again)
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
        if self.jobdir:  # resumable: the store outlives the process
            os.makedirs(self.jobdir, exist_ok=True)
            self._tmpdir = None
            store_path = os.path.join(self.jobdir, STORE_NAME)
        else:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="websim-")
            store_path = os.path.join(self._tmpdir.name, "features.sqlite")
        self.store = FeatureStore(store_path, batch_size=self.config.batch_size)
        self._last_flush = time.monotonic()
        self.total_inputs = 0
        self.done = 0
        self._next_discovered_id = 1 << 40  # provisional ids of discovered pages, renumbered at the end
        self._started = time.monotonic()
        self._last_progress = self._started
        self._result: Any = None
        self._report_written = False
        self._discovered: Set[int] = set()  # 64-bit digests of the URLs of the discovered pages recorded
        self.sink: Any = None  # a distributed worker's record sink: its records go to Redis
        self._waiting = bytearray()  # 1 at an input id whose record is still the placeholder
        for handler, signal in ((self.spider_closed, signals.spider_closed),
                                (self.add_record, websim_signals.page_recorded),
                                (self.register_inputs, websim_signals.inputs_declared),
                                (self.finalize, websim_signals.result_wanted),
                                (self.open_sink, websim_signals.sink_opened)):
            crawler.signals.connect(handler, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimExtension":
        return cls(crawler)

    # --- during the crawl ---

    def register_inputs(self, entries: Iterable[Any]) -> Registered:
        """Store a placeholder for every input not done yet; answers with what an earlier run of
        the same ``JOBDIR`` did (those records are kept, their URLs are not fetched again)."""
        entries = list(entries)
        done = self._resumed_ids(entries)
        self._waiting = bytearray(max((entry.id for entry in entries), default=0) + 1)
        for entry in entries:
            if entry.id not in done:
                self.store.add(PageRecord(id=entry.id, url=entry.raw, error=NOT_FETCHED,
                                          expanded_from=getattr(entry, "expanded_from", "")))
                self._waiting[entry.id] = 1
            self.total_inputs += 1
        self.store.flush()
        self.stats.set_value("websim/inputs", self.total_inputs)
        if done:
            self.stats.set_value("websim/resumed", len(done))
            logger.info("websim: resuming %s: %d of %d URLs done already", self.jobdir, len(done), len(entries))
        return Registered(done, self.store.probe_origins())

    def _resumed_ids(self, entries: List[Any]) -> Set[int]:
        """Ids whose record in the store is real (not a placeholder) and still belongs to the same line."""
        if not self.jobdir or not len(self.store):
            return set()
        raws = {entry.id: entry.raw for entry in entries}
        done: Set[int] = set()
        stale = []
        for record in self.store.iter_records():
            if raws.get(record.id) != record.url:
                stale.append(record.id)  # a discovered page (found again) or a line of another list
            elif record.error != NOT_FETCHED:
                done.add(record.id)
        for record_id in stale:
            self.store.delete(record_id)
        self.done = len(done)
        return done

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
                self.store.add_probe(record)
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
        (self.store if self.sink is None else self.sink).add(record)
        if 0 < record.id < len(self._waiting):
            self._waiting[record.id] = 0
        self.done += 1
        if time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self.store.flush()
            self._last_flush = time.monotonic()
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
        total = max(self.total_inputs, self.done)
        if rate > 0 and total > self.done:
            left = (total - self.done) / rate
            eta = f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m{int(left % 60):02d}s"
        else:
            eta = "-"
        logger.info("websim: %d/%d pages done, %.2f pages/s, ETA %s", self.done, total, rate, eta)

    # --- at the end ---

    def finalize(self) -> Any:
        """The result, computed on the first call; also sets the stats ``websim/total_urls``,
        ``websim/total_clusters`` and ``websim/not_fetched`` (inputs left without a response)."""
        if self._result is None:
            from scrapy_websim.finalize import Finalizer  # noqa: PLC0415

            started = time.monotonic()
            self.store.flush()
            self._result = Finalizer(self.params).run(self.store, self.total_inputs)
            meta = self._result.meta
            self.stats.set_value("websim/not_fetched", self._waiting.count(1))
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
