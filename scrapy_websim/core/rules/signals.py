"""What the special-page rules read of a page, and the template fingerprint.

Two steps, so the HTML is read once and never kept (this module is step 1; step 2 is
:mod:`scrapy_websim.core.rules.label`):

1. :func:`page_signals` (per rendered page, in the pipeline) reads the parsed lxml document and
   keeps a few hundred bytes of what a *person* sees: the visible text (scripts, styles,
   ``template``/``noscript``, hidden elements and attributes are never read; visible button labels
   are), keyword hits per rule split by where they occur (title, headings, body), password inputs
   and the share of the page that forms take, all of the page's *own* content: page chrome
   (``nav``, ``aside``, a site header/footer outside ``main``/``article``, navigation roles,
   sidebar/menu/navbar-style class or id, see :func:`scrapy_websim.core.page.visible._region`) and what
   the page echoes of its own URL are not read for keywords. :func:`template_fingerprint` hashes the
   normalised visible text and the tag skeleton into 64 bits, with per-host and per-request tokens
   (host names, "at HOST port N", numbers, ids, hex, timestamps, echoed paths/URLs/titles, attribute
   values such as CSRF tokens) taken out first.
2. :func:`~scrapy_websim.core.rules.label.special_label` (at close, on the compact
   :class:`~scrapy_websim.core.types.PageRecord`) decides the label.

Keywords are matched case-insensitively; ASCII keywords on word boundaries (``error`` does not
hit ``terrorism``, ``log in`` does not hit ``logging``, nor ``error-prone``), CJK keywords as
substrings; a keyword inside (or overlapping) a longer keyword that hit is not counted twice. A
title or heading says what the page is only where its keywords are a quarter of its part (split
at `` - ``, `` | ``, ``: ``): "Page not found - Site", not an item named "Fix error message for
...". A number the URL carries ("Message 404" at ``/msg404``) is no keyword. The keyword lists, the
rule codes and :class:`RuleParams` are declared in :mod:`scrapy_websim.core.params.rules`.

Pure: no Scrapy import; never mutates the document.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple
from urllib.parse import parse_qsl, unquote, urlsplit

from ..page.visible import _WS, _Walk, _walk  # the page walk the rules read
from ..params.rules import RuleParams

__all__ = [
    "page_signals",
    "rule_features",
    "rule_features_and_text",
    "template_fingerprint",
    "mask_tokens",
]

#: The rules whose keyword hits page_signals records.
KEYWORD_RULES = ("E3", "L1", "W1", "M1")
#: Typographic apostrophes, read as ``'`` ("couldn’t find" is the keyword "couldn't find").
_APOSTROPHES = re.compile("[\u2018\u2019\u02bc\uff07]")


@lru_cache(maxsize=64)
def _prepared(keywords: Tuple[str, ...]) -> Tuple[Tuple[str, bool, bool, FrozenSet[str]], ...]:
    """(keyword, needs word boundary before, after, its non-ASCII characters); lower-cased,
    whitespace collapsed."""
    out = []
    for word in sorted({_WS.sub(" ", k.strip().lower()) for k in keywords if k.strip()}):
        ascii_word = word.isascii()
        out.append((word, ascii_word and _is_word(word[0]), ascii_word and _is_word(word[-1]),
                    frozenset(_NON_ASCII.findall(word))))
    return tuple(out)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _wide_chars(text: str) -> FrozenSet[str]:
    """The non-ASCII characters of ``text``: a keyword with another one is not in it (one
    look at the text instead of one search per CJK or accented keyword)."""
    return frozenset() if text.isascii() else frozenset(_NON_ASCII.findall(text))


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _hits(keywords: Tuple[str, ...], text: str, wide: Optional[FrozenSet[str]] = None) -> int:
    """Number of different keywords found in ``text`` (already lower-cased and collapsed).

    ASCII keywords need word boundaries, CJK keywords match as substrings. A keyword inside a
    longer keyword that also hit is not counted again ("not found" in "page not found"), nor one
    whose first match overlaps a longer one's ("システムメンテナンス中" is one phrase, not two).
    ``wide``: :func:`_wide_chars` of ``text`` when the caller has it.
    """
    return len(_hit_spans(keywords, text, wide))


def _hit_spans(keywords: Tuple[str, ...], text: str, wide: Optional[FrozenSet[str]] = None, every: bool = False
               ) -> List[Tuple[str, int, int]]:
    """The keywords :func:`_hits` counts, each with where it first stands: ``(keyword, start, end)``;
    with ``every``, also those inside or overlapping a longer one."""
    if not text:
        return []
    if wide is None:
        wide = _wide_chars(text)
    found: List[Tuple[str, int, int]] = []
    for word, before, after, chars in _prepared(keywords):
        if chars <= wide:  # the text has the keyword's non-ASCII characters (if any)
            start = _first_hit(text, word, before, after)
            if start >= 0:
                found.append((word, start, start + len(word)))
    if every:
        return found
    kept: List[Tuple[str, int, int]] = []
    for word, start, end in sorted(found, key=lambda f: -len(f[0])):
        if not any(word in k or (start < k_end and k_start < end) for k, k_start, k_end in kept):
            kept.append((word, start, end))
    return kept


#: Where a title splits into parts: a site's name, a section, an item's number ("Issue 105: ...").
_TITLE_PARTS = re.compile(r"\s+[-|–—·•:]+\s+|:\s+|\s*[|·•]\s*")
#: A keyword says what the page is when it is at least this share of its title part.
_TITLE_KEYWORD_SHARE = 0.25


def _title_hits(keywords: Tuple[str, ...], title: str, wide: FrozenSet[str]) -> int:
    """Different keywords in a title (or in the headings, joined by `` | ``) that say what the
    page is: a part of the title (split at :data:`_TITLE_PARTS`) counts when its keywords are a
    quarter of its characters or more ("Page not found", "No such file", "Oops! That page can't be
    found."). A keyword inside an item's name ("Fix error message for 'python3 -m venv dir', when
    python3-venv is not installed") is what the item is about, not what the page is."""
    found = _hit_spans(keywords, title, wide, every=True) if title else []
    if not found:
        return 0
    keywords = tuple(sorted({w for w, _s, _e in found}))  # each part is searched for these only
    hits: Set[str] = set()
    for part in _TITLE_PARTS.split(title):
        spans = _hit_spans(keywords, part, wide)
        if spans:
            size = len(part) - part.count(" ")
            covered = sum(end - start - part.count(" ", start, end) for _w, start, end in spans)
            if covered >= _TITLE_KEYWORD_SHARE * size:
                hits.update(w for w, _s, _e in spans)
    return len(hits)


def _first_hit(text: str, word: str, before: bool, after: bool) -> int:
    """Where ``word`` first stands in ``text`` with a word boundary before / after it as asked;
    -1 if nowhere. A hyphen between two letters or digits joins one word: "error-prone",
    "spelling-error-in-description" and "soft-404" name something, they do not say "error"."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (not before or start == 0 or not _is_word(text[start - 1]) and not _compound(text, start - 1, -1)) and (
            not after or end == len(text) or not _is_word(text[end]) and not _compound(text, end, 1)
        ):
            return start
        start = text.find(word, start + 1)
    return -1


def _compound(text: str, at: int, step: int) -> bool:
    """``text[at]`` is a hyphen that joins the keyword to a word on its other side."""
    beyond = at + step
    return text[at] == "-" and 0 <= beyond < len(text) and _is_word(text[beyond])


def page_signals(doc, title: str, params: RuleParams = RuleParams(), url: str = "") -> Dict[str, Any]:
    """Compact rule signals of one rendered page (see module docstring). Does not mutate ``doc``.

    Keys: ``vis`` visible text length; ``head`` first characters of the visible text; ``h``
    first characters of the h1-h3 text; ``kw`` {rule: [title hits, heading hits, body hits]} for
    the rules with any hit (hits = number of different keywords); ``pw`` password inputs;
    ``inputs`` visible form controls; ``forms`` form elements; ``fs`` share of the visible page
    (text + 20 chars per control) inside forms, 0..1; ``mv`` visible text length outside page
    chrome; ``pwc`` password inputs in page chrome (only when there are, and the page has content
    of its own). Keyword hits skip what the page echoes of its own ``url`` (a wiki's 404 titled
    "Maintenance window" for ``/wiki/Maintenance_window`` is not a maintenance page).
    :func:`~scrapy_websim.core.features.compute_features` adds ``h1``, the page's first h1 (for
    the duplicate decision's heading check, not for the rules).
    """
    return _signals(_walk(doc), title, params, url)


def _signals(walk: _Walk, title: str, params: RuleParams, url: str = "",
             memo: Optional[Dict[str, Optional[str]]] = None) -> Dict[str, Any]:
    # Keyword hits, controls and headings count in the page's own content, not its chrome
    # (navigation, site header/footer, sidebars); a page that is all chrome is read whole.
    main = 0 if walk.main_parts or not walk.parts else None
    pick = (lambda pair: pair[0]) if main == 0 else sum
    text = " ".join(_drop_echoes(walk.main_parts if main == 0 else walk.parts, url, memo))
    head_list = walk.headings[0] if main == 0 else walk.headings[0] + walk.headings[1]
    headings = " | ".join(h for h in _drop_echoes(head_list, url, memo) if h)
    title = _drop_title_echo(_WS.sub(" ", title or "").strip(), url)
    kw = _keyword_hits((title, headings, text), params, url)
    n = params.signal_text_chars
    total = pick(walk.total_weight)
    share = pick(walk.form_weight) / total if total else 0.0
    out = {
        "vis": sum(len(p) + 1 for p in walk.parts) - 1 if walk.parts else 0,
        "mv": len(text),
        "head": text[:n],
        "h": headings[:n],
        "kw": kw,
        "pw": pick(walk.password_inputs),
        "inputs": pick(walk.inputs),
        "forms": pick(walk.forms),
        "fs": round(share, 3),
    }
    if main == 0 and walk.password_inputs[1]:
        out["pwc"] = walk.password_inputs[1]  # the site's login form in its chrome (a sidebar, a header)
    return out


#: An exception's name ending in "Error" (``OperationalError``, ``TypeError``): where a page's text
#: shows one, a program reported an error; a page whose title or heading names it is about it.
_EXCEPTION_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*[a-z])(Error)\b")


def _split_exception_names(text: str, named: str) -> str:
    """``text`` with each exception name that ``named`` (the title and headings) does not hold
    read as two words ("Operational Error")."""
    return _EXCEPTION_NAME.sub(lambda m: m.group(0) if m.group(0) in named else f"{m.group(1)} {m.group(2)}", text)


def _keyword_hits(parts: Tuple[str, str, str], params: RuleParams, url: str) -> Dict[str, List[int]]:
    """Each keyword rule's hits in the title, the headings and the text (the rules with any); the
    numbers of the page's URL are no keywords; in the text, an exception's name says its last word
    ("OperationalError: no such column" says "error") unless the title or a heading names it."""
    if "Error" in parts[2]:
        parts = (parts[0], parts[1], _split_exception_names(parts[2], f"{parts[0]} {parts[1]}"))
    low = tuple(_APOSTROPHES.sub("'", part.lower()) for part in parts)
    keywords = {rule: tuple(params.keywords(rule)) for rule in KEYWORD_RULES}
    numbers = _url_numbers(url, _keyword_numbers(tuple(keywords.values()))) if url else None
    if numbers is not None:
        low = tuple(numbers.sub(" ", part) for part in low)
    wide = tuple(map(_wide_chars, low))
    kw: Dict[str, List[int]] = {}
    for rule in KEYWORD_RULES:
        words = keywords[rule]
        counts = [_title_hits(words, low[0], wide[0]), _title_hits(words, low[1], wide[1]),
                  _hits(words, low[2], wide[2])]
        if any(counts):
            kw[rule] = counts
    return kw


# ---------------------------------------------------------------------------------------------
# Template fingerprint

# A path/URL token is a whole run of printable ASCII with a "/", "\\", "@" or ".html"-like part in
# it; a digit token a whole run of [\w.:+-] with a digit in it. Matches can only start where a run
# starts (the lookbehind), so the engine does not retry inside runs that do not match (which made
# these two patterns quadratic in the run length). Same matches as without the lookbehind.
_URL_TOKEN = re.compile(r"(?<![!-~])[!-~]*?(?:[/\\@]|\.(?:html?|php|aspx?|jsp)\b)[!-~]*", re.I)
_DIGIT_TOKEN = re.compile(r"(?<![\w.:+-])[\w.:+-]*?\d[\w.:+-]*", re.ASCII)
_RANDOM_TOKEN = re.compile(
    r"\b(?:[A-Za-z_-]{25,}|(?=[A-Za-z_-]*[a-z])(?=[A-Za-z_-]*[A-Z][a-z]*[A-Z])[A-Za-z_-]{10,})\b",
    re.ASCII,
)
#: Host names (``www.example.org``, ``localhost``) and a server signature's "at HOST port N".
_HOST_TOKEN = re.compile(
    r"(?<![\w.-])(?:(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24}|localhost)(?![\w-])", re.I | re.ASCII)
_SERVER_AT = re.compile(r"\b(at|on) \S+ port \S+", re.I)


def mask_tokens(text: str, masked: Optional[Dict[str, str]] = None) -> str:
    """Per-request and per-host tokens become placeholders: a server signature's "at HOST port
    N", paths/URLs/emails, host names, anything with a digit (ids, hex, dates, times, counters,
    IP addresses, ports), long or camel-random letter runs. CJK text is kept as is; white space
    is collapsed and the text lower-cased. ``masked``: a dict of words already masked, which
    this call adds to (for several texts of one page)."""
    if " port " in text.lower():
        text = _SERVER_AT.sub(r"\1 host port 0", text)
    # The other patterns match inside a word (white space is no part of any, and their
    # lookarounds see it as they see the ends of the text): mask each distinct word once.
    words = text.split()
    if masked is None:
        masked = {}
    for word in set(words).difference(masked):
        masked[word] = _mask_word(word)
    return " ".join(map(masked.__getitem__, words)).lower()


#: Characters without one of which a word shorter than 9 characters matches no token pattern
#: (``localhost`` is 9 letters, a random run 10).
_TOKEN_CHARS = frozenset("./\\@0123456789")


def _mask_word(word: str) -> str:
    """:func:`mask_tokens` of one word (no white space), before lower-casing."""
    if len(word) < 9 and _TOKEN_CHARS.isdisjoint(word):
        return word
    word = _URL_TOKEN.sub("/", word)
    word = _HOST_TOKEN.sub("host", word)
    word = _DIGIT_TOKEN.sub("0", word)
    return _RANDOM_TOKEN.sub("0", word) if len(word) >= 10 else word


def _echoes(url: str) -> Tuple[str, ...]:
    """What a page may echo of its own URL besides the path: the last path segment and the
    query values, decoded, with ``_``/``+``/``-`` also read as spaces (a wiki's "no page
    titled Foo Bar" for ``/wiki/Foo_Bar``), lower-cased, longest first."""
    if not url:
        return ()
    parts = urlsplit(url)
    raw = [unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])]
    raw += [v for _k, v in parse_qsl(parts.query)]
    out = {variant.lower() for variant in _spellings(raw) if len(variant) >= 3}
    return tuple(sorted(out, key=lambda v: (-len(v), v)))


def _spellings(values: Iterable[str]) -> Iterator[str]:
    """Each URL piece as a page may print it: as it is and without its file extension, each also
    with ``_``/``+`` and then ``-`` read as spaces, white space folded (case kept)."""
    for value in values:
        value = value.strip()
        stem = value.rsplit(".", 1)[0] if "." in value[1:] else value
        for v in (value, stem):
            for variant in (v, re.sub(r"[_+]", " ", v), re.sub(r"[-_+]", " ", v)):
                yield _WS.sub(" ", variant).strip()


_QUOTES = "\"'“”‘’«»「」『』"
_TITLE_SEPARATORS = re.compile(r"\s+[-|–—:·•]+\s+")


@lru_cache(maxsize=64)
def _echo_matcher(url: str) -> Tuple[frozenset, Optional["re.Pattern[str]"]]:
    """(the echoes, a pattern of an echo in quotes)."""
    echoes = _echoes(url)
    if not echoes:
        return frozenset(), None
    alternatives = "|".join(re.escape(e) for e in echoes)
    quoted = re.compile(rf"[{_QUOTES}]\s*(?:{alternatives})\s*[{_QUOTES}]", re.I)
    return frozenset(echoes), quoted


def _is_echo(piece: str, echoes: frozenset) -> bool:
    return _WS.sub(" ", piece.strip(_QUOTES + " .,:;!?()[]")).lower() in echoes


def _drop_echoes(pieces: List[str], url: str, memo: Optional[Dict[str, Optional[str]]] = None) -> List[str]:
    """Text pieces without what the page echoes of its own URL: a piece (an element's text, a
    heading) that *is* the echo, or the echo in quotes inside a piece. Words that only happen to
    equal a URL segment inside longer text ("your account" on ``/account``) stay. ``memo``: a
    dict of pieces already seen (piece -> what is kept of it, None for an echo), which this call
    adds to (the rules read the same pieces several times)."""
    echoes, quoted = _echo_matcher(url) if url else (frozenset(), None)
    if not echoes or quoted is None:
        return pieces
    if memo is None:
        memo = {}
    for piece in set(pieces).difference(memo):
        memo[piece] = None if _is_echo(piece, echoes) else quoted.sub('""', piece)
    return [kept for kept in map(memo.__getitem__, pieces) if kept is not None]


@lru_cache(maxsize=16)
def _keyword_numbers(lists: Tuple[Tuple[str, ...], ...]) -> FrozenSet[str]:
    """The numbers the keyword lists hold ("404")."""
    return frozenset(n for words in lists for k in words for n in re.findall(r"\d+", k))


@lru_cache(maxsize=64)
def _url_numbers(url: str, keyword_numbers: FrozenSet[str]) -> Optional["re.Pattern[str]"]:
    """A pattern of the numbers a URL's path, query and fragment carry that a keyword holds,
    standing alone: the ids of what was asked for ("Message 404" for ``/msg404``, a row's
    heading "changes: 404" for ``/changes/404``), not a status the page reports. The host and
    port are not read."""
    if not keyword_numbers:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    numbers = keyword_numbers.intersection(re.findall(r"\d+", unquote(f"{parts.path}?{parts.query}#{parts.fragment}")))
    if not numbers:
        return None
    return re.compile(r"(?<![\w.])(?:" + "|".join(sorted(numbers, key=len, reverse=True)) + r")(?![\w])")


def _drop_title_echo(title: str, url: str) -> str:
    """The title without a part (split at `` - ``, `` | ``...) that is the echo."""
    echoes, _quoted = _echo_matcher(url) if url else (frozenset(), None)
    if not echoes or not title:
        return title
    return " - ".join(p for p in _TITLE_SEPARATORS.split(title) if not _is_echo(p, echoes))


def template_fingerprint(doc, url: str = "") -> int:
    """64-bit hash of normalised visible text and tag skeleton (body only, attributes ignored).

    The same error/login/challenge template with a different request id, timestamp, CSRF token,
    host name, port or echoed path/title gives the same value; different templates give
    different values (BLAKE2b, full 64 bits, stable across runs and platforms). ``url`` (the
    page's final URL) lets an echo of its last path segment or query values be taken out.
    """
    return _fingerprint(_walk(doc, skeleton=True), url)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@lru_cache(maxsize=64)
def _echo_words(url: str) -> Optional["re.Pattern[str]"]:
    """A pattern of the names a template may print of its request inside its sentences ("Return
    to Main Page.", "Owl (bird) does not exist"): a page title or item the URL carries in the
    decoded path, a path segment, the part of a segment after a namespace colon (``Talk:Owl``),
    a query value (``returnto=Main_Page``) or the fragment, each also with ``_+-`` read as
    spaces. A name is one of several words or capitalised in the URL (``/wiki/Owl``); a single
    lower-case word (``/account``, ``/error``) is a path of the application, the same words a
    template says ("Sign in to your account"), so it is taken out only as a whole piece or in
    quotes (:func:`_drop_echoes`). Space-separated scripts match whole words of 3 characters or
    more; CJK, which has no spaces, matches as a substring (a lone character: standing alone)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    found = {variant.lower() for variant in _spellings(_url_pieces(parts))
             if _CJK.search(variant) or " " in variant or variant != variant.lower()}
    alternatives = [alt for alt in map(_echo_alternative, sorted(found, key=lambda e: (-len(e), e))) if alt]
    return re.compile("|".join(alternatives)) if alternatives else None


def _url_pieces(parts: Any) -> List[str]:
    """What a URL may carry a name in: the decoded path, whole and by segment (and after a
    namespace colon), the query values and the fragment."""
    path = unquote(parts.path)
    raw = [path, path.strip("/")] + [seg for seg in path.split("/") if seg]
    raw += [seg.rsplit(":", 1)[1] for seg in raw[2:] if ":" in seg]
    return raw + [v for _k, v in parse_qsl(parts.query)] + [unquote(parts.fragment)]


def _echo_alternative(echo: str) -> str:
    """The pattern of one echoed name ("" for one too short to take out)."""
    if _CJK.search(echo) and len(echo) >= 2:
        return re.escape(echo)
    if len(echo) >= 3 and any(ch.isalnum() for ch in echo) or _CJK.search(echo):
        return rf"(?<!\w){re.escape(echo)}(?!\w)"
    return ""


def _strip_echo_words(text: str, url: str) -> str:
    pattern = _echo_words(url)
    return pattern.sub(" ", text) if pattern is not None else text


def _template_text(walk: _Walk, url: str = "", own: bool = False, memo: Optional[Dict[str, Optional[str]]] = None,
                   masked: Optional[Dict[str, str]] = None) -> str:
    """The visible text a template fingerprint hashes: echoes of the request taken out, then
    per-request and per-host tokens masked (:func:`mask_tokens`). With ``own``, what similar
    templates are compared by: only the page's own text (outside page chrome) when it has any,
    and the words of the request it echoes taken out (:func:`_request_words`): an echo left in
    would split one template in two. ``memo``, ``masked``: as :func:`_drop_echoes` and
    :func:`mask_tokens` take them."""
    parts = walk.main_parts if own and walk.main_parts else walk.parts
    text = _strip_echo_words(" ".join(_drop_echoes(parts, url, memo)).lower(), url)
    if own:
        text = _strip_request_words(text, url)
    return mask_tokens(text, masked)


def _url_words(text: str) -> Set[str]:
    return {w for w in re.findall(r"[^\W_]+", unquote(text).lower()) if len(w) >= 3 or any(c.isdigit() for c in w)}


def _word_pattern(words: Set[str], prefix: str = "") -> Optional["re.Pattern[str]"]:
    if not words:
        return None
    return re.compile(prefix + r"(?<![^\W_])(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
                      + r")(?![^\W_])")


@lru_cache(maxsize=64)
def _request_words(url: str) -> Tuple[Optional["re.Pattern[str]"], Optional["re.Pattern[str]"]]:
    """Patterns of the words (3 characters or more, or with a digit) of a URL's path segments,
    taken out wherever they stand (a breadcrumb, a tab, "path not found" under
    ``/tree/debian/control``), and of its query values and fragment, taken out only where a
    message quotes them: after ": " or an opening quote ("invalid branch: upstream" for
    ``?h=upstream``). A query value elsewhere is likely the template's own word ("Login" on
    ``?_task=login``), and on a page of a few words one word decides."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None, None
    path = _url_words(parts.path)
    query = _url_words(f"{' '.join(v for _k, v in parse_qsl(parts.query))} {parts.fragment}") - path
    return _word_pattern(path), _word_pattern(query, r"(?:(?<=: )|(?<=[\"'\u201c\u2018\u00ab]))")


def _strip_request_words(text: str, url: str) -> str:
    for pattern in (_request_words(url) if url else ()):
        if pattern is not None:
            text = pattern.sub(" ", text)
    return text


def _fingerprint(walk: _Walk, url: str = "", text: Optional[str] = None) -> int:
    h = hashlib.blake2b(digest_size=8, person=b"websim-tpl")
    h.update(" ".join(walk.skeleton or ()).encode())
    h.update(b"\x00")
    h.update((_template_text(walk, url) if text is None else text).encode("utf-8", "surrogatepass"))
    return int.from_bytes(h.digest(), "big")


def rule_features(doc, title: str, params: RuleParams = RuleParams(), url: str = ""
                  ) -> Tuple[Dict[str, Any], int]:
    """``(page_signals(doc, title, params, url), template_fingerprint(doc, url))`` from one walk of
    ``doc``: what the pipeline calls per page (about half the cost of calling the two)."""
    walk = _walk(doc, skeleton=True)
    return _signals(walk, title, params, url), _fingerprint(walk, url)


def rule_features_and_text(doc, title: str, params: RuleParams = RuleParams(), url: str = "",
                           masked: Optional[Dict[str, str]] = None) -> Tuple[Dict[str, Any], int, str]:
    """:func:`rule_features` and the masked template text of the page's own content (outside
    page chrome: what similar templates are grouped by, :mod:`scrapy_websim.core.match.assign`; a
    site's header naming one of its projects is not the error or login template), from one walk.
    ``masked``: as :func:`mask_tokens` takes it (the caller masks more text of the page)."""
    walk = _walk(doc, skeleton=True)
    memo: Dict[str, Optional[str]] = {}
    if masked is None:
        masked = {}
    signals = _signals(walk, title, params, url, memo)
    fingerprint = _fingerprint(walk, url, _template_text(walk, url, memo=memo, masked=masked))
    return signals, fingerprint, _template_text(walk, url, own=True, memo=memo, masked=masked)
