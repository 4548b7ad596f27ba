
import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core.page.lcs import (
    TAG_TABLE,
    lcs_length,
    lcs_similarity,
    lcs_similarity_bound,
    structure_similarity,
    tag_char,
    tag_sequence,
)
from scrapy_websim.core.params.page import LcsParams


def dp_lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


# Small alphabets make long common subsequences and many ties; the wide one exercises the
# "drop characters missing from the other side" path and private-use characters.
seqs = st.one_of(
    st.text(alphabet="ab", max_size=60),
    st.text(alphabet="abcde", max_size=80),
    st.text(alphabet=st.sampled_from("ab!\ue000\uf8ff\u00c0xyz"), max_size=80),
)


@settings(max_examples=400, deadline=None)
@given(seqs, seqs)
def test_lcs_equals_dynamic_programme(a, b):
    assert lcs_length(a, b) == dp_lcs(a, b)


@settings(max_examples=200, deadline=None)
@given(seqs, seqs, seqs)
def test_lcs_with_shared_prefix_and_suffix(p, a, b):
    # Exercises the prefix/suffix stripping with overlapping and empty middles.
    assert lcs_length(p + a + p, p + b) == dp_lcs(p + a + p, p + b)


@settings(max_examples=300, deadline=None)
@given(seqs, seqs)
def test_similarity_symmetric_and_bounded(a, b):
    s = lcs_similarity(a, b)
    assert s == lcs_similarity(b, a)
    assert 0.0 <= s <= 1.0
    assert s <= lcs_similarity_bound(a, b)


@given(seqs)
def test_identical_sequences(a):
    assert lcs_length(a, a) == len(a)
    assert lcs_similarity(a, a) == 1.0


def test_empty_sequences():
    assert lcs_length("", "") == 0
    assert lcs_similarity("", "") == 1.0
    assert lcs_similarity("abc", "") == 0.0
    assert lcs_similarity("", "abc") == 0.0
    assert lcs_similarity("abc", "xyz") == 0.0


def test_known_values():
    assert lcs_length("ABCBDAB", "BDCABA") == 4
    assert lcs_similarity("abcd", "abed") == pytest.approx(2 * 3 / 8)


def test_long_sequences_match_dp():
    import random

    rng = random.Random(3)
    a = "".join(rng.choice("abcdefgh") for _ in range(700))
    b = "".join(rng.choice("abcdefgh") for _ in range(650))
    assert lcs_length(a, b) == dp_lcs(a, b)


HTML = """<html><head><title>t</title><meta charset="utf-8"></head>
<body><!-- comment --><div class="x"><p>one <a href="/">link</a></p><?pi x?>
<my-widget><span>s</span></my-widget><svg><path d=""/></svg></div></body></html>"""


def test_tag_sequence_body_only_skips_comments_and_pis():
    doc = lxml.html.fromstring(HTML)
    seq = tag_sequence(doc)
    expected = [tag_char(t) for t in ("body", "div", "p", "a", "my-widget", "span", "svg", "path")]
    assert seq == "".join(expected)
    assert tag_sequence(doc, include_head=True).startswith(
        "".join(tag_char(t) for t in ("html", "head", "title", "meta", "body"))
    )


def test_tag_sequence_accepts_tree_and_does_not_mutate():
    doc = lxml.html.fromstring(HTML)
    before = lxml.html.tostring(doc)
    seq = tag_sequence(doc.getroottree())
    assert seq == tag_sequence(doc)
    assert lxml.html.tostring(doc) == before


def test_tag_sequence_cut_is_a_prefix():
    body = "<div>" + "<p><a>x</a></p>" * 30000 + "</div>"
    doc = lxml.html.fromstring(f"<html><body>{body}</body></html>")
    full = tag_sequence(doc, max_tags=100000)
    assert len(full) == 2 + 60000
    cut = tag_sequence(doc, max_tags=5000)
    assert len(cut) == 5000 and full.startswith(cut)
    assert tag_sequence(doc, max_tags=0) == ""


def test_tag_sequence_without_body_walks_whole_fragment():
    doc = lxml.html.fragment_fromstring("<div><p>a</p><p>b</p></div>")
    assert tag_sequence(doc) == tag_char("div") + tag_char("p") * 2


def test_tag_chars_are_distinct_stable_and_compact():
    chars = [tag_char(t) for t in TAG_TABLE]
    assert len(set(chars)) == len(TAG_TABLE)
    # The common tags are printable ASCII that JSON does not escape.
    assert all(0x21 <= ord(c) < 0x7F and c not in '"\\' for c in chars[:92])
    # Pinned: stored sequences depend on these never changing.
    assert tag_char("div") == "!" and tag_char("a") == "#" and tag_char("p") == "&"
    assert tag_char("DIV") == tag_char("div")
    assert tag_char("{http://www.w3.org/2000/svg}path") == tag_char("path")
    # Unknown tags: CRC-32 into the private-use area, pinned so a change of hashing is noticed.
    assert tag_char("phoenix-icon-fallback") == "\ue461"
    assert tag_char("my-widget") == "\ue1c9"
    assert tag_char("My-Widget") == "\ue1c9"


def test_same_template_pages_more_alike_than_different_ones():
    def page(items, kind):
        if kind == "list":
            rows = "".join(f"<li><a href='/{i}'>item {i}</a></li>" for i in range(items))
            return f"<html><body><header><nav><a>h</a></nav></header><ul>{rows}</ul><footer/></body></html>"
        paras = "".join(f"<p>para {i} <em>x</em></p>" for i in range(items))
        return f"<html><body><header><nav><a>h</a></nav></header><article><h1>t</h1>{paras}</article></body></html>"

    l1 = tag_sequence(lxml.html.fromstring(page(20, "list")))
    l2 = tag_sequence(lxml.html.fromstring(page(25, "list")))
    d1 = tag_sequence(lxml.html.fromstring(page(12, "detail")))
    assert lcs_similarity(l1, l2) > 0.9
    assert lcs_similarity(l1, d1) < 0.6


def test_structure_similarity_measures():
    assert structure_similarity("paths", 0.4, "abc", "abd") == 0.4
    assert structure_similarity("lcs", 0.4, "abc", "abd") == pytest.approx(2 / 3)
    assert structure_similarity("both", 0.4, "abc", "abd") == pytest.approx((0.4 + 2 / 3) / 2)
    assert structure_similarity("lcs", 0.4, "", "") == 0.0
    assert structure_similarity("both", 0.4, "", None) == 0.4
    with pytest.raises(ValueError, match="structure_measure"):
        structure_similarity("tree", 0.4, "a", "a")


def test_params_validate():
    assert LcsParams().validate() == LcsParams()
    for bad in (dict(max_tags=0), dict(max_tags=10**7), dict(max_tags=True), dict(max_tags=1.5)):
        with pytest.raises(ValueError, match="max_tags"):
            LcsParams(**bad).validate()
    with pytest.raises(ValueError, match="structure_measure"):
        LcsParams(structure_measure="x").validate()
    with pytest.raises(ValueError, match="include_head"):
        LcsParams(include_head="yes").validate()
