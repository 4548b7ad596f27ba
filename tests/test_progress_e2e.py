"""The crawl's progress: a live bar on a terminal (a real pseudo-terminal), log lines in a pipe."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time

import pytest

from scrapy_websim.testing.crawl import PACKAGE_ROOT, crawl
from scrapy_websim.testing.docsite import DocSite, serve

pytestmark = pytest.mark.crawl

BAR = re.compile(r"websim: +(\d+)%\|[^|]*\| (\d+)/(\d+) pages \[[\d:]+<[\d:?]+, +[\d.?]+ pages/s, errors (\d+)\]")


def _urls(base):
    site = DocSite(chapters=2)
    return site, [base + p for p in site.manual_paths()] + ["http://127.0.0.1:9/refused"]


def test_a_terminal_gets_a_live_bar(tmp_path):
    with serve(DocSite(chapters=2)) as base:
        site, urls = _urls(base)
        listing = tmp_path / "urls.txt"
        listing.write_text("\n".join(urls) + "\n", encoding="utf-8")
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
        env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-m", "scrapy_websim.cli", "-l", str(listing), "-o",
                                 str(tmp_path / "r.json"), "-s", "WEBSIM_HTTP_TIMEOUT=10"],
                                cwd=str(tmp_path), env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        chunks = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode("utf-8", "replace")
    bars = BAR.findall(text)
    assert bars, text[-3000:]
    percent, done, total, errors = bars[-1]
    assert (done, total, percent) == (str(len(urls)), str(len(urls)), "100")
    assert errors == "1"  # the refused port
    assert "\r" in text  # redrawn in place
    assert "Spider closed (finished)" in text  # the log lines are printed above the bar, not lost
    assert "DEBUG:" not in text  # at the log level of the command (INFO), bar or no bar


def test_a_pipe_gets_progress_log_lines(tmp_path):
    with serve(DocSite(chapters=2)) as base:
        site, urls = _urls(base)
        result = crawl(tmp_path, urls, extra=["-s", "WEBSIM_HTTP_TIMEOUT=10"])
    log = result["proc"].stderr
    assert not BAR.search(log)
    assert re.search(rf"websim: {len(urls)}/{len(urls)} pages done, [\d.]+ pages/s, ETA -, 1 errors", log)
