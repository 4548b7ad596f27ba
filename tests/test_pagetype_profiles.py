"""The one-pass subtree profiles of core.page.pagetype give exactly what walking each subtree gives."""

import lxml.html
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core.page.pagetype import _blocks, _is_prose, _local, _Profiles, page_features
from scrapy_websim.core.params.page import PageTypeParams

# Block tags, inline tags, links, skipped tags (a <button> may hold a <div>: its boundaries
# still cut the surrounding block though its text does not count).
TAGS = ["div", "p", "li", "span", "b", "a", "button", "section", "em"]
WORDS = st.sampled_from(["", " ", "word", "two words", "  spaced\n out  ", "x" * 90, "链接文字"])


@st.composite
def fragments(draw, depth=0):
    parts = [draw(WORDS)]
    for _ in range(draw(st.integers(0, 3 if depth < 4 else 0))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            parts.append("<!-- c -->")
        else:
            tag = draw(st.sampled_from(TAGS))
            parts.append(f"<{tag}>{draw(fragments(depth + 1))}</{tag}>")
        parts.append(draw(WORDS))
    return "".join(parts)


def walked(el, params):
    blocks, _, links, first = _blocks(el, params.max_nodes)
    return (sum(_is_prose(b, params) for b in blocks), sum(b[0] for b in blocks),
            sum(b[1] for b in blocks), links, first)


@settings(max_examples=300, deadline=None)
@given(fragments(), st.sampled_from([PageTypeParams(), PageTypeParams(min_block_chars=5, max_block_link_density=1.0)]))
def test_profiles_match_subtree_walks(body, params):
    doc = lxml.html.document_fromstring(f"<html><body>{body}</body></html>")
    elements = [el for el in doc.find("body").iter() if isinstance(el.tag, str)]
    profiles = _Profiles(elements, {el: _local(el.tag) for el in elements}, params)
    for el in elements:
        assert profiles.summary(el) == walked(el, params), lxml.html.tostring(el)


def test_truncated_page_falls_back_to_walks():
    items = "".join(f"<li><a href='/{i}'>Item {i}</a></li>" for i in range(200))
    doc = lxml.html.document_fromstring(f"<html><body><ul>{items}</ul><p>{'text ' * 100}</p></body></html>")
    feats = page_features(doc, PageTypeParams(max_nodes=150))
    assert feats["truncated"] == 1
    assert feats["list_items"] == 200  # the list's children are grouped whole
    assert feats["running_chars"] == 0  # the paragraph after the first 150 elements is not read
