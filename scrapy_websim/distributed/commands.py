"""``websim push | worker | collect | status``: the distributed mode's commands (see docs/distributed.md).

* ``websim push -l urls.txt --redis redis://HOST:6379/0 --job NAME [--replace]``
* ``websim worker --redis ... --job NAME [-t N] [--page-timeout S] [--lease-timeout S] [-s NAME=VALUE]``
* ``websim status --redis ... --job NAME [--watch SECONDS]``
* ``websim collect --redis ... --job NAME -o result.json [-o result.csv] [--partial] [--features-file F]``

Exit status: 0 on success; 2 for a usage error (no Redis there, no such job, a bad setting); 1 when
``collect`` refuses because URLs have no record yet, or a worker did not finish.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Dict, List, Optional

from scrapy_websim.distributed.job import Job, JobError, connect, status_line

#: ``error`` of a URL no worker recorded, in a ``collect --partial`` result.
NOT_RECORDED = "not recorded: no worker had finished this URL when 'websim collect --partial' ran"


def _job_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--redis", required=True, metavar="URL", help="Redis URL, e.g. redis://HOST:6379/0")
    parser.add_argument("--job", required=True, help="job name (the same for push, workers, status and collect)")
    return parser


def _open_job(args: argparse.Namespace, prog: str, pushed: bool = True) -> Optional[Job]:
    try:
        job = Job(connect(args.redis), args.job)
        if pushed:
            job.require_pushed()
        return job
    except JobError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return None


def _encoder(job: Job) -> Any:
    """The function that turns an input entry into the encoded request scrapy-redis's queue holds."""
    from scrapy_websim.distributed.queue import LeaseQueue  # noqa: PLC0415
    from scrapy_websim.distributed.spider import WebsimWorkerSpider  # noqa: PLC0415

    spider = WebsimWorkerSpider()
    LeaseQueue(job.client, spider, job.queue_key)  # sets spider.websim_queue
    return spider.encode_entry


def push_main(argv: List[str]) -> int:
    parser = _job_parser("websim push", "Put a URL list into Redis for 'websim worker' processes to render.")
    parser.add_argument("-l", "--list", required=True, metavar="URLS",
                        help="a .txt file (one URL per line, # comments) or comma-separated URLs")
    parser.add_argument("--replace", action="store_true", help="delete an existing job of that name first")
    args = parser.parse_args(argv)
    from scrapy_websim.core.urls.url_list import UrlListError, read_entries  # noqa: PLC0415

    try:
        entries = read_entries(args.list)
    except UrlListError as exc:
        parser.error(str(exc))
    job = _open_job(args, "websim push", pushed=False)
    if job is None:
        return 2
    if job.exists():
        if not args.replace:
            print(f"websim push: error: job {args.job!r} exists already in {args.redis} "
                  f"({int(job.meta().get('total', 0))} URLs); use another --job, or --replace to start it over",
                  file=sys.stderr)
            return 2
        job.delete()
    counts = job.push(entries, _encoder(job))
    print(f"websim push: {counts['total']} entries ({counts['bad']} not URLs, recorded as errors by collect) "
          f"-> job {args.job!r}", file=sys.stderr)
    return 0


def worker_main(argv: List[str]) -> int:
    from scrapy_websim.cli import (  # noqa: PLC0415
        _add_decision_options, _add_timeout_options, _merged, _render_settings, _settings_from_args)
    from scrapy_websim.config import default  # noqa: PLC0415

    parser = _job_parser("websim worker", "Render the URLs of a job from its shared Redis queue until none is left.")
    parser.add_argument("-t", "--threads", type=int, default=20, help="concurrent requests (default 20)")
    _add_timeout_options(parser)
    parser.add_argument("--lease-timeout", type=float, default=None,
                        help="seconds before the URLs of a worker that stopped renewing are rendered again "
                             f"(default {default('WEBSIM_REDIS_LEASE_TIMEOUT'):g}, or the page timeout if larger)")
    parser.add_argument("--loglevel", default="INFO", help="Scrapy log level (default INFO)")
    _add_decision_options(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.threads <= 1000:
        parser.error(f"-t {args.threads}: concurrency must be in [1, 1000]")
    settings = _settings_from_args(parser, args)
    if _open_job(args, "websim worker") is None:
        return 2
    base: Dict[str, Any] = {
        **_render_settings(args),
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.threads,
        "WEBSIM_REDIS_URL": args.redis,
        "WEBSIM_REDIS_JOB": args.job,
    }
    if args.lease_timeout is not None:
        base["WEBSIM_REDIS_LEASE_TIMEOUT"] = args.lease_timeout
    base = _merged(base, settings)

    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy.settings import Settings  # noqa: PLC0415

    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415
    from scrapy_websim.render.browser import BrowserNotFound, find_browser  # noqa: PLC0415
    from scrapy_websim.distributed.spider import WebsimWorkerSpider  # noqa: PLC0415

    try:
        checked = WebsimConfig.from_settings(base)
        Finalizer.params_from_settings(base, checked)
        find_browser(checked.browser_executable)
        process = CrawlerProcess(Settings(base))
        crawler = process.create_crawler(WebsimWorkerSpider)
        process.crawl(crawler)
        process.start()
    except (ConfigError, BrowserNotFound) as exc:
        print(f"websim worker: error: {exc}", file=sys.stderr)
        return 2
    stats = crawler.stats.get_stats() if crawler.stats else {}
    reason = stats.get("finish_reason", "no stats")
    print(f"websim worker: {stats.get('websim/records', 0)} pages recorded, finished: {reason}", file=sys.stderr)
    return 0 if reason == "finished" else 1


def status_main(argv: List[str]) -> int:
    parser = _job_parser("websim status", "Show done/total, rate and ETA of a job across all its workers.")
    parser.add_argument("--watch", type=float, default=0, metavar="SECONDS", help="print again every SECONDS")
    args = parser.parse_args(argv)
    job = _open_job(args, "websim status")
    if job is None:
        return 2
    while True:
        s = status_line(job)
        share = 100.0 * s["done"] / s["total"] if s["total"] else 100.0
        print(f"job {job.name}: {s['done']}/{s['total']} done ({share:.1f}%), {s['bad']} not URLs, "
              f"{s['queued']} queued, {s['leased']} leased, {s['workers']} workers, {s['rate']:.2f} pages/s, "
              f"ETA {s['eta']}", flush=True)
        if not args.watch or not s["unrecorded"]:
            return 0
        time.sleep(args.watch)


def collect_main(argv: List[str]) -> int:
    from scrapy_websim.cli import (  # noqa: PLC0415
        EXIT_OUTPUT, _add_decision_options, _exit_status, _output_format, _settings_from_args, write_results)
    from scrapy_websim.result.safefile import fallback_dirs, output_error, write_with_fallback  # noqa: PLC0415

    parser = _job_parser("websim collect", "Cluster every record of a job and write the result files.")
    parser.add_argument("-o", "--output", required=True, action="append",
                        help="result file: .json, .jsonl or .csv (repeatable)")
    parser.add_argument("--partial", action="store_true",
                        help="write even while URLs have no record; those get error 'not recorded: ...'")
    parser.add_argument("--features-file", help="also write every page's features (JSON Lines) for 'websim cluster'")
    _add_decision_options(parser)
    args = parser.parse_args(argv)
    outputs = [(path, _output_format(parser, path)) for path in args.output]
    settings = _settings_from_args(parser, args)
    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415

    try:
        params = Finalizer.params_from_settings(settings, WebsimConfig.from_settings(settings))
    except ConfigError as exc:
        print(f"websim collect: error: {exc}", file=sys.stderr)
        return 2
    job = _open_job(args, "websim collect")
    if job is None:
        return 2
    reclaimed = job.reclaim_expired()
    missing = job.unrecorded_ids()
    if missing and not args.partial:
        counts = job.counts()
        print(f"websim collect: error: {len(missing)} of {counts['fetchable']} URLs of job {job.name!r} have no "
              f"record yet ({counts['queued']} queued, {counts['leased']} leased by workers"
              f"{f', {reclaimed} expired leases put back in the queue' if reclaimed else ''}; first ids: "
              f"{', '.join(map(str, missing[:5]))}). Run or wait for 'websim worker' ('websim status' shows "
              f"progress), or add --partial to write a result that marks them. Nothing written.", file=sys.stderr)
        return 1
    started = time.monotonic()
    result = collect(job, params, missing)
    trouble = False
    try:
        written = write_results("websim collect", outputs, result, fallback_dirs())
        if args.features_file:
            error = output_error("the features file", args.features_file, write_with_fallback(
                args.features_file, result.store.save_jsonl, fallback_dirs()))
            if error:
                print(f"websim collect: error: {error}", file=sys.stderr)
                trouble = True
    finally:
        result.store.close()  # removes its temporary file
    meta = result.meta
    print(f"websim collect: {meta['total_urls']} URLs ({len(missing)} not recorded), {meta['total_clusters']} "
          f"clusters in {time.monotonic() - started:.1f} s -> {', '.join(written) or 'nothing'}", file=sys.stderr)
    if trouble or len(written) < len(outputs):
        return EXIT_OUTPUT
    return _exit_status(meta, "websim collect")


def collect(job: Job, params: Any, missing: List[int]) -> Any:
    """The job's records in a FeatureStore, then the same Finalizer as a single crawl."""
    from scrapy_websim.core.features import fill_normalized_url  # noqa: PLC0415
    from scrapy_websim.core.store import FeatureStore  # noqa: PLC0415
    from scrapy_websim.core.types import PageRecord  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415

    store = FeatureStore(batch_size=params.config.batch_size)  # a temporary file, removed on close
    try:
        for record in job.iter_records():
            store.add(record)
        missing_set = set(missing)
        total = 0
        for page_id, raw, _url, error in job.iter_inputs():
            total += 1
            if error:  # a line that is not a URL: the record a single crawl's spider yields for it
                record = PageRecord(id=page_id, url=raw, error=error)
                fill_normalized_url(record, params.features)
                store.add(record)
            elif page_id in missing_set:
                store.add(PageRecord(id=page_id, url=raw, error=NOT_RECORDED))
        store.flush()
        return Finalizer(params).run(store, total)
    except BaseException:
        store.close()
        raise


COMMANDS = {"push": push_main, "worker": worker_main, "status": status_main, "collect": collect_main}
