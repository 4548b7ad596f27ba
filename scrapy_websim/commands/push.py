"""``websim push -l URLS --redis URL --job NAME [--replace]``: put a URL list into Redis for
``websim worker`` processes to render (docs/distributed.md)."""

from __future__ import annotations

import sys
from typing import List

from scrapy_websim.commands.options import job_parser, open_job
from scrapy_websim.core.urls.url_list import UrlListError, read_entries
from scrapy_websim.distributed.queue import entry_encoder


def main(argv: List[str]) -> int:
    parser = job_parser("websim push", "Put a URL list into Redis for 'websim worker' processes to render.")
    parser.add_argument("-l", "--list", required=True, metavar="URLS",
                        help="a .txt file (one URL per line, # comments) or comma-separated URLs")
    parser.add_argument("--replace", action="store_true", help="delete an existing job of that name first")
    args = parser.parse_args(argv)
    try:
        entries = read_entries(args.list)
    except UrlListError as exc:
        parser.error(str(exc))
    job = open_job(args, "websim push", pushed=False)
    if job is None:
        return 2
    if job.exists():
        if not args.replace:
            print(f"websim push: error: job {args.job!r} exists already in {args.redis} "
                  f"({int(job.meta().get('total', 0))} URLs); use another --job, or --replace to start it over",
                  file=sys.stderr)
            return 2
        job.delete()
    counts = job.push(entries, entry_encoder(job))
    print(f"websim push: {counts['total']} entries ({counts['bad']} not URLs, recorded as errors by collect) "
          f"-> job {args.job!r}", file=sys.stderr)
    return 0
