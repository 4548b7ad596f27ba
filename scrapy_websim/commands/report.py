"""``websim report RESULT -o DIR [--thumbnails DIR]``: the offline HTML report of a result file."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List

from scrapy_websim.commands.options import file_url
from scrapy_websim.result.report.writer import ReportError, report_from_file


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="websim report",
        description="Write the offline HTML report of a result file: summary, clusters with screenshots, "
                    "filters and search. Open DIR/index.html in a browser; nothing is loaded from the network.")
    parser.add_argument("result", help="result file written by websim or websim cluster: .json (or .jsonl, .csv)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="report folder (created if missing)")
    parser.add_argument("--thumbnails", metavar="DIR",
                        help="thumbnails kept by the crawl (--thumbnails-dir, WEBSIM_THUMBNAILS_DIR or the crawl "
                             "report's thumbs/); default: DIR/thumbs of the output when it exists")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.result):
        parser.error(f"result file not found: {args.result!r}")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        parser.error(f"-o {args.output!r}: exists and is not a directory")
    if args.thumbnails and not os.path.isdir(args.thumbnails):
        parser.error(f"--thumbnails {args.thumbnails!r}: no such directory")

    try:
        info = report_from_file(args.result, args.output, args.thumbnails)
    except (ReportError, OSError) as exc:
        print(f"websim report: error: {exc}", file=sys.stderr)
        return 2
    note = f"{info.thumbnails} thumbnails" if info.thumbnails else "no thumbnails"
    print(f"websim report: {info.urls} URLs, {info.clusters} clusters, {note}, {info.bytes / 1e6:.1f} MB of data "
          f"in {info.seconds:.1f} s -> {info.path}", file=sys.stderr)
    print(f"websim report: open {file_url(info.path)}", file=sys.stderr)
    return 0
