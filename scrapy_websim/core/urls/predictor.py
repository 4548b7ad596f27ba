"""Predict from a URL alone whether its page will duplicate content already seen.

The approach is MaybeDont's (a duplicate-URL predictor for crawlers), re-derived here:

* Content identity: a MinHash (datasketch) of the page's word 4-shingles, shingles never spanning a
  line break; CJK characters count as words. Shingles that occur on a large share of a sample of
  the site's pages (header, footer, menus: the site chrome) are removed first, so two pages whose
  own content differs are not called duplicates because the chrome dominates. Two pages are
  duplicates when their estimated Jaccard similarity is >= ``jaccard_threshold``.
* Hypotheses about which URL components do not change content. Every unordered pair of fetched
  URLs with the same host+path is an observation (duplicate or not) for the hypotheses it bears on:

  1. ``path``: URLs with this path are all the same, whatever the query;
  2. ``param``: URLs differing only in this query parameter are the same (session ids);
  3. ``path+param``: the same, restricted to one path;
  4. ``path+query+param``: the same, restricted to one path and the rest of the query;
  5. ``param=value``: adding this ``param=value`` to a URL lacking ``param`` does not change it;
  6. ``path+param=value``: the same, restricted to one path.

  Each hypothesis keeps a Bernoulli count; its probability is the one-sided lower Wilson bound at
  ``confidence`` (so a handful of observations never makes a rule: with no counter-example it takes
  ~90 duplicate pairs to pass 0.97). Specific beats general: a hypothesis is never trusted beyond
  the upper bound of a more specific one (or of the value-level ones for the URL's value), so
  ``start`` being ignorable in general does not drop ``?start=20`` once ``start=20`` has been seen
  to change content, while ``start=0`` can be ignorable even where ``start`` in general is not.

Order independence and bounded cost: for each group of comparable URLs (one path; one path + rest of
the query + parameter) only a bottom-k sample by a hash of the URL takes part in the pairs, and a
URL leaving the sample takes its pairs' counts with it. The counts are therefore exactly those of
the pairs inside the final samples, a function of the set of (URL, text) pages whatever the order
they arrived in, and an update costs O(sample_size x parameters) Jaccard estimates however long the
crawl. Memory is O(URLs) at about 0.5 KB per URL (a 64-value MinHash and the index entries), and
stops growing at ``max_urls`` (later pages still update the statistics but are not indexed).

MinHashLSH is deliberately not used for the per-update duplicate search: its query returns every
stored near-duplicate, which on sites with thousands of identical pages makes an update O(n).

Pure module: no Scrapy import.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from itertools import chain
from statistics import NormalDist
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import parse_qsl, urlsplit

import numpy as np
from datasketch import MinHash
from w3lib.url import canonicalize_url

from ..fingerprints import CJK_CHARS, blake2b64
from ..params.urls import PredictorParams

__all__ = [
    "DupePredictor",
    "DupStat",
    "url_key",
    "shingles",
    "boilerplate_shingles",
    "wilson_bounds",
]


# --------------------------------------------------------------------------- text side

_WORD_RE = re.compile(rf"[{CJK_CHARS}]|[^\W_]+(?:['’][^\W_]+)*")


def shingles(text: str, size: int = 4) -> set:
    """Word ``size``-shingles of ``text``, lower-cased, never spanning a line break.

    CJK characters are one word each. A line shorter than ``size`` words is one shingle.
    """
    out = set()
    for line in text.splitlines():
        words = _WORD_RE.findall(line.lower())
        if not words:
            continue
        if len(words) <= size:
            out.add(" ".join(words))
            continue
        for i in range(len(words) - size + 1):
            out.add(" ".join(words[i : i + size]))
    return out


def boilerplate_shingles(texts: Sequence[str], share: float = 0.2) -> frozenset:
    """Shingles found in at least ``share`` of ``texts`` (and in at least 3): the site chrome.

    Fewer than 5 texts teach nothing (returns an empty set).
    """
    if len(texts) < 5:
        return frozenset()
    df: Counter = Counter()
    for text in texts:
        df.update(shingles(text))
    min_count = max(3, math.ceil(share * len(texts)))
    return frozenset(s for s, n in df.items() if n >= min_count)


# --------------------------------------------------------------------------- statistics


def wilson_bounds(dup: int, total: int, z: float) -> Tuple[float, float]:
    """(lower, upper) Wilson score bounds of a Bernoulli rate; (0, 1) with no observation."""
    if total <= 0:
        return 0.0, 1.0
    p = dup / total
    z2 = z * z
    denom = 1.0 + z2 / total
    centre = p + z2 / (2 * total)
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    return max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom)


class DupStat:
    """Counts of duplicate / non-duplicate pairs observed for one hypothesis."""

    __slots__ = ("dup", "total")

    def __init__(self) -> None:
        self.dup = 0
        self.total = 0

    def add(self, is_dup: bool, sign: int = 1) -> None:
        self.total += sign
        if is_dup:
            self.dup += sign

    def __repr__(self) -> str:
        return f"DupStat({self.dup}/{self.total})"


# --------------------------------------------------------------------------- URL side

QKey = Tuple[Tuple[str, str], ...]


def _url_hash(url: str) -> int:
    return blake2b64(url)


def url_key(url: str) -> str:
    """The key under which the predictor knows a URL (sorted query, no fragment). Not the
    canonical URL of a cluster (``Cluster.canonical_url``): two URLs with one key are one page."""
    return canonicalize_url(url, keep_fragments=False)


def _parse(url: str) -> Tuple[str, str, Dict[str, str]]:
    """(canonical url, host+path, {param: value}); a repeated parameter's values are joined."""
    canon = url_key(url)
    parts = urlsplit(canon)
    query: Dict[str, str] = {}
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        query[k] = query[k] + "\x1f" + v if k in query else v
    return canon, parts.netloc + (parts.path or "/"), query


def _qkey(query: Dict[str, str], without: Optional[str] = None) -> QKey:
    return tuple(sorted((k, v) for k, v in query.items() if k != without))


class _Sample:
    """Bottom-k sample of URLs by URL hash; entries are (hash, url, value)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: List[Tuple[int, str, str]] = []

    def add(self, h: int, url: str, value: str, k: int):
        """Insert; return (inserted, evicted entry or None)."""
        entries = self.entries
        if len(entries) >= k and h >= entries[-1][0]:
            return False, None
        bisect.insort(entries, (h, url, value))
        if len(entries) > k:
            return True, entries.pop()
        return True, None

    def first(self) -> str:
        return self.entries[0][1]


class _Page:
    __slots__ = ("path", "query", "h", "mh")

    def __init__(self, path: str, query: Dict[str, str], h: int, mh: np.ndarray) -> None:
        self.path = path
        self.query = query
        self.h = h
        self.mh = mh


# --------------------------------------------------------------------------- predictor


class DupePredictor:
    """Learn which URL components do not change content; predict duplicates from URLs alone.

    ``texts_sample``: main texts of a sample of the site's pages (a few hundred is plenty), used to
    learn the site chrome that is left out of content comparison. ``jaccard_threshold``: minimum
    Jaccard similarity of two pages' shingle sets for them to count as duplicates.

    >>> dp = DupePredictor(texts_sample=texts)
    >>> dp.update_model(url, main_text)         # for every fetched page
    >>> dp.get_dupe_prob(new_url)               # float in [0, 1]
    >>> dp.get_dupe_url(new_url)                # the fetched URL it most likely duplicates
    """

    def __init__(
        self,
        texts_sample: Optional[Iterable[str]] = None,
        jaccard_threshold: float = 0.9,
        params: Optional[PredictorParams] = None,
    ) -> None:
        if params is None:
            params = PredictorParams(jaccard_threshold=jaccard_threshold)
        self.params = params.validate()
        self._z = NormalDist().inv_cdf(params.confidence)
        self._k = params.sample_size
        self._min_dup = math.ceil(params.jaccard_threshold * params.num_perm - 1e-9)
        template = MinHash(num_perm=params.num_perm, seed=1)
        self._perms, self._scheme = template.permutations, template.scheme
        self.boilerplate = boilerplate_shingles(list(texts_sample or ()), params.boilerplate_share)

        self._pages: Dict[str, _Page] = {}
        self._by_path: Dict[str, _Sample] = {}
        # (path, rest-of-query key) -> {param: sample of URLs having param with that rest}
        self._by_rest: Dict[Tuple[str, QKey], Dict[str, _Sample]] = {}
        # (path, full query key) -> URL
        self._exact: Dict[Tuple[str, QKey], str] = {}
        # URLs scheduled but not fetched yet (add_pending): partners for prediction, no statistics
        self._pending: set = set()
        #: key -> the URL as first given (learned or pending): a predicted duplicate names the page
        #: as the crawl knows it, not in key form (query order may differ)
        self._urls: Dict[str, str] = {}
        self._pending_path: Dict[str, str] = {}
        self._pending_exact: Dict[Tuple[str, QKey], str] = {}
        self._pending_rest: Dict[Tuple[str, QKey], Dict[str, List[Tuple[str, str]]]] = {}
        # hypotheses
        self.path_stats: Dict[str, DupStat] = {}
        self.param_stats: Dict[str, DupStat] = {}
        self.path_param_stats: Dict[Tuple[str, str], DupStat] = {}
        self.path_query_param_stats: Dict[Tuple[str, str, QKey], DupStat] = {}
        self.param_value_stats: Dict[Tuple[str, str], DupStat] = {}
        self.path_param_value_stats: Dict[Tuple[str, str, str], DupStat] = {}

    # ----------------------------------------------------------------- public API

    def __len__(self) -> int:
        """Number of indexed (fetched) URLs."""
        return len(self._pages)

    def min_hash(self, text: str) -> np.ndarray:
        """MinHash values of ``text``'s shingles minus the site boilerplate."""
        sh = shingles(text)
        own = sh - self.boilerplate
        if own:
            sh = own  # a page made of chrome only is compared on the chrome
        m = MinHash(num_perm=self.params.num_perm, permutations=self._perms, scheme=self._scheme)
        if sh:
            m.update_batch([s.encode("utf-8") for s in sh])
        return np.asarray(m.hashvalues).copy()

    def update_model(self, url: str, text: str) -> None:
        """Learn from a fetched page: its URL and its main text. A URL seen before is ignored."""
        canon, path, query = _parse(url)
        if canon in self._pages:
            return
        page = _Page(path, query, _url_hash(canon), self.min_hash(text))
        index = len(self._pages) < self.params.max_urls
        self._pages[canon] = page
        self._urls.setdefault(canon, url)
        self._learn_path(path, canon, page)
        if len(query) <= self.params.max_params:
            for param, value in query.items():
                self._learn_param(path, query, param, value, canon, page)
            self._learn_plus_one(path, query, canon, page)

        if not index:
            # memory bound reached: keep the statistics, forget the page where no sample holds it
            self._forget_if_unreferenced(canon, page)

    def _learn_path(self, path: str, canon: str, page: "_Page") -> None:
        """Hypothesis 1: pairs inside the path sample."""
        sample = self._by_path.setdefault(path, _Sample())
        inserted, evicted = sample.add(page.h, canon, "", self._k)
        if not inserted:
            return
        others = [e[1] for e in sample.entries if e[1] != canon]
        stat = self.path_stats.setdefault(path, DupStat())
        for is_dup in self._dups(page.mh, others):
            stat.add(is_dup)
        if evicted is not None:
            gone = self._pages[evicted[1]]
            for is_dup in self._dups(gone.mh, others):
                stat.add(is_dup, -1)

    def _learn_param(self, path: str, query: Dict[str, str], param: str, value: str, canon: str,
                     page: "_Page") -> None:
        """URLs differing from this one in a parameter this one has."""
        pages = self._pages
        rest = _qkey(query, param)
        group = self._by_rest.setdefault((path, rest), {}).setdefault(param, _Sample())
        base = self._exact.get((path, rest))
        inserted, evicted = group.add(page.h, canon, value, self._k)
        if not inserted:
            return
        others = [e for e in group.entries if e[1] != canon]
        for e, is_dup in zip(others, self._dups(page.mh, [e[1] for e in others])):
            self._count_param(path, param, rest, is_dup, 1)
        if base is not None:
            is_dup = self._dup(page.mh, pages[base].mh)
            self._count_param(path, param, rest, is_dup, 1)
            self._count_value(path, param, value, is_dup, 1)
        if evicted is None:
            return
        gone = pages[evicted[1]]
        for is_dup in self._dups(gone.mh, [e[1] for e in others]):
            self._count_param(path, param, rest, is_dup, -1)
        if base is not None:
            is_dup = self._dup(gone.mh, pages[base].mh)
            self._count_param(path, param, rest, is_dup, -1)
            self._count_value(path, param, evicted[2], is_dup, -1)

    def _learn_plus_one(self, path: str, query: Dict[str, str], canon: str, page: "_Page") -> None:
        """URLs that are this one plus one parameter."""
        qkey = _qkey(query)
        for param, group in self._by_rest.get((path, qkey), {}).items():
            entries = group.entries
            for e, is_dup in zip(entries, self._dups(page.mh, [e[1] for e in entries])):
                self._count_param(path, param, qkey, is_dup, 1)
                self._count_value(path, param, e[2], is_dup, 1)
        self._exact[(path, qkey)] = canon

    def add_pending(self, url: str) -> None:
        """Note a URL that will be fetched (scheduled, not yet fetched).

        A crawler discovers a page and its variants together (on one listing page), before any of
        them is fetched: a pending URL can be what a new URL is predicted to duplicate, with the
        statistics learned from the pages fetched so far. Bounded like the fetched index.
        """
        canon, path, query = _parse(url)
        if canon in self._pages or canon in self._pending or len(self._pending) >= self.params.max_urls:
            return
        self._pending.add(canon)
        self._urls.setdefault(canon, url)
        self._pending_path.setdefault(path, canon)
        self._pending_exact.setdefault((path, _qkey(query)), canon)
        if len(query) <= self.params.max_params:
            for param, value in query.items():
                group = self._pending_rest.setdefault((path, _qkey(query, param)), {}).setdefault(param, [])
                if len(group) < self._k:
                    group.append((value, canon))

    def get_dupe_prob(self, url: str) -> float:
        """Probability that ``url``'s content was already seen (1.0 for a URL already fetched)."""
        return self._predict(url)[0]

    def get_dupe_url(self, url: str) -> Optional[str]:
        """The fetched URL that ``url`` most likely duplicates (None if nothing bears on it)."""
        return self.predict(url)[1]

    def predict(self, url: str) -> Tuple[float, Optional[str]]:
        """``(get_dupe_prob(url), get_dupe_url(url))`` in one pass; the URL as first given."""
        prob, dupe = self._predict(url)
        return prob, (self._urls.get(dupe, dupe) if dupe is not None else None)

    def content_similarity(self, url_a: str, url_b: str) -> Optional[float]:
        """Estimated Jaccard similarity of two fetched pages (None if either is unknown)."""
        a = self._pages.get(_parse(url_a)[0])
        b = self._pages.get(_parse(url_b)[0])
        if a is None or b is None:
            return None
        return float(np.count_nonzero(a.mh == b.mh)) / self.params.num_perm

    def hypotheses(self, min_total: int = 1) -> List[Tuple[str, object, DupStat, float]]:
        """All hypotheses with at least ``min_total`` observations: (kind, key, stat, probability)."""
        out: List[Tuple[str, object, DupStat, float]] = []
        for kind, table in (
            ("path", self.path_stats),
            ("param", self.param_stats),
            ("path+param", self.path_param_stats),
            ("path+query+param", self.path_query_param_stats),
            ("param=value", self.param_value_stats),
            ("path+param=value", self.path_param_value_stats),
        ):
            for key, stat in table.items():
                if stat.total >= min_total:
                    out.append((kind, key, stat, self._bounds(stat)[0]))
        return out

    # ----------------------------------------------------------------- internals

    def _dup(self, a: np.ndarray, b: np.ndarray) -> bool:
        return int(np.count_nonzero(a == b)) >= self._min_dup

    def _dups(self, mh: np.ndarray, urls: List[str]) -> List[bool]:
        if not urls:
            return []
        pages = self._pages
        matrix = np.stack([pages[u].mh for u in urls])
        return list(np.count_nonzero(matrix == mh, axis=1) >= self._min_dup)

    @staticmethod
    def _bump(table: dict, key, is_dup: bool, sign: int) -> None:
        stat = table.get(key)
        if stat is None:
            stat = table[key] = DupStat()
        stat.add(is_dup, sign)

    def _count_param(self, path: str, param: str, rest: QKey, is_dup: bool, sign: int) -> None:
        self._bump(self.param_stats, param, is_dup, sign)
        self._bump(self.path_param_stats, (path, param), is_dup, sign)
        self._bump(self.path_query_param_stats, (path, param, rest), is_dup, sign)

    def _count_value(self, path: str, param: str, value: str, is_dup: bool, sign: int) -> None:
        self._bump(self.param_value_stats, (param, value), is_dup, sign)
        self._bump(self.path_param_value_stats, (path, param, value), is_dup, sign)

    def _bounds(self, stat: Optional[DupStat]) -> Tuple[float, float]:
        if stat is None:
            return 0.0, 1.0
        return wilson_bounds(stat.dup, stat.total, self._z)

    def _combine(self, levels: List[Optional[DupStat]], checks: Sequence[Optional[DupStat]] = ()) -> float:
        """Specific beats general: ``levels`` run most specific first; a level's lower bound counts
        only up to the upper bounds of every more specific level and of ``checks``."""
        best = 0.0
        cap = min((self._bounds(s)[1] for s in checks if s is not None), default=1.0)
        for stat in levels:
            if stat is None:
                continue
            lo, hi = self._bounds(stat)
            best = max(best, min(lo, cap))
            cap = min(cap, hi)
        return best

    def _param_chain(self, path: str, param: str, rest: QKey) -> List[Optional[DupStat]]:
        return [
            self.path_query_param_stats.get((path, param, rest)),
            self.path_param_stats.get((path, param)),
            self.param_stats.get(param),
        ]

    def _value_chain(self, path: str, param: str, value: str) -> List[Optional[DupStat]]:
        return [
            self.path_param_value_stats.get((path, param, value)),
            self.param_value_stats.get((param, value)),
        ]

    def _predict(self, url: str) -> Tuple[float, Optional[str]]:
        canon, path, query = _parse(url)
        if canon in self._pages:
            return 1.0, canon
        offers = self._path_offers(path)
        if len(query) <= self.params.max_params:
            offers = chain(offers, self._param_offers(path, query), self._rest_offers(path, _qkey(query)))
        best: Tuple[float, Optional[str]] = (0.0, None)
        for prob, dupe in offers:  # the first of the most probable
            if prob > best[0]:
                best = (prob, dupe)
        return best

    def _path_offers(self, path: str) -> Iterator[Tuple[float, str]]:
        """A page of the same path (the path rule)."""
        sample = self._by_path.get(path)
        partner = sample.first() if sample is not None and sample.entries else self._pending_path.get(path)
        if partner is not None:
            yield self._bounds(self.path_stats.get(path))[0], partner

    def _param_offers(self, path: str, query: Dict[str, str]) -> Iterator[Tuple[float, str]]:
        """For each parameter of the URL, a page without it (or with another value of it)."""
        for param, value in query.items():
            rest = _qkey(query, param)
            base = self._exact.get((path, rest)) or self._pending_exact.get((path, rest))
            chain_ = self._param_chain(path, param, rest)
            values = self._value_chain(path, param, value)
            if base is not None:
                # u is base + param=value: the value-level rule, and the parameter rule unless
                # this value has been seen to matter
                yield max(self._combine(values), self._combine(chain_, values)), base
                continue
            other = self._other_value(path, rest, param)
            if other is not None:
                yield self._combine(chain_, values), other

    def _other_value(self, path: str, rest: QKey, param: str) -> Optional[str]:
        """A page of ``path`` with the other parameters ``rest`` and another value of ``param``."""
        group = self._by_rest.get((path, rest), {}).get(param)
        if group and group.entries:
            return group.first()
        pending = self._pending_rest.get((path, rest), {}).get(param)
        return pending[0][1] if pending else None

    def _rest_offers(self, path: str, qkey: QKey) -> Iterator[Tuple[float, str]]:
        """The pages that are this URL with one parameter more."""
        for param, group in self._by_rest.get((path, qkey), {}).items():
            chain_ = self._param_chain(path, param, qkey)
            for _h, other, value in group.entries:
                values = self._value_chain(path, param, value)
                yield max(self._combine(values), self._combine(chain_, values)), other
        for param, pending in self._pending_rest.get((path, qkey), {}).items():
            chain_ = self._param_chain(path, param, qkey)
            for value, other in pending:
                values = self._value_chain(path, param, value)
                yield max(self._combine(values), self._combine(chain_, values)), other

    def _forget_if_unreferenced(self, canon: str, page: _Page) -> None:
        path_sample = self._by_path.get(page.path)
        if path_sample and any(e[1] == canon for e in path_sample.entries):
            return
        for param in page.query:
            group = self._by_rest.get((page.path, _qkey(page.query, param)), {}).get(param)
            if group and any(e[1] == canon for e in group.entries):
                return
        key = (page.path, _qkey(page.query))
        if self._exact.get(key) == canon:
            del self._exact[key]
        del self._pages[canon]
        if canon not in self._pending:
            self._urls.pop(canon, None)
