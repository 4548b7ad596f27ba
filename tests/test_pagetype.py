import gzip
from pathlib import Path

import lxml.html
import pytest

from scrapy_websim.core.page.pagetype import PAGE_TYPES, page_features, page_type
from scrapy_websim.core.params.page import PageTypeParams

DATA = Path(__file__).parent / "data" / "pagetype"

EXPECTED = {
    "pydoc-py-modindex.html.gz": "list",
    "pydoc-genindex-Q.html.gz": "list",
    "pydoc-library-functional.html.gz": "list",
    "pydoc-library-bisect.html.gz": "detail",
    "article-82b6d780.html.gz": "detail",
    "article-e7994d55.html.gz": "detail",
}


def load(name):
    return lxml.html.document_fromstring(gzip.decompress((DATA / name).read_bytes()))


@pytest.mark.parametrize("name,expected", sorted(EXPECTED.items()))
def test_saved_real_pages(name, expected):
    doc = load(name)
    before = lxml.html.tostring(doc)
    assert page_type(doc) == expected
    assert lxml.html.tostring(doc) == before  # not modified


def test_main_text_len_caps_running_text():
    doc = load("article-82b6d780.html.gz")
    assert page_type(doc, main_text_len=5000) == "detail"
    # The extractor found no main text: the page is not called a detail page.
    assert page_type(doc, main_text_len=0) != "detail"


def _page(body):
    return lxml.html.document_fromstring(f"<html><head><title>t</title></head><body>{body}</body></html>")


NAV = "<nav><ul>" + "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(30)) + "</ul></nav>"
PROSE = "Running text of the article that goes on for a while and says something useful. " * 3


def test_detail_with_big_menu_is_detail():
    doc = _page(NAV + "<article><h1>Title</h1>" + f"<p>{PROSE}</p>" * 5 + "</article>" + NAV)
    feats = page_features(doc)
    assert feats["list_items"] == 0  # menus are furniture
    assert page_type(doc) == "detail"


def test_teaser_list_is_list():
    items = "".join(
        f"<div class='teaser'><h3><a href='/a{i}'>Headline number {i} of the day</a></h3>"
        f"<p>Short summary {i}.</p></div>"
        for i in range(20)
    )
    doc = _page(NAV + f"<main>{items}</main>")
    feats = page_features(doc)
    assert feats["list_items"] == 20
    assert page_type(doc) == "list"


def test_paragraphs_with_inline_links_are_not_items():
    paras = "".join(f"<p>{PROSE} see <a href='/x{i}'>this</a> too.</p>" for i in range(8))
    doc = _page(f"<div class='content'>{paras}</div>")
    assert page_features(doc)["list_items"] == 0
    assert page_type(doc) == "detail"


def test_sidebar_class_on_article_wrapper_does_not_hide_article():
    doc = _page(NAV + "<div class='layout with-sidebar'>" + f"<p>{PROSE}</p>" * 6 + "</div>")
    assert page_type(doc) == "detail"


def test_thin_and_empty_pages_are_unknown():
    assert page_type(_page("<p>Not found.</p>")) == "unknown"
    assert page_type(_page("")) == "unknown"
    assert page_type(lxml.html.fragment_fromstring("<div>x</div>")) == "unknown"
    assert set(PAGE_TYPES) == {"list", "detail", "unknown"}


def test_deep_page_does_not_recurse_and_is_bounded():
    deep = "<div>" * 5000 + f"<p>{PROSE}</p>" * 3 + "</div>" * 5000
    assert page_type(_page(deep)) in PAGE_TYPES
    wide = "".join(f"<li><a href='/{i}'>x{i}</a></li>" for i in range(3000))
    feats = page_features(_page(f"<ul>{wide}</ul>"), PageTypeParams(max_nodes=1000))
    assert feats["truncated"] == 1


def test_params_validate():
    assert PageTypeParams().validate() == PageTypeParams()
    for name, bad in [
        ("min_block_chars", 0),
        ("max_block_link_density", 1.5),
        ("detail_min_running_chars", -1),
        ("list_min_items", 0),
        ("list_min_share", 2.0),
        ("min_item_link_share", -0.1),
        ("furniture_max_prose_blocks", 0),
        ("min_repeat", 1),
        ("max_nodes", 10),
        ("list_min_items", True),
    ]:
        with pytest.raises(ValueError, match=name):
            PageTypeParams(**{name: bad}).validate()
