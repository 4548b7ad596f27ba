"""The input list's entries in the record store, as the list is read: a list of a million lines is a
stream, never held (Scrapy-free).

:meth:`InputRegistry.pending` yields the entries still to fetch, one chunk of the list at a time:
each gets a placeholder record (``error`` :data:`NOT_FETCHED`) before it is handed out, so an
entry whose request is lost (dropped by a middleware, the crawl stopped) still has a record; an
entry that an earlier run of the same job recorded (its record's URL is the entry's line, its
``error`` not the placeholder's) is skipped. :meth:`InputRegistry.finish` stores the placeholders of
the entries the crawl never reached and removes the records of an earlier run that belong to no
entry of the list (a longer list, pages discovered by following links, numbered after the inputs).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Iterator, List, Optional

from scrapy_websim.core.store import FeatureStore, StoreWriteError
from scrapy_websim.core.types import PageRecord, clean_url

NOT_FETCHED = "not fetched: the crawl ended before this URL got a response"
#: Records at and above this id are pages discovered by following links (numbered after the inputs
#: at the end, see ``finalize.renumber_discovered``).
PROVISIONAL_ID_BASE = 1 << 40
#: Entries read and registered at a time.
CHUNK = 1000


class InputRegistry:
    """The inputs of one crawl in ``store``. ``resumable``: the store may hold an earlier run's
    records (a job folder). ``on_store_error`` is told when the store cannot be written (the
    registration goes on: the store keeps what it could not write)."""

    def __init__(self, store: FeatureStore, resumable: bool = False,
                 on_store_error: Optional[Callable[[StoreWriteError], None]] = None) -> None:
        self.store = store
        self.resumable = resumable
        self.on_store_error = on_store_error
        self.total = 0  #: entries read so far
        self.done_before = 0  #: of them, recorded by an earlier run
        self.last_id = 0
        self._state = bytearray()  # per input id: 1 its record is the placeholder, 2 it has its own
        self._source: Optional[Iterator[Any]] = None
        self._finished = False

    def pending(self, entries: Iterable[Any]) -> Iterator[Any]:
        """The entries of ``entries`` (in id order, ids from 1) that still need a request, each with
        its placeholder stored."""
        self._source = iter(entries)
        return self._read()

    def _read(self) -> Iterator[Any]:
        while self._source is not None:
            chunk = list(itertools.islice(self._source, CHUNK))
            if not chunk:
                self._finished = True
                return
            yield from self._register(chunk)

    def _register(self, chunk: List[Any]) -> List[Any]:
        kept = self._kept(chunk[0].id, chunk[-1].id + 1) if self.resumable else {}
        todo = []
        self._grow(chunk[-1].id)
        for entry in chunk:
            if self._state[entry.id] == 2:  # its record came before the list was read this far
                continue
            earlier = kept.get(entry.id)
            if earlier is not None and earlier[0] == clean_url(entry.raw) and not earlier[1]:
                self.done_before += 1
                continue
            self._write(self.store.add, PageRecord(id=entry.id, url=entry.raw, error=NOT_FETCHED,
                                                   expanded_from=getattr(entry, "expanded_from", "")))
            self._state[entry.id] = 1
            todo.append(entry)
        self.total += len(chunk)
        self.last_id = chunk[-1].id
        return todo

    def _kept(self, start: int, stop: int) -> dict:
        """``{id: (url, is the placeholder)}`` of the records an earlier run stored for these ids."""
        self._write(self.store.flush)
        return {page_id: (url, error == NOT_FETCHED) for page_id, url, error in self.store.url_errors(start, stop)}

    def _write(self, write: Callable[..., Any], *args: Any) -> None:
        try:
            write(*args)
        except StoreWriteError as exc:
            if self.on_store_error is None:
                raise
            self.on_store_error(exc)

    def _grow(self, page_id: int) -> None:
        if len(self._state) <= page_id:
            self._state.extend(bytes(page_id + 1 - len(self._state)))

    def recorded(self, page_id: int) -> None:
        """The input ``page_id`` got its record (its placeholder is replaced, or never stored)."""
        if 0 < page_id < PROVISIONAL_ID_BASE and page_id - len(self._state) < 1 << 24:  # an input's id
            self._grow(page_id)
            self._state[page_id] = 2

    @property
    def waiting(self) -> int:
        """Inputs read so far whose record is still the placeholder."""
        return self._state.count(1)

    @property
    def finished(self) -> bool:
        """The whole list was read."""
        return self._finished

    def finish(self) -> None:
        """Read the rest of the list (placeholders for what the crawl never reached), then remove the
        records of an earlier run above the last entry. Without a list (a spider of its own that
        records the pages it finds) the store is left as it is."""
        for _entry in self._read():
            pass
        if self.resumable and self._source is not None:  # a list was read (not another spider's pages)
            self._write(self.store.delete_range, self.last_id + 1, PROVISIONAL_ID_BASE)
        self._write(self.store.flush)
