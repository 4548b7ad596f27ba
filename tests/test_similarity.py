import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_websim.core.match.similarity import (
    DEFAULT_DECISION_PARAMS,
    SEED_DECISION_PARAMS,
    behavior_sim,
    compare,
    cosine,
    decide,
    fields_differ,
    heading_sim,
    items_differ,
    judge,
    prose_lengths_differ,
    structure_sim,
    text_sim,
    title_items_differ,
    title_names_heading,
    visual_sim,
    weighted_jaccard,
)
from scrapy_websim.core.params.match import DecisionParams
from scrapy_websim.core.types import PageRecord

h64 = st.integers(min_value=0, max_value=(1 << 64) - 1)
counts = st.lists(st.integers(min_value=0, max_value=5000), min_size=7, max_size=7)
paths = st.dictionaries(st.sampled_from(["html", "html>body", "html>body>div", "html>body>div>p", "html>body>a"]),
                        st.integers(min_value=1, max_value=100))
timings = st.lists(st.floats(min_value=0, max_value=1e5), min_size=3, max_size=3)


@st.composite
def pages(draw):
    return PageRecord(
        id=0, url="u", text_len=draw(st.integers(min_value=0, max_value=100000)), simhash=draw(h64),
        dom_counts=draw(counts), tag_paths=draw(paths), phash=draw(h64), timings=draw(timings),
    )


SIMS = (text_sim, structure_sim, visual_sim, behavior_sim)


@given(pages(), pages())
def test_similarities_symmetric_and_bounded(a, b):
    for fn in SIMS:
        x, y = fn(a, b), fn(b, a)
        assert x == pytest.approx(y)
        assert 0.0 <= x <= 1.0
    r1, r2 = compare(a, b), compare(b, a)
    assert (r1.is_duplicate, r1.rule) == (r2.is_duplicate, r2.rule)


@given(pages())
def test_identical_pages_score_one(a):
    for fn in SIMS:
        assert fn(a, a) == pytest.approx(1.0)
    r = compare(a, a)
    assert r.is_duplicate and r.rule == "rule1"


def _page(text_len=1000, simhash=0, counts=(100, 50, 20, 10, 2, 0, 3), paths=None, phash=0):
    return PageRecord(id=1, url="u", text_len=text_len, simhash=simhash, dom_counts=list(counts),
                      tag_paths=dict(paths or {"html>body>p": 10}), phash=phash, timings=[1, 2, 3])


def _bits(n):
    return (1 << n) - 1


def test_text_sim_spec_formula():
    a = _page()
    assert text_sim(a, _page(simhash=_bits(1))) == pytest.approx(1 - 1 / 16)
    assert text_sim(a, _page(simhash=_bits(15))) == pytest.approx(1 / 16)
    assert text_sim(a, _page(simhash=_bits(16))) == 0.0
    # length ratio below 0.3 -> 0 even with identical hashes; exactly 0.3 is allowed
    assert text_sim(_page(text_len=1000), _page(text_len=299)) == 0.0
    assert text_sim(_page(text_len=1000), _page(text_len=300)) == 1.0
    assert text_sim(a, replace(a, simhash=None)) == 0.0


def test_visual_sim_spec_formula():
    a = _page()
    assert visual_sim(a, _page(phash=_bits(5))) == pytest.approx(0.75)
    assert visual_sim(a, _page(phash=_bits(19))) == pytest.approx(0.05)
    assert visual_sim(a, _page(phash=_bits(20))) == 0.0
    assert visual_sim(a, replace(a, phash=None)) == 0.0


def test_structure_sim_spec_formula():
    a = _page(counts=(1, 0, 0, 0, 0, 0, 0), paths={"x": 1, "y": 3})
    b = _page(counts=(0, 1, 0, 0, 0, 0, 0), paths={"x": 2, "z": 1})
    # cosine 0; weighted Jaccard = min(1,2) / (2 + 3 + 1)
    assert structure_sim(a, b) == pytest.approx(0.5 * 0 + 0.5 * (1 / 6))
    assert cosine([3, 4], [6, 8]) == pytest.approx(1.0)
    assert weighted_jaccard({}, {}) == 1.0
    assert weighted_jaccard({"a": 1}, {}) == 0.0


def test_structure_lcs_measure():
    pytest.importorskip("scrapy_websim.core.page.lcs")
    a = replace(_page(), tag_seq="abcdef")
    b = replace(_page(), tag_seq="abcxef")
    lcs_value = structure_sim(a, b, DecisionParams(structure_measure="lcs"))
    assert lcs_value == pytest.approx(2 * 5 / 12)
    both = structure_sim(a, b, DecisionParams(structure_measure="both"))
    assert both == pytest.approx(0.5 * (1.0 + lcs_value))


def test_behavior_sim_is_cosine_of_timings():
    a = replace(_page(), timings=[100, 200, 300])
    assert behavior_sim(a, replace(a, timings=[200, 400, 600])) == pytest.approx(1.0)
    assert behavior_sim(a, replace(a, timings=[])) == 0.0


# --- the decision at each threshold boundary --------------------------------

P = SEED_DECISION_PARAMS


@pytest.mark.parametrize(
    "c,s,v,rule",
    [
        (0.97, 0.85, 0.0, "rule1"),
        (0.97, 0.0, 0.85, "rule1"),
        (0.9699, 0.85, 0.85, ""),
        (0.97, 0.8499, 0.8499, ""),
        (1.0, 1.0, 1.0, "rule1"),
        (0.0, 0.0, 0.99, "rule2"),
        (0.0, 1.0, 0.9899, ""),
        (0.5, 0.99, 0.0, ""),
    ],
)
def test_decision_boundaries_seed(c, s, v, rule):
    assert decide(c, s, v, P) == rule


thr = st.floats(min_value=0.0, max_value=1.0)


@given(thr, thr, thr, thr, thr, thr, thr)
def test_decision_matches_spec(t1, s1, v1, v2, c, s, v):
    params = DecisionParams(rule1_text=t1, rule1_structure=s1, rule1_visual=v1, rule2_visual=v2)
    rule = decide(c, s, v, params)
    r1 = c >= t1 and (s >= s1 or v >= v1)
    r2 = v >= v2
    assert rule == ("rule1" if r1 else "rule2" if r2 else "")
    # exactly at every threshold the rule fires
    assert decide(t1, s1, 0.0, replace(params, rule1_visual=1.0, rule2_visual=1.01)) == "rule1"
    assert decide(0.0, 0.0, v2, replace(params, rule1_text=1.0, rule1_visual=1.0)) in ("rule2", "rule1")


def test_compare_explains_the_pair():
    a = _page(simhash=0, phash=0)
    b = _page(simhash=_bits(1), phash=_bits(30))
    r = compare(a, b, SEED_DECISION_PARAMS)
    assert r.content_sim == pytest.approx(0.9375) and r.visual_sim == 0.0 and r.structure_sim == 1.0
    assert not r.is_duplicate and r.rule == ""
    r = compare(a, b, replace(SEED_DECISION_PARAMS, rule1_text=0.9))
    assert r.is_duplicate and r.rule == "rule1"


@pytest.mark.parametrize(
    "kwargs",
    [{"text_min_len_ratio": 1.5}, {"text_max_distance": 0}, {"visual_max_distance": 65},
     {"structure_measure": "tree"}, {"structure_count_weight": -0.1}, {"rule1_text": 2.0},
     {"rule1_structure": -1.0}, {"rule1_visual": 1.5}, {"rule2_visual": 2.0}],
)
def test_params_validate(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        DecisionParams(**kwargs).validate()
    DEFAULT_DECISION_PARAMS.validate()


def test_rule2_ignores_blank_screenshots():
    """Two different pages whose first viewport is blank (same pHash) are not merged by rule 2."""
    import io

    from PIL import Image, ImageDraw

    from scrapy_websim.core.match.similarity import compare, informative_phash
    from scrapy_websim.core.page.visual import phash_png
    from scrapy_websim.core.types import PageRecord

    def png(draw_header: bool) -> bytes:
        im = Image.new("RGB", (1280, 800), "white")
        if draw_header:
            ImageDraw.Draw(im).rectangle([0, 0, 1280, 60], fill="#234")
        buf = io.BytesIO()
        im.save(buf, "PNG")
        return buf.getvalue()

    blank = phash_png(png(False))
    header = phash_png(png(True))
    assert not informative_phash(blank) and not informative_phash(header)
    a = PageRecord(id=1, url="a", simhash=0, text_len=500, phash=header)
    b = PageRecord(id=2, url="b", simhash=(1 << 64) - 1, text_len=500, phash=header)
    result = compare(a, b)
    assert result.visual_sim == 1.0 and not result.is_duplicate
    c = PageRecord(id=3, url="c", simhash=0, text_len=500, phash=0x9A3C5F0E1B2D4C68)
    d = PageRecord(id=4, url="d", simhash=(1 << 64) - 1, text_len=500, phash=0x9A3C5F0E1B2D4C68)
    assert informative_phash(c.phash) and compare(c, d).rule == "rule2"


def test_rule2_not_between_pages_whose_minhash_text_differs():
    from scrapy_websim.core.fingerprints import minhash, minhash_hex
    from scrapy_websim.core.match.similarity import compare
    from scrapy_websim.core.types import PageRecord

    ph = 0x0F0F0F0F0F0F0F0F

    def rec(i, text):
        return PageRecord(id=i, url=f"http://h/{i}", text_len=len(text), simhash=i, phash=ph,
                          minhash=minhash_hex(minhash(text)), text_hash=i)

    a = rec(1, " ".join(f"alpha{i}" for i in range(300)))
    b = rec(2, " ".join(f"beta{i}" for i in range(300)))
    assert compare(a, b).rule == ""
    old = PageRecord(id=3, url="http://h/3", text_len=a.text_len, simhash=(1 << 64) - 2, phash=ph)
    assert compare(a, old).rule == "rule2"  # no MinHash on one side: the screenshot decides


def _rendered(i, html):
    """The record of a page with this HTML, features computed by the shipped code."""
    from scrapy_websim.core.features import FeatureParams, compute_features
    from scrapy_websim.core.types import PageRecord

    r = PageRecord(id=i, url=f"http://127.0.0.1/{i}", status_code=200, content_type="text/html", html_len=len(html))
    compute_features(r, html, b"", FeatureParams())
    return r


def test_text_sim_judges_prose_pages_by_their_prose_too():
    """A page and a copy with a list of 5 random "recommended" links in its content: the whole
    visible text differs a lot (short page, long titles), the prose does not; two different pages
    of the template differ in both."""
    def page(topic, extra="", words="reads writes checks"):
        paras = "".join(f"<p>The {topic} command {w} the repository index and prints what changed since "
                        f"the last {w} run, one line per path.</p>" for w in words.split())
        return (f"<html><head><title>{topic}</title></head><body><div class='body'><h1>git {topic}</h1>"
                f"{paras}{extra}</div></body></html>")

    links = "<div class='more-docs'><h4>Recommended</h4><ul>" + "".join(
        f"<li><a href='/p/{i}'>Managing remote repositories, their branches and their tags over ssh, part {i}</a></li>"
        for i in range(5)) + "</ul></div>"
    a, copy = _rendered(1, page("status")), _rendered(2, page("status", links))
    other = _rendered(3, page("archive", words="packs bundles exports"))
    assert a.prose_minhash and copy.prose_minhash and a.prose_len == copy.prose_len
    whole = replace(copy, prose_minhash="")
    plain = replace(DEFAULT_DECISION_PARAMS, text_noise_shingles=0)
    # by plain Jaccard the link list alone splits them
    assert text_sim(a, whole, plain) < 0.6 <= text_sim(a, copy, plain)
    assert text_sim(a, whole) >= 0.75  # the shipped measure forgives that much noise on the whole text too
    assert text_sim(a, other) < 0.6 and text_sim(a, other, plain) < 0.6


def _manual_page(title, *paras):
    """A page of a server manual's template: header, language bar, one short section, footer."""
    body = "".join(f"<p>{p}</p>" for p in paras)
    return (f"<html><head><title>{title} - Example HTTP Server Version 2.4</title></head><body>"
            "<div id='page-header'><p class='menu'><a href='/mod/'>Modules</a> | <a href='/faq/'>FAQ</a> | "
            "<a href='/glossary.html'>Glossary</a> | <a href='/sitemap.html'>Sitemap</a></p>"
            "<p class='apache'>Example HTTP Server Version 2.4</p></div>"
            f"<div id='page-content'><div id='preamble'><h1>{title}</h1><div class='toplang'><p>"
            "<span>Available Languages: </span><a href='en'>en</a> | <a href='fr'>fr</a> | <a href='ko'>ko</a>"
            f"</p></div>{body}</div></div><div id='footer'><p class='apache'>Copyright 2024 The Example "
            "Foundation. Licensed under the Apache License, Version 2.0.</p></div></body></html>")


def test_noise_a_server_adds_is_forgiven_and_text_of_a_pages_own_is_not():
    """bench/textsim.py's worst cases in small: a short manual page and another response of it (a
    timestamp line and 5 "recommended" links inside the content, a banner, ~3 % of the words
    changed) against a second page of the same boilerplate, and against a page that holds all of
    the first and much more of its own (git-diff-files inside git-diff)."""
    from scrapy_websim.testing.sites import noisy_copy

    removed = ("This document has been removed. Memory allocation debugging is now described in the "
               "developer guide of the portable runtime library, in its chapter on pools. Links to "
               "this page from older versions of the manual lead here; please update your bookmarks.")
    a = _rendered(1, _manual_page("Debugging Memory Allocation", removed))
    titles = [f"mod_example{i} - Example HTTP Server Version 2.4" for i in range(20)]
    copies = [_rendered(2, noisy_copy(_manual_page("Debugging Memory Allocation", removed), titles, seed=s))
              for s in range(8)]
    other = _rendered(3, _manual_page("Other Programs", "This page used to contain documentation for "
                                      "programs which now have their own pages. Please update any links."))
    more = _rendered(4, _manual_page("Debugging Memory Allocation", removed, *(
        f"Pools of kind {w} are created by the runtime when a request of that kind starts, hold every "
        f"allocation made while it runs, and are destroyed with all of them when it ends; {w} pools "
        "can be nested, and a debugging build checks each allocation against its pool's lifetime."
        for w in ("connection", "request", "subrequest", "filter", "thread", "process"))))
    assert all(c.shingles > a.shingles + 20 for c in copies)  # the noise is most of a copy's text
    plain = replace(DEFAULT_DECISION_PARAMS, text_noise_shingles=0)
    assert sum(text_sim(a, c, plain) < DEFAULT_DECISION_PARAMS.rule1_jaccard for c in copies) >= 4  # Jaccard loses them
    worst_copy = min(text_sim(a, c) for c in copies)
    assert worst_copy >= DEFAULT_DECISION_PARAMS.rule1_jaccard > text_sim(a, other)
    assert text_sim(a, more) < DEFAULT_DECISION_PARAMS.rule1_jaccard  # its own text is not noise
    assert all(text_sim(a, c) == text_sim(c, a) for c in copies + [other, more])


def test_shingle_sim_is_jaccard_with_one_side_s_noise_forgiven():
    from scrapy_websim.core.match.similarity import shingle_sim

    # A = 100 shingles inside B = A + 60: Jaccard 100/160; forgiven up to 100 extra shingles
    assert shingle_sim(100 / 160, 100, 160, 0) == 100 / 160
    assert shingle_sim(100 / 160, 100, 160, 100) == pytest.approx(1.0)
    assert shingle_sim(100 / 160, 100, 160, 40) == pytest.approx(100 / 120)
    # both have 50 of their own: the smaller side's own shingles always count
    j = 100 / 200
    assert shingle_sim(j, 150, 150, 100) == pytest.approx(100 / 150)
    assert shingle_sim(j, 150, 150, 0) == pytest.approx(j)
    assert shingle_sim(j, 0, 150, 100) == j  # a size unknown (older features file): plain Jaccard
    assert shingle_sim(1.0, 10, 10, 100) == 1.0 and shingle_sim(0.0, 10, 10, 100) == 0.0


def test_list_pages_with_one_long_header_are_not_judged_by_it():
    """Two directory listings with the same 300-character header and different entries: the
    header is their only prose, and it must not make them one page."""
    header = ("<p>This mirror is operated by the university computing centre. Files are synchronised "
              "every four hours from the primary archive; please use the closest mirror, report "
              "broken files to the mirror administrators and read the policy before you download.</p>")

    def listing(prefix, words):
        rows = "".join(f'<tr><td><a href="{w}.html">{prefix} {w} {v}</a></td></tr>'
                       for w in words.split() for v in ("guide", "reference notes"))
        return (f"<html><head><title>Index of /{prefix}</title></head><body><h1>Index of /{prefix}</h1>"
                f"{header}<table>{rows}</table></body></html>")

    a = _rendered(1, listing("alpha", "install upgrade backup restore tuning security network storage logging"))
    b = _rendered(2, listing("omega", "kernel drivers printing audio video fonts locales keyboard mouse"))
    assert a.prose_minhash and b.prose_minhash  # the header alone is prose enough to carry one
    assert text_sim(a, b) < 0.4 < DEFAULT_DECISION_PARAMS.rule1_jaccard
    assert text_sim(replace(a, prose_len=a.text_len), b) > 0.8  # were it judged by its prose


def test_pages_whose_headings_name_different_things_are_not_duplicates():
    """Two revision histories of different wiki articles: one template, the same rows but the
    sizes and the title, the same look; only the h1 tells them apart. A URL variant or a noisy copy
    of one history (one heading word changed) still is one; so are two pages without an h1."""
    def history(title, sizes, changed=""):
        rows = "".join(f"<li><a href='/d{i}'>cur</a> | <a href='/p{i}'>prev</a> 17:0{i}, 23 November 2026 "
                       f"<a href='/u'>Admin</a> (talk | contribs) {s} bytes (+{s // 10}) revision at {i}0 % "
                       f"(undo)</li>" for i, s in enumerate(sizes))
        heading = f"<h1>{changed or title}: Revision history</h1>" if title else ""
        return (f"<html><head><title>{title}: Revision history - Wiki</title></head><body><div id='content'>"
                f"{heading}<p>Compare selected revisions. Legend: (cur) difference with latest revision, (prev) "
                f"difference with preceding revision, m minor edit.</p><ul>{rows}</ul></div></body></html>")

    sizes = [3456, 5120, 5188, 5190, 5230, 5301]
    a = _rendered(1, history("Article 15 In a joint", sizes))
    b = _rendered(2, history("Article 22 We bring you", sizes[:-1] + [5160]))
    variant = _rendered(3, history("Article 15 In a joint", sizes).replace("Legend:", "Legend :"))
    noisy = _rendered(4, history("Article 15 In a joint", sizes, changed="Article 15 In the joint"))
    for r in (a, variant, noisy):  # the title the browser reads: the noise left it as it was
        r.title = "Article 15 In a joint: Revision history - Wiki"
    assert a.signals["h1"] == "Article 15 In a joint: Revision history"
    assert heading_sim(a, b) < 0.5 <= heading_sim(a, noisy)
    unguarded = DecisionParams(heading_min_jaccard=0.0)
    assert compare(a, b, unguarded).is_duplicate  # the text alone cannot tell them apart
    assert not compare(a, b).is_duplicate and compare(a, b).rule == ""
    assert compare(a, variant).is_duplicate and compare(a, noisy).is_duplicate
    bare_a, bare_b = (_rendered(i, history("", s)) for i, s in ((5, sizes), (6, sizes[:-1] + [5160])))
    assert "h1" not in bare_a.signals and heading_sim(bare_a, bare_b) is None
    assert compare(bare_a, bare_b).is_duplicate == compare(bare_a, bare_b, unguarded).is_duplicate


def test_a_page_with_a_quarter_more_prose_is_a_page_of_its_own():
    """An article and its earlier revision holding 70 % of its paragraphs: the text measure alone
    (shingle Jaccard ~0.7, the same template) calls them duplicates, but the current one says 40 %
    more and neither is a copy of the other. A noisy copy of the article (a word changed in every
    paragraph, a "generated at" line) stays a duplicate; short pages are not judged by length."""
    subjects = ("river", "harbour", "bridge", "market", "station", "tower", "garden", "library", "factory", "school")
    verbs = ("opened", "closed", "grew", "moved", "changed", "burned", "flooded", "expanded", "shrank", "returned")

    def para(i, change=""):
        s, v = subjects[i], verbs[(i * 3) % 10]
        words = (f"In {1900 + 7 * i} the {s} of the old town {v} after the council met for the {i + 2}th time, "
                 f"and the people who lived near the {s} wrote long letters about the {v} {s} to the paper, "
                 f"asking why nobody had told them before the {s} {v} and what would come after it")
        return "<p>" + (words.replace(" long ", f" {change} ") if change else words) + ".</p>"

    def article(paras, extra=""):
        return (f"<html><head><title>The old town</title></head><body><div id='content'><h1>The old town</h1>"
                f"{extra}{''.join(paras)}</div></body></html>")

    full = _rendered(1, article(para(i) for i in range(10)))
    revision = _rendered(2, article(para(i) for i in range(7)))
    noisy = _rendered(3, article((para(i, change="many") for i in range(10)),
                                 extra="<p>Generated on 2026-11-23 18:02:11 UTC in 0.0412 s, "
                                       "request 8f3a9c2e41d07b66</p>"))
    assert full.prose_len >= 1000 and revision.prose_len / full.prose_len < 0.8
    unguarded = DecisionParams(prose_min_len_ratio=0.0)
    assert compare(full, revision, unguarded).is_duplicate  # the text and the look alone merge them
    assert prose_lengths_differ(full, revision)
    assert not compare(full, revision).is_duplicate and compare(full, revision).rule == ""
    assert not prose_lengths_differ(full, noisy) and compare(full, noisy).is_duplicate
    short_full, short_revision = (_rendered(4 + k, article(para(i) for i in range(n))) for k, n in ((0, 4), (1, 3)))
    assert short_revision.prose_len < 1000 and not prose_lengths_differ(short_full, short_revision)
    with pytest.raises(ValueError, match="prose_min_len_ratio"):
        DecisionParams(prose_min_len_ratio=1.5).validate()


def test_a_noisy_copy_whose_h1_lost_a_word_is_still_its_page():
    """A module page of a manual and a copy where per-request noise swapped words of the h1 (on
    bench/textsim.py's pages, 14 of 786 copies): both still carry the page's title, which names
    the h1, so the heading check does not split them. Two module pages of the manual differ in
    their titles and stay apart however alike their texts; one title shared by every page of an
    application names no h1 and is no evidence."""
    def module(name, h1=None, title=None):
        paras = "".join(f"<p>The {name} module provides directive number {i} of the server, which controls how "
                        f"requests for the {name} features are handled, logged and cached by every worker.</p>"
                        for i in range(8))
        title = title or f"{name} - Apache HTTP Server Version 2.4"
        html = (f"<html><head><title>{title}</title></head><body><div id='page-content'>"
                f"<h1>{h1 or 'Apache Module ' + name}</h1>{paras}</div></body></html>")
        return replace(_rendered(0, html), title=title)

    page = module("mod_ssl")
    noisy = module("mod_ssl", h1="Apache Module and")
    assert heading_sim(page, noisy) == 0.5 < DEFAULT_DECISION_PARAMS.heading_min_jaccard
    assert title_names_heading(page, noisy) and compare(page, noisy).is_duplicate
    other = module("mod_ssl", h1="Apache Module mod_tls", title="mod_tls - Apache HTTP Server Version 2.4")
    no_heading = judge(page, other, DecisionParams(heading_min_jaccard=0.0))
    # the text is one; without the heading check, the titles (one frame, two modules) keep them apart
    assert no_heading.rule1 and no_heading.title_items_veto and not no_heading.result.is_duplicate
    assert not title_names_heading(page, other) and not compare(page, other).is_duplicate
    app_a = module("mod_ssl", title="Acme Intranet")
    app_b = module("mod_ssl", h1="Apache Module and", title="Acme Intranet")
    assert not title_names_heading(app_a, app_b) and not compare(app_a, app_b).is_duplicate


def _at(record, url, html=""):
    """``record`` fetched from ``url``, with the ``<title>`` of ``html`` (the browser reports it)."""
    found = re.search(r"<title>(.*?)</title>", html)
    return replace(record, url=url, final_url=url, title=found.group(1) if found else record.title)


def test_pages_about_two_items_of_one_kind_are_not_duplicates():
    """Revision histories of two articles with one-word titles ("Owl", "Heron"): the headings share
    3 of 5 words, so the heading check lets them through, and the rows barely differ. Each page
    names its own URL's item in its title and h1 and the other does not: different pages. The same
    for page 2 and page 3 of a listing and for Chinese titles. A copy of one history on another
    port or under a tracking parameter names the same item and stays its duplicate."""
    def history(title, sizes):
        rows = "".join(f"<li><a href='/d{i}'>cur</a> | <a href='/p{i}'>prev</a> 17:0{i}, 23 November 2026 "
                       f"<a href='/u'>Admin</a> (talk | contribs) {s} bytes (+{s // 10}) (undo)</li>"
                       for i, s in enumerate(sizes))
        return (f"<html><head><title>Revision history of &quot;{title}&quot; - Wiki</title></head><body>"
                f"<div id='content'><h1>Revision history of &quot;{title}&quot;</h1>"
                f"<p>Compare selected revisions. Legend: (cur) difference "
                f"with latest revision, (prev) difference with preceding revision, m minor edit.</p>"
                f"<ul>{rows}</ul></div></body></html>")

    sizes = [3456, 5120, 5188, 5190, 5230, 5301, 5302, 5340]
    wiki = "http://127.0.0.1:8080/index.php?action=history&title="
    owl = _at(_rendered(1, history("Owl", sizes)), wiki + "Owl")
    heron = _at(_rendered(2, history("Heron", sizes[:-1] + [5360])), wiki + "Heron")
    mirror = _at(_rendered(3, history("Owl", sizes)), "http://127.0.0.1:8081/index.php?action=history&title=Owl&utm_source=x")
    assert heading_sim(owl, heron) >= 0.6  # the heading check does not separate them
    assert compare(owl, heron, DecisionParams(heading_min_jaccard=0.6)).content_sim >= 0.75
    assert items_differ(owl, heron) and not compare(owl, heron).is_duplicate
    assert not items_differ(owl, mirror) and compare(owl, mirror).is_duplicate

    cat = _at(_rendered(4, history("猫", sizes)), "http://127.0.0.1/wiki/%E7%8C%AB?action=history")
    dog = _at(_rendered(5, history("狗", sizes)), "http://127.0.0.1/wiki/%E7%8B%97?action=history")
    assert items_differ(cat, dog) and not compare(cat, dog).is_duplicate

    def listing(n):
        entries = "".join(f"<li><a href='/w/{i}'>Entry {i}</a></li>" for i in range(40))
        return (f"<html><head><title>Articles, page {n}</title></head><body><h1>Articles, page {n}</h1>"
                f"<ul>{entries}</ul></body></html>")
    p2 = _at(_rendered(6, listing(2)), "http://127.0.0.1/articles?page=2")
    p3 = _at(_rendered(7, listing(3)), "http://127.0.0.1/articles?page=3")
    assert items_differ(p2, p3) and not compare(p2, p3).is_duplicate


def test_api_pages_of_sibling_items_are_not_duplicates():
    """Generated API pages of one module: a short signature and a sentence in one template, the
    item's name the only difference (``simd_ge`` / ``simd_gt``), or one name inside the other
    (``Range`` / ``RangeFrom``, whose module path also says "range"). The page that names an item
    of its URL the other page does not name at all is a page of its own."""
    def api(kind, name, module, doc):
        return (f"<html><head><title>{name} in {module} - Docs</title></head><body>"
                f"<nav class='sidebar'><ul>" + "".join(f"<li><a href='/x{i}'>item_{i}</a></li>" for i in range(30))
                + f"</ul></nav><main><h1>{kind} <span>{name}</span> <button>Copy item path</button></h1>"
                f"<pre>pub unsafe fn {name}&lt;T, U&gt;(x: T, "
                f"y: T) -&gt; U</pre><p>{doc} Returns a mask of the lanes, with all bits set where the "
                f"comparison holds and no bits set where it does not. This is an intrinsic of the portable "
                f"SIMD layer; use the methods of the vector types instead.</p></main></body></html>")

    def at(i, url, *args):
        html = api(*args)
        return _at(_rendered(i, html), url, html)

    base = "http://127.0.0.1:8080/std/intrinsics/simd/"
    ge = at(1, base + "fn.simd_ge.html", "Function", "simd_ge", "std::intrinsics::simd", "Tests elementwise x >= y.")
    gt = at(2, base + "fn.simd_gt.html", "Function", "simd_gt", "std::intrinsics::simd", "Tests elementwise x > y.")
    assert heading_sim(ge, gt) >= 0.6  # "Function simd_ge Copy item path": the heading check lets them through
    assert compare(ge, gt, DecisionParams(heading_min_jaccard=0.6)).content_sim >= 0.7
    assert items_differ(ge, gt) and not compare(ge, gt).is_duplicate
    rng = "http://127.0.0.1:8080/std/range/legacy/"
    r = at(3, rng + "struct.Range.html", "Struct", "Range", "std::range::legacy", "A range.")
    rf = at(4, rng + "struct.RangeFrom.html", "Struct", "RangeFrom", "std::range::legacy", "A range.")
    assert items_differ(r, rf) and not compare(r, rf).is_duplicate
    copy = at(5, "http://127.0.0.1:8081/b/std/range/legacy/struct.Range.html", "Struct", "Range", "std::range::legacy",
              "A range.")
    assert not items_differ(r, copy) and compare(r, copy).is_duplicate


def test_titles_naming_two_items_in_one_frame_are_not_duplicates():
    """Doxygen names its pages by number (``a08294.html``): the URL says nothing, and the pages of
    two sibling class templates are one text but for the class name (text 0.75-0.96, structure
    1.0). Their titles are one frame around the item; a copy of a page keeps its title or adds
    words at its start or end (a mirror's name), and a number in a title is no item."""
    def ref(name, url, title=None):
        paras = "".join(f"<p>One of the function objects of the library, member {i}: it calls the operator on two "
                        f"arguments of type _Tp and returns the result; see {name} in the standard.</p>"
                        for i in range(6))
        title = title or f"libstdc++: std::{name}&lt; _Tp &gt; Struct Template Reference"
        html = (f"<html><head><title>{title}</title></head><body><div class='header'><div class='title'>"
                f"std::{name}&lt; _Tp &gt; Struct Template Reference</div></div><div class='contents'>{paras}"
                f"</div></body></html>")
        return _at(_rendered(0, html), url, html)

    less = ref("less", "http://127.0.0.1:8001/api/a08294.html")
    greater = ref("greater", "http://127.0.0.1:8001/api/a08290.html")
    assert not items_differ(less, greater)  # nothing in the URLs to read
    d = judge(less, greater)
    assert d.rule1 and d.title_items_veto and not d.result.is_duplicate
    mirror = ref("less", "http://127.0.0.1:8002/api/a08294.html")
    renamed = ref("less", "http://127.0.0.1:8003/api/a08294.html",
                  title="libstdc++: std::less&lt; _Tp &gt; Struct Template Reference (mirror 3)")
    for copy in (mirror, renamed):
        assert not title_items_differ(less, copy) and compare(less, copy).is_duplicate
    # a word more inside the frame is another item: std::hash< unsigned long > / < unsigned long long >
    ul, ull = (ref("x", f"http://h/{n}", title=f"libstdc++: std::hash&lt; {t} &gt; Struct Reference")
               for n, t in ((1, "unsigned long"), (2, "unsigned long long")))
    assert title_items_differ(ul, ull)
    # counters and items at the very start or end of a title are not read
    inbox3, inbox4 = (ref("x", "http://h/i", title=f"Mail: inbox ({n}) - Acme") for n in (3, 4))
    assert not title_items_differ(inbox3, inbox4)
    start_a, start_b = (ref("x", "http://h/s", title=f"{w} - Acme docs") for w in ("Install", "Upgrade"))
    assert not title_items_differ(start_a, start_b)
    # one h1 on both: a word the server changed in the title is not another item
    pages = [f"<html><head><title>{t}</title></head><body><h1>{h}</h1><p>{'Encode and decode JSON. ' * 20}</p>"
             "</body></html>" for t, h in (("Docs: json encoder and decoder - Python", "json"),
                                           ("Docs: json encoder or decoder - Python", "json"),
                                           ("Docs: json encoder or decoder - Python", "json module"))]
    same_h1, other_h1 = ([_at(_rendered(0, pages[0]), "http://h/j", pages[0]), _at(_rendered(0, p), "http://h/j", p)]
                         for p in pages[1:])
    assert same_h1[0].title and not title_items_differ(*same_h1) and title_items_differ(*other_h1)


def test_lists_whose_form_shows_what_each_was_asked_for_are_not_duplicates():
    """A wiki's list of all pages, and the same list from the letter N and from F: the entries
    from N are most of the whole list, the heading and title are one, and the letter is a single
    character the URL item check does not read. The page shows it in its "from" field; a copy
    under a tracking parameter shows the same, and a field the server fills by itself (the
    language chosen) is no item."""
    titles = ["Anchor", "Bridge", "Candle", "Falcon", "Forest", "Garden", "Harbour", "Island", "Lantern",
              "Meadow", "Needle", "Ocean", "Pepper", "Quartz", "River", "Senate", "Timber", "Valley"]

    def allpages(start, lang="en"):
        rows = "".join(f"<li><a href='/wiki/{t}'>{t}</a></li>" for t in titles if t >= start)
        return ("<html><head><title>All pages - Wiki</title></head><body><div id='content'><h1>All pages</h1>"
                f"<form><label>Display pages starting at: <input type=text name=from value='{start}'></label>"
                "<label>Display pages ending at: <input type=text name=to value=''></label>"
                f"<select name=uselang><option value=en {'selected' if lang == 'en' else ''}>English</option>"
                f"<option value=de {'selected' if lang == 'de' else ''}>Deutsch</option></select>"
                f"<input type=hidden name=title value=Special:AllPages></form><ul>{rows}</ul>"
                "<p>This list shows every page of the wiki, in alphabetical order.</p></div></body></html>")

    base = "http://127.0.0.1:8080/index.php?title=Special:AllPages"
    whole = _at(_rendered(1, allpages("")), base)
    from_f = _at(_rendered(2, allpages("F")), base + "&from=F")
    from_n = _at(_rendered(3, allpages("N")), base + "&from=N")
    copy = _at(_rendered(4, allpages("N")), base + "&from=N&utm_source=x")
    german = _at(_rendered(5, allpages("N", lang="de")), base + "&from=N")
    assert not items_differ(from_f, from_n)  # one letter: the URL item check reads nothing
    joined = 0
    for a, b in ((whole, from_f), (whole, from_n), (from_f, from_n)):
        d = judge(a, b, full=True)
        assert d.fields_veto and not d.result.is_duplicate, (a.url, b.url)
        joined += d.rule1
    assert joined  # a rule joined a pair, the form check kept it apart
    assert not fields_differ(from_n, copy) and compare(from_n, copy).is_duplicate
    assert not fields_differ(from_n, german)  # "de" is no value its URL asked for


def test_a_wikis_index_opened_at_two_namespaces_differs_beyond_the_sites_template():
    """DokuWiki's index opened at two namespaces (``do=index&idx=science`` / ``&idx=business``):
    one title, one h1, the site's tools and a tree that names every namespace on both; only the
    opened namespace's entries differ. Judged whole they are one page (rule 1 fires and no check
    of what the pages call themselves sees two items); judged beyond the site's template (the
    tools, the intro and the tree are on most of its pages) what is left is the entries, which
    differ. A copy under a tracking parameter is left with the same entries."""
    from scrapy_websim.core.match.template import templates_of_records

    spaces = {"science": "atoms comets fossils glaciers tides volcanoes",
              "business": "markets tariffs wages mergers pensions taxes",
              "culture": "opera novels poetry sculpture theatre ballet",
              "technology": "compilers routers databases sensors batteries satellites",
              "sports": "rowing fencing cycling archery sailing climbing",
              "travel": "ferries hostels passports railways maps luggage"}
    tools = ("<div class='tools'><p>Page tools: show pagesource, old revisions, backlinks, back to top. Site "
             "tools: recent changes, media manager, sitemap. User tools: log in. You can edit this page when you "
             "are logged in; every change is kept in the page's history, and the media manager holds the images "
             "of every namespace of the wiki.</p></div>")

    def page(title, body):
        return (f"<html><head><title>{title} [Wiki]</title></head><body><header><h1>Wiki</h1></header>"
                f"<main>{body}{tools}</main></body></html>")

    def index(opened):
        tree = "".join(f"<li><a href='/ns/{ns}'>{ns}</a>"
                       + ("<ul>" + "".join(f"<li><a href='/{ns}/{p}'>{p}</a></li>" for p in pages.split()) + "</ul>"
                          if ns == opened else "") + "</li>" for ns, pages in spaces.items())
        return page("Sitemap", "<h2>Sitemap</h2><p>This is a sitemap over all available pages ordered by "
                    f"namespaces.</p><ul>{tree}</ul>")

    def article(i, word):
        return page(word, f"<h2>{word}</h2><p>" + " ".join(
            f"The {word} article says thing number {k} about {word} in sentence {k} of {i}." for k in range(12))
            + "</p>")

    base = "http://127.0.0.1:8080/doku.php?do=index&idx="
    indexes = [_at(_rendered(i, index(ns)), base + ns, index(ns)) for i, ns in enumerate(spaces)]
    articles = [_at(_rendered(10 + i, article(i, w)), f"http://127.0.0.1:8080/doku.php?id={w}", article(i, w))
                for i, w in enumerate(("owl", "heron", "crane"))]
    copy = _at(_rendered(20, index("science")), base + "science&utm_source=feed", index("science"))
    templates = templates_of_records(indexes + articles + [copy])
    science, business = indexes[0], indexes[1]
    whole = judge(science, business, full=True)
    assert whole.rule1 and not (whole.items_veto or whole.title_items_veto or whole.fields_veto)
    beyond = judge(science, business, full=True, template=templates.for_pair(science, business))
    assert beyond.own is not None and beyond.own.template_a > 0
    assert not beyond.rule1 and not beyond.result.is_duplicate
    assert compare(science, copy, template=templates.for_pair(science, copy)).is_duplicate


def _rec(page_id, title, h1, shingles, url="http://127.0.0.1:8000/x"):
    import numpy as np

    from scrapy_websim.core.fingerprints import encode_shingle_set
    r = PageRecord(id=page_id, url=url, title=title)
    r.signals = {"h1": h1}
    r.shingle_set = encode_shingle_set(np.asarray(sorted(shingles), np.uint32))
    return r


def test_one_h1_on_both_pages_says_the_titles_differ_by_something_else():
    # an h1 that is the page's own heading, the same on both: the titles differ by something else
    # (an application that heads every page with its project's name gives its items no h1 of their
    # own; they differ by what they say: tests/test_template.py, the revisions of a repository)
    c = _rec(3, "glob - Unix style pathname - Python docs", "glob - Unix style pathname", [])
    d = _rec(4, "glob - Unix style pattern - Python docs", "glob - Unix style pathname", [])
    assert not title_items_differ(c, d)


def test_a_page_that_says_much_more_than_the_other_is_another_page():
    from scrapy_websim.core.match import similarity
    params = similarity.DEFAULT_DECISION_PARAMS
    shared = range(1000, 4000)
    short = _rec(1, "log", "", shared)
    noisy = _rec(2, "log", "", list(shared) + list(range(5000, 5080)))  # a server's noise: 80 shingles
    longer = _rec(3, "log", "", list(shared) + list(range(5000, 5700)))  # each entry's description: 700
    own = similarity.own_text(short, noisy)
    assert not similarity.says_much_more(short, noisy, own, params)
    own = similarity.own_text(short, longer)
    assert similarity.says_much_more(short, longer, own, params)
    assert not similarity.says_much_more(short, longer, None, params), "no exact counts: not checked"


def test_a_default_page_naming_the_host_it_is_served_from_is_one_page_on_every_host():
    """A hosting company's placeholder says "Welcome to <host>!" in its h1 on each host: what the
    server echoes of the request is not what the page calls itself, so the heading check (every
    word) leaves the host out."""
    def welcome(host):
        return (f"<html><head><title>Default Web Site Page</title></head><body><h1>Welcome to {host}!</h1>"
                + "<p>This is the default web page for this server. The site owner has not uploaded a site yet; "
                  "if you are the owner, log in to the control panel and publish your files.</p>" * 3
                + "</body></html>")

    a, b = _rendered(1, welcome("127.0.0.48")), _rendered(2, welcome("127.0.0.176"))
    a.url, b.url = "http://127.0.0.48:45855/", "http://127.0.0.176:45855/"
    assert a.signals["h1"] != b.signals["h1"] and heading_sim(a, b) == 1.0
    assert compare(a, b).is_duplicate
    other = _rendered(3, welcome("owls.example"))  # served from elsewhere: it names another site
    other.url = "http://127.0.0.9/"
    assert heading_sim(a, other) < 1.0


def test_pages_whose_titles_name_two_pages_are_not_duplicates():
    """A code browser's commit page (titled by the commit's subject and the repository: its
    message, then its diff) and the diff of a range of three commits around it (titled by the
    repository alone: most of the same changes, two files more, no message). Their text is alike
    well above rule 1's threshold and their headings are the browser's; only the titles say they
    are two pages. A copy of the commit
    on a mirror port keeps its title and stays its duplicate."""
    from scrapy_websim.core.match.similarity import titles_differ

    words = ("config reader params table field default validate message setting option value "
             "parser cluster store record feature render result output decision threshold").split()

    def diff(files):
        return "".join(f"<pre>--- a/src/{f}.py\n+++ b/src/{f}.py\n"
                       + "\n".join(f"+    {words[(f * 7 + i) % len(words)]}_{f}_{i} = "
                                   f"{words[(f + i * 3) % len(words)]}({words[(i * 5 + f) % len(words)]}, {i})"
                                   for i in range(12)) + "</pre>" for f in files)

    def page(title, body):
        return (f"<html><head><title>{title}</title></head><body><div id='header'><h1>Repositories</h1>"
                "<a href='/'>summary</a> <a href='/log'>log</a> <a href='/tree'>tree</a> <a href='/commit'>commit</a> "
                f"<a href='/diff'>diff</a></div><div id='content'>{body}</div>"
                "<div id='footer'>generated by the code browser</div></body></html>")

    message = ("<div class='message'>The parameters move into one package beside the function that "
               "declares them, so every tunable is read in one place and checked by one validator. "
               "Defaults, comments and checks are moved without change.</div>")
    repo = "repo - a tool that renders and compares web pages"
    commit_html = page("core params become one package of every parameter - " + repo, message + diff(range(18)))
    ranged_html = page(repo, diff(range(20)))
    mirror_html = commit_html.replace("generated by", "generated 2026-11-27 by")
    commit = _at(_rendered(1, commit_html), "http://127.0.0.1:8080/repo/commit/?id=78e18d7", commit_html)
    ranged = _at(_rendered(2, ranged_html), "http://127.0.0.1:8080/repo/diff/?id=d47069a&id2=86f68d9", ranged_html)
    mirror = _at(_rendered(3, mirror_html), "http://127.0.0.1:8081/repo/commit/?id=78e18d7", mirror_html)
    assert titles_differ(commit, ranged) and not titles_differ(commit, mirror)
    with_titles_alike = compare(commit, replace(ranged, title=commit.title))
    assert with_titles_alike.is_duplicate and with_titles_alike.content_sim >= 0.8  # the text alone merges them
    assert not compare(commit, ranged).is_duplicate
    assert compare(commit, mirror).is_duplicate
    # titles with nothing in common name two pages too; a word or two swapped by noise does not
    assert titles_differ(replace(commit, title="Changes"), replace(ranged, title="Release notes"))
    noisy = replace(mirror, title=commit.title.replace("every parameter", "each parameters"))
    assert not titles_differ(commit, noisy) and compare(commit, noisy).is_duplicate
    # the host a title names is left out: a default page titled by its host on two hosts is one page
    one, two = (page(f"Welcome to {host}", "<p>It works.</p>" * 30) for host in ("127.0.0.1", "127.0.0.2"))
    welcome = _at(_rendered(4, one), "http://127.0.0.1/", one)
    other = _at(_rendered(5, two), "http://127.0.0.2/", two)
    assert not titles_differ(welcome, other)


def _extended_information(i, url, html):
    """A page of a monitoring application fetched at ``url``: its features, the one title every
    page of it has."""
    from scrapy_websim.core.features import FeatureParams, compute_features
    from scrapy_websim.core.types import PageRecord

    r = PageRecord(id=i, url=url, final_url=url, status_code=200, content_type="text/html", html_len=len(html),
                   title="Extended Information")
    compute_features(r, html, b"", FeatureParams())
    return r


def test_pages_whose_text_names_the_item_their_url_asks_for_are_not_duplicates():
    """A monitoring application's hostgroup pages: one title ("Extended Information") and no h1 on
    every page, the same command links, and the group's name only in the text ("Hostgroup Web
    servers (web)"). Each names in its text what its URL asks for, in words the other page never
    has: two pages. A copy on a mirror port (and one with the time it was made) names its group
    in the same words and stays its duplicate; a page that names no word of its URL is not kept
    apart by it."""
    from scrapy_websim.core.match.similarity import items_differ

    def group(name, alias, stamp="05:49:19"):
        commands = "".join(f"<tr><td><a href='cmd.cgi?cmd_typ={i}'>{what} for all {kind} in this hostgroup</a>"
                           "</td></tr>"
                           for i, (what, kind) in enumerate(
                               (w, k) for w in ("Schedule downtime", "Enable notifications", "Disable notifications",
                                                "Enable active checks", "Disable active checks")
                               for k in ("hosts", "services")))
        return ("<html><head><title>Extended Information</title></head><body>"
                "<div class='infoBoxTitle'>Hostgroup Information</div>"
                f"<div>Last Updated: Fri Nov 27 {stamp} UTC 2026</div><div>Updated every 90 seconds</div>"
                "<a href='status.cgi'>View Status Detail For This Hostgroup</a> "
                "<a href='status.cgi?style=overview'>View Status Overview For This Hostgroup</a>"
                f"<div class='dataTitle'>Hostgroup</div><div class='dataTitle'>{alias}</div>"
                f"<div class='dataTitle'>({name})</div><div class='commandTitle'>Hostgroup Commands</div>"
                f"<table>{commands}</table></body></html>")

    fetched = _extended_information
    base = "http://127.0.0.1:8080/nagios4/cgi-bin/extinfo.cgi?type=5&hostgroup="
    web = fetched(1, base + "web", group("web", "Web servers"))
    storage = fetched(2, base + "storage", group("storage", "Storage arrays"))
    copy = fetched(3, base.replace(":8080", ":8081") + "web", group("web", "Web servers", stamp="05:51:02"))
    assert compare(web, replace(storage, signals={**storage.signals, "iu": {}})).is_duplicate  # without it: one page
    assert items_differ(web, storage) and not compare(web, storage).is_duplicate
    assert not items_differ(web, copy) and compare(web, copy).is_duplicate
    # the same pages under URLs that name nothing they say: nothing to tell them apart by
    plain = [fetched(4, "http://127.0.0.1:8080/hostgroup?id=11", group("web", "Web servers")),
             fetched(5, "http://127.0.0.1:8080/hostgroup?id=12", group("storage", "Storage arrays"))]
    assert not items_differ(*plain) and compare(*plain).is_duplicate


def test_a_number_that_is_part_of_a_name_in_the_url_names_the_item():
    """Two host pages of a monitoring application whose hosts differ by a number only
    (``web-ams-01``, ``web-ams-02``): one title, no h1, and the name only in the text. The number
    is part of a name in the URL (a value with letters), so each page's text names its own item in
    words the other never has: two pages. A copy of a host's page (another path, another time) is
    still its duplicate, and a number that is a value of its own (``page=2``, a date path) is not
    taken for a name."""
    from scrapy_websim.core.fingerprints import item_words
    from scrapy_websim.core.match.similarity import items_differ

    assert {"web", "ams", "01"} <= item_words("http://h/cgi-bin/extinfo.cgi?type=1&host=web-ams-01")
    assert "1" not in item_words("http://h/cgi-bin/extinfo.cgi?type=1&host=web-ams-01")
    assert "2" not in item_words("http://h/list?page=2") and "11" not in item_words("http://h/2026/11/post")
    assert "2" not in item_words("http://h/docs/v1.2/intro.html")

    def host(name, stamp="08:41:45"):
        services = "".join(f"<tr><td>{s}</td><td>OK</td><td>{s} check is fine and responds in time</td></tr>"
                           for s in ("PING", "SSH", "HTTP", "HTTPS", "Disk /", "Load", "Users", "Swap"))
        return ("<html><head><title>Extended Information</title></head><body>"
                "<div class='infoBoxTitle'>Host Information</div>"
                f"<div>Last Updated: Fri Nov 27 {stamp} UTC 2026</div><div>Updated every 90 seconds</div>"
                f"<div class='data'>Host</div><div class='dataTitle'>{name}</div><div class='dataTitle'>({name})</div>"
                "<div>Member of linux-servers web-servers</div><div>Host State: UP (for 0d 2h 13m 5s)</div>"
                f"<table>{services}</table><div class='commandTitle'>Host Commands</div>"
                "<a href='cmd.cgi?cmd_typ=55'>Schedule downtime for this host</a>"
                "<a href='cmd.cgi?cmd_typ=25'>Disable active checks of this host</a></body></html>")

    fetched = _extended_information
    base = "http://127.0.0.1:8080/nagios4/cgi-bin/extinfo.cgi?type=1&host="
    one = fetched(1, base + "web-ams-01", host("web-ams-01"))
    two = fetched(2, base + "web-ams-02", host("web-ams-02"))
    copy = fetched(3, base.replace("nagios4/cgi-bin", "cgi-bin/nagios4") + "web-ams-01",
                   host("web-ams-01", stamp="08:43:02"))
    assert items_differ(one, two) and not compare(one, two).is_duplicate
    assert not items_differ(one, copy) and compare(one, copy).is_duplicate
    # without the number as a word of the name, the two hosts were one page
    names = {w: v for w, v in one.signals["iu"].items() if w != "01"}
    assert compare(replace(one, signals={**one.signals, "iu": names}), two).is_duplicate
