"""The ``websim`` console script.

* ``websim -l urls.txt -o result.json [-t N] [--http-timeout S] [--page-timeout S]
  [--batch-size N] [--sim-threshold X]`` renders and clusters a URL list (the reference
  tool's CLI), running the ``websim`` spider in-process with the add-on.
* ``websim cluster features.jsonl -o result.json [--text-threshold ...]`` re-clusters a features
  file written by a crawl (``WEBSIM_FEATURES_FILE`` / ``--features-file``), without rendering.
* ``websim urls --dedupe urls.txt [--keep 15] [-o out.txt]`` reduces a URL list to a few URLs
  per URL pattern, without fetching anything.
* ``websim push | worker | status | collect --redis URL --job NAME``: many workers on many machines
  (``scrapy_websim/distributed/commands.py``).
* ``websim report result.json -o report/ [--thumbnails DIR]`` writes the offline HTML report of a
  result file (``--report DIR`` on a crawl writes it at the end, with thumbnails).
* ``websim diff OLD NEW [-o diff.json] [--report DIR]`` lists what changed between two scans
  (``diff.py``); exit 0 no changes, 1 changes, 2 trouble.
* ``websim explain RESULT|FEATURES URL_A URL_B [--features F]`` explains the decision on a pair
  (``explain.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import shutil
import sys
import traceback
from typing import Any, Dict, List, Optional, Sequence

from scrapy_websim.config import FOLLOW_MAX_PAGES, default, param_default
from scrapy_websim.core.params import ChangeParams, FieldError

#: Exit statuses (docs/usage.md, "Exit status"): 3 is trouble writing (an output, the job folder).
EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_OUTPUT = 0, 1, 2, 3
#: Inside a ``--resume`` directory: the job's copy of its URL list (as given: a file's bytes, standard
#: input, a comma list) and what it was (``--ports``, digest), the result files it wrote, and the
#: parsed list an earlier version kept instead.
JOB_SOURCE, JOB_SOURCE_META, JOB_OUTPUTS, JOB_LIST = ("websim-list.src", "websim-list.json", "websim-outputs.json",
                                                      "websim-list.jsonl")

FORMATS = {".json": "json", ".jsonl": "jsonl", ".jsonlines": "jsonl", ".csv": "csv"}
#: ``--text-threshold``: rule 1's text threshold on the default path (both pages carry a MinHash).
TEXT_THRESHOLD = "WEBSIM_TEXT_JACCARD_THRESHOLD"

#: Options shared by the crawl and the offline re-cluster: (flag, setting or WEBSIM_PARAMS key, type, help).
DECISION_OPTIONS = (
    ("--sim-threshold", "crawl.sim_threshold", float,
     f"recorded in meta (the decision uses the rules below); default {param_default('crawl.sim_threshold')}"),
    ("--text-threshold", TEXT_THRESHOLD, float,
     f"rule 1: minimum text similarity, the result's content_sim ({TEXT_THRESHOLD}; "
     f"default {default(TEXT_THRESHOLD)})"),
    ("--structure-threshold", "WEBSIM_STRUCTURE_THRESHOLD", float,
     f"rule 1: minimum structure similarity (default {default('WEBSIM_STRUCTURE_THRESHOLD')})"),
    ("--visual-threshold", "WEBSIM_VISUAL_THRESHOLD", float,
     f"rule 1: minimum visual similarity instead of the structure's (default {default('WEBSIM_VISUAL_THRESHOLD')})"),
    ("--visual-fallback-threshold", "decision.rule2_visual", float,
     f"rule 2: minimum visual similarity, with text at least {param_default('decision.rule2_min_jaccard')} "
     f"similar (default {param_default('decision.rule2_visual')}; above 1 disables rule 2)"),
    ("--structure-measure", "decision.structure_measure", str,
     f"paths, lcs or both (default {param_default('decision.structure_measure')})"),
    ("--same-host-only", "WEBSIM_SAME_HOST_ONLY", None, "only cluster pages of the same host"),
    ("--rule-scope", "WEBSIM_RULE_SCOPE", str,
     "rule clusters: 'template' (one per template across hosts, default) or 'origin' (per-origin ids)"),
)


def _output_format(parser: argparse.ArgumentParser, path: str, overwrite: bool = True, flag: str = "-o",
                   allowed: Sequence[str] = ()) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        parser.error(f"{flag} {path!r}: the output must end in .json, .jsonl or .csv")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        parser.error(f"{flag} {path!r}: directory {directory!r} does not exist")
    if not overwrite and os.path.exists(path) and os.path.abspath(path) not in allowed:
        parser.error(f"-o {path!r}: the file exists already; websim never appends to a result (a second JSON "
                     f"document would make it invalid). Use -O {path} to overwrite it, or choose another name")
    return FORMATS[ext]


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                        help="result file: .json, .jsonl or .csv; refused if it exists (repeatable)")
    parser.add_argument("-O", "--overwrite-output", action="append", default=[], metavar="FILE",
                        help="like -o, but overwrite the file if it exists (repeatable)")


def _outputs(parser: argparse.ArgumentParser, args: argparse.Namespace, allowed: Sequence[str] = ()) -> List[tuple]:
    """``[(path, format)]`` from -o/-O, each checked (format, directory, no silent append)."""
    outputs = [(path, _output_format(parser, path, overwrite=False, allowed=allowed)) for path in args.output]
    outputs += [(path, _output_format(parser, path, flag="-O")) for path in args.overwrite_output]
    if not outputs:
        parser.error("an output is required: -o result.json (or -O to overwrite; .json, .jsonl or .csv)")
    return outputs


def _add_decision_options(parser: argparse.ArgumentParser) -> None:
    for flag, _setting, typ, text in DECISION_OPTIONS:
        if typ is None:
            parser.add_argument(flag, action="store_true", default=None, help=text)
        else:
            parser.add_argument(flag, type=typ, help=text)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="any Scrapy or WEBSIM_* setting (repeatable; WEBSIM_PARAMS='{\"key\": value}' "
                        "adds to the keys the flags set)")


def _put(settings: Dict[str, Any], target: str, value: Any) -> None:
    """Set ``target``: a setting, or a ``WEBSIM_PARAMS`` key (``object.field``) added to that dict."""
    if "." in target:
        settings.setdefault("WEBSIM_PARAMS", {})[target] = value
    else:
        settings[target] = value


def _merged(*layers: Dict[str, Any]) -> Dict[str, Any]:
    """The settings of ``layers``, each over the ones before; their ``WEBSIM_PARAMS`` dicts are merged
    key by key (a flag's key and a ``-s WEBSIM_PARAMS=...`` key both hold)."""
    out: Dict[str, Any] = {}
    for layer in layers:
        for name, value in layer.items():
            if name == "WEBSIM_PARAMS" and isinstance(value, dict) and isinstance(out.get(name), dict):
                out[name] = {**out[name], **value}
            else:
                out[name] = dict(value) if name == "WEBSIM_PARAMS" and isinstance(value, dict) else value
    return out


def _settings_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    settings: Dict[str, Any] = {}
    for flag, target, _typ, _text in DECISION_OPTIONS:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            _put(settings, target, value)
    for item in args.set:
        if "=" not in item:
            parser.error(f"-s {item!r}: expected NAME=VALUE")
        name, value = item.split("=", 1)
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        settings = _merged(settings, {name.strip(): parsed})
    return settings


def _add_scan_options(parser: argparse.ArgumentParser) -> None:
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


def _scan_settings_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    settings: Dict[str, Any] = {}
    if args.per_host is not None:
        if not 1 <= args.per_host <= 1000:
            parser.error(f"--per-host {args.per_host}: must be in [1, 1000]")
        settings["CONCURRENT_REQUESTS_PER_DOMAIN"] = args.per_host
    if args.delay is not None:
        if not 0 <= args.delay <= 3600:
            parser.error(f"--delay {args.delay:g}: must be in [0, 3600] seconds")
        settings["DOWNLOAD_DELAY"] = args.delay
    if args.autothrottle:
        settings["AUTOTHROTTLE_ENABLED"] = True
    if args.calibrate_404:
        _put(settings, "crawl.soft404_min_urls", 1)
    if args.no_calibrate_404:
        settings["WEBSIM_SOFT404_PROBES"] = 0
    for option, name in (("strict_tls", "WEBSIM_STRICT_TLS"), ("proxy", "WEBSIM_PROXY"),
                         ("cookie", "WEBSIM_COOKIES"), ("user_agent", "USER_AGENT")):
        if getattr(args, option) is not None:
            settings[name] = getattr(args, option)
    if args.header:
        settings["DEFAULT_REQUEST_HEADERS"] = _request_headers(parser, args.header)
    return settings


def _request_headers(parser: argparse.ArgumentParser, lines: List[str]) -> Dict[str, str]:
    """``DEFAULT_REQUEST_HEADERS`` for ``-H`` lines: Scrapy's defaults with the lines over them (a
    line's name replaces a default of any case)."""
    from scrapy.settings import default_settings  # noqa: PLC0415

    from scrapy_websim.config import ConfigError, parse_header_line  # noqa: PLC0415

    try:
        given = dict(parse_header_line("-H/--header", line) for line in lines)
    except ConfigError as exc:
        parser.error(str(exc))
    names = {name.lower() for name in given}
    kept = {k: v for k, v in default_settings.DEFAULT_REQUEST_HEADERS.items() if k.lower() not in names}
    return {**kept, **given}


def _add_timeout_options(parser: argparse.ArgumentParser) -> None:
    """``--http-timeout`` and ``--page-timeout`` (a crawl, a distributed worker)."""
    parser.add_argument("--http-timeout", type=float, metavar="SECONDS",
                        help=f"seconds for the HTTP response (default {default('WEBSIM_HTTP_TIMEOUT'):g})")
    parser.add_argument("--page-timeout", type=float, metavar="SECONDS",
                        help=f"seconds for a whole page (default {default('WEBSIM_PAGE_TIMEOUT'):g})")


def _crawl_parser() -> argparse.ArgumentParser:
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
    _add_output_options(parser)
    parser.add_argument("-t", "--threads", type=int, default=20, help="concurrent requests (default 20)")
    _add_timeout_options(parser)
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
    parser.add_argument("--version", action="version", version=f"websim {_version()}")
    _add_scan_options(parser)
    parser.add_argument("--report", metavar="DIR", help="also write the HTML report (with screenshot thumbnails) here")
    parser.add_argument("--thumbnails-dir", metavar="DIR",
                        help="keep a small screenshot per page here (default with --report: DIR/thumbs)")
    _add_decision_options(parser)
    return parser


def crawl_main(argv: List[str]) -> int:
    parser = _crawl_parser()
    args = parser.parse_args(argv)
    job = _Job(parser, args.resume) if args.resume else None
    outputs = _check_crawl_args(parser, args, job)
    settings = _merged(_scan_settings_from_args(parser, args), _settings_from_args(parser, args))

    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy.settings import Settings  # noqa: PLC0415

    from scrapy_websim.crawler.addon import max_pages_in_flight  # noqa: PLC0415
    from scrapy_websim.config import ConfigError  # noqa: PLC0415
    from scrapy_websim.core.urls.url_list import UrlListError, open_list, parse_ports  # noqa: PLC0415
    from scrapy_websim.render.browser import BrowserNotFound  # noqa: PLC0415
    from scrapy_websim.spiders.urllist import UrlListSpider  # noqa: PLC0415

    try:  # fail fast, before a browser starts; the list is read as the crawl goes (stdin is copied once)
        url_list = open_list(args.list, ports=parse_ports(args.ports) if args.ports else ()) if args.list else None
    except UrlListError as exc:
        parser.error(str(exc))
    if job:
        problem = job.unwritable()
        if not problem:
            try:
                url_list = job.keep_list(url_list)
            except OSError as exc:
                problem = exc.strerror or str(exc)
        if problem:  # a full or read-only job folder: the result from what it holds, nothing rendered
            return _result_from_job(job, job.saved_list(url_list), outputs, _merged(_crawl_settings(args, job),
                                                                                     settings), problem)
        for note in job.repair_scrapy_files():
            print(f"websim: {note}", file=sys.stderr)
        for path, _fmt in outputs:  # the job's own result files from now on (-o onto them resumes)
            job.wrote(path)
    cap = max_pages_in_flight()
    if args.threads > cap:
        print(f"websim: {args.threads} concurrent requests, at most {cap} pages rendered at once "
              f"(rendering is CPU-bound on this {os.cpu_count()}-core machine)", file=sys.stderr)
    base = _merged(_crawl_settings(args, job), settings)
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


def _check_crawl_args(parser: argparse.ArgumentParser, args: argparse.Namespace, job: Optional["_Job"]) -> List[tuple]:
    """The crawl's own argument checks (argparse errors, exit 2); returns the outputs."""
    if not args.list and not (job and job.has_list()):
        parser.error("the following arguments are required: -l/--list")
    outputs = _outputs(parser, args, allowed=job.outputs if job else ())
    for flag, value in (("--report", args.report), ("--thumbnails-dir", args.thumbnails_dir)):
        if value and os.path.exists(value) and not os.path.isdir(value):
            parser.error(f"{flag} {value!r}: exists and is not a directory")
    if not 1 <= args.threads <= 1000:
        parser.error(f"-t {args.threads}: concurrency must be in [1, 1000]")
    return outputs


def _render_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """The settings every rendering command (a crawl, a distributed worker) maps from its flags."""
    settings: Dict[str, Any] = {
        "ADDONS": {"scrapy_websim.Addon": 500},
        "LOG_LEVEL": args.loglevel,
        "CONCURRENT_REQUESTS": args.threads,
    }
    for name, value in (("WEBSIM_HTTP_TIMEOUT", args.http_timeout), ("WEBSIM_PAGE_TIMEOUT", args.page_timeout)):
        if value is not None:
            settings[name] = value
    return settings


def _crawl_settings(args: argparse.Namespace, job: Optional["_Job"]) -> Dict[str, Any]:
    """The Scrapy settings the crawl flags map to (``-s`` settings are applied over them)."""
    base: Dict[str, Any] = {
        **_render_settings(args),
        "WEBSIM_FEATURES_FILE": args.features_file or "",
        "WEBSIM_SCREENSHOTS_DIR": args.screenshots_dir or "",
    }
    if args.batch_size is not None:
        _put(base, "crawl.batch_size", args.batch_size)
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
    from scrapy_websim.config import WebsimConfig  # noqa: PLC0415
    from scrapy_websim.result.safefile import probe_dir, probe_file  # noqa: PLC0415

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


def write_results(prog: str, outputs: List[tuple], result: Any, fallbacks: Sequence[str]) -> List[str]:
    """Write every result file (each one attempted whatever happened to the others); returns the
    paths written where asked. A file that cannot be written goes to a fallback file, and a
    ``PROG: error:`` line names both."""
    from scrapy_websim.result.output import write_result_file  # noqa: PLC0415
    from scrapy_websim.result.safefile import output_error  # noqa: PLC0415

    done = []
    for path, fmt in outputs:
        written = write_result_file(path, fmt, result, fallbacks)
        error = output_error("the result file", path, written)
        if error:
            print(f"{prog}: error: {error}", file=sys.stderr)
        else:
            done.append(path)
    return done


def _settings_error(base: Dict[str, Any]) -> Optional[Exception]:
    """Every setting and the browser checked before anything starts: the error, or None."""
    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415
    from scrapy_websim.render.browser import BrowserNotFound, find_browser  # noqa: PLC0415

    try:
        checked = WebsimConfig.from_settings(base)
        Finalizer.params_from_settings(base, checked)
        if checked.deny_networks and checked.proxy:
            raise ConfigError("WEBSIM_DENY_NETWORKS and WEBSIM_PROXY (--proxy) cannot be combined: the networks "
                              "are enforced by a local guard proxy that the browser must use directly")
        find_browser(checked.browser_executable)
    except (ConfigError, BrowserNotFound) as exc:
        return exc
    return None


def _write_outputs(crawler: Any, outputs: List[tuple], job: Optional["_Job"], report_dir: str = "") -> int:
    """Write every result file (whatever happened to the crawl) and say how it ended."""
    from scrapy_websim.crawler import events  # noqa: PLC0415
    from scrapy_websim.result.safefile import fallback_dirs  # noqa: PLC0415

    stats = crawler.stats.get_stats() if crawler.stats else {}
    refused = stats.get("websim/refused")
    if refused:
        for problem in refused:
            print(f"websim: error: {problem}", file=sys.stderr)
        return EXIT_OUTPUT
    if "websim/inputs" not in stats:
        print(f"websim: error: the crawl did not start ({stats.get('finish_reason', 'no stats')}); "
              f"see the log above", file=sys.stderr)
        return EXIT_INCOMPLETE
    # computed when the spider closed, unless a second Ctrl-C stopped the crawl at once
    result = events.ask(crawler, events.result_wanted)
    stats = crawler.stats.get_stats()
    written = write_results("websim", outputs, result, fallback_dirs([job.path] if job else []))
    if job:
        for path in written:
            job.wrote(path)
    meta = result.meta
    reason = stats.get("finish_reason", "stopped at once")
    left = stats.get("websim/not_fetched", 0)
    if written:
        print(f"websim: {meta['total_urls']} URLs, {meta['total_clusters']} clusters -> {', '.join(written)}",
              file=sys.stderr)
    report = stats.get("websim/report")
    if report:
        print(f"websim: report -> {report} (open it in a browser: {_file_url(report)})", file=sys.stderr)
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
    if stats.get("websim/store_error"):
        hint = "run the same command again to continue once it can be written" if job else "free some space"
        print(f"websim: error: {stats['websim/store_error']}: rendering stopped; the result files hold the "
              f"{meta['total_urls'] - left} URLs recorded ({left} not fetched); {hint}", file=sys.stderr)
        return EXIT_OUTPUT
    if len(written) < len(outputs) or trouble:
        return EXIT_OUTPUT
    if reason == "finished" and not left:
        return _exit_status(meta)
    hint = "; run the same command again to continue" if job else "; use --resume DIR to be able to continue"
    print(f"websim: the crawl did not finish ({reason}): {left} URLs not fetched (recorded with an error)"
          f"{hint}", file=sys.stderr)
    return EXIT_INCOMPLETE


class _Job:
    """A ``--resume`` directory: keeps the URL list of the job and the result files it wrote."""

    def __init__(self, parser: argparse.ArgumentParser, path: str) -> None:
        self.parser = parser
        self.path = os.path.abspath(path)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            parser.error(f"--resume {path!r} exists and is not a directory")
        try:
            os.makedirs(self.path, exist_ok=True)
        except OSError as exc:
            parser.error(f"--resume {path!r}: the job folder cannot be made ({exc.strerror or exc})")
        self.outputs: List[str] = []
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(self.path, JOB_OUTPUTS), encoding="utf-8") as fh:
                self.outputs = list(json.load(fh))

    def has_list(self) -> bool:
        return any(os.path.isfile(os.path.join(self.path, name)) for name in (JOB_SOURCE_META, JOB_LIST))

    def unwritable(self) -> str:
        """Why nothing can be written in the job folder (full, read-only), or ``""``."""
        probe = os.path.join(self.path, f".websim-write-test-{os.getpid()}")
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 65536)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            return exc.strerror or str(exc)
        finally:
            with contextlib.suppress(OSError):
                os.remove(probe)
        return ""

    def saved_list(self, given: Any) -> Any:
        """The job's own copy of its list (checked against ``given``), else ``given``."""
        from scrapy_websim.core.urls.url_list import UrlList, parse_ports  # noqa: PLC0415

        meta_path = os.path.join(self.path, JOB_SOURCE_META)
        if os.path.isfile(meta_path):
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
            ports = parse_ports(meta["ports"]) if meta.get("ports") else ()
            source = os.path.join(self.path, JOB_SOURCE)
            if meta.get("kind") == "text":
                with open(source, encoding="utf-8") as fh:
                    saved = UrlList(text=fh.read(), ports=ports, name="the job's list")
            else:
                saved = UrlList(path=source, ports=ports, name="the job's list")
            if given is not None and _list_digest(given) != meta.get("sha256"):
                self._another_list(source)
            return saved
        old = os.path.join(self.path, JOB_LIST)
        if os.path.isfile(old):  # kept by an earlier version: the parsed entries
            saved = UrlList(path=old, jsonl=True)
            if given is not None and any(a != b for a, b in itertools.zip_longest(
                    map(dataclasses.astuple, saved.entries()), map(dataclasses.astuple, given.entries()))):
                self._another_list(old)
            return saved
        return given

    def _another_list(self, saved: str) -> None:
        self.parser.error(f"--resume {self.path!r} belongs to another URL list (its copy is {saved}); "
                          "use a new directory for a new list")

    def keep_list(self, given: Any) -> Any:
        """The job's own copy of the list (so it cannot change under a resumed job, and a list read
        from standard input is the same list the next time): made from ``given`` the first time (a
        copy of its bytes, not of its parsed entries: a list of a million lines is copied in a
        moment), checked against ``given`` after that."""
        if self.has_list():
            return self.saved_list(given)
        assert given is not None  # crawl_main requires -l when the job has no list yet
        source = os.path.join(self.path, JOB_SOURCE)
        digest = _list_hash(given)
        with open(source + ".tmp", "wb") as fh:
            for chunk in given.source_bytes():
                digest.update(chunk)
                fh.write(chunk)
        os.replace(source + ".tmp", source)
        meta = {"kind": "text" if given.text is not None else "file", "sha256": digest.hexdigest(),
                "ports": ",".join(f"{scheme}:{port}" if scheme else str(port) for scheme, port in given.ports)}
        with open(os.path.join(self.path, JOB_SOURCE_META) + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(meta, fh)
        os.replace(os.path.join(self.path, JOB_SOURCE_META) + ".tmp", os.path.join(self.path, JOB_SOURCE_META))
        return self.saved_list(None)

    def repair_scrapy_files(self) -> List[str]:
        """Scrapy's own files in the job folder (its request queue, the spider state) left unreadable
        by a full or read-only disk would stop every later run at start: such a file is removed (the
        URLs not done are requested again from the list)."""
        notes = []
        queue = os.path.join(self.path, "requests.queue")
        if os.path.isdir(queue) and not _queue_readable(queue):
            shutil.rmtree(queue, ignore_errors=True)
            notes.append(f"Scrapy's request queue in {queue} was unreadable (left by a full or read-only disk); "
                         "it starts over: every URL not done is requested again")
        state = os.path.join(self.path, "spider.state")
        if os.path.isfile(state) and not _pickle_readable(state):
            with contextlib.suppress(OSError):
                os.remove(state)
            notes.append(f"Scrapy's spider state {state} was unreadable; it starts over")
        return notes

    def wrote(self, path: str) -> None:
        """Remember a result file the job wrote (best effort: a full job folder forgets it, and the
        next run's -o onto it is refused, -O accepted)."""
        full = os.path.abspath(path)
        if full not in self.outputs:
            self.outputs.append(full)
            target = os.path.join(self.path, JOB_OUTPUTS)
            with contextlib.suppress(OSError):  # a new file, then renamed: a full disk leaves the old one whole
                with open(target + ".tmp", "w", encoding="utf-8") as fh:
                    json.dump(self.outputs, fh)
                os.replace(target + ".tmp", target)


def _list_hash(url_list: Any) -> Any:
    return hashlib.sha256(repr(tuple(url_list.ports)).encode())


def _list_digest(url_list: Any) -> str:
    """What identifies a list: its bytes (or text) and ``--ports``."""
    digest = _list_hash(url_list)
    for chunk in url_list.source_bytes():
        digest.update(chunk)
    return digest.hexdigest()


def _queue_readable(queue: str) -> bool:
    """Scrapy's disk queue folder can be opened: ``active.json`` and every ``info.json`` parse."""
    for root, _dirs, files in os.walk(queue):
        for name in files:
            if name in ("active.json", "info.json"):
                try:
                    with open(os.path.join(root, name), encoding="utf-8") as fh:
                        json.load(fh)
                except (OSError, ValueError):
                    return False
    return True


def _pickle_readable(path: str) -> bool:
    """The file looks like a whole pickle (a protocol mark first, the STOP opcode last), without
    loading it: an empty or cut file does not."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
            fh.seek(-1, os.SEEK_END)
            tail = fh.read(1)
    except OSError:
        return False
    return len(head) == 2 and head[0] == 0x80 and tail == b"."


def _result_from_job(job: _Job, url_list: Any, outputs: List[tuple], settings: Dict[str, Any], problem: str) -> int:
    """The job folder cannot be written: nothing is rendered; the result files hold what the job
    recorded (every other URL "not fetched"), and the job resumes once it can be written."""
    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.core.store import FeatureStore  # noqa: PLC0415
    from scrapy_websim.crawler.extension import STORE_NAME  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415
    from scrapy_websim.crawler.inputs import InputRegistry  # noqa: PLC0415
    from scrapy_websim.result.safefile import fallback_dirs  # noqa: PLC0415

    try:
        config = WebsimConfig.from_settings(settings)
        params = Finalizer.params_from_settings(settings, config)
    except ConfigError as exc:
        print(f"websim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    store = FeatureStore.temporary_copy_of(os.path.join(job.path, STORE_NAME), batch_size=config.batch_size)
    try:
        inputs = InputRegistry(store, resumable=True)
        if url_list is not None:
            for _entry in inputs.pending(url_list.entries()):
                pass
        inputs.finish()
        result = Finalizer(params).run(store, inputs.total)
        write_results("websim", outputs, result, fallback_dirs())
    finally:
        store.close()
    left = inputs.waiting
    print(f"websim: error: the job folder {job.path} cannot be written ({problem}): nothing was rendered; the "
          f"result files hold the {inputs.total - left} URLs it had recorded ({left} not fetched); run the same "
          f"command again to continue once it can be written", file=sys.stderr)
    return EXIT_OUTPUT


def _exit_status(meta: Dict[str, Any], prog: str = "websim") -> int:
    """0, or 1 when the result is the last-resort one (labelling or clustering failed: every
    record is written, in no cluster, and ``meta["error"]`` says why)."""
    if meta.get("error"):
        print(f"{prog}: error: {meta['error']}; every URL is in the result, in no cluster", file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


def _version() -> str:
    from scrapy_websim import __version__  # noqa: PLC0415

    return __version__


def _file_url(path: str) -> str:
    from pathlib import Path  # noqa: PLC0415

    return Path(path).resolve().as_uri()


def report_main(argv: List[str]) -> int:
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

    from scrapy_websim.result.report import ReportError, report_from_file  # noqa: PLC0415

    try:
        info = report_from_file(args.result, args.output, args.thumbnails)
    except (ReportError, OSError) as exc:
        print(f"websim report: error: {exc}", file=sys.stderr)
        return 2
    note = f"{info.thumbnails} thumbnails" if info.thumbnails else "no thumbnails"
    print(f"websim report: {info.urls} URLs, {info.clusters} clusters, {note}, {info.bytes / 1e6:.1f} MB of data "
          f"in {info.seconds:.1f} s -> {info.path}", file=sys.stderr)
    print(f"websim report: open {_file_url(info.path)}", file=sys.stderr)
    return 0


def cluster_main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="websim cluster",
                                     description="Re-cluster a features file (from --features-file) without rendering.")
    parser.add_argument("features", help="features JSON Lines file written by a crawl")
    _add_output_options(parser)
    _add_decision_options(parser)
    args = parser.parse_args(argv)
    outputs = _outputs(parser, args)
    if not os.path.isfile(args.features):
        parser.error(f"features file not found: {args.features!r}")
    settings = _settings_from_args(parser, args)

    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.core.store import NotAFeaturesFile  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer, recluster_file  # noqa: PLC0415
    from scrapy_websim.result.safefile import fallback_dirs  # noqa: PLC0415

    try:
        config = WebsimConfig.from_settings(settings)
        params = Finalizer.params_from_settings(settings, config)
        result = recluster_file(args.features, params)
    except NotAFeaturesFile as exc:
        print(f"websim cluster: error: {args.features}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, ValueError) as exc:
        print(f"websim cluster: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        written = write_results("websim cluster", outputs, result, fallback_dirs())
    finally:
        result.store.close()  # removes its temporary file
    if written:
        print(f"websim cluster: {result.meta['total_urls']} URLs, {result.meta['total_clusters']} clusters -> "
              f"{', '.join(written)}", file=sys.stderr)
    if len(written) < len(outputs):
        return EXIT_OUTPUT
    return _exit_status(result.meta, "websim cluster")


def diff_main(argv: List[str]) -> int:
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
    if args.output and not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        print(f"websim diff: error: -o {args.output!r}: its directory does not exist", file=sys.stderr)
        return EXIT_USAGE
    if args.report and os.path.exists(args.report) and not os.path.isdir(args.report):
        print(f"websim diff: error: --report {args.report!r}: exists and is not a directory", file=sys.stderr)
        return EXIT_USAGE
    for flag, folder in (("--thumbnails", args.thumbnails), ("--old-thumbnails", args.old_thumbnails)):
        if folder and not os.path.isdir(folder):
            print(f"websim diff: error: {flag} {folder!r}: no such directory", file=sys.stderr)
            return EXIT_USAGE
    try:
        params = _change_params(args.param)
    except ValueError as exc:
        print(f"websim diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    from scrapy_websim.result.diff import DiffError, diff_files, summary_lines, write_diff  # noqa: PLC0415

    try:
        changes = diff_files(args.old, args.new, params)
        if args.output:
            write_diff(args.output, changes)
        if args.report:
            from scrapy_websim.result.report import ReportError, report_from_file  # noqa: PLC0415

            try:
                info = report_from_file(args.new, args.report, thumbs_dir=args.thumbnails, changes=changes,
                                        old_thumbs_dir=args.old_thumbnails)
            except ReportError as exc:
                raise DiffError(str(exc)) from None
            print(f"websim diff: report -> {info.path} (open it in a browser: {_file_url(info.path)})",
                  file=sys.stderr)
    except (DiffError, OSError) as exc:
        print(f"websim diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(summary_lines(changes, max(1, args.limit))))
    return 1 if changes["changed"] else EXIT_OK


def _change_params(pairs: List[str]) -> ChangeParams:
    """``ChangeParams`` with ``NAME=VALUE`` pairs applied; ValueError naming what is wrong."""
    fields = {f.name: f for f in dataclasses.fields(ChangeParams)}
    values: Dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ValueError(f"-p {pair!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
        kind = int if isinstance(fields[name].default, int) else float
        try:
            values[name] = kind(text.strip())
        except ValueError:
            raise ValueError(f"-p {pair!r}: {name} takes {'an integer' if kind is int else 'a number'}") from None
    try:
        return ChangeParams(**values).validate()
    except FieldError as exc:
        raise ValueError(f"-p: {exc}") from None


def explain_main(argv: List[str]) -> int:
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
    _add_decision_options(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    for path in (args.first, args.features):
        if path and not os.path.isfile(path):
            print(f"websim explain: error: file not found: {path!r}", file=sys.stderr)
            return EXIT_USAGE
    settings = _settings_from_args(parser, args)

    from scrapy_websim.config import ConfigError, WebsimConfig  # noqa: PLC0415
    from scrapy_websim.result.explain import ExplainError, explain_files, to_json  # noqa: PLC0415
    from scrapy_websim.result.finalize import Finalizer  # noqa: PLC0415

    try:
        params = Finalizer.params_from_settings(settings, WebsimConfig.from_settings(settings))
        ex = explain_files(args.first, args.url_a, args.url_b, args.features, params, overridden=bool(settings))
    except (ExplainError, ConfigError, ValueError, OSError) as exc:
        print(f"websim explain: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(to_json(ex) if args.json else "\n".join(ex.lines))
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "cluster":
        return cluster_main(argv[1:])
    if argv and argv[0] in ("push", "worker", "status", "collect"):
        from scrapy_websim.distributed.commands import COMMANDS  # noqa: PLC0415

        return COMMANDS[argv[0]](argv[1:])
    if argv and argv[0] == "report":
        return report_main(argv[1:])
    if argv and argv[0] == "diff":
        return diff_main(argv[1:])
    if argv and argv[0] == "explain":
        return explain_main(argv[1:])
    if argv and argv[0] == "urls":
        from scrapy_websim.core.urls.simhash import main as urls_main  # noqa: PLC0415

        return urls_main(argv[1:])
    return crawl_main(argv)


if __name__ == "__main__":
    sys.exit(main())
