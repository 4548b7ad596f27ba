"""``websim worker --redis URL --job NAME``: render the URLs of a distributed job from its shared
Redis queue until none is left (the ``websim-worker`` spider, :mod:`scrapy_websim.distributed.spider`)."""

from __future__ import annotations

import sys
from typing import Any, Dict, List

from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings

from scrapy_websim.commands.options import (
    add_decision_options,
    add_timeout_options,
    job_parser,
    merged,
    open_job,
    render_settings,
    settings_from_args,
)
from scrapy_websim.config import WebsimParams, default
from scrapy_websim.config_values import ConfigError
from scrapy_websim.distributed.spider import WebsimWorkerSpider
from scrapy_websim.render.browser import BrowserNotFound, find_browser


def main(argv: List[str]) -> int:
    parser = job_parser("websim worker", "Render the URLs of a job from its shared Redis queue until none is left.")
    parser.add_argument("-t", "--threads", type=int, default=20, help="concurrent requests (default 20)")
    add_timeout_options(parser)
    parser.add_argument("--lease-timeout", type=float, default=None,
                        help="seconds before the URLs of a worker that stopped renewing are rendered again "
                             f"(default {default('WEBSIM_REDIS_LEASE_TIMEOUT'):g}, or the page timeout if larger)")
    parser.add_argument("--loglevel", default="INFO", help="Scrapy log level (default INFO)")
    add_decision_options(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.threads <= 1000:
        parser.error(f"-t {args.threads}: concurrency must be in [1, 1000]")
    settings = settings_from_args(parser, args)
    if open_job(args, "websim worker") is None:
        return 2
    base: Dict[str, Any] = {
        **render_settings(args),
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.threads,
        "WEBSIM_REDIS_URL": args.redis,
        "WEBSIM_REDIS_JOB": args.job,
    }
    if args.lease_timeout is not None:
        base["WEBSIM_REDIS_LEASE_TIMEOUT"] = args.lease_timeout
    base = merged(base, settings)
    try:
        checked = WebsimParams.from_settings(base).config
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
