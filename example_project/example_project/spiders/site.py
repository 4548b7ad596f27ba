"""An ordinary spider of a user's project: with the add-on on, each page it visits is rendered,
recorded and clustered too; its own items are left as they are (its -o holds them, the websim
result goes to WEBSIM_OUTPUT)."""

import scrapy


class SiteSpider(scrapy.Spider):
    """``scrapy crawl site -a start=http://127.0.0.1:8701/ -o items.jsonl -s WEBSIM_OUTPUT=result.json``
    (``start``: comma-separated)."""

    name = "site"

    def __init__(self, start: str = "", max_depth: int = 1, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [u.strip() for u in start.split(",") if u.strip()]
        self.max_depth = int(max_depth)

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        if response.meta.get("depth", 0) < self.max_depth:
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)
