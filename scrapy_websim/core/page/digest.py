"""A page's content digest: what ``websim diff`` compares to tell whether one URL changed between
two scans, in a few hundred characters of every output format (the ``content_digest`` field).

The digest is one string, ``d1.N.SKETCH.E.ENTRIES.L.STRUCTURE.PHASH``:

``N``, ``SKETCH``
    the judged text (the text the duplicate decision reads, see
    :func:`scrapy_websim.core.features.content_text`) with per-request tokens masked
    (:func:`masked_words`: anything with a digit, long or case-mixed letter runs, which covers
    timestamps, counters, request and session ids, CSRF tokens), cut into word pairs within each
    line (a block: paragraph, list item, table row; :func:`line_words`), so that shuffled items
    are the same pairs: ``N`` distinct pairs and a 64-bin one-permutation MinHash of them keeping
    16 bits per bin (base64url), from which :func:`compare` estimates how many pairs one text has
    that the other lacks. A rotating banner or an ad slot changes a few pairs; replaced content
    changes most of them.
``E``, ``ENTRIES``, ``L``
    the page's entries: links with text outside page chrome (navigation, site header and
    footer, sidebars), counted, and an order-free 32-bit hash of their texts (hex); ``L`` is 1
    when the page is a directory index (:func:`is_listing`), whose every entry counts: one file
    more in a listing is a change, however small in words.
``STRUCTURE``
    a 64-bit SimHash of the tag paths (:mod:`scrapy_websim.core.page.dom`), each path weighted
    by the logarithm of its count (hex): close for one template, far for another.
``PHASH``
    the screenshot's pHash (hex; ``-`` without a screenshot).

:func:`parse_digest` reads the string back and :func:`compare` compares two digests of one URL;
what counts as a change is decided in ``scrapy_websim/result/diff.py`` with the thresholds of
:class:`~scrapy_websim.core.params.page.ChangeParams`.

Pure: no Scrapy import; deterministic (BLAKE2b hashes, stable across runs and platforms).
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from ..fingerprints import CJK_CHARS, blake2b64, hamming, hash_shingles
from ..types import hex64
from .visible import _CHROME, _PAGE, _hidden, _region, _tag, page_body

__all__ = ["DIGEST_VERSION", "Digest", "DigestDelta", "masked_words", "line_words", "content_digest",
           "parse_digest", "compare", "excerpt"]

#: The first part of every digest string; a digest of another version is not compared.
DIGEST_VERSION = "d1"
#: MinHash bins and the bits kept of each bin's minimum (b-bit minwise hashing: two different
#: minima agree by chance once in 2**16).
BINS = 64
_BIN_SHIFT = np.uint64(64 - 6)  # log2(BINS) top bits pick the bin
_LOW_BITS = np.uint64((1 << 58) - 1)
_EMPTY = 0xFFFF
#: Links read for the entries (a document-order prefix: a listing of a million files is still
#: one digest).
MAX_ENTRIES = 20_000
#: Characters of the excerpt (the ``excerpt`` field).
EXCERPT_CHARS = 160

_TOKEN = re.compile(rf"[{CJK_CHARS}]+|[^\W{CJK_CHARS}]+", re.UNICODE)
_CJK = re.compile(rf"[{CJK_CHARS}]")
#: :data:`_TOKEN` and line breaks (no token holds one).
_LINE_TOKEN = re.compile(rf"\n|[{CJK_CHARS}]+|[^\W{CJK_CHARS}]+", re.UNICODE)
#: What changes per request: a word with a digit in it, and letter runs that are ids, not words
#: (25 letters or more, or 10 or more with upper case inside, ``kQzPwXvBnM``, as the template
#: fingerprint masks them).
_RANDOM = re.compile(r"[A-Za-z]{25,}|(?=[A-Za-z]*[a-z])(?=[A-Za-z]*[A-Z][a-z]*[A-Z])[A-Za-z]{10,}")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_]")
_LISTING_TITLE = re.compile(r"^\s*(index of|directory listing|listing of|directory of)\b", re.I)
_PLACEHOLDER = "0"
#: Between two lines of the judged text (no word is "\n").
_BREAK = "\n"
_BITS = np.arange(64, dtype=np.uint64)


def masked_words(text: str) -> List[str]:
    """The words of ``text``, lower-cased, with what changes per request masked: a word with a
    digit in it (dates, times, counters, sizes, ids, tokens) and an id-like letter run become one
    placeholder, and a run of placeholders one placeholder (``12:03:44`` and ``9:05`` read the
    same). A CJK run becomes its overlapping character pairs, as in
    :func:`~scrapy_websim.core.fingerprints.tokens`."""
    return _masked_lines(_TOKEN.findall(text))


def _mask(word: str) -> Any:
    """What :func:`masked_words` makes of one word: the word lower-cased, the placeholder, or a
    CJK run's list of pairs."""
    if word.isalpha():
        if _CJK.match(word):
            return [word[i:i + 2] for i in range(len(word) - 1)] if len(word) > 1 else [word]
        if len(word) >= 10 and not word.islower() and _RANDOM.fullmatch(word):
            return _PLACEHOLDER
        return word.lower()
    if any(ch.isdigit() for ch in word):
        return _PLACEHOLDER
    return word.lower()


def _masked_lines(words: List[str]) -> List[str]:
    """:func:`masked_words` of each line of a text whose tokens (and line breaks) are ``words``,
    with :data:`_BREAK` between lines that have words; each distinct word masked once."""
    masks: Dict[str, Any] = {_BREAK: None}
    for word in set(words).difference(masks):
        masks[word] = _mask(word)
    out: List[str] = []
    last = ""
    pending = seen = False  # a break is due before the next word; the line has a word
    for word in words:
        masked = masks[word]
        if masked is None:  # a line break: placeholder runs end here
            pending, seen, last = pending or seen, False, ""
            continue
        if pending and out:
            out.append(_BREAK)
        pending, seen = False, True
        if masked.__class__ is list:  # a CJK run's pairs
            out.extend(masked)
            last = ""
        elif masked != _PLACEHOLDER or last != _PLACEHOLDER:
            out.append(masked)
            last = masked
    return out


def line_words(text: str) -> List[str]:
    """:func:`masked_words` of each line of ``text`` (the judged text has one line per block: a
    paragraph, a list item, a table row), with a line-break token between lines, so that the
    pairs across a break say "this line ends / starts with" and not which line comes next:
    shuffled list items or related links give the same pairs."""
    return _masked_lines(_LINE_TOKEN.findall(text))


def _sketch(text: str) -> Tuple[int, str]:
    """``(distinct word pairs, MinHash as base64url)`` of the masked text."""
    hashes = hash_shingles(line_words(text), size=2)
    sig = np.full(BINS, _EMPTY, np.uint64)
    if hashes.shape[0]:
        bins = (hashes >> _BIN_SHIFT).astype(np.intp)
        mins = np.full(BINS, np.iinfo(np.uint64).max, np.uint64)
        np.minimum.at(mins, bins, hashes & _LOW_BITS)
        used = mins != np.iinfo(np.uint64).max
        sig[used] = np.minimum(mins[used] & np.uint64(0xFFFF), np.uint64(_EMPTY - 1))
    raw = sig.astype(">u2").tobytes()
    return int(hashes.shape[0]), base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _entries(doc: Any) -> Tuple[int, int]:
    """``(links with text outside chrome, order-free 32-bit hash of their texts)``; numbers in a
    link text are masked (a comment counter), nothing else."""
    body = page_body(doc)
    if body is None or not isinstance(body.tag, str):
        return 0, 0
    regions: Dict[Any, int] = {body: _PAGE}

    def region_of(el: Any) -> int:
        """The region of ``el``, from its nearest ancestor already known (no recursion: a
        hostile page nests thousands deep)."""
        chain = []
        node = el
        while node is not None and node not in regions:
            chain.append(node)
            node = node.getparent()
        region = regions.get(node, _PAGE) if node is not None else _PAGE
        for item in reversed(chain):
            tag = _tag(item)
            if region != _CHROME and tag:
                region = _CHROME if _hidden(item, tag) else _region(item, tag, region)
            regions[item] = region
        return region

    count, mixed = 0, 0
    for link in islice(body.iter("a"), MAX_ENTRIES):
        if link.get("href") is None:
            continue
        words = " ".join(_DIGITS.sub("0", link.text_content()).lower().split())
        if not _WORD.search(words) or region_of(link) == _CHROME:
            continue
        count += 1
        mixed = (mixed + blake2b64(words)) & 0xFFFFFFFF
    return count, mixed


def _structure(tag_paths: Dict[str, int]) -> int:
    """64-bit SimHash of the tag paths, each weighted by ``1 + log2(count)``."""
    if not tag_paths:
        return 0
    hashes = np.fromiter((blake2b64(path) for path in tag_paths), dtype=np.uint64, count=len(tag_paths))
    weights = np.fromiter((1.0 + math.log2(max(1, int(c))) for c in tag_paths.values()), dtype=np.float64,
                          count=len(tag_paths))
    bits = ((hashes[:, None] >> _BITS[None, :]) & np.uint64(1)).astype(np.float64)
    votes = weights @ (2.0 * bits - 1.0)
    value = 0
    for i in np.nonzero(votes > 0)[0]:
        value |= 1 << int(i)
    return value


def is_listing(title: str, heading: str) -> bool:
    """A directory index (its title or first heading says "Index of ...", "Directory listing
    ..."), whose every entry counts. Other list pages (a blog's index, a shop's grid) are compared
    by their text: their entries share the page with banners and ads that rotate."""
    return bool(_LISTING_TITLE.match(title or "") or _LISTING_TITLE.match(heading or ""))


def content_digest(doc: Any, text: str, title: str, heading: str, tag_paths: Dict[str, int],
                   phash: Optional[int]) -> str:
    """The digest of a parsed page (see the module docstring): ``text`` is its judged text,
    ``heading`` its first h1."""
    n, sketch = _sketch(text)
    count, mixed = _entries(doc) if doc is not None else (0, 0)
    listing = 1 if is_listing(title, heading) else 0
    ph = hex64(phash) if phash is not None else "-"
    return f"{DIGEST_VERSION}.{n}.{sketch}.{count}.{mixed:08x}.{listing}.{hex64(_structure(tag_paths))}.{ph}"


def excerpt(text: str, chars: int = EXCERPT_CHARS) -> str:
    """The first ``chars`` characters of ``text``, white space collapsed (an ellipsis when cut)."""
    words = " ".join(text[: chars * 4].split())
    return words if len(words) <= chars else words[: chars - 1].rstrip() + "\u2026"


@dataclass(frozen=True)
class Digest:
    """A digest read back (:func:`parse_digest`)."""

    shingles: int
    sketch: Tuple[int, ...]  # BINS values, _EMPTY for an empty bin
    entries: int
    entries_hash: int
    listing: bool
    structure: int
    phash: Optional[int]


def parse_digest(value: Any) -> Optional[Digest]:
    """The :class:`Digest` written as ``value``; None for "" (a page without one: not rendered,
    or written by a version without digests) or for anything malformed or of another version."""
    if not isinstance(value, str) or not value.startswith(DIGEST_VERSION + "."):
        return None
    parts = value.split(".")
    if len(parts) != 8:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
        if len(raw) != 2 * BINS:
            return None
        sketch = tuple(int.from_bytes(raw[i:i + 2], "big") for i in range(0, 2 * BINS, 2))
        return Digest(shingles=int(parts[1]), sketch=sketch, entries=int(parts[3]), entries_hash=int(parts[4], 16),
                      listing=parts[5] == "1", structure=int(parts[6], 16),
                      phash=None if parts[7] == "-" else int(parts[7], 16))
    except ValueError:
        return None


@dataclass(frozen=True)
class DigestDelta:
    """How one URL's page differs between two scans (:func:`compare`)."""

    text_similarity: float  # estimated Jaccard similarity of the masked word pairs (1: the same)
    added: int  # estimated word pairs only the new text has
    removed: int  # ... only the old text had
    entries: Tuple[int, int]  # (old, new) entry counts
    entries_changed: bool  # the entry texts differ (count or hash)
    listing: bool  # both scans saw a listing
    structure_distance: int  # Hamming distance of the structure SimHashes (0..64)
    visual_distance: Optional[int]  # of the pHashes; None without both screenshots

    @property
    def changed(self) -> int:
        """Word pairs changed: the larger of added and removed (a replacement counts once)."""
        return max(self.added, self.removed)


def _jaccard(a: Iterable[int], b: Iterable[int]) -> float:
    used = agree = 0
    for x, y in zip(a, b):
        if x == _EMPTY and y == _EMPTY:
            continue
        used += 1
        agree += x == y
    return agree / used if used else 1.0


def compare(old: Digest, new: Digest) -> DigestDelta:
    """The differences of two digests of one URL."""
    if old.shingles == 0 and new.shingles == 0:
        jac = 1.0
    elif old.shingles == 0 or new.shingles == 0:
        jac = 0.0
    else:
        jac = _jaccard(old.sketch, new.sketch)
    inter = jac * (old.shingles + new.shingles) / (1.0 + jac)
    added = max(0, round(new.shingles - inter))
    removed = max(0, round(old.shingles - inter))
    visual = hamming(old.phash, new.phash) if old.phash is not None and new.phash is not None else None
    return DigestDelta(
        text_similarity=round(jac, 3), added=added, removed=removed, entries=(old.entries, new.entries),
        entries_changed=(old.entries, old.entries_hash) != (new.entries, new.entries_hash),
        listing=old.listing and new.listing, structure_distance=hamming(old.structure, new.structure),
        visual_distance=visual)
