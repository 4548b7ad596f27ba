"""The add-on never overwrites the user's settings, and says which of them slow websim down; the
CSV cells are safe for spreadsheets."""

import io
import logging
import re
import types

from scrapy.pipelines.files import FilesPipeline
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from scrapy_websim.core.types import PageRecord
from scrapy_websim.crawler.addon import PLAYWRIGHT_HANDLER, Addon
from scrapy_websim.crawler.extension import WebsimExtension
from scrapy_websim.crawler.recorder import WebsimRecorder
from scrapy_websim.render.middlewares import WebsimRenderSpiderMiddleware
from scrapy_websim.result.output import csv_cell, read_csv_rows, write_csv
from scrapy_websim.result.rows import output_row


def _apply(user):
    settings = Settings()
    settings.setdict(user, priority="project")
    Addon().update_settings(settings)
    return settings


def _components(settings, name):
    return {load_object(k) if isinstance(k, str) else k: v for k, v in settings.getdict(name).items()}


def test_addon_sets_components():
    s = _apply({})
    assert s.getdict("DOWNLOAD_HANDLERS")["https"] == PLAYWRIGHT_HANDLER
    assert _components(s, "ITEM_PIPELINES") == {}  # no item of websim's goes through the user's pipelines
    assert _components(s, "EXTENSIONS")[WebsimExtension] == 500
    assert _components(s, "EXTENSIONS")[WebsimRecorder] == 500
    assert _components(s, "SPIDER_MIDDLEWARES")[WebsimRenderSpiderMiddleware] == 650
    assert s.getdict("FEED_EXPORTERS") == {}  # the user's feeds get Scrapy's own exporters
    assert s.getbool("HTTPERROR_ALLOW_ALL") is True
    launch = s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] and "--disable-background-networking" in launch["args"]


def test_addon_keeps_what_the_user_set():
    s = _apply({
        "EXTENSIONS": {"scrapy_websim.crawler.recorder.WebsimRecorder": 42},
        "ITEM_PIPELINES": {"scrapy.pipelines.files.FilesPipeline": 1},
        "FEED_EXPORTERS": {"csv": "my.CsvExporter"},
        "HTTPERROR_ALLOW_ALL": False,
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": "/opt/chrome", "args": ["--x"]},
        "DOWNLOAD_HANDLERS": {"ftp": "my.FtpHandler"},
    })
    assert _components(s, "EXTENSIONS")[WebsimRecorder] == 42
    assert _components(s, "ITEM_PIPELINES") == {FilesPipeline: 1}
    assert s.getdict("FEED_EXPORTERS") == {"csv": "my.CsvExporter"}
    assert s.getbool("HTTPERROR_ALLOW_ALL") is False
    assert s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["executable_path"] == "/opt/chrome"
    assert s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["args"] == ["--x"]
    handlers = s.getdict("DOWNLOAD_HANDLERS")
    assert handlers["ftp"] == "my.FtpHandler" and handlers["http"] == PLAYWRIGHT_HANDLER


def test_csv_cells():
    assert csv_cell(True) == "true" and csv_cell(False) == "false"
    assert csv_cell("=HYPERLINK(\"x\")") == "'=HYPERLINK(\"x\")"
    assert csv_cell("+1+2") == "'+1+2" and csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert csv_cell("-5") == "-5"  # a plain negative number stays a number
    assert csv_cell(["a", "b"]) == '["a","b"]'
    assert csv_cell(None) == "" and csv_cell(0.5) == "0.5"


#: Titles whose formulas start after a separator, not at the start of the cell.
HIDDEN_FORMULAS = ("x;=1+1;@SUM(1)", "a,=cmd|' /C calc'!A0", "t\t+1", "q|-2+3", 'k; "=1"', "l\n@x", "m;'=1",
                   "n,\uff1d1", "'\t=x", "-5", "'-5")


def test_csv_escapes_a_formula_after_any_separator():
    """A spreadsheet that splits the file's lines on ';' (many European locales), ',', a tab or '|'
    finds no cell that starts a formula; reading the file back gives every title as it was."""
    records = [PageRecord(id=n, url=f"http://h/{n}", title=title) for n, title in enumerate(HIDDEN_FORMULAS, 1)]
    result = types.SimpleNamespace(url_rows=lambda: (output_row(r, None) for r in records))
    out = io.StringIO()
    write_csv(out.write, result)
    for line in out.getvalue().splitlines()[1:]:
        for piece in re.split(r"[;,\t|]", line):
            text = piece.lstrip(' "')
            assert not (text[:1] in ("=", "+", "@", "\uff1d") or re.match(r"-[^\d]", text)), (line, piece)
    back = list(read_csv_rows(io.StringIO(out.getvalue(), newline="")))
    assert [row["title"] for row in back] == list(HIDDEN_FORMULAS)


def test_addon_finds_the_websim_spider_and_disables_local_schemes():
    from scrapy.settings import Settings

    s = Settings({"SPIDER_MODULES": ["myproject.spiders"]})
    Addon().update_settings(s)
    assert s.getlist("SPIDER_MODULES") == ["myproject.spiders", "scrapy_websim.spiders.urllist"]
    handlers = s.getdict("DOWNLOAD_HANDLERS")
    assert handlers["file"] is None and handlers["ftp"] is None
    assert s.getint("URLLENGTH_LIMIT") == 2 * 1024 * 1024


def test_addon_names_the_settings_that_slow_it_down(caplog):
    """A fresh `scrapy startproject` sets one page per host, a delay of 1 s and robots.txt: each is
    named at start with the value websim would use; a value given on the command line is not."""
    settings = Settings()
    settings.setdict({"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_DELAY": 1, "ROBOTSTXT_OBEY": True},
                     priority="project")
    settings.set("AUTOTHROTTLE_ENABLED", True, priority="cmdline")
    with caplog.at_level(logging.WARNING, logger="scrapy_websim.crawler.addon"):
        Addon().update_settings(settings)
    lines = [r.getMessage() for r in caplog.records if r.name == "scrapy_websim.crawler.addon"]
    assert any("CONCURRENT_REQUESTS_PER_DOMAIN = 1 (settings.py)" in line and "start at 2 and rise to 8" in line
               for line in lines), lines
    assert any("DOWNLOAD_DELAY = 1 (settings.py)" in line and "would use 0" in line for line in lines), lines
    assert any("ROBOTSTXT_OBEY = True (settings.py)" in line and "would use False" in line for line in lines), lines
    assert not any("AUTOTHROTTLE" in line for line in lines), lines
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1  # told, never overwritten
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_websim.crawler.addon"):
        Addon().update_settings(Settings())
    assert not [r for r in caplog.records if r.name == "scrapy_websim.crawler.addon"]
