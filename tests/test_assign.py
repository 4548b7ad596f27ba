"""Rule clusters and content clusters combined into one cluster per page."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.match.assign import AssignParams, combine, content_cluster_id
from scrapy_websim.core.params.rules import RULE_CODES, RuleParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.types import Assignment, Cluster, PageRecord
from tests.test_rules import (  # noqa: F401  (nginx_site is a fixture)
    ARTICLE,
    LOGIN_FORM,
    NGINX_EXPECTED,
    from_fetch,
    make_record,
    nginx_site,
    page,
    waf_page,
)

A = "http://a.test"
B = "http://b.test:8080"


def rec(i, url, status=200, html=None, final=None, **kw):
    r = make_record(html if html is not None else page(f"P{i}", ARTICLE), status, url,
                    final or url, page_id=i)
    for k, v in kw.items():
        setattr(r, k, v)
    return r


def check_partition(records, out, clusters):
    """Every page in exactly one cluster or none; assignments agree with clusters[]."""
    assert set(out) == {r.id for r in records}
    seen = {}
    for c in clusters:
        assert c.canonical_id in c.member_ids and c.member_ids == sorted(c.member_ids)
        for m in c.member_ids:
            assert m not in seen, f"page {m} in {seen.get(m)} and {c.cluster_id}"
            seen[m] = c.cluster_id
            assert out[m].cluster_id == c.cluster_id
            assert out[m].is_canonical == (m == c.canonical_id)
            assert out[m].cluster_kind == c.kind
    for i, a in out.items():
        if i not in seen:
            assert a.cluster_id == "" and a.is_canonical and a.match_rule == ""
    assert len({c.cluster_id for c in clusters}) == len(clusters)


def by_id(clusters):
    return {c.cluster_id: c for c in clusters}


def _rule_records():
    return [
        rec(1, A + "/x", 500, page("Error", ARTICLE)),
        rec(2, A + "/y", 502, page("Bad gateway", "<h1>Bad gateway</h1>")),
        rec(3, B + "/x", 500, page("Error", ARTICLE)),
        rec(4, A + "/nf1", 404, page("Not found", "<h1>Not found</h1><p>/nf1 is gone</p>")),
        rec(5, A + "/nf2", 404, page("Not found", "<h1>Not found</h1><p>/a/b/c is gone</p>")),
        rec(6, A + "/waf1", 403, waf_page("id1abc", "t1", "2024")),
        rec(7, A + "/waf2", 403, waf_page("Zz9QwErTy", "t2", "2025")),
        rec(8, A + "/login", 200, page("Sign in", LOGIN_FORM.format(csrf="q1"))),
        rec(9, A + "/c1", 200),
        rec(10, B + "/nf3", 404, page("Not found", "<h1>Not found</h1><p>/x/y is gone</p>")),
        rec(11, B + "/waf", 403, waf_page("Qq1", "t3", "2026")),
        rec(12, B + "/busy", 503, page("Error", ARTICLE)),  # the 500 page's template as a 503
    ]


def test_rule_groups_one_cluster_per_template_across_hosts():
    records = _rule_records()
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    groups = {c.kind + ":" + ",".join(map(str, c.member_ids)): c for c in clusters}
    assert sorted(groups) == ["E1:1,3", "E1:12", "E1:2", "E3:4,5,10", "L1:8", "W1:6,7,11"]
    for c in clusters:
        prefix, digest = c.cluster_id.rsplit("-", 1)
        assert prefix == {"E1": "err5xx", "E3": "errtpl", "L1": "loginwall", "W1": "waf"}[c.kind]
        assert len(digest) == 16 and int(digest, 16) >= 0  # the full 64-bit template hash
    assert [groups[k].origins for k in ("E1:1,3", "E1:2", "E3:4,5,10", "L1:8", "W1:6,7,11")] == [2, 1, 2, 1, 2]
    assert out[8].is_canonical and out[8].match_rule == "canonical"  # a lone login wall is labelled
    assert out[9] == Assignment()
    assert sorted(out[i].match_rule for i in (6, 7, 11)) == ["W1", "W1", "canonical"]


def test_origin_scope_gives_the_reference_tools_ids():
    records = _rule_records()
    params = AssignParams(rules=RuleParams(scope="origin"))
    out, clusters = combine(records, {}, [], params)
    check_partition(records, out, clusters)
    cl = by_id(clusters)
    assert cl["err5xx-http://a.test"].member_ids == [1, 2]  # every 5xx of an origin
    assert cl["err5xx-http://b.test:8080"].member_ids == [3, 12]
    e3 = sorted((c.member_ids, c.cluster_id) for c in clusters if c.kind == "E3")
    assert [m for m, _ in e3] == [[4, 5], [10]]
    assert e3[0][1].startswith("errtpl-http://a.test-") and len(e3[0][1]) == len("errtpl-http://a.test-") + 16
    assert e3[1][1].startswith("errtpl-http://b.test:8080-")
    assert e3[0][1].rsplit("-", 1)[1] == e3[1][1].rsplit("-", 1)[1]  # same template hash
    waf = sorted(c.member_ids for c in clusters if c.kind == "W1")
    assert waf == [[6, 7], [11]]
    assert all(c.origins == 1 for c in clusters)
    with pytest.raises(ValueError, match="scope"):
        RuleParams(scope="host").validate()


def test_e3_groups_split_by_length():
    small = page("Not found", "<h1>Not found</h1>")
    big = small.replace("</main>", "<div>" + "<span></span>" * 200 + "</div></main>")
    records = [rec(1, A + "/a", 404, small), rec(2, A + "/b", 404, small)]
    records += [rec(3, A + "/c", 404, big)]
    records[2].fingerprint = records[0].fingerprint  # same template text, much longer HTML
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    e3 = sorted((c.member_ids, c.cluster_id) for c in clusters)
    assert [m for m, _ in e3] == [[1, 2], [3]]
    assert e3[1][1] == e3[0][1] + "-2"


def test_canonical_of_rule_cluster_prefers_200_then_longest_text_then_smallest_id():
    html = page("Sign in", LOGIN_FORM.format(csrf="abc"))
    records = [rec(5, A + "/m1", 200, html), rec(3, A + "/m2", 401, html),
               rec(4, A + "/m3", 401, html)]
    records[0].text_len = 1
    out, clusters = combine(records, {}, [])
    (c,) = clusters
    assert c.canonical_id == 5 and c.canonical_url == A + "/m1"  # status 200 first
    records[0].status_code = 401
    _, (c,) = combine(records, {}, [])
    assert c.canonical_id == 3


def test_content_clusters_kept_and_r1_u1_for_pages_left_alone():
    records = [
        rec(1, A + "/a"), rec(2, A + "/a-copy"),                  # content cluster
        rec(3, A + "/old", final=A + "/new"), rec(4, A + "/older", final=A + "/new"),  # R1
        rec(5, A + "/docs/index.html"), rec(6, A + "/docs/?utm_source=x"),            # U1
        rec(7, A + "/view?id=1"), rec(8, A + "/view?id=2"),       # different pages
        rec(9, A + "/a?utm_medium=mail"),                          # U1 joins content cluster
        rec(10, A + "/moved", final=A + "/a-copy"),                # R1 joins content cluster
    ]
    cc = Cluster("content-x", 1, A + "/a", [1, 2], "content")
    content = {1: Assignment("content-x", True, "content", "canonical"),
               2: Assignment("content-x", False, "content", "rule1")}
    out, clusters = combine(records, content, [cc])
    check_partition(records, out, clusters)
    cl = by_id(clusters)
    assert cl["content-x"].member_ids == [1, 2, 9, 10]
    assert out[2].match_rule == "rule1" and out[9].match_rule == "U1" and out[10].match_rule == "R1"
    assert out[9].cluster_kind == "content"
    r1 = [c for c in clusters if c.kind == "R1"]
    assert len(r1) == 1 and r1[0].member_ids == [3, 4] and r1[0].cluster_id.startswith("redir-")
    u1 = [c for c in clusters if c.kind == "U1"]
    assert [c.member_ids for c in u1] == [[5, 6]]
    assert u1[0].cluster_id == "urlcanon-http://a.test-/docs"
    assert out[7] == Assignment() and out[8] == Assignment()


def test_content_wins_over_a_rule_and_rules_can_be_switched_off():
    records = [rec(1, A + "/t", 200, "<html><body>tiny</body></html>"), rec(2, A + "/t/")]
    cc = Cluster("content-y", 2, A + "/t/", [1, 2], "content")
    content = {1: Assignment("content-y", False, "content", "rule2"),
               2: Assignment("content-y", True, "content", "canonical")}
    out, clusters = combine(records, content, [cc])
    assert [c.cluster_id for c in clusters] == ["content-y"] and out[1].match_rule == "rule2"
    no_u1 = AssignParams(rules=RuleParams(enabled_rules=tuple(r for r in RULE_CODES
                                                              if r not in ("U1", "T1"))))
    out, clusters = combine(records, {}, [], no_u1)
    assert clusters == [] and out[1] == Assignment()
    out, clusters = combine(records, {}, [])
    # /t is thin; /t/ is the same URL after normalisation and joins it by U1.
    assert {c.kind for c in clusters} == {"T1"}
    assert out[2].cluster_id == out[1].cluster_id and out[2].match_rule == "U1"


def test_predicted_duplicates_join_their_target():
    records = [
        rec(1, A + "/p1"), rec(2, A + "/p2"),
        PageRecord(id=3, url=A + "/p1?ref=x", predicted_duplicate_of=A + "/p1"),
        PageRecord(id=4, url=A + "/p1?ref=y", predicted_duplicate_of=A + "/p1?ref=x"),  # chain
        PageRecord(id=5, url=A + "/q", predicted_duplicate_of=A + "/final-of-2"),
        PageRecord(id=6, url=A + "/zz", predicted_duplicate_of="http://elsewhere.test/"),
        rec(7, A + "/nf", 404, page("Not found", "<h1>Not found</h1>")),
        PageRecord(id=8, url=A + "/nf2", predicted_duplicate_of=A + "/nf"),
    ]
    records[1].final_url = A + "/final-of-2"
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    c1 = by_id(clusters)[content_cluster_id(A + "/p1")]
    assert c1.member_ids == [1, 3, 4] and c1.canonical_id == 1 and c1.kind == "content"
    assert out[3].match_rule == out[4].match_rule == "predicted"
    assert out[5].cluster_id == content_cluster_id(A + "/p2")
    assert out[6] == Assignment()  # target not in the crawl
    assert out[8].cluster_kind == "E3" and out[8].cluster_id == out[7].cluster_id


def _corpus():
    recs = [
        rec(1, A + "/x", 500), rec(2, A + "/y", 502), rec(3, A + "/nf1", 404),
        rec(4, A + "/nf2", 404), rec(5, A + "/old", final=A + "/new"),
        rec(6, A + "/older", final=A + "/new"), rec(7, A + "/d/index.html"), rec(8, A + "/d/"),
        rec(9, A + "/a"), rec(10, A + "/b"),
        PageRecord(id=11, url=A + "/pp", predicted_duplicate_of=A + "/a"),
        rec(12, A + "/login", 401, page("Sign in", LOGIN_FORM.format(csrf="r"))),
        rec(13, B + "/login", 401, page("Sign in", LOGIN_FORM.format(csrf="s"))),
    ]
    cc = [Cluster("content-ab", 9, A + "/a", [9, 10], "content")]
    content = {9: Assignment("content-ab", True, "content", "canonical"),
               10: Assignment("content-ab", False, "content", "rule1")}
    return recs, content, cc


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False))
def test_deterministic_whatever_the_input_order(rnd):
    recs, content, cc = _corpus()
    expected = combine(recs, content, cc)
    shuffled = list(recs)
    rnd.shuffle(shuffled)
    content_items = list(content.items())
    rnd.shuffle(content_items)
    assert combine(shuffled, dict(content_items), cc) == expected
    check_partition(recs, *expected)
    logins = [c for c in expected[1] if c.kind == "L1"]
    assert len(logins) == 1 and logins[0].origins == 2  # same template on two origins: one cluster
    origin_scope = AssignParams(rules=RuleParams(scope="origin"))
    per_origin = combine(recs, content, cc, origin_scope)
    assert combine(shuffled, dict(content_items), cc, origin_scope) == per_origin
    assert len([c for c in per_origin[1] if c.kind == "L1"]) == 2


def test_real_site_grouping(nginx_site):  # noqa: F811 - the fixture imported from test_rules
    """Real nginx pages (see test_rules): labels and groups after combine."""
    _base, pages = nginx_site
    records = [from_fetch(f, page_id=i) for i, (path, f) in enumerate(sorted(pages.items()))]
    ids = {path: i for i, path in enumerate(sorted(pages))}
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)

    def same(*paths):
        return len({out[ids[p]].cluster_id for p in paths}) == 1 and out[ids[paths[0]]].cluster_id

    assert same("/dead", "/dead2")  # nginx's 502 page; the 503 maintenance page is another template
    assert out[ids["/maint503"]].cluster_kind == "E1" and not same("/dead", "/maint503")
    assert same("/missing-1", "/missing/2.html")
    assert same("/shop/a", "/shop/b?x=1")
    assert same("/waf/1", "/waf/2")
    assert same("/private/a", "/private/b")
    assert same("/old", "/old2", "/final.html")
    assert out[ids["/old"]].cluster_kind == "R1"
    assert same("/docs/", "/docs/index.html", "/docs/?utm_source=news")
    assert out[ids["/docs/"]].cluster_kind == "U1"
    assert out[ids["/view?id=1"]].cluster_id == "" and out[ids["/view?id=2"]].cluster_id == ""
    assert out[ids["/missing-1"]].cluster_id != out[ids["/shop/a"]].cluster_id  # two templates
    for path, expected in NGINX_EXPECTED.items():
        if expected in ("E1", "E3", "L1", "W1", "M1", "T1"):
            assert out[ids[path]].cluster_kind == expected, path
        if path.startswith("/py/"):
            assert out[ids[path]].cluster_id == "", path


def test_a_predicted_page_joins_the_page_whose_url_only_differs_by_parameter_order():
    """The predictor keys URLs with a sorted query; the duplicate it names must be the URL as the
    crawl knows it, or the predicted page is left alone (a past bug)."""
    from scrapy_websim.core.urls.predictor import DupePredictor

    text = " ".join(f"word{i}" for i in range(300))
    rendered = A + "/list?sort=new&page=2"
    dp = DupePredictor(texts_sample=[text])
    dp.update_model(rendered, text)
    prob, dupe = dp.predict(A + "/list?page=2&sort=new")
    assert prob == 1.0 and dupe == rendered  # not the key form "...?page=2&sort=new"
    records = [rec(1, rendered), rec(2, A + "/list?page=2&sort=new&utm_x=1", rendered=False,
                                     predicted_duplicate_of=dupe)]
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    assert out[1].cluster_id and out[1].cluster_id == out[2].cluster_id


def test_origin_of_is_url_origin():
    """The per-authority cache of origins gives what canonicalising the whole URL gives."""
    from scrapy_websim.core.match.assign import origin_of
    from scrapy_websim.core.urls.normalize import url_origin

    urls = ["http://a.test/x", "HTTP://A.Test:80/y?q#f", "https://a.test:443", "https://a.test:8443/p",
            " http://b.test/ ", "http://user:pw@c.test:81/x", "http://[::1]:8080/x", "http://[::1/x",
            "http://a.test:99999/x", "mailto:x@y", "foo", "//a.test/x", "http://bücher.de/ä", "http://a.test\\foo/x",
            "http://a.test?x=1", "http://a.test#f", "",
            "http://a.test:/x", "http://a.test\t/x", "http:/a.test/x", "https://A.test.:443/", "ftp://f.test/x"]
    for url in urls + urls:  # the second time from the cache
        assert origin_of(url) == url_origin(url), url


def _rendered(i, url, html, status=200, final=None):
    """A PageRecord with the features the pipeline computes from the rendered HTML."""
    r = PageRecord(id=i, url=url, final_url=final or url, status_code=status, content_type="text/html",
                   html_len=len(html.encode("utf-8")), rendered=True)
    compute_features(r, html, b"", FeatureParams())
    return r


def test_hash_routes_are_different_pages_when_they_render_different_text():
    """A client-rendered app routes on the fragment: the server sends one shell for /#/owls and
    /#/herons, the browser renders two pages. U1 merges a fragment variant only when it rendered
    the same text; an in-page anchor (same text) or a page without text still merges."""
    def app(title, sentence):
        return page(title, f"<h1>{title}</h1>" + f"<p>{sentence}</p>" * 12)

    owls = app("Owls", "Owls hunt at night and rest by day in barns and dense conifers.")
    herons = app("Herons", "Herons stand still at the edge of the water and strike at fish.")
    guide = app("Guide", "Install the package, then run the command on a list of URLs.")
    records = [
        _rendered(1, A + "/#/owls", owls), _rendered(2, A + "/#/herons", herons),
        _rendered(3, A + "/index.html#/owls", owls),           # the same route under another spelling
        _rendered(4, A + "/guide#usage", guide), _rendered(5, A + "/guide", guide),  # an in-page anchor
        PageRecord(id=6, url=B + "/app#/a", error="page timeout"),  # nothing rendered: the URL is all
        PageRecord(id=7, url=B + "/app#/b", error="page timeout"),  # there is to go by
    ]
    assert records[0].text_hash is not None and records[0].text_hash != records[1].text_hash
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    u1 = sorted(c.member_ids for c in clusters if c.kind == "U1")
    assert u1 == [[1, 3], [4, 5], [6, 7]]
    assert out[2] == Assignment()
    # one cluster per rendering: the ids differ although two normalised URLs are equal
    assert out[1].cluster_id.startswith("urlcanon-http://a.test-/#") and len(out[1].cluster_id) == 41
    assert out[6].cluster_id == "urlcanon-http://b.test:8080-/app"


def test_thin_pages_naming_their_own_item_are_not_one_rule_cluster():
    """Generated "no usage" pages of two classes: one template, whose only words of their own are
    the class name (echoed from the URL, so the template fingerprint is the same); each names its
    class in its title and is a page of its own. The same thin page on a mirror (another port,
    in its title too) and a placeholder served on two hosts are one cluster each."""
    def uses(name, port=8001):
        return rec(0, f"http://127.0.0.1:{port}/api/java/awt/class-use/{name}.html",
                   html=f"<html><head><title>Uses of Class java.awt.{name} (port {port})</title></head><body>"
                        f"<main><h1>Uses of Class<br>java.awt.{name}</h1><p>No usage of java.awt.{name}</p></main>"
                        + "<!-- " + "x" * 1100 + " --></body></html>")
    placeholder = ("<html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1>"
                   "<p>If you see this page, the web server works.</p></body></html>")
    records = [uses("Robot"), uses("Robot", 8002), uses("Frame"),
               rec(0, "http://127.0.0.1:8003/", html=placeholder), rec(0, "http://127.0.0.1:8004/", html=placeholder)]
    for i, r in enumerate(records, 1):
        r.id = i
    assert {special_label(r) for r in records} == {"T1"}
    assert records[0].fingerprint == records[2].fingerprint  # the class name is an echo of the URL
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    assert out[1].cluster_id == out[2].cluster_id != out[3].cluster_id
    assert out[4].cluster_id == out[5].cluster_id and out[4].cluster_id.startswith("thin-")
    assert out[3].is_canonical and out[3].cluster_id not in (out[1].cluster_id, out[4].cluster_id)


def test_a_thin_page_and_its_copy_in_other_chrome_are_one_cluster():
    """A mirror that adds a style sheet and a site menu, or a server banner, changes the template
    fingerprint but not the page's few words: the two are one thin cluster. A thin page with other
    words under the same title stays apart, and one that differs only in a number joins (the
    shape of the words masks numbers: "Ref 1234" / "Ref 98")."""
    words = "<main><h1>Uses of Class<br>java.awt.Robot</h1><p>No usage of java.awt.Robot</p></main>"
    head = "<html><head><title>Uses of Class java.awt.Robot</title>"
    htmls = [head + "</head><body>" + words + "<!-- " + "x" * 1100 + " --></body></html>",
             head + "<link rel=stylesheet href=/other.css></head><body><header><nav><ul>"
             + "".join(f"<li><a href=/s{i}>Section {i}</a></li>" for i in range(6)) + "</ul></nav></header>"
             + words + "<footer><p>Mirror</p></footer><!-- " + "x" * 1100 + " --></body></html>",
             head + "</head><body><main><h1>Uses of Class<br>java.awt.Robot</h1><p>Removed in this release</p>"
             + "</main><!-- " + "x" * 1100 + " --></body></html>",
             head + "</head><body><main><h1>Uses of Class<br>java.awt.Robot</h1><p>Removed in release 17</p>"
             + "</main><!-- " + "x" * 1100 + " --></body></html>",
             head + "</head><body><main><h1>Uses of Class<br>java.awt.Robot</h1><p>Removed in release 9</p>"
             + "</main><!-- " + "x" * 1100 + " --></body></html>"]
    records = [rec(i, f"http://127.0.0.1:800{i}/api/Robot.html", html=html) for i, html in enumerate(htmls, 1)]
    for r, html in zip(records, htmls):
        compute_features(r, html, None, FeatureParams())  # the main text and its shape
    assert {special_label(r) for r in records} == {"T1"}
    plain, chrome, other, release17, release9 = records
    assert plain.fingerprint != chrome.fingerprint and plain.text_shape == chrome.text_shape is not None
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    assert out[1].cluster_id == out[2].cluster_id != out[3].cluster_id
    assert out[4].cluster_id != out[3].cluster_id and out[4].cluster_id != out[1].cluster_id
    assert release17.text_hash != release9.text_hash and out[4].cluster_id == out[5].cluster_id


def test_an_error_template_whose_pages_grow_with_the_path_they_echo_is_one_cluster():
    """A code browser's "Path not found" grows with the path it echoes (a link per segment): HTML
    lengths from 1,000 to 1,700 bytes in small steps are one template, however far the ends are
    apart; a page of the template five times as long stands apart (E3's 20 % length rule is a gap
    between lengths, not a cut through a run of them)."""
    def missing(i, depth):
        crumbs = " / ".join(f"<a href='/repo/tree/{'/'.join(f'dir{k}' for k in range(j + 1))}'>dir{j}</a>"
                            for j in range(depth))
        return _rendered(i, f"{A}/repo/tree/{'/'.join(f'dir{k}' for k in range(depth))}/x",
                         page("Not found", f"<p>path: {crumbs}</p><h1>Path not found</h1>"), 404)
    records = [missing(i, depth) for i, depth in enumerate(range(1, 9), start=1)]
    lengths = sorted(r.html_len for r in records)
    assert lengths[0] < 0.8 * lengths[-1] and all(a >= 0.8 * b for a, b in zip(lengths, lengths[1:]))
    name = "a-very-long-directory-name-" * 200
    big = _rendered(20, f"{A}/repo/tree/big", page("Not found", f"<p>path: <a href='/repo/tree/{name}'>{name}</a></p>"
                                                                 "<h1>Path not found</h1>"), 404)
    out, clusters = combine(records + [big], {}, [])
    check_partition(records + [big], out, clusters)
    assert len({out[r.id].cluster_id for r in records}) == 1
    assert out[big.id].cluster_id.startswith(out[1].cluster_id + "-")


def test_a_rendered_page_does_not_join_its_url_twins_error_page():
    """``/`` and ``/index.php`` are one URL after normalisation, but on a server without PHP the
    first is a directory listing and the second the server's 404: what the two rendered tells
    them apart, so the listing does not join the 404's error cluster by U1. A URL variant that
    rendered nothing (a timeout) has only its URL to go by and still joins."""
    entries = "".join(f'<tr><td><a href="file{i}.tar.gz">release-{i}.tar.gz</a></td><td>2024-03-{i + 1:02d}</td>'
                      f"<td>{i * 7 + 3}M</td></tr>" for i in range(12))
    listing = ("<html><head><title>Index of /</title></head><body><h1>Index of /</h1><table>"
               "<tr><th>Name</th><th>Last modified</th><th>Size</th></tr>" + entries + "</table></body></html>")
    not_found = ("<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
                 "<p>The requested URL was not found on this server.</p><hr><address>Apache Server at 127.0.0.1"
                 "</address></body></html>")
    records = [_rendered(1, A + "/", listing), _rendered(2, A + "/index.php", not_found, status=404),
               _rendered(3, A + "/missing", not_found, status=404),
               _rendered(4, B + "/index.php", not_found, status=404),
               PageRecord(id=5, url=B + "/", error="page timeout")]
    out, clusters = combine(records, {}, [])
    check_partition(records, out, clusters)
    assert out[2].cluster_kind == "E3" and out[3].cluster_id == out[2].cluster_id
    assert out[1].cluster_kind != "E3" and out[1].cluster_id != out[2].cluster_id
    assert out[5].cluster_id == out[4].cluster_id and out[5].match_rule == "U1"
