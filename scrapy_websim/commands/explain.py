"""``websim explain RESULT|FEATURES URL_A URL_B``: why two pages are or are not in one cluster
(:mod:`scrapy_websim.result.explain`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List

from scrapy_websim.commands.options import EXIT_OK, EXIT_USAGE, add_decision_options, settings_from_args
from scrapy_websim.config import WebsimParams
from scrapy_websim.config_values import ConfigError
from scrapy_websim.result.explain import ExplainError, explain_files, to_json


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="websim explain",
        description="Why two pages are or are not in one cluster: each similarity against its threshold, each "
                    "rule and check, special-page labels and fingerprints, and what the clustering did. The pair "
                    "is decided by the clustering's own decision function on the pages' features.",
        epilog="FIRST is a features file (--features-file of a crawl) or a result file; with a result file, "
               "--features gives the features and the result's thresholds are used unless decision options are "
               "given. Exit status: 0 explained, 2 trouble.")
    parser.add_argument("first", metavar="RESULT_OR_FEATURES")
    parser.add_argument("url_a", metavar="URL_A")
    parser.add_argument("url_b", metavar="URL_B")
    parser.add_argument("--features", metavar="FILE", help="the features file of the crawl that wrote RESULT")
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")
    add_decision_options(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    for path in (args.first, args.features):
        if path and not os.path.isfile(path):
            print(f"websim explain: error: file not found: {path!r}", file=sys.stderr)
            return EXIT_USAGE
    settings = settings_from_args(parser, args)

    try:
        params = WebsimParams.from_settings(settings)
        ex = explain_files(args.first, args.url_a, args.url_b, args.features, params, overridden=bool(settings))
    except (ExplainError, ConfigError, ValueError, OSError) as exc:
        print(f"websim explain: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(to_json(ex) if args.json else "\n".join(ex.lines))
    return EXIT_OK
