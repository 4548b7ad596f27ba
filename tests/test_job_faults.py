"""A job folder (``--resume``) on a disk that fills up, then turns read-only: the result is never lost.

A real small filesystem (tmpfs, mounted for the test: root) holds the job folder; the result files
are on another disk. When the job folder fills up during the crawl, rendering stops, the result
files are written from what was recorded with every URL once, ``websim`` exits 3 with one line
naming the folder and the cause, and the job resumes once there is space again (Scrapy's own queue
files, left unreadable, are started over). A read-only job folder gives the result from what it had
stored, without rendering.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

import pytest

from scrapy_websim.testing.crawl import run_websim
from scrapy_websim.testing.hostile_server import hostile_site

pytestmark = pytest.mark.crawl

N_PAGES = 24


@contextlib.contextmanager
def small_disk(path, size="1m"):
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"tmpfs cannot be mounted here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(disk, leave_kb):
    """A file that leaves ``leave_kb`` KB free on ``disk``."""
    stat = os.statvfs(disk)
    filler = os.path.join(disk, "filler")
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave_kb * 1024))
    return filler


def _rows(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["urls"]


def _error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("websim: error:")]


def test_a_full_or_read_only_job_folder_never_costs_the_result(tmp_path):
    disk = tmp_path / "disk"
    with small_disk(disk), hostile_site(page_delay=0.2) as site:
        urls = [f"{site.base}/page/{i}" for i in range(N_PAGES)]
        (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
        job = disk / "job"
        command = ["-l", str(tmp_path / "urls.txt"), "--resume", str(job), "-o", str(tmp_path / "r.json"),
                   "-o", str(tmp_path / "r.csv"), "-t", "4", "--batch-size", "1", "--no-calibrate-404"]

        # 1. the job folder fills up during the crawl
        filler = _fill(disk, leave_kb=500)
        full = run_websim(command, cwd=str(tmp_path), timeout=600)
        assert full.returncode == 3, full.stderr[-4000:]
        assert "Traceback" not in full.stderr, full.stderr[-6000:]
        errors = _error_lines(full.stderr)
        assert len(errors) == 1 and f"the job folder {job} cannot be written" in errors[0], errors
        assert "full" in errors[0] and "run the same command again" in errors[0], errors
        rows = _rows(tmp_path / "r.json")
        assert [r["url"] for r in rows] == urls  # every URL once, in order
        done = [r for r in rows if r["status_code"] == 200 and not r["error"]]
        left = [r for r in rows if r["error"].startswith("not fetched")]
        assert done and left and len(done) + len(left) == N_PAGES, [(r["status_code"], r["error"]) for r in rows]
        assert (tmp_path / "r.csv").read_text(encoding="utf-8").count("\n") == N_PAGES + 1

        # 2. read-only: the result of what the job stored, nothing rendered
        served = site.counters.get("pages_served", 0)
        assert subprocess.run(["mount", "-o", "remount,ro", str(disk)]).returncode == 0
        frozen = run_websim(command, cwd=str(tmp_path), timeout=600)
        assert frozen.returncode == 3, frozen.stderr[-4000:]
        assert "Traceback" not in frozen.stderr, frozen.stderr[-6000:]
        errors = _error_lines(frozen.stderr)
        assert len(errors) == 1 and f"the job folder {job} cannot be written" in errors[0], errors
        assert "nothing was rendered" in errors[0], errors
        assert site.counters.get("pages_served", 0) == served
        stored = _rows(tmp_path / "r.json")
        assert [r["url"] for r in stored] == urls
        assert 0 < sum(1 for r in stored if r["status_code"] == 200) <= len(done)

        # 3. space again: the same command resumes and ends with every page; Scrapy's queue files that
        # the full disk left unreadable do not stop it
        assert subprocess.run(["mount", "-o", "remount,rw", str(disk)]).returncode == 0
        os.remove(filler)
        queue = job / "requests.queue"
        queue.mkdir(exist_ok=True)
        (queue / "active.json").write_text("")  # as a write on a full disk leaves it
        again = run_websim(command, cwd=str(tmp_path), timeout=600)
        assert again.returncode == 0, again.stderr[-4000:]
        assert "resuming" in again.stderr and "starts over" in again.stderr
        rows = _rows(tmp_path / "r.json")
        assert [r["url"] for r in rows] == urls
        assert all(r["status_code"] == 200 and not r["error"] for r in rows), [r["error"] for r in rows]
        # only what the job had not stored is rendered again
        assert site.counters.get("pages_served", 0) - served <= N_PAGES - sum(
            1 for r in stored if r["status_code"] == 200) + 4
