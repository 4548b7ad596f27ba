"""The HTML report: an offline folder that shows a result's clusters, special pages and failures.

``websim report result.json -o report/`` (or ``--report DIR`` on a crawl, ``WEBSIM_REPORT_DIR``)
writes it with :func:`.writer.write_report`; :mod:`.thumbs` makes the screenshot thumbnails a crawl
keeps. Scrapy-free.
"""
