"""End-to-end: every output websim writes fails cleanly, on a real full disk (a small tmpfs) and a
real read-only folder (a tmpfs mounted read-only), and a result it replaces keeps its file mode.

A place that cannot be written is found before anything is rendered (one ``websim: error:`` line,
exit 3). A disk that fills during the crawl costs no work: each output is still attempted, a result
file that cannot be written goes to a fallback file the error names, the report and thumbnails
leave nothing half-written where a good file was, and the exit status is 3.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys

import pytest

from scrapy_websim.testing.crawl import PACKAGE_ROOT, load, run_websim, scrapy_env
from scrapy_websim.testing.docsite import DocSite, serve

pytestmark = pytest.mark.crawl

TIMEOUTS = ["-s", "WEBSIM_HTTP_TIMEOUT=10", "-s", "WEBSIM_PAGE_TIMEOUT=20"]


@contextlib.contextmanager
def tmpfs(path, size="1m", read_only=False):
    """A tmpfs of ``size`` mounted at ``path`` (root only: the test is skipped without it)."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs (a real full disk, a real read-only folder) needs root")
    options = f"size={size}" + (",ro" if read_only else "")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], check=False)


def fill(path):
    """Fill the file system of folder ``path`` to the last byte."""
    fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"x" * size)
    finally:
        os.close(fd)


def _urls(base):
    return f"{base}/manual/index.html,{base}/manual/ch1.html,{base}/manual/ch1.html?sort=asc"


def test_a_read_only_folder_is_found_before_anything_is_rendered(tmp_path):
    with tmpfs(str(tmp_path / "ro"), read_only=True) as ro:
        proc = run_websim(["-l", "http://127.0.0.1:9/", "-o", f"{ro}/result.json", "-o", str(tmp_path / "ok.json")],
                          cwd=str(tmp_path), timeout=120)
        report = run_websim(["-l", "http://127.0.0.1:9/", "-o", str(tmp_path / "ok.json"), "--report", f"{ro}/report"],
                            cwd=str(tmp_path), timeout=120)
        env = scrapy_env(tmp_path)
        scrapy = subprocess.run([sys.executable, "-m", "scrapy", "runspider", os.path.join(
            PACKAGE_ROOT, "scrapy_websim", "spiders", "urllist.py"), "-a", "urls=http://127.0.0.1:9/",
            "-o", f"{ro}/result.json"], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert f"websim: error: -o {ro}/result.json: cannot be written:" in proc.stderr
    assert "Read-only file system" in proc.stderr and "nothing was rendered" in proc.stderr
    assert "Traceback" not in proc.stderr and "Spider opened" not in proc.stderr
    assert not (tmp_path / "ok.json").exists()
    assert report.returncode == 3 and f"--report {ro}/report: cannot be written" in report.stderr
    # scrapy crawl / runspider: one error line, no request sent, exit status 1
    assert scrapy.returncode == 1, scrapy.stderr[-3000:]
    assert f"websim: error: the result file {ro}/result.json cannot be written" in scrapy.stderr
    assert "Traceback" not in scrapy.stderr and "'downloader/request_count'" not in scrapy.stderr


def test_a_disk_that_fills_during_the_crawl_costs_no_work(tmp_path):
    site = DocSite(chapters=2)
    with tmpfs(str(tmp_path / "disk"), size="256k") as disk, serve(site) as base:
        report = os.path.join(disk, "report")
        os.makedirs(os.path.join(report, "data"))
        with open(os.path.join(report, "index.html"), "w", encoding="utf-8") as fh:
            fh.write("<html>last week's report</html>")
        fill(disk)
        proc = run_websim(["-l", _urls(base), "-o", f"{disk}/result.json", "-o", str(tmp_path / "second.csv"),
                           "--report", report, *TIMEOUTS], cwd=str(tmp_path), timeout=300)
        env = scrapy_env(tmp_path)
        scrapy_dir = tmp_path / "scrapy"
        scrapy_dir.mkdir()
        scrapy = subprocess.run([sys.executable, "-m", "scrapy", "runspider", os.path.join(
            PACKAGE_ROOT, "scrapy_websim", "spiders", "urllist.py"), "-a", f"urls={_urls(base)}",
            "-o", f"{disk}/scrapy.json", *TIMEOUTS], cwd=str(scrapy_dir), env=env, capture_output=True, text=True,
            timeout=300)
        left = sorted(os.listdir(disk)) + sorted(os.listdir(report)) + sorted(os.listdir(os.path.join(report, "data")))
        thumbs = os.path.join(report, "thumbs")
        left += sorted(os.listdir(thumbs)) if os.path.isdir(thumbs) else []
        with open(os.path.join(report, "index.html"), encoding="utf-8") as fh:
            index = fh.read()
    err = proc.stderr
    assert proc.returncode == 3, err[-4000:]
    assert "Traceback" not in err
    fallback = tmp_path / "websim-fallback-result.json"
    assert (f"websim: error: the result file {disk}/result.json could not be written (No space left on device); "
            f"it was written to {fallback} instead") in err
    data = load(str(fallback))
    assert len(data["urls"]) == 3 and all(row["status_code"] == 200 for row in data["urls"])
    assert len(load(str(tmp_path / "second.csv"))) == 4  # the other output: header and three rows
    assert f"websim: error: the report {report} could not be written (No space left on device)" in err
    assert f"websim report {tmp_path / 'second.csv'} -o DIR" in err  # how to write the report again
    assert index == "<html>last week's report</html>"  # the report there before is left whole
    assert "websim: error: thumbnails" in err
    assert not [name for name in left if name.endswith((".tmp", ".part"))], left  # nothing half-written
    assert left.count("index.html") == 1 and "result.json" not in left
    # a Scrapy crawl whose result could not be written where asked exits non-zero, the result kept
    assert scrapy.returncode == 1, scrapy.stderr[-3000:]
    kept = scrapy_dir / "websim-fallback-scrapy.json"
    assert (f"websim: error: the result file {disk}/scrapy.json could not be written (No space left on device); "
            f"it was written to {kept} instead") in scrapy.stderr
    assert len(load(str(kept))["urls"]) == 3 and "Traceback" not in scrapy.stderr


def test_a_result_it_replaces_keeps_its_mode(tmp_path):
    site = DocSite(chapters=1)
    kept = tmp_path / "shared.json"
    kept.write_text("{}", encoding="utf-8")
    os.chmod(kept, 0o640)
    new = tmp_path / "new.json"
    with serve(site) as base:
        env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", "-l", f"{base}/manual/index.html",
                               "-O", str(kept), "-o", str(new), *TIMEOUTS], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.umask(0o022))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o640  # was 0o600 after every overwrite
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o644  # a new file: the umask's mode
    assert json.loads(kept.read_text(encoding="utf-8"))["urls"]
