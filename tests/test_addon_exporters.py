"""The add-on never overwrites the user's settings; the CSV cells are safe for spreadsheets."""

from scrapy.settings import Settings

from scrapy_websim.addon import PLAYWRIGHT_HANDLER, Addon
from scrapy_websim.exporters import csv_cell


def _apply(user):
    settings = Settings()
    settings.setdict(user, priority="project")
    Addon().update_settings(settings)
    return settings


def test_addon_sets_components():
    s = _apply({})
    assert s.getdict("DOWNLOAD_HANDLERS")["https"] == PLAYWRIGHT_HANDLER
    assert "scrapy_websim.pipelines.WebsimPipeline" in s.getdict("ITEM_PIPELINES")
    assert "scrapy_websim.extensions.WebsimExtension" in s.getdict("EXTENSIONS")
    assert "scrapy_websim.render.middlewares.WebsimRenderSpiderMiddleware" in s.getdict("SPIDER_MIDDLEWARES")
    assert s.getdict("FEED_EXPORTERS")["json"] == "scrapy_websim.exporters.WebsimJsonExporter"
    assert s.getbool("HTTPERROR_ALLOW_ALL") is True
    launch = s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] and "--disable-background-networking" in launch["args"]


def test_addon_keeps_what_the_user_set():
    s = _apply({
        "ITEM_PIPELINES": {"scrapy_websim.pipelines.WebsimPipeline": 42, "scrapy.pipelines.files.FilesPipeline": 1},
        "FEED_EXPORTERS": {"csv": "scrapy.exporters.CsvItemExporter"},
        "HTTPERROR_ALLOW_ALL": False,
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": "/opt/chrome", "args": ["--x"]},
        "DOWNLOAD_HANDLERS": {"ftp": "my.FtpHandler"},
    })
    assert s.getdict("ITEM_PIPELINES") == {"scrapy_websim.pipelines.WebsimPipeline": 42, "scrapy.pipelines.files.FilesPipeline": 1}
    assert s.getdict("FEED_EXPORTERS")["csv"] == "scrapy.exporters.CsvItemExporter"
    assert s.getdict("FEED_EXPORTERS")["json"] == "scrapy_websim.exporters.WebsimJsonExporter"
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
