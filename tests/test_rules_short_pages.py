"""Short pages that are content, not thin (T1): the few pages of one kind of a small site (people,
projects, a search's second page) and a form of the page's own (contact, report a problem); and the
thin pages that stay thin beside them (a lone placeholder, a copied placeholder, one field to fill).

Pages are built here and go through the features the pipeline computes; the last test runs
``websim cluster`` on a features file of them, as a crawl's end does.
"""

from __future__ import annotations

import json
import os

from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.match.template import templates_of_records
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.store import save_jsonl
from scrapy_websim.core.types import PageRecord
from scrapy_websim.testing.crawl import run_websim

SITE = "http://127.0.0.1:8000"

SKIN = """<!doctype html><html><head><title>{title} - Package News</title></head><body>
<header><nav><a href="/">Home</a> <a href="/news/">News</a> <a href="/people/">People</a>
<a href="/contact/">Contact</a></nav><form action="/search/"><input type="text" name="query"></form></header>
<main>{body}</main><footer>Package News, made with a CMS. <a href="/privacy/">Privacy</a></footer>
<!-- {pad} --></body></html>"""

PEOPLE = [("Ada Lovelace", "nginx"), ("Alan Turing", "curl"), ("Grace Hopper", "systemd"),
          ("Edsger Dijkstra", "apache2")]


def _page(title: str, body: str) -> str:
    return SKIN.format(title=title, body=body, pad="x" * 700)


def _person(name: str, package: str) -> str:
    return _page(name, f"<h1>{name}</h1><p>Debian uploader</p><p>Uploaded {package}.</p><h2>Posts</h2>"
                       f"<ul><li><a href='/news/{package}-1/'>{package} 1.2-1</a></li></ul>")


CONTACT = _page("Contact", "<h1>Contact</h1><p>Write to the editors.</p><form method='post'>"
                           "<label>Your name <input type='text' name='name'></label>"
                           "<label>Your e-mail address <input type='email' name='email'></label>"
                           "<label>Message <textarea name='message'></textarea></label>"
                           "<input type='submit' value='Send'></form>")
#: a placeholder that asks for one thing: still a thin page
SUBSCRIBE = _page("Soon", "<h1>Coming soon</h1><form><input type='email' name='email'>"
                          "<input type='submit' value='Notify me'></form>")
PLACEHOLDER = _page("Welcome", "<h1>Welcome</h1><p>This site is under construction.</p>")


def _record(page_id: int, url: str, html: str) -> PageRecord:
    rec = PageRecord(id=page_id, url=url, final_url=url, status_code=200, content_type="text/html",
                     html_len=len(html.encode()), rendered=True)
    rec.title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    compute_features(rec, html, None, FeatureParams())
    rec.phash = 0x5A5A5A5A5A5A5A5A
    return rec


def _label(rec: PageRecord, records) -> object:
    templates = templates_of_records(records)
    return special_label(rec, item=lambda: templates.is_item(rec))


def _people(n: int, site: str = SITE, first_id: int = 1):
    return [_record(first_id + i, f"{site}/people/{name.lower().replace(' ', '-')}/", _person(name, package))
            for i, (name, package) in enumerate(PEOPLE[:n])]


def test_the_few_pages_of_one_kind_of_a_small_site_are_content():
    """Three people pages of a small site, each a name and a link: the site's kind of page (its
    items), not thin, though three pages teach no template; two such pages are not yet a kind."""
    people = _people(3)
    assert all(p.text_len < 200 for p in people), "a person's page says a few words"
    assert [_label(p, people) for p in people] == [None] * 3
    two = _people(2)
    assert [_label(p, two) for p in two] == ["T1", "T1"]


def test_a_placeholder_is_thin_however_many_copies_of_it_a_site_serves():
    """Copies of one placeholder are one distinct page, not a kind of the site's pages; and a lone
    placeholder beside a site's people pages is no person's page."""
    copies = [_record(i + 1, f"{SITE}/{path}", PLACEHOLDER) for i, path in enumerate(("", "index", "home", "start"))]
    assert {_label(c, copies) for c in copies} == {"T1"}
    people = _people(4)
    lone = _record(50, f"{SITE}/about/", PLACEHOLDER)
    assert _label(lone, people + [lone]) == "T1"
    # two placeholders (one served at four URLs) and an article: two distinct pages of one kind,
    # however many URLs serve them, are not yet a kind of the site's pages
    other = _record(60, f"{SITE}/blog/", _page("Blog", "<h1>Blog</h1><p>Posts will appear here.</p>"))
    article = _record(61, f"{SITE}/story/", "<!doctype html><html><head><title>Story</title></head><body><article>"
                      + "<p>A long story of a site under construction, told in many words. </p>" * 8
                      + "</article></body></html>")
    site = copies + [other, article]
    assert {_label(p, site) for p in copies + [other]} == {"T1"}


def test_a_form_of_its_own_is_content_and_one_field_to_fill_is_thin():
    """A contact form says little besides its labels and is what its page is for: content. A
    "coming soon" page with one field to leave an address is a placeholder (T1); the site's
    search box in its header counts for neither."""
    contact = _record(1, f"{SITE}/contact/", CONTACT)
    assert contact.text_len < 200 and contact.signals["inputs"] == 3
    assert special_label(contact) is None
    subscribe = _record(2, f"{SITE}/soon/", SUBSCRIBE)
    assert subscribe.signals["inputs"] == 1
    assert special_label(subscribe) == "T1"


def test_websim_cluster_labels_a_small_sites_people_and_its_form_as_content(tmp_path):
    """The end of a crawl (``websim cluster`` on a features file): the people pages and the contact
    form get no label, the placeholder is T1."""
    records = _people(3) + [_record(10, f"{SITE}/contact/", CONTACT), _record(11, f"{SITE}/about/", PLACEHOLDER)]
    features = str(tmp_path / "features.jsonl")
    save_jsonl(iter(records), features)
    out = str(tmp_path / "result.json")
    proc = run_websim(["cluster", features, "-O", out], cwd=str(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(out, encoding="utf-8") as fh:
        rows = {row["url"]: row for row in json.load(fh)["urls"]}
    kinds = {url[len(SITE):]: row["cluster_kind"] or None for url, row in rows.items()}
    assert kinds["/about/"] == "T1"
    assert all(kinds[f"/people/{name.lower().replace(' ', '-')}/"] != "T1" for name, _ in PEOPLE[:3]), kinds
    assert kinds["/contact/"] != "T1", kinds
    assert os.path.exists(out)


REPORT = _page("{9} Tickets by sprint", "<h1>{9} Tickets by sprint</h1><form><label>Max items per page "
                                        "<input type='text' name='max' value='100'></label>"
                                        "<input type='submit' value='Update'></form>"
                                        "<p>Open tickets of each sprint.</p><div class='error'><p>Report "
                                        "execution failed: OperationalError: no such column: sprint</p>"
                                        "<pre>SELECT COUNT(*) FROM ( SELECT id AS ticket, summary, sprint "
                                        "FROM ticket WHERE status &lt;&gt; 'closed' ) AS tab</pre></div>"
                                        "<p>Note: See TracReports for help on using and creating reports.</p>")
EXCEPTION_DOC = _page("OperationalError", "<h1>OperationalError</h1><p>Exception raised for errors that are "
                                          "related to the database's operation and not necessarily under "
                                          "the control of the programmer, for example an unexpected "
                                          "disconnect occurs or the data source name is not found.</p>")


def test_a_report_whose_query_fails_is_an_error_page():
    """Status 200, the report's title and a program's error: "OperationalError: no such column"
    says "error" and "no such", two error phrases on a short page. A page about an exception that
    names it in its title and says one error phrase is documentation."""
    report = _record(1, f"{SITE}/report/9", REPORT)
    assert report.signals["kw"]["E3"] == [0, 0, 2]
    assert special_label(report) == "E3"
    doc = _record(2, f"{SITE}/library/operationalerror", EXCEPTION_DOC)
    assert doc.signals["kw"].get("E3", [0, 0, 0])[:2] == [0, 0]
    assert special_label(doc) != "E3"
