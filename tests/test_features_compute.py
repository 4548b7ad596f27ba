"""compute_features gives exactly what each feature module gives on its own parse."""

import gzip
from pathlib import Path

import lxml.html
import pytest

from scrapy_websim.core import fingerprints
from scrapy_websim.core.page import dom, lcs, pagetype, text
from scrapy_websim.core.rules import signals
from scrapy_websim.core.features import FeatureParams, compute_features, content_text, first_heading
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
    heading = first_heading(doc)
    assert rec.signals == {**signals.page_signals(doc, "Some title", params.rules),
                           **({"h1": heading} if heading else {})}
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
