"""Exact, near-linear, deterministic canonical-centred clustering of eligible pages (SPEC section 6).

Input is compact: :class:`ClusterKeys` holds numpy arrays (id, SimHash, pHash, text length, status,
host index) of the *eligible* pages only, built by :func:`build_keys` from PageRecords or from the
key rows that :class:`scrapy_websim.core.store.FeatureStore` keeps in columns. The real duplicate
decision is a callback ``compare(a_id, b_id) -> PairResult`` supplied by the caller; it is called
with the canonical first and only on candidate pairs.

Candidate graph
    Two eligible pages are a *candidate pair* when (``same_host_only`` off, or same host) and
    either

    * text pre-filter: both have a SimHash, Hamming distance <= ``simhash_distance`` (8) and
      ``longer - shorter <= length_diff * longer`` on the main-text lengths (50 %), or
    * visual fallback: both have a pHash within ``visual_distance`` (0 = identical, matching
      rule 2's default 0.99 threshold; see :func:`phash_distance_for`), whatever the texts.

    The pairs are found exactly, never by lossy banding. Pages with identical hashes are kept as
    *groups* (an identical-pHash group is a clique; an identical-SimHash group is an interval graph
    on text length, whose neighbourhoods are contiguous ranges once sorted by length), so a
    thousand copies of one page cost O(n log n), not a million pairs. Distinct hash values within
    the distance are joined with multi-index hashing under the generalised pigeonhole principle:
    the 64 bits are cut into 3 parts (21/21/22 bits) with per-part radii summing to k - 2 (2/2/2 for
    k = 8), so any pair within distance k is within its radius in at least one part; each value
    probes the direct-address tables of the parts with every flip mask up to the radius, and a pair
    is kept only from the first part that qualifies, so it is produced exactly once. The result
    is, by construction, the same edge set as testing all n^2/2 pairs.

What a "group" is (the reading of SPEC section 6 chosen here)
    A group is a connected component of the candidate graph. Pass 1: in each group of two or more
    pages the canonical is the best page (status 200 first, then longest text, then smallest id);
    it is compared with each of its candidate neighbours in the group (never with pages the
    pre-filter rejects, never member-to-member, so A~B~C does not chain A and C), and those the
    decision calls duplicates join its cluster. Pass 2 ("compare the pages left unmerged among
    themselves once more"): the canonical and its merged pages leave; the remaining pages form
    the candidate graph restricted to them, whose components are the new groups, handled the same
    way. ``passes`` = 2 is SPEC; a larger value repeats the step, 0 repeats it until no group is
    left (every candidate pair then gets looked at by some canonical: greedy leader clustering).
    A canonical that merged nothing and the pages left after the last pass are alone: they are
    in no cluster and get no Assignment.

Determinism
    Pages are indexed in id order and every tie is broken by id, so the clusters, their ids
    ("cluster-00001", ... numbered by the smallest member id) and the compared pairs do not depend
    on the input order, crawl order or concurrency. Ids must be unique.
"""

from __future__ import annotations

import array
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

import numpy as np

from .types import Assignment, Cluster, PageRecord, PairResult

_MASK64 = (1 << 64) - 1
#: Bit layout of the multi-index parts: (shift, width).
_PARTS = ((0, 21), (21, 21), (42, 22))
#: Bound on the pairs materialised at once while expanding candidates (memory, not results).
_CHUNK_PAIRS = 1 << 22

CompareFn = Callable[[int, int], PairResult]


@dataclass(frozen=True)
class ClusterParams:
    """Parameters of eligibility, candidate generation and the canonical-centred passes."""

    simhash_distance: int = 8  # text pre-filter: max SimHash Hamming distance (0..11)
    length_diff: float = 0.5  # text pre-filter: max (longer - shorter) / longer (0.0..1.0)
    visual_distance: int = 0  # visual-fallback candidates: max pHash distance, -1 = off (-1..11)
    same_host_only: bool = False  # only pages of the same host (seed behaviour)
    passes: int = 2  # canonical-centred passes per group; 0 = until no group is left (0..1000)
    min_html_len: int = 1024  # eligibility: rendered HTML bytes (>= 0)
    min_text_len: int = 200  # eligibility: main-text characters (>= 0)

    def validate(self) -> "ClusterParams":
        def check(ok: bool, name: str, valid: str) -> None:
            if not ok:
                raise ValueError(f"ClusterParams.{name}={getattr(self, name)!r}: valid range is {valid}")

        check(_is_int(self.simhash_distance) and 0 <= self.simhash_distance <= 11, "simhash_distance", "0..11")
        check(
            isinstance(self.length_diff, (int, float)) and not isinstance(self.length_diff, bool)
            and 0.0 <= self.length_diff <= 1.0,
            "length_diff",
            "0.0..1.0",
        )
        check(_is_int(self.visual_distance) and -1 <= self.visual_distance <= 11, "visual_distance", "-1..11")
        check(isinstance(self.same_host_only, bool), "same_host_only", "True or False")
        check(_is_int(self.passes) and 0 <= self.passes <= 1000, "passes", "0..1000 (0 = until done)")
        check(_is_int(self.min_html_len) and self.min_html_len >= 0, "min_html_len", ">= 0")
        check(_is_int(self.min_text_len) and self.min_text_len >= 0, "min_text_len", ">= 0")
        return self


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


DEFAULT_PARAMS = ClusterParams()


def phash_distance_for(visual_threshold: float, scale: int = 20) -> int:
    """Largest pHash distance d with ``1 - d/scale >= visual_threshold`` (rule 2's candidates)."""
    if not 0.0 <= visual_threshold <= 1.0:
        raise ValueError(f"visual_threshold={visual_threshold!r}: valid range is 0.0..1.0")
    d = int((1.0 - visual_threshold) * scale + 1e-9)
    while d > 0 and 1.0 - d / scale < visual_threshold:
        d -= 1
    return d


# --------------------------------------------------------------------------- eligibility and keys

#: Columns of a key row, as kept by the feature store and read by :func:`build_keys`.
KEY_FIELDS = ("id", "status_code", "content_type", "html_len", "text_len", "error", "simhash", "phash", "host")
KeyRow = Tuple[int, int, str, int, int, str, Optional[int], Optional[int], str]


def host_of(record: PageRecord) -> str:
    """The host used by ``same_host_only``: ``host[:port]`` of the final URL (else the URL)."""
    url = record.final_url or record.url or ""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return ""
    return netloc.rpartition("@")[2].lower()


def key_row(record: PageRecord) -> KeyRow:
    return (
        record.id,
        record.status_code,
        record.content_type or "",
        record.html_len,
        record.text_len,
        record.error or "",
        record.simhash,
        record.phash,
        host_of(record),
    )


def _row_eligible(row: Sequence[Any], params: ClusterParams) -> bool:
    _, status, ctype, html_len, text_len, error = row[:6]
    return (
        200 <= (status or 0) <= 299
        and "text/html" in (ctype or "").lower()
        and (html_len or 0) >= params.min_html_len
        and (text_len or 0) >= params.min_text_len
        and not error
    )


def is_eligible(record: PageRecord, params: ClusterParams = DEFAULT_PARAMS) -> bool:
    """SPEC section 6: status 2xx, content type contains text/html, HTML >= 1 KB, main text >= 200
    characters, and no error."""
    return _row_eligible(key_row(record), params)


@dataclass
class ClusterKeys:
    """Compact clustering input: one entry per eligible page, in id order."""

    ids: np.ndarray  # int64, strictly increasing
    status: np.ndarray  # int32
    text_len: np.ndarray  # int64
    simhash: np.ndarray  # uint64 (0 where missing)
    has_simhash: np.ndarray  # bool
    phash: np.ndarray  # uint64 (0 where missing)
    has_phash: np.ndarray  # bool
    host: np.ndarray  # int32 index into ``hosts``
    hosts: List[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @classmethod
    def from_arrays(
        cls,
        ids: Sequence[int],
        simhash: Sequence[Optional[int]],
        text_len: Sequence[int],
        phash: Optional[Sequence[Optional[int]]] = None,
        status: Optional[Sequence[int]] = None,
        host: Optional[Sequence[int]] = None,
    ) -> "ClusterKeys":
        """Keys of pages already known to be eligible (tests, benchmarks, custom callers)."""
        n = len(ids)
        sim = np.array([_MASK64 if v is None else v for v in simhash], dtype=np.uint64) if not isinstance(
            simhash, np.ndarray
        ) else simhash.astype(np.uint64)
        has_sim = np.array([v is not None for v in simhash], dtype=bool) if not isinstance(
            simhash, np.ndarray
        ) else np.ones(n, bool)
        if phash is None:
            ph, has_ph = np.zeros(n, np.uint64), np.zeros(n, bool)
        elif isinstance(phash, np.ndarray):
            ph, has_ph = phash.astype(np.uint64), np.ones(n, bool)
        else:
            ph = np.array([0 if v is None else v for v in phash], dtype=np.uint64)
            has_ph = np.array([v is not None for v in phash], dtype=bool)
        st = np.full(n, 200, np.int32) if status is None else np.asarray(status, dtype=np.int32)
        ho = np.zeros(n, np.int32) if host is None else np.asarray(host, dtype=np.int32)
        sim = np.where(has_sim, sim, np.uint64(0))
        return cls._sorted(np.asarray(ids, dtype=np.int64), st, np.asarray(text_len, dtype=np.int64),
                           sim, has_sim, ph, has_ph, ho, [])

    @classmethod
    def _sorted(cls, ids, status, text_len, sim, has_sim, ph, has_ph, host, hosts) -> "ClusterKeys":
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        if ids.shape[0] > 1 and bool((ids[1:] == ids[:-1]).any()):
            dup = int(ids[1:][ids[1:] == ids[:-1]][0])
            raise ValueError(f"duplicate page id {dup} in clustering input")
        return cls(ids, status[order], text_len[order], sim[order], has_sim[order], ph[order],
                   has_ph[order], host[order], hosts)


def build_keys(items: Iterable[Union[PageRecord, Sequence[Any]]], params: ClusterParams = DEFAULT_PARAMS) -> ClusterKeys:
    """Compact keys of the eligible pages among ``items`` (PageRecords or :data:`KEY_FIELDS` rows).

    Streams: holds ~40 bytes per eligible page, never the records themselves.
    """
    ids, status, tlen = array.array("q"), array.array("i"), array.array("q")
    sim, has_sim, ph, has_ph, host = array.array("Q"), array.array("b"), array.array("Q"), array.array("b"), array.array("i")
    host_index: Dict[str, int] = {}
    for item in items:
        row = key_row(item) if isinstance(item, PageRecord) else item
        if not _row_eligible(row, params):
            continue
        ids.append(int(row[0]))
        status.append(int(row[1]))
        tlen.append(int(row[4]))
        s, p = row[6], row[7]
        sim.append(0 if s is None else int(s) & _MASK64)
        has_sim.append(s is not None)
        ph.append(0 if p is None else int(p) & _MASK64)
        has_ph.append(p is not None)
        host.append(host_index.setdefault(row[8] or "", len(host_index)))
    hosts = [""] * len(host_index)
    for name, index in host_index.items():
        hosts[index] = name

    def arr(a: array.array, dtype: Any) -> np.ndarray:
        return np.frombuffer(a, dtype=dtype).copy() if len(a) else np.zeros(0, dtype)

    return ClusterKeys._sorted(
        arr(ids, np.int64), arr(status, np.int32), arr(tlen, np.int64), arr(sim, np.uint64),
        arr(has_sim, np.int8).astype(bool), arr(ph, np.uint64), arr(has_ph, np.int8).astype(bool),
        arr(host, np.int32), hosts,
    )


# --------------------------------------------------------------------------- exact Hamming join

if hasattr(np, "bitwise_count"):

    def popcount64(x: np.ndarray) -> np.ndarray:
        return np.bitwise_count(x).astype(np.int64)

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
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, starts[owner] + offsets


def hamming_pairs(values: np.ndarray, k: int) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """All index pairs (i < j) of *distinct* values with Hamming distance <= k, each exactly once.

    ``values`` must hold distinct uint64 values (use np.unique first). Yields chunks of arrays.
    """
    n = values.shape[0]
    if n < 2 or k <= 0:
        return
    values = values.astype(np.uint64)
    radii = _part_radii(k)
    parts = [(np.uint64(shift), width, radius) for (shift, width), radius in zip(_PARTS, radii)]
    keys = [((values >> shift) & np.uint64((1 << width) - 1)).astype(np.int64) for shift, width, _ in parts]
    for p, (shift, width, radius) in enumerate(parts):
        if radius < 0:
            continue
        key = keys[p]
        order = np.argsort(key, kind="stable")
        counts = np.bincount(key, minlength=1 << width).astype(np.int64)
        starts = np.cumsum(counts) - counts
        for mask in _flip_masks(width, radius):
            probe = key ^ mask
            cnt = counts[probe]
            queries = np.nonzero(cnt)[0]
            if queries.shape[0] == 0:
                continue
            qcnt = cnt[queries]
            for lo, hi in _segments(qcnt, _CHUNK_PAIRS):
                owner, pos = _expand(starts[probe[queries[lo:hi]]], qcnt[lo:hi])
                i = queries[lo:hi][owner]
                j = order[pos]
                keep = i < j
                i, j = i[keep], j[keep]
                x = values[i] ^ values[j]
                keep = popcount64(x) <= k
                # keep the pair only in the first part where it is within that part's radius
                for q in range(p):
                    if radii[q] >= 0:
                        sq, wq, _ = parts[q]
                        part_bits = (x >> sq) & np.uint64((1 << wq) - 1)
                        keep &= popcount64(part_bits) > radii[q]
                if keep.any():
                    yield i[keep], j[keep]


# --------------------------------------------------------------------------- candidate graph


@dataclass
class _Groups:
    """Pages sharing an identical hash: ``nodes`` sorted by (group, text length, node)."""

    nodes: np.ndarray  # int64 node index per position
    gid: np.ndarray  # int64 group number per position (non-decreasing)
    check_len: bool  # True: interval graph on length (SimHash groups); False: clique (pHash groups)


@dataclass
class _Graph:
    n: int
    ea: np.ndarray  # explicit edges (ea < eb), distinct hash values
    eb: np.ndarray
    groups: List[_Groups]


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; numpy's hash-based unique is far slower here)."""
    values = np.sort(values, kind="stable" if values.dtype.itemsize <= 2 else "quicksort")
    if values.shape[0] < 2:
        return values
    keep = np.empty(values.shape[0], bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _length_ok(la: np.ndarray, lb: np.ndarray, diff: float) -> np.ndarray:
    la = la.astype(np.float64)
    lb = lb.astype(np.float64)
    longer = np.maximum(la, lb)
    return (longer - np.minimum(la, lb)) <= diff * longer


def _identical_groups(keys: ClusterKeys, values: np.ndarray, mask: np.ndarray, check_len: bool,
                      same_host: bool) -> Tuple[_Groups, np.ndarray, np.ndarray]:
    """Groups of >= 2 pages with the same value (and host); also the unique values and the
    per-node index of its unique value (-1 where masked)."""
    nodes = np.nonzero(mask)[0]
    uniq, inverse = np.unique(values[nodes], return_inverse=True)
    inverse = inverse.reshape(-1)
    sub = keys.host[nodes] if same_host else np.zeros(nodes.shape[0], np.int32)
    order = np.lexsort((nodes, keys.text_len[nodes], sub, inverse))
    g_val, g_sub, g_nodes = inverse[order], sub[order], nodes[order]
    new = np.ones(g_nodes.shape[0], bool)
    if g_nodes.shape[0]:
        new[1:] = (g_val[1:] != g_val[:-1]) | (g_sub[1:] != g_sub[:-1])
    gid = np.cumsum(new) - 1
    sizes = np.bincount(gid) if gid.shape[0] else np.zeros(0, np.int64)
    keep = sizes[gid] >= 2 if gid.shape[0] else np.zeros(0, bool)
    value_index = np.full(keys.ids.shape[0], -1, np.int64)
    value_index[nodes] = inverse
    return _Groups(g_nodes[keep], gid[keep], check_len), uniq, value_index


def _value_pair_edges(uniq: np.ndarray, value_index: np.ndarray, k: int) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
    """Node pairs whose (distinct) values are within distance k, expanded chunk by chunk."""
    nodes = np.nonzero(value_index >= 0)[0]
    order = nodes[np.argsort(value_index[nodes], kind="stable")]
    counts = np.bincount(value_index[nodes], minlength=uniq.shape[0]).astype(np.int64)
    starts = np.cumsum(counts) - counts
    for ua, ub in hamming_pairs(uniq, k):
        ca, cb = counts[ua], counts[ub]
        tot = ca * cb
        for lo, hi in _segments(tot, _CHUNK_PAIRS):
            owner, off = _expand(np.zeros(hi - lo, np.int64), tot[lo:hi])
            cbo = cb[lo:hi][owner]
            a = order[starts[ua[lo:hi]][owner] + off // cbo]
            b = order[starts[ub[lo:hi]][owner] + off % cbo]
            yield np.minimum(a, b), np.maximum(a, b)


def _build_graph(keys: ClusterKeys, params: ClusterParams) -> _Graph:
    n = len(keys)
    ea_parts: List[np.ndarray] = []
    eb_parts: List[np.ndarray] = []
    groups: List[_Groups] = []
    same_host = params.same_host_only

    def add(a: np.ndarray, b: np.ndarray, keep: np.ndarray) -> None:
        if same_host:
            keep &= keys.host[a] == keys.host[b]
        if keep.any():
            ea_parts.append(a[keep])
            eb_parts.append(b[keep])

    g, uniq, vidx = _identical_groups(keys, keys.simhash, keys.has_simhash, True, same_host)
    groups.append(g)
    for a, b in _value_pair_edges(uniq, vidx, params.simhash_distance):
        add(a, b, _length_ok(keys.text_len[a], keys.text_len[b], params.length_diff))
    if params.visual_distance >= 0:
        g, uniq, vidx = _identical_groups(keys, keys.phash, keys.has_phash, False, same_host)
        groups.append(g)
        for a, b in _value_pair_edges(uniq, vidx, params.visual_distance):
            add(a, b, np.ones(a.shape[0], bool))
    if ea_parts:
        packed = _sorted_unique(np.concatenate(ea_parts) * n + np.concatenate(eb_parts))
        ea, eb = packed // n, packed % n
    else:
        ea = eb = np.zeros(0, np.int64)
    return _Graph(n, ea, eb, groups)


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label (smallest node index) of every node, by hooking and jumping."""
    parent = np.arange(n, dtype=np.int64)
    while a.shape[0]:
        pa, pb = parent[a], parent[b]
        lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
        differ = lo != hi
        if not differ.any():
            break
        a, b = a[differ], b[differ]
        # hook roots to smaller roots; with several candidates any one wins (the rest are
        # hooked in a later round), and the smallest node of a component ends as its root
        parent[hi[differ]] = lo[differ]
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent


def _active_group_view(group: _Groups, active: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    keep = active[group.nodes]
    return group.nodes[keep], group.gid[keep]


def _pass_edges(graph: _Graph, keys: ClusterKeys, active: np.ndarray, diff: float) -> Tuple[np.ndarray, np.ndarray]:
    """Edges spanning the candidate graph restricted to the active pages (same components)."""
    keep = active[graph.ea] & active[graph.eb]
    ea_list, eb_list = [graph.ea[keep]], [graph.eb[keep]]
    for group in graph.groups:
        nodes, gid = _active_group_view(group, active)
        if nodes.shape[0] < 2:
            continue
        a, b = nodes[:-1], nodes[1:]
        link = gid[:-1] == gid[1:]
        if group.check_len:
            link &= _length_ok(keys.text_len[a], keys.text_len[b], diff)
        ea_list.append(a[link])
        eb_list.append(b[link])
    return np.concatenate(ea_list), np.concatenate(eb_list)


def _canonical_pairs(graph: _Graph, keys: ClusterKeys, active: np.ndarray, is_canon: np.ndarray,
                     diff: float) -> np.ndarray:
    """Sorted unique (canonical, active neighbour) pairs packed as c * n + m."""
    n = graph.n
    packed: List[np.ndarray] = []
    keep = active[graph.ea] & active[graph.eb]
    ea, eb = graph.ea[keep], graph.eb[keep]
    packed.append(ea[is_canon[ea]] * n + eb[is_canon[ea]])
    packed.append(eb[is_canon[eb]] * n + ea[is_canon[eb]])
    for group in graph.groups:
        nodes, gid = _active_group_view(group, active)
        canon_pos = np.nonzero(is_canon[nodes])[0]
        if canon_pos.shape[0] == 0:
            continue
        lens = keys.text_len[nodes]
        c_gid = gid[canon_pos]
        if group.check_len:
            combined = (gid << 32) | np.minimum(lens, (1 << 32) - 1)
            lc = lens[canon_pos].astype(np.float64)
            low = np.floor(lc * (1.0 - diff)).astype(np.int64) - 1
            high = np.where(diff < 1.0, np.ceil(lc / max(1.0 - diff, 1e-12)), 2.0 ** 32).astype(np.int64) + 1
            low = np.clip(low, 0, (1 << 32) - 1)
            high = np.clip(high, 0, (1 << 32) - 1)
            lo = np.searchsorted(combined, (c_gid << 32) | low, side="left")
            hi = np.searchsorted(combined, (c_gid << 32) | high, side="right")
        else:
            lo = np.searchsorted(gid, c_gid, side="left")
            hi = np.searchsorted(gid, c_gid, side="right")
        owner, pos = _expand(lo.astype(np.int64), (hi - lo).astype(np.int64))
        c, m = nodes[canon_pos[owner]], nodes[pos]
        ok = c != m
        if group.check_len:
            ok &= _length_ok(keys.text_len[c], keys.text_len[m], diff)
        packed.append(c[ok] * n + m[ok])
    return _sorted_unique(np.concatenate(packed))


# --------------------------------------------------------------------------- clustering


@dataclass
class ClusterStats:
    eligible: int = 0
    explicit_edges: int = 0  # candidate pairs between distinct hash values
    compared: int = 0  # calls of ``compare``
    passes_run: int = 0
    clusters: int = 0
    clustered_pages: int = 0


@dataclass
class ClusterResult:
    assignments: Dict[int, Assignment]  # only pages in a cluster
    clusters: List[Cluster]  # kind "content", numbered by smallest member id
    stats: ClusterStats


_CANONICAL_SIMS = (1.0, 1.0, 1.0, 1.0)


def cluster(
    records_or_keys: Union[ClusterKeys, Iterable[Union[PageRecord, Sequence[Any]]]],
    compare: CompareFn,
    params: ClusterParams = DEFAULT_PARAMS,
    url_of: Optional[Callable[[int], str]] = None,
) -> ClusterResult:
    """Cluster the eligible pages. ``compare(canonical_id, member_id)`` is the real decision.

    ``records_or_keys``: a :class:`ClusterKeys` (taken as already eligible) or an iterable of
    PageRecords / key rows (filtered with :func:`is_eligible`). ``url_of(id)`` fills
    ``Cluster.canonical_url`` (left "" without it; PageRecord input fills it itself).
    """
    params.validate()
    if isinstance(records_or_keys, ClusterKeys):
        keys = records_or_keys
    else:
        urls: Dict[int, str] = {}
        items = records_or_keys

        def remember() -> Iterator[Any]:
            for item in items:
                if isinstance(item, PageRecord):
                    urls[item.id] = item.url
                yield item

        keys = build_keys(remember(), params)
        if url_of is None and urls:
            url_of = urls.get  # type: ignore[assignment]
    stats = ClusterStats(eligible=len(keys))
    n = len(keys)
    graph = _build_graph(keys, params)
    stats.explicit_edges = int(graph.ea.shape[0])
    # canonical preference: status 200 first, then longest text, then smallest id (= node index)
    order = np.lexsort((np.arange(n), -keys.text_len, (keys.status != 200).astype(np.int8)))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)

    active = np.ones(n, bool)
    members: Dict[int, List[Tuple[int, PairResult]]] = {}
    pass_no = 0
    while active.any() and (params.passes == 0 or pass_no < params.passes):
        pass_no += 1
        a, b = _pass_edges(graph, keys, active, params.length_diff)
        labels = _components(n, a, b)
        touched = np.zeros(n, bool)
        touched[a] = True
        touched[b] = True
        active &= touched  # pages with no candidate left are alone
        nodes = np.nonzero(active)[0]
        if nodes.shape[0] == 0:
            break
        lab = labels[nodes]
        by = nodes[np.lexsort((rank[nodes], lab))]
        first = np.ones(by.shape[0], bool)
        first[1:] = labels[by[1:]] != labels[by[:-1]]
        is_canon = np.zeros(n, bool)
        is_canon[by[first]] = True
        pairs = _canonical_pairs(graph, keys, active, is_canon, params.length_diff)
        done = is_canon.copy()
        ids = keys.ids
        for c, m in zip((pairs // n).tolist(), (pairs % n).tolist()):
            result = compare(int(ids[c]), int(ids[m]))
            stats.compared += 1
            if result.is_duplicate:
                members.setdefault(c, []).append((m, result))
                done[m] = True
        active &= ~done
    stats.passes_run = pass_no

    found = sorted((min([c] + [m for m, _ in ms]), c) for c, ms in members.items())
    assignments: Dict[int, Assignment] = {}
    clusters: List[Cluster] = []
    for number, (_, c) in enumerate(found, start=1):
        cluster_id = f"cluster-{number:05d}"
        canon_id = int(keys.ids[c])
        assignments[canon_id] = Assignment(
            cluster_id, True, "content", "canonical", PairResult(*_CANONICAL_SIMS, True, "")
        )
        member_ids = [canon_id]
        for m, result in members[c]:
            mid = int(keys.ids[m])
            member_ids.append(mid)
            assignments[mid] = Assignment(cluster_id, False, "content", result.rule or "duplicate", result)
        clusters.append(Cluster(cluster_id, canon_id, url_of(canon_id) if url_of else "", sorted(member_ids), "content"))
    stats.clusters = len(clusters)
    stats.clustered_pages = len(assignments)
    return ClusterResult(assignments, clusters, stats)


def cluster_labels(result: ClusterResult) -> Dict[int, str]:
    """page id -> cluster id, for the clustered pages (handy for comparisons)."""
    return {page_id: a.cluster_id for page_id, a in result.assignments.items()}
