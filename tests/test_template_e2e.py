"""Items of one application template, crawled with Chromium from a real nginx: every ticket its own
page, its copies with it, the application's error template one cluster, short rows content.

The tickets are an issue tracker's (``tests/test_template.py``'s template: field labels, a workflow
form and help text every ticket repeats, and one real sentence of a Debian changelog of its own),
named by a hash, so no title, heading or URL word tells two apart: compared whole, two tickets are
mostly the same text. A mirror on another port serves three of them again, and one is asked for
with a tracking parameter. The tracker answers a missing ticket with one 404 template and two
messages, and has rows of a table whose few words are all they say.
"""

from __future__ import annotations

import collections
import contextlib

import pytest

from scrapy_websim.testing.crawl import by_url, crawl
from scrapy_websim.testing.servers import have, nginx_server
from tests.test_template import SHORT, TICKET, _sentences, _uid

pytestmark = [pytest.mark.crawl, pytest.mark.skipif(not have("nginx"), reason="needs nginx (scripts/setup.sh)")]

NOT_FOUND = ("<!doctype html><html><head><title>Error - Bench Tracker</title></head><body>"
             "<div id=\"header\"><a href=\"/\">Bench Tracker</a> <a href=\"/login\">Login</a></div>"
             "<div id=\"content\" class=\"error\"><h1>Error: Not Found</h1><p>{message}</p></div>"
             "<div id=\"footer\">Powered by a tracker</div></body></html>")
LOCATIONS = """
location /tktview/ { default_type text/html; }
location /rows/ { default_type text/html; }
location = /tktview/missing1 { default_type text/html; return 404 '%s'; }
location = /tktview/missing2 { default_type text/html; return 404 '%s'; }
location = /report/99 { default_type text/html; return 404 '%s'; }
""" % (NOT_FOUND.format(message="Ticket missing1 does not exist."),
       NOT_FOUND.format(message="Ticket missing2 does not exist."),
       NOT_FOUND.format(message="Report 99 does not exist: no report has that number."))


@pytest.fixture(scope="module")
def tracker_crawl(tmp_path_factory):
    sentences = _sentences(24)
    tickets = {f"tktview/{_uid(s)}": TICKET.format(desc=s) for s in sentences}
    rows = {f"rows/{i}": SHORT.format(t=f"row {i}", name=f"package{i}", v=f"1.{i}") for i in range(8)}
    mirrored = list(tickets)[:3]
    with contextlib.ExitStack() as stack:
        site = stack.enter_context(nginx_server(LOCATIONS, {**tickets, **rows}))
        mirror = stack.enter_context(nginx_server("location /tktview/ { default_type text/html; }",
                                                  {p: tickets[p] for p in mirrored}))
        urls = ([f"{site}/{p}" for p in tickets] + [f"{site}/{p}" for p in rows]
                + [f"{mirror}/{p}" for p in mirrored] + [f"{site}/{list(tickets)[4]}?utm_source=mail"]
                + [f"{site}/tktview/missing1", f"{site}/tktview/missing2", f"{site}/report/99"])
        out = crawl(tmp_path_factory.mktemp("tracker"), urls, extra=["-t", "6"], timeout=420)
        yield {"site": site, "mirror": mirror, "tickets": list(tickets), "mirrored": mirrored, "rows": list(rows),
               "urls": urls, "result": by_url(out["data"])}


def test_every_ticket_is_a_page_of_its_own_and_its_copies_join_it(tracker_crawl):
    result, site, mirror = tracker_crawl["result"], tracker_crawl["site"], tracker_crawl["mirror"]
    assert set(result) == set(tracker_crawl["urls"])
    # a page alone has no cluster id; one with a copy shares its copy's
    clusters = collections.Counter(result[f"{site}/{p}"]["cluster_id"] for p in tracker_crawl["tickets"])
    assert all(clusters[c] == 1 for c in clusters if c), f"different tickets merged: {clusters.most_common(3)}"
    labelled = [(p, result[f"{site}/{p}"]["cluster_kind"]) for p in tracker_crawl["tickets"]
                if result[f"{site}/{p}"]["cluster_kind"] not in ("content", "")]
    assert not labelled, labelled
    for p in tracker_crawl["mirrored"]:
        assert result[f"{site}/{p}"]["cluster_id"], p
        assert result[f"{mirror}/{p}"]["cluster_id"] == result[f"{site}/{p}"]["cluster_id"], p
    variant = f"{site}/{tracker_crawl['tickets'][4]}?utm_source=mail"
    original = result[f"{site}/{tracker_crawl['tickets'][4]}"]
    assert original["cluster_id"] and result[variant]["cluster_id"] == original["cluster_id"]
    # what is left after keeping canonicals and lone pages: each ticket once
    kept = [u for u, r in result.items()
            if "/tktview/" in u and "missing" not in u and (r["is_canonical"] or not r["cluster_id"])]
    assert len(kept) == len(tracker_crawl["tickets"]), "one page per ticket kept: none lost, none twice"


def test_the_error_template_is_one_cluster_whatever_its_message(tracker_crawl):
    result, site = tracker_crawl["result"], tracker_crawl["site"]
    errors = [result[f"{site}/{p}"] for p in ("tktview/missing1", "tktview/missing2", "report/99")]
    assert {r["cluster_kind"] for r in errors} == {"E3"}, [(r["url"], r["cluster_kind"], r["status_code"])
                                                           for r in errors]
    assert len({r["cluster_id"] for r in errors}) == 1


def test_short_rows_of_a_table_are_content_each_its_own(tracker_crawl):
    result, site = tracker_crawl["result"], tracker_crawl["site"]
    rows = [result[f"{site}/{p}"] for p in tracker_crawl["rows"]]
    assert not [r["url"] for r in rows if r["cluster_kind"] == "T1"], "rows of a site's table are not thin pages"
    assert not [r["url"] for r in rows if r["cluster_id"]], "each row alone"
