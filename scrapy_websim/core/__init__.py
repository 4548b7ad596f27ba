"""Pure algorithms of scrapy-websim.

Nothing under ``scrapy_websim.core`` imports Scrapy or Twisted: these modules can be read,
tested, benchmarked and reused offline (``websim cluster`` on a features file).
"""
