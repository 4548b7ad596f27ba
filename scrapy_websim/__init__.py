"""scrapy-websim: tell which web pages are duplicates of each other."""

__version__ = "0.1.0"
