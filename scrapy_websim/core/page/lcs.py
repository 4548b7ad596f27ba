"""Tag-sequence structure similarity by longest common subsequence (LCS).

Pure module (no scrapy / twisted / playwright). After the DOM-structure LCS similarity method:
a page's structure is the sequence of its element tags in document order, and two pages are
alike in structure by ``2 * LCS(a, b) / (len(a) + len(b))``.

The tag sequence
----------------
:func:`tag_sequence` writes one character per element (see :func:`tag_char`):

* HTML, SVG and MathML tags that browsers know map through the fixed table :data:`TAG_TABLE`.
  The first 92 entries (the most frequent tags) are printable ASCII other than space, ``"`` and
  ``\\``, so a typical sequence stays compact and unescaped in JSON. **The table is append-only:**
  reordering it would change every stored ``PageRecord.tag_seq``.
* Any other tag (custom elements such as ``<my-widget>``, typos, unknown namespaces) maps by
  CRC-32 of its lower-cased local name into the Unicode private-use area U+E000..U+F8FF. This is
  stable across processes and machines (unlike ``hash()``); two unknown tags may collide, which only
  makes them count as the same tag.
* Namespaces (``{http://www.w3.org/2000/svg}path``) are dropped; tags are lower-cased.
* Comments, processing instructions and entities are skipped: they are not elements.

**The cut.** Only the first ``max_tags`` elements in document order are kept (a prefix), so a
50,000-node page costs at most ``max_tags`` steps of the (lazy) lxml iterator and its sequence
at most ``max_tags`` characters; the LCS of two sequences then costs at most
``max_tags`` big-integer steps. The prefix keeps the top of the page (header, navigation, start of
the main content), which is where pages of one template agree. By default only ``<body>`` is
walked (``include_head=False``): the head is invisible and varies with meta and tracking tags.
The document is never modified.

The LCS
-------
:func:`lcs_length` is exact. It strips the common prefix and suffix (exact, and large for pages of
one template), drops characters that do not occur in the other sequence (they can never match),
and runs the bit-parallel LCS of Allison-Dix / Hyyro over one Python integer: for each character
of the shorter sequence ``V = (V + (V & M[c])) | (V & ~M[c])``, where ``M[c]`` has bit ``i`` set when
the longer sequence has ``c`` at position ``i``; the LCS is the number of zero bits in the low
``len(longer)`` bits of ``V``. That is ``O(len(short) * len(long) / 30)`` digit operations done in
C (``python bench/lcs.py`` times it).
"""

from __future__ import annotations

import zlib
from itertools import islice
from typing import Any, Dict, Iterator, Optional, Tuple

import lxml.etree

from ..params.page import DEFAULT_MAX_TAGS, STRUCTURE_MEASURES
from .visible import page_body

__all__ = [
    "TAG_TABLE",
    "tag_char",
    "tag_sequence",
    "lcs_length",
    "lcs_similarity",
    "lcs_similarity_bound",
    "structure_similarity",
]

# --------------------------------------------------------------------------------------------
# Tag table. APPEND ONLY: the position of a tag is its character in every stored tag_seq.
# Ordered by frequency on real pages so that common tags land on printable ASCII.
TAG_TABLE: Tuple[str, ...] = (
    # 0-9
    "div", "a", "li", "span", "p", "img", "ul", "script", "meta", "link",
    # 10-19
    "path", "svg", "strong", "input", "br", "option", "i", "button", "h1", "h2",
    # 20-29
    "h3", "h4", "h5", "h6", "em", "b", "section", "article", "td", "tr",
    # 30-39
    "label", "noscript", "style", "nav", "header", "footer", "aside", "figure", "figcaption", "form",
    # 40-49
    "source", "picture", "time", "html", "head", "body", "title", "iframe", "hr", "table",
    # 50-59
    "tbody", "thead", "tfoot", "th", "small", "blockquote", "main", "ol", "dl", "dt",
    # 60-69
    "dd", "select", "textarea", "fieldset", "legend", "cite", "sup", "sub", "code", "pre",
    # 70-79
    "u", "ins", "del", "s", "abbr", "address", "video", "audio", "track", "canvas",
    # 80-89
    "use", "symbol", "g", "defs", "polygon", "circle", "rect", "line", "polyline", "ellipse",
    # 90-91
    "area", "map",
    # 92- (Latin-1 letters from U+00C0)
    "base", "caption", "col", "colgroup", "data", "datalist", "details", "summary", "dialog", "dfn",
    "embed", "object", "param", "kbd", "mark", "meter", "optgroup", "output", "progress", "q",
    "rp", "rt", "ruby", "samp", "search", "slot", "template", "var", "wbr", "bdi",
    "bdo", "menu", "hgroup", "center", "font", "big", "tt", "strike", "marquee", "frame",
    "frameset", "noframes", "acronym", "applet", "basefont", "blink", "nobr", "noembed", "image",
    "math", "mi", "mn", "mo", "mrow", "msup", "mfrac", "clippath", "lineargradient",
    "radialgradient", "stop", "mask", "filter", "text", "tspan", "foreignobject", "desc",
    "pattern", "animate", "fegaussianblur", "fecolormatrix", "lazy-image", "noindex",
)

_ASCII_ALPHABET = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"\\')
assert len(_ASCII_ALPHABET) == 92


def _table_char(index: int) -> str:
    if index < len(_ASCII_ALPHABET):
        return _ASCII_ALPHABET[index]
    return chr(0xC0 + index - len(_ASCII_ALPHABET))


_TAG_CHARS: Dict[str, str] = {tag: _table_char(i) for i, tag in enumerate(TAG_TABLE)}
assert len(_TAG_CHARS) == len(TAG_TABLE), "duplicate tag in TAG_TABLE"
assert max(map(ord, _TAG_CHARS.values())) < 0x0250  # far below the private-use area

_PUA_START, _PUA_SIZE = 0xE000, 0xF8FF - 0xE000 + 1


def tag_char(tag: str) -> str:
    """The one character standing for ``tag`` in a tag sequence (see the module docstring)."""
    if tag[:1] == "{":
        tag = tag.rpartition("}")[2]
    tag = tag.lower()
    char = _TAG_CHARS.get(tag)
    if char is None:
        char = chr(_PUA_START + zlib.crc32(tag.encode("utf-8", "surrogatepass")) % _PUA_SIZE)
        if len(_TAG_CHARS) < 4096:  # memoise, bounded against pages with random tag names
            _TAG_CHARS[tag] = char
    return char


def _root(doc: Any) -> Any:
    getroot = getattr(doc, "getroot", None)
    return getroot() if getroot is not None else doc


def _elements(doc: Any, include_head: bool) -> Iterator[Any]:
    root = _root(doc)
    if root is None:
        return iter(())
    start = root if include_head else page_body(root)
    # elements only (no comments, PIs, entities: their tag is no str), chosen by lxml in C
    return start.iter(lxml.etree.Element)


def tag_sequence(doc: Any, max_tags: int = DEFAULT_MAX_TAGS, *, include_head: bool = False) -> str:
    """Element tags of ``doc`` (an lxml element or tree) in document order, one char per tag.

    Keeps the first ``max_tags`` elements; walks only ``<body>`` unless ``include_head``. When the
    document has no ``<body>`` the whole tree is walked. ``doc`` is not modified.
    """
    if max_tags <= 0:
        return ""
    return "".join([tag_char(el.tag) for el in islice(_elements(doc, include_head), max_tags)])


# --------------------------------------------------------------------------------------------
def _common_prefix_len(a: str, b: str) -> int:
    """Length of the common prefix, by binary search over C-level slice comparisons."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo], a[:hi+1] != b[:hi+1] (or hi is the bound)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def lcs_length(a: str, b: str) -> int:
    """Exact length of the longest common subsequence of ``a`` and ``b``."""
    if a == b:
        return len(a)
    head = _common_prefix_len(a, b)
    if head:
        a, b = a[head:], b[head:]
    tail = _common_prefix_len(a[::-1], b[::-1])
    if tail:
        a, b = a[: len(a) - tail], b[: len(b) - tail]
    if not a or not b:
        return head + tail
    a, b = _drop_unmatched(a, b)
    if not a:
        return head + tail
    return head + tail + _bit_parallel_lcs(a, b)


def _drop_unmatched(a: str, b: str) -> Tuple[str, str]:
    """``a`` and ``b`` without the characters missing from the other (they can never be matched);
    both empty when they share none."""
    set_a, set_b = set(a), set(b)
    if set_a == set_b:
        return a, b
    common = set_a & set_b
    if not common:
        return "", ""
    if len(set_a) > len(common):
        a = a.translate({ord(c): None for c in set_a - common})
    if len(set_b) > len(common):
        b = b.translate({ord(c): None for c in set_b - common})
    return a, b


def _bit_parallel_lcs(a: str, b: str) -> int:
    """The LCS length of two non-empty sequences (module docstring: bits over the longer, a loop
    over the shorter)."""
    if len(a) < len(b):
        a, b = b, a
    n = len(a)
    mask = (1 << n) - 1
    match: Dict[str, int] = {}
    for i, c in enumerate(a):
        match[c] = match.get(c, 0) | (1 << i)
    pairs = {c: (m, mask ^ m) for c, m in match.items()}
    v = mask
    for c in b:
        m, not_m = pairs[c]
        v = (v + (v & m)) | (v & not_m)
    return n - (v & mask).bit_count()


def lcs_similarity(a: str, b: str) -> float:
    """``2 * LCS / (len(a) + len(b))`` in [0, 1]; 1.0 for two empty sequences."""
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    return 2.0 * lcs_length(a, b) / total


def lcs_similarity_bound(a: str, b: str) -> float:
    """An O(1) upper bound of :func:`lcs_similarity` (``2 * min / sum`` of the lengths), for pruning."""
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    return 2.0 * min(len(a), len(b)) / total


def structure_similarity(
    measure: str, paths_sim: float, seq_a: Optional[str], seq_b: Optional[str]
) -> float:
    """The structure similarity chosen by ``DecisionParams.structure_measure`` (``WEBSIM_PARAMS`` key
    ``decision.structure_measure``).

    ``paths_sim`` is the default structure measure (counts cosine + tag-path Jaccard), computed by the
    caller; "lcs" ignores it, "both" is the mean of the two. The LCS is only computed when needed.
    A rendered page's sequence is never empty (it holds at least ``body`` or the root), so an empty
    sequence means "no HTML" (not rendered): two such pages get 0.0 from "lcs" and ``paths_sim``
    from "both" rather than a perfect match of two empty sequences.
    """
    if measure == "paths":
        return paths_sim
    if measure not in STRUCTURE_MEASURES:
        raise ValueError(f"structure_measure must be one of {', '.join(STRUCTURE_MEASURES)}, got {measure!r}")
    if not seq_a and not seq_b:
        # Nothing to compare (e.g. neither page rendered): do not invent a perfect match.
        return paths_sim if measure == "both" else 0.0
    lcs = lcs_similarity(seq_a or "", seq_b or "")
    if measure == "lcs":
        return lcs
    return (paths_sim + lcs) / 2.0
