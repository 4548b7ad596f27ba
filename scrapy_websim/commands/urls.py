"""``websim urls --dedupe FILE [--keep N] [--threshold S] [-o OUT]``: a URL list reduced to a few URLs
per URL pattern, without fetching anything. The command and its algorithm live together in
:mod:`scrapy_websim.core.urls.simhash` (Scrapy-free, usable alone)."""

from __future__ import annotations

from typing import List

from scrapy_websim.core.urls import simhash


def main(argv: List[str]) -> int:
    return simhash.main(argv)
