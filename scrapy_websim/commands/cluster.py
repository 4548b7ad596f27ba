"""``websim cluster FEATURES -o RESULT``: cluster the features file of a crawl again, without rendering."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List

from scrapy_websim.commands.options import (
    EXIT_OUTPUT,
    EXIT_USAGE,
    add_decision_options,
    add_output_options,
    exit_status,
    outputs_of,
    settings_from_args,
    write_results,
)
from scrapy_websim.config import WebsimParams
from scrapy_websim.config_values import ConfigError
from scrapy_websim.core.store import NotAFeaturesFile
from scrapy_websim.result.finalize import recluster_file
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.result.safefile import fallback_dirs


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="websim cluster",
                                     description="Re-cluster a features file (from --features-file) without rendering.")
    parser.add_argument("features", help="features JSON Lines file written by a crawl")
    add_output_options(parser)
    add_decision_options(parser)
    args = parser.parse_args(argv)
    outputs = outputs_of(parser, args)
    if not os.path.isfile(args.features):
        parser.error(f"features file not found: {args.features!r}")
    settings = settings_from_args(parser, args)

    try:
        result = recluster_file(args.features, WebsimParams.from_settings(settings))
    except NotAFeaturesFile as exc:
        print(f"websim cluster: error: {args.features}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, ValueError) as exc:
        print(f"websim cluster: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        written, _ = write_results("websim cluster", outputs, ResultRows(result), fallback_dirs())
    finally:
        result.store.close()  # removes its temporary file
    if written:
        print(f"websim cluster: {result.meta['total_urls']} URLs, {result.meta['total_clusters']} clusters -> "
              f"{', '.join(written)}", file=sys.stderr)
    if len(written) < len(outputs):
        return EXIT_OUTPUT
    return exit_status(result.meta, "websim cluster")
