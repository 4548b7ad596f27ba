"""The prose of a page: its visible text without link lists.

A noisy copy of a short page (a list of "recommended" links and a timestamp injected into the
content) loses a third of its visible shingles but almost none of its prose, and the prose does not
depend on which block the article extractor chose or on the page type, both of which flip on such
copies. ``core.match.similarity.text_sim`` takes the larger of the two Jaccard similarities.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .text import _BLOCK_TAGS, Measured, _collect, _join, measure

__all__ = ["list_and_prose_text", "prose_text"]


def prose_text(doc, max_link_density: float = 0.5, measured: Optional[Measured] = None) -> str:
    """Visible text outside page furniture without its link lists: every block whose link text is
    more than ``max_link_density`` of its text is left out (menus, "related"/"recommended" lists,
    tag clouds), unless it holds a block that is not (an article inside a link-heavy wrapper
    stays; only the wrapper's own links go). The text a page with prose is told apart by, whatever
    the article extractor chose. ``measured``: :func:`~scrapy_websim.core.page.text.measure` of
    ``doc`` when the caller has it already."""
    body, infos = measured if measured is not None else measure(doc)
    if body is None:
        return ""
    parts: List[str] = []
    _collect_prose(body, parts, max_link_density, infos, {})
    return _join(parts)


def list_and_prose_text(doc, max_link_density: float = 0.5, measured: Optional[Measured] = None) -> Tuple[str, str]:
    """``(text.list_text(doc, measured), prose_text(doc, max_link_density, measured))`` from one
    walk of the measured tree (the prose is the list text without its link-dense blocks)."""
    body, infos = measured if measured is not None else measure(doc)
    if body is None:
        return "", ""
    listed: List[str] = []
    prose: List[str] = []
    _collect_both(body, listed, prose, max_link_density, infos, {})
    listed.append("\n")
    return _join(listed), _join(prose)


def _collect_both(el, listed: List[str], prose: List[str], max_link_density: float, infos: Dict, memo: Dict) -> None:
    """:func:`_collect_prose` into ``prose`` and ``text._collect`` with no link-density limit (all
    the measured text: the list text) into ``listed``, in one walk."""
    tag = el.tag.lower()
    if tag != "body" and _link_dense(infos[el], max_link_density):
        if tag not in _BLOCK_TAGS or not _holds_prose(el, max_link_density, infos, memo):
            _collect(el, listed, 1.0, infos)  # no prose here
            return
        _collect_wrapper(el, listed, prose, max_link_density, infos, memo)
        return
    run = el.text
    if run:
        listed.append(run)
        prose.append(run)
    for child in el[:]:
        if child in infos:
            block = child.tag.lower() in _BLOCK_TAGS
            if block:
                listed.append("\n")
                prose.append("\n")
            _collect_both(child, listed, prose, max_link_density, infos, memo)
            if block:
                listed.append("\n")
                prose.append("\n")
        run = child.tail
        if run:
            listed.append(run)
            prose.append(run)


def _collect_wrapper(el, listed: List[str], prose: List[str], max_link_density: float, infos: Dict,
                     memo: Dict) -> None:
    """:func:`_collect_both` of a link-heavy wrapper that holds prose: its prose blocks are
    prose, all of it is list text."""
    run = el.text
    if run:
        listed.append(run)
    for child in el[:]:
        if child in infos:
            if child.tag.lower() in _BLOCK_TAGS:
                listed.append("\n")
                prose.append("\n")
                _collect_both(child, listed, prose, max_link_density, infos, memo)
                listed.append("\n")
                prose.append("\n")
            else:
                _collect(child, listed, 1.0, infos)
        run = child.tail
        if run:
            listed.append(run)


def _link_dense(info, max_link_density: float) -> bool:
    return bool(info.text) and info.links > max_link_density * info.text


def _holds_prose(el, max_link_density: float, infos: Dict, memo: Dict) -> bool:
    """Whether a block below ``el`` is not link-dense and has 25+ characters of non-link text."""
    found = memo.get(el)
    if found is None:
        found = False
        for child in el[:]:
            info = infos.get(child)
            if info is None or child.tag.lower() not in _BLOCK_TAGS:
                continue
            if (not _link_dense(info, max_link_density) and info.text - info.links >= 25) or _holds_prose(
                    child, max_link_density, infos, memo):
                found = True
                break
        memo[el] = found
    return found


def _collect_prose(el, out: List[str], max_link_density: float, infos: Dict, memo: Dict) -> None:
    if el.tag.lower() != "body" and _link_dense(infos[el], max_link_density):
        if el.tag.lower() not in _BLOCK_TAGS or not _holds_prose(el, max_link_density, infos, memo):
            return
        for child in el[:]:  # a link-heavy wrapper: keep its prose blocks, drop its own links
            if child in infos and child.tag.lower() in _BLOCK_TAGS:
                out.append("\n")
                _collect_prose(child, out, max_link_density, infos, memo)
                out.append("\n")
        return
    if el.text:
        out.append(el.text)
    for child in el[:]:
        if child in infos:
            block = child.tag.lower() in _BLOCK_TAGS
            if block:
                out.append("\n")
            _collect_prose(child, out, max_link_density, infos, memo)
            if block:
                out.append("\n")
        if child.tail:
            out.append(child.tail)
