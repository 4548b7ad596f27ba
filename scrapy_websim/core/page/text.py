"""Main-text extraction.

Everything here reads an already-parsed ``lxml.html`` document and never mutates it: the
orchestrator parses a page once and hands the same tree to every feature function.

Extraction (measured against trafilatura and readability-lxml in ``bench/extraction.py``):

1. Walk the tree once, skipping what a reader never sees as content: scripts, styles, forms,
   ``nav``/``header``/``footer``/``aside``/menus, hidden elements (``hidden``, ``aria-hidden``,
   ``display:none``) and blocks whose class/id says boilerplate (cookie banners, ads, share bars,
   related links, ...). Each element gets its visible text length and its link-text length.
2. If ``article``/``main``/``[role=main]``/``[itemprop=articleBody]`` elements hold most of the
   visible text, the text of the outermost ones is the main text (a match nested in another match
   is not counted twice).
3. Otherwise score blocks by text density (readability style: paragraphs give points to parent and
   grandparent, scaled down by link density) and take the best block plus its good siblings.

The tokens and hashes of the extracted text (SimHash, MinHash) are in
:mod:`scrapy_websim.core.fingerprints`.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Tuple

import lxml.etree

from ..params.page import TextParams
from .visible import EMBED_TAGS, NON_TEXT_TAGS, page_body

__all__ = [
    "Measured",
    "extract_main_text",
    "list_text",
    "measure",
]


DEFAULT_TEXT_PARAMS = TextParams()

# Elements whose content is never main text.
_NOT_MAIN_TEXT_TAGS = NON_TEXT_TAGS | EMBED_TAGS | frozenset(
    """nav header footer aside menu menuitem button select option textarea input label
    dialog figure-caption""".split()
)
_BLOCK_TAGS = frozenset(
    """p div section article main td th li dd dt blockquote pre h1 h2 h3 h4 h5 h6 ul ol dl
    table tr tbody thead figure figcaption address center body details summary hr br""".split()
)
_PARA_TAGS = frozenset("p pre td blockquote li dd h2 h3 h4 figcaption".split())
_SEMANTIC_TAGS = frozenset(("article", "main"))

#: The page's main block inside an element, as a page marks it.
_MAIN_BLOCKS = lxml.etree.XPath(".//main|.//article|.//*[@role='main']|.//*[@itemprop='articleBody']")
_NEGATIVE = re.compile(
    r"(?:^|[-_\s])(?:ad|ads|advert\w*|banner|breadcrumbs?|cookie\w*|consent|gdpr|comments?|"
    r"disqus|footer|header|masthead|menu|nav|navbar|navigation|newsletter|popup|modal|promo\w*|"
    r"related|recommended|share|sharing|social|sidebar|sponsor\w*|subscribe|subscription|"
    r"skip|toolbar|tags|pagination|pager|outbrain|taboola|signup|login|byline-share|"
    r"sr-only|visually-hidden|hidden|print-only|noprint|author-bio|read-more|more-stories|"
    r"trending|popular|announcements?|site-?notice|notice-?bar)(?:$|[-_\s])",
    re.I,
)
_POSITIVE = re.compile(
    r"article|body|column|content|entry|main|page|post|text|blog|story|prose|markdown", re.I
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_WS = re.compile(r"\s+")


def _is_skipped(el) -> bool:
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions
        return True
    tag = tag.lower()
    if tag in _NOT_MAIN_TEXT_TAGS:
        # some sites put the article body in a <header>: keep headers that hold paragraphs
        return not (tag == "header" and len(el.findall(".//p")) >= 3)
    if not el.keys():  # most elements have no attributes: nothing below can skip them
        return False
    return _skipped_by_attributes(el, tag)


def _skipped_by_attributes(el, tag: str) -> bool:
    """An element is hidden, or named or given a role of navigation and the like (and does not
    hold the page's main block)."""
    get = el.get
    if get("hidden") is not None or get("aria-hidden") == "true":
        return True
    role = get("role")
    if role in ("navigation", "banner", "contentinfo", "complementary", "menu", "menubar",
                "dialog", "alertdialog", "search"):
        return True
    style = get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    if tag in ("body", "html", "article", "main") or role == "main":
        return False
    cls = get("class")
    ident = get("id")
    if not cls and not ident:
        return False
    # a wrapper named like navigation that holds the page's main block is the page: Read the
    # Docs' theme (MkDocs, Sphinx) puts sidebar and article in one ``wy-grid-for-nav``
    names = f"{cls or ''} {ident or ''}".strip()
    if not _boilerplate_names(names) or _MAIN_BLOCKS(el):
        return False
    return not (_comment_names(names) and _one_message(el))


#: The words of a comment section's class or id.
_COMMENT = re.compile(r"(?:^|[-_\s])comments?(?:$|[-_\s])", re.I)


@lru_cache(maxsize=4096)
def _comment_names(names: str) -> bool:
    """``names`` say boilerplate only by a "comment" word (``changeset-comments``)."""
    return bool(_COMMENT.search(names)) and not _NEGATIVE.search(_COMMENT.sub(" ", names))


#: What a section of readers' comments holds: the comments, each named so, or a form to add one.
_SECTION_PARTS = lxml.etree.XPath(
    ".//*[contains(translate(@class, 'COMENT', 'coment'), 'comment') or contains(translate(@id, 'COMENT', 'coment'), "
    "'comment')]|.//form|.//textarea")


#: The paragraphs of a message.
_PARAGRAPHS = lxml.etree.XPath(".//p|.//pre")


def _one_message(el) -> bool:
    """A block named "comments" that is one message, not a section of readers' comments (nor a
    piece of one: its title, a reply link): it holds a paragraph, nothing in it is named a
    comment and it has no form to add one. A revision's or a changeset's message (Redmine's
    ``changeset-comments``) is the text of its page; a blog's comment section lists comments
    and ends with a reply form."""
    return bool(_PARAGRAPHS(el)) and not _SECTION_PARTS(el)


#: A class/id token that starts with one of these says what its element is not: Datasette wraps
#: everything but the footer in ``not-footer``.
_NEGATED = re.compile(r"(?:^|\s)(?:not|no|non|without)[-_]\S*", re.I)


@lru_cache(maxsize=8192)
def _boilerplate_names(names: str) -> bool:
    """class/id words say boilerplate (memoised: a page repeats a few class names many times); a
    negated token (``not-footer``) says nothing."""
    names = _NEGATED.sub(" ", names) if "-" in names or "_" in names else names
    return bool(names and _NEGATIVE.search(names) and not _POSITIVE.search(names))


class _Info:
    __slots__ = ("text", "links")

    def __init__(self) -> None:
        self.text = 0
        self.links = 0


def _own_len(s: Optional[str]) -> int:
    if not s:
        return 0
    return len(s.strip())


def _measure(el, infos: Dict, in_link: bool) -> Tuple[int, int]:
    """Visible text length and link-text length of ``el`` (skipped elements count 0)."""
    info = _Info()
    infos[el] = info
    tag = el.tag.lower()
    in_link = in_link or tag == "a"
    run = el.text
    text = len(run.strip()) if run else 0  # _own_len, inlined: this loop sees every node
    links = text if in_link else 0
    for child in el[:]:
        if not _is_skipped(child):
            t, lk = _measure(child, infos, in_link)
            text += t
            links += lk
        run = child.tail
        if run:
            tail = len(run.strip())
            text += tail
            if in_link:
                links += tail
    info.text = text
    info.links = links
    return text, links


def _collect(el, out: List[str], max_link_density: float, infos: Dict) -> None:
    """Append the visible text of ``el`` to ``out``, one string per block."""
    info = infos.get(el)
    if info is not None and info.text and info.links > max_link_density * info.text and info.text > 0:
        # link-dense blocks (menus, link lists) go; links inside a kept block are its text
        tag = el.tag.lower()
        if tag in _BLOCK_TAGS and tag not in ("p", "h1", "h2", "h3", "h4", "h5", "h6", "body", "article", "main"):
            return
    run = el.text
    if run:
        out.append(run)
    for child in el[:]:
        if child in infos:  # measured = not skipped (decided once, in _measure)
            block = child.tag.lower() in _BLOCK_TAGS
            if block:
                out.append("\n")
            _collect(child, out, max_link_density, infos)
            if block:
                out.append("\n")
        run = child.tail
        if run:
            out.append(run)


def _join(parts: Iterable[str]) -> str:
    # " ".join(line.split()) is collapsing \s+ and stripping (str.split and re's \s agree on
    # what is white space), only faster.
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _semantic_roots(body, infos) -> List:
    found = []
    for el in body.iter():
        if el in infos and (
            el.tag in _SEMANTIC_TAGS or el.get("role") == "main" or el.get("itemprop") == "articleBody"
        ):
            found.append(el)
    if not found:
        return []
    chosen = set(found)
    roots = []
    for el in found:  # drop matches nested inside another match
        parent = el.getparent()
        nested = False
        while parent is not None:
            if parent in chosen:
                nested = True
                break
            parent = parent.getparent()
        if not nested:
            roots.append(el)
    return roots


def _paragraph_scores(infos) -> Dict:
    """Each paragraph-like block's score (commas, length), given to its parent and half to its
    grandparent."""
    scores: Dict = {}
    for el, info in infos.items():
        tag = el.tag.lower()
        if tag not in _PARA_TAGS and not (tag == "div" and info.text and _few_blocks(el)):
            continue
        n = info.text
        if n < 25:
            continue
        inner = el.text_content()
        score = 1.0 + inner.count(",") + inner.count("，") + inner.count("。") + min(n / 100.0, 3.0)
        parent = el.getparent()
        if parent is not None and parent in infos:
            scores[parent] = scores.get(parent, 0.0) + score
            grand = parent.getparent()
            if grand is not None and grand in infos:
                scores[grand] = scores.get(grand, 0.0) + score / 2.0
    return scores


def _density_best(body, infos) -> Tuple[object, float, Dict]:
    """The best-scoring block, its score and every scored element's score (readability style)."""
    scores = _paragraph_scores(infos)
    best, best_score = None, 0.0
    for el, info in infos.items():
        s = scores.get(el, 0.0)
        if s <= 0:
            continue
        names = f"{el.get('class') or ''} {el.get('id') or ''}"
        if _POSITIVE.search(names):
            s += 25
        if info.text:
            s *= 1.0 - info.links / info.text
        scores[el] = s
        if s > best_score:
            best, best_score = el, s
    return best, best_score, scores


def _prose_root(best, body, infos: Dict, share: float):
    """``best`` or its lowest ancestor that holds ``share`` of the page's prose (non-link text of
    paragraph blocks of 25+ characters). A page whose text is cut into many sections (AsciiDoc,
    DocBook: each section its own wrapper) would otherwise be judged by the one section that
    scored best, and which one that is flips with a few changed words."""
    if share <= 0.0:
        return best
    held: Dict = {}
    total = 0
    for el, info in infos.items():
        if el.tag.lower() in _PARA_TAGS and info.text >= 25:
            value = info.text - info.links
            total += value
            node = el
            while node is not None:
                held[node] = held.get(node, 0) + value
                node = node.getparent()
    node = best
    while node is not body and held.get(node, 0) < share * total:
        parent = node.getparent()
        if parent is None or parent not in infos:
            break
        node = parent
    return node


def _few_blocks(el) -> bool:
    for child in el[:]:
        tag = child.tag
        if isinstance(tag, str) and tag.lower() in ("p", "div", "table", "ul", "ol", "section", "article", "pre"):
            return False
    return True


def _trafilatura(doc) -> str:
    import trafilatura  # noqa: PLC0415  # optional: only when asked for

    # trafilatura prunes the tree it is given: hand it a copy
    return trafilatura.extract(copy.deepcopy(doc), include_comments=False, include_tables=True) or ""


def _collect_all(roots, max_link_density: float, infos: Dict) -> str:
    parts: List[str] = []
    for r in roots:
        _collect(r, parts, max_link_density, infos)
        parts.append("\n")
    return _join(parts)


def extract_main_text(doc, params: TextParams = DEFAULT_TEXT_PARAMS, measured: Optional["Measured"] = None) -> str:
    """The main text of a parsed page, blocks separated by newlines. Never mutates ``doc``.
    ``measured``: :func:`measure` of ``doc`` when the caller has it already."""
    if params.extractor == "trafilatura":
        return _trafilatura(doc)
    body, infos = measured if measured is not None else measure(doc)
    if body is None:
        return ""
    roots = _semantic_roots(body, infos)
    if roots:
        # shares of non-link text: navigation is mostly links and must not outweigh the article
        held = sum(infos[r].text - infos[r].links for r in roots)
        body_info = infos[body]
        if held >= params.semantic_min_chars and held >= params.semantic_min_share * (
            body_info.text - body_info.links
        ):
            return _collect_all(roots, params.max_link_density, infos)
    best, best_score, scores = _density_best(body, infos)
    if best is None:
        if roots and any(infos[r].text for r in roots):
            return _collect_all(roots, params.max_link_density, infos)
        return _collect_all([body], 1.0, infos)
    parts: List[str] = []
    root = _prose_root(best, body, infos, params.paragraph_share)
    if root is not best:
        _collect(root, parts, params.max_link_density, infos)
        return _join(parts)
    parent = best.getparent()
    if parent is None or parent not in infos:
        _collect(best, parts, params.max_link_density, infos)
        return _join(parts)
    return _collect_with_siblings(best, parent, best_score, params, infos, scores)


def _sibling_kept(sib, info, score: float, threshold: float) -> bool:
    """Whether a sibling of the densest block is article text too (scored well, or a real paragraph)."""
    if score >= threshold:
        return True
    return sib.tag.lower() == "p" and info.text >= 80 and info.links < 0.25 * info.text


def _collect_with_siblings(best, parent, best_score: float, params: TextParams, infos: Dict, scores: Dict) -> str:
    """The densest block and those of its siblings that are article text too, in document order."""
    parts: List[str] = []
    threshold = max(10.0, best_score * 0.2)
    for sib in parent[:]:
        if sib is not best:
            info = infos.get(sib)
            if info is None or not info.text or not _sibling_kept(sib, info, scores.get(sib, 0.0), threshold):
                continue
        _collect(sib, parts, params.max_link_density, infos)
        parts.append("\n")
    return _join(parts)


def list_text(doc, measured: Optional["Measured"] = None) -> str:
    """The text a list page (index, table of contents, directory listing) is told apart by: all
    visible text outside page furniture (nav, header, footer, aside, menus, hidden and boilerplate
    blocks), link texts included -- its entries are links, which the article extractor drops.
    ``measured``: :func:`measure` of ``doc`` when the caller has it already."""
    body, infos = measured if measured is not None else measure(doc)
    if body is None:
        return ""
    return _collect_all([body], 1.0, infos)


#: What :func:`measure` gives: the body and the measure of each of its visible elements.
Measured = Tuple[Optional[object], Dict]


def measure(doc) -> Measured:
    """The body and the measure (visible text length, link-text length) of each of its visible
    elements; (None, {}) for no visible text. The extractors (:func:`extract_main_text`,
    :func:`list_text`, :func:`~scrapy_websim.core.page.prose.prose_text`) start from it and never
    change it, so one measure serves them all."""
    body = page_body(doc)
    if not isinstance(body.tag, str):
        return None, {}
    infos: Dict = {}
    total, _ = _measure(body, infos, False)
    return (body, infos) if total else (None, {})

