"""A Scrapy project that uses scrapy-websim: one line in ADDONS enables everything.

Run the bundled URL-list spider:   scrapy crawl websim -a urls=urls.txt -o result.json
Follow same-host links as well:    scrapy crawl websim -a urls=http://127.0.0.1:8701/ -a follow=1 -o result.json
A spider with its own rule overrides: scrapy crawl strict_login -a urls=urls.txt -o result.json
A worker of a distributed job (after 'websim push ... --job NAME'):
    scrapy crawl websim-worker -s WEBSIM_REDIS_URL=redis://HOST:6379/0 -s WEBSIM_REDIS_JOB=NAME
"""

BOT_NAME = "example_project"
SPIDER_MODULES = ["example_project.spiders", "scrapy_websim.spiders.urllist", "scrapy_websim.distributed.spider"]
NEWSPIDER_MODULE = "example_project.spiders"

ADDONS = {"scrapy_websim.Addon": 500}

# Two pages rendered at a time per core is where Chromium is fastest on small machines.
CONCURRENT_REQUESTS = 8

# A few of scrapy-websim's settings (docs/settings.md lists them all, with types and defaults).
WEBSIM_STABLE_TIMEOUT = 10
WEBSIM_PARAMS = {"crawl.progress_interval": 10}
