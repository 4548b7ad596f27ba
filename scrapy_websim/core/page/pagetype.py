"""Page-type label from structure: ``list`` (index / navigation), ``detail`` (one body of running
text) or ``unknown``.

Pure module (no scrapy / twisted / playwright). Pages split into directory/navigation pages,
detail pages and unknown pages, as the DOM-structure similarity literature does.

Signals (all computed from the ``<body>`` of a parsed lxml document, never modifying it; text
inside script, style, noscript, template, svg, select, button, textarea and iframe is ignored;
at most ``max_nodes`` elements are looked at):

* **Furniture.** ``nav``/``header``/``footer``/``aside`` elements, ARIA navigation roles, and
  elements whose class or id has a word in :data:`BOILER_WORDS` (nav, menu, sidebar, footer,
  breadcrumb, related, ...) are page furniture, with everything inside them -- unless they hold
  ``furniture_max_prose_blocks`` prose blocks or more (a "with-sidebar" class on the article's
  wrapper must not hide the article).
* **Repeated sibling blocks.** Outside the furniture, children of one parent with the same tag and
  class attribute form a group; a group of at least ``min_repeat`` members is a list when most
  members are *linked* (their first visible text is inside a link, or at least
  ``min_item_link_share`` of their text is link text) and they carry at most
  ``list_max_text_per_item`` characters of non-link text each on average (running text per block:
  article paragraphs with inline links and sections of prose are not list items).
  ``list_items`` counts the members, ``list_chars`` their text.
* **Text blocks.** The body is cut into blocks at block-level element boundaries (p, div, li, td,
  dd, h1-h6, ...); each block has a length in characters (whitespace collapsed) and a link
  length (characters inside ``<a>``). **Running text** = the characters of the prose blocks (at
  least ``min_block_chars`` characters, link density at most ``max_block_link_density``) outside
  furniture and list items. If the caller knows the main-text length (``main_text_len``, e.g.
  ``PageRecord.text_len`` from the text extractor), the running text is capped by it, so a page
  whose extractor found no main text is not a detail page.
* **Link density** (link characters / all characters) is reported, not decided on: documentation
  and news pages are full of links in running text.

Decision (thresholds are :class:`PageTypeParams`):

* ``detail`` when the running text is at least ``detail_min_running_chars`` and at least
  ``detail_min_running_share`` x the link text of the list items: one body of prose dominates.
* otherwise ``list`` when there are at least ``list_min_items`` list items and their text is at
  least ``list_min_share`` of the non-furniture text.
* otherwise ``unknown`` (thin pages, forms, error pages, pages that are neither).

The thresholds were chosen on Python documentation pages and on the article-extraction
benchmark's pages (docs/decision.md, "Features of a page", has the figures); check a set of pages
with ``python -m scrapy_websim.core.page.pagetype --expect detail FILE...`` (see :func:`main`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from functools import lru_cache
from itertools import islice
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import lxml.etree

from ..params.page import PageTypeParams
from .visible import NON_TEXT_TAGS, page_body

PAGE_TYPES = ("list", "detail", "unknown")


#: Elements whose boundaries end a text block.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body br dd details dialog div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section summary
    table tbody td tfoot th thead tr ul caption center menu""".split()
)
#: Elements whose text is not running text.
_NOT_RUNNING_TEXT_TAGS = NON_TEXT_TAGS | {"select", "button", "textarea"}

_WS = re.compile(r"\s+")


def _tlen(text: Optional[str]) -> int:
    """Characters of ``text`` with whitespace runs collapsed to one space, trimmed."""
    if not text:
        return 0
    # str.split() and re's \s agree on what is whitespace (str.isspace).
    return len(" ".join(text.split()))


_LOCAL: Dict[str, str] = {}


def _local(tag: Any) -> Optional[str]:
    if not isinstance(tag, str):
        return None  # comment, PI, entity
    local = _LOCAL.get(tag)
    if local is None:
        local = tag.rpartition("}")[2] if tag[:1] == "{" else tag
        local = local.lower()
        if len(_LOCAL) < 4096:  # bounded against pages with random tag names
            _LOCAL[tag] = local
    return local


def _walk(root: Any, max_nodes: int) -> Iterator[Tuple[str, Any, Optional[str]]]:
    """Events ("start", el, tag) / ("end", el, tag) / ("text", text, in_link) without recursion."""
    budget = [max_nodes]
    stack: List[Tuple[Any, bool]] = [(root, False)]
    while stack:
        el, closing = stack.pop()
        tag = _local(el.tag)
        if closing:
            yield ("end", el, tag)
            continue
        if tag == "#text":
            yield ("text", el, tag)
            continue
        if budget[0] <= 0:
            return
        budget[0] -= 1
        yield ("start", el, tag)
        stack.append((el, True))
        # Children in reverse so that they pop in document order; each child's tail follows
        # its end event (pushed as a pseudo element below).
        for child in reversed(el[:]):
            if child.tail:
                stack.append((_Tail(child.tail), False))
            if _local(child.tag) is not None:
                stack.append((child, False))
        if el.text and tag is not None:
            stack.append((_Tail(el.text), False))


class _Tail:
    """A text run in the event stream (an element's text or a child's tail)."""

    __slots__ = ("text",)
    tag = "#text"

    def __init__(self, text: str) -> None:
        self.text = text



_BOILER_TAGS = frozenset(("nav", "header", "footer", "aside"))
_BOILER_ROLES = frozenset(("navigation", "banner", "contentinfo", "complementary", "menu", "menubar"))
#: Words of a class or id (split on spaces, "-" and "_") that mark navigation / page furniture.
BOILER_WORDS = frozenset(
    "nav navbar navigation menu submenu sidebar sphinxsidebar footer breadcrumb breadcrumbs related".split()
)
_NEVER_BOILER = frozenset(("html", "body", "main", "article"))
_WORD_SPLIT = re.compile(r"[\s_-]+")


def _is_boiler(el: Any, tag: Optional[str]) -> bool:
    if tag in _NEVER_BOILER:
        return False
    if tag in _BOILER_TAGS:
        return True
    get = el.get
    role = get("role")
    if role and role.strip().lower() in _BOILER_ROLES:
        return True
    cls, ident = get("class"), get("id")
    if not cls and not ident:
        return False
    return _boiler_names((cls or "") + " " + (ident or ""))


@lru_cache(maxsize=4096)
def _boiler_names(words: str) -> bool:
    """class and id words say furniture (memoised: a page repeats a few class names many times)."""
    return not BOILER_WORDS.isdisjoint(_WORD_SPLIT.split(words.lower()))


def page_features(doc: Any, params: PageTypeParams = PageTypeParams()) -> Dict[str, float]:
    """The signals :func:`page_type` decides on (for diagnostics and tuning)."""
    feats: Dict[str, float] = dict(
        text_chars=0, link_chars=0, link_density=0.0, running_chars=0, prose_blocks=0,
        main_chars=0, list_items=0, list_chars=0, list_link_chars=0, text_per_item=0.0, links=0, truncated=0,
    )
    body = page_body(doc)
    if body is None:
        return feats
    elements, feats["truncated"] = _elements(body, params.max_nodes)
    tags = {el: _local(el.tag) for el in elements}  # each element's local tag, looked up once
    # What _blocks would say about each element's subtree, for all elements in one bottom-up
    # pass (linear) instead of one walk per furniture candidate and per repeated item (quadratic
    # on nested lists and menus). Only when the body was walked whole; else walk subtrees.
    profiles = None if feats["truncated"] else _Profiles(elements, tags, params)
    summary = _summaries(profiles, params)
    boiler = _furniture(elements, tags, summary, params)
    members = _repeated_items(elements, tags, boiler, summary, params)
    runs = (profiles.texts, profiles.tails) if profiles is not None else None
    regions, links = _regions(body, tags, runs, boiler, members, params)
    _region_features(feats, regions, len(members), params)
    return dict(feats, links=links)


def _elements(body: Any, max_nodes: int) -> Tuple[List[Any], int]:
    """The first ``max_nodes`` elements of ``body`` in document order (comments and PIs left out)
    and 1 when a node of any kind follows them (the page was cut), else 0."""
    elements = list(islice(body.iter(lxml.etree.Element), max_nodes))
    if len(elements) < max_nodes:
        return elements, 0
    # as many elements as the budget: cut if any node (a comment too) comes after the last
    elements = []
    for el in body.iter():
        if len(elements) >= max_nodes:
            return elements, 1
        if isinstance(el.tag, str):
            elements.append(el)
    return elements, 0


def _summaries(profiles: Optional["_Profiles"], params: PageTypeParams) -> Callable[[Any], tuple]:
    """(prose blocks, chars, link chars, links, first text in a link) of an element's subtree."""
    if profiles is not None:
        return profiles.summary

    def summary(el: Any) -> Tuple[int, int, int, int, bool]:
        blocks, _, n_links, first_in_link = _blocks(el, params.max_nodes)
        return (sum(_is_prose(b, params) for b in blocks), sum(b[0] for b in blocks),
                sum(b[1] for b in blocks), n_links, first_in_link)
    return summary


def _furniture(elements: List[Any], tags: Dict[Any, Optional[str]], summary: Callable[[Any], tuple],
               params: PageTypeParams) -> set:
    """Page furniture: navigation, header, footer, sidebars and everything inside them (in
    document order, so a furniture element's subtree is in the set before it comes up)."""
    boiler: set = set()
    for el in elements:
        if el not in boiler and (
            _is_boiler(el, tags[el])
            # Furniture holds no running text: a "sidebar" class on the wrapper of the article
            # (layout classes such as "has-sidebar") must not hide the article.
            and summary(el)[0] < params.furniture_max_prose_blocks
        ):
            boiler.update(el.iter())
    return boiler


def _repeated_items(elements: List[Any], tags: Dict[Any, Optional[str]], boiler: set,
                    summary: Callable[[Any], tuple], params: PageTypeParams) -> set:
    """Repeated sibling blocks outside the furniture whose members mostly lead somewhere."""
    members: set = set()
    min_repeat = params.min_repeat
    for parent in elements:
        if len(parent) < min_repeat or parent in boiler:
            continue
        groups: Dict[Tuple[str, str], List[Any]] = {}
        for child in parent[:]:
            tag = tags.get(child) or _local(child.tag)  # not in tags: a comment, or past the cut
            if tag is not None and tag not in _NOT_RUNNING_TEXT_TAGS:
                groups.setdefault((tag, child.get("class") or ""), []).append(child)
        for group in groups.values():
            if len(group) >= params.min_repeat and _is_item_group(group, summary, params):
                members.update(group)
    return members


def _is_item_group(group: List[Any], summary: Callable[[Any], tuple], params: PageTypeParams) -> bool:
    """Items lead somewhere and carry little running text each (repeated prose is no list)."""
    linked = plain = 0
    for m in group:
        _, chars, link, n_links, first_in_link = summary(m)
        plain += chars - link
        if n_links and (first_in_link or link >= params.min_item_link_share * chars):
            linked += 1
    return linked * 2 >= len(group) and plain <= params.list_max_text_per_item * len(group)


#: The collapsed lengths of the elements' texts and of the nodes' tails (:class:`_Profiles`).
Runs = Tuple[Dict[Any, int], Dict[Any, int]]


def _open_element(el: Any, tag: Optional[str], boiler: set, members: set, runs: Optional[Runs],
                  stack: List[Any]) -> tuple:
    """An element's start in :func:`_regions`' walk: pushes its end and content, returns the end.
    ``runs``: the collapsed length of each element's text and each node's tail, when known; a
    text run is pushed as its length."""
    member = el in members
    in_boiler = el in boiler
    parent = el.getparent() if in_boiler else None
    end = (tag, tag in BLOCK_TAGS or member or in_boiler, in_boiler and (parent is None or parent not in boiler),
           member)
    stack.append(end)
    # Children in reverse so that they pop in document order, each child's tail after its end;
    # comments and PIs are skipped but their tails are text.
    if runs is None:
        for child in reversed(el[:]):
            n = _tlen(child.tail)
            if n:
                stack.append(n)
            if isinstance(child.tag, str):
                stack.append(child)
        n = _tlen(el.text)
    else:
        texts, tails = runs
        for child in reversed(el[:]):
            n = tails.get(child, 0)
            if n:
                stack.append(n)
            if isinstance(child.tag, str):
                stack.append(child)
        n = texts.get(el, 0)
    if n:
        stack.append(n)
    return end


def _regions(body: Any, tags: Dict[Any, Optional[str]], runs: Optional[Runs], boiler: set, members: set,
             params: PageTypeParams) -> Tuple[Dict[str, List[List[int]]], int]:
    """Text blocks ``[chars, link chars]``, each in one region (content, furniture or repeated
    items), and the number of links. The walk of _walk(body) inlined (this loop sees every node of
    the page): a stack of int (a text run's collapsed length, never 0), element (its start) or
    tuple (its end). ``tags``: the local tag of every element the walk can reach (the first
    ``max_nodes``); ``runs``: the profiles' text lengths, when they were made."""
    regions: Dict[str, List[List[int]]] = {"content": [], "boiler": [], "items": []}
    cur = [0, 0]
    region = "content"
    skip_depth = link_depth = boiler_depth = item_depth = links = 0
    budget = params.max_nodes
    stack: List[Any] = [body]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is int:
            if not skip_depth:  # + 1: the space between runs
                cur[0] += item + 1
                if link_depth:
                    cur[1] += item + 1
            continue
        if kind is tuple:
            tag, cuts, top_boiler, member = item
            step = -1
        else:
            if budget <= 0:
                break
            budget -= 1
            tag = tags.get(item) or _local(item.tag)  # not in tags: past the cut
            tag, cuts, top_boiler, member = _open_element(item, tag, boiler, members, runs, stack)
            step = 1
            links += tag == "a"
        if cuts and cur[0]:
            regions[region].append(cur)
            cur = [0, 0]
        if tag in _NOT_RUNNING_TEXT_TAGS:
            skip_depth += step
        elif tag == "a":
            link_depth += step
        boiler_depth += step * top_boiler  # both flags are bools: 0 or the step
        item_depth += step * member
        region = "boiler" if boiler_depth else "items" if item_depth else "content"
    if cur[0]:
        regions[region].append(cur)
    return regions, links


def _region_features(feats: Dict[str, float], regions: Dict[str, List[List[int]]], n_members: int,
                     params: PageTypeParams) -> None:
    every = regions["content"] + regions["boiler"] + regions["items"]
    text_chars = sum(b[0] for b in every)
    link_chars = sum(b[1] for b in every)
    prose = [b[0] for b in regions["content"] if _is_prose(b, params)]
    list_chars = sum(b[0] for b in regions["items"])
    list_link_chars = sum(b[1] for b in regions["items"])
    feats.update(
        text_chars=text_chars,
        link_chars=link_chars,
        link_density=round(link_chars / text_chars, 4) if text_chars else 0.0,
        running_chars=sum(prose), prose_blocks=len(prose),
        main_chars=text_chars - sum(b[0] for b in regions["boiler"]),
        list_items=n_members,
        list_chars=list_chars,
        list_link_chars=list_link_chars,
        text_per_item=round((list_chars - list_link_chars) / n_members, 1) if n_members else 0.0,
    )


def _blocks(root: Any, max_nodes: int) -> Tuple[List[List[int]], int, int, bool]:
    """Text blocks ``[chars, link_chars]`` under ``root``, elements walked, links seen, and
    whether the first visible text run is inside a link."""
    blocks: List[List[int]] = []
    cur = [0, 0]
    skip_depth = link_depth = nodes = links = 0
    first_in_link: Optional[bool] = None
    for kind, el, tag in _walk(root, max_nodes):
        if kind == "text":
            if not skip_depth:
                n = _tlen(el.text)
                if n:
                    cur[0] += n + 1  # + 1: the space between runs
                    if link_depth:
                        cur[1] += n + 1
                    if first_in_link is None:
                        first_in_link = link_depth > 0
            continue
        if kind == "start":
            nodes += 1
            if tag in _NOT_RUNNING_TEXT_TAGS:
                skip_depth += 1
            elif tag == "a":
                link_depth += 1
                links += 1
        elif tag in _NOT_RUNNING_TEXT_TAGS:
            skip_depth -= 1
        elif tag == "a":
            link_depth -= 1
        if tag in BLOCK_TAGS and cur[0]:
            blocks.append(cur)
            cur = [0, 0]
    if cur[0]:
        blocks.append(cur)
    return blocks, nodes, links, bool(first_in_link)


def _count_block(chars: int, link: int, min_chars: int, density: float, long_: int, prose: int) -> Tuple[int, int]:
    """(long blocks, prose blocks) after one more closed block of ``chars``/``link`` characters."""
    if chars >= min_chars:
        return long_ + 1, prose + (link <= density * chars)
    return long_, prose


def _end_profile(tag: Optional[str], density: float, profile: tuple) -> tuple:
    """A profile as its parent sees it: skipped elements count nothing; in ``<a>`` all is link text."""
    cut, lc, ll, prose, long_, sc, sl, tc, tl, first, links = profile
    if tag in _NOT_RUNNING_TEXT_TAGS:
        return (cut, 0, 0, 0, 0, 0, 0, 0, 0, None, links)
    if tag == "a":
        return (cut, lc, lc, long_ if density >= 1.0 else 0, long_, sc, sc, tc, tc,
                True if first is not None else None, links + 1)
    return profile


def _close_runs(runs: Tuple[Tuple[int, int], ...], sc: int, sl: int, long_: int, prose: int, min_chars: int,
                density: float) -> Tuple[int, int, int, int]:
    """Runs ``(chars, link chars)`` closed into blocks at a block element's end: the closed
    chars and link chars, long blocks and prose blocks, each added to."""
    for c, lk in runs:
        if c:
            sc += c
            sl += lk
            long_, prose = _count_block(c, lk, min_chars, density, long_, prose)
    return sc, sl, long_, prose


class _Profiles:
    """:func:`_blocks` of every element's subtree, computed bottom-up in one pass.

    A subtree's text blocks, as a walk started at its root sees them, are an open run before the
    first block boundary (``lead``), the closed blocks between boundaries and an open run after
    the last boundary (``trail``); a parent's sequence is the concatenation of its text, its
    children's sequences and their tails, where two open runs that meet merge into one block.
    Closed blocks are kept only as sums: (prose blocks, blocks of at least ``min_block_chars``
    characters, chars, link chars). Inside ``<a>`` all text is link text (relative to the walk's
    root, as in :func:`_blocks`); inside a skipped element no text counts but boundaries still cut.

    A profile is a tuple ``(cut, lc, ll, prose, long, sc, sl, tc, tl, first, links)``: ``cut`` is
    whether the subtree has a boundary (if not, all its text is the open run ``lc``/``ll``),
    ``first`` whether the first text run is inside a link (None: no text), ``links`` the ``<a>``
    elements. Requires the whole subtree in ``elements`` (the caller checks ``truncated``).
    """

    __slots__ = ("memo", "min_chars", "density", "texts", "tails")

    def __init__(self, elements: List[Any], tags: Dict[Any, Optional[str]], params: PageTypeParams) -> None:
        self.min_chars = params.min_block_chars
        self.density = params.max_block_link_density
        memo: Dict[Any, tuple] = {}
        self.memo = memo
        # The collapsed length of each element's text and of each node's tail, the ones not 0:
        # what _regions reads again.
        self.texts: Dict[Any, int] = {}
        self.tails: Dict[Any, int] = {}
        for el in reversed(elements):  # children before parents
            memo[el] = self._profile(el, tags[el], memo)

    def _profile(self, el: Any, tag: Optional[str], memo: Dict[Any, tuple]) -> tuple:
        """``el``'s profile from its text, its children's profiles and their tails."""
        min_chars, density = self.min_chars, self.density
        is_block = tag in BLOCK_TAGS
        # Running state of the concatenation, same layout as a profile.
        cut = is_block
        lc = ll = prose = long_ = sc = sl = tc = tl = links = 0
        first = None
        n = _tlen(el.text)
        if n:  # after the start boundary of a block element: the trail
            self.texts[el] = n
            if cut:
                tc = n + 1
            else:
                lc = n + 1
            first = False
        for child in el[:]:
            p = memo.get(child)
            if p is not None:
                if first is None:
                    first = p[9]
                links += p[10]
                if not p[0]:  # open run: extends the current open run
                    if cut:
                        tc += p[1]
                        tl += p[2]
                    else:
                        lc += p[1]
                        ll += p[2]
                else:
                    if cut:  # current trail + child's lead close into one block
                        c, lk = tc + p[1], tl + p[2]
                        if c:
                            sc += c
                            sl += lk
                            long_, prose = _count_block(c, lk, min_chars, density, long_, prose)
                    else:
                        lc += p[1]
                        ll += p[2]
                        cut = True
                    prose += p[3]
                    long_ += p[4]
                    sc += p[5]
                    sl += p[6]
                    tc, tl = p[7], p[8]
            run = child.tail  # _tlen inlined (once per node): white space is no run
            if run and not run.isspace():
                n = self.tails[child] = len(" ".join(run.split()))
                if first is None:
                    first = False
                if cut:
                    tc += n + 1
                else:
                    lc += n + 1
        if is_block:  # the end boundary closes the trail (the lead is empty: cut at the start)
            sc, sl, long_, prose = _close_runs(((lc, ll), (tc, tl)), sc, sl, long_, prose, min_chars, density)
            lc = ll = tc = tl = 0
        return _end_profile(tag, density, (cut, lc, ll, prose, long_, sc, sl, tc, tl, first, links))

    def summary(self, el: Any) -> Tuple[int, int, int, int, bool]:
        """What ``_blocks(el)`` gives, summed: (prose blocks, chars, link chars, links, first in link)."""
        cut, lc, ll, prose, _, sc, sl, tc, tl, first, links = self.memo[el]
        for c, lk in ((lc, ll), (tc, tl)):
            if c:
                sc += c
                sl += lk
                if c >= self.min_chars and lk <= self.density * c:
                    prose += 1
        return prose, sc, sl, links, bool(first)


def _is_prose(block: List[int], params: PageTypeParams) -> bool:
    return block[0] >= params.min_block_chars and block[1] <= params.max_block_link_density * block[0]


def page_type(
    doc: Any, main_text_len: Optional[int] = None, params: PageTypeParams = PageTypeParams()
) -> str:
    """``"list"``, ``"detail"`` or ``"unknown"`` for a parsed lxml document (see the module doc)."""
    return classify(page_features(doc, params), main_text_len, params)


def classify(
    feats: Dict[str, float], main_text_len: Optional[int] = None, params: PageTypeParams = PageTypeParams()
) -> str:
    running = feats["running_chars"]
    if main_text_len is not None:
        running = min(running, main_text_len)
    if running >= params.detail_min_running_chars and running >= (
        params.detail_min_running_share * feats["list_link_chars"]
    ):
        return "detail"
    if (
        feats["list_items"] >= params.list_min_items
        and feats["list_chars"] >= params.list_min_share * feats["main_chars"]
    ):
        return "list"
    return "unknown"


def main(argv: Optional[List[str]] = None) -> int:
    """Label saved pages: ``python -m scrapy_websim.core.page.pagetype [--expect TYPE] [-v] FILE...``.

    Files may be gzipped (``.gz``). Prints the count of each label (and, with ``--expect``, the
    accuracy); ``-v`` prints every page's label and signals.
    """
    import lxml.html  # noqa: PLC0415  # only this command line parses: the crawl hands a parsed tree

    parser = argparse.ArgumentParser(prog="python -m scrapy_websim.core.page.pagetype")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--expect", choices=PAGE_TYPES)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    params = PageTypeParams()
    counts = {t: 0 for t in PAGE_TYPES}
    for path in args.files:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as fh:
            doc = lxml.html.document_fromstring(fh.read())
        feats = page_features(doc, params)
        label = classify(feats, None, params)
        counts[label] += 1
        if args.verbose:
            print(label, path, json.dumps(feats, sort_keys=True))
    total = sum(counts.values())
    line = " ".join(f"{t}={n}" for t, n in counts.items())
    if args.expect:
        line += f" expected={args.expect} accuracy={counts[args.expect] / total:.3f}"
    print(f"pages={total} {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
