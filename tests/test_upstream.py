"""The private parts of scrapy-playwright and Scrapy websim relies on are the ones listed in
``scrapy_websim/render/upstream.py``, unchanged since websim was written against them."""

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from scrapy_websim.render.handler import WebsimPlaywrightHandler
from scrapy_websim.render.upstream import PRIVATE, changed


def test_no_private_upstream_part_changed():
    moved = changed()
    assert not moved, "upstream changed what websim relies on; check each assumption, then update the hash:\n" + \
        "\n".join(f"- {p.where} ({p.use}): websim assumes it {p.assumes}" for p in moved)


def test_the_handler_overrides_only_the_listed_private_methods():
    own = {name for name, value in vars(WebsimPlaywrightHandler).items() if callable(value)}
    private = {name for name in own if name.startswith("_") and not name.startswith("__")
               and hasattr(ScrapyPlaywrightDownloadHandler, name)}
    listed = {p.where.rsplit(".", 1)[1] for p in PRIVATE
              if p.use == "overridden" and p.where.startswith("scrapy_playwright.")}
    assert private == listed and len(private) <= 2, private
