"""Soft-404 calibration on a local fleet: E3 recall with and without it, and what it costs.

    python bench/soft404.py [--pages 16] [--dead 5] [--repeat 1]

The fleet (``scrapy_websim/testing/soft404_fleet.py``): 8 servers on 127.0.0.1, each with its own "not found"
template that uses no word of the E3 keyword list: 5 answer unknown paths with status 200 and
their template, 1 with status 404 and its template, 1 serves its home page for every unknown path
(an SPA shell / catch-all route) and 1 redirects unknown paths home. Each has a home page,
``--pages`` content pages and ``--dead`` dead links in the list (``1 + pages + dead`` URLs per
origin: 22 by default, above ``crawl.soft404_min_urls`` (``WEBSIM_PARAMS``), so the default crawl probes each origin).

Two crawls of the same list with the ``websim`` CLI and default settings, one of them with
``--no-calibrate-404`` (in alternating order when ``--repeat`` > 1). Truth: a dead link on a
server with a template is E3; a dead link answered with the home page is not; no home or content
page is. The last line: ``e3_recall_calibrated=X e3_recall_uncalibrated=Y content_as_e3=Z
probes=P pages=N seconds_calibrated=A seconds_uncalibrated=B cost=C cpu_calibrated=.. cpu_uncalibrated=..
cpu_cost=.. renders_added=R`` (``cost``: the extra wall time of the crawl with calibration, as a
share of the crawl without it; ``cpu_cost`` the same for the CPU time of the crawl and its
Chromium, steadier than wall time on a shared machine; ``renders_added``: probes per input URL;
``content_as_e3`` counts both crawls).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from scrapy_websim.testing.crawl import run_websim
from scrapy_websim.testing.soft404_fleet import fleet, score, url_list

KINDS = ["soft", "soft", "hard", "soft", "spa", "soft", "home", "soft"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crawl(tmp: str, name: str, extra: list) -> tuple:
    """(result, wall seconds, CPU seconds of the crawl and everything it started: Chromium too)."""
    out = os.path.join(tmp, f"{name}.json")
    started, cpu = time.monotonic(), _children_cpu()
    proc = run_websim(["-l", os.path.join(tmp, "urls.txt"), "-O", out, *extra], cwd=tmp, timeout=1800)
    seconds, cpu = time.monotonic() - started, _children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"websim failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    with open(out, encoding="utf-8") as fh:
        return json.load(fh), seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=16, help="content pages per server")
    parser.add_argument("--dead", type=int, default=5, help="dead links per server")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of crawls (alternating order)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="websim-soft404-") as tmp, fleet(KINDS, pages=args.pages) as servers:
        urls, truth = url_list(servers, args.dead)
        with open(os.path.join(tmp, "urls.txt"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(urls) + "\n")
        seconds = {"cal": 0.0, "unc": 0.0}
        cpu = {"cal": 0.0, "unc": 0.0}
        scores = {}
        probes = 0
        for run in range(args.repeat):
            order = ("cal", "unc") if run % 2 == 0 else ("unc", "cal")
            for name in order:
                data, took, used = crawl(tmp, name, [] if name == "cal" else ["--no-calibrate-404"])
                seconds[name] += took
                cpu[name] += used
                if len(data["urls"]) != len(urls):
                    sys.exit(f"{name}: {len(data['urls'])} records for {len(urls)} input URLs")
                scores[name] = score(data["urls"], truth)
                soft404 = data["meta"].get("soft404") or {}
                if name == "cal":
                    probes = sum(len(o["probes"]) for o in soft404.get("origins", []))
                    for origin in soft404.get("origins", []):
                        print(f"  {origin['origin']}: calibrated={origin['calibrated']} "
                              f"labelled_e3={origin['labelled_e3']} {origin['not_calibrated']}")
                print(f"{name}: {scores[name]} {took:.1f} s wall, {used:.1f} s CPU", flush=True)
        cal, unc = scores["cal"], scores["unc"]
        cost = (seconds["cal"] - seconds["unc"]) / seconds["unc"]
        cpu_cost = (cpu["cal"] - cpu["unc"]) / cpu["unc"]
        print(f"e3_recall_calibrated={cal['recall']:.3f} e3_recall_uncalibrated={unc['recall']:.3f} "
              f"content_as_e3={cal['content_as_e3'] + unc['content_as_e3']} probes={probes} pages={len(urls)} "
              f"seconds_calibrated={seconds['cal'] / args.repeat:.1f} "
              f"seconds_uncalibrated={seconds['unc'] / args.repeat:.1f} cost={cost:+.3f} "
              f"cpu_calibrated={cpu['cal'] / args.repeat:.1f} cpu_uncalibrated={cpu['unc'] / args.repeat:.1f} "
              f"cpu_cost={cpu_cost:+.3f} renders_added={probes / len(urls):.3f}")


if __name__ == "__main__":
    main()
