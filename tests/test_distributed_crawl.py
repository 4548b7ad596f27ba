"""End-to-end distributed crawl: real redis-server, real Chromium, the demo site, workers in subprocesses.

One scenario asserting the issue's promises at once: a worker SIGKILLed mid-crawl (with its
Chromium) while it holds leased URLs, two more workers joining the job under way finish it (one
``websim worker``, one ``scrapy crawl websim-worker`` in a project with the add-on), Redis is
restarted before ``collect``, and the result equals a single-process crawl of the same list.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from scrapy_websim.distributed.job import Job, connect
from scrapy_websim.testing.crawl import comparable, crawl, load, run_websim, scrapy_env
from scrapy_websim.testing.redis_server import RedisServer
from tests.crawl import REPO, demo_site

pytestmark = pytest.mark.crawl

PATHS = ["/", "/article/rivers", "/article/rivers?utm_source=x", "/mirror/rivers", "/article/bread",
         "/article/comets", "/article/bees", "/js/bees", "/old/comets", "/login", "/account", "/no-such-page",
         "/gone", "/broken", "/maintenance", "/admin", "/thin", "/index.html", "/report.json"]
TIMEOUTS = ["--http-timeout", "4", "--page-timeout", "8", "-s", "WEBSIM_STABLE_TIMEOUT=4"]


def start_worker(url: str, job: str, cwd: str, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = open(os.path.join(cwd, f"worker-{time.monotonic_ns()}.log"), "w", encoding="utf-8")
    return subprocess.Popen([sys.executable, "-m", "scrapy_websim.cli", "worker", "--redis", url, "--job", job,
                             "--lease-timeout", "10", *TIMEOUTS, *extra], cwd=cwd, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def start_project_worker(url: str, job: str, tmp: str) -> subprocess.Popen:
    """``scrapy crawl websim-worker`` in example_project: the add-on wires scrapy-redis from the settings."""
    env = scrapy_env(tmp)
    log = open(os.path.join(tmp, "project-worker.log"), "w", encoding="utf-8")
    settings = {"WEBSIM_REDIS_URL": url, "WEBSIM_REDIS_JOB": job, "WEBSIM_REDIS_LEASE_TIMEOUT": "10",
                "WEBSIM_HTTP_TIMEOUT": "4", "WEBSIM_PAGE_TIMEOUT": "8", "WEBSIM_STABLE_TIMEOUT": "4"}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "websim-worker"]
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    return subprocess.Popen(cmd, cwd=os.path.join(REPO, "example_project"), env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the worker and its Chromium at once, as when its machine dies."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_killed_worker_loses_nothing_and_many_workers_equal_one_process(tmp_path):
    with demo_site(2) as (base, mirror), RedisServer(str(tmp_path / "redis")) as redis_server:
        lines = [base + p for p in PATHS] + [mirror + "/article/rivers", "this is not a url"]
        (tmp_path / "single").mkdir()
        single = crawl(tmp_path / "single", lines, extra=TIMEOUTS, timeout=600)["data"]

        listing = tmp_path / "urls.txt"
        listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
        push = run_websim(["push", "-l", str(listing), "--redis", redis_server.url, "--job", "demo"], cwd=str(tmp_path))
        assert push.returncode == 0, push.stderr
        job = Job(connect(redis_server.url), "demo")

        doomed = start_worker(redis_server.url, "demo", str(tmp_path), "-t", "2")
        try:
            wait_for(lambda: job.counts()["recorded"] >= 2 and job.counts()["leased"] >= 1, 300,
                     "the first worker to be mid-crawl")
        finally:
            kill_group(doomed)
        at_kill = job.counts()
        assert at_kill["leased"] >= 1 and at_kill["unrecorded"] >= 1, at_kill  # it died holding URLs

        # two workers join the crawl under way: they take the queue and the dead worker's expired leases;
        # the second is a Scrapy project's crawl with the add-on and WEBSIM_REDIS_URL
        first = start_worker(redis_server.url, "demo", str(tmp_path))
        late = start_project_worker(redis_server.url, "demo", str(tmp_path))
        try:
            assert first.wait(timeout=600) == 0
            assert late.wait(timeout=600) == 0
        finally:
            for proc in (first, late):
                if proc.poll() is None:
                    kill_group(proc)
        assert job.counts()["unrecorded"] == 0 and job.counts()["leased"] == 0

        redis_server.restart()  # between the workers and collect: the job is on disk (AOF)
        out, csv_out = tmp_path / "distributed.json", tmp_path / "distributed.csv"
        collect = run_websim(["collect", "--redis", redis_server.url, "--job", "demo", "-o", str(out),
                              "-o", str(csv_out)], cwd=str(tmp_path))
        assert collect.returncode == 0, collect.stderr
        distributed = load(str(out))

    assert [r["id"] for r in distributed["urls"]] == list(range(1, len(lines) + 1))  # each URL exactly once
    assert [r["url"] for r in distributed["urls"]] == lines
    assert comparable(distributed) == comparable(single)
    assert distributed["meta"]["total_urls"] == single["meta"]["total_urls"] == len(lines)
    assert distributed["meta"]["total_clusters"] == single["meta"]["total_clusters"]
    assert len(load(str(csv_out))) == len(lines) + 1
    by_url = {r["url"]: r for r in distributed["urls"]}
    assert by_url[base + "/article/rivers"]["cluster_id"] == by_url[mirror + "/article/rivers"]["cluster_id"] != ""
    assert by_url["this is not a url"]["error"].startswith("not a URL")
