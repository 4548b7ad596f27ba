"""Reading what a person sees on a parsed page: visible text, headings, form measures and page
regions (main content vs chrome), in one non-recursive walk (used by the special-page rules)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, List, Optional, Tuple

#: The one skip-tag set: elements whose content is never read as page text (code, head, embedded
#: documents and drawings). Each reader adds its own on top, named for what it reads:
#: ``_NOT_VISIBLE_TAGS`` here, ``_NOT_MAIN_TEXT_TAGS`` in ``core.page.text`` and
#: ``_NOT_RUNNING_TEXT_TAGS`` in ``core.page.pagetype``.
NON_TEXT_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "svg", "math", "iframe", "object"}
)
#: Void or embedded elements without readable text (not skipped by ``core.page.pagetype``).
EMBED_TAGS = frozenset({"meta", "link", "embed", "canvas"})
#: Visible text: also drop-down options (a <select> shows one, its list is not page text).
_NOT_VISIBLE_TAGS = NON_TEXT_TAGS | EMBED_TAGS | {"select", "datalist", "option"}
_HEADING_TAGS = frozenset({"h1", "h2", "h3"})
_CONTROL_INPUT_TYPES = frozenset(
    {"", "text", "email", "password", "tel", "number", "search", "url", "checkbox", "radio"}
)
_BUTTON_INPUT_TYPES = frozenset({"submit", "button", "reset"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_WS = re.compile(r"\s+")
#: Not in the template skeleton (the fingerprint): what a template does not show.
_SKELETON_SKIP = frozenset({"script", "style", "noscript", "template", "link", "meta"})
#: Not in the skeleton: the skipped tags, and what is no element (a comment, a PI: tag "").
_NOT_IN_SKELETON = _SKELETON_SKIP | {""}
_CONTROL_WEIGHT = 20  # characters a visible form control counts for in form_share


def _tag(el) -> str:
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions, entities
        return ""
    if "}" in tag:
        tag = tag.rsplit("}", 1)[1]
    return tag.lower()


def _hidden(el, tag: str) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden", "").lower() == "true" and tag != "body":
        return True
    style = el.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


class _Walk:
    """One pass over the document: what is visible, and (if asked) the tag skeleton.

    Counters are pairs ``[main, chrome]``: index 1 counts what sits in page chrome (navigation,
    site header/footer, sidebars, see :func:`_region`), index 0 everything else.
    """

    __slots__ = ("parts", "headings", "form_weight", "total_weight", "password_inputs",
                 "inputs", "forms", "skeleton", "main_parts")

    def __init__(self) -> None:
        self.parts: List[str] = []  # all visible text, in order (the fingerprint reads it)
        self.main_parts: List[str] = []  # visible text outside chrome
        self.headings: List[List[str]] = [[], []]
        self.form_weight = [0, 0]
        self.total_weight = [0, 0]
        self.password_inputs = [0, 0]
        self.inputs = [0, 0]
        self.forms = [0, 0]
        self.skeleton: Optional[List[str]] = None


def page_body(doc: Any) -> Any:
    """The one body-text entry point: the ``<body>`` of a parsed page (an lxml tree or element),
    else its root element (a fragment); None for an empty tree."""
    root = doc.getroot() if hasattr(doc, "getroot") else doc
    if root is None or _tag(root) != "html":
        return root
    for child in root:  # the first <body> in document order: a child of <html>, unless inside one
        if child.tag == "body":
            return child
        if isinstance(child.tag, str):
            found = child.find(".//body")
            if found is not None:
                return found
    return root


# Stack entry phases: enter an element that may be visible, emit an element's tail (visible
# because its parent is), enter an element only for the skeleton (inside something not visible).
_ENTER, _TAIL, _SKELETON_ONLY = 0, 1, 2
# Regions: ordinary page, page chrome (navigation, site header/footer, sidebars), main content
# (``main``/``article``/``role=main``: a header or footer inside it is the article's own).
_PAGE, _CHROME, _MAIN = 0, 1, 2
_CHROME_TAGS = frozenset({"nav", "aside"})
_CHROME_ROLES = frozenset({"navigation", "search", "menubar", "menu", "complementary"})
_TOP_CHROME_TAGS = frozenset({"header", "footer"})
_TOP_CHROME_ROLES = frozenset({"banner", "contentinfo"})
#: class/id tokens of chrome containers: the whole token, or its last ``-``/``_`` word.
_CHROME_TOKENS = frozenset({"header", "site-header", "masthead", "topbar", "top-bar"})
_CHROME_WORDS = frozenset({
    "nav", "navbar", "navigation", "menu", "menubar", "sidebar", "aside", "footer", "breadcrumb",
    "breadcrumbs", "toolbar", "portlet", "usertools", "sitetools", "pagetools", "personal",
})
_TOKEN_SPLIT = re.compile(r"[-_]+")
_NEGATION_WORDS = frozenset({"not", "no", "non", "without"})


def _chrome_attr(el) -> bool:
    for attr in ("id", "class"):
        value = el.get(attr)
        if value and _chrome_value(value):
            return True
    return False


@lru_cache(maxsize=4096)
def _chrome_value(value: str) -> bool:
    """A class or id value names chrome (memoised: a page repeats a few class names many times)."""
    for token in value.lower().split():
        words = _TOKEN_SPLIT.split(token)
        if words[0] in _NEGATION_WORDS and len(words) > 1:
            continue  # ``not-footer``: what the element is not (Datasette's page wrapper)
        if token in _CHROME_TOKENS or words[-1] in _CHROME_WORDS:
            return True
    return False


#: class/id tokens (the whole token or its last ``-``/``_`` word) of a breadcrumb trail.
_TRAIL_WORDS = frozenset({"breadcrumb", "breadcrumbs", "crumbs"})


def _trail(el) -> bool:
    """``el`` holds a breadcrumb trail (a class or id word, or ``aria-label="Breadcrumb"``). A
    trail lists where the page sits or, as on a wiki's "Trace", the pages this browser visited
    before: state of the crawl, not of the page, which would make one template two."""
    for attr in ("class", "id"):
        value = el.get(attr)
        if value and _trail_value(value):
            return True
    label = el.get("aria-label")
    return bool(label) and "breadcrumb" in label.lower()


@lru_cache(maxsize=4096)
def _trail_value(value: str) -> bool:
    """A class or id value names a breadcrumb trail (memoised as :func:`_chrome_value`)."""
    return any(_TOKEN_SPLIT.split(token)[-1] in _TRAIL_WORDS for token in value.lower().split())


def _region(el, tag: str, region: int) -> int:
    """The region of ``el`` given its parent's: chrome stays chrome; ``nav``/``aside``/navigation
    roles are chrome anywhere; ``main``/``article`` start the main content; a header/footer or a
    chrome class/id is chrome outside the main content."""
    if region == _CHROME:
        return _CHROME
    role = (el.get("role") or "").lower()
    if tag in _CHROME_TAGS or role in _CHROME_ROLES:
        return _CHROME
    if tag in ("main", "article") or role == "main":
        return _MAIN
    if region == _PAGE and (tag in _TOP_CHROME_TAGS or role in _TOP_CHROME_ROLES or _chrome_attr(el)):
        return _CHROME
    return region


def _walk(doc, skeleton: bool = False) -> _Walk:
    """Visible text pieces, heading text and form measures, without recursion or mutation.

    With ``skeleton``, the same pass also lists ``{depth}{tag}`` of every element in document
    order (hidden ones too; not inside ``_SKELETON_SKIP`` elements), for the fingerprint.
    """
    out = _Walk()
    skel = out.skeleton = [] if skeleton else None
    start = page_body(doc)
    # Stack of (element, in_form, heading index or -1, phase, depth, region).
    stack: List[Tuple[Any, bool, int, int, int, int]] = [(start, False, -1, _ENTER, 0, _PAGE)]
    push, pop = stack.append, stack.pop
    skip_tags = _NOT_VISIBLE_TAGS
    while stack:
        el, in_form, heading, phase, depth, region = pop()
        if phase == _TAIL:
            _add_text(out, el.tail, in_form, heading, region)
            continue
        tag = _walk_tag(el)
        if phase == _ENTER and el is not start:
            tail = el.tail
            if tail and not tail.isspace():  # the tail is visible even if el is not (white space adds nothing)
                push((el, in_form, heading, _TAIL, depth, region))
        if tag and _trail(el):  # a breadcrumb trail: where the visitor has been, not what the page is
            continue
        visible = phase == _ENTER and _visible(el, tag, skip_tags)
        if skel is not None and tag not in _NOT_IN_SKELETON:
            _add_skeleton(skel, push, el, tag, visible, depth, region)
        if visible:
            _enter(out, push, el, tag, in_form, heading, depth, region)
    return out


def _visible(el, tag: str, skip_tags: Any) -> bool:
    """An element a person sees (its text and its children's, unless they hide themselves)."""
    return bool(tag) and tag not in skip_tags and not _hidden(el, tag)


def _walk_tag(el) -> str:
    """``el``'s lower-case local tag name; "" for comments, processing instructions and entities."""
    tag = el.tag
    if tag.__class__ is not str:
        return ""
    if "}" in tag or not tag.islower():
        return _tag(el)
    return tag


def _add_skeleton(skel: List[str], push, el, tag: str, visible: bool, depth: int, region: int) -> None:
    """``{depth}{tag}`` of ``el``; a hidden element's (or a control's) children only for the skeleton."""
    skel.append(f"{depth}{tag}")
    if not visible or tag in ("input", "textarea"):
        for child in reversed(el[:]):
            push((child, False, -1, _SKELETON_ONLY, depth + 1, region))


def _enter(out: _Walk, push, el, tag: str, in_form: bool, heading: int, depth: int, region: int) -> None:
    """A visible element: its region, form and heading state, its text, then its children."""
    region = _region(el, tag, region)
    c = 1 if region == _CHROME else 0
    if tag == "form":
        in_form = True
        out.forms[c] += 1
    elif tag == "input" or tag == "textarea":
        _add_control(out, el, tag, in_form, heading, region)
        return
    if heading < 0 and tag in _HEADING_TAGS:
        out.headings[c].append("")
        heading = len(out.headings[c]) - 1
    text = el.text
    if text and not text.isspace():  # white space adds nothing
        _add_text(out, text, in_form, heading, region)
    depth += 1
    for child in reversed(el[:]):
        push((child, in_form, heading, _ENTER, depth, region))


def _add_control(out: _Walk, el, tag: str, in_form: bool, heading: int, region: int) -> None:
    c = 1 if region == _CHROME else 0
    kind = (el.get("type") or "").lower() if tag == "input" else "textarea"
    if kind in _BUTTON_INPUT_TYPES:
        label = el.get("value") or ""
        if label:
            _add_text(out, label, in_form, heading, region)
    elif kind in _CONTROL_INPUT_TYPES or kind == "textarea":
        out.inputs[c] += 1
        out.total_weight[c] += _CONTROL_WEIGHT
        if in_form:
            out.form_weight[c] += _CONTROL_WEIGHT
        if kind == "password":
            out.password_inputs[c] += 1


def _add_text(out: _Walk, text: str, in_form: bool, heading: int, region: int = _PAGE) -> None:
    text = " ".join(text.split())  # the same as collapsing \s+ and stripping, only faster
    if not text:
        return
    c = 1 if region == _CHROME else 0
    out.parts.append(text)
    if not c:
        out.main_parts.append(text)
    weight = len(text)
    out.total_weight[c] += weight
    if in_form:
        out.form_weight[c] += weight
    headings = out.headings[c]
    if 0 <= heading < len(headings):
        headings[heading] = (headings[heading] + " " + text).strip()


def visible_text(doc) -> str:
    """The text a person sees in ``doc`` (body only), whitespace collapsed."""
    return " ".join(_walk(doc).parts)
