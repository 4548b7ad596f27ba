import gzip
import json
import os
import re
from collections import Counter
from dataclasses import replace

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_websim.core.fingerprints import hamming, simhash64, tokens
from scrapy_websim.core.page.text import extract_main_text
from scrapy_websim.core.params.page import TextParams

DATA = os.path.join(os.path.dirname(__file__), "data", "articles")


def _load(name):
    with gzip.open(os.path.join(DATA, name), "rb") as fh:
        return fh.read().decode("utf-8")


def _f1(true, pred):
    def sh(t):
        w = re.findall(r"\w+", t)
        return Counter(tuple(w[i : i + 4]) for i in range(len(w) - 3))

    a, b = sh(true), sh(pred)
    tp = sum((a & b).values())
    p = tp / max(1, sum(b.values()))
    r = tp / max(1, sum(a.values()))
    return 2 * p * r / (p + r) if p + r else 0.0


def test_simhash_pinned_values():
    # pinned: a change here changes every stored simhash
    assert simhash64("") == 0
    assert simhash64("the quick brown fox jumps over the lazy dog") == 0x373A56907083D01A
    assert simhash64("每个程序都需要注释") == 0x3C080890499F7808


def _reference_simhash(text):
    # the textbook algorithm, bit by bit, with BLAKE2b-64 token hashes (little-endian)
    import hashlib

    counts = Counter(tokens(text))
    v = [0] * 64
    for tok, n in counts.items():
        h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
        for i in range(64):
            v[i] += n if h >> i & 1 else -n
    return sum(1 << i for i in range(64) if v[i] > 0)


@given(st.text(max_size=300))
def test_simhash_matches_reference(text):
    assert simhash64(text) == _reference_simhash(text)


def test_simhash_case_and_spacing_insensitive_and_near():
    a = simhash64("The quick brown fox jumps over the lazy dog " * 20)
    b = simhash64("the   QUICK brown fox\njumps over the lazy dog " * 20)
    assert a == b
    base = " ".join(f"word{i}" for i in range(300))
    assert hamming(simhash64(base), simhash64(base + " extra")) <= 6
    assert hamming(simhash64(base), simhash64(" ".join(f"other{i}" for i in range(300)))) > 16


def test_cjk_runs_become_bigrams():
    assert tokens("中文页面 hello") == ["中文", "文页", "页面", "hello"]
    assert tokens("日本語テキスト") == ["日本", "本語", "語テ", "テキ", "キス", "スト"]
    assert tokens("한국어") == ["한국", "국어"]
    assert tokens("字") == ["字"]
    # a Chinese page does not collapse into one token: one changed char moves few bits
    text = "我们今天讨论网页相似度检测的方法以及如何在大规模爬虫中去重" * 5
    other = "完全不同的文章内容讲述天气预报和城市交通的变化情况及其影响" * 5
    assert hamming(simhash64(text), simhash64(text.replace("今天", "明天", 1))) < hamming(
        simhash64(text), simhash64(other)
    )


def test_hamming():
    assert hamming(0, 0) == 0
    assert hamming(0, (1 << 64) - 1) == 64
    assert hamming(0b1011, 0b0001) == 2


@given(st.text(max_size=200))
def test_simhash_is_64_bit_and_deterministic(text):
    h = simhash64(text)
    assert 0 <= h < 1 << 64
    assert h == simhash64(text)


BOILER = """
<html><head><title>T</title><style>.x{color:red}</style><script>var tracking = 'SCRIPT';</script></head>
<body>
<header><div class="logo">SiteName</div><nav><a href="/">Home</a><a href="/news">News</a></nav></header>
<div id="cookie-banner">We use cookies to improve COOKIES your experience. Accept all?</div>
<div class="sidebar"><h3>Popular</h3><a href="/a">SIDEBAR story one</a></div>
<main>
  <article>
    <h1>Headline of the article</h1>
    <p>First paragraph of the ARTICLE body, long enough to look like real content, with commas, and more.</p>
    <p>Second paragraph continues the story with more words, details, and facts about the topic.</p>
    <div class="ad-slot">ADVERT buy now</div>
    <p style="display:none">HIDDEN text that nobody sees</p>
  </article>
</main>
<aside>ASIDE related links</aside>
<footer>FOOTER copyright 2024</footer>
<noscript>NOSCRIPT</noscript>
</body></html>
"""


def test_boilerplate_out_article_in():
    doc = lxml.html.fromstring(BOILER)
    before = lxml.html.tostring(doc)
    text = extract_main_text(doc)
    assert "ARTICLE body" in text and "Second paragraph" in text and "Headline" in text
    for junk in ("SCRIPT", "COOKIES", "SIDEBAR", "ADVERT", "HIDDEN", "ASIDE", "FOOTER", "NOSCRIPT", "News",
                 "color:red"):
        assert junk not in text, junk
    assert lxml.html.tostring(doc) == before  # never mutates the shared tree


def test_nested_semantic_matches_counted_once():
    html = "<html><body><main><article><p>" + "Only once in this text. " * 20 + "</p></article></main></body></html>"
    text = extract_main_text(lxml.html.fromstring(html))
    assert text.count("Only once") == 20


def test_density_fallback_without_semantic_tags():
    para = "<p>" + "Meaningful sentence with content, words and commas, for density. " * 4 + "</p>"
    html = (
        "<html><body><div class='menu'>" + "".join(f"<a href='/{i}'>LINK{i}</a>" for i in range(30)) + "</div>"
        "<div id='story'>" + para * 5 + "</div><div>Copyright BOTTOM</div></body></html>"
    )
    text = extract_main_text(lxml.html.fromstring(html))
    assert text.count("Meaningful sentence") == 20
    assert "LINK1" not in text and "BOTTOM" not in text


@pytest.mark.parametrize("key", sorted(json.load(open(os.path.join(DATA, "ground-truth.json"))).keys()))
def test_real_benchmark_pages(key):
    truth = json.load(open(os.path.join(DATA, "ground-truth.json"), encoding="utf-8"))[key]["articleBody"]
    doc = lxml.html.fromstring(_load(key + ".html.gz"))
    text = extract_main_text(doc)
    assert _f1(truth, text) >= 0.9
    assert "function(" not in text and "{" not in text  # no scripts or styles


def test_real_chinese_page():
    doc = lxml.html.fromstring(_load("zh-rust-by-example-variable_bindings.html.gz"))
    text = extract_main_text(doc)
    assert text.startswith("Rust 通过静态类型提供类型安全")
    assert "编译器会对未使用的变量绑定发出警告" in text
    # sidebar table of contents and menu bar are out
    assert "Hello World" not in text and "Rust By Example" not in text
    toks = tokens(text)
    assert len(toks) > 100 and "类型" in toks


def test_trafilatura_option_does_not_mutate():
    doc = lxml.html.fromstring(BOILER)
    before = lxml.html.tostring(doc)
    text = extract_main_text(doc, TextParams(extractor="trafilatura"))
    assert "Second paragraph" in text
    assert lxml.html.tostring(doc) == before


@pytest.mark.parametrize(
    "kwargs", [{"semantic_min_share": 1.5}, {"semantic_min_chars": -1}, {"max_link_density": 0}, {"extractor": "x"}]
)
def test_params_validate(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        TextParams(**kwargs).validate()
    TextParams().validate()


# --- exact-copy hash, shingle MinHash, list text ----------------------------------

def test_text_hash_ignores_spacing_and_case_only():
    from scrapy_websim.core.fingerprints import text_hash
    assert text_hash("Hello,  World\n again") == text_hash("hello world again")
    assert text_hash("hello world again") != text_hash("hello world again 2")
    assert text_hash("") == 0


def test_minhash_estimates_jaccard_and_round_trips():
    import random as _random

    from scrapy_websim.core.fingerprints import (
        jaccard,
        jaccard_estimate,
        minhash,
        minhash_from_hex,
        minhash_hex,
        shingle_hashes,
    )
    rnd = _random.Random(3)
    words = [f"w{rnd.randint(0, 5000)}" for _ in range(3000)]
    a = " ".join(words)
    b = " ".join(w if rnd.random() > 0.05 else "zz" for w in words)
    exact = jaccard(shingle_hashes(a), shingle_hashes(b))
    est = jaccard_estimate(minhash(a), minhash(b))
    assert 0.6 < exact < 0.9 and abs(est - exact) < 0.12
    assert jaccard_estimate(minhash(a), minhash(a)) == 1.0
    other = " ".join(f"v{rnd.randint(0, 5000)}" for _ in range(3000))
    assert jaccard_estimate(minhash(a), minhash(other)) < 0.05
    sig = minhash(a)
    assert (minhash_from_hex(minhash_hex(sig)) == sig).all()
    assert minhash_from_hex("") is None and minhash_from_hex("zz") is None


def test_ids_are_one_placeholder_in_shingles_but_short_numbers_stay():
    from scrapy_websim.core.fingerprints import shingle_hashes
    base = "the page was served to request {} at 12 05 2026 by node"
    assert (shingle_hashes(base.format("8f3a9c21d0e4")) == shingle_hashes(base.format("77aa0b13c9d2"))).all()
    assert not (shingle_hashes("release 15 1 notes here") == shingle_hashes("release 15 2 notes here")).all()


def test_directory_listings_are_judged_by_their_entries():
    import lxml.html as _html

    from scrapy_websim.core.features import FeatureParams, compute_features
    from scrapy_websim.core.match.similarity import compare, text_sim
    from scrapy_websim.core.types import PageRecord

    def listing(names, sig=""):
        rows = "\n".join(f'<a href="{n}">{n}</a>{" " * 30}23-Nov-2026 07:00{" " * 10}{1000 + i}'
                         for i, n in enumerate(names))
        return (f"<html><head><title>Index of /x/</title></head><body><h1>Index of /x/</h1><hr>"
                f'<pre><a href="../">../</a>\n{rows}\n</pre><hr>{sig}</body></html>')

    def rec(html):
        r = PageRecord(id=1, url="http://127.0.0.1/x/", status_code=200, content_type="text/html", html_len=len(html))
        compute_features(r, html, b"", FeatureParams())
        return r

    a_names = [f"chapter-{w}.html" for w in "intro setup usage tuning backup restore upgrade faq".split()]
    b_names = [f"module-{w}.html" for w in "json csv glob shlex fnmatch pathlib zipfile tarfile".split()]
    a, b = rec(listing(a_names)), rec(listing(b_names))
    a2 = rec(listing(a_names, "<address>nginx at 127.0.0.1 port 8081, 23-Nov-2026 07:01</address>"))
    assert "chapter-intro.html" in _html.document_fromstring(listing(a_names)).text_content()
    assert a.text_len >= 200  # eligible, not thin: the file names count
    assert text_sim(a, b) < 0.4
    assert text_sim(a, a2) >= 0.75
    # the two listings look alike: with one screenshot hash they are still apart (rule 2 needs text)
    same_look = 0x9A3C5F0E1B2D4C68
    assert not compare(replace(a, phash=same_look), replace(b, phash=same_look)).is_duplicate
    assert compare(replace(a, phash=same_look), replace(a2, phash=same_look)).is_duplicate


def _prose_page(links_html="", banner=""):
    paras = "".join(
        f"<p>Paragraph {w} explains how the {w} option changes the way the server answers a request, "
        f"which defaults apply and when the {w} setting is read again.</p>"
        for w in "alpha beta gamma delta epsilon zeta".split())
    return (f"<html><head><title>Options</title></head><body>{banner}<nav><a href='/'>Home</a></nav>"
            f"<div class='document'><h1>Server options</h1>{paras}{links_html}</div></body></html>")


def test_prose_text_drops_link_lists_and_keeps_prose_in_a_link_heavy_wrapper():
    from scrapy_websim.core.page.prose import prose_text

    recommended = ("<div class='more-docs'><h4>Read next</h4><ul>"
                   + "".join(f"<li><a href='/p/{i}'>Another long page title number {i} of the manual</a></li>"
                             for i in range(40)) + "</ul></div>")
    plain = prose_text(lxml.html.document_fromstring(_prose_page()))
    noisy = prose_text(lxml.html.document_fromstring(_prose_page(recommended)))
    assert "Paragraph alpha explains" in plain and "Home" not in plain
    # the wrapper is now mostly link text, yet its paragraphs stay and only the list goes
    assert "Paragraph zeta explains" in noisy and "Another long page title" not in noisy
    assert noisy.replace("Read next", "").strip() == plain.strip()


def test_list_and_prose_text_in_one_walk_are_the_two_walks():
    """compute_features reads the list text and the prose in one walk: the same texts as
    list_text and prose_text, link-heavy wrappers, link-dense inline elements and fragments too."""
    from scrapy_websim.core.features import parse_html
    from scrapy_websim.core.page.prose import list_and_prose_text, prose_text
    from scrapy_websim.core.page.text import list_text, measure
    from tests import features_snapshot as fs

    # in the article's wrapper, made link-heavy: an inline link, a link list, a tail
    recommended = ("<span><a href='/x'>inline link</a></span><div class='more-docs'><h4>Read next</h4><ul>"
                   + "".join(f"<li><a href='/p/{i}'>Another long page title number {i} of the manual</a></li>"
                             for i in range(40)) + "</ul></div>tail text")
    pages = [_prose_page(), _prose_page(recommended), "<div><a href='/a'>only a link</a> and words</div>"]
    pages += [html for _, html, _, _ in fs.edge_pages()] + [html for _, html, _, _ in fs.random_pages(120, seed=3)]
    for html in pages:
        doc = parse_html(html)
        if doc is None:
            continue
        measured = measure(doc)
        for density in (0.0, 0.3, 0.5, 1.0):
            assert list_and_prose_text(doc, density, measured) == (list_text(doc, measured),
                                                                   prose_text(doc, density, measured)), html
    assert list_and_prose_text(parse_html(_prose_page(recommended)))[1] == prose_text(
        parse_html(_prose_page(recommended)))


def test_site_notices_are_furniture():
    banner = "<div class='announcement' id='ann-3f2a'>Notice 3f2a: maintenance window 12 May, build 9c1d</div>"
    doc = lxml.html.document_fromstring(_prose_page(banner=banner))
    assert "maintenance window" not in extract_main_text(doc)
    from scrapy_websim.core.page.prose import prose_text
    from scrapy_websim.core.page.text import list_text
    assert "maintenance window" not in list_text(doc) and "maintenance window" not in prose_text(doc)


def test_a_read_the_docs_page_keeps_its_article(tmp_path):
    """MkDocs' and Sphinx's Read the Docs theme put the sidebar and the article in one wrapper
    named ``wy-grid-for-nav``: a name that says navigation, around the page's ``role=main``
    block. The wrapper is the page, so its article is the main text; the sidebar's list of every
    page is not. Built by MkDocs itself (the test extra installs it)."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    article = ("The json module encodes Python objects as JSON text and decodes JSON text into Python "
               "objects. It follows the standard closely and keeps the order of keys as they were given. ")
    (docs / "index.md").write_text("# Home\n\nThe start page of a small manual.\n")
    (docs / "json.md").write_text("# json: JSON encoder and decoder\n\n" + article * 3 + "\n")
    for i in range(30):
        (docs / f"page{i}.md").write_text(f"# Another module number {i}\n\nA page of the manual.\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: Manual\ntheme:\n  name: readthedocs\n  highlightjs: false\n")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(tmp_path / "site")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "site" / "json" / "index.html").read_text()
    assert "wy-grid-for-nav" in html  # the theme this test is about
    main = extract_main_text(lxml.html.document_fromstring(html))
    assert "encodes Python objects as JSON text" in main and len(main) > 400
    assert "Another module number 7" not in main  # the sidebar


def test_a_message_in_a_block_named_comments_is_the_pages_text_a_comment_section_is_not():
    """A revision page whose message sits in ``<div class="wiki changeset-comments">`` (Redmine's
    shape): the message is what the page says, and two revisions that differ only there must be
    told apart. A blog's comment section (the comments, each named so, and a reply form) and the
    pieces of one (its title, a reply link) stay out of the main text."""
    from scrapy_websim.core.features import content_text
    from scrapy_websim.core.page.text import list_text

    def revision(message):
        return ("<html><head><title>Revision 5 - Bench</title></head><body><div id='header'><h1>Project</h1></div>"
                "<div id='content'><h2>Revision f1e4e1b4</h2><div class='details'><h4>Added by maintainers 3 days "
                "ago</h4><ul class='revision-info'><li>ID f1e4e1b4170c4cd5</li><li>Parent b2301eb0</li></ul></div>"
                f"<div class='wiki changeset-comments'><p>{message}</p></div><ul class='changes'>"
                "<li><a href='/entry/bench/fleet.py'>fleet.py</a> (<a href='/diff/bench/fleet.py'>diff</a>)</li>"
                "</ul></div></body></html>")

    message = "A plain 'access denied' is any server's 403, not a firewall page: the block must be named"
    doc = lxml.html.document_fromstring(revision(message))
    main = extract_main_text(doc)
    assert message in list_text(doc)
    assert message in content_text(doc, main, "detail", TextParams())
    post = "<p>The post says what it says, at some length, with commas.</p>" * 6
    comments = ("<h2 class='comments-title'>COMMENTS TITLE</h2><div id='comments' class='comments-area'>"
                "<ol class='comment-list'><li class='comment'><div class='comment-content'><p>GREAT POST by a "
                "reader, who writes a long comment about the post.</p></div></li></ol>"
                "<div id='respond' class='comment-respond'><form><textarea name='comment'></textarea></form></div>"
                "</div><div class='comments'><p>LONE COMMENT with a reply form</p><form><input name='author'>"
                "</form></div>")
    blog = f"<html><body><article><h1>A post</h1>{post}</article>{comments}</body></html>"
    doc = lxml.html.document_fromstring(blog)
    for text in (extract_main_text(doc), list_text(doc)):
        assert "The post says" in text
        assert "GREAT POST" not in text and "COMMENTS TITLE" not in text and "LONE COMMENT" not in text
