"""--follow stays within the start URLs' sites and stops at its page cap, saying so; an empty URL list
is an empty result; the websim spider without URLs is a one-line error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scrapy_websim.spiders.urllist import DEFAULT_MAX_PAGES, UrlListSpider, site_of
from scrapy_websim.testing.crawl import PACKAGE_ROOT, crawl, load, run_websim, scrapy_env
from scrapy_websim.testing.docsite import DocSite, serve

TIMEOUTS = ["-s", "WEBSIM_HTTP_TIMEOUT=10", "-s", "WEBSIM_PAGE_TIMEOUT=20"]
URLLIST = os.path.join(PACKAGE_ROOT, "scrapy_websim", "spiders", "urllist.py")


def test_a_start_url_s_site_is_its_host_and_folder():
    assert site_of("https://www.postgresql.org/docs/16/index.html") == ("www.postgresql.org", "/docs/16/")
    assert site_of("http://127.0.0.1:8000") == ("127.0.0.1:8000", "/")
    spider = UrlListSpider(urls="https://h.example/docs/16/sql.html,https://g.example/", follow="1")
    assert spider.max_pages == DEFAULT_MAX_PAGES  # a documented default cap, not unlimited
    assert spider.in_site("https://h.example/docs/16/sql-altertable.html")
    assert spider.in_site("https://h.example/docs/16/")
    assert not spider.in_site("https://h.example/about/")  # another site on the same host
    assert not spider.in_site("https://h.example/docs/15/sql.html")
    assert spider.in_site("https://g.example/anything/at/all")
    assert not spider.in_site("https://other.example/docs/16/sql.html")


def test_no_urls_is_a_usage_error_on_the_spider_not_an_exception():
    spider = UrlListSpider()
    assert spider.websim_usage_error.startswith("the websim spider needs a URL list")
    assert spider.entries == []


@pytest.mark.crawl
def test_follow_stops_at_the_page_cap_and_says_so(tmp_path):
    site = DocSite(chapters=6)
    with serve(site) as base:
        result = crawl(tmp_path, [f"{base}/manual/index.html"], extra=["--follow", "--max-pages", "4", *TIMEOUTS])
    rows = result["data"]["urls"]
    assert len(rows) == 1 + 4  # the start URL and four discovered pages: a page linked again is not counted again
    assert all(row["url"].startswith(f"{base}/manual/") for row in rows)
    assert "4 pages discovered: the page cap (max_pages, --max-pages) is reached" in result["proc"].stderr


@pytest.mark.crawl
def test_an_empty_list_is_an_empty_result(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing to scan today\n\n", encoding="utf-8")
    proc = run_websim(["-l", str(empty), "-o", str(tmp_path / "r.json")], cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = load(str(tmp_path / "r.json"))
    assert data["urls"] == [] and data["meta"]["total_urls"] == 0
    assert "the URL list holds no URL: the result is empty" in proc.stderr
    env = scrapy_env(tmp_path)
    scrapy = subprocess.run([sys.executable, "-m", "scrapy", "runspider", URLLIST, "-a", f"urls={empty}",
                             "-o", str(tmp_path / "s.json")], cwd=str(tmp_path), env=env, capture_output=True,
                            text=True, timeout=300)
    assert scrapy.returncode == 0, scrapy.stderr[-3000:]
    assert load(str(tmp_path / "s.json"))["urls"] == []


@pytest.mark.crawl
def test_the_websim_spider_without_urls_is_a_one_line_error(tmp_path):
    env = scrapy_env(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "scrapy", "runspider", URLLIST, "-o", str(tmp_path / "r.json")],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert any("websim: error: the websim spider needs a URL list: scrapy crawl websim -a urls=urls.txt" in line
               for line in errors), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.json").exists()
