"""Scrapy commands scrapy-websim installs (entry point group ``scrapy.commands`` in setup.cfg).

``scrapy list`` lists a project's spiders without applying its add-ons' early settings (Scrapy's
``list`` builds its spider loader straight from the project settings, while ``scrapy crawl``
first lets each add-on in ``ADDONS`` add to ``SPIDER_MODULES``): with the one ``ADDONS`` line of
scrapy-websim, ``scrapy crawl websim`` works but ``scrapy list`` did not show ``websim``.
:class:`ListCommand` is Scrapy's ``list`` with that step added; for a project without add-ons it
prints exactly what Scrapy's does.
"""

from __future__ import annotations

from typing import Any, List

from scrapy.addons import AddonManager
from scrapy.commands.list import Command as ScrapyListCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.project import inside_project


class ListCommand(ScrapyListCommand):
    def run(self, args: List[str], opts: Any) -> None:
        if not inside_project():
            raise UsageError("'scrapy list' lists the spiders of a project: run it inside one")
        assert self.settings is not None
        settings = self.settings.copy()
        AddonManager.load_pre_crawler_settings(settings)  # what scrapy crawl does before it loads spiders
        print("\n".join(sorted(get_spider_loader(settings).list())))
