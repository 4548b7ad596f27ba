"""Per-host politeness at websim's defaults (scrapy_websim.crawler.perhost) and the early end of the
stable-page wait (render/capture.py): a host's limit rises only while it answers as fast, never
past WEBSIM_PER_HOST_MAX; the user's own per-host settings turn the rise off; a page that will
still change (a timer due soon, a fetch after load) is waited for."""

from __future__ import annotations

import argparse
import http.server
import re
import threading
import time

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings

from scrapy_websim.commands.crawl import add_scan_options, scan_settings_from_args
from scrapy_websim.config import WebsimConfig
from scrapy_websim.crawler.addon import Addon
from scrapy_websim.crawler.perhost import PER_HOST_START, HostRamp, PerHostRamp, ramp_allowed
from scrapy_websim.testing.crawl import crawl

# --- the rule of one host ---

def test_the_limit_rises_one_per_round_answered_as_fast_while_pages_wait_up_to_the_ceiling():
    ramp = HostRamp(start=2, ceiling=4)
    assert [ramp.answered(0.010, 200, waiting=True) for _ in range(2)] == [2, 3]  # a round of 2 pages
    assert [ramp.answered(0.012, 200, waiting=True) for _ in range(3)] == [3, 3, 4]
    assert [ramp.answered(0.011, 200, waiting=True) for _ in range(8)] == [4] * 8  # the ceiling


def test_no_rise_without_waiting_pages_or_when_answers_get_slower():
    ramp = HostRamp(start=2, ceiling=8)
    assert [ramp.answered(0.010, 200, waiting=False) for _ in range(4)] == [2, 2, 2, 2]
    ramp = HostRamp(start=2, ceiling=8)
    ramp.answered(0.010, 200, waiting=True), ramp.answered(0.010, 200, waiting=True)  # best round: 10 ms
    assert ramp.limit == 3
    assert [ramp.answered(0.100, 200, waiting=True) for _ in range(3)] == [3, 3, 3]  # 100 ms: not as fast
    assert [ramp.answered(0.300, 200, waiting=True) for _ in range(3)] == [3, 3, 2]  # 300 ms: slower, one back


def test_overload_answers_and_failures_halve_the_limit():
    ramp = HostRamp(start=2, ceiling=8)
    for _ in range(2 + 3 + 4 + 5):
        ramp.answered(0.01, 200, waiting=True)
    assert ramp.limit == 6
    assert ramp.answered(0.01, 503, waiting=True) == 3
    assert ramp.answered(0.01, 429, waiting=True) == 1
    assert ramp.failed() == 1  # never below one page


# --- the user's settings win (settings level) ---

def _settings(**user):
    settings = Settings()
    settings.setdict(user, priority="project")
    # a browser path, so that the add-on does not look for one
    settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", {"executable_path": "/bin/true"}, priority="project")
    Addon().update_settings(settings)
    return settings


def _from_cli(*argv):
    parser = argparse.ArgumentParser()
    add_scan_options(parser)
    return scan_settings_from_args(parser, parser.parse_args(list(argv)))


def test_at_the_defaults_the_limit_starts_at_two_and_rises():
    settings = _settings()
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == PER_HOST_START == 2
    assert PerHostRamp in settings.getdict("EXTENSIONS")
    assert _ramp_allowed(settings)


@pytest.mark.parametrize("argv,name,value", [
    (["--per-host", "3"], "CONCURRENT_REQUESTS_PER_DOMAIN", 3),
    (["--per-host", "2"], "CONCURRENT_REQUESTS_PER_DOMAIN", 2),  # the same number as the start, still fixed
    (["--delay", "0.5"], "DOWNLOAD_DELAY", 0.5),
    (["--delay", "0"], "DOWNLOAD_DELAY", 0),
    (["--autothrottle"], "AUTOTHROTTLE_ENABLED", True),
])
def test_the_users_command_line_choice_turns_the_rise_off_and_keeps_its_value(argv, name, value):
    settings = _settings(**_from_cli(*argv))
    assert settings[name] == value
    assert not _ramp_allowed(settings)
    fixed = value if name == "CONCURRENT_REQUESTS_PER_DOMAIN" else 2
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == fixed


@pytest.mark.parametrize("user", [{"CONCURRENT_REQUESTS_PER_DOMAIN": 8}, {"CONCURRENT_REQUESTS_PER_IP": 1},
                                  {"DOWNLOAD_DELAY": 1}, {"AUTOTHROTTLE_ENABLED": True},
                                  {"WEBSIM_PER_HOST_MAX": 2}])
def test_the_users_project_settings_turn_the_rise_off(user):
    settings = _settings(**user)
    assert not _ramp_allowed(settings)
    if "CONCURRENT_REQUESTS_PER_DOMAIN" in user:
        assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 8


def _ramp_allowed(settings):
    return ramp_allowed(settings, WebsimConfig.from_settings(settings).per_host_max)


def test_a_ceiling_below_the_start_is_the_limit():
    settings = _settings(WEBSIM_PER_HOST_MAX=1)
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1 and not _ramp_allowed(settings)


def test_the_extension_declines_when_the_user_chose():
    """The extension itself is not configured (NotConfigured) with the user's setting."""
    class Crawler:
        settings = _settings(CONCURRENT_REQUESTS_PER_DOMAIN=4)

    with pytest.raises(NotConfigured):
        PerHostRamp.from_crawler(Crawler())


# --- a real crawl: the bound holds, late pages are waited for, done pages end early ---

PAGE = ("<html><head><title>P{i}</title></head><body><h1>Page {i}</h1><p>" + "Words of a page. " * 40
        + "</p></body></html>")
LATE_TIMER = ("<html><head><title>Loading</title></head><body><p>wait</p><script>addEventListener('load', () => "
              "setTimeout(() => { document.title = 'Built by a timer'; "
              "document.body.innerHTML = '<h1>Late</h1>'; }, 350));"
              "</script></body></html>")
LATE_FETCH = ("<html><head><title>Loading</title></head><body><p>wait</p><script>addEventListener('load', () => "
              "fetch('/slow.json').then((r) => r.json()).then((d) => { document.title = d.title; }));"
              "</script></body></html>")


class _Host(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.pages_now = 0
        self.pages_max = 0


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        server = self.server
        if self.path == "/slow.json":
            time.sleep(0.6)
            return self._send(b'{"title": "Built from a fetch"}', "application/json")
        if self.path == "/timer.html":
            return self._send(LATE_TIMER.encode(), "text/html")
        if self.path == "/fetch.html":
            return self._send(LATE_FETCH.encode(), "text/html")
        match = re.fullmatch(r"/p(\d+)\.html", self.path)
        if not match:
            return self._send(b"not found", "text/plain", 404)
        with server.lock:
            server.pages_now += 1
            server.pages_max = max(server.pages_max, server.pages_now)
        try:
            time.sleep(0.05)  # pages of one host overlap while they are answered
            self._send(PAGE.format(i=match.group(1)).encode(), "text/html")
        finally:
            with server.lock:
                server.pages_now -= 1

    def _send(self, body, ctype, status=200):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def host():
    server = _Host()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.crawl
def test_one_host_at_the_defaults_never_gets_more_than_the_ceiling(tmp_path, host):
    server, base = host
    pages = [f"{base}/p{i}.html" for i in range(30)]
    result = crawl(tmp_path, pages, timeout=240, extra=["-s", "WEBSIM_PER_HOST_MAX=3"])
    assert [r["title"] for r in result["data"]["urls"]] == [f"P{i}" for i in range(30)]
    assert 1 <= server.pages_max <= 3  # WEBSIM_PER_HOST_MAX, whatever the host's answers
    stats = result["proc"].stderr
    reached = re.search(r"'websim/per_host_max': (\d+)", stats)
    assert reached is None or int(reached.group(1)) <= 3
    early = re.search(r"'websim/stable_early': (\d+)", stats)
    assert early and int(early.group(1)) >= 15  # static pages: no request, no timer, load fired


@pytest.mark.crawl
def test_pages_that_still_change_after_load_are_waited_for(tmp_path, host):
    """A timer due 350 ms after load and a fetch answered 600 ms after load build the page; a
    static page between them ends its wait early. One page at a time, so each page's own timing."""
    _server, base = host
    urls = [f"{base}/timer.html", f"{base}/p1.html", f"{base}/fetch.html", f"{base}/timer.html"]
    result = crawl(tmp_path, urls, extra=["--per-host", "1"])
    assert [r["title"] for r in result["data"]["urls"]] == [
        "Built by a timer", "P1", "Built from a fetch", "Built by a timer"]
    early = re.search(r"'websim/stable_early': (\d+)", result["proc"].stderr)
    assert early and int(early.group(1)) >= 1
