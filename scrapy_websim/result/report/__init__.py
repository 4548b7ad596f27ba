"""The HTML report: an offline folder that shows a result's clusters, special pages and failures.

``websim report result.json -o report/`` (or ``--report DIR`` on a crawl, ``WEBSIM_REPORT_DIR``)
writes it with :func:`write_report`; ``thumbs.py`` makes the screenshot thumbnails a crawl keeps.
Scrapy-free.
"""

from .thumbs import make_thumbnail, save_thumbnail, thumbnail_stem
from .writer import ReportError, ReportInfo, load_result, report_from_file, write_report

__all__ = ["ReportError", "ReportInfo", "load_result", "make_thumbnail", "report_from_file", "save_thumbnail",
           "thumbnail_stem", "write_report"]
