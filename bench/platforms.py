"""Pair precision / recall / F1 and lost pages on doc platforms and a client-rendered app.

    python bench/platforms.py                       # every set
    python bench/platforms.py --only docsify -v     # one set, every URL's group and cluster
    python bench/platforms.py --rust-pages 1000     # how many rustdoc pages (default 1000)
    python bench/platforms.py --only javadoc doxygen --pages 1000  # javadoc / Doxygen pages

The documentation comes from Debian packages, npm and pip (MkDocs): ``bash scripts/setup.sh
bench`` installs them (no test needs them).

Sets (all served by nginx on 127.0.0.1, crawled by ``python -m scrapy_websim.cli`` with the
shipped defaults, URL list shuffled):

* ``rustdoc``: ``--rust-pages`` pages of Rust's standard library documentation (rustdoc: one
  template, a sidebar of the module's items on every page, thousands of short function and
  constant pages of sibling items), from ``rustup component add rust-docs`` or Debian's
  ``rust-doc``. Redirect stubs are left out, and so are pages whose main content equals another
  sampled page's once digits are masked (arguable truth).
* ``nodejs``: the Node.js API reference (Debian's ``nodejs-doc``: Node's own generator, a
  sidebar listing every module on every page).
* ``docsify``: a client-rendered app, docsify (npm) rendering the Node.js API markdown on hash
  routes ``/#/fs``, ``/#/path``... (the server sends one shell for every route). Variants of a
  route that are the same page: ``/index.html#/fs``, docsify's in-page anchor
  ``/#/fs?id=<heading>``, the same route on a mirror.
* ``javadoc``: ``--pages`` pages of the Java SE 17 API documentation (Debian's ``openjdk-17-doc``:
  class, package, class-use and tree pages of one template; pages over 400 KB and the A-Z
  index left out).
* ``doxygen``: ``--pages`` pages of libstdc++'s Doxygen reference (Debian's ``libstdc++-12-doc``:
  class, file, member-list and source-listing pages, a navigation tree written by script).
* ``docute``: a client-rendered app on history routes: docute (npm, on Vue 2) rendering Python's
  documentation sources (``python3-doc``'s reStructuredText read as markdown) at
  ``/library/json``, ``/howto/logging``... (the server sends one shell for every path), a
  sidebar of every page on every page. Variants that are the same page: the route with tracking
  parameters, with an in-page anchor, on a mirror.
* ``mkdocs``: the same Python sources built by MkDocs (``mkdocs build``, pip ``mkdocs``) into a
  static site in its built-in ``readthedocs`` theme, whose sidebar lists all ~430 pages on every
  page (the ``mkdocs`` theme hides them in drop-down menus), with ``use_directory_urls``: pages at
  ``/t/library/json/``, and ``/t/library/json/index.html`` is the same page.

Duplicates (~5 % of the pages, the rest are unique): for rustdoc and nodejs an exact mirror on
server B, a mirror C adding a signature line with its port and the time, and an SSI noisy copy
under another path (``scrapy_websim/testing/sites.py`` ``noisy_copy``: banner, time and request id per request,
5 random links, ~3 % of the words changed); javadoc and Doxygen also the page with tracking
parameters and a mirror D in other chrome (another style sheet, a footer with a site menu);
MkDocs all of these and the page's ``index.html`` URL.
``lost`` counts the true groups none of whose pages is a canonical or alone (the group's page
disappeared into another page's cluster). Pages whose main content is the same but for the
words of their own path (rustdoc's re-exports of one item under two paths) are arguable: the
pairs between them are not counted, and they count as one group for ``lost`` (``arguable`` =
how many such pages). ``--rescore DIR`` scores a kept crawl (``--keep``) again without
crawling; ``websim cluster DIR/SET/features.jsonl -O DIR/SET/new.json`` then ``--rescore DIR
--rescore-file new.json`` scores another decision on the same crawl. One line per set:

    set=NAME urls=N groups=G missing=M precision=P recall=R f1=F lost=L false_pairs=K missed_pairs=X arguable=A
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, Iterator, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from scrapy_websim.testing import sites  # noqa: E402
from scrapy_websim.testing.servers import nginx_server  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appbench  # noqa: E402  (bench/appbench.py)

RUST_ROOTS = [os.path.expanduser("~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html"),
              "/usr/share/doc/rust-doc/html"]
NODE_API = "/usr/share/doc/nodejs/api"
NPM_DIR = os.path.join(tempfile.gettempdir(), "websim-bench-npm")
DOCSIFY_VERSION = "4"

TYPES = ("types { text/html html htm; text/css css; application/javascript js; application/json json; "
         "text/markdown md; image/svg+xml svg; image/png png; font/woff2 woff2; text/plain txt; }")


# ------------------------------------------------------------------------------------- truth


MAIN_PATTERNS = (r"<main[^>]*>(.*)</main>",  # rustdoc, javadoc, nodejs
                 r"itemprop=\"articleBody\">(.*)<footer",  # MkDocs' readthedocs theme
                 r"<div class=\"header\">(.*)</body>",  # Doxygen: the title block and the contents
                 r"<body[^>]*>(.*)</body>")


def main_text(html: str) -> str:
    """The page's main content with digits masked (to find pages whose truth is arguable)."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S | re.I)
    m = next(filter(None, (re.search(p, html, re.S | re.I) for p in MAIN_PATTERNS)), None)
    text = re.sub(r"<[^>]+>", " ", m.group(1) if m else html)
    return " ".join(re.sub(r"\d+", "0", text).split())


def twin_key(rel: str, html: str, by_title: bool = False) -> str:
    """The start (1,500 characters: heading, signature, first lines of its description) of the
    main content without the words of the page's own path: rustdoc documents an item re-exported
    under two paths (``std::simd::f32x4`` and ``std::simd::prelude::f32x4``) twice, the same text
    but for the path (and, further down, a list that names it). Whether two such pages are one
    page is arguable. ``by_title``: the words of the page's title instead (Doxygen names its pages
    by number; the source listings of ``gthr-default.h`` and ``gthr-posix.h`` show one code)."""
    words = {w for w in re.split(r"[^A-Za-z0-9]+", sites.title_of(html) if by_title else rel) if w}
    return " ".join(w for w in re.split(r"[^\w]+", main_text(html)) if w and w not in words)[:1500]


def is_redirect_stub(html: str) -> bool:
    return bool(re.search(r"<meta[^>]+http-equiv=[\"']?refresh", html[:3000], re.I))


def pick_pages(root: str, pattern: str, n: int, seed: int, max_bytes: int = 0,
               skip: Tuple[str, ...] = ()) -> List[str]:
    """``n`` pages (paths relative to ``root``) matching ``pattern``, no redirect stubs, no two
    with the same digit-masked main content or the same title (rustdoc documents a re-exported
    item under each path that exports it, with one title: arguable truth); with ``max_bytes``
    none larger (a javadoc index of every class is megabytes), none whose path starts with one
    of ``skip``."""
    paths = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, pattern), recursive=True))
    random.Random(seed).shuffle(paths)
    out, seen = [], set()
    for rel in paths:
        if len(out) >= n:
            break
        if rel.startswith(skip) or (max_bytes and os.path.getsize(os.path.join(root, rel)) > max_bytes):
            continue
        html = sites.read(os.path.join(root, rel))
        if is_redirect_stub(html) or len(html) < 1024:
            continue
        keys = {main_text(html), "title:" + (sites.title_of(html) or rel)}
        if keys & seen:
            continue
        seen |= keys
        out.append(rel)
    return out


# ------------------------------------------------------------------------------------- static doc trees


def doc_tree_set(root: str, pages: List[str], dup_every: int = 20,
                 kinds: Tuple[str, ...] = ("B", "C", "noisy"),
                 twins: str = "path", dir_urls: bool = False) -> Tuple[sites.Site, Dict[str, str]]:
    """A site of ``pages`` of the doc tree at ``root`` served under /t/; every ``dup_every``-th
    page gets a duplicate (by turns, of ``kinds``: mirror B, mirror C with a signature line, SSI
    noisy copy under /n/, which falls back to /t/ for the page's scripts and styles; ``track``:
    the page with tracking parameters; ``D``: mirror D, the same page in other chrome, another
    style sheet and a site footer with a menu). ``twins="path"``: pages whose main content is the
    same but for the words of their path are arguable (rustdoc's re-exports); ``"source"``: source
    listings (``*_source.html``) whose code is the same but for the words of their title (two
    files of one content); ``""``: such pages are different pages (javadoc's "Uses of Class X: no
    usage" of two classes, Doxygen's ``std::hash< char >`` and ``std::hash< int >``).
    ``dir_urls``: ``pages`` are ``DIR/index.html`` files and a page's URL is its directory
    (``/t/library/json/``); kind ``index`` is the page at ``/t/library/json/index.html``."""
    site = sites.Site()
    site.twins = {}  # group -> key shared by its arguable twins (see twin_key)
    titles = [sites.title_of(sites.read(os.path.join(root, p))) or p for p in pages[:200]]
    for k, rel in enumerate(pages):
        url = rel[:-len("index.html")] if dir_urls and rel.endswith("index.html") else rel
        members = [f"A:/t/{url}"]
        if k % dup_every == 0:
            kind = kinds[(k // dup_every) % len(kinds)]
            if kind == "noisy":
                site.files[f"n/{rel}"] = sites.noisy_copy(sites.read(os.path.join(root, rel)), titles, seed=k,
                                                          ssi=True)
                members.append(f"A:/n/{url}")
            elif kind == "track":
                members.append(f"A:/t/{url}?utm_source=newsletter&utm_medium=email&utm_campaign=w{k}")
            elif kind == "index":
                members.append(f"A:/t/{rel}")
            else:
                members.append(f"{kind}:/t/{url}")
        if twins == "path":
            site.twins[len(site.groups)] = twin_key(rel, sites.read(os.path.join(root, rel)))
        elif twins == "source" and rel.endswith("_source.html"):
            site.twins[len(site.groups)] = twin_key(rel, sites.read(os.path.join(root, rel)), by_title=True)
        site.add_group(members)
    tree = f"location /t/ {{ alias {root}/; {TYPES} }}\n"
    locations = {
        "A": tree + f"location /n/ {{ ssi on; {TYPES} try_files $uri $uri/ @tree; }}\n"
                    "location @tree { rewrite ^/n/(.*)$ /t/$1 last; }\n",
        "B": tree,
        "C": f"location /t/ {{ alias {root}/; {TYPES} sub_filter '</body>' '<address>mirror at 127.0.0.1 port "
             "$server_port, served $time_local</address></body>'; sub_filter_once on; }\n",
        "D": f"location /t/ {{ alias {root}/; {TYPES} sub_filter_once on; sub_filter_types text/html; "
             f"sub_filter '</head>' '<style>{CHROME_CSS}</style></head>'; "
             f"sub_filter '</body>' '{CHROME_FOOTER}</body>'; }}\n",
    }
    return site, locations


CHROME_CSS = "body{font-family:Georgia,serif;background:#fdfaf3;margin:0 8%} a{color:#8a2b06}"
CHROME_FOOTER = ('<footer class="site-footer"><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About '
                 'this mirror</a></li><li><a href="/contact">Contact</a></li><li><a href="/privacy">Privacy</a>'
                 '</li></ul></nav><p>Documentation mirror hosted by the university computing centre.</p></footer>')


def rust_root() -> Optional[str]:
    return next((r for r in RUST_ROOTS if os.path.isdir(os.path.join(r, "std"))), None)


def rustdoc_set(n: int) -> Tuple[sites.Site, Dict[str, str]]:
    root = rust_root()
    if root is None:
        raise SystemExit("no Rust documentation: `rustup component add rust-docs` or `apt-get install rust-doc`")
    return doc_tree_set(root, pick_pages(root, "std/**/*.html", n, seed=25))


def nodejs_set() -> Tuple[sites.Site, Dict[str, str]]:
    if not os.path.isdir(NODE_API):
        raise SystemExit("no Node.js API docs: apt-get install nodejs-doc")
    pages = pick_pages(NODE_API, "*.html", 1000, seed=25)
    return doc_tree_set(NODE_API, [p for p in pages if p != "all.html"], dup_every=4)


JAVADOC = "/usr/share/doc/openjdk-17-jre-headless/api"
DOXYGEN = "/usr/share/doc/libstdc++-12-doc/libstdc++/user"
NEW_KINDS = ("B", "C", "noisy", "track", "D")


def javadoc_set(n: int) -> Tuple[sites.Site, Dict[str, str]]:
    if not os.path.isdir(os.path.join(JAVADOC, "java.base")):
        raise SystemExit("no javadoc: apt-get install openjdk-17-doc (or bash scripts/setup.sh bench)")
    pages = pick_pages(JAVADOC, "**/*.html", n, seed=25, max_bytes=400_000, skip=("index-files/",))
    return doc_tree_set(JAVADOC, pages, kinds=NEW_KINDS, twins="")


def doxygen_set(n: int) -> Tuple[sites.Site, Dict[str, str]]:
    if not os.path.isdir(DOXYGEN):
        raise SystemExit("no Doxygen docs: apt-get install libstdc++-12-doc (or bash scripts/setup.sh bench)")
    return doc_tree_set(DOXYGEN, pick_pages(DOXYGEN, "*.html", n, seed=25, max_bytes=400_000), kinds=NEW_KINDS,
                        twins="source")


# ------------------------------------------------------------------------------------- docsify


DOCSIFY_SHELL = """<!DOCTYPE html><html><head><meta charset="UTF-8"><title>Node.js API</title>
<link rel="stylesheet" href="/lib/themes/vue.css"></head><body><div id="app">Loading...</div>
<script>window.$docsify = {name: "Node.js API", basePath: "/md/", subMaxLevel: 2, loadSidebar: false};</script>
<script src="/lib/docsify.min.js"></script></body></html>"""


def docsify_lib() -> str:
    lib = os.path.join(NPM_DIR, "node_modules", "docsify", "lib")
    if not os.path.isfile(os.path.join(lib, "docsify.min.js")):
        os.makedirs(NPM_DIR, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", NPM_DIR, "--no-audit", "--no-fund", f"docsify@{DOCSIFY_VERSION}"],
                       check=True, capture_output=True)
    return lib


def first_anchor(markdown: str) -> Optional[str]:
    """docsify's id of the page's second heading (``## Class: fs.Dir`` -> ``class-fsdir``)."""
    heads = re.findall(r"^#{2,3} (.+)$", markdown, re.M)
    if not heads:
        return None
    text = re.sub(r"[`*_\[\]()]", "", heads[0]).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-") or None


def docsify_set() -> Tuple[sites.Site, Dict[str, str]]:
    lib = docsify_lib()
    site = sites.Site()
    site.files["index.html"] = DOCSIFY_SHELL
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(NODE_API, "*.md")))
    kept, seen = [], set()
    for name in names:
        md = sites.read(os.path.join(NODE_API, name + ".md"))
        key = " ".join(re.sub(r"\d+", "0", md).split())
        if key in seen or len(md) < 400:
            continue
        seen.add(key)
        kept.append(name)
        site.files[f"md/{name}.md"] = md
    site.files["md/README.md"] = (sites.read(os.path.join(NODE_API, "index.md")) if "index" in kept
                                  else "# Node.js API\n")
    for k, name in enumerate(kept):
        route = "/" if name == "index" else f"/{name}"
        members = [f"A:/#{route}"]
        if k % 5 == 0:
            members.append(f"A:/index.html#{route}")
        if k % 5 == 1:
            anchor = first_anchor(site.files[f"md/{name}.md"])
            if anchor:
                members.append(f"A:/#{route}?id={anchor}")
        if k % 5 == 2:
            members.append(f"B:/#{route}")
        site.add_group(members)
    served = f"location /lib/ {{ alias {lib}/; {TYPES} }}\nlocation /md/ {{ {TYPES} }}\n"
    return site, {"A": served, "B": served}


# ------------------------------------------------------------------------------------- docute


PY_SOURCES = ["/usr/share/doc/python3-doc/html/_sources", "/usr/share/doc/python3.11/html/_sources"]
DOCUTE_VERSION = "4"

DOCUTE_SHELL = """<!DOCTYPE html><html><head><meta charset="UTF-8"><title>Python documentation</title>
<link rel="stylesheet" href="/lib/docute.css"></head><body><div id="docute"></div>
<script src="/lib/vue.min.js"></script><script src="/lib/docute.js"></script>
<script>new Docute({target: "#docute", title: "Python documentation", sourcePath: "/md/",
router: {mode: "history"}, nav: [{title: "Home", link: "/"}], sidebar: %s})</script></body></html>"""


def docute_lib() -> str:
    """docute's and Vue 2's browser builds in one directory (docute 4 runs on the page's Vue)."""
    mods = os.path.join(NPM_DIR, "node_modules")
    if not os.path.isfile(os.path.join(mods, "docute", "dist", "docute.js")):
        os.makedirs(NPM_DIR, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", NPM_DIR, "--no-audit", "--no-fund", f"docute@{DOCUTE_VERSION}"],
                       check=True, capture_output=True)
    lib = os.path.join(NPM_DIR, "docute-lib")
    os.makedirs(lib, exist_ok=True)
    for src in ("docute/dist/docute.js", "docute/dist/docute.css", "vue/dist/vue.min.js"):
        shutil.copy(os.path.join(mods, src), lib)
    return lib


def rst_title(rst: str) -> str:
    """The document title of a reStructuredText source (the first line under- or overlined with
    ``=``, ``*`` or ``#``), its roles (``:mod:`json```) as plain words."""
    lines = rst.splitlines()
    for i in range(len(lines) - 1):
        text, under = lines[i].strip(), lines[i + 1].strip()
        if text and under and len(under) >= len(text) and set(under) <= set("=*#") and not set(text) <= set("=*#"):
            return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")
    return ""


def python_doc_pages() -> List[Tuple[str, str, str]]:
    """Python's documentation sources (``python3-doc``'s reStructuredText, read as markdown: real
    prose and code) as ``(path, title, markdown)``, the path without extension (``library/json``),
    the markdown a ``# title`` line and the source. Left out: the root index, sources without a
    title, under 400 or over 150,000 characters, and any whose title or digit-masked text another
    kept source has (one page under two names is arguable truth)."""
    root = next((r for r in PY_SOURCES if os.path.isdir(r)), None)
    if root is None:
        raise SystemExit("no Python documentation sources: apt-get install python3-doc")
    pages, seen = [], set()
    for path in sorted(glob.glob(os.path.join(root, "**", "*.rst.txt"), recursive=True)):
        rel = os.path.relpath(path, root)[:-len(".rst.txt")]
        rst = sites.read(path)
        key = " ".join(re.sub(r"\d+", "0", rst).split())
        title = rst_title(rst)
        if key in seen or not title or title in seen or not 400 <= len(rst) <= 150_000 or rel == "index":
            continue
        seen |= {key, title}
        pages.append((rel, title, f"# {title}\n\n" + rst))
    return pages


def python_doc_sections(pages: List[Tuple[str, str, str]]) -> Dict[str, List[Tuple[str, str]]]:
    """The pages' ``(path, title)`` by top directory (``library``, ``howto``; ``general`` for the
    files at the root), the sections both apps' sidebars list."""
    sections: Dict[str, List[Tuple[str, str]]] = {}
    for rel, title, _ in pages:
        sections.setdefault(rel.split("/")[0] if "/" in rel else "general", []).append((rel, title))
    return dict(sorted(sections.items()))


def docute_set() -> Tuple[sites.Site, Dict[str, str]]:
    """Python's documentation sources (``python_doc_pages``, ~450 pages) in a docute app on
    history routes (``/library/json``: the server sends the one shell for every path, the browser
    fetches and renders ``/md/library/json.md``), a sidebar of every section's pages on every
    page. Same page: the route with tracking parameters, with an in-page anchor (``#see-also``),
    on a mirror."""
    pages = python_doc_pages()
    lib = docute_lib()
    site = sites.Site()
    kept = [rel for rel, _, _ in pages]
    for rel, _, md in pages:
        site.files[f"md/{rel}.md"] = md
    site.files["md/README.md"] = "# Python documentation\n\n" + "\n".join(f"* [{r}](/{r})" for r in kept[:40])
    sidebar = [{"title": name, "links": [{"title": title, "link": f"/{rel}"} for rel, title in links]}
               for name, links in python_doc_sections(pages).items()]
    site.files["index.html"] = DOCUTE_SHELL % json.dumps(sidebar)
    for k, rel in enumerate(kept):
        members = [f"A:/{rel}"]
        if k % 12 == 0:
            members.append(f"A:/{rel}?utm_source=newsletter&utm_medium=email")
        if k % 12 == 4:
            members.append(f"A:/{rel}#see-also")
        if k % 12 == 8:
            members.append(f"B:/{rel}")
        site.add_group(members)
    served = (f"location /lib/ {{ alias {lib}/; {TYPES} }}\nlocation /md/ {{ {TYPES} }}\n"
              "location / { try_files $uri /index.html; }\n")
    return site, {"A": served, "B": served}


# ------------------------------------------------------------------------------------- MkDocs


def mkdocs_build(pages: List[Tuple[str, str, str]]) -> str:
    """An MkDocs site of ``pages`` (``python_doc_pages``) in the built-in ``readthedocs`` theme,
    ``use_directory_urls`` (``library/json.md`` -> ``library/json/index.html``), a navigation of one
    section per top directory; returns the built site's directory (removed when the bench ends).
    The theme's sidebar shows every page of every section on every page (the ``mkdocs`` theme
    keeps them in drop-down menus of its top bar, hidden until opened). Highlight.js is off: the
    theme loads it from a CDN, and the crawl stays on 127.0.0.1."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        raise SystemExit("no MkDocs: pip install mkdocs (or bash scripts/setup.sh bench)") from None
    work = tempfile.mkdtemp(prefix="websim-bench-mkdocs-")
    atexit.register(shutil.rmtree, work, True)
    docs = os.path.join(work, "docs")
    for rel, _, md in pages:
        os.makedirs(os.path.dirname(os.path.join(docs, rel)), exist_ok=True)
        with open(os.path.join(docs, rel + ".md"), "w", encoding="utf-8") as fh:
            fh.write(md)
    with open(os.path.join(docs, "index.md"), "w", encoding="utf-8") as fh:
        fh.write("# Python documentation\n\nThe library reference, the language reference, tutorials and HOWTOs.\n")
    nav: List[object] = [{"Home": "index.md"}]
    nav += [{name.capitalize(): [{title: rel + ".md"} for rel, title in links]}
            for name, links in python_doc_sections(pages).items()]
    config = {"site_name": "Python documentation", "docs_dir": docs, "site_dir": os.path.join(work, "site"),
              "use_directory_urls": True, "theme": {"name": "readthedocs", "highlightjs": False}, "nav": nav}
    with open(os.path.join(work, "mkdocs.yml"), "w", encoding="utf-8") as fh:
        json.dump(config, fh)  # JSON is YAML
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", os.path.join(work, "mkdocs.yml")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"mkdocs build failed: {proc.stderr[-2000:]}")
    return os.path.join(work, "site")


def mkdocs_set() -> Tuple[sites.Site, Dict[str, str]]:
    """Python's documentation built with MkDocs (``mkdocs_build``), served from the built tree at
    ``/t/library/json/``; every 20th page gets, by turns, an exact mirror, a mirror with a
    signature line, an SSI noisy copy, the page with tracking parameters, a mirror in other chrome
    and the page at ``/t/library/json/index.html``. Pages whose digit-masked main content or title
    another page has are left out (``pick_pages``)."""
    site_dir = mkdocs_build(python_doc_pages())
    pages = pick_pages(site_dir, "**/index.html", 1000, seed=25, skip=("index.html",))
    return doc_tree_set(site_dir, pages, kinds=NEW_KINDS + ("index",), twins="", dir_urls=True)


# ------------------------------------------------------------------------------------- crawl and score


@contextlib.contextmanager
def serve(site: sites.Site, locations: Dict[str, str]) -> Iterator[Dict[str, str]]:
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(nginx_server(locations=loc, files=site.files))
               for name, loc in sorted(locations.items())}


def families(site: sites.Site) -> List[int]:
    """Per group, the group that stands for its arguable twins (itself when it has none)."""
    twins = getattr(site, "twins", {})
    first: Dict[str, int] = {}
    return [first.setdefault(twins[g], g) if g in twins else g for g in range(len(site.groups))]


def scores(site: sites.Site, bases: Dict[str, str], rows: Dict[str, dict]) -> Dict[str, float]:
    """Pair precision / recall / F1 against the groups, pairs of arguable twins left out, and
    ``lost``: true groups (twins counted as one) none of whose pages is a canonical or alone."""
    family = families(site)
    truth = {sites.resolve(m, bases): g for g, ms in enumerate(site.groups) for m in ms}
    urls = sorted(truth)
    cluster = {u: (rows.get(u) or {}).get("cluster_id", "") for u in urls}
    tp = fp = fn = 0
    for i, u in enumerate(urls):
        for v in urls[i + 1:]:
            same_truth, same_pred = truth[u] == truth[v], bool(cluster[u]) and cluster[u] == cluster[v]
            if not same_truth and family[truth[u]] == family[truth[v]]:
                continue  # arguable
            tp += same_truth and same_pred
            fp += same_pred and not same_truth
            fn += same_truth and not same_pred
    kept: Dict[int, bool] = {}
    for u, g in truth.items():
        r = rows.get(u)
        kept[family[g]] = kept.get(family[g], False) or r is None or not r["cluster_id"] or r["is_canonical"]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "false_pairs": fp, "missed_pairs": fn,
            "lost": sum(not k for k in kept.values()), "twins": len(family) - len(set(family))}


def crawl_and_score(name: str, site: sites.Site, bases: Dict[str, str], tmp: str, verbose: bool,
                    threads: int) -> str:
    urls = [sites.resolve(u, bases) for u in site.urls]
    with open(os.path.join(tmp, "bases.json"), "w", encoding="utf-8") as fh:
        json.dump(bases, fh)
    truth, family = appbench.site_truth(site, bases, families(site))
    appbench.save_truth(truth, tmp, name, family)
    try:
        appbench.crawl(urls, tmp, threads=threads)
    except RuntimeError as exc:
        return f"set={name} failed: {exc}"
    return score_result(name, site, bases, os.path.join(tmp, "result.json"), verbose)


def score_result(name: str, site: sites.Site, bases: Dict[str, str], out: str, verbose: bool = False) -> str:
    urls = [sites.resolve(u, bases) for u in site.urls]
    with open(out, encoding="utf-8") as fh:
        data = json.load(fh)
    rows = {row["url"]: row for row in data["urls"]}
    cluster_of = {u: r["cluster_id"] for u, r in rows.items()}
    s = scores(site, bases, rows)
    if verbose:
        truth = {sites.resolve(m, bases): g for g, ms in enumerate(site.groups) for m in ms}
        for u in sorted(truth, key=lambda x: (cluster_of.get(x) or "~", truth[x], x)):
            r = rows.get(u) or {}
            print(f"  g{truth[u]:04d} {r.get('cluster_id') or '-':24s} {r.get('match_rule') or '-':9s} "
                  f"{r.get('content_sim', 0):.3f} {r.get('structure_sim', 0):.3f} {r.get('status_code')} {u}")
    return (f"set={name} urls={len(urls)} groups={len(site.groups)} missing={len(set(urls) - set(rows))} "
            f"precision={s['precision']:.3f} recall={s['recall']:.3f} f1={s['f1']:.3f} "
            f"lost={s['lost']} false_pairs={s['false_pairs']} missed_pairs={s['missed_pairs']} arguable={s['twins']}")


SETS = ("rustdoc", "nodejs", "docsify", "javadoc", "doxygen", "docute", "mkdocs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=SETS)
    parser.add_argument("--rust-pages", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=1000, help="pages of the javadoc and Doxygen sets")
    parser.add_argument("-t", "--threads", type=int, default=8)
    parser.add_argument("--keep", help="keep the crawl's files in this directory")
    parser.add_argument("--rescore", metavar="DIR",
                        help="score the result.json (or another file: --rescore-file) of a kept crawl again")
    parser.add_argument("--rescore-file", default="result.json", help="with --rescore: the result file's name")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    builders = {"rustdoc": lambda: rustdoc_set(args.rust_pages), "nodejs": nodejs_set, "docsify": docsify_set,
                "javadoc": lambda: javadoc_set(args.pages), "doxygen": lambda: doxygen_set(args.pages),
                "docute": docute_set, "mkdocs": mkdocs_set}
    for name in args.only or builders:
        site, locations = builders[name]()
        if args.rescore:
            kept = os.path.join(args.rescore, name)
            with open(os.path.join(kept, "bases.json"), encoding="utf-8") as fh:
                bases = json.load(fh)
            print(score_result(name, site, bases, os.path.join(kept, args.rescore_file), args.verbose), flush=True)
            continue
        tmp = tempfile.mkdtemp(prefix=f"websim-platforms-{name}-")
        try:
            with serve(site, locations) as bases:
                print(crawl_and_score(name, site, bases, tmp, args.verbose, args.threads), flush=True)
        finally:
            if args.keep:
                dest = os.path.join(args.keep, name)
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(tmp, dest)
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
