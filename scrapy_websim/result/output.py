"""Every output format in one place: the JSON / JSON Lines / CSV writers of a result's rows, plus
reading a result file back (for ``websim report``).

The last stage of the end of a crawl (docs/architecture.md): a writer takes the rows
(:class:`~scrapy_websim.result.rows.ResultRows`: ``url_rows()``, ``cluster_rows()``, ``meta``) and
streams them into a file, one row at a time, so writing a result holds no more in memory than the
assignments. The extension (a Scrapy crawl's result files), the ``websim`` command, ``websim
cluster`` and ``websim collect`` all write through :data:`WRITERS` / :func:`write_atomically` /
:func:`write_result_file`. Scrapy-free.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Sequence, Tuple

from scrapy_websim.core.store import FEATURES_HEADER, record_json
from scrapy_websim.core.types import OUTPUT_FIELDS, PageRecord, clean_text
from scrapy_websim.result.rows import unwritable_row
from scrapy_websim.result.safefile import Written, describe, replacing, write_fallback, write_with_fallback

Write = Callable[[str], object]  # a file's write: its return value is not used

#: Characters that start a formula in a spreadsheet (CSV/formula injection), ASCII and full-width.
_FORMULA_CHARS = "=+\\-@\uff1d\uff0b\uff0d\uff20"
#: Where a formula can start: at the start of a cell, and after any character a spreadsheet may split
#: a line on, whatever this file's own separator (a comma, a semicolon: the list separator of many
#: European locales, a tab, a bar, a line break), spaces and quotes before it included; and a cell
#: starting with a tab or a line break. Each such spot gets one ``'`` more (so reading back is exact).
_FORMULA_SPOT = re.compile(f"(?:^|(?<=[,;\\t|\\r\\n]))[ \"]*'*(?=[{_FORMULA_CHARS}])|^'*(?=[\\t\\r\\n])")
_ESCAPED_SPOT = re.compile(f"((?:^|(?<=[,;\\t|\\r\\n]))[ \"]*)'(?='*[{_FORMULA_CHARS}])|^'(?='*[\\t\\r\\n])")


def _dumps_row(row: Dict[str, Any]) -> str:
    """One row as JSON; a row that cannot be encoded is replaced by :func:`unwritable_row`."""
    try:
        text = json.dumps(row, ensure_ascii=False)
        text.encode("utf-8")
        return text
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return json.dumps(unwritable_row(row.get("id"), row.get("url"), exc), ensure_ascii=False)


# --- writers: each takes write(str) and is given the url rows one at a time, then the rows ---

class JsonWriter:
    """``{"urls": [...], "clusters": [...], "meta": {...}}``: one JSON object, streamed row by row."""

    def __init__(self, write: Write) -> None:
        self.write, self.first = write, True
        write('{"urls": [')

    def add(self, row: Dict[str, Any]) -> None:
        self.write(("\n" if self.first else ",\n") + _dumps_row(row))
        self.first = False

    def end(self, rows: Any) -> None:
        """The cluster rows and the meta of ``rows`` after the url rows."""
        self.write('\n],\n"clusters": [' if not self.first else '],\n"clusters": [')
        _write_rows(self.write, rows.cluster_rows())
        self.write("],\n\"meta\": " + json.dumps(rows.meta, ensure_ascii=False) + "}\n")


def _write_rows(write: Write, rows: Iterable[Dict[str, Any]]) -> None:
    first = True
    for row in rows:
        write(("\n" if first else ",\n") + _dumps_row(row))
        first = False
    if not first:
        write("\n")


class JsonLinesWriter:
    """One url record per line."""

    def __init__(self, write: Write) -> None:
        self.write = write

    def add(self, row: Dict[str, Any]) -> None:
        self.write(_dumps_row(row) + "\n")

    def end(self, rows: Any) -> None:
        pass


class CsvWriter:
    """The url records, columns in output order; booleans ``true``/``false``; formulas escaped."""

    def __init__(self, write: Write) -> None:
        self.write, self.rows = write, 0
        self.buf = io.StringIO()
        self.writer = csv.writer(self.buf, lineterminator="\r\n")
        self.writer.writerow(OUTPUT_FIELDS)

    def add(self, row: Dict[str, Any]) -> None:
        self.writer.writerow(csv_cells(row))
        self.rows += 1
        if self.rows % 1000 == 0:
            self.write(self.buf.getvalue())
            self.buf.seek(0)
            self.buf.truncate()

    def end(self, rows: Any) -> None:
        self.write(self.buf.getvalue())


def write_json(write: Write, rows: Any) -> None:
    """All of ``rows`` (``url_rows()``, ``cluster_rows()``, ``meta``) as :class:`JsonWriter` writes them."""
    _write_all(JsonWriter(write), rows)


def write_jsonl(write: Write, rows: Any) -> None:
    """All of ``rows`` as :class:`JsonLinesWriter` writes them."""
    _write_all(JsonLinesWriter(write), rows)


def write_csv(write: Write, rows: Any) -> None:
    """All of ``rows`` as :class:`CsvWriter` writes them."""
    _write_all(CsvWriter(write), rows)


def _write_all(writer: Any, rows: Any) -> None:
    for row in rows.url_rows():
        writer.add(row)
    writer.end(rows)


#: Added to the ``error`` cell of a CSV row whose URL holds a character CSV cannot carry.
CSV_URL_NOTE = ("the URL holds control characters, written here as U+FFFD (the JSON and JSON Lines outputs "
                "have it as given)")


def csv_cells(row: Mapping[str, Any]) -> List[str]:
    """The cells of one url row in ``OUTPUT_FIELDS`` order. The ``url`` is the input line as given,
    which may hold a control character (NUL...) no CSV reader takes: it is written as U+FFFD and
    the row's ``error`` says so."""
    url = row.get("url")
    if isinstance(url, str) and clean_text(url) is not url:
        error = row.get("error") or ""
        row = {**row, "error": f"{error}; {CSV_URL_NOTE}" if error else CSV_URL_NOTE}
    return [csv_cell(row.get(name, "")) for name in OUTPUT_FIELDS]


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
    return clean_text(escape_formulas(text))


def escape_formulas(text: str) -> str:
    """``text`` with a ``'`` at every spot a spreadsheet could start a formula (:data:`_FORMULA_SPOT`):
    ``=1+1`` -> ``'=1+1``, ``x;=1+1;@SUM(1)`` -> ``x;'=1+1;'@SUM(1)``; a cell that is a number
    (``-5``) is left as it is. :func:`unescape_formulas` undoes it."""
    if _is_number(text):
        return text
    return _FORMULA_SPOT.sub(lambda m: m.group(0) + "'", text)


def unescape_formulas(text: str) -> str:
    """The cell text :func:`escape_formulas` was given."""
    return _ESCAPED_SPOT.sub(lambda m: m.group(1) or "", text)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


class FeaturesWriter:
    """The features file (``websim cluster`` reads it): its header, one record per line (given
    with :meth:`add_record`), then the soft-404 probes."""

    def __init__(self, write: Write) -> None:
        self.write = write
        write(json.dumps(FEATURES_HEADER) + "\n")

    def add_record(self, record: PageRecord) -> None:
        self.write(record_json(record) + "\n")

    def end(self, rows: Any) -> None:
        for probe in rows.probes():
            self.write(record_json(probe) + "\n")


def write_features(write: Write, rows: Any) -> None:
    """All of ``rows`` (``records()``, ``probes()``) as :class:`FeaturesWriter` writes them."""
    writer = FeaturesWriter(write)
    for record in rows.records():
        writer.add_record(record)
    writer.end(rows)


#: Output format name -> writer of a whole file.
WRITERS = {"json": write_json, "jsonl": write_jsonl, "jsonlines": write_jsonl, "csv": write_csv}
#: Output format name -> writer given one row at a time (:func:`write_files`); "features": the features file.
ROW_WRITERS = {"json": JsonWriter, "jsonl": JsonLinesWriter, "jsonlines": JsonLinesWriter, "csv": CsvWriter,
               "features": FeaturesWriter}
_WHOLE = {**WRITERS, "features": write_features}


def write_atomically(path: str, fmt: str, rows: Any) -> None:
    """Write ``rows`` to a temporary file beside ``path``, then rename it: a reader (or a run
    stopped at any moment) sees the old file or the complete new one, never half a result; a file
    replaced keeps its mode (``safefile.replacing``)."""
    with replacing(path) as fh:
        _WHOLE[fmt](fh.write, rows)


def write_result_file(path: str, fmt: str, rows: Any, fallbacks: Sequence[str]) -> Written:
    """:func:`write_atomically`, or when ``path`` cannot be written, the same rows in a fallback
    file (``safefile.write_with_fallback``): the work done is never lost to a bad output place."""
    return write_with_fallback(path, lambda fh: _WHOLE[fmt](fh.write, rows), fallbacks)


class _Open(NamedTuple):
    """A file of :func:`write_files` being written: its place in the list, its context, its writer."""

    place: int
    context: Any
    writer: Any


def write_files(rows: Any, files: Sequence[Tuple[str, str]], fallbacks: Sequence[str],
                also: Sequence[Any] = ()) -> List[Written]:
    """Every file of ``files`` (``[(path, format)]``, a format of :data:`ROW_WRITERS`) and every
    writer of ``also`` (``add(row)``: the report's) from one pass over ``rows.pairs()``: the store
    is read once, however many files a run writes. Each file as :func:`write_result_file` writes
    it: beside its place and renamed once complete; a file whose place fails is dropped from the
    pass and written again to a fallback file afterwards (that file only reads the rows again).
    Returns what each file became, in the order of ``files``."""
    written: List[Written] = [Written("", "")] * len(files)
    errors: Dict[int, str] = {}
    opened: List[_Open] = []

    def fail(entry: _Open, exc: BaseException) -> None:
        opened.remove(entry)
        entry.context.__exit__(type(exc), exc, exc.__traceback__)  # removes the temporary file
        errors[entry.place] = describe(exc)

    try:
        for index, (path, fmt) in enumerate(files):
            context = replacing(path)
            try:
                opened.append(_Open(index, context, ROW_WRITERS[fmt](context.__enter__().write)))
            except OSError as exc:
                errors[index] = describe(exc)
        for record, row in rows.pairs():
            for entry in list(opened):
                try:
                    if isinstance(entry.writer, FeaturesWriter):
                        entry.writer.add_record(record)
                    else:
                        entry.writer.add(row)
                except OSError as exc:
                    fail(entry, exc)
            for writer in also:
                writer.add(row)
        for entry in list(opened):
            try:
                entry.writer.end(rows)
            except OSError as exc:
                fail(entry, exc)
                continue
            opened.remove(entry)
            try:
                entry.context.__exit__(None, None, None)  # on the disk, then renamed into place
                written[entry.place] = Written(files[entry.place][0], "")
            except OSError as exc:
                errors[entry.place] = describe(exc)
    except BaseException as exc:  # a bug or an interrupt: no file is left half-written
        for entry in opened:
            entry.context.__exit__(type(exc), exc, exc.__traceback__)
        raise
    for place, error in sorted(errors.items()):
        path, fmt = files[place]
        written[place] = write_fallback(path, _whole_file(fmt, rows), fallbacks, error)
    return written


def _whole_file(fmt: str, rows: Any) -> Callable[[Any], None]:
    """``write(fh)`` of a whole file of format ``fmt`` (a pass over the rows of its own)."""
    def write(fh: Any) -> None:
        _WHOLE[fmt](fh.write, rows)
    return write


# --- reading a result file back ---

def read_csv_rows(fh: Iterable[str]) -> Iterator[Dict[str, Any]]:
    """The url rows of a CSV result, the formula escape of :func:`csv_cell` undone and
    ``is_canonical`` a bool again (other cells stay strings). Raises ValueError if a row has no
    ``url`` column."""
    for row in csv.DictReader(fh):
        if "url" not in row:
            raise ValueError("has no 'url' column: not a scrapy-websim result")
        for key, value in list(row.items()):
            if isinstance(value, str) and "'" in value:
                row[key] = unescape_formulas(value)
        row["is_canonical"] = row.get("is_canonical") == "true"
        yield row


def read_jsonl_rows(fh: Iterable[str]) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in fh if line.strip()]
