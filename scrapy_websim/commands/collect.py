"""``websim collect --redis URL --job NAME -o RESULT``: cluster every record of a distributed job
(:func:`scrapy_websim.distributed.collect.collect`) and write the result files."""

from __future__ import annotations

import sys
import time
from typing import List

from scrapy_websim.commands.options import (
    EXIT_OUTPUT,
    add_decision_options,
    exit_status,
    job_parser,
    open_job,
    output_format,
    settings_from_args,
    write_results,
)
from scrapy_websim.config import WebsimParams
from scrapy_websim.config_values import ConfigError
from scrapy_websim.distributed.collect import collect
from scrapy_websim.distributed.job import Job
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.result.safefile import fallback_dirs


def main(argv: List[str]) -> int:
    parser = job_parser("websim collect", "Cluster every record of a job and write the result files.")
    parser.add_argument("-o", "--output", required=True, action="append",
                        help="result file: .json, .jsonl or .csv (repeatable)")
    parser.add_argument("--partial", action="store_true",
                        help="write even while URLs have no record; those get error 'not recorded: ...'")
    parser.add_argument("--features-file", help="also write every page's features (JSON Lines) for 'websim cluster'")
    add_decision_options(parser)
    args = parser.parse_args(argv)
    outputs = [(path, output_format(parser, path)) for path in args.output]
    settings = settings_from_args(parser, args)
    try:
        params = WebsimParams.from_settings(settings)
    except ConfigError as exc:
        print(f"websim collect: error: {exc}", file=sys.stderr)
        return 2
    job = open_job(args, "websim collect")
    if job is None:
        return 2
    reclaimed = job.reclaim_expired()
    missing = job.unrecorded_ids()
    if missing and not args.partial:
        _say_unrecorded(job, missing, reclaimed)
        return 1
    started = time.monotonic()
    result = collect(job, params, missing)
    rows = ResultRows(result)
    try:
        written, features_ok = write_results("websim collect", outputs, rows, fallback_dirs(),
                                             features_file=args.features_file or "")
        trouble = not features_ok
    finally:
        result.store.close()  # removes its temporary file
    meta = result.meta
    print(f"websim collect: {meta['total_urls']} URLs ({len(missing)} not recorded), {meta['total_clusters']} "
          f"clusters in {time.monotonic() - started:.1f} s -> {', '.join(written) or 'nothing'}", file=sys.stderr)
    if trouble or len(written) < len(outputs):
        return EXIT_OUTPUT
    return exit_status(meta, "websim collect")


def _say_unrecorded(job: Job, missing: List[int], reclaimed: int) -> None:
    counts = job.counts()
    print(f"websim collect: error: {len(missing)} of {counts['fetchable']} URLs of job {job.name!r} have no "
          f"record yet ({counts['queued']} queued, {counts['leased']} leased by workers"
          f"{f', {reclaimed} expired leases put back in the queue' if reclaimed else ''}; first ids: "
          f"{', '.join(map(str, missing[:5]))}). Run or wait for 'websim worker' ('websim status' shows "
          f"progress), or add --partial to write a result that marks them. Nothing written.", file=sys.stderr)
