"""The exact Hamming join and the union-find the candidate graph is merged into.

:func:`hamming_pairs` finds every pair of 64-bit values within a Hamming distance, exactly, by
multi-index hashing (see :mod:`scrapy_websim.core.match.cluster` for how the clustering uses it);
:func:`_union` / :func:`_compress` merge pairs into components chunk by chunk. Pure numpy; on
large inputs the probes of each part run in :mod:`scrapy_websim.core.match.hamming_kernel` when numba
is installed (the same pairs; docs/clustering.md "Cost" gives the figures).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from . import hamming_kernel

#: Bit layout of the multi-index parts: (shift, width).
_PARTS = ((0, 21), (21, 21), (42, 22))
#: Bound on the pairs materialised at once while expanding candidates (memory, not results).
_CHUNK_PAIRS = 1 << 22
#: Fewer distinct values than this: :func:`hamming_pairs` ignores ``labels`` (the skipping's
#: tables cost more than it saves on small inputs).
_LABEL_MIN_VALUES = 20_000
#: From this many distinct values on, :func:`hamming_pairs` runs the compiled probe loop of
#: :mod:`scrapy_websim.core.match.hamming_kernel` when numba is installed (below it, compiling or
#: loading the kernel costs more than the numpy join).
_KERNEL_MIN_VALUES = 50_000

# --------------------------------------------------------------------------- exact Hamming join

if hasattr(np, "bitwise_count"):

    def popcount64(x: np.ndarray) -> np.ndarray:
        return np.bitwise_count(x)

else:  # numpy < 2.0
    _BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)

    def popcount64(x: np.ndarray) -> np.ndarray:
        b = np.ascontiguousarray(x, dtype=np.uint64).view(np.uint8).reshape(-1, 8)
        return _BYTE_BITS[b].sum(axis=1)


def _part_radii(k: int) -> List[int]:
    """Generalised pigeonhole radii of the 3 parts, summing to k - 2 (-1 = part not probed)."""
    radii = [-1, -1, -1]
    for i in range(k + 1):
        radii[i % 3] += 1
    return radii


def _flip_masks(width: int, radius: int) -> np.ndarray:
    masks = [0]
    for r in range(1, radius + 1):
        for bits in itertools.combinations(range(width), r):
            masks.append(sum(1 << b for b in bits))
    return np.array(masks, dtype=np.int64)


def _segments(counts: np.ndarray, limit: int) -> Iterator[Tuple[int, int]]:
    """Split positions into consecutive runs whose ``counts`` sum stays near ``limit``."""
    n = counts.shape[0]
    if n == 0:
        return
    csum = np.cumsum(counts)
    start = 0
    while start < n:
        base = csum[start - 1] if start else 0
        stop = int(np.searchsorted(csum, base + limit, side="right"))
        stop = max(stop, start + 1)
        yield start, min(stop, n)
        start = stop


def _expand(starts: np.ndarray, counts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """For each i, the positions starts[i] .. starts[i]+counts[i]-1; returns (owner, position)."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    pos = np.arange(total, dtype=np.int64)
    pos += (starts - (np.cumsum(counts) - counts))[owner]
    return owner, pos


def hamming_pairs(values: np.ndarray, k: int, labels: Optional[Callable[[], np.ndarray]] = None,
                  compiled: Optional[bool] = None) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """All index pairs (i < j) of values with Hamming distance <= k, each exactly once.

    Yields chunks of arrays. With ``labels`` (a callable returning an int64 label per value,
    called now and then while the pairs are produced), pairs whose two values have the same label
    at that moment may be left out: labels are connected components being built by the caller, so
    such pairs would add nothing. Each bucket of a part's direct-address table keeps the values of
    its most frequent label first, and a query with that label skips them without expanding: a
    large family of near-identical values then costs about its size, not its size squared.
    ``compiled``: run the parts' probes in the numba kernel (None: when numba is installed and
    there are at least :data:`_KERNEL_MIN_VALUES` values); the pairs are the same either way.
    """
    n = values.shape[0]
    if n < 2 or k <= 0:
        return
    values = values.astype(np.uint64)
    radii = _part_radii(k)
    parts = [(np.uint64(shift), width, radius) for (shift, width), radius in zip(_PARTS, radii)]
    use_labels = labels is not None and n >= _LABEL_MIN_VALUES
    if compiled is None:
        compiled = hamming_kernel.available() and n >= _KERNEL_MIN_VALUES
    for p, (shift, width, radius) in enumerate(parts):
        if radius >= 0:
            key = ((values >> shift) & np.uint64((1 << width) - 1)).astype(np.int64)
            if compiled:
                yield from hamming_kernel.part_pairs(values, key, width, _flip_masks(width, radius), k, radii,
                                                     [s for s, _ in _PARTS], [w for _, w in _PARTS], p, labels)
                continue
            join = _PartJoin(values, key, width, k, radii, parts, p)
            yield from join.run(_flip_masks(width, radius), labels if use_labels else None)


class _PartJoin:
    """The probes of one part: its direct-address table, queried with every flip mask."""

    def __init__(self, values: np.ndarray, key: np.ndarray, width: int, k: int, radii: List[int],
                 parts: List[Tuple[Any, int, int]], p: int) -> None:
        self.values, self.width, self.k, self.radii, self.parts, self.p = values, width, k, radii, parts, p
        n = values.shape[0]
        self.counts = np.bincount(key, minlength=1 << width).astype(np.int64)
        self.starts = np.cumsum(self.counts) - self.counts
        self.key = key = key.astype(np.int32)
        self.index = np.arange(n, dtype=np.int64)
        self.by_key = np.argsort(key, kind="stable")  # queries in key order read the tables near-sequentially
        self.order = self.by_key
        self.skipping: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None
        self._small_tables()

    def _small_tables(self) -> None:
        """Per bucket: -1 empty, -2 three values or more, else its first value's index (one
        value) or -3 - that index (two values); the values themselves, and the second one's index."""
        size, counts, values, by_key = 1 << self.width, self.counts, self.values, self.by_key
        solo = np.full(size, -1, np.int32)
        solo[counts >= 3] = -2
        sorted_key = self.key[by_key]
        lone = counts[sorted_key] == 1
        solo[sorted_key[lone]] = by_key[lone]
        solo_value = np.zeros(size, np.uint64)
        solo_value[sorted_key[lone]] = values[by_key[lone]]
        pair_first = np.flatnonzero((counts[sorted_key[:-1]] == 2) & (sorted_key[:-1] == sorted_key[1:]))
        pair_key = sorted_key[pair_first]
        solo[pair_key] = -3 - by_key[pair_first]
        solo_value[pair_key] = values[by_key[pair_first]]
        duo = np.zeros(size, np.int32)
        duo[pair_key] = by_key[pair_first + 1]
        duo_value = np.zeros(size, np.uint64)
        duo_value[pair_key] = values[by_key[pair_first + 1]]
        self.solo, self.solo_value, self.duo, self.duo_value = solo, solo_value, duo, duo_value

    def _refresh(self, labels: Callable[[], np.ndarray]) -> None:
        """Re-read the labels: (bucket, not-majority, index) order as one int64 sort key."""
        key, n = self.key, self.values.shape[0]
        lab = np.asarray(labels(), dtype=np.int64)
        major_label, major_count = _majority(key, lab, 1 << self.width)
        nb = max(1, int(n).bit_length())
        order = np.sort((key.astype(np.int64) << (nb + 1)) | ((lab != major_label[key]).astype(np.int64) << nb)
                        | self.index)
        order &= (1 << nb) - 1
        self.order, self.skipping = order, (major_label, major_count, lab)

    def run(self, masks: np.ndarray, labels: Optional[Callable[[], np.ndarray]]
            ) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        # by flip count, then top bit: each top bit's half of the values is built once
        schedule = sorted(masks.tolist(), key=lambda m: (bin(m).count("1"), m.bit_length()))
        leader = None
        refresh: set = set()
        if labels is not None:
            # refresh the skipping after the exact probe, after the 1-bit flips, and midway; the
            # exact probe runs twice: first the smallest value of each bucket (joining it to its
            # bucket's near values), then, refreshed, the rest (skipping those joined)
            w = self.width
            refresh = {0, 1, 2, 2 + w, (masks.shape[0] + 2 + w) // 2}
            schedule = [0] + schedule
            leader = np.zeros(self.values.shape[0], bool)
            leader[self.by_key[self.starts[self.counts > 0]]] = True
        half: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for mi, mask in enumerate(schedule):
            if mi in refresh:
                self._refresh(labels)  # type: ignore[arg-type]
            if mask == 0:
                yield from self._same_bucket(leader, mi == 0)
                continue
            # distinct buckets: only the value whose key has the mask's top bit clear queries
            # (the other one would find the same pair), which halves probes and expansions
            top = mask.bit_length() - 1
            if top not in half:
                half.clear()  # only the current top bit's half is kept (memory)
                sel = self.by_key[((self.key[self.by_key] >> top) & 1) == 0].astype(np.int32)
                half[top] = (sel, self.key[sel], self.values[sel])
            yield from self._flipped(*half[top], mask)

    def _same_bucket(self, leader: Optional[np.ndarray], first: bool) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        """Same bucket: both directions are queried, i < j keeps each pair once."""
        hit = self.counts[self.key] >= 2
        if leader is not None:
            hit &= leader if first else ~leader
        queries = np.flatnonzero(hit)
        yield from _bucket_pairs(queries, self.key[queries], True, self.counts, self.starts, self.order, self.values,
                                 self.k, self.radii, self.parts, self.p, self.skipping)

    def _flipped(self, sel: np.ndarray, skey: np.ndarray, svalue: np.ndarray,
                 mask: int) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        probe = skey ^ mask
        single = self.solo[probe]
        # fast path for the usual chance hits, buckets of one or two values: no expansion and
        # no index read until the distance passes
        h1 = np.flatnonzero(single >= 0)
        h2 = np.flatnonzero(single <= -3)
        p2 = probe[h2]
        yield from self._small(sel, svalue, h1, self.solo_value[probe[h1]], lambda hk, keep: single[hk])
        yield from self._small(sel, svalue, h2, self.solo_value[p2], lambda hk, keep: -3 - single[hk])
        yield from self._small(sel, svalue, h2, self.duo_value[p2], lambda hk, keep: self.duo[p2[keep]])
        hm = np.flatnonzero(single == -2)  # three values or more: expanded
        if hm.shape[0]:
            yield from _bucket_pairs(sel[hm], probe[hm], False, self.counts, self.starts, self.order, self.values,
                                     self.k, self.radii, self.parts, self.p, self.skipping)

    def _small(self, sel: np.ndarray, svalue: np.ndarray, h: np.ndarray, found_value: np.ndarray,
               found_index: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        """Queries ``h`` against the one value each found in a small bucket."""
        if not h.shape[0]:
            return
        x = svalue[h] ^ found_value
        keep = np.flatnonzero(popcount64(x) <= self.k)
        if not keep.shape[0]:
            return
        hk = h[keep]
        i, j, x = sel[hk].astype(np.int64), found_index(hk, keep).astype(np.int64), x[keep]
        ok = _first_part(x, self.radii, self.parts, self.p)
        if self.skipping is not None:
            lab = self.skipping[2]
            ok &= lab[i] != lab[j]
        if ok.any():
            i, j = i[ok], j[ok]
            yield np.minimum(i, j), np.maximum(i, j)


def _first_part(x: np.ndarray, radii: List[int], parts: List[Tuple[Any, int, int]], p: int) -> np.ndarray:
    """Keep a pair (by its xor ``x``) only in the first part where it is within that part's radius."""
    keep = np.ones(x.shape[0], bool)
    for q in range(p):
        if radii[q] >= 0:
            sq, wq, _ = parts[q]
            keep &= popcount64((x >> sq) & np.uint64((1 << wq) - 1)) > radii[q]
    return keep


def _bucket_pairs(queries, probe, same_bucket, counts, starts, order, values, k, radii, parts, p, skipping):
    """Expand each query against the values of its probed bucket and keep the pairs within k."""
    qcnt = counts[probe]
    first = starts[probe]
    if skipping is not None:
        major_label, major_count, lab = skipping
        skip = np.where(major_label[probe] == lab[queries], major_count[probe], 0)
        qcnt = qcnt - skip
        first = first + skip
        left = qcnt > 0
        queries, qcnt, first = queries[left], qcnt[left], first[left]
    if queries.shape[0] == 0:
        return
    for lo, hi in _segments(qcnt, _CHUNK_PAIRS):
        owner, pos = _expand(first[lo:hi], qcnt[lo:hi])
        i = queries[lo:hi][owner]
        j = order[pos]
        if same_bucket:
            keep = i < j
            i, j = i[keep], j[keep]
        x = values[i] ^ values[j]
        keep = popcount64(x) <= k
        # most probes are chance collisions of one part: drop them before the part tests
        i, j, x = i[keep], j[keep], x[keep]
        keep = _first_part(x, radii, parts, p)
        if keep.any():
            i, j = i[keep], j[keep]
            if not same_bucket:
                i, j = np.minimum(i, j), np.maximum(i, j)
            yield i, j


def _majority(key: np.ndarray, lab: np.ndarray, size: int) -> Tuple[np.ndarray, np.ndarray]:
    """Per bucket: its most frequent label (a value no label takes where empty) and its count;
    ties go to the smallest label. ``key`` < ``size``; one int64 sort when (key, label) fit."""
    major_label = np.full(size, np.iinfo(np.int64).min, np.int64)
    major_count = np.zeros(size, np.int64)
    if key.shape[0] == 0:
        return major_label, major_count
    lab = lab.astype(np.int64)
    low = int(lab.min())
    lbits = max(1, (int(lab.max()) - low).bit_length())
    if lbits + max(1, (size - 1).bit_length()) <= 62:
        comb = np.sort((key.astype(np.int64) << lbits) | (lab - low))
        sk, sl = comb >> lbits, (comb & ((1 << lbits) - 1)) + low
    else:
        o = np.lexsort((lab, key))
        sk, sl = key[o].astype(np.int64), lab[o]
    new = np.ones(sk.shape[0], bool)
    new[1:] = (sk[1:] != sk[:-1]) | (sl[1:] != sl[:-1])
    run_start = np.flatnonzero(new)
    run_len = np.diff(np.append(run_start, sk.shape[0]))
    run_key = sk[run_start]
    # runs are sorted by (key, label): per key, the first run of maximal length
    first = np.ones(run_key.shape[0], bool)
    first[1:] = run_key[1:] != run_key[:-1]
    group_start = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    longest = np.maximum.reduceat(run_len, group_start)
    cand = np.where(run_len == longest[group], np.arange(run_len.shape[0]), run_len.shape[0])
    best = np.minimum.reduceat(cand, group_start)
    major_label[run_key[best]] = sl[run_start[best]]
    major_count[run_key[best]] = run_len[best]
    return major_label, major_count




def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; numpy's hash-based unique is far slower here)."""
    values = np.sort(values, kind="stable" if values.dtype.itemsize <= 2 else "quicksort")
    if values.shape[0] < 2:
        return values
    keep = np.empty(values.shape[0], bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _length_ok(la: np.ndarray, lb: np.ndarray, diff: float, noise: int = 0) -> np.ndarray:
    """The candidate length check: the texts differ by at most ``diff`` of the longer, or by at
    most ``noise`` characters. For a fixed page the lengths that pass form one range around its own
    (both bounds grow with the length), so pages sorted by length stay an interval graph."""
    la = la.astype(np.float64)
    lb = lb.astype(np.float64)
    longer = np.maximum(la, lb)
    return (longer - np.minimum(la, lb)) <= np.maximum(diff * longer, noise)


def _compress(parent: np.ndarray) -> np.ndarray:
    """Point every node at its root (pointer jumping until stable)."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return parent
        parent = grand


def _find(parent: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Roots of the nodes ``x`` (following parents on these nodes only)."""
    r = parent[x]
    while True:
        up = parent[r]
        if np.array_equal(up, r):
            return r
        r = up


def _union(parent: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Merge the components of the pairs (a[i], b[i]); the smallest node of a component is its
    root. Only the nodes of the pairs are visited (a small batch costs its size, not n), so
    ``parent`` is a forest afterwards: :func:`_compress` it before reading roots directly."""
    while a.shape[0]:
        ra, rb = _find(parent, a), _find(parent, b)
        parent[a], parent[b] = ra, rb  # shorten the paths just walked
        differ = ra != rb
        if not differ.any():
            break
        a, b, ra, rb = a[differ], b[differ], ra[differ], rb[differ]
        # hook roots to smaller roots; with several candidates one wins, the rest retry
        parent[np.maximum(ra, rb)] = np.minimum(ra, rb)
    return parent
