"""Every value :func:`~scrapy_websim.core.features.compute_features` fills for a page, and what the
feature modules' public functions return for it: what a change that must not change any feature
value (a faster walk, a cache) is checked against.

:func:`snapshot` gives ``{name: value}`` (JSON values) for one page; :func:`digests` the same as a
short hash per name, which is what ``tests/test_features_regression.py`` stores. The pages:

* :func:`data_pages`: the saved real pages of ``tests/data`` (Python docs, article pages).
* :func:`debian_pages`: pages of the Debian documentation packages the test suite installs
  (``scripts/setup.sh test``), each known by the SHA-256 of its bytes (another package version is
  another page, skipped).
* :func:`hostile_pages`: the HTML the hostile test server serves (no server: the handlers write
  into a stub).
* :func:`edge_pages`: hand-written pages for each branch of the walks (hidden elements, forms,
  chrome, breadcrumbs, namespaces, comments, URL echoes, CJK, ...).
* :func:`random_pages`: seeded random trees of the tags, attributes and words the walks look at.

``bench/features_regress.py`` runs the same snapshot over a large corpus.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import random
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from scrapy_websim.core import features
from scrapy_websim.core.features import FeatureParams, compute_features, first_heading, parse_html, shown_fields
from scrapy_websim.core.page import dom, lcs, pagetype, prose, text, visible
from scrapy_websim.core.rules import signals
from scrapy_websim.core.types import PageRecord

DATA = Path(__file__).parent / "data"

Page = Tuple[str, str, str, str]  # (key, html, url, title)


def _json(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists, int keys as strings)."""
    return json.loads(json.dumps(value, sort_keys=True))


def snapshot(html: str, url: str, title: str, params: Optional[FeatureParams] = None) -> Dict[str, Any]:
    """``{name: value}`` of one page: ``record.<field>`` for every field of the record
    :func:`compute_features` fills (with ``url`` as its URL and final URL, ``title`` as its
    title) and ``<module>.<function>`` for what each public feature function returns."""
    params = params or FeatureParams()
    rec = PageRecord(id=1, url=url, final_url=url, title=title)
    out: Dict[str, Any] = {"main_text": compute_features(rec, html, b"", params)}
    out.update({f"record.{name}": value for name, value in dataclasses.asdict(rec).items()})
    doc = parse_html(html)
    if doc is not None:
        out.update(_module_values(doc, url, title, params))
    return _json(out)


def _module_values(doc: Any, url: str, title: str, params: FeatureParams) -> Dict[str, Any]:
    """What the feature modules' public functions give, each called on its own."""
    sig, fp, template_text = signals.rule_features_and_text(doc, title, params.rules, url=url)
    calls: Dict[str, Callable[[], Any]] = {
        "text.extract_main_text": lambda: text.extract_main_text(doc, params.text),
        "text.list_text": lambda: text.list_text(doc),
        "prose.prose_text": lambda: prose.prose_text(doc, params.text.max_link_density),
        "pagetype.page_features": lambda: pagetype.page_features(doc, params.pagetype),
        "pagetype.page_type": lambda: pagetype.page_type(doc, None, params.pagetype),
        "dom.dom_features": lambda: dom.dom_features(doc, params.dom.max_paths, params.dom),
        "lcs.tag_sequence": lambda: lcs.tag_sequence(doc, params.lcs.max_tags),
        "lcs.tag_sequence_head": lambda: lcs.tag_sequence(doc, params.lcs.max_tags, include_head=True),
        "visible.visible_text": lambda: visible.visible_text(doc),
        "signals.page_signals": lambda: signals.page_signals(doc, title, params.rules, url=url),
        "signals.template_fingerprint": lambda: signals.template_fingerprint(doc, url),
        "signals.template_fingerprint_no_url": lambda: signals.template_fingerprint(doc),
        "signals.rule_features": lambda: signals.rule_features(doc, title, params.rules, url=url),
        "signals.rule_features_and_text": lambda: (sig, fp, template_text),
        "features.first_heading": lambda: first_heading(doc),
        "features.shown_fields": lambda: shown_fields(doc),
        "features.content_text": lambda: features.content_text(
            doc, text.extract_main_text(doc, params.text), "list", params.text),
    }
    return {name: call() for name, call in calls.items()}


def digests(values: Dict[str, Any]) -> Dict[str, str]:
    """A short hash of each value of a :func:`snapshot` (what the test stores)."""
    return {name: hashlib.sha256(json.dumps(value, sort_keys=True).encode("ascii")).hexdigest()[:12]
            for name, value in values.items()}


def _title(html: str) -> str:
    doc = parse_html(html)
    found = doc.find(".//title") if doc is not None else None
    return " ".join((found.text_content() if found is not None else "").split())


# --- the pages -----------------------------------------------------------------------------------

def data_pages() -> Iterator[Page]:
    """The saved real pages of ``tests/data`` (gzipped HTML)."""
    for folder in ("pagetype", "articles"):
        for path in sorted((DATA / folder).glob("*.html.gz")):
            html = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
            yield f"data/{folder}/{path.name}", html, f"http://127.0.0.1/{path.name[:-8]}", _title(html)


#: Debian documentation pages: (package directory, file) -- big and small, index and article pages.
DEBIAN_FILES = [
    ("/usr/share/doc/python3.11/html", name) for name in (
        "index.html", "glossary.html", "search.html", "py-modindex.html", "library/index.html",
        "library/functions.html", "library/re.html", "library/asyncio-task.html", "tutorial/classes.html",
        "c-api/object.html", "howto/logging.html")
] + [
    ("/usr/share/doc/postgresql-doc-15/html", name) for name in (
        "index.html", "sql-select.html", "functions-datetime.html", "datatype-numeric.html", "sql-commands.html",
        "app-psql.html", "tutorial-join.html", "errcodes-appendix.html")
] + [
    ("/usr/share/doc/git-doc", name) for name in (
        "git-fetch.html", "git.html", "gittutorial.html", "git-log.html", "git-config.html")
]


def debian_pages(expected: Optional[Dict[str, str]] = None) -> Iterator[Page]:
    """:data:`DEBIAN_FILES` that are installed; with ``expected`` (``{key: sha256}``), only those
    whose bytes are the ones expected. The key is ``debian/<file>@<sha256 prefix>``."""
    for folder, name in DEBIAN_FILES:
        path = Path(folder) / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        package = Path(folder).parent.name if folder.endswith("/html") else Path(folder).name
        key = f"debian/{package}/{name}@{hashlib.sha256(data).hexdigest()[:16]}"
        if expected is not None and key not in expected:
            continue
        html = data.decode("utf-8", "replace")
        yield key, html, f"http://127.0.0.1/{name}", _title(html)


class _Stub:
    """Enough of the hostile server's request handler for a handler to write its page into."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.body = b""
        self.server = type("S", (), {"page_delay": 0.0})()

    def send(self, status: int, body: bytes, *args: Any, **kwargs: Any) -> None:
        self.body = body

    def count(self, key: str, n: int = 1) -> None:
        pass


#: Hostile server routes whose page is HTML it sends whole (no stream, no endless loop), small
#: enough for a test.
HOSTILE_ROUTES = (
    "/ok", "/loop-before-dcl", "/dialogs", "/beforeunload", "/popups", "/dom-grows", "/never-idle",
    "/meta-loop", "/bad-charset", "/bad-bytes", "/mixed-encodings", "/odd-headers", "/surrogates",
    "/nul-bytes", "/deep-dom", "/file-frames", "/formula-title", "/rtl-\u202e-path", "/console-flood",
)


def hostile_pages(routes: Tuple[str, ...] = HOSTILE_ROUTES) -> Iterator[Page]:
    """The HTML of the hostile test server's pages, made without a server, and a few of its
    ordinary articles."""
    from scrapy_websim.testing import hostile_server

    for route in routes:
        stub = _Stub(route)
        hostile_server.ROUTES[route](stub)  # type: ignore[arg-type]
        html = stub.body.decode("utf-8", "replace")
        yield f"hostile{route}", html, "http://127.0.0.1:8080" + route, _title(html)
    for n in (0, 1, 7):
        html = hostile_server.ordinary_page(n).decode("utf-8")
        yield f"hostile/page/{n}", html, f"http://127.0.0.1:8080/page/{n}", _title(html)


_P = "<p>" + "Some running text of a paragraph, long enough to count as prose for the walks. " * 3 + "</p>"
_LINKS = "".join(f"<li><a href='/item/{i}'>Item number {i} in the list</a></li>" for i in range(14))
EDGE_PAGES: List[Tuple[str, str, str]] = [  # (name, url, html)
    ("empty-body", "/", "<html><head><title>Empty</title></head><body></body></html>"),
    ("text-only", "/t", "just some text without any element"),
    ("fragment", "/f", "<div><p>A fragment, no html element</p><a href='/x'>link</a></div>"),
    ("no-body", "/nb", "<html><head><title>No body</title><meta name=x content=y></head></html>"),
    ("frameset", "/fs", "<html><frameset><frame src='/a'><frame src='/b'></frameset></html>"),
    ("hidden", "/h", "<html><body><h1>Shown</h1><div hidden><p>gone</p></div><div aria-hidden=true>"
     "<h2>gone too</h2></div><div style='display: none'>none</div><p style='visibility:hidden'>vh</p>"
     "<span aria-hidden=TRUE>upper</span>" + _P + "</body></html>"),
    ("forms", "/login?next=/admin", "<html><body><header><form><input type=search name=q value=' find '>"
     "</form></header><main><h1>Sign in</h1><form action=/login><label>User <input name=user value=bob>"
     "</label><input type=password name=pw><input type=submit value='Log in'><input type=hidden name=csrf "
     "value=AbCdEfGh12345><select name=lang><option value=en>English<option selected>Deutsch</select>"
     "<select name=empty></select><textarea name=note> a  note </textarea><input type=checkbox name=keep>"
     "<input type=radio name=r><button>Go</button><input type=image name=img><input name=CAPS TYPE=TEXT>"
     "</form></main><footer>Copyright 2024 example.org</footer></body></html>"),
    ("chrome", "/c", "<html><body><div id=site-header>Site name</div><nav><a href=/>Home</a></nav>"
     "<div class='sidebar-left'>Side</div><div class='not-footer'><h2>Own heading</h2>" + _P + "</div>"
     "<div role=navigation>Nav role</div><div class='main-menu'>Menu</div><aside>Aside</aside>"
     "<article><header><h1>Article head</h1></header>" + _P + "<footer>Article foot</footer></article>"
     "<div role=contentinfo>Foot info</div><div class=masthead>Mast</div></body></html>"),
    ("breadcrumbs", "/wiki/Foo_Bar", "<html><body><div class=breadcrumbs><a href=/>Home</a> &gt; Foo</div>"
     "<ol aria-label='Breadcrumb'><li>x</li></ol><p id=crumbs>trace</p>tail text<h1>Foo Bar</h1>"
     "<p>There is no page titled \u201cFoo Bar\u201d. Return to Main Page.</p><p>Foo Bar</p></body></html>"),
    ("namespaces", "/ns", "<html><body><svg xmlns='http://www.w3.org/2000/svg'><g><path d='M0'/>"
     "<text>svg text</text></g></svg><math><mi>x</mi></math><my-widget>custom</my-widget>"
     "<x:tag xmlns:x='urn:x'>prefixed</x:tag>" + _P + "</body></html>"),
    ("comments", "/cm", "<html><body><!-- a comment -->after comment<div><!-- inner -->tail<?pi x?>pi tail"
     "<p>para<!--c-->more</p></div>" + _P + "</body></html>"),
    ("header-article", "/ha", "<html><body><header>" + _P * 3 + "</header><nav>" + _LINKS + "</nav></body></html>"),
    ("list", "/list", "<html><body><h1>Index</h1><ul>" + _LINKS + "</ul><div class=related><ul>" + _LINKS
     + "</ul></div></body></html>"),
    ("link-dense", "/ld", "<html><body><div class=content><div>" + _LINKS + "</div>" + _P * 4 + "<div><p>"
     "<a href=/a>one</a> <a href=/b>two</a></p></div></div></body></html>"),
    ("wy-grid", "/wy", "<html><body><div class=wy-grid-for-nav><div class=wy-nav-side>" + _LINKS + "</div>"
     "<section class=wy-nav-content-wrap><div role=main>" + _P * 3 + "</div></section></div></body></html>"),
    ("deep", "/deep", "<html><body>" + "<div><span>" * 40 + "deep text" + "</span></div>" * 40 + _P + "</body></html>"),
    ("cjk", "/\u4e2d\u6587", "<html><head><title>\u9875\u9762\u4e0d\u5b58\u5728</title></head><body>"
     "<h1>\u9875\u9762\u4e0d\u5b58\u5728</h1><p>\u62b1\u6b49\uff0c\u60a8\u8bbf\u95ee\u7684\u9875\u9762\u4e0d"
     "\u5b58\u5728\u3002\u30b7\u30b9\u30c6\u30e0\u30e1\u30f3\u30c6\u30ca\u30f3\u30b9\u4e2d</p>"
     "<p>\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8</p></body></html>"),
    ("error-page", "/missing/page.php?id=12345", "<html><head><title>404 Not Found</title></head><body>"
     "<center><h1>404 Not Found</h1></center><hr><center>nginx/1.22.1 at www.example.org port 8080</center>"
     "<p>The page /missing/page.php couldn\u2019t be found, request id kQzPwXvBnMaa 2024-01-02T10:11:12Z "
     "0xdeadbeef</p></body></html>"),
    ("maintenance", "/", "<html><body><h2>Scheduled maintenance</h2><p>We are down for maintenance. "
     "Back soon.</p><noscript>enable js</noscript><template><p>tpl</p></template><script>var x=1</script>"
     "<style>p{}</style><iframe src=/x></iframe><object>obj</object><canvas>cv</canvas></body></html>"),
    ("challenge", "/cdn-cgi", "<html><body><div class=main-wrapper role=main><h1>Checking your browser</h1>"
     "<p>Just a moment... Please enable cookies. Ray ID: 7f0a1b2c3d4e5f60</p></div></body></html>"),
    ("tables", "/tb", "<html><body><table><tr><td>" + _P + "</td><td><a href=/a>a</a></td></tr>"
     "<tr><th>h</th><td>cell, with, commas\u3002\uff0c</td></tr></table><dl><dt>t</dt><dd>d</dd></dl>"
     "<pre>  pre\n  text </pre><br>after br<hr></body></html>"),
    ("uppercase", "/up", "<HTML><BODY><DIV CLASS='Nav-Bar'>nav</DIV><P>Upper</P><A HREF=/x>Link</A>"
     "<INPUT TYPE=PASSWORD NAME=P></BODY></HTML>"),
    ("entries", "/dir/", "<html><head><title>Index of /dir/</title></head><body><h1>Index of /dir/</h1>"
     "<pre><a href='../'>../</a>\n<a href='a.txt'>a.txt</a> 12-Jan-2024 10:00 1234\n"
     "<a href='b.txt'>b.txt</a> 13-Jan-2024 11:00 99\n<a>no href</a></pre></body></html>"),
    ("many-controls", "/mc", "<html><body><form>" + "".join(
        f"<input name=f{i} value=v{i}>" for i in range(30)) + "</form>" + "<input>" * 300 + "</body></html>"),
]


def edge_pages() -> Iterator[Page]:
    for name, path, html in EDGE_PAGES:
        yield f"edge/{name}", html, "http://127.0.0.1:8080" + path, _title(html)


_TAGS = ("div div div span p p a a li ul ol section article main nav header footer aside h1 h2 h3 "
         "table tr td th tbody form input input select option textarea button label img br hr pre "
         "blockquote dl dt dd figure figcaption script style noscript template iframe svg em strong b "
         "center menu details summary my-card").split()
_CLASSES = ("content main post entry article body sidebar nav navbar menu footer header site-header "
            "masthead breadcrumb breadcrumbs crumbs related share social cookie-banner ad ads promo "
            "not-footer no-sidebar wy-grid-for-nav hidden sr-only toolbar portlet card item row col "
            "with-sidebar comments pagination story text").split()
_ROLES = "main navigation banner contentinfo complementary menu menubar search dialog".split()
_WORDS = ("the page error not found sign in log in password maintenance checking your browser access "
          "denied please wait, river stone forest harbour 2024-01-02 12:03:44 id=AbCdEfGhIjKlMn "
          "www.example.org /path/to/file.html user@example.org \u4e2d\u6587 \u30e1\u30f3\u30c6\u30ca\u30f3\u30b9 "
          "\u3002 \uff0c 0xdeadbeef kQzPwXvBnMaa").split()


def _random_attrs(rng: random.Random) -> str:
    attrs = []
    if rng.random() < 0.35:
        attrs.append(f"class='{' '.join(rng.sample(_CLASSES, rng.randint(1, 2)))}'")
    if rng.random() < 0.1:
        attrs.append(f"id='{rng.choice(_CLASSES)}'")
    if rng.random() < 0.06:
        attrs.append(f"role={rng.choice(_ROLES)}")
    if rng.random() < 0.04:
        attrs.append(rng.choice(("hidden", "aria-hidden=true", "style='display:none'", "style='color:red'",
                                 "aria-label=Breadcrumb", "itemprop=articleBody")))
    if rng.random() < 0.5:
        attrs.append(f"href='/{rng.choice(_WORDS)}'")
    if rng.random() < 0.15:
        attrs.append(rng.choice(("name=q", "name=user", "type=password", "type=submit value=Go", "type=hidden",
                                 "selected", "value=abc", "type=text name=from value=N")))
    return (" " + " ".join(attrs)) if attrs else ""


def _random_text(rng: random.Random, most: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, most)))


def _random_tree(rng: random.Random, depth: int, budget: List[int]) -> str:
    out = []
    for _ in range(rng.randint(0, 6 if depth < 8 else 2)):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        tag = rng.choice(_TAGS)
        inner = _random_text(rng, 12) if rng.random() < 0.7 else ""
        if rng.random() < 0.05:
            inner += "<!-- comment -->" + _random_text(rng, 3)
        if depth < 14 and rng.random() < 0.6:
            inner += _random_tree(rng, depth + 1, budget)
        out.append(f"<{tag}{_random_attrs(rng)}>{inner}</{tag}>{_random_text(rng, 4) if rng.random() < 0.3 else ''}")
    return "".join(out)


def random_pages(count: int, seed: int = 20240601, size: int = 400) -> Iterator[Page]:
    """``count`` random pages (seeded: the same pages on every machine and Python version)."""
    rng = random.Random(seed)
    for i in range(count):
        body = _random_tree(rng, 0, [rng.randint(10, size)])
        title = _random_text(rng, 5)
        html = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
        path = "/" + rng.choice(("wiki/Page_Not_Found", "login?next=/x", "a/b/c.html", "", "search?q=river+stone"))
        yield f"random/{i}", html, "http://127.0.0.1:8080" + path, _title(html)
