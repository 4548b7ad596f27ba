"""What more than one ``websim`` command shares: exit statuses, the result-file options, the
decision options, the rendering options, writing the result files, and a distributed job's
``--redis`` and ``--job``.

A command module builds its own parser and adds the groups it needs from here; nothing here
imports a command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scrapy_websim.config import RESULT_FORMATS, default, param_default
from scrapy_websim.distributed.job import Job, JobError, connect
from scrapy_websim.result.output import write_files
from scrapy_websim.result.safefile import output_error

#: Exit statuses (docs/usage.md, "Exit status"): 3 is trouble writing (an output, the job folder).
EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_OUTPUT = 0, 1, 2, 3

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


# --- result files: -o / -O ---

def output_format(parser: argparse.ArgumentParser, path: str, overwrite: bool = True, flag: str = "-o",
                  allowed: Sequence[str] = ()) -> str:
    """The format of result file ``path``, checked (its ending, its directory, no silent append)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in RESULT_FORMATS:
        parser.error(f"{flag} {path!r}: the output must end in .json, .jsonl or .csv")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        parser.error(f"{flag} {path!r}: directory {directory!r} does not exist")
    if not overwrite and os.path.exists(path) and os.path.abspath(path) not in allowed:
        parser.error(f"-o {path!r}: the file exists already; websim never appends to a result (a second JSON "
                     f"document would make it invalid). Use -O {path} to overwrite it, or choose another name")
    return RESULT_FORMATS[ext]


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                        help="result file: .json, .jsonl or .csv; refused if it exists (repeatable)")
    parser.add_argument("-O", "--overwrite-output", action="append", default=[], metavar="FILE",
                        help="like -o, but overwrite the file if it exists (repeatable)")


def outputs_of(parser: argparse.ArgumentParser, args: argparse.Namespace, allowed: Sequence[str] = ()) -> List[tuple]:
    """``[(path, format)]`` from -o/-O, each checked (format, directory, no silent append)."""
    outputs = [(path, output_format(parser, path, overwrite=False, allowed=allowed)) for path in args.output]
    outputs += [(path, output_format(parser, path, flag="-O")) for path in args.overwrite_output]
    if not outputs:
        parser.error("an output is required: -o result.json (or -O to overwrite; .json, .jsonl or .csv)")
    return outputs


def write_results(prog: str, outputs: List[tuple], rows: Any, fallbacks: Sequence[str],
                  features_file: str = "") -> Tuple[List[str], bool]:
    """Write every result file and the features file (``websim cluster`` reads it) from one pass
    over the rows, each one attempted whatever happened to the others; returns the paths of the
    result files written where asked, and whether the features file was. A file that cannot be
    written goes to a fallback file, and a ``PROG: error:`` line names both."""
    files = list(outputs) + ([(features_file, "features")] if features_file else [])
    done, features_ok = [], True
    for (path, fmt), written in zip(files, write_files(rows, files, fallbacks)):
        error = output_error("the features file" if fmt == "features" else "the result file", path, written)
        if error:
            print(f"{prog}: error: {error}", file=sys.stderr)
        if fmt == "features":
            features_ok = not error
        elif not error:
            done.append(path)
    return done, features_ok


def exit_status(meta: Dict[str, Any], prog: str = "websim") -> int:
    """0, or 1 when the result is the last-resort one (labelling or clustering failed: every
    record is written, in no cluster, and ``meta["error"]`` says why)."""
    if meta.get("error"):
        print(f"{prog}: error: {meta['error']}; every URL is in the result, in no cluster", file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


def file_url(path: str) -> str:
    """``file://`` URL of ``path``, for a line that says where to open a report."""
    return Path(path).resolve().as_uri()


# --- the decision options and -s ---

def add_decision_options(parser: argparse.ArgumentParser) -> None:
    for flag, _setting, typ, text in DECISION_OPTIONS:
        if typ is None:
            parser.add_argument(flag, action="store_true", default=None, help=text)
        else:
            parser.add_argument(flag, type=typ, help=text)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="any Scrapy or WEBSIM_* setting (repeatable; WEBSIM_PARAMS='{\"key\": value}' "
                        "adds to the keys the flags set)")


def put(settings: Dict[str, Any], target: str, value: Any) -> None:
    """Set ``target``: a setting, or a ``WEBSIM_PARAMS`` key (``object.field``) added to that dict."""
    if "." in target:
        settings.setdefault("WEBSIM_PARAMS", {})[target] = value
    else:
        settings[target] = value


def merged(*layers: Dict[str, Any]) -> Dict[str, Any]:
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


def settings_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Any]:
    """The settings the decision options and ``-s`` set."""
    settings: Dict[str, Any] = {}
    for flag, target, _typ, _text in DECISION_OPTIONS:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            put(settings, target, value)
    for item in args.set:
        if "=" not in item:
            parser.error(f"-s {item!r}: expected NAME=VALUE")
        name, value = item.split("=", 1)
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        settings = merged(settings, {name.strip(): parsed})
    return settings


# --- rendering: a crawl, a distributed worker ---

def add_timeout_options(parser: argparse.ArgumentParser) -> None:
    """``--http-timeout`` and ``--page-timeout``."""
    parser.add_argument("--http-timeout", type=float, metavar="SECONDS",
                        help=f"seconds for the HTTP response (default {default('WEBSIM_HTTP_TIMEOUT'):g})")
    parser.add_argument("--page-timeout", type=float, metavar="SECONDS",
                        help=f"seconds for a whole page (default {default('WEBSIM_PAGE_TIMEOUT'):g})")


def render_settings(args: argparse.Namespace) -> Dict[str, Any]:
    """The settings every rendering command maps from its flags (``--loglevel``, ``-t``, the timeouts)."""
    settings: Dict[str, Any] = {
        "ADDONS": {"scrapy_websim.Addon": 500},
        "LOG_LEVEL": args.loglevel,
        "CONCURRENT_REQUESTS": args.threads,
    }
    for name, value in (("WEBSIM_HTTP_TIMEOUT", args.http_timeout), ("WEBSIM_PAGE_TIMEOUT", args.page_timeout)):
        if value is not None:
            settings[name] = value
    return settings


# --- a distributed job: push, worker, status, collect ---

def job_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a distributed command, with its ``--redis`` and ``--job``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--redis", required=True, metavar="URL", help="Redis URL, e.g. redis://HOST:6379/0")
    parser.add_argument("--job", required=True, help="job name (the same for push, workers, status and collect)")
    return parser


def open_job(args: argparse.Namespace, prog: str, pushed: bool = True) -> Optional[Job]:
    """The job of ``--redis`` and ``--job`` (``pushed``: its list must be in); None after saying why not."""
    try:
        job = Job(connect(args.redis), args.job)
        if pushed:
            job.require_pushed()
        return job
    except JobError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return None
