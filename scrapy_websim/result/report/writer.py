"""Write the report folder: a static page, its script and style, the data as JS files, thumbnails.

Layout of ``out_dir``::

    index.html          the page (a strict Content-Security-Policy, no inline script or style)
    report.js, report.css
    data/meta.js        summary, counts, string tables, the first clusters, the list of data files
    data/rows-000.js    the first page rows (what the first view shows)
    data/clusters.js    the whole cluster table and the host names  } loaded one after the other
    data/rows-NNN.js    the other page rows, in chunks                } after the first view
    thumbs/             one small screenshot per page that has one (see ``thumbs.py``)

The data are JavaScript files, not JSON fetched at run time, because a page opened from disk
(``file://``) may not ``fetch`` its neighbours. Each file is one call
``(window.WEBSIM_Q = window.WEBSIM_Q || []).push(payload)`` with the payload as JSON in which
every ``<`` is written ``\\u003c`` (so ``</script>`` or ``<!--`` inside a page title can never end
or change the script), and U+2028/U+2029 escaped too.

Row order: the first ``HEAD`` rows of every cluster (canonical first), clusters by size, then the
other members of every cluster, then the pages in no cluster. The first view (summary and the
first clusters) therefore needs only ``meta.js`` and the first chunk, a few hundred kilobytes
whatever the number of URLs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from scrapy_websim.core.types import OUTPUT_FIELDS
from scrapy_websim.result.output import read_csv_rows, read_jsonl_rows
from scrapy_websim.result.safefile import Staged, write_bytes

from .thumbs import list_thumbnails, thumbnail_stem

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
STATIC_FILES = ("index.html", "report.js", "report.css")

#: Members of each cluster placed up front (what a cluster card shows before it is opened).
HEAD = 6
#: Rows per data file after the first; the first is smaller so that the first view comes fast.
CHUNK_ROWS = 8000
FIRST_CHUNK_ROWS = 1000
#: Clusters listed in meta.js, before the whole table arrives (the first pages of the list).
FIRST_CLUSTERS = 200
#: Crawled strings are cut to these lengths in the report (a hostile title can be megabytes).
MAX_URL, MAX_TITLE, MAX_ERROR, MAX_EXTRA = 2048, 300, 500, 300
#: Origins listed per cluster in the cluster table (the count is always exact).
MAX_ORIGINS = 12
#: Hosts in the summary chart.
TOP_HOSTS = 15

#: Columns the report shows in their own places; every other field (``expanded_from``, the
#: ``tls_*`` facts, fields of newer versions) is shown under the title when it is not empty.
_KNOWN = set(OUTPUT_FIELDS[: OUTPUT_FIELDS.index("page_type") + 1]) | {"match_reason", "excerpt", "content_digest"}
#: Why a page is in its cluster (``match_reason``), cut to this length in the report.
MAX_REASON = 400
#: Entries per list of a diff (``websim diff --report``) that the Changes view gets.
MAX_CHANGES = 5000
_ORIGIN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")

KIND_NAMES = {
    "content": "same content",
    "E1": "5xx server error",
    "E3": "error page / soft 404",
    "L1": "login wall",
    "W1": "WAF / challenge",
    "M1": "maintenance",
    "T1": "thin page",
    "R1": "same final URL",
    "U1": "same normalised URL",
}


class ReportError(ValueError):
    """The result file cannot be read, or the output folder cannot be written."""


@dataclass
class ReportInfo:
    path: str  # index.html
    urls: int
    clusters: int
    thumbnails: int
    seconds: float
    bytes: int  # the page and its data, thumbnails not included


def js_payload(payload: Any) -> str:
    """``payload`` as one data-file statement; no ``<`` survives, so no ``</script>`` either."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return "(window.WEBSIM_Q=window.WEBSIM_Q||[]).push(" + text + ");\n"


def _cut(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _int(value: Any) -> int:
    if value.__class__ is int:
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _sim(value: Any) -> float:
    if value.__class__ is float:
        return round(value, 3) if value == value else 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return round(number, 3) if number == number else 0.0


@functools.lru_cache(maxsize=65536)
def _split_prefix(prefix: str) -> Tuple[str, str]:
    return _split(prefix)


def split_url(url: str) -> Tuple[str, str]:
    """``(host, origin)`` of a URL; empty strings for what is not an http(s) URL."""
    match = _ORIGIN.match(url)
    return _split_prefix(match.group(0)) if match else _split(url)


def _split(url: str) -> Tuple[str, str]:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "", ""
    if parts.scheme not in ("http", "https") or not host:
        return host, ""
    netloc = f"[{host}]" if ":" in host else host
    default = 80 if parts.scheme == "http" else 443
    return host, f"{parts.scheme}://{netloc}" + (f":{port}" if port and port != default else "")


def _extras(row: Dict[str, Any]) -> Any:
    """Fields beyond the standard columns (other versions add e.g. ``tls_error``), as text."""
    extra = {}
    for key in row.keys() - _KNOWN:
        value = row[key]
        if value in (None, "", [], {}, False, 0):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        extra[_cut(key, 60)] = _cut(text, MAX_EXTRA)
    ctype = _text(row.get("content_type"))
    if ctype and "html" not in ctype:
        extra["content_type"] = _cut(ctype, 120)
    return extra or 0


class _Table:
    """Strings to small integers, in first-seen order."""

    def __init__(self) -> None:
        self.index: Dict[str, int] = {}
        self.names: List[str] = []

    def __call__(self, name: str) -> int:
        found = self.index.get(name)
        if found is None:
            found = self.index[name] = len(self.names)
            self.names.append(name)
        return found


class _Builder:
    """Compact rows from result rows (dicts), in one pass; per-row side facts in parallel lists."""

    def __init__(self, thumbs: Dict[str, str]) -> None:
        self.thumbs = thumbs
        self.used_thumbs: List[str] = []
        self.took_render = 0  #: rows whose page took another page's render (render_from)
        self.rules = _Table()
        self.hosts = _Table()
        self.rows: List[list] = []
        self.by_id: Dict[int, int] = {}
        self.origin_of: List[str] = []
        self.canonical: List[bool] = []
        self.cluster_of_row: List[str] = []
        self.kind_of_row: List[str] = []
        # pivots: favicon hash / certificate SHA-256 -> [pages, {host index}, certificate subject]
        self.favicons: Dict[str, list] = {}
        self.certs: Dict[str, list] = {}

    def add(self, row: Dict[str, Any]) -> None:
        get = row.get
        url = _text(get("url"))
        final = _text(get("final_url"))
        host, origin = _host_of(url, final, _text(get("normalized_url")))
        thumb = self.thumbs.get(thumbnail_stem(url), "") if self.thumbs else ""
        if thumb:
            self.used_thumbs.append(thumb)
        index = len(self.rows)
        page_id = _int(get("id")) or index + 1
        if page_id not in self.by_id:
            self.by_id[page_id] = index
        canonical = get("is_canonical")
        if get("render_from"):
            self.took_render += 1
        self.rows.append([
            page_id, _short(url, MAX_URL), _short(_text(get("title")), MAX_TITLE), _int(get("status_code")), -1,
            self.rules(_text(get("match_rule"))),
            _sim(get("content_sim")), _sim(get("structure_sim")), _sim(get("visual_sim")), _sim(get("behavior_sim")),
            _short(_text(get("error")), MAX_ERROR), self.hosts(host), thumb,
            "" if final == url else _cut(final, MAX_URL), _extras(row), _cut(_text(get("match_reason")), MAX_REASON),
        ])
        self.origin_of.append(origin)
        self.canonical.append(canonical is True or canonical == "true")
        self.cluster_of_row.append(_text(get("cluster_id")))
        self.kind_of_row.append(_text(get("cluster_kind")))
        self._add_pivots(row, self.rows[-1][11])

    def _add_pivots(self, row: Dict[str, Any], host: int) -> None:
        """The page's favicon hash and certificate, for the pivots across hosts."""
        favicon, cert = row.get("favicon_hash"), _text(row.get("tls_sha256"))
        if favicon not in (None, ""):
            _pivot(self.favicons, _cut(_text(favicon), 20), host, "")
        if cert:
            _pivot(self.certs, _cut(cert, 64), host, _cut(_text(row.get("tls_subject")), 120))


def _host_of(url: str, final: str, normalized: str) -> Tuple[str, str]:
    """``(host, origin)`` of a row: of its final URL, else of its normalised or listed URL."""
    host, origin = split_url(final or normalized or url)
    if not host:
        host, origin = split_url(normalized or url)
    return host, origin


def _short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` (a text within it as it is)."""
    return text if len(text) <= limit else _cut(text, limit)


def _pivot(table: Dict[str, list], key: str, host: int, label: str) -> None:
    entry = table.get(key)
    if entry is None:
        entry = table[key] = [0, set(), label]
    entry[0] += 1
    entry[1].add(host)


def _top_pivots(table: Dict[str, list]) -> List[list]:
    """``[value, pages, hosts, label]`` of the values shared by most hosts (then pages), two hosts
    at least: a favicon or certificate on many hosts groups hosts that look different."""
    ranked = sorted(((k, e) for k, e in table.items() if len(e[1]) >= 2),
                    key=lambda kv: (-len(kv[1][1]), -kv[1][0], kv[0]))
    return [[key, entry[0], len(entry[1]), entry[2]] for key, entry in ranked[:TOP_HOSTS]]


def _text(value: Any) -> str:
    return value if value.__class__ is str else ("" if value is None else str(value))


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status <= 599 else "none"


def _clusters_from_rows(b: _Builder) -> List[Dict[str, Any]]:
    """Cluster records rebuilt from the rows' ``cluster_id`` (a .jsonl or .csv result has none)."""
    found: Dict[str, Dict[str, Any]] = {}
    for index, cid in enumerate(b.cluster_of_row):
        if not cid:
            continue
        c = found.setdefault(cid, {"cluster_id": cid, "kind": b.kind_of_row[index], "member_ids": []})
        c["member_ids"].append(b.rows[index][0])
        if b.canonical[index]:
            c.setdefault("canonical_id", b.rows[index][0])
    return list(found.values())


def _member_rows(b: _Builder, c: Dict[str, Any]) -> List[int]:
    """Row indexes of a cluster's members, canonical first, then in id order."""
    members = []
    for mid in c.get("member_ids") or ():
        index = b.by_id.get(_int(mid))
        if index is not None:
            members.append(index)
    members = sorted(set(members), key=lambda i: b.rows[i][0])
    canonical = _canonical_row(b, c, members)
    if canonical is not None:
        members.remove(canonical)
        members.insert(0, canonical)
    return members


def _canonical_row(b: _Builder, c: Dict[str, Any], members: List[int]) -> Optional[int]:
    """The row of a cluster's canonical: by the cluster's ``canonical_id``, else the member row
    that says it is canonical, else by the cluster's ``canonical_url``."""
    canonical = None
    if c.get("canonical_id") is not None:
        canonical = b.by_id.get(_int(c.get("canonical_id")))
    if canonical not in members:
        canonical = next((i for i in members if b.canonical[i]), None)
    if canonical is None and c.get("canonical_url"):
        canonical = next((i for i in members if b.rows[i][1] == c["canonical_url"]), None)
    return canonical


def _origins(b: _Builder, c: Dict[str, Any], members: Sequence[int]) -> Tuple[List[str], int]:
    derived = sorted({b.origin_of[i] for i in members if b.origin_of[i]})
    given = c.get("origins")
    if isinstance(given, (list, tuple)) and given:
        listed = [_cut(o, 200) for o in given]
        return listed[:MAX_ORIGINS], len(listed)
    count = _int(given) if given is not None and not isinstance(given, bool) else 0
    return derived[:MAX_ORIGINS], count or len(derived)


def _layout(b: _Builder, clusters: List[Dict[str, Any]]):
    """Order rows (cluster heads, then the rest of each cluster, then the rest) and the cluster table."""
    kinds = _Table()
    placed = [False] * len(b.rows)
    entries = _cluster_entries(b, clusters, placed)
    order: List[int] = []
    table = []
    for number, (cid, kind, members, c) in enumerate(entries):
        origins, n_origins = _origins(b, c, members)
        table.append([_cut(cid, 200), kinds(kind), len(members), len(order), -1, origins, n_origins])
        order.extend(members[:HEAD])
        for i in members:
            b.rows[i][4] = number
    for number, (_cid, _kind, members, _c) in enumerate(entries):
        if len(members) > HEAD:
            table[number][4] = len(order)
            order.extend(members[HEAD:])
    alone_start = len(order)
    order.extend(i for i in range(len(b.rows)) if not placed[i])
    return order, table, kinds.names, entries, alone_start


def _cluster_entries(b: _Builder, clusters: List[Dict[str, Any]], placed: List[bool]) -> List[tuple]:
    """``(cluster id, kind, member rows, cluster)`` of every cluster with rows not placed yet
    (marked placed), largest first."""
    entries = []
    for c in clusters:
        members = [i for i in _member_rows(b, c) if not placed[i]]
        if not members:
            continue
        for i in members:
            placed[i] = True
        kind = str(c.get("kind") or b.kind_of_row[members[0]] or "content")
        entries.append((str(c.get("cluster_id") or ""), kind, members, c))
    entries.sort(key=lambda e: (-len(e[2]), e[0]))
    return entries


def _kind_rows(entries) -> List[list]:
    """``[kind, name, clusters, pages]`` per cluster kind, content first, then the rules in order."""
    kind_counts: Dict[str, List[int]] = {}
    for _cid, kind, members, _c in entries:
        counts = kind_counts.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += len(members)
    order = list(KIND_NAMES)  # content, then the rules in priority order
    ranked = sorted(kind_counts.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else 99, kv[0]))
    return [[k, KIND_NAMES.get(k, k), n[0], n[1]] for k, n in ranked]


def _summary(b: _Builder, entries, meta: Dict[str, Any], thumbs: int) -> Dict[str, Any]:
    by_kind = _kind_rows(entries)
    content_clusters = next((k[2] for k in by_kind if k[0] == "content"), 0)
    clustered = sum(len(e[2]) for e in entries)
    alone = len(b.rows) - clustered
    failed_alone, failed = _failed_counts(b)
    kept = len(entries) + alone  # one page per cluster, plus every page in no cluster
    return {
        "urls": len(b.rows),
        "clusters": len(entries),
        "content_clusters": content_clusters,
        "rule_clusters": len(entries) - content_clusters,
        "clustered": clustered,
        "alone": alone - failed_alone,
        "failed": failed,
        "took_render": b.took_render,
        "kept": kept,
        "saved": len(b.rows) - kept,
        "eligible": _int(meta.get("eligible_html_urls")),
        "thumbnails": thumbs,
        "by_kind": by_kind,
        **_breakdowns(b),
    }


def _failed_counts(b: _Builder) -> Tuple[int, int]:
    """``(pages in no cluster that failed, pages that failed)``."""
    return sum(1 for r in b.rows if r[4] < 0 and r[10]), sum(1 for r in b.rows if r[10])


def _breakdowns(b: _Builder) -> Dict[str, list]:
    """The pages by match rule, status class and host; the favicons and certificates many hosts share."""
    status_counts = Counter(status_class(r[3]) for r in b.rows)
    host_counts = Counter(r[11] for r in b.rows)
    rule_counts = Counter(r[5] for r in b.rows)
    return {
        "by_rule": [[b.rules.names[r], n] for r, n in rule_counts.most_common()],
        "by_status": [[s, status_counts[s]] for s in ("2xx", "3xx", "4xx", "5xx", "none") if status_counts[s]],
        "by_host": [[b.hosts.names[h], n] for h, n in host_counts.most_common(TOP_HOSTS)],
        "by_favicon": _top_pivots(b.favicons),
        "by_cert": _top_pivots(b.certs),
    }


def _copy_thumbs(names: Iterable[str], source: str, dest: str) -> None:
    if os.path.realpath(source) == os.path.realpath(dest):
        return
    os.makedirs(dest, exist_ok=True)
    for name in names:
        target = os.path.join(dest, name)
        if os.path.exists(target):
            continue
        try:
            os.link(os.path.join(source, name), target)  # same file system: no copy
        except OSError:
            with open(os.path.join(source, name), "rb") as fh:
                write_bytes(target, fh.read())  # a failed copy leaves no part of a file


def _prepare_dir(out_dir: str) -> str:
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ReportError(f"report folder {out_dir!r} exists and is not a folder")
    data_dir = os.path.join(out_dir, "data")
    try:
        os.makedirs(data_dir, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create the report folder {out_dir!r}: {exc}") from None
    return data_dir


def _remove_stale_chunks(data_dir: str, kept: Iterable[str]) -> None:
    """Row chunks of an earlier, larger report (after the new one is in place)."""
    keep = set(kept) | {"clusters.js", "meta.js"}
    for name in os.listdir(data_dir):
        if name.endswith(".js") and name not in keep:
            with contextlib.suppress(OSError):
                os.remove(os.path.join(data_dir, name))


def write_report(out_dir: str, rows: Iterable[Dict[str, Any]], clusters: Optional[Iterable[Dict[str, Any]]],
                 meta: Optional[Dict[str, Any]] = None, thumbs_dir: Optional[str] = None,
                 source: str = "", changes: Optional[Dict[str, Any]] = None,
                 old_thumbs_dir: Optional[str] = None) -> ReportInfo:
    """Write the report of a result into ``out_dir``; ``clusters=None`` rebuilds them from the rows.

    ``thumbs_dir`` holds thumbnails named by :func:`thumbs.thumbnail_stem`; default: ``out_dir/thumbs``
    (where a crawl with ``WEBSIM_REPORT_DIR`` writes them). ``changes``: a diff from ``websim diff``
    (:mod:`scrapy_websim.result.diff`), shown in a "Changes" view, each changed URL with its screenshot
    before (from ``old_thumbs_dir``, the earlier scan's thumbnails, copied to ``thumbs-old/``) and
    after.
    """
    report = ReportBuilder(out_dir, thumbs_dir)
    for row in rows:
        report.add(row)
    return report.write(clusters, meta, source, changes, old_thumbs_dir)


class ReportBuilder:
    """:func:`write_report` given the rows one at a time (``add(row)``, as ``output.write_files``
    gives them), then :meth:`write`."""

    def __init__(self, out_dir: str, thumbs_dir: Optional[str] = None) -> None:
        self.started = time.perf_counter()
        self.out_dir = out_dir
        self.thumbs_dir = thumbs_dir or os.path.join(out_dir, "thumbs")
        self.builder = _Builder(list_thumbnails(self.thumbs_dir))

    def add(self, row: Dict[str, Any]) -> None:
        self.builder.add(row)

    def write(self, clusters: Optional[Iterable[Dict[str, Any]]], meta: Optional[Dict[str, Any]] = None,
              source: str = "", changes: Optional[Dict[str, Any]] = None,
              old_thumbs_dir: Optional[str] = None) -> ReportInfo:
        """The report of the rows added (see :func:`write_report`)."""
        out_dir = self.out_dir
        data_dir = _prepare_dir(out_dir)
        # every file of the report is written beside its place and renamed once all are written: a
        # report that fails (a full disk) leaves the previous one as it was, and no part of a file
        with Staged() as staged:
            info = _write_report(staged, out_dir, data_dir, self.builder, clusters, dict(meta or {}),
                                 self.thumbs_dir, source, changes, old_thumbs_dir)
        _remove_stale_chunks(data_dir, info[1])
        total = sum(os.path.getsize(os.path.join(out_dir, name)) for name in STATIC_FILES)
        total += sum(os.path.getsize(os.path.join(data_dir, name)) for name in os.listdir(data_dir))
        return dataclasses.replace(info[0], seconds=time.perf_counter() - self.started, bytes=total)


def _write_report(staged: Staged, out_dir: str, data_dir: str, builder: "_Builder",
                  clusters: Optional[Iterable[Dict[str, Any]]], meta: Dict[str, Any], thumbs_dir: str,
                  source: str, changes: Optional[Dict[str, Any]],
                  old_thumbs_dir: Optional[str] = None) -> Tuple[ReportInfo, List[str]]:
    """The report's files, staged; ``(info without size and time, the row chunk file names)``."""
    for name in STATIC_FILES:
        with open(os.path.join(STATIC_DIR, name), "rb") as fh:
            staged.write(os.path.join(out_dir, name), fh.read())
    dest_thumbs = os.path.join(out_dir, "thumbs")
    cluster_list = list(clusters) if clusters is not None else _clusters_from_rows(builder)
    order, table, kinds, entries, alone_start = _layout(builder, cluster_list)
    if builder.used_thumbs:
        _copy_thumbs(builder.used_thumbs, thumbs_dir, dest_thumbs)
    summary = _summary(builder, entries, meta, len(builder.used_thumbs))
    chunks = _write_row_chunks(staged, data_dir, builder, order)
    payload = _meta_payload(source, meta, summary, kinds, builder.rules.names, alone_start, table, chunks)
    if changes is not None:
        payload["changes"] = _changes_with_thumbs(changes, builder.thumbs, old_thumbs_dir, out_dir)
    staged.write(os.path.join(data_dir, "clusters.js"),
                 js_payload({"type": "clusters", "clusters": table, "hosts": builder.hosts.names}))
    staged.write(os.path.join(data_dir, "meta.js"), js_payload(payload))
    info = ReportInfo(path=os.path.join(out_dir, "index.html"), urls=len(builder.rows), clusters=len(entries),
                      thumbnails=len(builder.used_thumbs), seconds=0.0, bytes=0)
    return info, [os.path.basename(c[0]) for c in chunks]


def _meta_payload(source: str, meta: Dict[str, Any], summary: Dict[str, Any], kinds: List[str], rules: List[str],
                  alone_start: int, table: List[list], chunks: List[List[Any]]) -> Dict[str, Any]:
    """What the report's page reads first (``data/meta.js``): the summary, the first clusters, the
    chunk files, the result's meta (each value cut)."""
    return {
        "type": "meta",
        "version": 1,
        "source": _cut(source, 500),
        "written_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "meta": {str(k): _cut(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str), 500)
                 for k, v in meta.items()},
        "summary": summary,
        "kinds": kinds,
        "kind_names": {k: KIND_NAMES.get(k, k) for k in kinds},
        "rules": rules,
        "head": HEAD,
        "alone_start": alone_start,
        "clusters": table[:FIRST_CLUSTERS],
        "clusters_file": "data/clusters.js",
        "chunks": chunks,
        "changes": None,
    }


def _write_row_chunks(staged: Staged, data_dir: str, builder: _Builder, order: List[int]) -> List[List[Any]]:
    """The rows in report order, in chunk files (a small first one: the first screen loads it
    alone); ``[file, rows]`` of each."""
    chunks: List[List[Any]] = []
    start = 0
    while start < len(order) or not chunks:
        size = FIRST_CHUNK_ROWS if not chunks else CHUNK_ROWS
        part = [builder.rows[i] for i in order[start:start + size]]
        name = f"rows-{len(chunks):03d}.js"
        staged.write(os.path.join(data_dir, name),
                     js_payload({"type": "rows", "chunk": len(chunks), "start": start, "rows": part}))
        chunks.append(["data/" + name, len(part)])
        start += size
    return chunks


def _changes_with_thumbs(changes: Dict[str, Any], new_thumbs: Dict[str, str], old_thumbs_dir: Optional[str],
                         out_dir: str) -> Dict[str, Any]:
    """The Changes view's payload; the earlier scan's thumbnails it shows copied to ``thumbs-old/``."""
    payload = _changes_payload(changes, new_thumbs, list_thumbnails(old_thumbs_dir))
    used_old = [u["old_thumb"] for u in payload["lists"]["urls_changed"] if u["old_thumb"]]
    if used_old and old_thumbs_dir:
        _copy_thumbs(used_old, old_thumbs_dir, os.path.join(out_dir, "thumbs-old"))
    return payload


def _thumb_of(thumbs: Dict[str, str], url_key: str) -> str:
    """The thumbnail file of a diff's URL key (``URL [2]``: the URL listed a second time)."""
    url = re.sub(r" \[\d+\]$", "", url_key)
    return thumbs.get(thumbnail_stem(url), "") if thumbs else ""


def _changes_payload(d: Dict[str, Any], new_thumbs: Dict[str, str], old_thumbs: Dict[str, str]) -> Dict[str, Any]:
    """The diff for the Changes view: its counts and lists, each list cut to ``MAX_CHANGES``
    entries (``more`` says how many were left out), strings cut like the rows'; each changed URL
    with the file names of its screenshot before (``thumbs-old/``) and after (``thumbs/``)."""

    def cut(value: Any) -> Any:
        if isinstance(value, str):
            return _cut(value, MAX_URL)
        if isinstance(value, list):
            return [cut(v) for v in value[:MAX_CHANGES]]
        if isinstance(value, dict):
            return {str(k): cut(v) for k, v in value.items()}
        return value

    urls, clusters = d.get("urls", {}), d.get("clusters", {})
    changed = [dict(u, old_thumb=_thumb_of(old_thumbs, u["url"]), new_thumb=_thumb_of(new_thumbs, u["url"]))
               for u in urls.get("changed", [])[:MAX_CHANGES]]
    lists = {"urls_changed": changed, "collateral": urls.get("collateral", []), "urls_added": urls.get("added", []),
             "urls_removed": urls.get("removed", []), "appeared": clusters.get("appeared", []),
             "vanished": clusters.get("vanished", []), "clusters_changed": clusters.get("changed", []),
             "canonicals": d.get("canonicals", [])}
    full = dict(lists, urls_changed=urls.get("changed", []))
    # the member URLs of a whole cluster can be many: the view shows the first 20
    out = {name: cut([dict(e, urls=e["urls"][:20]) if isinstance(e, dict) and "urls" in e else e for e in entries])
           for name, entries in lists.items()}
    return {"old": cut(d["old"]), "new": cut(d["new"]), "changed": bool(d["changed"]), "counts": d["counts"],
            "by_kind": d.get("by_kind", {}), "kind_words": d.get("kind_words", {}), "notes": cut(d.get("notes", [])),
            "lists": out, "more": {name: max(0, len(entries) - MAX_CHANGES) for name, entries in full.items()}}


def load_result(path: str) -> Tuple[List[Dict[str, Any]], Optional[List[Dict[str, Any]]], Dict[str, Any]]:
    """``(rows, clusters or None, meta)`` of a ``.json``, ``.jsonl`` or ``.csv`` result file."""
    if not os.path.isfile(path):
        raise ReportError(f"result file not found: {path!r}")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".json":
            return _read_json(path)
        if ext in (".jsonl", ".jsonlines"):
            with open(path, encoding="utf-8") as fh:
                return read_jsonl_rows(fh), None, {}
        if ext == ".csv":
            return _read_csv(path), None, {}
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, ReportError):
            raise
        raise ReportError(f"{path!r} cannot be read as a result file: {exc}") from None
    raise ReportError(f"{path!r}: the result file must end in .json, .jsonl or .csv")


def _read_json(path: str) -> Tuple[List[Dict[str, Any]], Optional[List[Dict[str, Any]]], Dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not isinstance(data.get("urls"), list):
        raise ReportError(f"{path!r} is not a scrapy-websim result (expected {{\"urls\": [...], ...}})")
    clusters = data.get("clusters")
    return data["urls"], clusters if isinstance(clusters, list) else None, data.get("meta") or {}


def _read_csv(path: str) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8", newline="") as fh:
        try:
            return list(read_csv_rows(fh))
        except ValueError as exc:  # no 'url' column
            raise ReportError(f"{path!r} {exc}") from None


def report_from_file(result_path: str, out_dir: str, thumbs_dir: Optional[str] = None,
                     changes: Optional[Dict[str, Any]] = None, old_thumbs_dir: Optional[str] = None) -> ReportInfo:
    rows, clusters, meta = load_result(result_path)
    for folder in (thumbs_dir, old_thumbs_dir):
        if folder and not os.path.isdir(folder):
            raise ReportError(f"thumbnails folder not found: {folder!r}")
    return write_report(out_dir, rows, clusters, meta, thumbs_dir=thumbs_dir, source=os.path.basename(result_path),
                        changes=changes, old_thumbs_dir=old_thumbs_dir)
