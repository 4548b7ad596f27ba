"""On-disk feature store: PageRecord JSON in SQLite, with the clustering keys in columns.

The crawl adds one record per page as it goes; at most ``batch_size`` records are held
in memory before they are written in one transaction, so memory does not grow with the crawl.
The key columns (:data:`scrapy_websim.core.match.cluster.KEY_FIELDS`) let the closing step build the
compact clustering input without parsing a million JSON documents; :meth:`FeatureStore.get`
loads a full record for the pairwise decision.

Features files (JSON Lines, one ``PageRecord.to_json()`` per line) are written by
:func:`save_jsonl` and read by :func:`load_jsonl` / :func:`iter_jsonl`, so ``websim cluster
features.jsonl`` can re-cluster offline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import sqlite3
import tempfile
from typing import IO, Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from .match.cluster import KEY_FIELDS, KeyRow, key_row
from .types import _HEX64_FIELDS, PageRecord, hex64

DEFAULT_BATCH_SIZE = 1000
#: SQLite's result codes of a write the disk refused (full, read-only, I/O error, cannot open).
_DISK_CODES = {13: "the disk is full", 8: "it is read-only", 10: "a disk I/O error", 14: "it cannot be opened",
               3: "permission denied"}


class StoreWriteError(Exception):
    """The store's file cannot be written (the disk is full, the folder read-only...). Nothing is lost:
    the records not written stay pending (see :meth:`FeatureStore.move_to_temporary`)."""

    def __init__(self, path: str, cause: str) -> None:
        super().__init__(f"{path}: {cause}")
        self.path, self.cause = path, cause


def _disk_cause(exc: BaseException) -> Optional[str]:
    """Why the disk refused a write, for an error that says so; None for any other error."""
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _DISK_CODES:
            return f"{_DISK_CODES[code & 0xFF]} ({exc})"
        text = str(exc).lower()
        if "disk is full" in text or "readonly" in text or "disk i/o" in text or "unable to open" in text:
            return str(exc)
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{exc.strerror or exc}"
    return None
_SIGN = 1 << 63
_WRAP = 1 << 64


def _to_sql64(value: Optional[int]) -> Optional[int]:
    """SQLite integers are signed 64-bit: store the unsigned hash in two's complement."""
    if value is None:
        return None
    value &= _WRAP - 1
    return value - _WRAP if value >= _SIGN else value


def _from_sql64(value: Optional[int]) -> Optional[int]:
    return None if value is None else value & (_WRAP - 1)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(PageRecord))
_HEX_FIELDS = frozenset(_HEX64_FIELDS)


def record_json(record: PageRecord) -> str:
    """A record as one line of JSON (a row of the store, a line of a features file):
    ``record.to_json()`` as compact JSON, without ``dataclasses.asdict``'s deep copy (slow on a
    record of many tag paths; the JSON text is the same)."""
    data = {name: getattr(record, name) for name in _FIELD_NAMES}
    for name in _HEX_FIELDS:
        data[name] = hex64(data[name])
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class FeatureStore:
    """PageRecords by id in an SQLite file (a temporary file, removed on close, by default)."""

    def __init__(self, path: Optional[Union[str, os.PathLike]] = None, batch_size: int = DEFAULT_BATCH_SIZE):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r}: valid range is >= 1")
        self.batch_size = batch_size
        self._temp = path is None
        if path is None:
            fd, name = tempfile.mkstemp(prefix="websim-features-", suffix=".sqlite3")
            os.close(fd)
            path = name
        self.path = os.fspath(path)
        self._pending: Dict[int, Tuple[Any, ...]] = {}
        self._pending_probes: Dict[str, Tuple[str, str, str]] = {}
        self._db: Optional[sqlite3.Connection] = None
        try:
            self._db = _open_db(self.path)
        except (sqlite3.Error, OSError) as exc:
            cause = _disk_cause(exc)
            if cause is None:
                raise
            raise StoreWriteError(self.path, cause) from None

    # -- writing
    def add(self, record: PageRecord) -> None:
        """Add or replace (same id) one record; commits every ``batch_size`` records. The record is
        cleaned first (:meth:`PageRecord.clean`): what the store holds, every output can write."""
        try:
            self._pending[record.id] = _row(record)
        except Exception as exc:  # noqa: BLE001 - one odd record must not cost the others
            self._pending[record.id] = _row(unstorable(record, exc))
        if len(self._pending) >= self.batch_size:
            self.flush()

    def delete(self, page_id: int) -> None:
        """Remove one record (used to renumber pages discovered by following links)."""
        self._pending.pop(page_id, None)
        self._write("DELETE FROM records WHERE id = ?", [(page_id,)])

    def delete_range(self, start: int, stop: int) -> None:
        """Remove the records with ids in ``[start, stop)``."""
        for page_id in [i for i in self._pending if start <= i < stop]:
            del self._pending[page_id]
        self._write("DELETE FROM records WHERE id >= ? AND id < ?", [(start, stop)])

    def add_probe(self, record: PageRecord) -> None:
        """Keep a soft-404 probe's record (``record.probe_for`` set) apart from the url records,
        cleaned as every record is (:meth:`PageRecord.clean`)."""
        record.clean()
        self._pending_probes[record.url] = (record.url, record.probe_for, record_json(record))
        self._write("INSERT OR REPLACE INTO probes VALUES (?, ?, ?)", list(self._pending_probes.values()))
        self._pending_probes.clear()

    def _write(self, sql: str, rows: List[Tuple[Any, ...]]) -> None:
        """Run one write statement for ``rows`` in a transaction; a write the disk refuses raises
        :class:`StoreWriteError` (the transaction is rolled back: the file stays as it was)."""
        try:
            with self._conn() as db:
                db.executemany(sql, rows)
        except (sqlite3.OperationalError, OSError) as exc:
            cause = _disk_cause(exc)
            if cause is None:
                raise
            raise StoreWriteError(self.path, cause) from None

    def iter_probes(self) -> Iterator[PageRecord]:
        """The soft-404 probes' records, by origin then URL."""
        self.flush()
        for (text,) in self._conn().execute("SELECT json FROM probes ORDER BY origin, url"):
            yield PageRecord.from_json(json.loads(text))

    def probe_origins(self) -> set:
        """Origins with a probe record (a resumed crawl does not probe them again)."""
        kept = {origin for _url, origin, _json in self._pending_probes.values()}
        return kept | {origin for (origin,) in self._conn().execute("SELECT DISTINCT origin FROM probes")}

    def url_errors(self, start: int, stop: int) -> Iterator[Tuple[int, str, str]]:
        """``(id, url, error)`` of the stored records with ids in ``[start, stop)`` (read by SQLite)."""
        yield from self._conn().execute(
            "SELECT id, json_extract(json, '$.url'), json_extract(json, '$.error') FROM records "
            "WHERE id >= ? AND id < ? ORDER BY id", (start, stop))

    def iter_url_fingerprints(self) -> Iterator[Tuple[str, str, str, Optional[str]]]:
        """``(url, first URL of the redirect chain, final_url, fingerprint hex)`` of every record,
        read by SQLite (no record JSON is parsed in Python)."""
        self.flush()
        yield from self._conn().execute(
            "SELECT json_extract(json, '$.url'), json_extract(json, '$.redirect_chain[0]'), "
            "json_extract(json, '$.final_url'), json_extract(json, '$.fingerprint') FROM records ORDER BY id")

    def add_many(self, records: Iterable[PageRecord]) -> None:
        for record in records:
            self.add(record)

    def flush(self) -> None:
        """Write the pending records in one transaction. If the database refuses the batch, each
        record is written alone, and one it still refuses is stored as :func:`unstorable`: a bad
        row never costs its batch. A write the disk refuses raises :class:`StoreWriteError` and the
        records stay pending."""
        if self._pending_probes:
            self._write("INSERT OR REPLACE INTO probes VALUES (?, ?, ?)", list(self._pending_probes.values()))
            self._pending_probes.clear()
        if not self._pending:
            return
        insert = f"INSERT OR REPLACE INTO records VALUES ({', '.join('?' * (len(KEY_FIELDS) + 1))})"
        try:
            self._write(insert, list(self._pending.values()))
        except _ROW_ERRORS:
            for row in self._pending.values():
                try:
                    self._write(insert, [row])
                except _ROW_ERRORS as exc:
                    self._write(insert, [_row(unstorable(_record_of_row(row), exc))])
        self._pending.clear()

    def move_to_temporary(self) -> str:
        """Go on in a temporary copy of the store, when its file can no longer be written (a full or
        read-only disk): the records stored so far are copied (SQLite's backup, which only reads
        the file), the pending ones are written to the copy at the next flush, and the file is left
        as it was. The copy is in the system's temporary folder, else in memory. Returns where."""
        old = self._conn()
        for folder in (None, ":memory:"):
            target = ":memory:"
            try:
                if folder is None:
                    fd, target = tempfile.mkstemp(prefix="websim-features-", suffix=".sqlite3")
                    os.close(fd)
                copy = sqlite3.connect(target)
                old.backup(copy)
                _create_tables(copy)
            except (sqlite3.Error, OSError):
                if target != ":memory:":
                    with contextlib.suppress(OSError):
                        os.remove(target)
                continue
            self._db, self.path, self._temp = copy, target, target != ":memory:"
            with contextlib.suppress(sqlite3.Error):
                old.close()
            return target
        raise StoreWriteError(self.path, "no temporary copy could be made")

    @classmethod
    def temporary_copy_of(cls, path: str, batch_size: int = DEFAULT_BATCH_SIZE) -> "FeatureStore":
        """A temporary store holding what the store file ``path`` holds (opened read-only; nothing if
        it cannot be read): for a store whose folder cannot be written."""
        store = cls(batch_size=batch_size)
        if not os.path.exists(path):
            return store
        # read-only first (its write-ahead log included); "immutable" where even that needs a write
        for mode in ("mode=ro", "immutable=1"):
            try:
                source = sqlite3.connect(f"file:{os.path.abspath(path)}?{mode}", uri=True)
            except sqlite3.Error:
                continue
            try:
                source.backup(store._conn())
                _create_tables(store._conn())
                return store
            except sqlite3.Error:
                continue
            finally:
                source.close()
        return store

    # -- reading
    def get(self, page_id: int) -> PageRecord:
        pending = self._pending.get(page_id)
        if pending is not None:
            return PageRecord.from_json(json.loads(pending[-1]))
        row = self._conn().execute("SELECT json FROM records WHERE id = ?", (page_id,)).fetchone()
        if row is None:
            raise KeyError(page_id)
        return PageRecord.from_json(json.loads(row[0]))

    def __contains__(self, page_id: object) -> bool:
        if page_id in self._pending:
            return True
        return self._conn().execute("SELECT 1 FROM records WHERE id = ?", (page_id,)).fetchone() is not None

    def __len__(self) -> int:
        self.flush()
        return int(self._conn().execute("SELECT COUNT(*) FROM records").fetchone()[0])

    def iter_records(self) -> Iterator[PageRecord]:
        """All records in id order, streamed (not loaded at once)."""
        self.flush()
        for (text,) in self._conn().execute("SELECT json FROM records ORDER BY id"):
            yield PageRecord.from_json(json.loads(text))

    def iter_key_rows(self) -> Iterator[KeyRow]:
        """The clustering key columns of every record, in id order (see ``cluster.build_keys``)."""
        self.flush()
        names = ", ".join(KEY_FIELDS)
        for row in self._conn().execute(f"SELECT {names} FROM records ORDER BY id"):
            yield (row[0], row[1], row[2], row[3], row[4], row[5], _from_sql64(row[6]), _from_sql64(row[7]), row[8],
                   _from_sql64(row[9]), _from_sql64(row[10]))

    def ids(self, start: Optional[int] = None, stop: Optional[int] = None, last: bool = False) -> Iterator[int]:
        """The ids in ``[start, stop)`` in increasing order (only the largest with ``last``)."""
        self.flush()
        low = -_WRAP if start is None else start
        high = _WRAP if stop is None else stop
        query = "SELECT MAX(id) FROM records" if last else "SELECT id FROM records"
        for (page_id,) in self._conn().execute(f"{query} WHERE id >= ? AND id < ? ORDER BY 1",
                                               (max(low, -_SIGN), min(high, _SIGN - 1))):
            if page_id is not None:
                yield page_id

    def url_of(self, page_id: int) -> str:
        return self.get(page_id).url

    def urls_of(self, page_ids: Iterable[int]) -> Dict[int, str]:
        """``{id: url}`` of the given records (their JSON is not parsed in Python)."""
        self.flush()
        wanted = list(page_ids)
        urls: Dict[int, str] = {}
        for at in range(0, len(wanted), 500):
            chunk = wanted[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            urls.update(self._conn().execute(
                f"SELECT id, json_extract(json, '$.url') FROM records WHERE id IN ({marks})", chunk))
        return urls

    def template_pages(self, page_ids: Iterable[int]) -> Iterator[Tuple[int, str, Dict[str, int]]]:
        """``(id, shingle_set, tag_paths)`` of the given records, in no particular order (what the
        sites' templates are made of; only those two fields are parsed)."""
        self.flush()
        wanted = list(page_ids)
        for at in range(0, len(wanted), 500):
            chunk = wanted[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            for page_id, shingles, paths in self._conn().execute(
                    f"SELECT id, json_extract(json, '$.shingle_set'), json_extract(json, '$.tag_paths') "
                    f"FROM records WHERE id IN ({marks})", chunk):
                yield page_id, shingles or "", json.loads(paths) if paths else {}

    # -- features files
    def save_jsonl(self, path_or_file: Union[str, os.PathLike, IO[str]]) -> int:
        """The records, then the soft-404 probes (lines with ``probe_for`` set); returns the number of records."""
        probes = int(self._conn().execute("SELECT COUNT(*) FROM probes").fetchone()[0])
        return save_jsonl(itertools.chain(self.iter_records(), self.iter_probes()), path_or_file) - probes

    def load_jsonl(self, path_or_file: Union[str, os.PathLike, IO[str]]) -> int:
        count = 0
        for record in iter_jsonl(path_or_file):
            if record.probe_for:
                self.add_probe(record)
                continue
            self.add(record)
            count += 1
        self.flush()
        return count

    # -- lifetime
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError("FeatureStore is closed")
        return self._db

    def close(self) -> None:
        if self._db is None:
            return
        try:
            self.flush()
        finally:
            self._db.close()
            self._db = None
        if self._temp:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.remove(self.path + suffix)
                except FileNotFoundError:
                    pass

    def __enter__(self) -> "FeatureStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open_db(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        _create_tables(db)
    except BaseException:
        db.close()
        raise
    return db


def _create_tables(db: sqlite3.Connection) -> None:
    columns = ", ".join(f"{name} {kind}" for name, kind in zip(KEY_FIELDS[1:], _KEY_TYPES))
    db.execute(f"CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, {columns}, json TEXT NOT NULL)")
    # Soft-404 probes (core/match/soft404.py): records of random-path requests, never url records.
    db.execute("CREATE TABLE IF NOT EXISTS probes (url TEXT PRIMARY KEY, origin TEXT NOT NULL, json TEXT NOT NULL)")
    db.commit()


def _row(record: PageRecord) -> Tuple[Any, ...]:
    """The table row of a record: its clustering key columns, then its JSON."""
    record.clean()
    row = key_row(record)
    return (row[0], row[1], row[2], row[3], row[4], row[5], _to_sql64(row[6]), _to_sql64(row[7]), row[8],
            _to_sql64(row[9]), _to_sql64(row[10]), record_json(record))


def unstorable(record: PageRecord, exc: BaseException) -> PageRecord:
    """What is stored for a record that could not be: its id, URL, status, type and title, and an
    ``error`` that says why (so it is never clustered; every other record is unaffected)."""
    def kept(value: Any, kind: type) -> Any:
        return value if type(value) is kind else kind()

    record = PageRecord(id=kept(record.id, int), url=kept(record.url, str), final_url=kept(record.final_url, str),
                        status_code=kept(record.status_code, int), content_type=kept(record.content_type, str),
                        title=kept(record.title, str),
                        error=f"the record could not be stored: {type(exc).__name__}: {exc}"[:300])
    record.clean()
    return record


def _record_of_row(row: Tuple[Any, ...]) -> PageRecord:
    try:
        return PageRecord.from_json(json.loads(row[-1]))
    except (TypeError, ValueError):
        return PageRecord(id=row[0], url="")


#: What SQLite (or the values handed to it) can raise for one row that another row would not.
_ROW_ERRORS = (sqlite3.DataError, sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError,
               OverflowError, UnicodeError, ValueError, TypeError)


_KEY_TYPES = ("INTEGER", "TEXT", "INTEGER", "INTEGER", "TEXT", "INTEGER", "INTEGER", "TEXT", "INTEGER", "INTEGER")


def _open(path_or_file: Union[str, os.PathLike, IO[str]], mode: str) -> Tuple[IO[str], bool]:
    if hasattr(path_or_file, "read") or hasattr(path_or_file, "write"):
        return path_or_file, False  # type: ignore[return-value]
    return open(path_or_file, mode, encoding="utf-8"), True


#: First line of a features file: says what the file is, so ``websim cluster`` can refuse others.
FEATURES_HEADER = {"kind": "websim-features", "version": 1}
#: Keys every record line of a features file has, and keys only a result file's rows have (used to
#: accept an old features file without a header only when it cannot be anything else).
_FEATURE_KEYS = {"id", "url", "html_len", "rendered", "text_len", "dom_counts", "tag_paths"}
_RESULT_KEYS = {"cluster_id", "is_canonical", "similarity_to_canonical", "urls", "clusters"}


class NotAFeaturesFile(ValueError):
    """The file given as a features file is something else (a result file, another JSON file...)."""


def save_jsonl(records: Iterable[PageRecord], path_or_file: Union[str, os.PathLike, IO[str]]) -> int:
    """Write the header line, then one ``PageRecord.to_json()`` per line; returns the number of records."""
    handle, owned = _open(path_or_file, "w")
    count = 0
    try:
        handle.write(json.dumps(FEATURES_HEADER) + "\n")
        for record in records:
            handle.write(record_json(record))
            handle.write("\n")
            count += 1
    finally:
        if owned:
            handle.close()
    return count


def _check_first_line(data: Any) -> bool:
    """True if ``data`` (the first line) is the header; raises :class:`NotAFeaturesFile` unless it is the
    header or, for files written before the header existed, unmistakably a record line."""
    if isinstance(data, dict) and data.get("kind") == FEATURES_HEADER["kind"]:
        if data.get("version") != FEATURES_HEADER["version"]:
            raise NotAFeaturesFile(f"features file version {data.get('version')!r} is not supported "
                                   f"(this websim reads version {FEATURES_HEADER['version']})")
        return True
    if isinstance(data, dict) and _FEATURE_KEYS <= data.keys() and not _RESULT_KEYS & data.keys():
        return False  # an old features file without a header
    raise NotAFeaturesFile("this is not a websim features file (its first line is not the features header); "
                           "write one with --features-file (or WEBSIM_FEATURES_FILE) during a crawl")


def iter_jsonl(path_or_file: Union[str, os.PathLike, IO[str]]) -> Iterator[PageRecord]:
    """Read a features file lazily; blank lines are skipped, a bad line names its number. The first
    line must be the header (or an old headerless file's record line): see :class:`NotAFeaturesFile`."""
    handle, owned = _open(path_or_file, "r")
    try:
        first = True
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError as exc:
                if first:
                    raise NotAFeaturesFile("this is not a websim features file (its first line is not JSON)") from None
                raise ValueError(f"features file line {number}: {exc}") from exc
            if first:
                first = False
                if _check_first_line(data):
                    continue
            try:
                yield PageRecord.from_json(data)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"features file line {number}: {exc}") from exc
        if first:
            raise NotAFeaturesFile("the features file is empty")
    finally:
        if owned:
            handle.close()


def load_jsonl(path_or_file: Union[str, os.PathLike, IO[str]], store: Optional[FeatureStore] = None) -> FeatureStore:
    """A store (a new temporary one by default) filled from a features file."""
    store = store if store is not None else FeatureStore()
    store.load_jsonl(path_or_file)
    return store
