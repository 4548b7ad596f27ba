"""A crawl of hostile pages (``scrapy_websim/testing/hostile_server.py``) end to end: every list line is one record,
nothing hangs, transfers stop, no local file is read, the forbidden network is never reached."""

from __future__ import annotations

import csv
import json
import math
import time

import pytest

from scrapy_websim.testing.crawl import run_websim
from scrapy_websim.testing.hostile_server import UNFETCHABLE, check_hostile_result, hostile_site

pytestmark = pytest.mark.crawl

PAGE_TIMEOUT, HTTP_TIMEOUT, MARGIN, IN_FLIGHT = 8, 5, 5, 4


def test_hostile_pages_each_one_record_in_bounded_time(tmp_path):
    with hostile_site() as site:
        listing = tmp_path / "urls.txt"
        listing.write_text("\n".join(site.urls) + "\n")
        fetched = len(site.urls) - len(UNFETCHABLE)
        # every page costs at most its budget; a hang would run into the subprocess timeout
        bound = math.ceil(fetched / IN_FLIGHT) * (PAGE_TIMEOUT + MARGIN) + 120
        started = time.monotonic()
        proc = run_websim(["-l", str(listing), "-o", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.csv"),
                           "--page-timeout", str(PAGE_TIMEOUT), "--http-timeout", str(HTTP_TIMEOUT),
                           "-s", "WEBSIM_DENY_NETWORKS=127.0.0.2/32"], cwd=str(tmp_path), timeout=bound + 60)
        seconds = time.monotonic() - started
        time.sleep(1.0)  # let the server notice closed connections
        assert proc.returncode == 0, proc.stderr[-5000:]
        assert seconds < bound, f"{seconds:.0f} s for {fetched} hostile pages"
        texts = (tmp_path / "r.json").read_text(encoding="utf-8") + (tmp_path / "r.csv").read_text(encoding="utf-8")
        rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["urls"]
        assert check_hostile_result(site, rows, texts) == []
    with open(tmp_path / "r.csv", encoding="utf-8", newline="") as fh:
        csv_rows = list(csv.reader(fh))
    assert [r[1] for r in csv_rows[1:]] == site.urls  # one row per line in CSV too
    title = next(r[9] for r in csv_rows[1:] if r[1].endswith("/formula-title"))
    assert title.startswith("'=HYPERLINK")  # page strings are data: the formula is escaped
