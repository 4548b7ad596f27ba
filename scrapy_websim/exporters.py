"""Feed exporters for the product's formats: ``-o result.json`` / ``.csv`` / ``.jsonl``.

During the crawl the exporters write nothing and hold nothing: every page's compact record is in
the extension's on-disk store. When the feed closes, the exporter asks the extension for the
final clustering (computed once, whichever feed closes first) and streams the rows out in id
order, so memory does not grow with the number of records.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Callable, Dict, Iterable

from scrapy.exporters import BaseItemExporter

from scrapy_websim.core.types import OUTPUT_FIELDS

#: Cells starting with these would run as a formula in a spreadsheet (CSV/formula injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, float):
        text = repr(round(value, 6))
    else:
        text = str(value)
    if text.startswith(_FORMULA_START) and not _is_number(text):
        text = "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


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
        kwargs.pop("fields_to_export", None)  # the product's columns are fixed (SPEC section 8)
        super().__init__(dont_fail=True, **kwargs)
        if not self.encoding:
            self.encoding = "utf-8"

    @classmethod
    def from_crawler(cls, crawler: Any, file: Any, *args: Any, **kwargs: Any) -> "_WebsimExporter":
        return cls(file, *args, crawler=crawler, **kwargs)

    def export_item(self, item: Any) -> None:
        """Nothing to do: the record is already in the extension's store."""

    def _result(self):
        from scrapy_websim.extensions import get_extension  # noqa: PLC0415

        return get_extension(self._crawler).finalize()

    def _write(self, text: str) -> None:
        self.file.write(text.encode(self.encoding))


def write_json(write: Callable[[str], None], result: Any) -> None:
    """``{"urls": [...], "clusters": [...], "meta": {...}}``: one JSON object, streamed row by row."""
    write('{"urls": [')
    _write_rows(write, result.url_rows())
    write('],\n"clusters": [')
    _write_rows(write, result.cluster_rows())
    write("],\n\"meta\": " + json.dumps(result.meta, ensure_ascii=False) + "}\n")


def _write_rows(write: Callable[[str], None], rows: Iterable[Dict[str, Any]]) -> None:
    first = True
    for row in rows:
        write(("\n" if first else ",\n") + json.dumps(row, ensure_ascii=False))
        first = False
    if not first:
        write("\n")


def write_jsonl(write: Callable[[str], None], result: Any) -> None:
    """One url record per line."""
    for row in result.url_rows():
        write(json.dumps(row, ensure_ascii=False) + "\n")


def write_csv(write: Callable[[str], None], result: Any) -> None:
    """The url records, SPEC columns in order; booleans ``true``/``false``; formulas escaped."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(OUTPUT_FIELDS)
    for n, row in enumerate(result.url_rows(), start=1):
        writer.writerow([csv_cell(row.get(name, "")) for name in OUTPUT_FIELDS])
        if n % 1000 == 0:
            write(buf.getvalue())
            buf.seek(0)
            buf.truncate()
    write(buf.getvalue())


#: Output format name -> writer; also used by ``websim cluster`` (offline, no crawl).
WRITERS = {"json": write_json, "jsonl": write_jsonl, "jsonlines": write_jsonl, "csv": write_csv}


class WebsimJsonExporter(_WebsimExporter):
    writer = staticmethod(write_json)

    def finish_exporting(self) -> None:
        self.writer(self._write, self._result())


class WebsimJsonLinesExporter(WebsimJsonExporter):
    writer = staticmethod(write_jsonl)


class WebsimCsvExporter(WebsimJsonExporter):
    writer = staticmethod(write_csv)
