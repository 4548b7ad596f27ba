"""Every file of a run from one pass over the store (output.write_files): the same bytes as each
file written alone, a failing place written again to a fallback file, no temporary file left."""

from __future__ import annotations

import copy
import io
import os

import pytest

from scrapy_websim.core.store import FeatureStore
from scrapy_websim.result import output
from scrapy_websim.result.finalize import Finalizer
from scrapy_websim.result.report.writer import ReportBuilder, write_report
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.result.safefile import Written
from tests.test_malformed import PARAMS, REAL
from tests.test_report import read_payload

FORMATS = ("json", "jsonl", "csv", "features")


@pytest.fixture()
def rows():
    store = FeatureStore()
    for record in copy.deepcopy(REAL):
        store.add(record)
    store.add_probe(_probe())
    store.flush()
    yield ResultRows(Finalizer(PARAMS).run(store, len(REAL)))
    store.close()


def _probe():
    probe = copy.deepcopy(REAL[6])
    probe.id, probe.url, probe.probe_for = 0, probe.url + "-probe", "http://127.0.0.1:9"
    return probe


def _alone(rows, fmt):
    buf = io.StringIO()
    (output.write_features if fmt == "features" else output.WRITERS[fmt])(buf.write, rows)
    return buf.getvalue()


def _read(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def _counting(rows, monkeypatch):
    """The passes over the store's records from here on."""
    passes = []
    iter_records = rows.store.iter_records

    def counted():
        passes.append(1)
        return iter_records()

    monkeypatch.setattr(rows.store, "iter_records", counted)
    return passes


def test_every_file_from_one_pass_is_the_file_written_alone(rows, tmp_path, monkeypatch):
    expected = {fmt: _alone(rows, fmt) for fmt in FORMATS}
    assert '"probe_for":"http://127.0.0.1:9"' in expected["features"].splitlines()[-1]
    passes = _counting(rows, monkeypatch)
    files = [(str(tmp_path / f"r-{fmt}.out"), fmt) for fmt in FORMATS]
    added = []

    class Report:
        def add(self, row):
            added.append(row["id"])

    written = output.write_files(rows, files, [], also=[Report()])
    assert passes == [1]
    assert written == [Written(path, "") for path, _fmt in files]
    assert {fmt: _read(path) for path, fmt in files} == expected
    assert added == [record.id for record in REAL]
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(path) for path, _fmt in files)


def test_a_place_that_fails_at_once_goes_to_a_fallback_file(rows, tmp_path, monkeypatch):
    expected = {fmt: _alone(rows, fmt) for fmt in ("json", "csv")}
    fallback = tmp_path / "fallback"
    fallback.mkdir()
    passes = _counting(rows, monkeypatch)
    files = [(str(tmp_path / "missing" / "r.json"), "json"), (str(tmp_path / "r.csv"), "csv")]
    written = output.write_files(rows, files, [str(fallback)])
    assert passes == [1, 1]  # the pass, then the fallback file's own
    assert written[0] == Written(str(fallback / "websim-fallback-r.json"), written[0].error) and written[0].error
    assert written[1] == Written(files[1][0], "")
    assert _read(written[0].path) == expected["json"] and _read(files[1][0]) == expected["csv"]


def test_a_file_that_fails_during_the_pass_leaves_nothing_behind_and_the_others_are_written(rows, tmp_path,
                                                                                            monkeypatch):
    expected = {fmt: _alone(rows, fmt) for fmt in ("jsonl", "csv")}

    class FullDisk(output.CsvWriter):
        def add(self, row):
            if row["id"] == 3:
                raise OSError(28, "No space left on device")
            super().add(row)

    monkeypatch.setitem(output.ROW_WRITERS, "csv", FullDisk)
    files = [(str(tmp_path / "out" / "r.csv"), "csv"), (str(tmp_path / "out" / "r.jsonl"), "jsonl")]
    os.mkdir(tmp_path / "out")
    written = output.write_files(rows, files, [str(tmp_path)])
    assert written[0] == Written(str(tmp_path / "websim-fallback-r.csv"), "No space left on device")
    assert written[1] == Written(files[1][0], "")
    assert sorted(os.listdir(tmp_path / "out")) == ["r.jsonl"]  # no temporary file of the failed one
    assert _read(written[0].path) == expected["csv"] and _read(files[1][0]) == expected["jsonl"]


def test_an_error_that_is_no_place_s_leaves_no_file(rows, tmp_path):
    """A bug (not an OS error) stops the pass: no result file half-written, no temporary file."""
    class Broken:
        def add(self, row):
            raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        output.write_files(rows, [(str(tmp_path / "r.json"), "json")], [], also=[Broken()])
    assert os.listdir(tmp_path) == []


def test_the_report_from_the_pass_is_the_report_written_alone(rows, tmp_path):
    alone = write_report(str(tmp_path / "alone"), rows.url_rows(), rows.cluster_rows(), rows.meta)
    report = ReportBuilder(str(tmp_path / "pass"))
    output.write_files(rows, [(str(tmp_path / "r.json"), "json")], [], also=[report])
    in_pass = report.write(rows.cluster_rows(), rows.meta)
    assert (in_pass.urls, in_pass.clusters) == (alone.urls, alone.clusters) == (len(REAL), alone.clusters)
    data = sorted(os.listdir(tmp_path / "alone" / "data"))
    assert sorted(os.listdir(tmp_path / "pass" / "data")) == data
    for name in data:
        a, b = (read_payload(tmp_path / side / "data" / name) for side in ("alone", "pass"))
        if name == "meta.js":
            a.pop("written_at"), b.pop("written_at")
        assert a == b, name
