"""FeatureStore: SQLite-backed PageRecords with batched commits and features files."""

import io
import os
import sqlite3

import pytest

from scrapy_websim.core.match.cluster import build_keys, cluster, key_row
from scrapy_websim.core.params.match import ClusterParams
from scrapy_websim.core.store import (
    FEATURES_HEADER,
    FeatureStore,
    NotAFeaturesFile,
    iter_jsonl,
    load_jsonl,
    save_jsonl,
)
from scrapy_websim.core.types import PageRecord, PairResult


def rec(i, **kw):
    base = dict(id=i, url=f"http://site.test/{i}", status_code=200, content_type="text/html", html_len=5000,
                text_len=1000 + i, simhash=(0xFFFF_0000_0000_0000 | i), phash=0x8000_0000_0000_0001,
                tag_paths={"html>body>p": 3}, timings=[1.0, 2.0, 3.5], signals={"login": False})
    base.update(kw)
    return PageRecord(**base)


def committed_rows(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    finally:
        db.close()


def test_round_trip_replace_and_order(tmp_path):
    path = tmp_path / "f.sqlite3"
    with FeatureStore(path, batch_size=3) as store:
        for i in (5, 1, 9, 3):
            store.add(rec(i))
        store.add(rec(1, title="again"))
        assert len(store) == 4
        assert store.get(1).title == "again"
        assert store.get(9) == rec(9)  # 64-bit hashes with the top bit set survive
        assert [r.id for r in store.iter_records()] == [1, 3, 5, 9]
        assert 3 in store and 4 not in store
        with pytest.raises(KeyError):
            store.get(4)
    assert path.exists()  # a named store is kept
    with FeatureStore(path) as again:
        assert [r.id for r in again.iter_records()] == [1, 3, 5, 9]


def test_batches_bound_what_is_held_in_memory(tmp_path):
    path = str(tmp_path / "b.sqlite3")
    store = FeatureStore(path, batch_size=4)
    for i in range(10):
        store.add(rec(i))
        assert len(store._pending) < 4
    assert committed_rows(path) == 8  # two batches on disk, two records pending
    assert store.get(9).id == 9  # pending records are readable
    store.close()
    assert committed_rows(path) == 10


def test_temporary_store_is_removed():
    store = FeatureStore()
    store.add(rec(1))
    path = store.path
    assert os.path.exists(path)
    store.close()
    assert not os.path.exists(path)
    with pytest.raises(ValueError, match="closed"):
        store.get(1)


def test_key_rows_match_records():
    with FeatureStore(batch_size=2) as store:
        records = [rec(i, simhash=None if i == 2 else (1 << 63) + i, phash=None if i == 3 else i) for i in range(6)]
        for r in reversed(records):
            store.add(r)
        assert list(store.iter_key_rows()) == [key_row(r) for r in records]
        keys = build_keys(store.iter_key_rows())
        assert keys.ids.tolist() == list(range(6))
        assert int(keys.simhash[5]) == (1 << 63) + 5


def test_jsonl_round_trip_and_offline_recluster(tmp_path):
    records = [rec(i, simhash=42, phash=None, text_len=900 + i) for i in range(4)] + [rec(7, status_code=404)]
    path = tmp_path / "features.jsonl"
    assert save_jsonl(records, path) == 5
    assert list(iter_jsonl(path)) == records
    store = load_jsonl(path)
    try:
        assert len(store) == 5
        buf = io.StringIO()
        store.save_jsonl(buf)
        lines = buf.getvalue().splitlines()
        assert __import__("json").loads(lines[0]) == FEATURES_HEADER
        assert [PageRecord.from_json(__import__("json").loads(line)) for line in lines[1:]] == records

        def compare(a, b):
            return PairResult(1.0, 1.0, 0.0, 1.0, True, "rule1")

        result = cluster(build_keys(store.iter_key_rows()), compare, ClusterParams(), url_of=store.url_of)
        assert [(c.canonical_id, c.member_ids, c.canonical_url) for c in result.clusters] == [
            (3, [0, 1, 2, 3], "http://site.test/3")
        ]
    finally:
        store.close()


def test_bad_jsonl_line_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(__import__("json").dumps(rec(1).to_json()) + "\n\n{not json\n")
    with pytest.raises(ValueError, match="line 3"):
        list(iter_jsonl(path))


def test_batch_size_validated():
    with pytest.raises(ValueError, match="batch_size"):
        FeatureStore(batch_size=0)


def test_features_file_kind_is_checked(tmp_path):
    """A result file, an empty file or another JSON file is not taken for a features file; an old
    headerless features file still is."""
    import json

    result = tmp_path / "result.jsonl"
    result.write_text(json.dumps({"id": 1, "url": "http://a/", "cluster_id": "", "is_canonical": True}) + "\n")
    other = tmp_path / "other.json"
    other.write_text('{"urls": [], "clusters": []}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    for path in (result, other, empty):
        with pytest.raises(NotAFeaturesFile):
            list(iter_jsonl(path))
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"kind": "websim-features", "version": 99}) + "\n")
    with pytest.raises(NotAFeaturesFile, match="version 99"):
        list(iter_jsonl(newer))
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(rec(3).to_json()) + "\n")
    assert [r.id for r in iter_jsonl(old)] == [3]


def test_record_json_ids_and_urls_read_back():
    """The store's JSON of a record is ``to_json()``; ids by range and URLs without parsing records."""
    import json as _json

    from scrapy_websim.core.store import FeatureStore, record_json
    from scrapy_websim.core.types import PageRecord as _Rec

    rec = _Rec(id=7, url="http://a.test/é", simhash=(1 << 64) - 1, phash=3, fingerprint=None, text_hash=1 << 63,
               tag_paths={"html>body": 2}, dom_counts=[1, 2], signals={"kw": {"E3": [1, 0, 0]}}, timings=[1.5])
    assert _json.loads(record_json(rec)) == rec.to_json()
    with FeatureStore() as store:
        for i in (3, 1, 1 << 41, 2):
            store.add(_Rec(id=i, url=f"http://a.test/{i}"))
        assert list(store.ids()) == [1, 2, 3, 1 << 41]
        assert list(store.ids(start=1 << 40)) == [1 << 41]
        assert list(store.ids(stop=1 << 40, last=True)) == [3]
        assert store.urls_of([3, 1, 99]) == {3: "http://a.test/3", 1: "http://a.test/1"}


def test_a_features_file_of_an_earlier_version_keeps_its_prose_fields():
    """Features files written before the prose fields were named so still load them."""
    record = PageRecord.from_json({"id": 1, "url": "http://a.test/", "dense_len": 1200, "dense_shingles": 80,
                                   "dense_minhash": "abc"})
    assert (record.prose_len, record.prose_shingles, record.prose_minhash) == (1200, 80, "abc")


def test_a_store_goes_on_in_a_temporary_copy_and_leaves_its_file_as_it_was(tmp_path):
    """What the extension does when the store's folder fills up: the records so far are copied, the
    pending ones and the later ones go to the copy, the file keeps what it had."""
    path = str(tmp_path / "job.sqlite")
    store = FeatureStore(path, batch_size=100)
    store.add(PageRecord(id=1, url="http://a/1", status_code=200))
    store.flush()
    store.add(PageRecord(id=2, url="http://a/2", status_code=200))  # pending when the disk refuses
    where = store.move_to_temporary()
    assert where != path
    store.add(PageRecord(id=3, url="http://a/3", status_code=200))
    assert [r.id for r in store.iter_records()] == [1, 2, 3]
    store.close()
    assert not os.path.exists(where)  # the copy is removed with the store
    kept = FeatureStore.temporary_copy_of(path)  # the job folder's file: what it had, read only
    assert [r.id for r in kept.iter_records()] == [1]
    kept.close()
