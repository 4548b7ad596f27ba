"""A client-rendered app that routes on the URL fragment, crawled with real Chromium.

The server sends one shell for every route (``/#/owls``, ``/#/herons``...); a script renders the
route's page after load. Different routes are different pages, the same route under two spellings
is one page, and an in-page anchor of a plain page is that page. One tab renders the routes one
after the other (``--per-host 1``), so each route after the first is a same-document navigation
for Chromium unless the tab loads it afresh.
"""

from __future__ import annotations

import json

import pytest

from scrapy_websim.testing.crawl import by_url, crawl
from scrapy_websim.testing.servers import have, nginx_server

pytestmark = [pytest.mark.crawl, pytest.mark.skipif(not have("nginx"), reason="nginx not installed")]

ROUTES = {
    "/": ("Field guide", "This guide covers the birds of the river valley, one family a page, with their habits, "
                         "their calls and the places along the water where they are best watched in each season."),
    "/owls": ("Owls", "Owls hunt at night and rest by day in dense conifers or old barns. Their soft feathers make "
                      "their flight almost silent, and the tawny owl calls from the park from October onwards."),
    "/herons": ("Herons", "Herons stand motionless at the edge of the water and strike at fish with their long necks. "
                          "The grey heron nests in a colony high in the old trees, back at its nest each February."),
    "/finches": ("Finches", "Finches crack seeds with strong conical bills. Goldfinches feed on thistle heads along "
                            "the towpath in late summer, and bramblings join the flocks under the beeches in winter."),
}

SHELL = """<!doctype html><html><head><title>Field guide</title></head><body>
<nav><a href="#/">Home</a> <a href="#/owls">Owls</a> <a href="#/herons">Herons</a> <a href="#/finches">Finches</a></nav>
<main id="app">Loading...</main>
<script>
var pages = %s;
function render() {
  var route = location.hash.replace(/^#/, "") || "/";
  var p = pages[route] || ["Not found", "No page at " + route];
  setTimeout(function () {
    document.getElementById("app").innerHTML =
      "<h1>" + p[0] + "</h1>" + ("<p>" + p[1] + "</p>").repeat(4);
  }, 200);
}
window.addEventListener("hashchange", render);
render();
</script></body></html>"""

GUIDE = ("<html><head><title>Usage</title></head><body><h1>Usage</h1><h2 id=usage>Running it</h2>"
         + "<p>Install the package, then run the command on a list of URLs and read the result file.</p>" * 12
         + "</body></html>")


def test_hash_routes_are_pages_when_they_render_different_content(tmp_path):
    files = {"index.html": SHELL % json.dumps({k: list(v) for k, v in ROUTES.items()}), "guide.html": GUIDE}
    with nginx_server(files=files) as base:
        urls = [f"{base}/#/owls", f"{base}/#/herons", f"{base}/#/finches", f"{base}/#/", f"{base}/",
                f"{base}/index.html#/owls", f"{base}/guide.html#usage", f"{base}/guide.html"]
        out = crawl(tmp_path, urls, extra=["--per-host", "1"])
    rows = by_url(out["data"])
    assert set(rows) == set(urls)
    # every route loaded as a page of its own (a same-document navigation has no response)
    assert all(r["status_code"] == 200 and r["content_type"] == "text/html" for r in rows.values())
    cluster = {u: rows[u]["cluster_id"] for u in urls}
    groups = {}
    for u, c in cluster.items():
        groups.setdefault(c or u, set()).add(u)
    assert sorted(map(sorted, groups.values())) == sorted(map(sorted, [
        {f"{base}/#/owls", f"{base}/index.html#/owls"},
        {f"{base}/#/herons"}, {f"{base}/#/finches"},
        {f"{base}/#/", f"{base}/"},
        {f"{base}/guide.html#usage", f"{base}/guide.html"},
    ]))
    assert rows[f"{base}/#/herons"]["cluster_id"] == "" and rows[f"{base}/#/finches"]["cluster_id"] == ""


def test_same_document_is_a_fragment_change_only():
    from scrapy_websim.render.capture import same_document

    assert same_document("http://h/#/owls", "http://h/#/herons")
    assert same_document("http://h/", "http://h/#/")
    assert same_document("http://h/a#x", "http://h/a")
    assert not same_document("http://h/a", "http://h/a")  # a plain reload loads the page anyway
    assert not same_document("http://h/a#x", "http://h/b#x")
    assert not same_document("about:blank", "http://h/#/owls")


def test_follow_keeps_route_fragments_and_drops_anchors(tmp_path):
    """``--follow`` from the app's root discovers each route its menu links to as a page of its own,
    while a link to an in-page anchor (``guide.html#usage``) is the page without the anchor."""
    shell = SHELL.replace('<a href="#/finches">Finches</a>',
                          '<a href="#/finches">Finches</a> <a href="guide.html#usage">Usage</a>')
    files = {"index.html": shell % json.dumps({k: list(v) for k, v in ROUTES.items()}), "guide.html": GUIDE}
    with nginx_server(files=files) as base:
        out = crawl(tmp_path, [f"{base}/"], extra=["--follow", "--per-host", "1"])
    rows = by_url(out["data"])
    assert set(rows) == {f"{base}/", f"{base}/#/", f"{base}/#/owls", f"{base}/#/herons", f"{base}/#/finches",
                         f"{base}/guide.html"}
    assert all(r["status_code"] == 200 for r in rows.values())
    # each route rendered its own page: the three animal routes are pages of their own
    for route in ("owls", "herons", "finches"):
        assert rows[f"{base}/#/{route}"]["cluster_id"] == "", rows[f"{base}/#/{route}"]
    assert rows[f"{base}/#/"]["cluster_id"] and rows[f"{base}/#/"]["cluster_id"] == rows[f"{base}/"]["cluster_id"]


def test_link_target_keeps_a_route_fragment_only():
    from scrapy_websim.core.urls.normalize import link_target

    assert link_target("http://h/#/owls") == "http://h/#/owls"
    assert link_target("http://h/app#!/users/3") == "http://h/app#!/users/3"
    assert link_target("http://h/app#!users") == "http://h/app#!users"
    assert link_target("http://h/guide.html#usage") == "http://h/guide.html"
    assert link_target("http://h/guide.html#") == "http://h/guide.html"
    assert link_target("http://h/a?x=1#section-2") == "http://h/a?x=1"
    assert link_target("http://h/a") == "http://h/a"
