"""``websim -l URLS -o RESULT``: render a URL list in-process with the add-on, then write the result.

Every argument, setting, output and the browser are checked before a browser starts; the crawl
runs the ``websim`` spider (:class:`~scrapy_websim.spiders.urllist.UrlListSpider`) and asks the
extension for the result with the ``result_wanted`` event; the result files are written here, each
through the fallbacks of :mod:`scrapy_websim.result.safefile`. ``--resume DIR`` keeps the job in a
folder (:mod:`scrapy_websim.commands.jobdir`).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Any, Dict, List, Optional, Tuple

from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings, default_settings

from scrapy_websim import __version__
from scrapy_websim.commands.jobdir import JobFolder
from scrapy_websim.commands.options import (
    EXIT_INCOMPLETE,
    EXIT_OUTPUT,
    EXIT_USAGE,
    add_decision_options,
    add_output_options,
    add_timeout_options,
    exit_status,
    file_url,
    merged,
    outputs_of,
    put,
    render_settings,
    settings_from_args,
    write_results,
)
from scrapy_websim.config import FOLLOW_MAX_PAGES, WebsimConfig, WebsimParams, param_default
from scrapy_websim.config_values import ConfigError, parse_header_line
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.urls.url_list import UrlListError, open_list, parse_ports
from scrapy_websim.crawler import events
from scrapy_websim.crawler.addon import max_pages_in_flight
from scrapy_websim.crawler.extension import STORE_NAME
from scrapy_websim.crawler.inputs import InputRegistry
from scrapy_websim.render.browser import BrowserNotFound, find_browser
from scrapy_websim.result.finalize import Finalizer, renumber_discovered
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.result.safefile import fallback_dirs, probe_dir, probe_file
from scrapy_websim.spiders.urllist import UrlListSpider


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="websim",
        description="Render a list of URLs in headless Chromium, cluster duplicate pages and label special pages.",
        epilog="Other commands: 'websim cluster FEATURES.jsonl -o OUT' re-clusters without rendering; "
        "'websim urls --dedupe FILE' reduces a URL list to its URL patterns; "
        "'websim report RESULT.json -o DIR' writes the HTML report; 'websim diff OLD NEW' lists what changed "
        "between two scans; 'websim explain RESULT URL_A URL_B --features F' explains a pair. Exit status: 0 done, "
        "1 interrupted or the crawl failed (the result files hold what was done), 2 usage or settings error, "
        "3 an output could not be written (before the crawl: nothing was rendered; after: the error names the "
        "fallback file that holds it), or the --resume folder (full or read-only: the result files hold what was "
        "recorded).",
    )
    parser.add_argument("-l", "--list", metavar="URLS",
                        help="a .txt file (one URL, host or host:port per line, # comments; httpx JSON lines), "
                        "an nmap XML report, - for standard input, or comma-separated URLs")
    add_output_options(parser)
    parser.add_argument("-t", "--threads", type=int, default=20, help="concurrent requests (default 20)")
    add_timeout_options(parser)
    parser.add_argument("--batch-size", type=int, help="records buffered before a write to disk (WEBSIM_PARAMS "
                        f"crawl.batch_size; default {param_default('crawl.batch_size')})")
    parser.add_argument("--follow", action="store_true",
                        help="also render the links found on the pages that stay within a start URL's site: its "
                        "host and the folder of its path (from https://h/docs/16/ only https://h/docs/16/...)")
    parser.add_argument("--max-pages", type=int, default=FOLLOW_MAX_PAGES,
                        help=f"with --follow: at most this many discovered pages (default {FOLLOW_MAX_PAGES}; "
                        "0: no limit)")
    parser.add_argument("--features-file", help="also write every page's features (JSON Lines) for 'websim cluster'")
    parser.add_argument("--screenshots-dir", help="save each page's viewport screenshot here as ID.png")
    parser.add_argument("--resume", metavar="DIR",
                        help="job directory (Scrapy's JOBDIR): the record store and the URL list live there; "
                        "run the same command again after an interruption to continue")
    parser.add_argument("--loglevel", default="INFO", help="Scrapy log level (default INFO)")
    parser.add_argument("--version", action="version", version=f"websim {__version__}")
    add_scan_options(parser)
    parser.add_argument("--report", metavar="DIR", help="also write the HTML report (with screenshot thumbnails) here")
    parser.add_argument("--thumbnails-dir", metavar="DIR",
                        help="keep a small screenshot per page here (default with --report: DIR/thumbs)")
    add_decision_options(parser)
    return parser


def main(argv: List[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    job = JobFolder(parser, args.resume) if args.resume else None
    outputs = _check_crawl_args(parser, args, job)
    settings = merged(scan_settings_from_args(parser, args), settings_from_args(parser, args))
    try:  # fail fast, before a browser starts; the list is read as the crawl goes (stdin is copied once)
        url_list = open_list(args.list, ports=parse_ports(args.ports) if args.ports else ()) if args.list else None
    except UrlListError as exc:
        parser.error(str(exc))
    if job:
        url_list, problem = _open_job(job, url_list, outputs)
        if problem:  # a full or read-only job folder: the result from what it holds, nothing rendered
            return _result_from_job(job, job.saved_list(url_list), outputs,
                                    merged(crawl_settings(args, job), settings), problem)
    cap = max_pages_in_flight()
    if args.threads > cap:
        print(f"websim: {args.threads} concurrent requests, at most {cap} pages rendered at once "
              f"(rendering is CPU-bound on this {os.cpu_count()}-core machine)", file=sys.stderr)
    base = merged(crawl_settings(args, job), settings)
    refused = _refused(base, outputs)
    if refused is not None:
        return refused
    return _crawl(args, base, url_list, outputs, job)


def _open_job(job: JobFolder, url_list: Any, outputs: List[tuple]) -> Tuple[Any, str]:
    """The job's own copy of the list, Scrapy's unreadable files removed, the result files noted:
    ``(the list to crawl, "")``; or ``(the list given, why the folder cannot be written)``."""
    problem = job.unwritable()
    if not problem:
        try:
            url_list = job.keep_list(url_list)
        except OSError as exc:
            problem = exc.strerror or str(exc)
    if problem:
        return url_list, problem
    for note in job.repair_scrapy_files():
        print(f"websim: {note}", file=sys.stderr)
    for path, _fmt in outputs:  # the job's own result files from now on (-o onto them resumes)
        job.wrote(path)
    return url_list, ""


def _refused(base: Dict[str, Any], outputs: List[tuple]) -> Optional[int]:
    """Before a browser starts: the exit status when a setting, the browser or a place to write is
    wrong (each said), else None."""
    error = _settings_error(base)
    if error:
        print(f"websim: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    problems = _output_problems(outputs, base)
    if problems:
        for problem in problems:
            print(f"websim: error: {problem}", file=sys.stderr)
        print("websim: nothing was rendered", file=sys.stderr)
        return EXIT_OUTPUT
    return None


def _crawl(args: argparse.Namespace, base: Dict[str, Any], url_list: Any, outputs: List[tuple],
           job: Optional[JobFolder]) -> int:
    """Run the websim spider in this process, then write the result files."""
    crawler = None
    try:
        # the flags and -s are this run's choices: at command-line priority (the add-on warns only
        # about slowing settings of a project or a spider)
        process = CrawlerProcess(Settings(base, priority="cmdline"))
        crawler = process.create_crawler(UrlListSpider)
        process.crawl(crawler, urls=args.list or "", follow=args.follow, max_pages=args.max_pages, inputs=url_list)
        process.start()  # returns after the crawl, after a graceful stop (1st signal) or at once (2nd)
    except (ConfigError, BrowserNotFound, UrlListError) as exc:
        print(f"websim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # noqa: BLE001 - what was recorded is still written
        traceback.print_exc()
        if crawler is None:
            return EXIT_INCOMPLETE
        status = _write_outputs(crawler, outputs, job, args.report or "")
        print("websim: error: the crawl stopped on the error above; the result files hold what was recorded",
              file=sys.stderr)
        return max(status, EXIT_INCOMPLETE)
    return _write_outputs(crawler, outputs, job, args.report or "")


def add_scan_options(parser: argparse.ArgumentParser) -> None:
    """Options for scanning many hosts (docs/scanning.md)."""
    group = parser.add_argument_group("scanning many hosts")
    group.add_argument("--ports", metavar="LIST",
                       help="expand bare host and host:port lines to URLs on these ports, e.g. 80,443,8080,8443 "
                       "(http:PORT / https:PORT force a scheme)")
    group.add_argument("--strict-tls", action="store_true", default=None,
                       help="certificate errors stop a page (default: render it and record tls_error)")
    group.add_argument("--proxy", metavar="URL", help="http://, https:// or socks5:// proxy (user:password@ allowed "
                       "for http/https) for the browser and Scrapy's client")
    group.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                       help="header sent with every request, sub-requests included (repeatable; added to "
                       "Scrapy's DEFAULT_REQUEST_HEADERS)")
    group.add_argument("--cookie", metavar="'A=B; C=D'", help="cookies sent with every request")
    group.add_argument("--user-agent", metavar="UA", help="User-Agent of every request (Scrapy's USER_AGENT)")
    group.add_argument("--per-host", type=int, metavar="N",
                       help="pages of one host in flight at once (CONCURRENT_REQUESTS_PER_DOMAIN; default: 2, "
                       "rising to WEBSIM_PER_HOST_MAX while the host answers as fast)")
    group.add_argument("--delay", type=float, metavar="SECONDS",
                       help="wait between two requests to one host (DOWNLOAD_DELAY; default 0)")
    calibrate = group.add_mutually_exclusive_group()
    calibrate.add_argument("--calibrate-404", action="store_true", default=None,
                           help="learn every origin's own not-found answer from a random path "
                           "(WEBSIM_PARAMS crawl.soft404_min_urls=1; default: origins with at least "
                           f"{param_default('crawl.soft404_min_urls')} URLs in the list)")
    calibrate.add_argument("--no-calibrate-404", action="store_true", default=None,
                           help="no soft-404 probes (WEBSIM_SOFT404_PROBES=0)")
    group.add_argument("--autothrottle", action="store_true", default=None,
                       help="adapt the per-host delay to the host's latency (Scrapy's AutoThrottle)")
    group.add_argument("--render-all", action="store_true", default=None,
                       help="render every page (WEBSIM_RENDER_ALL; default: a page whose document is the same as "
                       "one rendered before takes that render, its row's render_from names that page, and a "
                       "non-HTML document is not rendered)")


def scan_settings_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    """The settings the options of :func:`add_scan_options` set."""
    settings = _politeness_settings(parser, args)
    if args.autothrottle:
        settings["AUTOTHROTTLE_ENABLED"] = True
    if args.calibrate_404:
        put(settings, "crawl.soft404_min_urls", 1)
    if args.no_calibrate_404:
        settings["WEBSIM_SOFT404_PROBES"] = 0
    for option, name in (("strict_tls", "WEBSIM_STRICT_TLS"), ("render_all", "WEBSIM_RENDER_ALL"),
                         ("proxy", "WEBSIM_PROXY"),
                         ("cookie", "WEBSIM_COOKIES"), ("user_agent", "USER_AGENT")):
        if getattr(args, option) is not None:
            settings[name] = getattr(args, option)
    if args.header:
        settings["DEFAULT_REQUEST_HEADERS"] = request_headers(parser, args.header)
    return settings


def _politeness_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    """``--per-host`` and ``--delay``, each checked."""
    settings: Dict[str, Any] = {}
    if args.per_host is not None:
        if not 1 <= args.per_host <= 1000:
            parser.error(f"--per-host {args.per_host}: must be in [1, 1000]")
        settings["CONCURRENT_REQUESTS_PER_DOMAIN"] = args.per_host
    if args.delay is not None:
        if not 0 <= args.delay <= 3600:
            parser.error(f"--delay {args.delay:g}: must be in [0, 3600] seconds")
        settings["DOWNLOAD_DELAY"] = args.delay
    return settings


def request_headers(parser: argparse.ArgumentParser, lines: List[str]) -> Dict[str, str]:
    """``DEFAULT_REQUEST_HEADERS`` for ``-H`` lines: Scrapy's defaults with the lines over them (a
    line's name replaces a default of any case)."""
    try:
        given = dict(parse_header_line("-H/--header", line) for line in lines)
    except ConfigError as exc:
        parser.error(str(exc))
    names = {name.lower() for name in given}
    kept = {k: v for k, v in default_settings.DEFAULT_REQUEST_HEADERS.items() if k.lower() not in names}
    return {**kept, **given}


def _check_crawl_args(parser: argparse.ArgumentParser, args: argparse.Namespace,
                      job: Optional[JobFolder]) -> List[tuple]:
    """The crawl's own argument checks (argparse errors, exit 2); returns the outputs."""
    if not args.list and not (job and job.has_list()):
        parser.error("the following arguments are required: -l/--list")
    outputs = outputs_of(parser, args, allowed=job.outputs if job else ())
    for flag, value in (("--report", args.report), ("--thumbnails-dir", args.thumbnails_dir)):
        if value and os.path.exists(value) and not os.path.isdir(value):
            parser.error(f"{flag} {value!r}: exists and is not a directory")
    if not 1 <= args.threads <= 1000:
        parser.error(f"-t {args.threads}: concurrency must be in [1, 1000]")
    return outputs


def crawl_settings(args: argparse.Namespace, job: Optional[JobFolder]) -> Dict[str, Any]:
    """The Scrapy settings the crawl flags map to (``-s`` settings are applied over them)."""
    base: Dict[str, Any] = {
        **render_settings(args),
        "WEBSIM_FEATURES_FILE": args.features_file or "",
        "WEBSIM_SCREENSHOTS_DIR": args.screenshots_dir or "",
    }
    if args.batch_size is not None:
        put(base, "crawl.batch_size", args.batch_size)
    if args.report:
        base["WEBSIM_REPORT_DIR"] = args.report
    if args.thumbnails_dir:
        base["WEBSIM_THUMBNAILS_DIR"] = args.thumbnails_dir
    if job:
        base["JOBDIR"] = job.path
        # the websim spider keeps no state: no spider.state file to write into the job folder
        base["EXTENSIONS"] = {"scrapy.extensions.spiderstate.SpiderState": None}
    return base


def _output_problems(outputs: List[tuple], base: Dict[str, Any]) -> List[str]:
    """Every place the crawl will write, tried before anything is rendered (a file is created and
    removed there): one line per place that cannot be written."""
    config = WebsimConfig.from_settings(base)
    places = [("-o", path, probe_file) for path, _fmt in outputs]
    places += [("--features-file", config.features_file, probe_file), ("--report", config.report_dir, probe_dir),
               ("--thumbnails-dir", config.thumbnails_path, probe_dir),
               ("--screenshots-dir", config.screenshots_dir, probe_dir)]
    problems = []
    for flag, path, probe in places:
        problem = probe(path) if path else ""
        if problem:
            problems.append(f"{flag} {path}: cannot be written: {problem}")
    return problems


def _settings_error(base: Dict[str, Any]) -> Optional[Exception]:
    """Every setting and the browser checked before anything starts: the error, or None."""
    try:
        checked = WebsimParams.from_settings(base).config
        if checked.deny_networks and checked.proxy:
            raise ConfigError("WEBSIM_DENY_NETWORKS and WEBSIM_PROXY (--proxy) cannot be combined: the networks "
                              "are enforced by a local guard proxy that the browser must use directly")
        find_browser(checked.browser_executable)
    except (ConfigError, BrowserNotFound) as exc:
        return exc
    return None


def _write_outputs(crawler: Any, outputs: List[tuple], job: Optional[JobFolder], report_dir: str = "") -> int:
    """Write every result file (whatever happened to the crawl) and say how it ended."""
    stats = crawler.stats.get_stats() if crawler.stats else {}
    status = _not_run(stats)
    if status is not None:
        return status
    # computed when the spider closed, unless a second Ctrl-C stopped the crawl at once
    result = events.ask(crawler, events.result_wanted)
    stats = crawler.stats.get_stats()
    written, _ = write_results("websim", outputs, result, fallback_dirs([job.path] if job else []))
    if job:
        for path in written:
            job.wrote(path)
    meta = result.meta
    if written:
        print(f"websim: {meta['total_urls']} URLs, {meta['total_clusters']} clusters -> {', '.join(written)}",
              file=sys.stderr)
    trouble = _say_report_and_trouble(stats, outputs, written, report_dir)
    return _crawl_status(stats, meta, len(written) < len(outputs) or bool(trouble), job)


def _not_run(stats: Dict[str, Any]) -> Optional[int]:
    """The exit status of a crawl refused at start or that did not start, else None."""
    refused = stats.get("websim/refused")
    if refused:
        for problem in refused:
            print(f"websim: error: {problem}", file=sys.stderr)
        return EXIT_OUTPUT
    if "websim/inputs" not in stats:
        print(f"websim: error: the crawl did not start ({stats.get('finish_reason', 'no stats')}); "
              f"see the log above", file=sys.stderr)
        return EXIT_INCOMPLETE
    return None


def _say_report_and_trouble(stats: Dict[str, Any], outputs: List[tuple], written: List[str],
                            report_dir: str) -> List[str]:
    """Where the report is (or how to write it), and every output that went wrong; the latter."""
    report = stats.get("websim/report")
    if report:
        print(f"websim: report -> {report} (open it in a browser: {file_url(report)})", file=sys.stderr)
    elif report_dir and not stats.get("websim/output_errors"):
        # stopped at once (a second Ctrl-C): the extension had no time to write it
        print(f"websim: the report was not written; websim report {outputs[0][0]} -o {report_dir} writes it",
              file=sys.stderr)
    trouble = stats.get("websim/output_errors") or []
    for line in trouble:
        print(f"websim: error: {line}", file=sys.stderr)
    if report_dir and not report and trouble and written:
        print(f"websim: the result file holds what the report shows: websim report {written[0]} -o DIR writes it "
              "where there is room", file=sys.stderr)
    return trouble


def _crawl_status(stats: Dict[str, Any], meta: Dict[str, Any], output_trouble: bool, job: Optional[JobFolder]) -> int:
    """The exit status of a crawl whose result was written (``output_trouble``: not every output
    was written where asked)."""
    reason = stats.get("finish_reason", "stopped at once")
    left = stats.get("websim/not_fetched", 0)
    if stats.get("websim/store_error"):
        hint = "run the same command again to continue once it can be written" if job else "free some space"
        print(f"websim: error: {stats['websim/store_error']}: rendering stopped; the result files hold the "
              f"{meta['total_urls'] - left} URLs recorded ({left} not fetched); {hint}", file=sys.stderr)
        return EXIT_OUTPUT
    if output_trouble:
        return EXIT_OUTPUT
    if reason == "finished" and not left:
        return exit_status(meta)
    hint = "; run the same command again to continue" if job else "; use --resume DIR to be able to continue"
    print(f"websim: the crawl did not finish ({reason}): {left} URLs not fetched (recorded with an error)"
          f"{hint}", file=sys.stderr)
    return EXIT_INCOMPLETE


def _result_from_job(job: JobFolder, url_list: Any, outputs: List[tuple], settings: Dict[str, Any],
                     problem: str) -> int:
    """The job folder cannot be written: nothing is rendered; the result files hold what the job
    recorded (every other URL "not fetched"), and the job resumes once it can be written."""
    try:
        params = WebsimParams.from_settings(settings)
    except ConfigError as exc:
        print(f"websim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    store = FeatureStore.temporary_copy_of(os.path.join(job.path, STORE_NAME), batch_size=params.config.batch_size)
    try:
        inputs = InputRegistry(store, resumable=True)
        if url_list is not None:
            for _entry in inputs.pending(url_list.entries()):
                pass
        inputs.finish()
        renumber_discovered(store)
        write_results("websim", outputs, ResultRows(Finalizer(params).run(store, inputs.total)), fallback_dirs())
    finally:
        store.close()
    left = inputs.waiting
    print(f"websim: error: the job folder {job.path} cannot be written ({problem}): nothing was rendered; the "
          f"result files hold the {inputs.total - left} URLs it had recorded ({left} not fetched); run the same "
          f"command again to continue once it can be written", file=sys.stderr)
    return EXIT_OUTPUT

