"""Scrapy's feed exporter interface for the product's formats: ``-o result.json`` / ``.csv`` / ``.jsonl``.

During the crawl the exporters write nothing and hold nothing: every page's compact record is in
the extension's on-disk store. When the feed closes, the exporter asks for the result with the
``result_wanted`` signal (computed once, whichever feed closes first) and streams the rows out in
id order, so memory does not grow with the number of records. The rows and formats themselves are
in ``output.py``; this module only adapts Scrapy's exporter interface to those writers.
"""

from __future__ import annotations

from typing import Any

from scrapy.exporters import BaseItemExporter

from scrapy_websim import signals as websim_signals
from scrapy_websim.output import write_csv, write_json, write_jsonl

__all__ = ["WebsimJsonExporter", "WebsimJsonLinesExporter", "WebsimCsvExporter"]


def _has_content(file: Any) -> bool:
    try:
        return file.tell() > 0
    except (AttributeError, OSError, ValueError):
        return False


class _WebsimExporter(BaseItemExporter):
    def __init__(self, file: Any, crawler: Any = None, **kwargs: Any) -> None:
        self._crawler = crawler
        self.file = file
        if _has_content(file):  # Scrapy's -o appends: a second result would make the file invalid
            name = getattr(file, "name", "the output file")
            raise FileExistsError(
                f"{name} exists and is not empty: scrapy-websim never appends a second result to it "
                f"(the file would no longer be valid). Use -O to overwrite it, or another file name")
        kwargs.pop("fields_to_export", None)  # the columns are the product's, in a fixed order
        super().__init__(dont_fail=True, **kwargs)
        self.text_encoding: str = self.encoding or "utf-8"

    @classmethod
    def from_crawler(cls, crawler: Any, file: Any, **kwargs: Any) -> "_WebsimExporter":
        return cls(file, crawler=crawler, **kwargs)

    def export_item(self, item: Any) -> None:
        """Nothing to do: the record is already in the extension's store."""

    def _result(self) -> Any:
        if self._crawler is None:
            raise TypeError(f"{type(self).__name__} writes a scrapy-websim crawl's result: Scrapy's feed "
                            "exports create it with from_crawler")
        return websim_signals.ask(self._crawler, websim_signals.result_wanted)

    def _write(self, text: str) -> None:
        self.file.write(text.encode(self.text_encoding))


class WebsimJsonExporter(_WebsimExporter):
    writer = staticmethod(write_json)

    def finish_exporting(self) -> None:
        self.writer(self._write, self._result())


class WebsimJsonLinesExporter(WebsimJsonExporter):
    writer = staticmethod(write_jsonl)


class WebsimCsvExporter(WebsimJsonExporter):
    writer = staticmethod(write_csv)
