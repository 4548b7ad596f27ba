"""One malformed record never costs the others: arbitrary strings through every text field of a
record -> feature store -> labelling and clustering -> JSON / JSON Lines / CSV -> HTML report.

The records are real pages (features computed from real HTML, so that they cluster) whose every
string field, and the strings inside their signals and tag paths, are then replaced by what a
hostile page or a broken input list can hand over: lone UTF-16 surrogates, NUL and other control
characters, right-to-left marks, invalid percent-escapes, megabyte values.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import os
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord, clean_text, clean_url, clean_value
from scrapy_websim.result import finalize, output
from scrapy_websim.result.report.writer import write_report
from scrapy_websim.result.rows import ResultRows
from tests.test_report import read_payload

BASE = "http://127.0.0.1:8000"
ARTICLE = ("<!doctype html><html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>"
           "<main><h1>{title}</h1>" + "<p>{word} is the word of this paragraph, and the paragraph goes on about "
           "it for a while so that the page has prose of its own to cluster by.</p>" * 12 + "</main></body></html>")

#: Characters no output can carry, and strings that broke parsers elsewhere.
NASTY = ["\ud800", "\udfff", "\udbff\udc00x", "\x00", "\x01\x1f", "\u202e", "\u200f", "\ufeff", "%zz%", "%ED%A0%80",
         "%", "\r\n", "=cmd|' /C calc'!A0", "</script><!--", "\u2028", "\U0001f600", "\\", '"']
#: Megabyte values (a title or URL a page or list can hand over); drawn rarely, they are slow.
BIG = ["x" * 1_000_000, "\ud800" * 200_000, "é" * 300_000]

nasty_text = st.one_of(
    st.text(st.characters(categories=["Cs", "Cc", "Cf", "Zs", "L", "N", "P", "S"]), max_size=40),
    st.sampled_from(NASTY),
    st.lists(st.sampled_from(NASTY), min_size=1, max_size=6).map("".join),
)
STRING_FIELDS = ("url", "normalized_url", "final_url", "content_type", "error", "title", "www_authenticate",
                 "minhash", "prose_minhash", "tag_seq", "page_type", "predicted_duplicate_of", "expanded_from",
                 "tls_error", "tls_subject", "tls_issuer", "tls_valid_from", "tls_valid_to", "tls_sha256",
                 "favicon_url")


def _real_records():
    """Two copies of each of three articles (three content clusters) and two 404s (a rule cluster)."""
    recs = []
    for n, word in enumerate(("apple", "river", "copper", "apple", "river", "copper"), start=1):
        html = ARTICLE.format(title=f"About {word}", word=word)
        rec = PageRecord(id=n, url=f"{BASE}/{word}/{n}", final_url=f"{BASE}/{word}/{n}", status_code=200,
                         content_type="text/html", html_len=len(html.encode()), rendered=True)
        compute_features(rec, html, b"", FeatureParams())
        recs.append(rec)
    for n in (7, 8):
        html = "<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1></body></html>"
        rec = PageRecord(id=n, url=f"{BASE}/missing/{n}", final_url=f"{BASE}/missing/{n}", status_code=404,
                         content_type="text/html", html_len=len(html), rendered=True)
        compute_features(rec, html, b"", FeatureParams())
        recs.append(rec)
    return recs


REAL = _real_records()
PARAMS = WebsimParams.from_settings({}, WebsimConfig())


@st.composite
def damaged_records(draw):
    """The real records, some of their string fields (and strings inside their containers) replaced."""
    recs = copy.deepcopy(REAL)
    for rec in recs:
        for name in draw(st.lists(st.sampled_from(STRING_FIELDS), max_size=4, unique=True)):
            setattr(rec, name, draw(nasty_text))
        if draw(st.booleans()):
            rec.redirect_chain = draw(st.lists(nasty_text, max_size=3))
        if draw(st.booleans()):
            rec.signals = dict(rec.signals, h1=draw(nasty_text), **{draw(nasty_text): draw(nasty_text)})
        if draw(st.booleans()):
            rec.tag_paths = dict(rec.tag_paths, **{draw(nasty_text): 1})
        if draw(st.booleans()):
            rec.tls_sans = draw(st.lists(nasty_text, max_size=3))
        if draw(st.booleans()):
            rec.timings = [draw(st.sampled_from([math.nan, math.inf, -math.inf, 1.5]))]
    if draw(st.integers(0, 9)) == 0:
        setattr(recs[draw(st.integers(0, len(recs) - 1))], draw(st.sampled_from(("title", "url", "error"))),
                draw(st.sampled_from(BIG)))
    return recs


def _outputs(result):
    texts = {}
    for fmt in ("json", "jsonl", "csv"):
        buf = io.StringIO()
        output.WRITERS[fmt](buf.write, result)
        texts[fmt] = buf.getvalue()
    return texts


def _check_outputs(texts, ids):
    for text in texts.values():
        text.encode("utf-8")  # every output is writable as UTF-8
    doc = json.loads(texts["json"])  # strict: no NaN, no lone surrogate escapes that fail
    assert [row["id"] for row in doc["urls"]] == ids
    for cluster in doc["clusters"]:
        assert set(cluster["member_ids"]) <= set(ids)
    lines = [json.loads(line) for line in texts["jsonl"].split("\n") if line]  # JSON Lines: split on \n only
    assert [row["id"] for row in lines] == ids
    csv.field_size_limit(sys.maxsize)  # a megabyte title is one cell (Python's reader stops at 128 KB)
    rows = list(csv.reader(io.StringIO(texts["csv"], newline="")))
    assert [int(row[0]) for row in rows[1:]] == ids
    assert all(len(row) == len(rows[0]) for row in rows)
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damaged_records())
def test_arbitrary_strings_never_cost_a_record(records):
    ids = [rec.id for rec in records]
    with tempfile.TemporaryDirectory() as tmp:
        store = FeatureStore(os.path.join(tmp, "features.sqlite"), batch_size=3)
        for rec in records:
            store.add(copy.deepcopy(rec))
        result = ResultRows(finalize.Finalizer(PARAMS).run(store, len(records)))
        doc = _check_outputs(_outputs(result), ids)
        for row in doc["urls"]:
            assert row["url"] == clean_url(row["url"])  # the line as given: only lone surrogates replaced
        info = write_report(os.path.join(tmp, "report"), result.url_rows(), result.cluster_rows(), result.meta)
        assert info.urls == len(ids)
        payload_rows = 0
        data = os.path.join(tmp, "report", "data")
        for name in sorted(os.listdir(data)):
            payload = read_payload(os.path.join(data, name))  # every data file parses
            if name.startswith("rows-"):
                payload_rows += len(payload["rows"])
        assert payload_rows == len(ids)
        store.close()


def test_a_lone_surrogate_title_is_replaced_and_the_batch_is_kept():
    """The failure a hostile page caused: one page's script put a lone surrogate into its title;
    the whole batch of records was lost when the store wrote it."""
    store = FeatureStore(batch_size=1000)
    recs = copy.deepcopy(REAL)
    recs[2].title = "T\ud800itle"
    recs[3].url = BASE + "/\udfff"
    for rec in recs:
        store.add(rec)
    store.flush()
    got = {rec.id: rec for rec in store.iter_records()}
    assert sorted(got) == [rec.id for rec in REAL]
    assert got[3].title == "T\ufffditle"
    assert got[4].url == BASE + "/\ufffd" and "U+FFFD" in got[4].error  # the record says its URL changed
    assert got[1].title == REAL[0].title and not got[1].error  # the others untouched
    store.close()


def test_a_record_the_store_cannot_encode_is_kept_with_an_error():
    """A value of a type no JSON can hold (a page hook put an object into the signals)."""
    store = FeatureStore(batch_size=2)
    recs = copy.deepcopy(REAL[:4])
    recs[1].simhash = "not a number"  # the key columns cannot hold it
    for rec in recs:
        store.add(rec)
    got = {rec.id: rec for rec in store.iter_records()}
    assert sorted(got) == [1, 2, 3, 4]
    assert got[2].error.startswith("the record could not be stored") and got[2].url == REAL[1].url
    assert got[3].simhash == REAL[2].simhash and not got[3].error
    store.close()


def test_a_page_the_labelling_cannot_read_stays_alone_and_the_rest_cluster():
    store = FeatureStore()
    recs = copy.deepcopy(REAL)
    recs[0].signals = {"h1": ["not", "a", "string"], "login_form": {"odd": 1}}  # what a broken hook might leave
    recs[0].url = "http://[::1/not-a-url"
    for rec in recs:
        store.add(rec)
    result = ResultRows(finalize.Finalizer(PARAMS).run(store, len(recs)))
    rows = {row["id"]: row for row in result.url_rows()}
    assert sorted(rows) == [rec.id for rec in REAL]
    assert not result.meta.get("error")
    assert rows[5]["cluster_id"] and rows[5]["cluster_id"] == rows[2]["cluster_id"]  # the river copies still merge
    assert rows[7]["cluster_kind"] == "E3" == rows[8]["cluster_kind"]
    store.close()


def test_a_labelling_failure_is_in_the_rows_and_the_features_file_and_the_store_is_not_written(monkeypatch):
    """The labelling reads the store and never writes it: what it could not do to a record is
    added to the record's error in the rows and in the features file."""
    add_page = finalize.assign.add_page

    def failing(table, record, *args, **kwargs):
        if record.id == 2 and record.url:  # not the unlabelled stand-in, which has no URL
            raise ValueError("an odd record")
        return add_page(table, record, *args, **kwargs)

    monkeypatch.setattr(finalize.assign, "add_page", failing)
    store = FeatureStore()
    for rec in copy.deepcopy(REAL):
        store.add(rec)
    store.flush()
    before = [r.to_json() for r in store.iter_records()]
    result = ResultRows(finalize.Finalizer(PARAMS).run(store, len(REAL)))
    assert [r.to_json() for r in store.iter_records()] == before
    rows = {row["id"]: row for row in result.url_rows()}
    assert rows[2]["error"] == "labelling failed: ValueError: an odd record" and not rows[2]["cluster_id"]
    assert not any(row["error"] for page_id, row in rows.items() if page_id != 2)
    features = io.StringIO()
    output.write_features(features.write, result)
    saved = {r["id"]: r for r in map(json.loads, features.getvalue().splitlines()[1:])}
    assert saved[2]["error"] == rows[2]["error"] and not any(r["error"] for i, r in saved.items() if i != 2)
    store.close()


def test_when_clustering_fails_every_record_is_still_written(monkeypatch):
    """The last-resort result: one row per record, no cluster, the reason in meta and on the rows."""
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the clustering")

    monkeypatch.setattr(finalize, "cluster_content", broken)
    store = FeatureStore()
    for rec in copy.deepcopy(REAL):
        store.add(rec)
    result = ResultRows(finalize.Finalizer(PARAMS).run(store, len(REAL)))
    assert "a bug in the clustering" in result.meta["error"]
    doc = _check_outputs(_outputs(result), [rec.id for rec in REAL])
    assert all(row["cluster_id"] == "" and row["is_canonical"] for row in doc["urls"])
    assert all("not clustered" in row["error"] for row in doc["urls"])
    assert doc["clusters"] == []
    store.close()


@pytest.mark.parametrize("value, expected", [
    ("plain", "plain"), ("a\x00b", "a\ufffdb"), ("\ud800\udc00", "\ufffd\ufffd"),
    ("tab\tnew\nline\r", "tab\tnew\nline\r"),
    ("\u202e rtl", "\u202e rtl"), ("\U0001f600", "\U0001f600"),
])
def test_clean_text(value, expected):
    assert clean_text(value) == expected


def test_clean_value_makes_json_writable():
    value = {"k\ud800": [1.0, math.nan, math.inf, b"\xff", ("t", None, True)], "n": 3}
    cleaned = clean_value(value)
    json.dumps(cleaned, allow_nan=False).encode("utf-8")
    assert cleaned == {"k\ufffd": [1.0, 0.0, 0.0, "\ufffd", ["t", None, True]], "n": 3}


def test_websim_cluster_leaves_no_temporary_files(tmp_path):
    """The offline re-cluster's store is a temporary file: removed when the command ends, whether
    it wrote the result or refused the input."""
    import subprocess

    from scrapy_websim.core.store import save_jsonl

    features = tmp_path / "features.jsonl"
    save_jsonl(copy.deepcopy(REAL), str(features))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    ok = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", "cluster", str(features), "-o",
                         str(tmp_path / "r.json")], env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())["urls"]) == len(REAL)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(features.read_text().replace('"url"', '"url', 1))  # a broken record line
    refused = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", "cluster", str(bad), "-o",
                              str(tmp_path / "r2.json")], env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "line 2" in refused.stderr
    assert list(scratch.iterdir()) == []


def test_one_threshold_decides_thin_and_too_small_to_cluster():
    """A page is thin (T1) or clustered by content, never neither, whatever the thin thresholds."""
    thin = {"rules.thin_html_bytes": 512, "rules.thin_text_chars": 100}
    params = WebsimParams.from_settings({"WEBSIM_PARAMS": thin}, WebsimConfig())
    assert (params.cluster.min_html_len, params.cluster.min_text_len) == (512, 100)
    store = FeatureStore()
    for n in (1, 2):  # two copies of a 700-byte page: not thin at 512 bytes, so they must cluster
        html = ("<html><head><title>Small</title></head><body><h1>Small page</h1><p>"
                + "small words here, and a few more " * 14 + "</p></body></html>")
        rec = PageRecord(id=n, url=f"{BASE}/small/{n}", final_url=f"{BASE}/small/{n}", status_code=200,
                         content_type="text/html", html_len=len(html.encode()), rendered=True)
        compute_features(rec, html, b"", params.features)
        assert 512 <= rec.html_len < 1024
        store.add(rec)
    rows = list(ResultRows(finalize.Finalizer(params).run(store, 2)).url_rows())
    assert [row["cluster_kind"] for row in rows] == ["content", "content"]
    store.close()
