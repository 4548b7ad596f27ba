"""The extension that owns the end of the crawl: every page's compact record, the clustering, the report.

The other components reach it only through the signals of :mod:`scrapy_websim.crawler.events`:

* ``inputs_declared`` (from the ``websim`` spider) hands over the input list as a stream: the
  answer's ``pending`` yields the entries to request, each with a placeholder record stored first
  (``inputs.InputRegistry``), so a URL whose request is lost (dropped by a middleware, crawl
  interrupted) still gets a record with ``error`` set, and the entries never reached get theirs at
  the end: no input URL is ever missing from the output.
* ``page_recorded`` (from the recorder, the failure middleware and the duplicate predictor) stores
  a page's record, in place of its placeholder.
* ``result_wanted`` (from the ``websim`` command) is answered with the result's rows
  (``result/rows.py``), computed once. They are computed at the latest when the spider closes; the
  result files of ``WEBSIM_OUTPUT`` (the ``websim`` spider's ``-o``), the features file and the
  HTML report are written then, from one pass over the store (``output.write_files``).

Before anything is rendered it checks that every output can be written (a file is created and
removed where each goes) and that the spider's arguments are usable; if not, it logs one
``websim: error:`` line per problem, lets no request through and the crawl fails. An output that
fails at the end is written to a fallback place the error names; a Scrapy crawl whose outputs were
not all written where asked exits 1 (:func:`fail_crawl`).

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
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro

from scrapy_websim.config import WebsimParams, result_format
from scrapy_websim.core.features import fill_normalized_url
from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.store import FeatureStore, StoreWriteError
from scrapy_websim.core.types import PageRecord
from scrapy_websim.crawler import events
from scrapy_websim.crawler.addon import feed_problems, own_spider
from scrapy_websim.crawler.inputs import InputRegistry
from scrapy_websim.crawler.progress import Progress
from scrapy_websim.result.finalize import Finalizer, renumber_discovered
from scrapy_websim.result.output import write_files
from scrapy_websim.result.report.writer import ReportBuilder, ReportError
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.result.safefile import (
    Written,
    fallback_dirs,
    output_error,
    probe_dir,
    probe_file,
)

logger = logging.getLogger(__name__)

__all__ = ["Registered", "STORE_NAME", "WebsimExtension", "default_result_file", "fail_crawl"]

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


def fail_crawl(crawler: Any) -> None:
    """Make ``scrapy crawl`` (and ``scrapy runspider``) exit 1. No public interface lets a component
    set the exit status; Scrapy's commands exit 1 when a crawler ends without a spider (their check
    that a crawl could start), so the crawler's spider is let go once the engine has stopped and
    nothing needs it any more."""
    crawler.spider = None


def default_result_file(spider: Any) -> str:
    """Where a user's spider's result goes when ``WEBSIM_OUTPUT`` is not set."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(getattr(spider, "name", "") or "spider"))
    return f"websim-{name}.json"


def _record_kind(record: PageRecord) -> str:
    """The stat a record counts in (``websim/KIND``), or ``""``."""
    if record.error:
        return "failed"
    if record.predicted_duplicate_of:
        return "predicted"
    if record.rendered:
        return "rendered"
    if record.html_len:
        return "static"
    return "non_html" if record.status_code else ""


class WebsimExtension:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.params = WebsimParams.from_crawler(crawler)
        self.config = self.params.config
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
        self._result: Optional[ResultRows] = None
        self._report_written = False
        self._features_written = False
        self._discovered: Set[int] = set()  # 64-bit digests of the URLs of the discovered pages recorded
        self._predicted: Dict[int, int] = {}  # digest -> id of a discovered page recorded as predicted only
        self.sink: Any = None  # a distributed worker's record sink: its records go to Redis
        self.result_files = self._result_files(getattr(crawler, "spider", None))
        self.problems = self._start_problems(getattr(crawler, "spider", None))
        self.output_errors: List[str] = []
        self.progress = Progress(self.config.progress, self.config.progress_interval)
        for handler, signal in ((self.spider_opened, signals.spider_opened),
                                (self.spider_closed, signals.spider_closed),
                                (self.engine_stopped, signals.engine_stopped),
                                (self.add_record, events.page_recorded),
                                (self.register_inputs, events.inputs_declared),
                                (self.finalize, events.result_wanted),
                                (self.open_sink, events.sink_opened)):
            crawler.signals.connect(handler, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimExtension":
        return cls(crawler)

    # --- before the crawl ---

    def _result_files(self, spider: Any) -> List[Tuple[str, str]]:
        """``[(path, format)]`` of the result files this crawl writes: ``WEBSIM_OUTPUT`` (the
        ``websim`` spider's ``-o`` among them); with a user's spider and none set,
        :func:`default_result_file`. None for a distributed worker (``websim collect`` writes)."""
        if self.config.redis_url:
            return []
        paths = list(self.config.output)
        if not paths and spider is not None and not own_spider(type(spider)):
            paths = [default_result_file(spider)]
        return [(path, result_format(path)) for path in paths]

    def _start_problems(self, spider: Any) -> List[str]:
        """Why this crawl must not start: the spider's arguments, the websim spider's ``-o``, and
        every output that cannot be created where it goes."""
        problems = [getattr(spider, "websim_usage_error", "")] + feed_problems(self.crawler)
        config = self.config
        places = [("the result file", path, probe_file) for path, _fmt in self.result_files]
        places += [("the features file", config.features_file, probe_file),
                   ("the report folder", config.report_dir, probe_dir),
                   ("the thumbnails folder", config.thumbnails_path, probe_dir),
                   ("the screenshots folder", config.screenshots_dir, probe_dir)]
        for what, path, probe in places:
            problem = probe(path) if path else ""
            if problem:
                problems.append(f"{what} {path} cannot be written: {problem}")
        return [p for p in problems if p]

    def spider_opened(self, spider: Any) -> None:
        if self.store_error:  # the folder could not be written from the start: nothing is rendered
            self._stop()
        if self.problems:
            for problem in self.problems:
                logger.error("websim: error: %s", problem)
            logger.error("websim: nothing is rendered")
            self.stats.set_value("websim/refused", list(self.problems))
            self.crawler.signals.connect(self.refuse, signal=signals.request_scheduled)
            return
        if self.result_files:
            how = "" if self.config.output else " (set WEBSIM_OUTPUT to choose where)"
            logger.info("websim: the result will be written to %s%s",
                        ", ".join(os.path.abspath(p) for p, _fmt in self.result_files), how)
        if self.sink is None:
            self._progress()  # the bar shows from the start: its rate and time left count the browser's start

    def refuse(self, request: Any, spider: Any = None) -> None:
        """A crawl with a problem at start renders nothing: every request is dropped unlogged."""
        raise IgnoreRequest("websim: the crawl was refused at start")

    # --- during the crawl ---

    @property
    def done(self) -> int:
        """Inputs with a record of their own: recorded by this run or an earlier run of the job."""
        return self.recorded + self.inputs.done_before

    def register_inputs(self, entries: Iterable[Any]) -> Registered:
        """The input list, read as the spider asks for its entries (see :class:`Registered`)."""
        probed = self.store.probe_origins()
        self.stats.set_value("websim/inputs", 0)  # the crawl started: the count is known once the list is read
        return Registered(self._pending(self.inputs.pending(entries)), probed)

    def _pending(self, pending: Iterator[Any]) -> Iterator[Any]:
        resumed = False
        for entry in pending:
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
        self._progress()

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
            self._add_probe(record)
            return True
        if record.id <= 0 and not self._number_discovered(record):
            return True
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
        kind = _record_kind(record)
        if kind:
            self.stats.inc_value(f"websim/{kind}")
        if kind == "rendered" and record.render_from:
            self.stats.inc_value("websim/rendered_from_another")
        self._progress()
        return True

    def _add_probe(self, record: PageRecord) -> None:
        if self.sink is None:
            try:
                self.store.add_probe(record)
            except StoreWriteError as exc:
                self._store_failed(exc)
        self.stats.inc_value("websim/soft404_probes")

    def _number_discovered(self, record: PageRecord) -> bool:
        """Give a discovered page its provisional id; False when its URL has a record already (a
        rendered page replaces a prediction: it gets the prediction's id)."""
        digest = blake2b64(record.url)
        if digest not in self._discovered:
            self._discovered.add(digest)
            record.id = self._next_discovered_id
            self._next_discovered_id += 1
            if record.predicted_duplicate_of:
                self._predicted[digest] = record.id
            return True
        earlier = self._predicted.get(digest)
        if earlier is None or record.predicted_duplicate_of:
            return False
        # the page was rendered after all: its record replaces the prediction
        del self._predicted[digest]
        for key in ("websim/predicted", "websim/records"):
            self.stats.inc_value(key, -1)
        record.id = earlier
        self.recorded -= 1
        return True

    def _progress(self) -> None:
        stats = self.stats
        queued = (stats.get_value("scheduler/enqueued") or 0) - (stats.get_value("scheduler/dequeued") or 0)
        total = max(self.total_inputs or self.inputs.total, self.done + max(0, queued))
        self.progress.update(self.done, total, stats.get_value("websim/failed") or 0)

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
        deferred_from_coro(engine.close_spider_async(reason="store_unwritable"))

    # --- at the end ---

    def finalize(self) -> ResultRows:
        """``result_wanted``: the result's rows (:meth:`rows`). The spider's close writes the
        outputs; when the crawl was stopped before (a second Ctrl-C), the features file is
        written here (the asker writes its own result files)."""
        rows = self.rows()
        self._write_outputs(rows, all_outputs=False)
        return rows

    def rows(self) -> ResultRows:
        """The result's rows, computed on the first call (the store's last writes by
        :meth:`_close_inputs`, then labelling and clustering); also sets the stats
        ``websim/total_urls``, ``websim/total_clusters`` and ``websim/not_fetched`` (inputs left
        without a response)."""
        if self._result is None:
            started = time.monotonic()
            self._close_inputs()
            self._result = ResultRows(Finalizer(self.params).run(self.store, self.total_inputs))
            meta = self._result.meta
            self.stats.set_value("websim/not_fetched", self.inputs.waiting)
            for key in ("total_urls", "eligible_html_urls", "total_clusters"):
                self.stats.set_value(f"websim/{key}", meta[key])
            self.stats.set_value("websim/finalize_seconds", round(time.monotonic() - started, 3))
            if meta.get("error"):
                logger.error("websim: %s", meta["error"])
                self.stats.set_value("websim/finalize_error", meta["error"])
            logger.info(
                "websim: %d URLs, %d eligible for content clustering, %d clusters",
                meta["total_urls"], meta["eligible_html_urls"], meta["total_clusters"],
            )
        return self._result

    def _close_inputs(self) -> None:
        """The store's last writes, before the result: every input has its record (the list read
        to its end), the pages discovered by following links have their final ids, everything is
        written. From here on the store is only read."""
        for _attempt in range(3):
            try:
                self.inputs.finish()
                renumber_discovered(self.store)
                self.store.flush()
                break
            except StoreWriteError as exc:
                self._store_failed(exc)
        self._inputs_read()

    def _fallbacks(self) -> List[str]:
        return fallback_dirs([self.jobdir] if self.jobdir else [])

    def _output_error(self, line: str) -> None:
        logger.error("websim: error: %s", line)
        self.output_errors.append(line)
        self.stats.set_value("websim/output_errors", list(self.output_errors))

    def spider_closed(self, spider: Any, reason: str) -> None:
        self.progress.close(self.done, max(self.total_inputs, self.done), self.stats.get_value("websim/failed") or 0)
        if self.sink is not None:  # a distributed worker: its records are in Redis, 'websim collect' clusters
            return
        if self.problems:  # refused at start: nothing was rendered, nothing is written
            return
        self._write_outputs(self.rows(), all_outputs=True)
        for kind, folder in (("thumbnails", self.config.thumbnails_path), ("screenshots", self.config.screenshots_dir)):
            error = self.stats.get_value(f"websim/{kind}_error")
            if error:
                skipped = self.stats.get_value(f"websim/{kind}_skipped") or 0
                self._output_error(f"{kind} could not be written to {folder} ({error}): {skipped} pages have none")

    def engine_stopped(self) -> None:
        if self.problems or self.output_errors:
            fail_crawl(self.crawler)

    def _write_outputs(self, rows: ResultRows, all_outputs: bool) -> None:
        """Every output not written yet, from one pass over the rows (``output.write_files``): the
        features file, and with ``all_outputs`` the result files of ``WEBSIM_OUTPUT`` (the
        ``websim`` spider's ``-o`` among them) and the report. Every one is attempted; a failure is
        an output error."""
        files = list(self.result_files) if all_outputs else []
        if self.config.features_file and not self._features_written:
            files.append((self.config.features_file, "features"))
        self._features_written = True
        report = self._report_builder() if all_outputs and self.config.report_dir and not self._report_written \
            else None
        self._report_written = self._report_written or all_outputs
        if not files and report is None:
            return
        try:
            written = write_files(rows, files, self._fallbacks(), also=[report] if report else [])
        except ValueError as exc:  # the store was closed: nothing to write from
            written = [Written("", str(exc))] * len(files)
            if report is not None:
                self._report_failed(exc)
                report = None
        for (path, fmt), done in zip(files, written):
            self._written(rows, path, fmt, done)
        if report is not None:
            self._write_report(rows, report)

    def _written(self, rows: ResultRows, path: str, fmt: str, written: Written) -> None:
        """Log (or report as an output error) what became of one file."""
        what = "the features file" if fmt == "features" else "the result file"
        error = output_error(what, path, written)
        if error:
            self._output_error(error)
        if not written.path:
            return
        if fmt == "features":
            logger.info("websim: features of %d pages written to %s", len(self.store), written.path)
            return
        self.stats.set_value("websim/result_files", [*(self.stats.get_value("websim/result_files") or []),
                                                     written.path])
        logger.info("websim: result of %d URLs, %d clusters written to %s", rows.meta["total_urls"],
                    rows.meta["total_clusters"], os.path.abspath(written.path))

    def _report_builder(self) -> Optional[ReportBuilder]:
        """``WEBSIM_REPORT_DIR``: the HTML report, with the thumbnails kept during the crawl,
        given the rows in the pass of the other outputs."""
        try:
            return ReportBuilder(self.config.report_dir, thumbs_dir=self.config.thumbnails_path or None)
        except Exception as exc:  # noqa: BLE001 - an output error, the other outputs go on
            self._report_failed(exc)
            return None

    def _write_report(self, rows: ResultRows, report: ReportBuilder) -> None:
        try:
            info = report.write(rows.cluster_rows(), rows.meta)
        except Exception as exc:  # noqa: BLE001 - an output error
            self._report_failed(exc)
            return
        self.stats.set_value("websim/report", info.path)
        logger.info("websim: report of %d URLs, %d clusters, %d thumbnails written to %s in %.1f s",
                    info.urls, info.clusters, info.thumbnails, info.path, info.seconds)

    def _report_failed(self, exc: Exception) -> None:
        """A report that cannot be written is an output error naming how to write it again from
        the result file (which holds everything the report shows)."""
        folder = self.config.report_dir
        if not isinstance(exc, (ReportError, OSError)):
            logger.error("websim: the report could not be written to %s", folder, exc_info=exc)
            self._output_error(f"the report {folder} could not be written (see the log above)")
            return
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        again = (f"; the result file holds what it shows: websim report {self.result_files[0][0]} -o {folder} "
                 "writes it again" if self.result_files else "")
        self._output_error(f"the report {folder} could not be written ({why}){again}")
