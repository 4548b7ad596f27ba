"""DOM structure features of a rendered page.

:func:`dom_features` walks an already-parsed ``lxml.html`` tree once, without modifying it, and
returns the three :class:`~scrapy_websim.core.types.PageRecord` fields:

* ``dom_counts``: element count, non-blank text-node count, and the counts of ``div``, ``a``,
  ``img``, ``input``, ``script``, in the order of :data:`~scrapy_websim.core.types.DOM_COUNT_NAMES`.
* ``tag_paths``: ``"html>body>div>p" -> count``. Bounded twice so a huge page cannot blow memory:
  a path keeps at most ``max_path_depth`` tags (deeper elements count under their truncated
  path), and only the ``max_paths`` most frequent paths are kept (ties broken by the path, so the
  result is deterministic).
* ``depth_hist``: ``depth_hist[d]`` = number of elements at depth ``d`` (``html`` is depth 0);
  elements deeper than ``max_depth`` count in the last bucket.
"""

from __future__ import annotations

from typing import Dict, List, TypedDict

from ..params.page import DomParams
from ..types import DOM_COUNT_NAMES

__all__ = ["dom_features"]


DEFAULT_DOM_PARAMS = DomParams()
_COUNTED = {name: i for i, name in enumerate(DOM_COUNT_NAMES) if name not in ("nodes", "text_nodes")}


class DomFeatures(TypedDict):
    """What :func:`dom_features` returns: three :class:`~scrapy_websim.core.types.PageRecord` fields."""

    dom_counts: List[int]
    tag_paths: Dict[str, int]
    depth_hist: List[int]


def _root(doc):
    root = doc.getroottree().getroot() if hasattr(doc, "getroottree") else doc
    return root if root is not None else doc


def _text_nodes(el, depth: int) -> int:
    """The text nodes of an element's own: its text, and its tail (within the root)."""
    text, tail = el.text, el.tail
    n = 1 if text and not text.isspace() else 0
    if tail and depth > 0 and not tail.isspace():
        n += 1
    return n


#: Each tag's lower-case local name (bounded: pages with random tag names).
_LOCAL: Dict[str, str] = {}


def _local_name(tag: str) -> str:
    """``tag`` lower-cased without its namespace (memoised in :data:`_LOCAL`)."""
    name = tag.lower()
    if "}" in name:
        name = name.rsplit("}", 1)[1]
    if len(_LOCAL) < 4096:
        _LOCAL[tag] = name
    return name


def dom_features(doc, max_paths: int = DEFAULT_DOM_PARAMS.max_paths,
                 params: DomParams = DEFAULT_DOM_PARAMS) -> DomFeatures:
    """``{"dom_counts": [...], "tag_paths": {...}, "depth_hist": [...]}`` of a parsed page."""
    counts = [0] * len(DOM_COUNT_NAMES)
    paths: Dict[str, int] = {}
    max_depth = params.max_depth
    hist = [0] * (max_depth + 1)
    max_path_depth = params.max_path_depth
    root = _root(doc)
    # One pass in document order (lxml's iterator, in C); each element's depth and path come from
    # its parent's, which came before it.
    known: Dict = {}
    text_nodes = 0
    nodes = 0
    local = _LOCAL
    for el in root.iter():
        tag = el.tag
        if tag.__class__ is not str:  # comment / PI: only its tail is a text node of the parent
            tail = el.tail
            if tail and not tail.isspace():
                text_nodes += 1
            continue
        name = local.get(tag)
        if name is None:
            name = _local_name(tag)
        if el is root:
            depth, parent_path = 0, ""
        else:
            depth, parent_path = known[el.getparent()]
            depth += 1
        nodes += 1
        idx = _COUNTED.get(name)
        if idx is not None:
            counts[idx] += 1
        text_nodes += _text_nodes(el, depth)
        # beyond max_path_depth, counted under the deepest kept path
        path = parent_path if depth >= max_path_depth else (f"{parent_path}>{name}" if parent_path else name)
        paths[path] = paths.get(path, 0) + 1
        hist[depth if depth < max_depth else max_depth] += 1
        known[el] = (depth, path)
    while hist and not hist[-1]:  # as deep as the page goes (every depth above the deepest has an element)
        hist.pop()
    counts[0] = nodes
    counts[1] = text_nodes
    if len(paths) > max_paths:
        kept = sorted(paths.items(), key=lambda kv: (-kv[1], kv[0]))[:max_paths]
        paths = dict(kept)
    return {"dom_counts": counts, "tag_paths": paths, "depth_hist": hist}
