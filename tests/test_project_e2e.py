"""End-to-end: a user's own Scrapy project, made by ``scrapy startproject``, with the README's
``ADDONS`` line and a CrawlSpider of its own over a documentation site on 127.0.0.1.

The same crawl runs twice: as the project comes from the template (no add-on), then with the
add-on. The user's feeds must hold exactly the same items in every format, nothing of websim's may
reach them or the log, and the websim result goes to its own file, named in the log.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from scrapy_websim.testing.crawl import PACKAGE_ROOT, entry_points_dir
from scrapy_websim.testing.docsite import DocSite, group_of, serve

pytestmark = pytest.mark.crawl

ADDONS_LINE = 'ADDONS = {"scrapy_websim.Addon": 500}'  # README.md, "In a Scrapy project"

SPIDER = '''
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class ManualSpider(CrawlSpider):
    name = "manual"
    allowed_domains = ["127.0.0.1"]
    rules = (Rule(LinkExtractor(allow=r"/manual/"), callback="parse_page", follow=True),)

    def __init__(self, start="", *args, **kwargs):
        self.start_urls = [start]
        super().__init__(*args, **kwargs)

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url, "title": response.css("title::text").get(),
               "h1": response.css("h1::text").get(), "paragraphs": len(response.css("main p"))}
'''

FORMATS = ("jl", "json", "csv", "xml")


def _items(path):
    """The items of a feed file as comparable tuples."""
    if path.endswith(".jl"):
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    elif path.endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            rows = json.load(fh)
    elif path.endswith(".csv"):
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    else:
        rows = [{child.tag: child.text or "" for child in item} for item in ET.parse(path).getroot()]
    return sorted(tuple(sorted((k, str(v)) for k, v in row.items())) for row in rows)


def _scrapy(project, args, env_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([env_path, PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)


def _crawl(project, base, name, env_path, extra=()):
    out = os.path.join(project, name)
    os.makedirs(out)
    args = ["crawl", "manual", "-a", f"start={base}/manual/index.html", *extra]
    for fmt in FORMATS:
        args += ["-o", os.path.join(out, f"items.{fmt}")]
    proc = _scrapy(project, args, env_path)
    return out, proc


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user")
    meta = entry_points_dir(tmp)
    proc = _scrapy(str(tmp), ["startproject", "manual"], meta)
    assert proc.returncode == 0, proc.stderr
    root = os.path.join(str(tmp), "manual")
    with open(os.path.join(root, "manual", "spiders", "manual.py"), "w", encoding="utf-8") as fh:
        fh.write(SPIDER)
    settings_py = os.path.join(root, "manual", "settings.py")
    with open(settings_py, encoding="utf-8") as fh:
        template = fh.read()
    assert "ADDONS = {}" in template and "CONCURRENT_REQUESTS_PER_DOMAIN = 1" in template
    site = DocSite(chapters=3)
    with serve(site) as base:
        plain, plain_proc = _crawl(root, base, "plain", meta)  # the project as the template made it
        with open(settings_py, "w", encoding="utf-8") as fh:
            fh.write(template.replace("ADDONS = {}", ADDONS_LINE))
        listed = _scrapy(root, ["list"], meta)
        result = os.path.join(root, "websim.json")
        added, proc = _crawl(root, base, "added", meta, ["-s", f"WEBSIM_OUTPUT={result}"])
        default, default_proc = _crawl(root, base, "default", meta)
    assert plain_proc.returncode == 0, plain_proc.stderr[-4000:]
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {"root": root, "site": site, "base": base, "plain": plain, "added": added, "log": proc.stderr,
            "result": result, "list": listed, "default": default_proc}


def test_the_users_items_are_kept_in_every_format(project):
    for fmt in FORMATS:
        plain = _items(os.path.join(project["plain"], f"items.{fmt}"))
        added = _items(os.path.join(project["added"], f"items.{fmt}"))
        assert added == plain, fmt
    # the spider's pages, once each; the 404 is no item (Scrapy's HttpErrorMiddleware, as without websim)
    urls = {dict(item)["url"] for item in _items(os.path.join(project["added"], "items.jl"))}
    base = project["base"]
    assert urls == {base + p for p in project["site"].manual_paths() if p != "/manual/missing.html"}


def test_websim_records_reach_no_feed_and_no_log_line(project):
    log = project["log"]
    for leak in ("PageItem(", "PageRecord(", "not JSON serializable", "'simhash'", "'tag_paths'", "html_len"):
        assert leak not in log, leak
    with open(os.path.join(project["added"], "items.xml"), encoding="utf-8") as fh:
        assert "PageRecord" not in fh.read()
    scraped = re.findall(r"DEBUG: Scraped from <\d+ ([^>]+)>", log)  # Scrapy's line per item, at its default level
    assert len(scraped) == len(_items(os.path.join(project["added"], "items.jl")))


def test_the_websim_result_goes_where_the_setting_says_and_the_log_names_it(project):
    log, result = project["log"], project["result"]
    assert f"the result will be written to {result}" in log  # at start
    assert re.search(rf"result of \d+ URLs, \d+ clusters written to {re.escape(result)}", log)  # at the end
    with open(result, encoding="utf-8") as fh:
        data = json.load(fh)
    base = project["base"]
    rows = {row["url"][len(base):]: row for row in data["urls"]}
    assert set(rows) == set(project["site"].manual_paths())  # every page the spider visited, the 404 too
    assert rows["/manual/missing.html"]["status_code"] == 404
    for n, group in enumerate(project["site"].groups(), start=1):
        ids = {rows[p]["cluster_id"] for p in group}
        assert len(ids) == 1 and ids != {""}, (n, {p: rows[p]["cluster_id"] for p in group})
    assert len({rows[g[0]]["cluster_id"] for g in project["site"].groups()}) == len(project["site"].groups())
    assert group_of(project["site"])  # (the site's truth is the groups)


def test_without_the_setting_the_result_has_a_default_file_named_at_start(project):
    proc = project["default"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    default = os.path.join(project["root"], "websim-manual.json")
    assert f"the result will be written to {default} (set WEBSIM_OUTPUT to choose where)" in proc.stderr
    with open(default, encoding="utf-8") as fh:
        assert len(json.load(fh)["urls"]) == len(project["site"].manual_paths())


def test_the_templates_slow_settings_are_named_at_start(project):
    log = project["log"]
    assert re.search(r"your CONCURRENT_REQUESTS_PER_DOMAIN = 1 \(settings.py\) .* start at 2 and rise to 8", log)
    assert re.search(r"your DOWNLOAD_DELAY = 1 \(settings.py\) .* websim would use 0", log)
    assert re.search(r"your ROBOTSTXT_OBEY = True \(settings.py\) .* websim would use False", log)


def test_scrapy_list_shows_the_websim_spider(project):
    listed = project["list"]
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["manual", "websim"]


def test_an_output_that_cannot_be_written_stops_the_crawl_before_it_starts(project, tmp_path):
    """-s WEBSIM_OUTPUT=/proc/...: one error line at start, nothing rendered, exit status 1."""
    meta = entry_points_dir(tmp_path)
    with serve(project["site"]) as base:
        proc = _scrapy(project["root"], ["crawl", "manual", "-a", f"start={base}/manual/index.html",
                                         "-s", "WEBSIM_OUTPUT=/proc/websim.json"], meta)
    assert proc.returncode == 1
    assert "websim: error: the result file /proc/websim.json cannot be written" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "'websim/rendered'" not in proc.stderr and "'downloader/request_count'" not in proc.stderr
