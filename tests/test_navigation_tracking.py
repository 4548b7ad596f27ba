"""The order in which a page's navigation events arrive does not change what its record says.

``NetworkTracker`` is fed Playwright's page events in the orders a loaded machine produces them
(stand-ins for the page, its requests and responses: the events are what is tested, and the
crawls of ``tests/test_navigation_errors.py`` check the same with real Chromium, where the order
depends on timing): the document a script's navigation cut off failing after the navigation it
started, and the guard's answer arriving before the page has committed to it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from scrapy_websim.render.capture import NetworkTracker, _trackers, navigation_failure, note_blocked
from scrapy_websim.render.guard import ERROR_HEADER, GUARD_TOKEN


class _Page:
    def __init__(self, url: str) -> None:
        self.url = url
        self.main_frame = object()
        self.handlers: Dict[str, List[Callable[[Any], None]]] = {}

    def on(self, event: str, handler: Callable[[Any], None]) -> None:
        self.handlers.setdefault(event, []).append(handler)

    def emit(self, event: str, arg: Any) -> None:
        for handler in self.handlers.get(event, []):
            handler(arg)


class _Request:
    def __init__(self, page: _Page, url: str, failure: str = "") -> None:
        self.url, self.frame, self.failure = url, page.main_frame, failure

    def is_navigation_request(self) -> bool:
        return True


class _Response:
    def __init__(self, request: _Request, status: int, headers: Dict[str, str]) -> None:
        self.request, self.frame, self.url = request, request.frame, request.url
        self.status, self.headers = status, headers


def test_a_document_cut_off_by_its_own_navigation_does_not_hide_why_that_navigation_failed():
    page = _Page("http://127.0.0.1:8000/js-denied")
    tracker = _trackers[page] = NetworkTracker(page)
    first = _Request(page, "http://127.0.0.1:8000/js-denied")
    page.emit("request", first)
    page.emit("response", _Response(first, 200, {"content-type": "text/html"}))
    moved = _Request(page, "http://127.0.0.2:8000/inside", failure="net::ERR_FAILED")
    page.emit("request", moved)
    why = "blocked: 127.0.0.2 (in 127.0.0.2/32, WEBSIM_DENY_NETWORKS)"
    note_blocked(page, moved.url, why)
    page.emit("requestfailed", moved)
    first.failure = "net::ERR_ABORTED"  # the first document's loading, cut off by the script, ends after
    page.emit("requestfailed", first)
    page.url = "chrome-error://chromewebdata/"
    assert navigation_failure(page, tracker) == (moved.url, why)


def test_the_guards_answer_is_a_failure_before_the_page_commits_to_it():
    page = _Page("http://127.0.0.1:8000/js-closed")
    tracker = _trackers[page] = NetworkTracker(page)
    first = _Request(page, page.url)
    page.emit("request", first)
    page.emit("response", _Response(first, 200, {"content-type": "text/html"}))
    assert navigation_failure(page, tracker) is None
    gone = _Request(page, "http://127.0.0.1:9/gone")
    page.emit("request", gone)
    refused = {ERROR_HEADER.lower(): f"{GUARD_TOKEN} connection refused (127.0.0.1:9)"}
    page.emit("response", _Response(gone, 502, refused))
    # page.url still says the first document: Chromium has not committed the guard's page yet
    assert navigation_failure(page, tracker) == (gone.url, "connection refused (127.0.0.1:9)")
    page.url = gone.url
    assert navigation_failure(page, tracker) == (gone.url, "connection refused (127.0.0.1:9)")


def test_a_page_that_moves_on_to_a_good_page_is_its_own():
    page = _Page("http://127.0.0.1:8000/moves")
    tracker = _trackers[page] = NetworkTracker(page)
    first = _Request(page, page.url)
    page.emit("request", first)
    page.emit("response", _Response(first, 200, {"content-type": "text/html"}))
    there = _Request(page, "http://127.0.0.1:8000/there")
    page.emit("request", there)
    first.failure = "net::ERR_ABORTED"
    page.emit("requestfailed", first)  # cut off by the navigation, which then succeeds
    page.emit("response", _Response(there, 200, {"content-type": "text/html"}))
    page.url = there.url
    assert navigation_failure(page, tracker) is None
