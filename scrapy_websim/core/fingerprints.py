"""Tokens and the hashes built on them: the one token hash, SimHash, the exact-copy hash, word
shingles, MinHash and Jaccard.

Tokens are lower-cased words for space-separated scripts and overlapping character bigrams for
CJK runs (a Chinese page does not collapse into one token; :data:`CJK_CHARS` is the one CJK
definition). Every token, URL and text hash is :func:`blake2b64` (the first 8 bytes of BLAKE2b),
so hashes are stable across runs, processes and platforms. Used by the page features
(:mod:`scrapy_websim.core.features`), the pair decision (:mod:`scrapy_websim.core.match`) and the
URL tools (:mod:`scrapy_websim.core.urls`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import zlib
from collections import Counter
from functools import lru_cache
from typing import Dict, List, Literal, Optional, Tuple
from urllib.parse import unquote_plus, urlsplit

import numpy as np

from .types import MASK64

__all__ = [
    "CJK_CHARS",
    "item_shingles",
    "item_words",
    "url_words",
    "blake2b64",
    "blake2b_digest",
    "tokens",
    "simhash64",
    "simhash_of_tokens",
    "hamming",
    "text_hash",
    "text_hash_of_tokens",
    "shingle_hashes",
    "shingle_hashes_of_tokens",
    "hash_shingles",
    "minhash",
    "minhash_hex",
    "minhash_of",
    "minhash_summary",
    "minhash_from_hex",
    "jaccard_estimate",
    "jaccard",
    "SHINGLE_SET_MAX",
    "TEMPLATE_SHINGLES",
    "shingle_set",
    "encode_shingle_set",
    "decode_shingle_set",
]


def blake2b_digest(text: str, size: int) -> bytes:
    """BLAKE2b digest of ``size`` bytes of ``text`` (UTF-8). Lone surrogates (a URL decoded with
    ``surrogateescape``) are hashed, not refused."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).digest()


def blake2b64(text: str, byteorder: Literal["little", "big"] = "big") -> int:
    """The one 64-bit token/URL hash: :func:`blake2b_digest` of 8 bytes, as an int. ``byteorder``
    only because stored SimHashes were built little-endian (:func:`simhash64`)."""
    return int.from_bytes(blake2b_digest(text, 8), byteorder)


# --- tokens and SimHash --------------------------------------------------------------------

#: The one CJK definition (a regex character-class body): scripts written without spaces, where a
#: character (pair) is the word. Radicals, kana, Bopomofo, Hangul, CJK ideographs, half-width kana.
CJK_CHARS = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
)
_TOKEN_RE = re.compile(rf"[{CJK_CHARS}]+|[^\W{CJK_CHARS}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]")


def tokens(text: str) -> List[str]:
    """Lower-cased words; each CJK run becomes overlapping character bigrams (a lone char stays)."""
    text = text.lower()
    if _CJK_RUN.search(text) is None:  # no CJK run: the words are the tokens
        return _TOKEN_RE.findall(text)
    out: List[str] = []
    for tok in _TOKEN_RE.findall(text):
        if _CJK_RUN.match(tok):
            if len(tok) == 1:
                out.append(tok)
            else:
                out.extend(tok[i : i + 2] for i in range(len(tok) - 1))
        else:
            out.append(tok)
    return out


_BITS = np.arange(64, dtype=np.uint64)


def _token_hash(tok: str) -> int:
    return blake2b64(tok, "little")


def simhash64(text: str) -> int:
    """64-bit SimHash of ``text`` (token weights = counts). Empty text hashes to 0."""
    return simhash_of_tokens(tokens(text))


def simhash_of_tokens(toks: List[str]) -> int:
    """:func:`simhash64` of a text whose :func:`tokens` are ``toks``."""
    counts = Counter(toks)
    if not counts:
        return 0
    hashes = np.fromiter(map(_cached_token_hash, counts), dtype=np.uint64, count=len(counts))
    weights = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    bits = ((hashes[:, None] >> _BITS[None, :]) & np.uint64(1)).astype(np.int64)  # (n, 64)
    votes = weights @ (2 * bits - 1)
    value = 0
    for i in np.nonzero(votes > 0)[0]:
        value |= 1 << int(i)
    return value


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two 64-bit hashes."""
    return ((a ^ b) & MASK64).bit_count()


# --- exact-copy hash, shingles and MinHash (the text measure with a margin) -------------------
#
# SimHash stays the candidate filter (one 64-bit value, joined exactly in core/match/cluster.py); the
# text similarity of a candidate pair is the Jaccard similarity of the two pages' sets of word
# 3-shingles (three consecutive tokens), estimated from a 128-bin one-permutation MinHash that
# each record carries. bench/textsim.py measures why: on every template, a page and its noisy copy
# share most shingles while two different pages of the template share only the template's phrases.

#: A token of at least this many characters with a digit in it (request ids, build hashes, CSRF
#: tokens, UUID parts) is one placeholder in shingles: per-request ids are noise. Shorter numbers
#: (dates, times, sizes, versions) stay, since they are content on history pages and listings.
ID_MIN_CHARS = 8
_ID_PLACEHOLDER = "\x00id"
_DIGIT = re.compile(r"\d")
#: Tokens per shingle.
SHINGLE_TOKENS = 3
#: Bins of the one-permutation MinHash (each holds the smallest 32-bit shingle value of its bin).
MINHASH_BINS = 128
_EMPTY_BIN = np.uint32(0xFFFFFFFF)
_BIN_SHIFT = np.uint64(64 - 7)  # log2(MINHASH_BINS) top bits pick the bin
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def text_hash(text: str) -> int:
    """64-bit hash of the token sequence: equal for texts that differ only in case, spacing and
    punctuation (identical main content), different otherwise. Empty text hashes to 0."""
    return text_hash_of_tokens(tokens(text))


def text_hash_of_tokens(toks: List[str]) -> int:
    """:func:`text_hash` of a text whose :func:`tokens` are ``toks``."""
    if not toks:
        return 0
    return blake2b64(" ".join(toks), "little")


@lru_cache(maxsize=65536)
def _cached_token_hash(tok: str) -> int:
    return _token_hash(tok)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser (wrapping uint64 arithmetic)."""
    h = (h ^ (h >> np.uint64(30))) * _M1
    h = (h ^ (h >> np.uint64(27))) * _M2
    return h ^ (h >> np.uint64(31))


#: Punctuation that separates the words of a URL (``fn.simd_gt.html``, ``Owl_(bird)``).
_URL_PUNCT = re.compile(r"[/_\-+.=&:;,~!$'()*@?#]+")


def url_words(url: str) -> set:
    """The words of what a URL asks for: path segments, query values and fragment (not the
    scheme, host or port: a mirror's), split at punctuation (``fn.simd_gt.html``,
    ``Owl_(bird)``, ``%E7%8C%AB`` give their words); single letters are left out (a mirror's
    ``/b/`` directory, ``n``: not what a page is about)."""
    text = _asked(url)
    return {w for w in tokens(_URL_PUNCT.sub(" ", text)) if len(w) > 1 or not w.isascii() or w.isdigit()}


def _asked(url: str) -> str:
    """A URL's path, query and fragment, unquoted ("" for a URL that does not parse)."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return ""
    return unquote_plus(f"{parts.path} {parts.query} {parts.fragment}")


#: Words of its URL a page's item shingles are kept for, and shingles a word.
ITEM_WORDS, ITEM_WORD_SHINGLES = 8, 6
#: What splits a URL into the values a number may be part of the name of (not ``-`` or ``_``).
_URL_VALUES = re.compile(r"[/?&=#.;,:~!$'()*@+\s]+")
_LETTER = re.compile(r"[^\W\d_]")


def item_words(url: str) -> set:
    """The words of a URL an item's text may name it by (:func:`item_shingles`): its
    :func:`url_words` without numbers, but with a number that is part of a name, in a path
    segment or query value that has letters too (``web-ams-01``, ``rack_12``, ``release-3``; not
    ``page=2``, ``2026/11``, ``v1.2``'s ``2``): two hosts ``web-ams-01`` and ``web-ams-02`` differ by it."""
    words = url_words(url)
    out = {w for w in words if not w.isdigit()}
    for value in _URL_VALUES.split(_asked(url)):
        if _LETTER.search(value):
            out.update(w for w in tokens(_URL_PUNCT.sub(" ", value)) if w.isdigit() and w in words)
    return out


def item_shingles(toks: List[str], words: set, size: int = SHINGLE_TOKENS) -> Dict[str, List[int]]:
    """Where a page's text names what its URL asks for: for each word of ``words`` (its URL's
    :func:`item_words`) found among ``toks`` (its text's :func:`tokens`), the 32-bit values (as
    :func:`shingle_set` keeps them) of the shingles around its first occurrences. Two pages that
    each name an item of their own URL, in words the other's text never has around it, are
    about two items (``core.match.similarity.items_differ``)."""
    want = set(words)
    out: Dict[str, set] = {}
    for i, tok in enumerate(toks):
        if tok in want and len(out.get(tok, ())) < ITEM_WORD_SHINGLES and (tok in out or len(out) < ITEM_WORDS):
            out.setdefault(tok, set()).update(_shingles_around(toks, i, size))
    return {w: sorted(v)[:ITEM_WORD_SHINGLES] for w, v in sorted(out.items())}


def _shingles_around(toks: List[str], i: int, size: int) -> List[int]:
    """The 32-bit values of the ``size``-token shingles of ``toks`` that hold token ``i``."""
    first, last = max(0, i - size + 1), min(i, max(0, len(toks) - size))
    return [int(v) for start in range(first, last + 1)
            for v in shingle_set(shingle_hashes_of_tokens(toks[start:start + size], size))]


def shingle_hashes(text: str, size: int = SHINGLE_TOKENS) -> np.ndarray:
    """Sorted distinct 64-bit hashes of the ``size``-token shingles of ``text`` (a text shorter
    than ``size`` tokens is one shingle)."""
    return shingle_hashes_of_tokens(tokens(text), size)


def shingle_hashes_of_tokens(toks: List[str], size: int = SHINGLE_TOKENS) -> np.ndarray:
    """:func:`shingle_hashes` of a text whose :func:`tokens` are ``toks``."""
    toks = [_ID_PLACEHOLDER if len(t) >= ID_MIN_CHARS and _DIGIT.search(t) else t for t in toks]
    return hash_shingles(toks, size)


def hash_shingles(toks: List[str], size: int = SHINGLE_TOKENS) -> np.ndarray:
    """Sorted distinct 64-bit hashes of the ``size``-token shingles of a token list (what
    :func:`shingle_hashes` makes of the tokens of a text)."""
    if not toks:
        return np.zeros(0, np.uint64)
    th = np.fromiter(map(_cached_token_hash, toks), dtype=np.uint64, count=len(toks))
    n = min(size, len(toks))
    h = np.zeros(len(toks) - n + 1, np.uint64)
    with np.errstate(over="ignore"):
        for i in range(n):
            h = _mix(h * _GOLD + th[i : i + h.shape[0]])
    return np.unique(h)


def minhash(text: str) -> np.ndarray:
    """One-permutation MinHash of the shingle set: :data:`MINHASH_BINS` uint32 values (the bin's
    smallest value, ``0xFFFFFFFF`` for an empty bin)."""
    return minhash_of(shingle_hashes(text))


def minhash_of(h: np.ndarray) -> np.ndarray:
    """:func:`minhash` of shingle hashes already made (:func:`shingle_hashes`)."""
    sig = np.full(MINHASH_BINS, _EMPTY_BIN, np.uint32)
    if h.shape[0]:
        low = np.minimum(h & np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFE)).astype(np.uint32)
        np.minimum.at(sig, (h >> _BIN_SHIFT).astype(np.intp), low)
    return sig


def minhash_summary(text: str) -> Tuple[str, int]:
    """The stored MinHash of ``text`` (hex) and the number of distinct shingles it summarises."""
    h = shingle_hashes(text)
    return minhash_hex(minhash_of(h)), int(h.shape[0])


def minhash_hex(sig: np.ndarray) -> str:
    return sig.astype(">u4").tobytes().hex()


@lru_cache(maxsize=4096)
def _unhex(value: str) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(value), dtype=">u4").astype(np.uint32)


def minhash_from_hex(value: str) -> Optional[np.ndarray]:
    """The signature stored in ``PageRecord.minhash``; ``None`` for "" or a malformed value."""
    if not value or len(value) != MINHASH_BINS * 8:
        return None
    try:
        return _unhex(value)
    except ValueError:
        return None


def jaccard_estimate(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two shingle sets from their MinHashes: the share of bins, among those
    not empty in both, where the two minima agree. Two empty signatures give 1."""
    used = (a != _EMPTY_BIN) | (b != _EMPTY_BIN)
    n = int(used.sum())
    if n == 0:
        return 1.0
    return float(((a == b) & used).sum()) / n


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard similarity of two sorted distinct hash arrays (:func:`shingle_hashes`)."""
    if not a.shape[0] and not b.shape[0]:
        return 1.0
    inter = np.intersect1d(a, b, assume_unique=True).shape[0]
    return inter / (a.shape[0] + b.shape[0] - inter)


# --- the stored shingle set (what a page says, for the template-aware decision) ----------------
#
# The decision at the end of a crawl takes out of each page what its site repeats on many pages
# (core/match/template.py) and compares what is left exactly: that needs the shingles themselves,
# not a MinHash of them. A page keeps the 32-bit form of its distinct shingles (the top half of
# :func:`shingle_hashes`), sorted, delta-encoded and compressed; a page with more than
# :data:`SHINGLE_SET_MAX` shingles keeps none (it says a lot of its own, and is compared by its
# MinHash, which bounds a record's size).

#: Distinct shingles a page keeps at most (about 25,000 characters of text).
SHINGLE_SET_MAX = 4096
#: Shingles of a page's masked template text kept (``PageRecord.fingerprint_shingles``): the
#: smallest values, a consistent sample (the smallest values of two sets' union decide their
#: Jaccard); a set this long was cut.
TEMPLATE_SHINGLES = 512
_EMPTY_SET = np.zeros(0, np.uint32)


def shingle_set(h: np.ndarray) -> np.ndarray:
    """Sorted distinct 32-bit shingle values from :func:`shingle_hashes`' 64-bit ones."""
    return np.unique((h >> np.uint64(32)).astype(np.uint32))


def encode_shingle_set(values: np.ndarray) -> str:
    """The stored form of a sorted distinct uint32 array: zlib of its little-endian deltas, in
    base64; "" for an empty array or one above :data:`SHINGLE_SET_MAX`."""
    if values.shape[0] == 0 or values.shape[0] > SHINGLE_SET_MAX:
        return ""
    deltas = np.diff(values.astype(np.uint32), prepend=np.uint32(0)).astype("<u4")
    return base64.b64encode(zlib.compress(deltas.tobytes(), 6)).decode("ascii")


@lru_cache(maxsize=8192)
def decode_shingle_set(value: str) -> np.ndarray:
    """The array :func:`encode_shingle_set` stored (read-only; empty for "" or a malformed value)."""
    if not value:
        return _EMPTY_SET
    try:
        raw = zlib.decompress(base64.b64decode(value, validate=True))
    except (binascii.Error, zlib.error, ValueError):
        return _EMPTY_SET
    if len(raw) % 4:
        return _EMPTY_SET
    out = np.cumsum(np.frombuffer(raw, "<u4").astype(np.uint64)).astype(np.uint32)
    out.flags.writeable = False
    return out
