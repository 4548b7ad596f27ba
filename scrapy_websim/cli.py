"""The ``websim`` console script.

* ``websim -l urls.txt -o result.json [-t 20] [--http-timeout 10] [--page-timeout 20]
  [--batch-size 1000] [--sim-threshold 0.85]`` renders and clusters a URL list (the reference
  tool's CLI), running the ``websim`` spider in-process with the add-on.
* ``websim cluster features.jsonl -o result.json [--text-threshold ...]`` re-clusters a features
  file written by a crawl (``WEBSIM_FEATURES_FILE`` / ``--features-file``), without rendering.
* ``websim urls --dedupe urls.txt [--keep 15] [-o out.txt]`` reduces a URL list to a few URLs
  per URL pattern, without fetching anything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence

#: Exit statuses (README "Exit status").
EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE = 0, 1, 2
#: Inside a ``--resume`` directory: the URL list of the job and the result files it wrote.
JOB_LIST, JOB_OUTPUTS = "websim-list.txt", "websim-outputs.json"

FORMATS = {".json": "json", ".jsonl": "jsonl", ".jsonlines": "jsonl", ".csv": "csv"}

#: Options shared by the crawl and the offline re-cluster: (flag, setting, type, help).
DECISION_OPTIONS = (
    ("--sim-threshold", "WEBSIM_SIM_THRESHOLD", float, "recorded in meta (the decision uses the rules below); default 0.85"),
    ("--text-threshold", "WEBSIM_TEXT_THRESHOLD", float, "rule 1: minimum text similarity"),
    ("--structure-threshold", "WEBSIM_STRUCTURE_THRESHOLD", float, "rule 1: minimum structure similarity"),
    ("--visual-threshold", "WEBSIM_VISUAL_THRESHOLD", float, "rule 1: minimum visual similarity"),
    ("--visual-fallback-threshold", "WEBSIM_VISUAL_FALLBACK_THRESHOLD", float, "rule 2: visual similarity alone (>1 disables)"),
    ("--structure-measure", "WEBSIM_STRUCTURE_MEASURE", str, "paths, lcs or both"),
    ("--same-host-only", "WEBSIM_SAME_HOST_ONLY", None, "only cluster pages of the same host"),
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


def write_atomically(path: str, fmt: str, result: Any) -> None:
    """Write ``result`` to a temporary file beside ``path``, then rename it: a reader (or a crawl
    stopped at any moment) sees the old file or the complete new one, never half a result."""
    from scrapy_websim.exporters import WRITERS  # noqa: PLC0415

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            WRITERS[fmt](fh.write, result)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _add_decision_options(parser: argparse.ArgumentParser) -> None:
    for flag, _setting, typ, text in DECISION_OPTIONS:
        if typ is None:
            parser.add_argument(flag, action="store_true", default=None, help=text)
        else:
            parser.add_argument(flag, type=typ, help=text)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="any Scrapy or WEBSIM_* setting (repeatable)")


def _settings_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    settings: Dict[str, Any] = {}
    for flag, setting, _typ, _text in DECISION_OPTIONS:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            settings[setting] = value
    for item in args.set:
        if "=" not in item:
            parser.error(f"-s {item!r}: expected NAME=VALUE")
        name, value = item.split("=", 1)
        try:
            settings[name.strip()] = json.loads(value)
        except ValueError:
            settings[name.strip()] = value
    return settings


def crawl_main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="websim",
        description="Render a list of URLs in headless Chromium, cluster duplicate pages and label special pages.",
        epilog="Other commands: 'websim cluster FEATURES.jsonl -o OUT' re-clusters without rendering; "
        "'websim urls --dedupe FILE' reduces a URL list to its URL patterns. Exit status: 0 done, "
        "1 interrupted or the crawl failed (the result files hold what was done), 2 usage or settings error.",
    )
    parser.add_argument("-l", "--list", metavar="URLS",
                        help="a .txt file (one URL per line, # comments) or comma-separated URLs")
    _add_output_options(parser)
    parser.add_argument("-t", "--threads", type=int, default=20, help="concurrent requests (default 20)")
    parser.add_argument("--http-timeout", type=float, default=10.0, help="seconds for the HTTP response (default 10)")
    parser.add_argument("--page-timeout", type=float, default=20.0, help="seconds for a whole page (default 20)")
    parser.add_argument("--batch-size", type=int, default=1000, help="records buffered before a write to disk (default 1000)")
    parser.add_argument("--follow", action="store_true", help="also render same-host links found on the pages")
    parser.add_argument("--max-pages", type=int, default=0, help="with --follow: at most this many discovered pages")
    parser.add_argument("--features-file", help="also write every page's features (JSON Lines) for 'websim cluster'")
    parser.add_argument("--screenshots-dir", help="save each page's viewport screenshot here as ID.png")
    parser.add_argument("--resume", metavar="DIR",
                        help="job directory (Scrapy's JOBDIR): the record store and the URL list live there; "
                        "run the same command again after an interruption to continue")
    parser.add_argument("--loglevel", default="INFO", help="Scrapy log level (default INFO)")
    parser.add_argument("--version", action="version", version=f"websim {_version()}")
    _add_decision_options(parser)
    args = parser.parse_args(argv)
    job = _Job(parser, args.resume) if args.resume else None
    urls = job.url_list(args.list) if job else args.list
    if not urls:
        parser.error("the following arguments are required: -l/--list")
    outputs = _outputs(parser, args, allowed=job.outputs if job else ())
    if not 1 <= args.threads <= 1000:
        parser.error(f"-t {args.threads}: concurrency must be in [1, 1000]")
    settings = _settings_from_args(parser, args)

    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy.settings import Settings  # noqa: PLC0415

    from scrapy_websim.addon import max_pages_in_flight  # noqa: PLC0415
    from scrapy_websim.config import ConfigError  # noqa: PLC0415
    from scrapy_websim.core.urllist import UrlListError, read_entries  # noqa: PLC0415
    from scrapy_websim.render.browser import BrowserNotFound  # noqa: PLC0415
    from scrapy_websim.spiders.urllist import UrlListSpider  # noqa: PLC0415

    try:
        read_entries(urls)  # fail fast, before a browser starts
    except UrlListError as exc:
        parser.error(str(exc))
    if job:
        urls = job.keep_list(urls)
    cap = max_pages_in_flight()
    if args.threads > cap:
        print(f"websim: {args.threads} concurrent requests, at most {cap} pages rendered at once "
              f"(rendering is CPU-bound on this {os.cpu_count()}-core machine)", file=sys.stderr)
    base = {
        "ADDONS": {"scrapy_websim.Addon": 500},
        "LOG_LEVEL": args.loglevel,
        "CONCURRENT_REQUESTS": args.threads,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.threads,
        "WEBSIM_HTTP_TIMEOUT": args.http_timeout,
        "WEBSIM_PAGE_TIMEOUT": args.page_timeout,
        "WEBSIM_BATCH_SIZE": args.batch_size,
        "WEBSIM_FEATURES_FILE": args.features_file or "",
        "WEBSIM_SCREENSHOTS_DIR": args.screenshots_dir or "",
    }
    if job:
        base["JOBDIR"] = job.path
    base.update(settings)
    try:  # every setting and the browser checked before anything starts: one clear line, exit 2
        from scrapy_websim.config import WebsimConfig  # noqa: PLC0415
        from scrapy_websim.finalize import Finalizer  # noqa: PLC0415
        from scrapy_websim.render.browser import find_browser  # noqa: PLC0415
        from scrapy_websim.render.handler import parse_networks  # noqa: PLC0415

        checked = WebsimConfig.from_settings(base)
        Finalizer.params_from_settings(base, checked)
        parse_networks(base.get("WEBSIM_DENY_NETWORKS"))
        find_browser(checked.browser_executable)
    except (ConfigError, BrowserNotFound) as exc:
        print(f"websim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        process = CrawlerProcess(Settings(base))
        crawler = process.create_crawler(UrlListSpider)
        process.crawl(crawler, urls=urls, follow=args.follow, max_pages=args.max_pages)
        process.start()  # returns after the crawl, after a graceful stop (1st signal) or at once (2nd)
    except (ConfigError, BrowserNotFound, UrlListError) as exc:
        print(f"websim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _write_outputs(crawler, outputs, job)


def _write_outputs(crawler: Any, outputs: List[tuple], job: Optional["_Job"]) -> int:
    """Write every result file (whatever happened to the crawl) and say how it ended."""
    from scrapy_websim.extensions import _extensions  # noqa: PLC0415

    stats = crawler.stats.get_stats() if crawler.stats else {}
    ext = _extensions.get(crawler)
    if ext is None or not ext.total_inputs:
        print(f"websim: error: the crawl did not start ({stats.get('finish_reason', 'no stats')}); "
              f"see the log above", file=sys.stderr)
        return EXIT_INCOMPLETE
    result = ext.finalize()  # done already unless a second signal stopped the crawl at once
    for path, fmt in outputs:
        write_atomically(path, fmt, result)
        if job:
            job.wrote(path)
    meta = result.meta
    reason = stats.get("finish_reason", "stopped at once")
    left = ext.store_placeholders()
    print(f"websim: {meta['total_urls']} URLs, {meta['total_clusters']} clusters -> "
          f"{', '.join(path for path, _ in outputs)}", file=sys.stderr)
    if reason == "finished" and not left:
        return EXIT_OK
    hint = f"; run the same command again to continue" if job else "; use --resume DIR to be able to continue"
    print(f"websim: the crawl did not finish ({reason}): {left} URLs not fetched (recorded with an error)"
          f"{hint}", file=sys.stderr)
    return EXIT_INCOMPLETE


class _Job:
    """A ``--resume`` directory: remembers the URL list and the result files the job wrote."""

    def __init__(self, parser: argparse.ArgumentParser, path: str) -> None:
        self.parser = parser
        self.path = os.path.abspath(path)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            parser.error(f"--resume {path!r} exists and is not a directory")
        os.makedirs(self.path, exist_ok=True)
        self.outputs: List[str] = []
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(self.path, JOB_OUTPUTS), encoding="utf-8") as fh:
                self.outputs = list(json.load(fh))

    def url_list(self, given: Optional[str]) -> Optional[str]:
        saved = os.path.join(self.path, JOB_LIST)
        return given or (saved if os.path.isfile(saved) else None)

    def keep_list(self, urls: str) -> str:
        """The job's own copy of the list (so it cannot change under a resumed job)."""
        from scrapy_websim.core.urllist import read_entries  # noqa: PLC0415

        saved = os.path.join(self.path, JOB_LIST)
        raws = [entry.raw for entry in read_entries(urls)]
        if os.path.isfile(saved):
            if os.path.abspath(urls) != saved and [e.raw for e in read_entries(saved)] != raws:
                self.parser.error(f"--resume {self.path!r} belongs to another URL list (its copy is {saved}); "
                                  "use a new directory for a new list")
            return saved
        with open(saved + ".tmp", "w", encoding="utf-8") as fh:
            fh.write("\n".join(raws) + "\n")
        os.replace(saved + ".tmp", saved)
        return saved

    def wrote(self, path: str) -> None:
        full = os.path.abspath(path)
        if full not in self.outputs:
            self.outputs.append(full)
            with open(os.path.join(self.path, JOB_OUTPUTS), "w", encoding="utf-8") as fh:
                json.dump(self.outputs, fh)


def _version() -> str:
    from scrapy_websim import __version__  # noqa: PLC0415

    return __version__


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
    from scrapy_websim.finalize import Finalizer, recluster_file  # noqa: PLC0415

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
    for path, fmt in outputs:
        write_atomically(path, fmt, result)
    print(f"websim cluster: {result.meta['total_urls']} URLs, {result.meta['total_clusters']} clusters -> "
          f"{', '.join(path for path, _ in outputs)}", file=sys.stderr)
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "cluster":
        return cluster_main(argv[1:])
    if argv and argv[0] == "urls":
        from scrapy_websim.core.urlsimhash import main as urls_main  # noqa: PLC0415

        return urls_main(argv[1:])
    return crawl_main(argv)


if __name__ == "__main__":
    sys.exit(main())
