"""The four pairwise similarities and the duplicate decision.

Every threshold is a field of :class:`DecisionParams`. :func:`compare` returns a
:class:`~scrapy_websim.core.types.PairResult` carrying the four similarities and which rule fired
(``"rule1"``, ``"rule2"`` or ``""``), which the output writes to ``match_rule`` and ``*_sim``.

Missing features give 0 for that similarity (a page without a screenshot cannot be visually
identical to anything); two identical vectors give 1 (also two all-zero vectors), so every
similarity is symmetric, in [0, 1], and 1 for a page compared with itself when it has the feature.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from ..fingerprints import (
    SHINGLE_SET_MAX,
    decode_shingle_set,
    hamming,
    jaccard_estimate,
    minhash_from_hex,
    tokens,
    url_words,
)
from ..page.lcs import lcs_similarity
from ..params.match import DecisionParams
from ..types import MASK64, PageRecord, PairResult

__all__ = [
    "DEFAULT_DECISION_PARAMS",
    "SEED_DECISION_PARAMS",
    "same_text",
    "text_sim",
    "shingle_sim",
    "own_sim",
    "own_text",
    "OwnText",
    "structure_sim",
    "visual_sim",
    "behavior_sim",
    "cosine",
    "weighted_jaccard",
    "decide",
    "heading_sim",
    "prose_lengths_differ",
    "items_differ",
    "title_items_differ",
    "fields_differ",
    "compare",
    "judge",
    "PairDecision",
]


#: The original tool's constants: identical SimHash required.
SEED_DECISION_PARAMS = DecisionParams(rule1_text=0.97, rule1_structure=0.85, rule1_visual=0.85)
#: Shipped defaults, chosen on the labelled corpus (``python bench/corpus/tune.py``): the seed's
#: text >= 0.97 (identical SimHash) misses noisy copies (a timestamp and a view counter in the
#: main text move 1-8 bits; recall 0.761); text >= 0.75 (<= 4 bits) with structure >= 0.9 keeps
#: precision 1.0 and reaches recall 0.948. The closest different pages of one template sit at
#: 6 bits (text 0.625), so 4 bits keeps a margin.
DEFAULT_DECISION_PARAMS = DecisionParams(rule1_text=0.75, rule1_structure=0.85, rule1_visual=0.9)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two non-negative vectors in [0, 1]; equal vectors give 1, a zero vector 0."""
    if list(a) == list(b):
        return 1.0 if len(a) else 0.0
    n = max(len(a), len(b))
    a = list(a) + [0] * (n - len(a))
    b = list(b) + [0] * (n - len(b))
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return max(0.0, min(1.0, dot / (na * nb)))


def weighted_jaccard(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Σ min / Σ max over the union of keys; two empty maps give 1."""
    if not a and not b:
        return 1.0
    num = 0.0
    den = 0.0
    for key in a.keys() | b.keys():
        x = a.get(key, 0)
        y = b.get(key, 0)
        if x < y:
            num += x
            den += y
        else:
            num += y
            den += x
    return num / den if den > 0 else 1.0


def same_text(a: PageRecord, b: PageRecord) -> bool:
    """Identical judged text (equal ``text_hash``): text similarity 1 by identity, not by a
    measure that forgave noise."""
    return bool(a.text_hash) and a.text_hash == b.text_hash


def text_sim(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS,
             template: Optional[np.ndarray] = None) -> float:
    """1 for identical main text (equal ``text_hash``); 0 when the lengths differ too much; else
    the shingle measure (:func:`own_sim`) of what the two pages say beyond ``template`` (the
    shingles their sites repeat on most pages, :mod:`~scrapy_websim.core.match.template`), from
    their stored shingle sets. Records without one (a page with more text than a set holds, an
    older features file) are compared by their MinHashes (:func:`shingle_sim`), or without those by
    SimHash, 1 - d / ``text_max_distance``. Unless a template took something out of the pair,
    between prose pages the larger of that and the same measure on their prose alone."""
    return _text_measure(a, b, params, template)[0]


def _text_measure(a: PageRecord, b: PageRecord, params: DecisionParams,
                  template: Optional[np.ndarray]) -> Tuple[float, Optional["OwnText"]]:
    if same_text(a, b):
        return 1.0, None
    own = own_text(a, b, template)
    if own is not None:
        if not _lengths_ok(a.text_len, b.text_len, params):
            return 0.0, own
        whole = own_sim(own.both, own.own_a, own.own_b, params.text_noise_shingles)
        if own.template_a or own.template_b:
            return whole, own
    else:
        measured = _shingle_sim_of(a.minhash, b.minhash, (a.text_len, b.text_len), (a.shingles, b.shingles), params)
        whole = measured if measured is not None else (0.0 if not _lengths_ok(a.text_len, b.text_len, params) else
                                                       _hamming_sim(a.simhash, b.simhash, params.text_max_distance))
    if max(_prose_share(a), _prose_share(b)) < PROSE_MIN_SHARE:
        return whole, own
    prose = _shingle_sim_of(a.prose_minhash, b.prose_minhash, (a.prose_len, b.prose_len),
                            (a.prose_shingles, b.prose_shingles), params)
    return (whole if prose is None else max(whole, prose)), own


@dataclass(frozen=True)
class OwnText:
    """The shingles of a pair's judged texts beyond their sites' template: ``both`` on both
    pages, ``own_a``/``own_b`` on one only; ``template_a``/``template_b`` of each page's shingles
    were template (left out)."""

    both: int
    own_a: int
    own_b: int
    template_a: int = 0
    template_b: int = 0

    def template_share(self, side: int) -> float:
        total = (self.both + self.own_a + self.template_a) if side == 0 else (self.both + self.own_b + self.template_b)
        return (self.template_a if side == 0 else self.template_b) / total if total else 0.0


def own_text(a: PageRecord, b: PageRecord, template: Optional[np.ndarray] = None) -> Optional[OwnText]:
    """The exact shingle counts of what two pages say beyond ``template`` (sorted distinct uint32
    shingles; None or empty: nothing left out), from their stored shingle sets; None when either
    page has none."""
    sa, sb = decode_shingle_set(a.shingle_set), decode_shingle_set(b.shingle_set)
    if not sa.shape[0] or not sb.shape[0]:
        return None
    da, db = sa, sb
    if template is not None and template.shape[0]:
        da = np.setdiff1d(sa, template, assume_unique=True)
        db = np.setdiff1d(sb, template, assume_unique=True)
    both = int(np.intersect1d(da, db, assume_unique=True).shape[0])
    return OwnText(both, int(da.shape[0]) - both, int(db.shape[0]) - both,
                   int(sa.shape[0] - da.shape[0]), int(sb.shape[0] - db.shape[0]))


def own_sim(both: float, own_a: float, own_b: float, noise: int) -> float:
    """``both / (both + min(own_a, own_b) + max(0, max(own_a, own_b) - noise))``: shingle Jaccard
    with up to ``noise`` of the shingles of the page that has more of its own forgiven (see
    :func:`shingle_sim`); 1 when neither page has a shingle the other lacks."""
    den = both + min(own_a, own_b) + max(0.0, max(own_a, own_b) - max(0, noise))
    return min(1.0, both / den) if den > 0 else 1.0


def shingle_sim(jaccard: float, size_a: int, size_b: int, noise: int) -> float:
    """The text measure of two shingle sets of these sizes and this Jaccard similarity: Jaccard
    with up to ``noise`` of the shingles only one page has forgiven, on the page that has more of
    its own: ``|A∩B| / (|A∩B| + min(u_a, u_b) + max(0, max(u_a, u_b) - noise))``, u_x = shingles
    only in x.

    A page and another response of it differ by a bounded amount that the server adds (a banner,
    a timestamp line, a few "recommended" links) plus a few changed words: the page then lies
    almost whole inside its copy. Two different pages each have text of their own (both u large),
    or one holds the other and much more (a man page that includes another's options, an article
    and its first revision): neither is forgiven beyond ``noise``. Plain Jaccard counts the noise
    in full, which on a short page is as much as the page. ``noise`` 0 is plain Jaccard; sizes of
    0 (unknown: features files written before they were stored) give plain Jaccard too."""
    if noise <= 0 or size_a <= 0 or size_b <= 0 or jaccard >= 1.0:
        return jaccard
    both = jaccard * (size_a + size_b) / (1.0 + jaccard)
    return own_sim(both, max(0.0, size_a - both), max(0.0, size_b - both), noise)


#: Two pages with the same shingles beyond their template, at least this many, say the same
#: thing: no check (heading, item, form...) keeps them apart, as for identical text.
SAME_WORDS_MIN_SHINGLES = 50
#: ... give or take a phrase of up to three words: this many shingles on one side.
SAME_WORDS_PHRASE_SHINGLES = 5

#: A pair whose pages' shingles were at least this share template (on one of them) is judged by
#: ``DecisionParams.rule1_templated``; below it, by a threshold between rule 1's and that one
#: (:func:`templated_threshold`).
TEMPLATED_SHARE = 0.5

#: The prose MinHash counts for a pair when, on at least one of the two pages, the prose is at
#: least this share of the judged text: pages that are mostly prose (articles, man pages, their
#: noisy copies). Not for two list pages (directory listings, tables of contents, categories)
#: whose entries differ under the same long header or intro.
PROSE_MIN_SHARE = 0.5


def _prose_share(record: PageRecord) -> float:
    return record.prose_len / record.text_len if record.text_len > 0 else 0.0


def _lengths_ok(len_a: int, len_b: int, params: DecisionParams) -> bool:
    short, long_ = sorted((len_a, len_b))
    return long_ == 0 or short / long_ >= params.text_min_len_ratio


def _shingle_sim_of(hex_a: str, hex_b: str, lengths: Tuple[int, int], sizes: Tuple[int, int],
                    params: DecisionParams) -> Optional[float]:
    """:func:`shingle_sim` of two texts from their MinHashes, character lengths and shingle
    counts (0 when the lengths differ too much); None when either has no MinHash."""
    sig_a, sig_b = minhash_from_hex(hex_a), minhash_from_hex(hex_b)
    if sig_a is None or sig_b is None:
        return None
    if not _lengths_ok(lengths[0], lengths[1], params):
        return 0.0
    return shingle_sim(jaccard_estimate(sig_a, sig_b), sizes[0], sizes[1], params.text_noise_shingles)


def _hamming_sim(x: Optional[int], y: Optional[int], max_distance: int) -> float:
    """1 - d / ``max_distance`` for two 64-bit hashes at Hamming distance d (0 from ``max_distance``
    on, and when either hash is missing)."""
    if x is None or y is None:
        return 0.0
    d = hamming(x, y)
    if d >= max_distance:
        return 0.0
    return 1.0 - d / max_distance


def _paths_sim(a: PageRecord, b: PageRecord, params: DecisionParams) -> float:
    w = params.structure_count_weight
    return w * cosine(a.dom_counts, b.dom_counts) + (1.0 - w) * weighted_jaccard(a.tag_paths, b.tag_paths)


def _lcs_sim(a: PageRecord, b: PageRecord) -> float:
    return float(lcs_similarity(a.tag_seq, b.tag_seq))


def structure_sim(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> float:
    measure = params.structure_measure
    if measure == "paths":
        value = _paths_sim(a, b, params)
    elif measure == "lcs":
        value = _lcs_sim(a, b)
    else:
        value = 0.5 * (_paths_sim(a, b, params) + _lcs_sim(a, b))
    return max(0.0, min(1.0, value))


def visual_sim(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> float:
    return _hamming_sim(a.phash, b.phash, params.visual_max_distance)


def behavior_sim(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> float:
    """Cosine of (TTFB, DCL, load). Reported only, never used in the decision."""
    return cosine(a.timings, b.timings)


def informative_phash(value: Optional[int], params: DecisionParams = DEFAULT_DECISION_PARAMS) -> bool:
    """Whether a pHash comes from a screenshot with a picture in it (see ``rule2_min_phash_bits``)."""
    if value is None:
        return False
    bits = (value & MASK64).bit_count()
    return params.rule2_min_phash_bits <= bits <= 64 - params.rule2_min_phash_bits


def has_minhash(a: PageRecord, b: PageRecord) -> bool:
    """Whether :func:`text_sim` compares the two pages by MinHash (Jaccard) rather than SimHash."""
    return minhash_from_hex(a.minhash) is not None and minhash_from_hex(b.minhash) is not None


def decide(content: float, structure: float, visual: float,
           params: DecisionParams = DEFAULT_DECISION_PARAMS, allow_rule2: bool = True,
           jaccard: bool = False, text_threshold: Optional[float] = None) -> str:
    """``"rule1"``, ``"rule2"`` or ``""`` (not duplicates) for the three deciding similarities
    (``jaccard``: the text similarity is the MinHash one, judged against ``rule1_jaccard``;
    ``text_threshold``: rule 1's, when the caller knows better)."""
    if text_threshold is None:
        text_threshold = params.rule1_jaccard if jaccard else params.rule1_text
    if content >= text_threshold and (structure >= params.rule1_structure or visual >= params.rule1_visual):
        return "rule1"
    if allow_rule2 and visual >= params.rule2_visual:
        return "rule2"
    return ""


def heading_sim(a: PageRecord, b: PageRecord) -> Optional[float]:
    """Token Jaccard of the two pages' first ``<h1>`` (``signals["h1"]``), each with the host it
    was served from left out (a hosting company's default page says "Welcome to <its host>!" on
    every host); None when either has none."""
    ha, hb = (_own_heading(r) for r in (a, b))
    if not ha or not hb:
        return None
    if ha == hb:
        return 1.0
    ta, tb = set(tokens(ha)), set(tokens(hb))
    if not ta or not tb:
        return None
    return len(ta & tb) / len(ta | tb)


def _own_heading(record: PageRecord) -> str:
    """The page's first h1 without the host name (and port) of its URL, which a server echoes."""
    h1 = record.signals.get("h1", "") if isinstance(record.signals, dict) else ""
    return _without_own_host(h1, record.final_url or record.url or "", whole_words=False) if h1 else ""


def title_names_heading(a: PageRecord, b: PageRecord) -> bool:
    """Both pages carry one non-empty ``<title>`` (spacing folded) that holds at least half of the
    words of one of their h1 headings: they say the same thing about themselves, and an h1 that
    differs changed inside the page (per-request noise swapped a word of it), not what the page is
    about. Two pages about different things differ in their titles (a wiki's revision histories of
    two articles; two man pages), and a title that names no h1 (one title on every page of an
    application) is no evidence."""
    ta, tb = (" ".join((r.title or "").split()) for r in (a, b))
    if not ta or ta != tb:
        return False
    words = set(tokens(ta))
    for r in (a, b):
        h = set(tokens(r.signals.get("h1", "") if isinstance(r.signals, dict) else ""))
        if h and 2 * len(h & words) >= len(h):
            return True
    return False


_WORD_JOINERS = re.compile(r"[_\-]+")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _request_words(record: PageRecord) -> set:
    """The words of what a page's URL asks for (:func:`~scrapy_websim.core.fingerprints.url_words`)."""
    return url_words(record.final_url or record.url or "")


def _about(record: PageRecord) -> Tuple[str, set]:
    """What a page says it is about: its ``<title>`` and first ``<h1>``, as text and words
    (``simd_gt`` read as ``simd gt``, as in URLs)."""
    h1 = record.signals.get("h1", "") if isinstance(record.signals, dict) else ""
    text = _WORD_JOINERS.sub(" ", f"{record.title or ''} {h1}".lower())
    return text, set(tokens(text))


def _echoed(word: str, about: Tuple[str, set]) -> bool:
    text, words = about
    return word in words or bool(_CJK_CHAR.match(word) and word in text)


def _names_own_item(own: set, other: set, about: Tuple[str, set], other_about: Tuple[str, set]) -> bool:
    return any(_echoed(w, about) and not _echoed(w, other_about) for w in own - other)


def items_differ(a: PageRecord, b: PageRecord) -> bool:
    """One page names in its title or h1 a word of its own URL that the other page's URL, title
    and h1 lack: two pages about two items of one kind (the revision histories of two articles,
    ``std::ops::Range`` and ``RangeFrom``, ``simd_ge`` and ``simd_gt``, page 2 and page 3 of a
    listing). Their text can be all template, the item a word or two of it, and their headings
    share most words; a copy of a page (a mirror, a URL variant, a noisy response) names the same
    item, and what its URL adds (a host, a tracking value, a mirror's directory, ``curid=5`` for
    ``title=Owl``) is not in its heading, or is in both."""
    own_a, own_b = _request_words(a), _request_words(b)
    if own_a == own_b:
        return False
    about_a, about_b = _about(a), _about(b)
    if _names_own_item(own_a, own_b, about_a, about_b) or _names_own_item(own_b, own_a, about_b, about_a):
        return True
    return _text_names_own_item(a, own_a - own_b, b) and _text_names_own_item(b, own_b - own_a, a)


def _text_names_own_item(a: PageRecord, words: set, b: PageRecord) -> bool:
    """``a``'s text names one of ``words`` (of its URL, not of ``b``'s) in shingles that ``b``'s
    text never has (``signals["iu"]``, :func:`~scrapy_websim.core.fingerprints.item_shingles`):
    a page whose title and heading are the application's ("Extended Information") says what it
    is about in its text ("Hostgroup Web servers (web)"); a copy says it in the same words."""
    named = a.signals.get("iu") if isinstance(a.signals, dict) else None
    other = decode_shingle_set(b.shingle_set)
    if not named or not other.shape[0]:
        return False
    for word in words:
        values = named.get(word)
        if values and not np.isin(np.asarray(values, np.uint32), other).any():
            return True
    return False


#: A word of a title: a run of letters and digits (a run of CJK characters is one word).
_TITLE_WORD = re.compile(r"\w+")


def _own_title_words(record: PageRecord) -> set:
    """The words of a page's ``<title>`` without the host name (and port) of its URL, numbers as
    one word (``Page 2`` and ``Page 3`` share theirs), single letters left out."""
    title = _without_own_host(record.title or "", record.final_url or record.url or "")
    return {_DIGIT_RUN.sub("0", w) for w in _TITLE_WORD.findall(title.lower()) if len(w) > 1 or not w.isascii()}


def _without_own_host(text: str, url: str, whole_words: bool = True) -> str:
    """``text`` with the ``host:port`` and host name of ``url`` taken out (where they are whole
    words, or anywhere with ``whole_words`` False)."""
    try:
        parts = urlsplit(url)
        echoed = (parts.netloc.rpartition("@")[2], parts.hostname or "")
    except ValueError:
        return text
    for spelling in echoed:
        if spelling and spelling.lower() in text.lower():
            pattern = re.escape(spelling)
            if whole_words:
                pattern = r"(?<!\w)" + pattern + r"(?!\w)"
            text = re.sub(pattern, " ", text, flags=re.I)
    return text


def titles_differ(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> bool:
    """The titles name two pages: both pages have one and the two share no word, or one holds
    ``params.title_own_words`` words or more that the other lacks (0: never). A page names what it is in its
    title, and a copy of it (a mirror, a URL variant, a noisy response) keeps that title; a word
    a server's noise swaps, a number, the host's own name do not count. Two pages of one template
    whose texts are mostly alike but whose titles say different things are two pages: a commit
    (titled by its subject and the repository) and the diff of a range of commits around it
    (titled by the repository alone), which shows most of the commit's changes but not its
    message. The same rows sorted another way ("... sorted by name") say the same words and
    are never checked (:func:`_same_words`)."""
    if params.title_own_words <= 0:
        return False
    ta, tb = _own_title_words(a), _own_title_words(b)
    if not ta or not tb:
        return False
    return not ta & tb or max(len(ta - tb), len(tb - ta)) >= params.title_own_words


def _fields(record: PageRecord) -> dict:
    fields = record.signals.get("fields") if isinstance(record.signals, dict) else None
    return fields if isinstance(fields, dict) else {}


def fields_differ(a: PageRecord, b: PageRecord) -> bool:
    """A form field both pages show (``signals["fields"]``) holds a different value on each, and
    on one of them the value is what its URL asked for: ``Special:AllPages?from=N`` shows "N" in
    its "from" field where the list from the start shows nothing, a search page shows its query.
    The judged text of two such lists can share most entries; what they are about is in the
    form. A field the server fills by itself (a language chosen, today's date) is the same on a
    copy, or names no value of its URL."""
    fields_a, fields_b = _fields(a), _fields(b)
    if not fields_a or not fields_b:
        return False
    differ = [(str(fields_a[name]).lower(), str(fields_b[name]).lower()) for name in fields_a.keys() & fields_b.keys()
              if fields_a[name] != fields_b[name]]
    if not differ:
        return False
    asked_a, asked_b = (set(_query_items(r).values()) - {""} for r in (a, b))
    return any(value_a in asked_a or value_b in asked_b for value_a, value_b in differ)


_DIGIT_RUN = re.compile(r"\d+")


def _title_words(record: PageRecord) -> list:
    """The words of a page's ``<title>`` in order (``_``/``-`` joined words split, digits masked:
    a counter or a port in a title is no other item)."""
    return _heading_words(record.title or "")


def _heading_words(text: str) -> list:
    return [_DIGIT_RUN.sub("0", w) for w in tokens(_WORD_JOINERS.sub(" ", text.lower()))]


def title_items_differ(a: PageRecord, b: PageRecord) -> bool:
    """The two titles are one frame (words before and words after, both non-empty) around a
    different item on each side: ``libstdc++: std::less< _Tp > Struct Template Reference`` and
    ``... std::greater< _Tp > ...``, ``libstdc++: exception.h File Reference`` and ``...
    indirect_array.h ...``. A generator that names its pages by number (Doxygen's
    ``a08294.html``) gives :func:`items_differ` nothing to read in the URL, and sibling pages
    share their whole text but the item's name (text 0.75-0.96). The item may also be the
    other's with a word more (``std::hash< unsigned long >`` and ``< unsigned long long >``,
    ``iterator.hpp`` and ``const_iterator.hpp``). A copy of a page has its title, or one with
    words added at its start or end (a site name, "(mirror)"): an item at the very start or end
    of a title is not read here, since a mirror may rename the site in that place; a number is
    no item (a counter, a port); and two pages with one h1 say the same of themselves (a title
    changed by the server is not another item), unless the h1 is what the titles end with (an
    application heading every page with its project's name: Redmine's revisions)."""
    ta, tb = _title_words(a), _title_words(b)
    if not ta or not tb or ta == tb:
        return False
    prefix, suffix = _frame(ta, tb)
    if not prefix or not suffix:
        return False
    own_a = set(ta[prefix:len(ta) - suffix]) - {"0"}
    own_b = set(tb[prefix:len(tb) - suffix]) - {"0"}
    if own_a == own_b:
        return False
    ha, hb = _h1(a), _h1(b)
    return not (ha and ha == hb)  # one h1: the page says the same of itself, the titles differ by something else


def _h1(record: PageRecord) -> str:
    """The page's first h1 as its signals keep it, white space collapsed."""
    return " ".join((record.signals.get("h1", "") if isinstance(record.signals, dict) else "").split())


def _frame(ta: list, tb: list) -> Tuple[int, int]:
    """``(words both start with, words both end with)`` of two word lists, not overlapping."""
    n = min(len(ta), len(tb))
    prefix = 0
    while prefix < n and ta[prefix] == tb[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and ta[-1 - suffix] == tb[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def _query_items(record: PageRecord) -> dict:
    """``{name: value}`` of the query parameters of the page's URL as normalisation keeps them
    (trackers dropped), values lower-cased; a parameter given twice is left out. ``;`` separates
    parameters as ``&`` does (gitweb's ``?p=repo.git;a=shortlog;pg=0``)."""
    url = record.normalized_url or record.final_url or record.url or ""
    try:
        query = urlsplit(url).query
    except ValueError:
        return {}
    seen: dict = {}
    for name, value in _query_pairs(query):
        seen[name] = None if name in seen else " ".join(value.split()).lower()
    return {k: v for k, v in seen.items() if v is not None}


def _query_pairs(query: str) -> List[Tuple[str, str]]:
    """The query's (name, value) pairs, split at ``&`` and at ``;`` (normalisation writes a
    ``;`` as ``%3B``, inside one value)."""
    pairs = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if ";" in value and "=" in value:
            pairs += parse_qsl(f"{name}={value}".replace(";", "&"), keep_blank_values=True)
        else:
            pairs.append((name, value))
    return pairs


def prose_lengths_differ(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> bool:
    """True when both pages are mostly prose, the shorter has at least ``prose_len_min_chars`` of
    it and the shorter / longer prose length is below ``prose_min_len_ratio`` (the veto of
    :func:`compare`; see :class:`DecisionParams`)."""
    if params.prose_min_len_ratio <= 0 or min(_prose_share(a), _prose_share(b)) < PROSE_MIN_SHARE:
        return False
    short, long_ = sorted((a.prose_len, b.prose_len))
    return short >= params.prose_len_min_chars and short < params.prose_min_len_ratio * long_


@dataclass
class PairDecision:
    """Every figure and check behind the decision on one pair (:func:`judge`): what ``websim
    explain`` prints. ``result`` is what :func:`compare` returns."""

    result: PairResult
    text_measure: str  # "identical" (equal text_hash), "minhash" or "simhash"
    text_threshold: float  # rule 1's text threshold for that measure
    rule1: bool  # rule 1's condition on the three similarities
    rule2_allowed: bool
    rule2_blocked: str  # why rule 2 cannot fire: "" | "screenshot" (uninformative pHash) | "text" (< rule 2's floor)
    rule2: bool  # rule 2's condition (only when allowed)
    heading: Optional[float] = None  # h1 word Jaccard (None: a page has no h1); only when a check ran
    title_names_heading: bool = False
    heading_veto: bool = False  # the heading check keeps the pair apart
    prose_lengths: Tuple[int, int] = (0, 0)
    prose_veto: bool = False  # the prose length check keeps the pair apart
    more_veto: bool = False  # one page says much more than the other (:func:`says_much_more`)
    items_veto: bool = False  # the item check (:func:`items_differ`) keeps the pair apart
    title_items_veto: bool = False  # the titles name two items in one frame (:func:`title_items_differ`)
    fields_veto: bool = False  # a form field shows what each page was asked for (:func:`fields_differ`)
    titles_veto: bool = False  # the titles share no word (:func:`titles_differ`)
    same_words: bool = False  # the same shingles beyond the template on both (checks not applied)
    checked: bool = False  # the vetoes were looked at (a rule fired, or judge(full=True))
    own: Optional[OwnText] = None  # the exact shingle counts beyond the template (None: compared by MinHash)


def templated_threshold(threshold: float, share: float, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> float:
    """The text similarity a pair needs beyond its template when ``share`` of a page's shingles
    were template: the more of the text was the site's, the more what is left is the item itself,
    and two items of one template differ there by a few words (a patch number, a name), a copy
    by nothing. From ``threshold`` with no template up to ``rule1_templated`` at
    :data:`TEMPLATED_SHARE` and above."""
    if share <= 0 or params.rule1_templated <= threshold:
        return threshold
    return threshold + (params.rule1_templated - threshold) * min(1.0, share / TEMPLATED_SHARE)


def says_much_more(a: PageRecord, b: PageRecord, own: Optional[OwnText],
                   params: DecisionParams = DEFAULT_DECISION_PARAMS) -> bool:
    """One page says more than ``params.max_more_shingles`` shingles beyond the noise allowance
    that the other lacks, counted exactly beyond the template (``own``; pages too long to keep
    their shingles are not checked: a MinHash estimate of a long page is off by hundreds): it
    holds the other and much more, another page (a log and its short form)."""
    if params.max_more_shingles <= 0 or own is None:
        return False
    return max(own.own_a, own.own_b) - params.text_noise_shingles > params.max_more_shingles


def _same_words(a: PageRecord, b: PageRecord, own: Optional[OwnText]) -> bool:
    """Whether two pages say the same words (at least :data:`SAME_WORDS_MIN_SHINGLES` shingles),
    one of them give or take a phrase ("sorted by name"): a phrase of up to three words put into
    one page makes :data:`SAME_WORDS_PHRASE_SHINGLES` shingles of its own there and at most two on
    the other page (the word pairs around it). Two items of one template differ by a word in place
    of another (a name, a number: three shingles on each side) or more. For pages too long to
    keep their shingles (``SHINGLE_SET_MAX``), every MinHash bin equal and the shingle counts
    within a thousandth."""
    if own is not None:
        return (min(own.own_a, own.own_b) <= 2 and max(own.own_a, own.own_b) <= SAME_WORDS_PHRASE_SHINGLES
                and own.both >= SAME_WORDS_MIN_SHINGLES)
    if a.shingle_set or b.shingle_set or min(a.shingles, b.shingles) < SHINGLE_SET_MAX:
        return False
    sig_a, sig_b = minhash_from_hex(a.minhash), minhash_from_hex(b.minhash)
    return (sig_a is not None and sig_b is not None and jaccard_estimate(sig_a, sig_b) == 1.0
            and abs(a.shingles - b.shingles) <= max(a.shingles, b.shingles) // 1000)


def judge(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS,
          full: bool = False, template: Optional[np.ndarray] = None) -> PairDecision:
    """The duplicate decision on a pair, with every figure that decided it. :func:`compare` is
    this function's ``result``; ``full`` also works out the checks (heading, prose length) when no
    rule fired, for an explanation of why a pair did not merge (they change nothing then)."""
    content, own = _text_measure(a, b, params, template)
    structure = structure_sim(a, b, params)
    visual = visual_sim(a, b, params)
    jaccard = has_minhash(a, b)
    identical = same_text(a, b)
    text_threshold, rule2_floor = _text_thresholds(params, jaccard, own)
    allow_rule2, blocked = _rule2_gate(a, b, params, jaccard, content, rule2_floor)
    rule = decide(content, structure, visual, params, allow_rule2, jaccard, text_threshold)
    decision = PairDecision(
        result=PairResult(),
        text_measure="identical" if identical else ("minhash" if jaccard else "simhash"),
        text_threshold=text_threshold,
        rule1=rule == "rule1",
        rule2_allowed=allow_rule2,
        rule2_blocked=blocked,
        rule2=allow_rule2 and visual >= params.rule2_visual,
        own=own,
    )
    # the checks below are for pages that say different things; never for identical judged
    # text, or for pages that say the same words give or take a phrase (a table "sorted by
    # name" in the order it had, a page's printable view): :func:`_same_words`
    same_words = decision.same_words = _same_words(a, b, own)
    if identical:
        # one judged text: one page, whatever its chrome, unless the titles name two items
        rule = "" if _names_two_items(decision, a, b) else (rule or "exact")
    elif (rule or full) and not same_words and _vetoed(decision, a, b, params, own, full):
        rule = ""
    decision.result = PairResult(
        content_sim=round(content, 6),
        structure_sim=round(structure, 6),
        visual_sim=round(visual, 6),
        behavior_sim=round(behavior_sim(a, b, params), 6),
        is_duplicate=bool(rule),
        rule=rule,
    )
    if own is not None:
        decision.result.template_share = round(max(own.template_share(0), own.template_share(1)), 4)
        decision.result.shared, decision.result.own_a, decision.result.own_b = own.both, own.own_a, own.own_b
    return decision


def _text_thresholds(params: DecisionParams, jaccard: bool, own: Optional[OwnText]) -> Tuple[float, float]:
    """``(rule 1's text threshold, rule 2's text floor)``, raised for a pair of templated pages."""
    text_threshold = params.rule1_jaccard if jaccard else params.rule1_text
    rule2_floor = params.rule2_min_jaccard
    if own is not None:
        templated = templated_threshold(text_threshold, max(own.template_share(0), own.template_share(1)), params)
        text_threshold, rule2_floor = max(text_threshold, templated), max(rule2_floor, templated)
    return text_threshold, rule2_floor


def _rule2_gate(a: PageRecord, b: PageRecord, params: DecisionParams, jaccard: bool, content: float,
                rule2_floor: float) -> Tuple[bool, str]:
    """Whether rule 2 may join the pair, and if not why: ``"screenshot"`` (one is missing or
    near-uniform) or ``"text"`` (below rule 2's text floor)."""
    if not (informative_phash(a.phash, params) and informative_phash(b.phash, params)):
        return False, "screenshot"
    if jaccard and content < rule2_floor:
        return False, "text"
    return True, ""


def _names_two_items(decision: PairDecision, a: PageRecord, b: PageRecord) -> bool:
    """Two pages with one judged text that call themselves two items of one kind: the item
    check, the titles' frame or a form field (an application's table "Operations" pages, whose
    text is all template and whose title and form name the table; two repositories' file trees
    of the same files). A copy calls itself what its page does."""
    decision.checked = True
    decision.items_veto = items_differ(a, b)
    decision.title_items_veto = not decision.items_veto and title_items_differ(a, b)
    decision.fields_veto = not (decision.items_veto or decision.title_items_veto) and fields_differ(a, b)
    return decision.items_veto or decision.title_items_veto or decision.fields_veto


def _vetoed(decision: PairDecision, a: PageRecord, b: PageRecord, params: DecisionParams, own: Optional[OwnText],
            full: bool) -> bool:
    """Work out the checks on ``decision`` (each only while no earlier one kept the pair apart,
    all of them with ``full``); whether one keeps the pair apart."""
    decision.checked = True
    if params.heading_min_jaccard > 0:
        heading = decision.heading = heading_sim(a, b)
        if heading is not None and heading < params.heading_min_jaccard:
            decision.title_names_heading = title_names_heading(a, b)
            decision.heading_veto = not decision.title_names_heading
    decision.prose_lengths = (a.prose_len, b.prose_len)
    vetoed = decision.heading_veto
    for flag, differ in (("prose_veto", lambda: prose_lengths_differ(a, b, params)),
                         ("more_veto", lambda: says_much_more(a, b, own, params)),
                         ("items_veto", lambda: items_differ(a, b)),
                         ("title_items_veto", lambda: title_items_differ(a, b)),
                         ("fields_veto", lambda: fields_differ(a, b)),
                         ("titles_veto", lambda: titles_differ(a, b, params))):
        if not vetoed or full:
            setattr(decision, flag, differ())
            vetoed = vetoed or getattr(decision, flag)
    return vetoed


def compare(a: PageRecord, b: PageRecord, params: DecisionParams = DEFAULT_DECISION_PARAMS,
            template: Optional[np.ndarray] = None) -> PairResult:
    """The four similarities of a pair and the decision (:func:`judge` without its figures)."""
    return judge(a, b, params, template=template).result
