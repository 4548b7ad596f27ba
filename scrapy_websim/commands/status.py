"""``websim status --redis URL --job NAME [--watch SECONDS]``: done/total, rate and ETA of a
distributed job across all its workers."""

from __future__ import annotations

import time
from typing import List

from scrapy_websim.commands.options import job_parser, open_job
from scrapy_websim.distributed.job import status_line


def main(argv: List[str]) -> int:
    parser = job_parser("websim status", "Show done/total, rate and ETA of a job across all its workers.")
    parser.add_argument("--watch", type=float, default=0, metavar="SECONDS", help="print again every SECONDS")
    args = parser.parse_args(argv)
    job = open_job(args, "websim status")
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
