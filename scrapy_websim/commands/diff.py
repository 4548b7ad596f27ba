"""``websim diff OLD NEW``: what changed between two scans (:mod:`scrapy_websim.result.diff`);
exit 0 no changes, 1 changes, 2 trouble."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any, Dict, List

from scrapy_websim.commands.options import EXIT_OK, EXIT_USAGE, file_url
from scrapy_websim.core.params.base import FieldError
from scrapy_websim.core.params.page import ChangeParams
from scrapy_websim.result.diff import DiffError, diff_files, summary_lines, write_diff
from scrapy_websim.result.report.writer import ReportError, report_from_file


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="websim diff",
        description="What changed between two scans: each URL compared with itself (status, final URL, label, "
                    "text with per-request noise masked, listing entries, structure, screenshot), each changed URL "
                    "with its before and after; collateral (a page of its cluster changed) apart; the clusters these "
                    "changes touched.",
        epilog="Exit status: 0 no changes, 1 changes, 2 trouble (like diff). Thresholds (-p NAME=VALUE): "
               + ", ".join(f"{f.name} (default {f.default})" for f in dataclasses.fields(ChangeParams)) + ".")
    parser.add_argument("old", help="the earlier result file (.json, .jsonl or .csv, any websim version)")
    parser.add_argument("new", help="the later result file")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the changes as JSON here")
    parser.add_argument("--report", metavar="DIR", help="write the HTML report of NEW with a Changes view here")
    parser.add_argument("--thumbnails", metavar="DIR",
                        help="NEW's thumbnails for the report (default: DIR/thumbs of --report when it exists)")
    parser.add_argument("--old-thumbnails", metavar="DIR",
                        help="OLD's thumbnails: each changed URL's screenshot before, beside the one after")
    parser.add_argument("-p", "--param", metavar="NAME=VALUE", action="append", default=[],
                        help="a threshold of what counts as a change (see below)")
    parser.add_argument("--limit", type=int, default=30, help="entries per list in the summary (default 30)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    try:
        _check_places(args)
        changes = diff_files(args.old, args.new, _change_params(args.param))
        if args.output:
            write_diff(args.output, changes)
        if args.report:
            _write_report(args, changes)
    except (DiffError, OSError) as exc:
        print(f"websim diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(summary_lines(changes, max(1, args.limit))))
    return 1 if changes["changed"] else EXIT_OK


def _check_places(args: argparse.Namespace) -> None:
    """The folders of -o, --report and the thumbnails are usable; DiffError saying why not."""
    if args.output and not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        raise DiffError(f"-o {args.output!r}: its directory does not exist")
    if args.report and os.path.exists(args.report) and not os.path.isdir(args.report):
        raise DiffError(f"--report {args.report!r}: exists and is not a directory")
    for flag, folder in (("--thumbnails", args.thumbnails), ("--old-thumbnails", args.old_thumbnails)):
        if folder and not os.path.isdir(folder):
            raise DiffError(f"{flag} {folder!r}: no such directory")


def _write_report(args: argparse.Namespace, changes: Dict[str, Any]) -> None:
    """The report of NEW with a Changes view (--report)."""
    try:
        info = report_from_file(args.new, args.report, thumbs_dir=args.thumbnails, changes=changes,
                                old_thumbs_dir=args.old_thumbnails)
    except ReportError as exc:
        raise DiffError(str(exc)) from None
    print(f"websim diff: report -> {info.path} (open it in a browser: {file_url(info.path)})", file=sys.stderr)


def _change_params(pairs: List[str]) -> ChangeParams:
    """``ChangeParams`` with ``NAME=VALUE`` pairs applied; DiffError naming what is wrong."""
    fields = {f.name: f for f in dataclasses.fields(ChangeParams)}
    values: Dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise DiffError(f"-p {pair!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
        kind = int if isinstance(fields[name].default, int) else float
        try:
            values[name] = kind(text.strip())
        except ValueError:
            raise DiffError(f"-p {pair!r}: {name} takes {'an integer' if kind is int else 'a number'}") from None
    try:
        return ChangeParams(**values).validate()
    except FieldError as exc:
        raise DiffError(f"-p: {exc}") from None
