"""Render each distinct page once: a page whose document is the same as one rendered before
(per-request noise masked) and whose render said what its HTML says takes that render; the host
sees one request for each document; a shell that scripts fill in is rendered on every host; a
non-HTML document is not rendered; ``--render-all`` renders every page, to the same result."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from scrapy_websim.core.served import masked_body, renders_as_served, response_key, spellings, swap_host
from scrapy_websim.render.once import CANDIDATE, DATA, NEVER, SHARED, UNJUDGED, Render, RenderShare
from scrapy_websim.testing.crawl import SAME, crawl
from scrapy_websim.testing.servers import have, nginx_server

HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")


# --- the key and the static test (pure) ---

def _page(host: str, token: str, clock: str, version: str = "1.24.0") -> bytes:
    return (f'<html><head><title>Welcome to {host}</title><meta name="csrf-token" content="{token}">'
            f'<script nonce="{token[:12]}">var x = 1;</script></head><body><h1>Welcome to nginx {version}</h1>'
            f'<p>Served by {host} at {clock}, request {token}.</p></body></html>').encode()


def test_per_request_noise_is_masked_from_the_key():
    a = _page("127.0.0.1:8080", "9f86d081884c7d659a2feaa0c55ad015", "Thu, 26 Nov 2026 19:19:52")
    b = _page("127.0.0.2:8081", "4e07408562bedb8b60ce05c1decfe3ad", "Fri, 27 Nov 2026 08:01:02")
    assert response_key(200, "text/html", a, ["127.0.0.1:8080", "127.0.0.1"]) == \
        response_key(200, "text/html", b, ["127.0.0.2:8081", "127.0.0.2"])
    assert b"9f86d081" not in masked_body(a, ["127.0.0.1:8080"])


def test_what_a_person_reads_is_never_masked():
    token, clock, hosts = "9f86d081884c7d659a2feaa0c55ad015", "19:19:52", ["h:1", "h"]
    key = response_key(200, "text/html", _page("h:1", token, clock), hosts)
    assert key != response_key(200, "text/html", _page("h:1", token, clock, version="1.24.1"), hosts)
    assert key != response_key(404, "text/html", _page("h:1", token, clock), hosts)
    assert key != response_key(200, "text/plain", _page("h:1", token, clock), hosts)
    assert response_key(200, "text/html", b"<p>Order 1234 shipped</p>") != \
        response_key(200, "text/html", b"<p>Order 1235 shipped</p>")
    # names in the text that look like tokens: two tickets, not one
    assert response_key(200, "text/html", b"<p>Drop CVE-2026-49975_1.patch, now upstream</p>") != \
        response_key(200, "text/html", b"<p>Drop CVE-2026-49975_2.patch, now upstream</p>")
    # a request id in the text and a session token in a link are noise
    assert response_key(200, "text/html", b"<a href='/x?sid=Zk3uP9qLm2Xw8Rt5Yb'>Request 9f86d081884c7d65</a>") == \
        response_key(200, "text/html", b"<a href='/x?sid=Ab7cD2eF9gH4iJ1kLm'>Request 4e07408562bedb8b</a>")


def test_a_render_that_changed_what_the_page_says_is_not_shared():
    served = "<html><body><p>Hello</p><table><tr><td>1</td></tr></table></body></html>"
    # the browser adds head and tbody: the same page
    assert renders_as_served(served, "<html><head></head><body><p>Hello</p><table><tbody><tr><td>1</td></tr>"
                                     "</tbody></table></body></html>")
    assert not renders_as_served("<html><body><div id=app>Loading</div></body></html>",
                                 "<html><body><div id=app><h1>Inbox</h1><p>3 messages</p></div></body></html>")
    assert not renders_as_served(served, served.replace("<p>Hello</p>", "<p>Hello</p>" + "<i></i>" * 30))
    assert not renders_as_served(served, served, "Old title", "New title")


def test_the_port_however_written_is_the_host_own_name():
    page = b"<address>Apache/2.4.57 (Debian) Server at 10.0.0.%d Port %d</address><p>localhost:%d</p>"
    assert response_key(404, "text/html", page % (5, 8080, 8080), ["10.0.0.5:8080", "10.0.0.5"]) == \
        response_key(404, "text/html", page % (6, 9090, 9090), ["10.0.0.6:9090", "10.0.0.6"])
    assert response_key(200, "text/html", b"<p>8080 items</p>", ["h:8080", "h"]) != \
        response_key(200, "text/html", b"<p>9090 items</p>", ["h:9090", "h"])
    assert swap_host("Server at 10.0.0.5 Port 8080", ("10.0.0.5:8080", "10.0.0.5"), ("10.0.0.6:9090", "10.0.0.6")) \
        == "Server at 10.0.0.6 Port 9090"


def test_an_echoed_path_is_the_request_own_name():
    page = "<h1>404</h1><p>The requested resource [{}] is not available</p>"
    a, b = spellings("http://h1:8080/old/index.html"), spellings("http://h2:8080/server-status")
    assert response_key(404, "text/html", page.format("/old/index.html").encode(), a) == \
        response_key(404, "text/html", page.format("/server-status").encode(), b)
    assert swap_host(page.format("/old/index.html"), a, b) == page.format("/server-status")
    # as Tomcat writes it
    assert response_key(404, "text/html", page.format("&#47;old&#47;index.html").encode(), a) == \
        response_key(404, "text/html", page.format("&#47;cgi-bin&#47;test.cgi").encode(),
                     spellings("http://h2:8080/cgi-bin/test.cgi"))
    # a short path is no echo: "/" and "/a" are everywhere in a page
    assert spellings("http://h/a")[2] == "" and swap_host("<a href='/a'>", spellings("http://h/a"),
                                                          spellings("http://h/b")) == "<a href='/a'>"


def test_a_proxy_user_and_password_become_its_authorization_header():
    from scrapy_websim.render.handler import _proxy_and_auth

    assert _proxy_and_auth("http://scanner:s%40cret@127.0.0.1:3128") == \
        ("http://127.0.0.1:3128", b"Basic " + base64.b64encode(b"scanner:s@cret"))
    assert _proxy_and_auth("http://127.0.0.1:3128") == ("http://127.0.0.1:3128", b"")
    assert _proxy_and_auth("") == ("", b"")


def test_swap_host_names_the_page_own_host():
    html = "<title>Welcome to 127.0.0.1:8080</title><p>127.0.0.1 says hi</p>"
    assert swap_host(html, ("127.0.0.1:8080", "127.0.0.1"), ("127.0.0.2:9090", "127.0.0.2")) == \
        "<title>Welcome to 127.0.0.2:9090</title><p>127.0.0.2 says hi</p>"


def test_share_waits_for_the_render_in_flight_and_stays_bounded():
    async def scenario():
        share = RenderShare(max_bytes=3000, max_spill_bytes=0)  # memory only
        assert share.begin(b"k") and not share.begin(b"k")
        assert not await share.wait(b"k", 0.01)  # not judged within the time: the caller renders
        waiter = asyncio.ensure_future(share.wait(b"k", 5))
        await asyncio.sleep(0)
        share.finish(b"k", SHARED, Render("http://a/", ("a", "a"), {"html": "x" * 1000, "screenshot": b""}))
        assert await waiter
        assert share.known(b"k")[0] == SHARED and share.known(b"k")[1].url == "http://a/"
        for n in range(5):  # 1256 bytes each: the oldest go first
            share.begin(bytes([n]))
            share.finish(bytes([n]), SHARED, Render("u", ("a", "a"), {"html": "y" * 1000}))
        assert share.bytes <= 3000 and share.known(b"k") == ("", None)
        share.begin(b"z")
        share.finish(b"z", judged=False)  # a failed render: nothing learnt
        assert share.known(b"z") == ("", None) and not share.rendering(b"z")
        share.begin(b"n")
        share.finish(b"n", NEVER, Render("u", ("a", "a")))  # never shared: nothing kept
        assert share.known(b"n") == (NEVER, None)
    asyncio.run(scenario())


def test_renders_beyond_memory_go_to_files_bounded_and_removed_at_close(tmp_path):
    """A fleet shows more things than fit in memory: the least recently used renders go to files
    (bounded too) and come back when a page needs them, so no thing is rendered twice for want of
    room; a disk without its reserve free keeps none."""
    import os

    def render(n):
        return Render(f"http://h{n}/", (f"h{n}", f"h{n}"), {"html": str(n) * 1000, "screenshot": b"s" * 500})

    async def scenario():
        share = RenderShare(max_bytes=5000, max_spill_bytes=8000)
        for n in range(8):  # 1756 bytes each: 2 in memory, 4 in files, the 2 oldest dropped
            share.begin(bytes([n]))
            share.finish(bytes([n]), SHARED, render(n))
        assert share.bytes <= 5000 and share.spilled_bytes <= 8000
        files = os.listdir(share._dir)
        assert len(files) == 4
        assert share.known(bytes([0])) == ("", None) and share.known(bytes([1])) == ("", None)
        state, back = share.known(bytes([2]))  # read back from its file, which is gone then
        assert state == SHARED and back.capture == render(2).capture and back.url == "http://h2/"
        assert len(os.listdir(share._dir)) == 3 + 1  # and the least recently used in memory went out
        share.close()
        assert share._dir is None and not any(p.name.startswith("websim-renders-") for p in tmp_path.iterdir())
        # the disk's reserve: nothing goes to a file, the oldest are dropped as before
        full = RenderShare(max_bytes=5000, disk_reserve=1 << 60)
        for n in range(4):
            full.begin(bytes([n]))
            full.finish(bytes([n]), SHARED, render(n))
        assert full.spilled_bytes == 0 and full.known(bytes([0])) == ("", None)
        full.close()
        # a capture that cannot be written (not picklable) is dropped, the crawl goes on
        odd = RenderShare(max_bytes=2000)
        for n in range(3):
            odd.begin(bytes([n]))
            bad = render(n)
            bad.capture["handle"] = lambda: None
            odd.finish(bytes([n]), SHARED, bad)
        assert odd.spilled_bytes == 0 and odd.known(bytes([0])) == ("", None) and odd.known(bytes([2]))[0] == SHARED
        odd.close()
    import tempfile
    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        asyncio.run(scenario())
    finally:
        tempfile.tempdir = old


def test_a_path_echoed_by_tomcat_is_masked_however_many_segments():
    page = "<h1>404</h1><p>The requested resource [{}] is not available</p>"
    a, b = spellings("http://a:1/robots.txt"), spellings("http://b:1/test.php")
    assert response_key(404, "text/html", page.format("&#47;robots.txt").encode(), a) == \
        response_key(404, "text/html", page.format("&#47;test.php").encode(), b)


def test_a_first_render_is_judged_only_when_a_second_page_with_its_key_comes():
    """A first render is kept unjudged with the document it was given (most keys of a site crawl
    never come again: judging them would be wasted); judging it lets the document go."""
    from scrapy_websim.render.handler import _settle

    served = "<html><head><title>Hi</title></head><body><p>Hello there, reader.</p></body></html>"
    changed = served.replace("</body>", "<p>Added by a script.</p></body>")
    same = Render("http://a/", ("a", "a"), {"html": served, "title": "Hi"}, served=served)
    scripted = Render("http://a/", ("a", "a"), {"html": changed, "title": "Hi"}, served=served)
    fetched_data = Render("http://a/", ("a", "a"), {"html": changed, "title": "Hi"}, served=served, scripted_data=True)
    assert (_settle(same), _settle(scripted), _settle(fetched_data)) == (SHARED, CANDIDATE, NEVER)

    async def scenario():
        share = RenderShare()
        share.begin(b"k")
        share.finish(b"k", UNJUDGED, same)
        size = share.bytes
        assert share.known(b"k") == (UNJUDGED, same) and size > len(served) * 2
        share.settle(b"k", SHARED, same)
        assert share.known(b"k") == (SHARED, same) and same.served == "" and share.bytes == size - len(served)
        share.begin(b"f")
        share.finish(b"f", UNJUDGED, fetched_data)
        share.settle(b"f", NEVER, fetched_data)
        assert share.known(b"f") == (NEVER, None) and share.bytes == size - len(served)
    asyncio.run(scenario())


def test_a_shell_whose_data_can_be_fetched_again_is_keyed_by_its_data():
    """A render whose script filled the page in from data it fetched is ``DATA`` when every data
    request can be fetched again (same origin, GET, not redirected, bounded): each page with its
    key is keyed by its own host's answers too, and one with the same answers takes it as a
    script's render without data (a second render on another host confirms it)."""
    from scrapy_websim.render.handler import _same_data, _settle
    from scrapy_websim.render.pagedata import MAX_DATA_BYTES, data_key

    a, b = "http://10.0.0.1:8080/console", "http://10.0.0.2:8080/console"
    answers_a = [("http://10.0.0.1:8080/api/host.json", 200, "application/json", b'{"name": "10.0.0.1", "pool": "a"}')]
    answers_b = [("http://10.0.0.2:8080/api/host.json", 200, "application/json", b'{"name": "10.0.0.2", "pool": "a"}')]
    data_a = data_key(answers_a, a)
    assert data_a is not None and data_a == data_key(answers_b, b)  # the host's own name masked
    assert data_a[0][0] == "/api/host.json"
    assert data_key([(u, s, t, body.replace(b'"a"', b'"b"')) for u, s, t, body in answers_b], b) != data_a
    assert data_key([(u, 404, t, body) for u, s, t, body in answers_b], b) != data_a
    assert data_key([("http://cdn.example/x.json", 200, "application/json", b"{}")], a) is None  # another origin
    assert data_key([(answers_a[0][0], 200, "text/plain", b"x" * (MAX_DATA_BYTES + 1))], a) is None
    assert data_key(answers_a + [(answers_a[0][0], 200, "application/json", b"{}")], a) is None  # polled: changes

    served = ("<html><head><title>Console</title></head><body><div id=app>Loading</div><script>go()</script>"
              "</body></html>")
    filled = served.replace("Loading", "Host 10.0.0.1 of pool a")

    def render(data):
        return Render(a, ("10.0.0.1:8080", "10.0.0.1"), {"html": filled, "title": "Console"}, served=served,
                      scripted_data=True, data=data)

    assert _settle(render(None)) == NEVER  # data that cannot be fetched again: every page rendered
    first = render(data_a)
    assert _settle(first) == DATA and first.scripted and first.scripts
    assert _settle(first, data_checked=True) == CANDIDATE  # the key scoped by the data: as without data
    share = RenderShare()
    share.found(first.scripts, True)
    assert _settle(render(data_a), share, data_checked=True) == SHARED
    assert _same_data(render(data_a), first) and not _same_data(render(None), first)
    assert not _same_data(render(data_key(answers_a[:0], a)), first)


def test_the_data_log_keeps_only_requests_that_can_be_asked_again():
    """The capture's data log (fed by Playwright's events) says None for a page with a request
    that cannot be asked again: a POST, an event stream or WebSocket, a redirected request, more
    than ``MAX_DATA_REQUESTS``, one that never finished; else the answers keyed."""
    from types import SimpleNamespace

    from scrapy_websim.render.pagedata import MAX_DATA_REQUESTS, DataLog

    page = "http://10.0.0.1/app"

    class Answer:
        status, headers = 200, {"content-type": "application/json"}

        async def body(self):
            return b'{"ok": true}'

    def request(url="http://10.0.0.1/api/a", method="GET", kind="fetch", redirected_from=None):
        async def response():
            return Answer()
        return SimpleNamespace(url=url, method=method, resource_type=kind, redirected_from=redirected_from,
                               response=response)

    async def logged(*requests, finish=True):
        log = DataLog()
        for r in requests:
            log.requested(r)
            if finish:
                log.finished(r)
        return await log.data(page)

    async def scenario():
        ok = await logged(request(), request("http://10.0.0.1/api/b?x=1", kind="xhr"))
        assert ok is not None and [p for p, _ in ok] == ["/api/a", "/api/b?x=1"]
        assert await logged(request(method="POST")) is None
        assert await logged(request(kind="eventsource")) is None
        assert await logged(request(redirected_from=request())) is None
        assert await logged(request(), finish=False) is None  # asked, never answered
        assert await logged(*[request(f"http://10.0.0.1/api/{i}") for i in range(MAX_DATA_REQUESTS + 1)]) is None
        assert await logged(request("http://10.0.0.9/api/a")) is None  # another origin
        log = DataLog()
        log.not_checkable()  # a WebSocket
        assert await log.data(page) is None
    asyncio.run(scenario())


def test_scripts_seen_doing_the_same_on_two_hosts_are_trusted_with_another_document():
    """A page whose scripts change it is rendered twice (on two hosts) before others take its
    render; once a script set did the same on two hosts, a first render of another document
    running those very scripts is taken at once. Scripts seen doing differently are never trusted."""
    from scrapy_websim.core.served import script_set
    from scrapy_websim.render.handler import _settle

    def page(title, text, scripts):
        return f"<html><head><title>{title}</title>{scripts}</head><body><p>{text}</p></body></html>"

    theme = '<script src="../_static/theme.js"></script><script>var host = "a:8000";</script>'
    first = page("Intro", "An introduction to the tool.", theme)
    other = page("Usage", "How to use the tool, with examples.", theme)
    elsewhere = page("Usage", "How to use the tool, with examples.",
                     '<script src="/docs/_static/theme.js?v=2"></script><script>var host = "a:8000";</script>')
    # the same file under another host and depth, the host's own name masked in inline code
    assert script_set(first, "http://a:8000/docs/x/intro.html", ("a:8000", "a")) == script_set(
        other.replace("a:8000", "b:9000"), "http://b:9000/docs/y/usage.html", ("b:9000", "b"))
    assert script_set(first, "http://a:8000/docs/x/intro.html") != script_set(elsewhere, "http://a:8000/docs/x/u.html")
    assert script_set(page("T", "No code here.", '<script type="application/ld+json">{}</script>'), "http://a/") == b""
    assert script_set(page("T", "A handler.", "").replace("<p>", '<p onclick="go()">'), "http://a/") != b""

    def render(html, url="http://a:8000/docs/x/intro.html"):
        changed = html.replace("</p>", " Shown by a script.</p>")
        return Render(url, ("a:8000", "a"), {"html": changed, "title": html.split("<title>")[1].split("<")[0]},
                      served=html)

    share = RenderShare()
    first_render = render(first)
    assert _settle(first_render, share) == CANDIDATE and not share.trusts(first_render.scripts)
    share.found(first_render.scripts, True)  # a second render on another host said the same
    assert _settle(render(other, "http://a:8000/docs/x/usage.html"), share) == SHARED
    assert _settle(render(elsewhere, "http://a:8000/docs/x/u.html"), share) == CANDIDATE  # other code
    share.found(first_render.scripts, False)  # once seen doing differently: never again
    share.found(first_render.scripts, True)
    assert _settle(render(other, "http://a:8000/docs/x/usage.html"), share) == CANDIDATE
    assert not share.trusts(b"")


# --- a crawl of three hosts ---

DEFAULT_PAGE = ("<html><head><title>Welcome to <!--# echo var=\"host\" --></title>"
                "<meta name=\"csrf-token\" content=\"<!--# echo var=\"request_id\" -->\"></head><body>"
                "<h1>Welcome to the appliance</h1><p>If you see this page, the web server is installed and working. "
                "Further configuration is required before this host serves anything.</p>"
                "<p>Generated <!--# echo var=\"date_local\" --> for <!--# echo var=\"host\" -->.</p>"
                "</body></html>")
# one shell on every host; its script fills in what the host's own data says (``/data``: each
# host's own; ``/fleet``: the same on every host, the host's own name in it)
SHELL = ("<html><head><title>Console</title></head><body><div id=app>Loading</div><script>"
         "fetch('/data').then(r => r.text()).then(t => { document.getElementById('app').innerHTML = "
         "'<h1>Console of ' + t + '</h1><p>' + ('Sensor readings of ' + t + ' for today. ').repeat(12) + '</p>'; });"
         "</script></body></html>")
TWIN = SHELL.replace("/data", "/fleet").replace("Console", "Fleet")
# a login page whose script turns its labels into placeholders, fetching nothing: the same on every
# host, but not what its HTML says
LOGIN = ("<html><head><title>Sign in</title></head><body><form><label for=u>Username</label><input id=u>"
         "<label for=p>Password</label><input id=p type=password><button>Sign in</button></form><script>"
         "for (const l of document.querySelectorAll('label')) { "
         "document.getElementById(l.htmlFor).placeholder = l.textContent; l.remove(); }</script></body></html>")
# one document for every path under /app/: its script shows the view its path names, fetching
# nothing (a client-side router): another path is another page, though the document is the same
ROUTER = ("<html><head><title>Router</title></head><body><div id=view>Loading</div><script>"
          "const views = {alpha: 'Alpha view: the first route, with a sentence of its own about alpha.', "
          "beta: 'Beta view: the second route, which says something else entirely about beta.'};"
          "document.getElementById('view').textContent = views[location.pathname.split('/').pop()] || 'No such view';"
          "</script></body></html>")
LOCATIONS = """
ssi on;
access_log {log} hostlog;
location = /data {{ default_type text/plain; return 200 "unit $unit"; }}
location = /fleet {{ default_type text/plain; return 200 "pool-a served by $server_addr"; }}
location = /go {{ return 302 /index.html; }}
location /app/ {{ try_files /router.html =404; }}
"""


HTTP = ("log_format hostlog '$server_addr $request_uri';\n"
        "map $server_addr $unit { 127.0.0.1 north; 127.0.0.2 south; default east; }")


def _run(tmp_path: Path, name: str, urls, extra=()):
    out = tmp_path / name
    out.mkdir()
    result = crawl(out, urls, extra=["--per-host", "2", *extra])
    stats = {key: int(value) for key, value in re.findall(r"'(websim/[a-z_]+)': (\d+)", result["proc"].stderr)}
    return result, stats


def _requests(log: Path) -> Counter:
    lines = log.read_text().split("\n") if log.exists() else []
    return Counter(line for line in lines if line)


@pytest.mark.crawl
@pytest.mark.skipif(not have("nginx"), reason="nginx not installed")
def test_each_distinct_page_is_rendered_once_and_results_equal_render_all(tmp_path):
    logs = {name: tmp_path / f"{name}.log" for name in ("once", "all")}
    results = {}
    for name, extra in (("once", ()), ("all", ("--render-all",))):
        locations = LOCATIONS.format(log=logs[name])
        files = {"index.html": DEFAULT_PAGE, "shell.html": SHELL, "login.html": LOGIN,
                 "notes.txt": "plain text notes\n" * 20, "router.html": ROUTER, "twin.html": TWIN}
        with nginx_server(locations=locations, files=files, http=HTTP, addresses=HOSTS) as base:
            port = base.rsplit(":", 1)[1]
            paths = ("index.html", "shell.html", "notes.txt", "go", "login.html", "app/alpha", "app/beta", "twin.html")
            urls = [f"http://{host}:{port}/{path}" for path in paths for host in HOSTS]
            results[name] = (*_run(tmp_path, name, urls, extra), port)
    (once, once_stats, port), (every, every_stats, _) = results["once"], results["all"]

    rows = {r["url"]: r for r in once["data"]["urls"]}
    assert len(rows) == 24
    index = [f"http://{h}:{port}/index.html" for h in HOSTS]
    go = [f"http://{h}:{port}/go" for h in HOSTS]
    # the default page with its token, date and host name: rendered once, taken by the other five
    # (the redirects end at it); each names its own host
    own = [u for u in index + go if not rows[u]["render_from"]]
    assert len(own) == 1 and own[0] in index
    assert all(rows[u]["render_from"] == own[0] for u in index + go if u != own[0])
    for host, url in zip(HOSTS, index):
        assert rows[url]["title"] == f"Welcome to {host}" and rows[url]["status_code"] == 200
    # the shell whose script fills in each host's own data: rendered on every host, and it says so
    shells = [f"http://{h}:{port}/shell.html" for h in HOSTS]
    assert all(rows[u]["render_from"] == "" for u in shells)
    assert {rows[u]["excerpt"].split(" Sensor")[0] for u in shells} == {
        "Console of unit north", "Console of unit south", "Console of unit east"}
    # the shell whose data is the same on every host once its host's name is masked: rendered on
    # two hosts (the second tells whether the scripts do the same with the same data), taken by the
    # third, which names its own host
    twins = [f"http://{h}:{port}/twin.html" for h in HOSTS]
    assert sum(1 for u in twins if not rows[u]["render_from"]) == 2
    assert all(rows[u]["render_from"] in ("", *twins) for u in twins)
    for host, url in zip(HOSTS, twins):
        assert rows[url]["excerpt"].startswith(f"Fleet of pool-a served by {host} Sensor"), rows[url]["excerpt"]
    # the login page: rendered on two hosts, which said the same, then taken by the third
    logins = [f"http://{h}:{port}/login.html" for h in HOSTS]
    assert sum(1 for u in logins if not rows[u]["render_from"]) == 2
    # the router's two views: rendered on two hosts and taken by the third, never by the other
    # path's pages (one document, but the script shows another view); the view whose render is
    # judged second may be taken after one render, its scripts seen doing the same on two hosts
    views = {}
    for view in ("alpha", "beta"):
        urls = [f"http://{h}:{port}/app/{view}" for h in HOSTS]
        views[view] = sum(1 for u in urls if not rows[u]["render_from"])
        assert all(rows[u]["render_from"] in ("", *urls) for u in urls)
        assert all(rows[u]["excerpt"].startswith(view.capitalize() + " view") for u in urls)
    assert sorted(views.values()) in ([1, 2], [2, 2]), views
    # the renders: the default page once, the shell three times, the login twice, the views three
    # or four times, the twin shell twice; the text file never
    assert once_stats.get("websim/renders") == 8 + sum(views.values()), once_stats
    assert once_stats.get("websim/renders_reused") == 13 - sum(views.values()), once_stats
    assert once_stats.get("websim/renders_not_needed") == 3, once_stats
    assert once_stats.get("websim/data_checked") == 4, once_stats  # the second and third page of each shell
    assert every_stats.get("websim/renders") == 24 and "websim/renders_reused" not in every_stats
    # the hosts saw one request per document (the redirect's hop included); a shell's data once
    # for its render and once for the check of a page that was not first
    requested = _requests(logs["once"])
    for host in HOSTS:
        for path in ("/index.html", "/shell.html", "/notes.txt", "/go", "/login.html", "/app/alpha", "/app/beta",
                     "/twin.html"):
            assert requested[f"{host} {path}"] == (2 if path == "/index.html" else 1), (host, path, requested)
    assert sum(requested[f"{host} /data"] for host in HOSTS) == 5, requested
    assert sum(requested[f"{host} /fleet"] for host in HOSTS) == 4, requested
    # the same result as rendering every page (another nginx, on another port)
    def same(result, port):
        rows = [json.loads(json.dumps({k: r[k] for k in SAME}).replace(f":{port}", ":PORT"))
                for r in result["data"]["urls"]]
        return {r["url"]: r for r in rows}
    assert same(once, port) == same(every, results["all"][2])
    assert all(row["render_from"] == "" for row in every["data"]["urls"])


COOKIES = ("<html><head><title>Cookies</title></head><body><p id=c>none</p><script>"
           "document.getElementById('c').textContent = 'cookies ' + document.cookie.split('; ').sort().join(' and ');"
           "</script></body></html>")
LINKED = ("<html><head><title>Linked</title></head><body><p>A page whose answer names two related files.</p>"
          "</body></html>")
HEADERS = """
access_log {log} hostlog;
location = /linked.html {{
    add_header Link "</a.css>; rel=preload; as=style"; add_header Link "</b.js>; rel=preload; as=script";
}}
location = /cookies.html {{ add_header Set-Cookie "first=1; Path=/"; add_header Set-Cookie "second=2; Path=/"; }}
"""


@pytest.mark.crawl
@pytest.mark.skipif(not have("nginx"), reason="nginx not installed")
def test_a_document_with_a_header_twice_is_given_to_the_browser_or_fetched_again(tmp_path):
    """A fetched document goes to the browser with one value per header name: two Link headers
    joined (a newline in a fulfilled header stalled the page until its timeout); a document
    that sets two cookies is fetched by the browser itself (its cookies cannot be joined), and
    both cookies are set."""
    log = tmp_path / "hosts.log"
    with nginx_server(locations=HEADERS.format(log=log), files={"linked.html": LINKED, "cookies.html": COOKIES},
                      http="log_format hostlog '$server_addr $request_uri';") as base:
        result, stats = _run(tmp_path, "crawl", [f"{base}/linked.html", f"{base}/cookies.html"])
    rows = {r["url"].rsplit("/", 1)[1]: r for r in result["data"]["urls"]}
    assert rows["linked.html"]["error"] == "" and rows["linked.html"]["title"] == "Linked", rows["linked.html"]
    assert rows["cookies.html"]["error"] == "" and rows["cookies.html"]["excerpt"] == "cookies first=1 and second=2"
    requested = _requests(log)
    assert requested["127.0.0.1 /linked.html"] == 1 and requested["127.0.0.1 /cookies.html"] == 2, requested
