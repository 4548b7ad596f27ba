"""The tunables of :mod:`scrapy_websim.core.match`: the pair decision (:class:`DecisionParams`,
read by :mod:`~scrapy_websim.core.match.similarity`) and the candidate join and clustering
(:class:`ClusterParams`, read by :mod:`~scrapy_websim.core.match.cluster`). See
:mod:`scrapy_websim.core.params` for how a field is declared.

Pure module: no Scrapy import, no import of the algorithm modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import FieldError, Params, param
from .page import STRUCTURE_MEASURES
from .rules import THIN_HTML_BYTES, THIN_TEXT_CHARS

__all__ = ["DecisionParams", "ClusterParams", "TemplateParams"]


@dataclass(frozen=True)
class DecisionParams(Params):
    """Similarity scales and decision thresholds. Defaults chosen on the labelled corpus
    (``bench/corpus``; see ``tests/test_corpus.py``)."""

    text_min_len_ratio: float = param(0.3, "[0, 1]", "text similarity is 0 below this length ratio")
    #: text similarity is 1 - d / this
    text_max_distance: int = param(16, "int [1, 64]", "SimHash distance where text similarity reaches 0")
    #: visual similarity is 1 - d / this
    visual_max_distance: int = param(20, "int [1, 64]", "pHash distance where visual similarity reaches 0")
    #: "paths" (counts cosine + tag-path Jaccard), "lcs" (tag-sequence LCS) or "both" (their mean)
    structure_measure: str = param("paths", "", "structure similarity measure", choices=STRUCTURE_MEASURES)
    #: the tag-path Jaccard gets 1 - this
    structure_count_weight: float = param(0.5, "[0, 1]", "weight of the DOM-count cosine in paths")
    #: rule 1: text >= rule1_text and (structure >= rule1_structure or visual >= rule1_visual).
    rule1_text: float = param(0.75, "[0, 1]", "rule 1: minimum SimHash text similarity",
                               setting="WEBSIM_TEXT_THRESHOLD")
    #: used when both pages carry a MinHash (word 3-shingle measure, ``similarity.shingle_sim``; the
    #: SimHash measure is then only the candidate filter and the fallback for older features files)
    rule1_jaccard: float = param(0.7, "[0, 1]", "rule 1: minimum MinHash text similarity",
                                  setting="WEBSIM_TEXT_JACCARD_THRESHOLD")
    #: rule 1's (and rule 2's) text threshold for a pair of which at least half of a page's shingles
    #: were its site's template (``similarity.TEMPLATED_SHARE``): what is left is the item itself, a
    #: sentence or a few lines, and two items of one template differ there by a word or a number
    rule1_templated: float = param(0.85, "[0, 1]", "rule 1: minimum text similarity beyond a template that was "
                                   "most of the pages")
    rule1_structure: float = param(0.85, "[0, 1]", "rule 1: minimum structure similarity",
                                    setting="WEBSIM_STRUCTURE_THRESHOLD")
    rule1_visual: float = param(0.9, "[0, 1]", "rule 1: minimum visual similarity", setting="WEBSIM_VISUAL_THRESHOLD")
    rule2_visual: float = param(0.99, "[0, 1.01] (above 1 disables rule 2)", "rule 2: visual alone (> 1 disables)")
    #: rule 2 only between screenshots that carry a picture: a near-uniform viewport (blank page,
    #: a header over white) hashes to a pHash with almost no bits set (white: 8000000000000000),
    #: and all such pages would look identical.
    rule2_min_phash_bits: int = param(8, "int [0, 32]", "rule 2: pHash bits set and unset at least")
    #: two pages with text below this Jaccard are different pages that merely share a first
    #: viewport (a doc site's header over the fold, two directory listings of one server);
    #: 0 = rule 2 on the screenshot alone (docs/decision.md, "How the thresholds were chosen").
    rule2_min_jaccard: float = param(0.5, "[0, 1]", "rule 2: minimum MinHash text similarity")
    #: first ``<h1>`` headings, token Jaccard: by default every word (what a page calls itself is
    #: its own part: a message and its reply "Re: ..." that quotes it whole share all but one
    #: word); not when their judged text is identical, nor when either page has no h1, nor when
    #: both carry one title that holds half the words of one of their h1s
    #: (``similarity.title_names_heading``: a noisy copy whose h1 lost a word). Two pages of one
    #: template that say they are about different things (a wiki's revision histories of two
    #: articles share most of their text and look alike; docs/decision.md, "The heading check").
    heading_min_jaccard: float = param(
        1.0, "[0, 1]", "no duplicate between pages whose h1 headings share fewer words, 0 = off")
    #: between two prose pages (prose at least ``PROSE_MIN_SHARE`` of the judged text on both),
    #: when the shorter holds at least ``prose_len_min_chars`` of prose, unless their judged text
    #: is identical: the longer page says a quarter more (a later revision of an article, a page
    #: with a new section) and is a page of its own (docs/decision.md, "The prose length check").
    prose_min_len_ratio: float = param(
        0.8, "[0, 1]", "no duplicate between prose pages whose prose lengths differ more (shorter / longer), 0 = off")
    prose_len_min_chars: int = param(
        1000, "int [0, 10000000]", "the prose length check needs this much prose on the shorter page")
    #: the text measure forgives the page with more text of its own up to this many word
    #: 3-shingles that the other page lacks: what a server adds to one response and not another
    #: (a banner with an id, a "generated at" line, five "recommended" links). Plain Jaccard (0)
    #: cannot tell a short page's noisy copy from two pages of one boilerplate (docs/decision.md,
    #: "Why forgive 100 shingles, and a text threshold of 0.7").
    text_noise_shingles: int = param(
        100, "int [0, 100000]", "text measure: shingles of per-request noise forgiven, 0 = plain Jaccard")

    #: two pages of which one says more than this many shingles the other lacks (beyond
    #: ``text_noise_shingles``) are two pages however much of the other it holds: a log and its
    #: short form (each entry's description more), a listing and the same listing with more
    #: entries; a server's noise and an edit add far fewer (docs/decision.md, 'The "says much more"
    #: check'). 0 = off
    max_more_shingles: int = param(500, "int [0, 1000000]",
                                   "decision: shingles beyond the noise allowance one page may say more")
    #: two pages whose titles share no word, or of which one holds this many title words or more
    #: that the other lacks (host, numbers and single letters left out), name two pages: a copy
    #: keeps its page's title (docs/decision.md, 'The title check'). 0 = off
    title_own_words: int = param(3, "int [0, 1000]",
                                 "decision: title words of its own that make a page another page (0 = off)")

    def validate(self) -> "DecisionParams":
        if self.structure_measure not in STRUCTURE_MEASURES:  # the message users and tests know
            raise FieldError("structure_measure", f"must be 'paths', 'lcs' or 'both', got {self.structure_measure!r}")
        return super().validate()


@dataclass(frozen=True)
class ClusterParams(Params):
    """Parameters of eligibility, candidate generation and the canonical-centred passes."""

    simhash_distance: int = param(8, "int [0, 11]", "candidate SimHash distance")
    length_diff: float = param(0.5, "number [0, 1]", "candidate text-length difference")
    #: -1 = off
    visual_distance: int = param(0, "int [-1, 11]", "visual-fallback candidates: pHash distance",
                                 set_by="decision.rule2_visual")
    #: (seed behaviour)
    same_host_only: bool = param(False, "", "compare pages of the same host only", set_by="WEBSIM_SAME_HOST_ONLY")
    passes: int = param(0, "int [0, 1000] (0 = until done)", "canonical-centred passes per group, 0 = to completion")
    #: eligibility: the thin-page thresholds (``RuleParams.thin_html_bytes``/``thin_text_chars``,
    #: whose values the finalizer passes here), so that a page is either thin or clustered
    min_html_len: int = param(THIN_HTML_BYTES, "int >= 0", "eligibility: rendered HTML bytes",
                              set_by="rules.thin_html_bytes")
    min_text_len: int = param(THIN_TEXT_CHARS, "int >= 0", "eligibility: main-text characters",
                              set_by="rules.thin_text_chars")
    #: pages with the same first ``<h1>`` are candidates whatever their SimHash (a noisy copy of a
    #: short list page moves it far), when at most this many eligible pages share it (a site-wide
    #: logo heading is no evidence and would make one group of the site); 0 = off
    heading_max_pages: int = param(32, "int [0, 10000]",
                                   "same-h1 candidates when at most this many pages share the h1, 0 = off")
    #: the length check passes whenever the texts differ by at most this many characters, whatever
    #: ``length_diff`` says: what a server adds to one response (a banner, a "generated at" line,
    #: five "recommended" links) is bounded, and on a short page it is more than half the text
    #: (docs/clustering.md, "Candidate pairs").
    length_noise_chars: int = param(600, "int [0, 10000000]",
                                    "candidate length check: characters of difference always allowed")


@dataclass(frozen=True)
class TemplateParams(Params):
    """What a site's template is (:mod:`scrapy_websim.core.match.template`): the shingles of the
    judged text that most of an origin's distinct pages carry."""

    #: a shingle on at least this share of an origin's sampled distinct pages is template
    share: float = param(0.5, "(0, 1]", "template: share of an origin's pages a shingle is on")
    #: an origin needs this many distinct eligible pages for a template of its own (fewer: its
    #: pages are judged whole, or against the template of the other page's origin)
    min_pages: int = param(6, "int [2, 100000]", "template: distinct pages an origin needs")
    #: a page is an item of its site (a ticket, a row, a person's page: content however short,
    #: never thin by its text) when its site has at least this many distinct pages of its kind
    item_pages: int = param(3, "int [2, 100000]", "template: distinct pages of one kind that make its pages items")
    #: distinct pages counted per origin (those with the smallest exact-copy shape); 0 = no templates
    sample: int = param(256, "int [0, 100000]", "template: distinct pages sampled per origin, 0 = off")
    #: pages whose tag paths share this much (Jaccard) are one kind of page (a wiki's histories, an
    #: app's tickets), with a template of its own besides the origin's
    kind_similarity: float = param(0.8, "(0, 1]", "template: tag paths pages of one kind share")
