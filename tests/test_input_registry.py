"""The input list's placeholders in the store, as the list is read (``scrapy_websim/inputs.py``)."""

from __future__ import annotations

import itertools

from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.url_list import Entry
from scrapy_websim.crawler.inputs import CHUNK, NOT_FETCHED, PROVISIONAL_ID_BASE, InputRegistry


def _entries(n):
    return (Entry(id=i, raw=f"http://h/{i}", url=f"http://h/{i}") for i in range(1, n + 1))


def test_placeholders_are_stored_as_the_list_is_read(tmp_path):
    store = FeatureStore(str(tmp_path / "s.sqlite"))
    inputs = InputRegistry(store)
    pending = inputs.pending(_entries(2 * CHUNK + 5))
    first = list(itertools.islice(pending, 3))
    assert [e.id for e in first] == [1, 2, 3]
    assert inputs.total == CHUNK and not inputs.finished  # one chunk read, not the list
    assert store.get(3).error == NOT_FETCHED
    store.add(PageRecord(id=2, url="http://h/2", status_code=200))
    inputs.recorded(2)
    inputs.finish()  # the entries never reached get their placeholders
    assert inputs.finished and inputs.total == 2 * CHUNK + 5 and len(store) == 2 * CHUNK + 5
    assert inputs.waiting == 2 * CHUNK + 4
    store.close()


def test_a_resumed_list_skips_what_was_recorded_and_drops_what_belongs_to_no_entry(tmp_path):
    store = FeatureStore(str(tmp_path / "s.sqlite"))
    store.add(PageRecord(id=1, url="http://h/1", status_code=200))  # done
    store.add(PageRecord(id=2, url="http://h/2", error=NOT_FETCHED))  # a placeholder: to do
    store.add(PageRecord(id=3, url="http://other/3", status_code=200))  # another list's line: to do
    store.add(PageRecord(id=9, url="http://h/discovered", status_code=200))  # numbered after an earlier list
    store.add(PageRecord(id=PROVISIONAL_ID_BASE + 1, url="http://h/found", status_code=200))  # found by this run
    inputs = InputRegistry(store, resumable=True)
    assert [e.id for e in inputs.pending(_entries(5))] == [2, 3, 4, 5]
    assert inputs.done_before == 1
    inputs.finish()
    assert list(store.ids()) == [1, 2, 3, 4, 5, PROVISIONAL_ID_BASE + 1]
    assert store.get(1).status_code == 200 and store.get(3).url == "http://h/3"
    store.close()


def test_without_a_list_the_store_is_left_as_it_is(tmp_path):
    store = FeatureStore(str(tmp_path / "s.sqlite"))
    store.add(PageRecord(id=4, url="http://h/4", status_code=200))
    InputRegistry(store, resumable=True).finish()
    assert list(store.ids()) == [4]
    store.close()
