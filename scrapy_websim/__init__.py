"""scrapy-websim: tell which web pages are duplicates of each other.

Enable it in a Scrapy project with ``ADDONS = {"scrapy_websim.Addon": 500}``.
"""

__version__ = "0.1.0"

from scrapy_websim.core.types import OUTPUT_FIELDS, Assignment, Cluster, PageRecord, PairResult
from scrapy_websim.core.urls.predictor import DupePredictor
from scrapy_websim.crawler.addon import Addon

__all__ = ["Addon", "DupePredictor", "PageRecord", "PairResult", "Assignment", "Cluster", "OUTPUT_FIELDS",
           "__version__"]
