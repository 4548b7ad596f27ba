"""Every output format in one place: the rows (one per input URL, one per cluster) and the
JSON / JSON Lines / CSV writers, plus reading a result file back (for ``websim report``).

The writers stream: rows come from the store one at a time (``url_rows``), so writing a result
holds no more in memory than the finalizer's assignments. The extension (a Scrapy crawl's result
files), the ``websim`` command, ``websim cluster`` and ``websim collect`` all write through
:data:`WRITERS` / :func:`write_atomically` / :func:`write_result_file`. Scrapy-free.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence

from scrapy_websim.core.types import OUTPUT_FIELDS, Assignment, Cluster, PageRecord, clean_text
from scrapy_websim.result.safefile import Written, replacing, write_with_fallback

Write = Callable[[str], object]  # a file's write: its return value is not used

#: Characters that start a formula in a spreadsheet (CSV/formula injection), ASCII and full-width.
_FORMULA_CHARS = "=+\\-@\uff1d\uff0b\uff0d\uff20"
#: Where a formula can start: at the start of a cell, and after any character a spreadsheet may split
#: a line on, whatever this file's own separator (a comma, a semicolon: the list separator of many
#: European locales, a tab, a bar, a line break), spaces and quotes before it included; and a cell
#: starting with a tab or a line break. Each such spot gets one ``'`` more (so reading back is exact).
_FORMULA_SPOT = re.compile(f"(?:^|(?<=[,;\\t|\\r\\n]))[ \"]*'*(?=[{_FORMULA_CHARS}])|^'*(?=[\\t\\r\\n])")
_ESCAPED_SPOT = re.compile(f"((?:^|(?<=[,;\\t|\\r\\n]))[ \"]*)'(?='*[{_FORMULA_CHARS}])|^'(?='*[\\t\\r\\n])")


# --- rows ---

def output_row(record: PageRecord, a: Optional[Assignment], reason: str = "") -> Dict[str, Any]:
    """The url record: ``OUTPUT_FIELDS`` in order (``reason``: its
    ``match_reason``, from ``core/match/reasons.py``)."""
    a = a or Assignment()
    sims = a.sims
    in_cluster = bool(a.cluster_id)
    row = {
        "id": record.id,
        "url": record.url,
        "normalized_url": record.normalized_url,
        "final_url": record.final_url,
        "redirect_chain": list(record.redirect_chain),
        "status_code": record.status_code,
        "content_length": record.content_length,
        "content_type": record.content_type,
        "error": record.error,
        "title": record.title,
        "cluster_id": a.cluster_id,
        "is_canonical": a.is_canonical if in_cluster else True,
        "similarity_to_canonical": (1.0 if a.is_canonical else sims.similarity) if in_cluster else 0.0,
        "content_sim": round(sims.content_sim, 6) if in_cluster else 0.0,
        "structure_sim": round(sims.structure_sim, 6) if in_cluster else 0.0,
        "visual_sim": round(sims.visual_sim, 6) if in_cluster else 0.0,
        "behavior_sim": round(sims.behavior_sim, 6) if in_cluster else 0.0,
        "cluster_kind": a.cluster_kind if in_cluster else "",
        "match_rule": a.match_rule if in_cluster else "",
        "page_type": record.page_type,
        "expanded_from": record.expanded_from,
        "tls_error": record.tls_error,
        "tls_subject": record.tls_subject,
        "tls_issuer": record.tls_issuer,
        "tls_valid_from": record.tls_valid_from,
        "tls_valid_to": record.tls_valid_to,
        "tls_sha256": record.tls_sha256,
        "tls_sans": list(record.tls_sans),
        "favicon_url": record.favicon_url,
        "favicon_hash": record.favicon_hash,
        "match_reason": reason,
        "excerpt": record.excerpt,
        "content_digest": record.content_digest,
        "render_from": record.render_from,
    }
    if in_cluster and a.is_canonical:
        row.update(content_sim=1.0, structure_sim=1.0, visual_sim=1.0, behavior_sim=1.0)
    return OrderedDict((name, row[name]) for name in OUTPUT_FIELDS)


def safe_output_row(record: PageRecord, a: Optional[Assignment], reason: str = "") -> Dict[str, Any]:
    """:func:`output_row`, or for a record it cannot make a row of, the row of its id and URL with
    ``error`` saying what failed: one record never costs the others their rows."""
    try:
        return output_row(record, a, reason)
    except Exception as exc:  # noqa: BLE001
        return unwritable_row(record.id, record.url, exc)


def unwritable_row(page_id: Any, url: Any, exc: BaseException) -> Dict[str, Any]:
    """The row written in place of one that could not be made or encoded."""
    kept = PageRecord(id=page_id if type(page_id) is int else 0, url=url if isinstance(url, str) else "",
                      error=f"the record could not be written: {type(exc).__name__}: {exc}"[:300])
    kept.clean()
    return output_row(kept, None)


def _dumps_row(row: Dict[str, Any]) -> str:
    """One row as JSON; a row that cannot be encoded is replaced by :func:`unwritable_row`."""
    try:
        text = json.dumps(row, ensure_ascii=False)
        text.encode("utf-8")
        return text
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return json.dumps(unwritable_row(row.get("id"), row.get("url"), exc), ensure_ascii=False)


def url_rows(records: Iterable[PageRecord], assignments: Mapping[int, Assignment]) -> Iterator[Dict[str, Any]]:
    """One row per record, in the records' order (the store's: id order)."""
    for record in records:
        yield safe_output_row(record, assignments.get(record.id))


def cluster_row(c: Cluster) -> Dict[str, Any]:
    return OrderedDict(cluster_id=c.cluster_id, canonical_url=c.canonical_url, member_ids=list(c.member_ids),
                       kind=c.kind, origins=c.origins)


def cluster_rows(clusters: Iterable[Cluster]) -> Iterator[Dict[str, Any]]:
    return (cluster_row(c) for c in clusters)


# --- writers: each takes write(str) and a result with url_rows(), cluster_rows() and meta ---

def write_json(write: Write, result: Any) -> None:
    """``{"urls": [...], "clusters": [...], "meta": {...}}``: one JSON object, streamed row by row."""
    write('{"urls": [')
    _write_rows(write, result.url_rows())
    write('],\n"clusters": [')
    _write_rows(write, result.cluster_rows())
    write("],\n\"meta\": " + json.dumps(result.meta, ensure_ascii=False) + "}\n")


def _write_rows(write: Write, rows: Iterable[Dict[str, Any]]) -> None:
    first = True
    for row in rows:
        write(("\n" if first else ",\n") + _dumps_row(row))
        first = False
    if not first:
        write("\n")


def write_jsonl(write: Write, result: Any) -> None:
    """One url record per line."""
    for row in result.url_rows():
        write(_dumps_row(row) + "\n")


def write_csv(write: Write, result: Any) -> None:
    """The url records, columns in output order; booleans ``true``/``false``; formulas escaped."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(OUTPUT_FIELDS)
    for n, row in enumerate(result.url_rows(), start=1):
        writer.writerow(csv_cells(row))
        if n % 1000 == 0:
            write(buf.getvalue())
            buf.seek(0)
            buf.truncate()
    write(buf.getvalue())


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


#: Output format name -> writer.
WRITERS = {"json": write_json, "jsonl": write_jsonl, "jsonlines": write_jsonl, "csv": write_csv}


def write_atomically(path: str, fmt: str, result: Any) -> None:
    """Write ``result`` to a temporary file beside ``path``, then rename it: a reader (or a run
    stopped at any moment) sees the old file or the complete new one, never half a result; a file
    replaced keeps its mode (``safefile.replacing``)."""
    with replacing(path) as fh:
        WRITERS[fmt](fh.write, result)


def write_result_file(path: str, fmt: str, result: Any, fallbacks: Sequence[str]) -> Written:
    """:func:`write_atomically`, or when ``path`` cannot be written, the same result in a fallback
    file (``safefile.write_with_fallback``): the work done is never lost to a bad output place."""
    return write_with_fallback(path, lambda fh: WRITERS[fmt](fh.write, result), fallbacks)


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
