"""Multi-template sites built from installed Debian documentation packages, with a known answer.

Used by ``tests/test_content_e2e.py`` (a small site) and ``bench/sites.py`` (larger ones). A site is
a set of files (relative path -> text) served by real nginx servers on 127.0.0.1:

* server **A** serves everything; ``/d/`` has nginx ``autoindex`` on (directory listings), ``/n/``
  has SSI on (noisy copies: a request id and the time in the content, different on every request),
  ``/old/...`` answers 301 to a page under ``/d/``;
* server **B** serves the same bytes (an exact mirror on another port);
* server **C** serves the same files with a signature line appended to every HTML response
  (``sub_filter``: its port and the request time), directory listings included.

:func:`noisy_copy` is the noise of ``bench/textsim.py`` (banner with an id, a timestamp line,
5 random "recommended" links, a CSRF token, ~3 % of the words changed).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Sequence, Tuple

import lxml.html

from scrapy_websim.testing.servers import nginx_server

PY = "/usr/share/doc/python3-doc/html"
PG = "/usr/share/doc/postgresql-doc-15/html"
GIT = "/usr/share/doc/git-doc"
DEBREF = "/usr/share/debian-reference"

#: Debian packages the sites are built from (scripts/setup.sh installs them for the tests).
PACKAGES = ("python3-doc", "postgresql-doc-15", "git-doc", "debian-reference-zh-cn", "debian-reference-ja")

_WORD = re.compile(r"\w+", re.UNICODE)
_SKIP_NOISE = {"script", "style", "head", "title", "meta", "noscript"}


def available() -> bool:
    return all(os.path.isdir(p) for p in (PY, PG, GIT, DEBREF))


def read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


# ------------------------------------------------------------------------------------- noise


def _content_parent(doc):
    """The element holding the most paragraphs (where noise lands inside the content)."""
    counts: Dict = {}
    for el in doc.iter("p"):
        parent = el.getparent()
        if parent is not None:
            counts[parent] = counts.get(parent, 0) + 1
    if counts:
        return max(counts.items(), key=lambda kv: kv[1])[0]
    body = doc.find(".//body")
    return body if body is not None else doc


_MARKUP = re.compile(r"(<!--.*?-->|<[^>]*>)", re.S)
_OPEN_SKIP = re.compile(r"<(script|style|head|title|noscript)[\s>]", re.I)


def _change_words(html: str, rng: random.Random, share: float) -> str:
    """``html`` with ~``share`` of the words of its visible text replaced by other words of the
    page, the markup left byte for byte (a re-serialised page would differ in structure too:
    XHTML served as HTML, ``<a id="x"/>``, is parsed differently once written back by lxml)."""
    parts = _MARKUP.split(html)
    skip_until = None
    texts = []  # indexes of the text parts outside script/style/head
    for i, part in enumerate(parts):
        if i % 2:  # markup
            if skip_until is None:
                m = _OPEN_SKIP.match(part)
                if m and not part.endswith("/>"):
                    skip_until = "</" + m.group(1).lower()
            elif part.lower().startswith(skip_until):
                skip_until = None
        elif skip_until is None and part.strip():
            texts.append(i)
    vocab = [w for i in texts for w in _WORD.findall(parts[i])[:20]]
    if not vocab:
        return html

    def swap(m):
        return rng.choice(vocab) if rng.random() < share else m.group()

    for i in texts:
        parts[i] = _WORD.sub(swap, parts[i])
    return "".join(parts)


def _insert_at(html: str, pattern: str, text: str, after: bool = True, last: bool = False) -> str:
    found = list(re.finditer(pattern, html, re.I))
    if not found:
        return html
    m = found[-1] if last else found[0]
    at = m.end() if after else m.start()
    return html[:at] + text + html[at:]


def _content_end(html: str) -> int:
    """Offset in ``html`` of the start tag of the last child of the element holding the most
    paragraphs (noise lands inside the content, before that child); -1 when not found."""
    try:
        doc = lxml.html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", html))
    except (ValueError, lxml.etree.ParserError):
        return -1
    parent = _content_parent(doc)
    children = [c for c in parent if isinstance(c.tag, str)]
    if parent.tag == "body" or not children:
        return -1
    child = children[-1]
    nth = next(i for i, el in enumerate(doc.iter(child.tag)) if el is child)
    found = list(re.finditer(rf"<{child.tag}[\s>/]", _MARKUP_COMMENT.sub(_blank, html), re.I))
    return found[nth].start() if nth < len(found) else -1


_MARKUP_COMMENT = re.compile(r"<!--.*?-->", re.S)


def _blank(m) -> str:
    return " " * len(m.group())  # same offsets, no tags inside comments


def noisy_copy(html: str, titles: Sequence[str], seed: int, ssi: bool = False) -> str:
    """``html`` as another request would get it: a rotating banner with an id, a "generated at
    <time>, request <id>" line and 5 random "recommended" links (titles from ``titles``) inside
    the content, a CSRF token (meta + hidden input), ~3 % of the words changed. With ``ssi`` the
    time and request id are nginx SSI commands (different on every request). The page's own
    markup is kept as it is: only text changes and the inserted blocks differ."""
    if not re.search(r"<body[^>]*>", html, re.I):
        return html
    rng = random.Random(seed)
    out = _change_words(html, rng, 0.03)
    token = "%032x" % rng.getrandbits(128)
    banner = (f'<div class="announcement" id="ann-{rng.getrandbits(32):08x}">Notice {rng.getrandbits(24):06x}: '
              f"maintenance window {rng.randint(1, 28)} {rng.choice(['May', 'June', 'July'])}, build "
              f"{rng.getrandbits(40):010x}</div>")
    if ssi:
        stamp = ('<p>Generated on <!--# echo var="date_local" --> in 0.0123 s, '
                 'request <!--# echo var="request_id" --></p>')
    else:
        stamp = (f"<p>Generated on 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                 f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} UTC in "
                 f"{rng.random():.4f} s, request {token[:16]}</p>")
    picks = rng.sample(list(titles), min(5, len(titles)))
    items = "".join(f'<li><a href="/p/{rng.getrandbits(20)}">{t}</a></li>' for t in picks)
    inside = stamp + f'<div class="more-docs"><h4>Recommended</h4><ul>{items}</ul></div>'
    at = _content_end(out)
    if at >= 0:
        out = out[:at] + inside + out[at:]
    else:
        out = _insert_at(out, r"</body\s*>", inside, after=False, last=True)
    out = _insert_at(out, r"<body[^>]*>", banner)
    out = _insert_at(out, r"</body\s*>", f'<form method="post" action="/feedback"><input type="hidden" '
                     f'name="csrf" value="{token}"></form>', after=False, last=True)
    return _insert_at(out, r"<head[^>]*>", f'<meta name="csrf-token" content="{token}">')


def title_of(html: str) -> str:
    m = re.search(r"<title[^>]*>(.*?)</title>", html, re.S | re.I)
    return re.sub(r"\s+", " ", m.group(1)).strip()[:80] if m else ""


# ------------------------------------------------------------------------------------- sites


@dataclass
class Site:
    """Files to serve and the answer: ``groups`` of URL paths (``A:/d/py/json.html``; A, B, C are
    the servers) that must share one cluster; every URL in no group must be in no cluster with
    another input URL of a different group."""

    files: Dict[str, str] = field(default_factory=dict)
    groups: List[List[str]] = field(default_factory=list)
    urls: List[str] = field(default_factory=list)  # "A:/path" in the order built

    def add_group(self, members: Sequence[str]) -> None:
        self.groups.append(list(members))
        self.urls.extend(members)


@dataclass
class DocSpec:
    """What :func:`doc_site` builds (paths are relative to the package's doc root)."""

    sections: Dict[str, Tuple[str, List[str]]]  # name -> (doc root, pages to crawl)
    listing_fill: int = 12  # extra files per section directory (so its listing has entries)
    mirror_b: int = 1  # every n-th page is also crawled on server B (exact mirror)
    mirror_c: int = 2  # every n-th page (offset 1) also on server C (signature line)
    noisy: int = 3  # every n-th page also as an SSI noisy copy under /n/
    redirects: int = 0  # this many pages also through /old/ (301)
    cjk: Sequence[str] = ()  # debian-reference pages (e.g. "apa.zh-cn.html"), on A and B


def doc_site(spec: DocSpec) -> Site:
    site = Site()
    titles = _add_section_files(site, spec)
    k = 0
    for name, (_root, pages) in sorted(spec.sections.items()):
        for page in pages:
            site.add_group(_page_group(site, spec, name, page, k, titles))
            k += 1
        # the section's directory listing: the same on A, B and C (C adds a signature line)
        site.add_group([f"A:/d/{name}/", f"B:/d/{name}/", f"C:/d/{name}/"])
    for page in spec.cjk:
        site.files[f"cjk/{page}"] = read(os.path.join(DEBREF, page))
        site.add_group([f"A:/cjk/{page}", f"B:/cjk/{page}"])
    return site


def _add_section_files(site: Site, spec: DocSpec) -> List[str]:
    """Every section's pages, and the files that fill its listing, into ``site``; their titles."""
    titles: List[str] = []
    for name, (root, pages) in sorted(spec.sections.items()):
        suffix = pages[0].split(".", 1)[1]  # "html", or "zh-cn.html": the section's own language
        fill = sorted(f for f in os.listdir(root) if f.endswith("." + suffix) and f not in pages)[: spec.listing_fill]
        for page in list(pages) + fill:
            html = read(os.path.join(root, page))
            site.files[f"d/{name}/{os.path.basename(page)}"] = html
            titles.append(title_of(html) or page)
    return titles


def _page_group(site: Site, spec: DocSpec, name: str, page: str, k: int, titles: List[str]) -> List[str]:
    """The ``k``-th page's group: on A, on the mirrors every so many pages, its noisy copy (added
    to ``site``) and its old redirecting URL for the first ones."""
    path = f"/d/{name}/{os.path.basename(page)}"
    members = [f"A:{path}"]
    if k % spec.mirror_b == 0:
        members.append(f"B:{path}")
    if spec.mirror_c and k % spec.mirror_c == 1:
        members.append(f"C:{path}")
    if spec.noisy and k % spec.noisy == 0:
        noisy = f"n/{name}/{os.path.basename(page)}"
        site.files[noisy] = noisy_copy(site.files[path[1:]], titles, seed=k, ssi=True)
        members.append(f"A:/{noisy}")
    if k < spec.redirects:
        members.append(f"A:/old/{name}/{os.path.basename(page)}")
    return members


NGINX_A = """
location /d/ { autoindex on; }
location /n/ { ssi on; }
location /old/ { rewrite ^/old/(.*)$ /d/$1 permanent; }
"""
NGINX_C = """
location / {
    autoindex on;
    sub_filter '</body>' '<address>mirror at 127.0.0.1 port $server_port, served $time_local</address></body>';
    sub_filter_once on;
}
"""


@contextlib.contextmanager
def serve(site: Site, extra_a: str = "") -> Iterator[Dict[str, str]]:
    """Servers A, B (exact mirror) and C (signature line); yields {"A": base, "B": ..., "C": ...}."""
    with contextlib.ExitStack() as stack:
        bases = {
            "A": stack.enter_context(nginx_server(locations=NGINX_A + extra_a, files=site.files)),
            "B": stack.enter_context(nginx_server(locations=NGINX_A + extra_a, files=site.files)),
            "C": stack.enter_context(nginx_server(locations=NGINX_C, files=site.files)),
        }
        yield bases


def resolve(spec_url: str, bases: Dict[str, str]) -> str:
    server, path = spec_url.split(":", 1)
    return bases[server] + path


def pair_scores(site: Site, bases: Dict[str, str], cluster_of: Dict[str, str]) -> Dict[str, float]:
    """Pair precision / recall / F1 of ``cluster_of`` (url -> cluster id, "" = alone) against
    the site's groups, plus ``false_pairs`` (pairs put together that the answer keeps apart)."""
    truth: Dict[str, int] = {}
    for g, members in enumerate(site.groups):
        for m in members:
            truth[resolve(m, bases)] = g
    urls = sorted(truth)
    tp = fp = fn = 0
    for i, u in enumerate(urls):
        for v in urls[i + 1:]:
            same_truth = truth[u] == truth[v]
            same_pred = bool(cluster_of.get(u)) and cluster_of.get(u) == cluster_of.get(v)
            tp += same_truth and same_pred
            fp += same_pred and not same_truth
            fn += same_truth and not same_pred
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "false_pairs": fp, "missed_pairs": fn,
            "true_pairs": tp + fn}
