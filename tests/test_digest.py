"""The content digest (``core/page/digest.py``): what it masks, what it keeps, and how two digests
of one URL compare, on pages built here and run through the real feature code."""

from __future__ import annotations

import random

from scrapy_websim.core.features import FeatureParams, compute_features
from scrapy_websim.core.page.digest import DIGEST_VERSION, compare, excerpt, masked_words, parse_digest
from scrapy_websim.core.params.page import ChangeParams
from scrapy_websim.core.types import OUTPUT_FIELDS, PageRecord
from scrapy_websim.result.diff import compare_url
from scrapy_websim.result.rows import output_row

WORDS = ("river valley stone forest meadow harbour lantern orchard candle bridge mountain garden "
         "window letter morning silver thunder pebble willow basket ladder marble copper velvet").split()


def prose(seed: int, words: int = 300) -> str:
    rnd = random.Random(seed)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9))) for _ in range(400)]
    return " ".join(rnd.choice(vocab) for _ in range(words))


def page(title: str, main: str, chrome: str = "", extra: str = "") -> str:
    return (f"<html><head><title>{title}</title></head><body><header><nav>{chrome}</nav></header>"
            f"<main><h1>{title}</h1>{main}</main>{extra}<footer>Footer</footer></body></html>")


def row(html: str, url: str = "http://t/p", status: int = 200, title: str = "") -> dict:
    rec = PageRecord(id=1, url=url, final_url=url, status_code=status, content_type="text/html", title=title,
                     html_len=len(html), rendered=True)
    compute_features(rec, html, None, FeatureParams())
    return dict(output_row(rec, None))


def kinds(old: dict, new: dict, old_kind: str = "", new_kind: str = "") -> list:
    return compare_url(old, new, old_kind, new_kind).kinds


def test_masked_words_hide_what_changes_per_request():
    a = masked_words("Generated 2024-01-15 12:03:44 by node 7, token kQzPwXvBnMaaQ, visitors 12345")
    b = masked_words("Generated 2025-11-02 9:05 by node 31, token ZxYwVuTsRqPoN, visitors 98")
    assert a == b == ["generated", "0", "by", "node", "0", "token", "0", "visitors", "0"]
    assert masked_words("日本語") == ["日本", "本語"]  # CJK: character pairs, as the other text hashes cut them


def test_the_digest_is_in_every_record_and_reads_back():
    html = page("Rivers", f"<p>{prose(1)}</p>")
    r = row(html, title="Rivers")
    assert tuple(r)[-3:] == ("excerpt", "content_digest", "render_from") == OUTPUT_FIELDS[-3:]
    assert r["content_digest"].startswith(DIGEST_VERSION + ".") and len(r["content_digest"]) < 260
    assert r["excerpt"].startswith("Rivers ") or r["excerpt"].startswith(prose(1)[:20])
    d = parse_digest(r["content_digest"])
    assert d is not None and d.shingles > 250 and not d.listing
    delta = compare(d, d)
    assert (delta.text_similarity, delta.changed, delta.structure_distance, delta.entries_changed) == (1.0, 0, 0, False)
    for bad in ("", None, "d0.1.2", "d1.x.y.z.1.0.0.0", "d2" + r["content_digest"][2:], 42):
        assert parse_digest(bad) is None
    assert excerpt("a  b\n c " * 100, 20) == "a b c a b c a b c a\u2026"


def test_per_request_noise_is_no_change_and_replaced_content_is():
    body = prose(2)

    def noisy(seed: int) -> str:
        rnd = random.Random(seed)
        links = [f"<li><a href='/p{i}?sid={rnd.getrandbits(64):x}'>Related story number {w}</a></li>"
                 for i, w in enumerate(WORDS[:6])]
        rnd.shuffle(links)
        banner = " ".join(rnd.choice(WORDS) for _ in range(12))
        return page("News", f"<p>{banner}. {body} Rendered {rnd.randint(1, 28)}/11/2025 {rnd.randint(0, 23)}:"
                            f"{rnd.randint(10, 59)}, request {rnd.getrandbits(80):x}, visitors "
                            f"{rnd.randint(1, 99999)}.</p><ul>{''.join(links)}</ul>"
                            f"<input type=hidden name=csrf value={rnd.getrandbits(128):x}>")

    old, new = row(noisy(1), title="News"), row(noisy(2), title="News")
    assert old["excerpt"] != new["excerpt"] and old["content_digest"] != new["content_digest"]
    assert kinds(old, new) == []
    replaced = row(page("News", f"<p>{prose(3)}</p>"), title="News")
    got = compare_url(old, replaced, "", "")
    assert got.kinds == ["content"] and got.figures["text_similarity"] < 0.2
    # a small edit (a sentence in a long article) is below the thresholds, and a tunable one
    edited = row(page("News", f"<p>{body} {' '.join(WORDS[:10])}</p>"), title="News")
    base = row(page("News", f"<p>{body}</p>"), title="News")
    assert kinds(base, edited) == []
    strict = ChangeParams(text_similarity=1.0, min_changed_pairs=5)
    assert compare_url(base, edited, "", "", strict).kinds == ["content"]


def test_a_thin_page_with_a_rotating_tip_is_unchanged_but_another_template_is_a_change():
    def thin(tip: str) -> str:
        return f"<html><head><title>Status</title></head><body><h1>Status</h1><p>All systems operational.</p>" \
               f"<p class=tip>Tip: {tip}</p></body></html>"

    a = row(thin("press the question mark key to see every keyboard shortcut"), title="Status")
    b = row(thin("pin a project to keep it at the top of your list forever"), title="Status")
    assert kinds(a, b, "T1", "T1") == []
    # a tip of two dozen words is all the page says: it rotates, the page stays (its structure and title)
    long_a = row(thin(prose(21, 24)), title="Status")
    long_b = row(thin(prose(22, 24)), title="Status")
    assert compare(parse_digest(long_a["content_digest"]), parse_digest(long_b["content_digest"])).changed >= 20
    assert kinds(long_a, long_b, "T1", "T1") == []
    assert kinds(long_a, dict(row(thin(prose(22, 24)), title="Hacked")), "T1", "T1") == ["content"]
    other = row("<html><head><title>Status</title></head><body><table><tr><td><b>Service</b></td><td>down</td></tr>"
                "<tr><td><i>Since</i></td><td>this morning, engineers are on it</td></tr></table></body></html>",
                title="Status")
    assert kinds(a, other, "T1", "T1") == ["content"]
    # an error template of another server, the page staying an error page
    nginx = row("<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center>"
                "<hr><center>nginx/1.22.1</center></body></html>", status=404, title="404 Not Found")
    apache = row("<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was "
                 "not found on this server.</p><hr><address>Apache/2.4.57 (Debian) Server at 127.0.0.1 Port 80"
                 "</address></body></html>", status=404, title="404 Not Found")
    assert kinds(nginx, apache, "E3", "E3") == ["template"]


def listing(names, chrome: bool = True) -> str:
    entries = "".join(f'<a href="{n}">{n}</a>  12-Jan-2025 10:{i:02d}  {i * 7}\n' for i, n in enumerate(names))
    nav = '<nav><a href="/">Home</a> <a href="/about">About</a></nav>' if chrome else ""
    return (f"<html><head><title>Index of /files/</title></head><body>{nav}<h1>Index of /files/</h1><hr>"
            f'<pre><a href="../">../</a>\n{entries}</pre><hr></body></html>')


def test_a_listing_that_gained_or_lost_a_file_changed():
    names = [f"report-{i:02d}.txt" for i in range(12)]
    old = row(listing(names), title="Index of /files/")
    d = parse_digest(old["content_digest"])
    assert d is not None and d.listing and d.entries == 12  # the parent link and the navigation are not entries
    same = row(listing(names).replace("12-Jan-2025", "15-Feb-2026"), title="Index of /files/")
    assert kinds(old, same) == []
    grown = row(listing(names + ["backup.tar.gz"]), title="Index of /files/")
    got = compare_url(old, grown, "", "")
    assert got.kinds == ["listing"] and "12 -> 13 entries (+1)" in got.why[0]
    shrunk = row(listing(names[:-1]), title="Index of /files/")
    assert kinds(old, shrunk) == ["listing"]


def test_a_label_that_flips_while_the_page_stays_the_same_is_no_change():
    html = page("Help", f"<p>{prose(5)}</p>")
    a, b = row(html, title="Help"), row(html, title="Help")
    assert kinds(a, b, "", "E3") == []  # judged a soft 404 this time (a calibration), the page unchanged
    assert kinds(a, dict(b, status_code=404), "", "E3") == ["gone"]
    replaced = row(page("Help", "<p>The page you were looking for could not be found. It may have moved.</p>"),
                   title="Help")
    assert kinds(a, replaced, "", "E3") == ["gone"]


def test_a_list_whose_items_are_shuffled_on_every_request_is_unchanged():
    names = prose(9, 90).split()
    items = [f"{names[3 * i]} {names[3 * i + 1]} widget {names[3 * i + 2]}" for i in range(30)]

    def shop(seed: int) -> str:
        rnd = random.Random(seed)
        shuffled = items[:]
        rnd.shuffle(shuffled)
        return page("Shop", "<ul>" + "".join(f"<li><a href='/p/{i}'>{t}</a></li>" for i, t in enumerate(shuffled))
                    + "</ul>")

    a, b = row(shop(1), title="Shop"), row(shop(2), title="Shop")
    delta = compare(parse_digest(a["content_digest"]), parse_digest(b["content_digest"]))
    assert delta.text_similarity > 0.9 and kinds(a, b) == []
    fewer = page("Shop", "<ul>" + "".join(f"<li><a href='/p/{i}'>{t}</a></li>" for i, t in enumerate(items[:5]))
                 + "</ul>")
    assert kinds(a, row(fewer, title="Shop")) == ["content"]
