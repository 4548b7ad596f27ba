"""Signals scrapy-websim sends (connect with ``crawler.signals.connect``)."""

#: Sent by the pipeline once a rendered page's features are computed, before its HTML is dropped.
#: Arguments: ``record`` (:class:`~scrapy_websim.core.types.PageRecord`), ``main_text`` (str),
#: ``spider``. The URL-level duplicate predictor learns from it.
page_featured = object()
