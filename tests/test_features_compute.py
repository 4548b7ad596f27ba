"""compute_features gives exactly what each feature module gives on its own parse."""

import gzip
from pathlib import Path

import lxml.html
import pytest

from scrapy_websim.core import fingerprints
from scrapy_websim.core.features import FeatureParams, compute_features, content_text, first_heading, shown_fields
from scrapy_websim.core.page import dom, lcs, pagetype, text
from scrapy_websim.core.rules import signals
from scrapy_websim.core.types import PageRecord

PAGES = sorted((Path(__file__).parent / "data" / "pagetype").glob("*.html.gz"))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_compute_features_matches_the_modules(path):
    html = gzip.decompress(path.read_bytes()).decode("utf-8")
    params = FeatureParams()
    rec = PageRecord(id=1, url="http://127.0.0.1/p", title="Some title")
    main = compute_features(rec, html, b"", params)

    doc = lxml.html.document_fromstring(html)
    article = text.extract_main_text(doc, params.text)
    page_type = pagetype.page_type(doc, len(article), params.pagetype)
    expected_text = content_text(doc, article, page_type, params.text)
    feats = dom.dom_features(doc, params.dom.max_paths, params.dom)
    assert main == expected_text
    assert rec.text_len == len(expected_text)
    assert rec.simhash == fingerprints.simhash64(expected_text)
    assert rec.text_hash == fingerprints.text_hash(expected_text)
    assert rec.text_shape == fingerprints.text_hash(signals.mask_tokens(expected_text))
    assert rec.minhash == fingerprints.minhash_hex(fingerprints.minhash(expected_text))
    assert (rec.dom_counts, rec.tag_paths, rec.depth_hist) == (
        feats["dom_counts"], feats["tag_paths"], feats["depth_hist"])
    assert rec.tag_seq == lcs.tag_sequence(doc, params.lcs.max_tags)
    assert rec.page_type == page_type
    heading, fields = first_heading(doc), shown_fields(doc)
    assert rec.signals == {**signals.page_signals(doc, "Some title", params.rules),
                           **({"h1": heading} if heading else {}), **({"fields": fields} if fields else {})}
    assert rec.fingerprint == signals.template_fingerprint(doc)
    assert rec.phash is None  # no screenshot


def test_empty_html_has_no_features():
    rec = PageRecord(id=1, url="http://127.0.0.1/")
    assert compute_features(rec, "  ", b"", FeatureParams()) == ""
    assert rec.simhash is None and rec.tag_seq == ""


def test_article_pages_have_main_text():
    for path in PAGES:
        if path.name.startswith("article-"):
            rec = PageRecord(id=1, url="http://127.0.0.1/a")
            main = compute_features(rec, gzip.decompress(path.read_bytes()).decode("utf-8"), b"", FeatureParams())
            assert len(main) > 500 and rec.page_type == "detail"


def test_shown_fields_are_what_a_person_sees_filled_in():
    doc = lxml.html.document_fromstring(
        "<html><body><form><input type=text name=from value=' N '><input name=to value=''>"
        "<input type=hidden name=title value=Special:AllPages><input type=password name=pw value=x>"
        "<input type=checkbox name=hideredirects value=1><div hidden><input name=gone value=x></div>"
        "<input name=styled value=y style='display: none'>"
        "<select name=namespace><option value=0>Main</option><option value=2 selected>User</option></select>"
        "<select name=lang><option>en</option><option>de</option></select>"
        "<textarea name=q>  two\n words </textarea><input name=from value=again></form></body></html>")
    assert shown_fields(doc) == {"from": "N", "to": "", "namespace": "2", "lang": "en", "q": "two words"}
