"""The tunables of :mod:`scrapy_websim.core.page`: main-text extraction (:class:`TextParams`), the
page type (:class:`PageTypeParams`), DOM counts and tag paths (:class:`DomParams`) and the tag
sequence of the LCS measure (:class:`LcsParams`). What each one means is said in the module that
reads it; see :mod:`scrapy_websim.core.params` for how a field is declared.

Pure module: no Scrapy import, no import of the algorithm modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Params, param

__all__ = [
    "TextParams",
    "PageTypeParams",
    "DomParams",
    "LcsParams",
    "ChangeParams",
    "STRUCTURE_MEASURES",
    "DEFAULT_MAX_TAGS",
    "MAX_MAX_TAGS",
]


@dataclass(frozen=True)
class TextParams(Params):
    """Parameters of main-text extraction."""

    semantic_min_share: float = param(0.5, "[0, 1]", "share of text article/main must hold")
    semantic_min_chars: int = param(140, "[0, 1000000]", "minimum characters of such a container")
    max_link_density: float = param(0.5, "(0, 1]", "blocks with more link text are dropped")
    #: "websim" is this package's extractor, "trafilatura" a better and much slower one
    #: (docs/decision.md, "Features of a page").
    extractor: str = param("websim", "", "main-text extractor", choices=("websim", "trafilatura"),
                           needs={"trafilatura": ("trafilatura", "trafilatura")}, setting="WEBSIM_TEXT_EXTRACTOR")
    #: A page that is not a list page is judged by its visible text (link texts included) when its
    #: article is shorter (``core.features.content_text``); 0 = only list pages.
    list_fallback_chars: int = param(200, "int [0, 1000000]", "shorter articles: judged by visible text")
    #: The density fallback widens the best-scoring block to its lowest ancestor holding this share
    #: of the page's paragraph text (0 = never widen; ``_prose_root``).
    paragraph_share: float = param(0.6, "[0, 1]", "density extraction widens to this paragraph share")
    #: Below this share of the visible text (outside furniture, links included) a page is judged by
    #: that visible text (``core.features.content_text``).
    article_min_share: float = param(1.0, "[0, 1]", "article share of the visible text to judge by it")


@dataclass(frozen=True)
class PageTypeParams(Params):
    """Thresholds of :func:`~scrapy_websim.core.page.pagetype.page_type` (see that module's
    docstring for what each signal is)."""

    min_block_chars: int = param(80, "int [1, 10000]", "a prose block has at least this many characters")
    max_block_link_density: float = param(0.34, "number [0.0, 1.0]", "... and at most this share of it in links")
    detail_min_running_chars: int = param(400, "int [0, 1000000]", 'running text needed for "detail"')
    detail_min_running_share: float = param(0.5, "number [0.0, 100.0]", "running text / link text of repeated blocks")
    list_min_items: int = param(10, "int [1, 100000]", 'repeated linked items needed for "list"')
    list_min_share: float = param(0.3, "number [0.0, 1.0]", 'repeated-item chars / non-furniture chars for "list"')
    list_max_text_per_item: float = param(200.0, "number [0.0, 100000.0]", "mean non-link chars per repeated item")
    min_item_link_share: float = param(
        0.4, "number [0.0, 1.0]", 'a repeated item is "linked" if its text starts in a link or this share is link text')
    furniture_max_prose_blocks: int = param(
        3, "int [1, 1000]", "nav/menu/sidebar/footer elements hold fewer prose blocks")
    min_repeat: int = param(3, "int [2, 1000]", "siblings of one signature that make a repeated group")
    max_nodes: int = param(50_000, "int [100, 10000000]", "elements walked at most (a document-order prefix)")


@dataclass(frozen=True)
class DomParams(Params):
    max_paths: int = param(512, "int [1, 100000]", "tag paths kept per page (most frequent first)")
    #: deeper elements share their truncated path
    max_path_depth: int = param(32, "int [1, 1000]", "tags per path")
    max_depth: int = param(64, "int [1, 10000]", "last bucket of the depth histogram")


#: Valid values of :attr:`LcsParams.structure_measure` (``WEBSIM_PARAMS`` key ``decision.structure_measure``).
STRUCTURE_MEASURES = ("paths", "lcs", "both")

DEFAULT_MAX_TAGS = 5000
MAX_MAX_TAGS = 1_000_000


@dataclass(frozen=True)
class LcsParams(Params):
    """Parameters of the tag sequence and of the structure measure."""

    #: a document-order prefix of the elements
    max_tags: int = param(DEFAULT_MAX_TAGS, f"int [1, {MAX_MAX_TAGS}]", "tag-sequence length kept for LCS")
    include_head: bool = param(False, "", "also walk the head (default: only the body)")
    #: "paths" (tag paths and DOM counts), "lcs" (:mod:`scrapy_websim.core.page.lcs`) or "both" (their mean);
    #: the crawl compares pages with the decision's measure (``DecisionParams.structure_measure``)
    structure_measure: str = param("paths", "", "structure similarity measure", choices=STRUCTURE_MEASURES,
                                   set_by="decision.structure_measure")


@dataclass(frozen=True)
class ChangeParams(Params):
    """What ``websim diff`` reports as a change of one URL between two scans, from the pages'
    content digests (:mod:`scrapy_websim.core.page.digest`). Word pairs are counted after masking
    (numbers, ids, tokens), so a timestamp or a counter never counts; a change is the larger of
    the pairs added and the pairs removed. Below these thresholds a change is a small edit or
    per-request noise (a rotating banner, an ad slot, shuffled links, a tip of the day)."""

    text_similarity: float = param(0.7, "[0, 1]", "text changed: word-pair similarity below this ...")
    min_changed_pairs: int = param(20, "int >= 1", "... and at least this many word pairs changed")
    #: A short page (a thin page with a rotating tip, an error template) changes few pairs: its
    #: text counts as changed with fewer, when its tag structure changed too (another template).
    short_changed_pairs: int = param(3, "int >= 1", "... or this many, with the structure changed")
    #: A page this short (both scans) is all tip, banner or greeting when those rotate: its text
    #: counts as changed only with its structure or its title changed too.
    short_page_pairs: int = param(50, "int >= 0", "short page: fewer word pairs than this in both scans")
    #: A long page that gained or lost a whole section stays similar by share, not by amount.
    many_changed_pairs: int = param(120, "int >= 1", "text changed, whatever the similarity: pairs changed")
    structure_distance: int = param(12, "int [1, 64]", "structure changed: SimHash bits apart, at least")
    visual_distance: int = param(20, "int [1, 64]", "layout changed: pHash bits apart (with the structure)")
    #: A directory index is changed by one entry more or less; entries renamed in place (the
    #: same count) are left to the text rule.
    listing_entries: int = param(1, "int >= 1", "listing changed: entries added or removed, at least")
