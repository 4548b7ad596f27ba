"""Exact, near-linear, deterministic canonical-centred clustering of eligible pages.

:class:`ClusterKeys` holds numpy arrays (id, SimHash, pHash, text length, status, host index) of
the eligible pages only (:func:`build_keys`). Candidate pairs are found exactly, by multi-index
hashing, and merged into a union-find as they are found (memory O(n)); each connected component is
a group whose canonical (the best page) is compared, through the caller's
``compare(a_id, b_id) -> PairResult``, with its candidate neighbours only (no chaining). The pages
left are grouped and handled again. Every tie is broken by id, so the clusters do not depend on
input order. docs/clustering.md ("The algorithm in detail") explains each step.
"""

from __future__ import annotations

import array
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

import numpy as np

from ..fingerprints import text_hash
from ..params.match import ClusterParams
from ..types import MASK64, Assignment, Cluster, PageRecord, PairResult, is_html_type
from .candidates import (
    _compress,
    _expand,
    _length_ok,
    _segments,
    _union,
    hamming_pairs,
    popcount64,
)
from .copies import attach_exact_copies, copy_counts, exact_representatives

CompareFn = Callable[[int, int], PairResult]


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
KEY_FIELDS = ("id", "status_code", "content_type", "html_len", "text_len", "error", "simhash", "phash", "host",
              "text_hash", "heading")
KeyRow = Tuple[int, int, str, int, int, str, Optional[int], Optional[int], str, Optional[int], Optional[int]]


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
        record.text_hash,
        heading_key(record),
    )


def heading_key(record: PageRecord) -> Optional[int]:
    """64-bit hash of what the page says it is: its first ``<h1>`` (``signals["h1"]``), or on a
    page without one its ``<title>`` (DocBook and many CMS pages head their content with h2 or a
    styled div); case, spacing and punctuation folded. None when it has neither. A noisy copy keeps
    both while its inserted blocks move its SimHash 10-23 bits (bench/textsim.py)."""
    h1 = record.signals.get("h1", "") if isinstance(record.signals, dict) else ""
    if h1:
        return text_hash(h1) or None
    title = (record.title or "").strip()
    if not title:
        return None
    return text_hash("\x00title " + title) or None


def _row_eligible(row: Sequence[Any], params: ClusterParams, item: bool = False) -> bool:
    _, status, ctype, html_len, text_len, error = row[:6]
    return (
        200 <= (status or 0) <= 299
        and is_html_type(ctype)
        and (html_len or 0) >= params.min_html_len
        and (text_len or 0) >= (1 if item else params.min_text_len)
        and not error
    )


def is_eligible(record: PageRecord, params: ClusterParams = DEFAULT_PARAMS, item: bool = False) -> bool:
    """Eligible: status 2xx, an HTML or XHTML content type, HTML >= 1 KB, main text >= 200
    characters (any text for an ``item`` of its site: one of many pages of one structure there,
    :meth:`~scrapy_websim.core.match.template.Templates.is_item`), and no error."""
    return _row_eligible(key_row(record), params, item)


def _hash_column(values: Optional[Sequence[Optional[int]]], n: int, missing: int) -> Tuple[np.ndarray, np.ndarray]:
    """A uint64 hash column and its presence mask from an array (all present), a sequence with
    None for missing (``missing`` there) or None (none present, zeros)."""
    if values is None:
        return np.zeros(n, np.uint64), np.zeros(n, bool)
    if isinstance(values, np.ndarray):
        return values.astype(np.uint64), np.ones(n, bool)
    return (np.array([missing if v is None else v for v in values], dtype=np.uint64),
            np.array([v is not None for v in values], dtype=bool))


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
    #: uint64 exact-copy hash of the main text (``PageRecord.text_hash``), 0 where missing; pages
    #: sharing a non-zero value always end in one cluster (see :func:`cluster`). None: no hashes.
    exact: Optional[np.ndarray] = None
    #: uint64 hash of the first h1, or the title without one (:func:`heading_key`), 0 where
    #: missing; None: no headings.
    heading: Optional[np.ndarray] = None

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
        exact: Optional[Sequence[Optional[int]]] = None,
        heading: Optional[Sequence[Optional[int]]] = None,
    ) -> "ClusterKeys":
        """Keys of pages already known to be eligible (tests, benchmarks, custom callers)."""
        n = len(ids)
        sim, has_sim = _hash_column(simhash, n, MASK64)
        ph, has_ph = _hash_column(phash, n, 0)
        st = np.full(n, 200, np.int32) if status is None else np.asarray(status, dtype=np.int32)
        ho = np.zeros(n, np.int32) if host is None else np.asarray(host, dtype=np.int32)
        sim = np.where(has_sim, sim, np.uint64(0))
        ex = None if exact is None else np.array([0 if v is None else int(v) & MASK64 for v in exact], np.uint64)
        hd = None if heading is None else np.array([0 if v is None else int(v) & MASK64 for v in heading], np.uint64)
        return cls._sorted(np.asarray(ids, dtype=np.int64), st, np.asarray(text_len, dtype=np.int64),
                           sim, has_sim, ph, has_ph, ho, [], ex, hd)

    @classmethod
    def _sorted(cls, ids, status, text_len, sim, has_sim, ph, has_ph, host, hosts, exact=None,
                heading=None) -> "ClusterKeys":
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        if ids.shape[0] > 1 and bool((ids[1:] == ids[:-1]).any()):
            dup = int(ids[1:][ids[1:] == ids[:-1]][0])
            raise ValueError(f"duplicate page id {dup} in clustering input")
        return cls(ids, status[order], text_len[order], sim[order], has_sim[order], ph[order],
                   has_ph[order], host[order], hosts, None if exact is None else exact[order],
                   None if heading is None else heading[order])


def build_keys(items: Iterable[Union[PageRecord, Sequence[Any]]], params: ClusterParams = DEFAULT_PARAMS,
               short_items: Optional[set] = None) -> ClusterKeys:
    """Compact keys of the eligible pages among ``items`` (PageRecords or :data:`KEY_FIELDS` rows;
    ``short_items``: ids of pages that are items of their site, eligible with any text).

    Streams: holds ~40 bytes per eligible page, never the records themselves.
    """
    ids, status, tlen = array.array("q"), array.array("i"), array.array("q")
    sim, has_sim, ph, has_ph = array.array("Q"), array.array("b"), array.array("Q"), array.array("b")
    host = array.array("i")
    exact, heading = array.array("Q"), array.array("Q")
    host_index: Dict[str, int] = {}
    for item in items:
        row = key_row(item) if isinstance(item, PageRecord) else item
        if not _row_eligible(row, params, short_items is not None and row[0] in short_items):
            continue
        ids.append(int(row[0]))
        status.append(int(row[1]))
        tlen.append(int(row[4]))
        s, p = row[6], row[7]
        sim.append(0 if s is None else int(s) & MASK64)
        has_sim.append(s is not None)
        ph.append(0 if p is None else int(p) & MASK64)
        has_ph.append(p is not None)
        host.append(host_index.setdefault(row[8] or "", len(host_index)))
        e = row[9] if len(row) > 9 else None
        exact.append(0 if e is None else int(e) & MASK64)
        h = row[10] if len(row) > 10 else None
        heading.append(0 if h is None else int(h) & MASK64)
    hosts = [""] * len(host_index)
    for name, index in host_index.items():
        hosts[index] = name

    def arr(a: array.array, dtype: Any) -> np.ndarray:
        return np.frombuffer(a, dtype=dtype).copy() if len(a) else np.zeros(0, dtype)

    return ClusterKeys._sorted(
        arr(ids, np.int64), arr(status, np.int32), arr(tlen, np.int64), arr(sim, np.uint64),
        arr(has_sim, np.int8).astype(bool), arr(ph, np.uint64), arr(has_ph, np.int8).astype(bool),
        arr(host, np.int32), hosts, arr(exact, np.uint64), arr(heading, np.uint64),
    )


# --------------------------------------------------------------------------- candidate graph


@dataclass
class _Entries:
    """The distinct (hash value, host key) entries of the pages considered for one hash kind.

    ``nodes`` are sorted by (entry, text length, node); entry e holds positions
    ``start[e] .. start[e] + count[e] - 1``; ``comb`` = entry << 32 | capped length (sorted)."""

    values: np.ndarray  # uint64 per entry
    hostkey: np.ndarray  # int64 per entry (0 unless same_host_only)
    start: np.ndarray
    count: np.ndarray
    nodes: np.ndarray
    comb: np.ndarray


def _entries(keys: ClusterKeys, values: np.ndarray, mask: np.ndarray, same_host: bool) -> _Entries:
    nodes = np.nonzero(mask)[0]
    vals = values[nodes]
    lens = np.minimum(keys.text_len[nodes], (1 << 32) - 1)
    if same_host:
        hk = keys.host[nodes]
        order = np.lexsort((nodes, lens, hk, vals))
        hk = hk[order]
    else:  # one host key for all: no column of zeros to sort by
        order = np.lexsort((nodes, lens, vals))
    nodes, vals, lens = nodes[order], vals[order], lens[order]
    del order
    new = np.ones(nodes.shape[0], bool)
    if nodes.shape[0]:
        np.not_equal(vals[1:], vals[:-1], out=new[1:])
        if same_host:
            new[1:] |= hk[1:] != hk[:-1]
    start = np.flatnonzero(new)
    count = np.diff(np.append(start, nodes.shape[0]))
    entry = np.cumsum(new, dtype=np.int64)
    entry -= 1
    entry <<= 32
    entry |= lens
    hostkey = hk[start].astype(np.int64) if same_host else np.zeros(start.shape[0], np.int64)
    return _Entries(vals[start], hostkey, start, count, nodes, entry)


#: Candidate pairs of the first pass turned into Python ints at once for their compares.
_COMPARE_CHUNK = 1 << 16

#: Page links expanded at once from the entry pairs of the join (a dozen temporaries of this many
#: int64 each: memory, not results).
_JOIN_CHUNK = 1 << 20


def _join_components(keys: ClusterKeys, params: ClusterParams, active: np.ndarray) -> Tuple[np.ndarray, int]:
    """Component root (smallest node index) of every node in the candidate graph restricted to the
    active pages (inactive pages are their own root). Candidate pairs are found chunk by chunk and
    merged at once, never stored: pages sharing a hash are linked to the next one by length
    (SimHash: where the length check passes, an interval graph; pHash: a clique), and each pair of
    entries within the distance links every page of the smaller entry to its length predecessor
    and successor in the larger one (the pages it is adjacent to there are a length range that
    contains one of them, and that range is connected), so the cost follows the distinct pairs."""
    n = len(keys)
    parent = np.arange(n, dtype=np.int64)
    entry_pairs = 0
    diff, noise = params.length_diff, params.length_noise_chars
    same_host = params.same_host_only
    kinds = [(keys.simhash, keys.has_simhash, params.simhash_distance, True)]
    if params.visual_distance >= 0:
        kinds.append((keys.phash, keys.has_phash, params.visual_distance, False))
    if keys.heading is not None:  # same h1 (already capped by cluster()): linked inside entries only
        kinds.append((keys.heading, keys.heading != 0, -1, True))
    for values, has, k, check_len in kinds:
        ent = _entries(keys, values, has & active, same_host)
        nodes = ent.nodes
        if nodes.shape[0] < 2:
            continue
        a, b = nodes[:-1], nodes[1:]
        link = (ent.comb[:-1] >> 32) == (ent.comb[1:] >> 32)
        if check_len:
            link &= _length_ok(keys.text_len[a], keys.text_len[b], diff, noise)
        parent = _union_runs(parent, nodes, link)
        del a, b, link
        if k < 0:
            continue
        state = [parent]
        entry_ids = np.arange(ent.start.shape[0], dtype=np.int64)

        def entry_labels(state=state, nodes=nodes, start=ent.start, entry_ids=entry_ids) -> np.ndarray:
            # an entry's component, or a label of its own while its pages are not yet connected
            state[0][:] = _compress(state[0])  # in place: the join goes on with this array
            r = state[0][nodes]
            low, high = np.minimum.reduceat(r, start), np.maximum.reduceat(r, start)
            return np.where(low == high, low, -1 - entry_ids)

        for ua, ub in hamming_pairs(ent.values, k, entry_labels):
            if same_host:
                keep = ent.hostkey[ua] == ent.hostkey[ub]
                ua, ub = ua[keep], ub[keep]
            entry_pairs += int(ua.shape[0])
            if not check_len:  # cliques: one link per entry pair
                parent = state[0] = _union(parent, nodes[ent.start[ua]], nodes[ent.start[ub]])
                continue
            swap = ent.count[ua] > ent.count[ub]
            small, big = np.where(swap, ub, ua), np.where(swap, ua, ub)
            for lo, hi in _segments(ent.count[small], _JOIN_CHUNK):
                owner, pos = _expand(ent.start[small[lo:hi]], ent.count[small[lo:hi]])
                a = nodes[pos]
                target = big[lo:hi][owner]
                first, end = ent.start[target], ent.start[target] + ent.count[target]
                p = np.searchsorted(ent.comb, (target << 32) | (ent.comb[pos] & 0xFFFFFFFF), side="left")
                ea_list, eb_list = [], []
                for q, ok in ((p, p < end), (p - 1, p - 1 >= first)):
                    b = nodes[np.where(ok, q, 0)]
                    ok &= _length_ok(keys.text_len[a], keys.text_len[b], diff, noise)
                    ea_list.append(a[ok])
                    eb_list.append(b[ok])
                parent = state[0] = _union(parent, np.concatenate(ea_list), np.concatenate(eb_list))
    return _compress(parent), entry_pairs


def _union_runs(parent: np.ndarray, nodes: np.ndarray, link: np.ndarray) -> np.ndarray:
    """Merge each run of ``nodes`` whose neighbours are linked (``link[i]``: nodes[i] ~
    nodes[i + 1]) into one component: every node of a run is linked to the run's smallest node,
    a star the union-find resolves in a step or two (a chain of thousands of copies would take as
    many rounds of hooking)."""
    run = np.zeros(nodes.shape[0], np.int64)
    np.cumsum(~link, out=run[1:])
    start = np.flatnonzero(np.diff(run, prepend=-1))
    low = np.minimum.reduceat(nodes, start)[run]
    keep = low != nodes
    return _union(parent, low[keep], nodes[keep])


def _prefilter(keys: ClusterKeys, params: ClusterParams, c: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The candidate test on given pairs (the pre-filter of the module docstring)."""
    ok = keys.has_simhash[c] & keys.has_simhash[m]
    ok &= popcount64(keys.simhash[c] ^ keys.simhash[m]) <= params.simhash_distance
    ok &= _length_ok(keys.text_len[c], keys.text_len[m], params.length_diff, params.length_noise_chars)
    if params.visual_distance >= 0:
        ok |= (keys.has_phash[c] & keys.has_phash[m]
               & (popcount64(keys.phash[c] ^ keys.phash[m]) <= params.visual_distance))
    if keys.heading is not None:
        ok |= ((keys.heading[c] != 0) & (keys.heading[c] == keys.heading[m])
               & _length_ok(keys.text_len[c], keys.text_len[m], params.length_diff, params.length_noise_chars))
    if params.same_host_only:
        ok &= keys.host[c] == keys.host[m]
    return ok



def is_candidate_pair(keys: ClusterKeys, params: ClusterParams, i: int, j: int) -> bool:
    """Whether the pages at positions ``i`` and ``j`` of ``keys`` are a candidate pair (the
    pre-filter above; for ``websim explain``)."""
    return bool(_prefilter(keys, params, np.array([i], np.int64), np.array([j], np.int64))[0])



# --------------------------------------------------------------------------- clustering


def _capped_headings(keys: ClusterKeys, max_pages: int) -> ClusterKeys:
    """``keys`` with the heading keys that more than ``max_pages`` eligible pages share (or all,
    with 0) removed: the same-h1 candidates of :func:`_join_components` and :func:`_prefilter`."""
    if keys.heading is None:
        return keys
    heading = keys.heading.copy()
    has = heading != 0
    if max_pages <= 0:
        heading[:] = 0
    elif has.any():
        _, inverse, counts = np.unique(heading[has], return_inverse=True, return_counts=True)
        heading[np.nonzero(has)[0][counts[inverse] > max_pages]] = 0
    return replace(keys, heading=heading if heading.any() else None)


def _finish_groups(keys: ClusterKeys, params: ClusterParams, active: np.ndarray, root: np.ndarray,
                   rank: np.ndarray, members: Dict[int, List[Tuple[int, PairResult]]], compare: CompareFn) -> int:
    """Repeat the canonical-centred step until no group is left, without joining again: inside
    each group of the pass just run, the best-ranked active page compares with its active
    candidate neighbours, then it and the pages it merged leave, and so on. This gives exactly
    the clusters of repeating whole passes (a later pass's groups are pieces of this pass's
    groups, and the step on one group touches no other group, so the order of the groups does not
    matter), at the cost of the pairs compared. Returns the number of compares."""
    nodes = np.nonzero(active)[0]
    if nodes.shape[0] < 2:
        return 0
    nodes = nodes[np.lexsort((rank[nodes], root[nodes]))]
    r = root[nodes]
    bounds = np.flatnonzero(r[1:] != r[:-1]) + 1
    ids = keys.ids
    compared = 0
    for group in np.split(nodes, bounds):
        if group.shape[0] < 2:
            continue
        alive = np.ones(group.shape[0], bool)
        for i in range(group.shape[0] - 1):
            if not alive[i]:
                continue
            alive[i] = False
            rest = np.nonzero(alive)[0]
            if rest.shape[0] == 0:
                break
            c = int(group[i])
            ok = _prefilter(keys, params, np.full(rest.shape[0], c, np.int64), group[rest])
            hits = rest[ok]
            hits = hits[np.argsort(group[hits], kind="stable")]
            c_id = int(ids[c])
            for j, m, m_id in zip(hits.tolist(), group[hits].tolist(), ids[group[hits]].tolist()):
                result = compare(c_id, m_id)
                compared += 1
                if result.is_duplicate:
                    members.setdefault(c, []).append((m, result))
                    alive[j] = False
    return compared


@dataclass
class ClusterStats:
    eligible: int = 0
    explicit_edges: int = 0  # entry pairs within the distance found by the joins (all passes)
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


def _run_passes(keys: ClusterKeys, params: ClusterParams, active: np.ndarray, order: np.ndarray,
                rank: np.ndarray, members: Dict[int, List[Tuple[int, PairResult]]], compare: CompareFn,
                stats: ClusterStats) -> int:
    """The canonical-centred passes on the ``active`` pages (changed in place); returns the
    number of passes run."""
    n = len(keys)
    pass_no = 0
    ids = keys.ids
    while active.any() and (params.passes == 0 or pass_no < params.passes):
        pass_no += 1
        root, entry_pairs = _join_components(keys, params, active)
        stats.explicit_edges += entry_pairs
        size = np.bincount(root, minlength=n)
        active &= size[root] >= 2  # pages with no candidate left are alone
        nodes = np.nonzero(active)[0]
        if nodes.shape[0] == 0:
            break
        # the canonical of each group is its best-ranked page
        best = np.full(n, n, np.int64)
        np.minimum.at(best, root[nodes], rank[nodes])
        canon = order[best[root[nodes]]]
        is_member = canon != nodes
        c, m = canon[is_member], nodes[is_member]
        ok = _prefilter(keys, params, c, m)
        c, m = c[ok], m[ok]
        pairs_order = np.lexsort((m, c))
        c, m = c[pairs_order], m[pairs_order]
        done = np.zeros(n, bool)
        done[canon] = True
        del best, canon, is_member, ok, pairs_order
        for lo in range(0, c.shape[0], _COMPARE_CHUNK):  # Python ints for a chunk at a time
            cc, mm = c[lo:lo + _COMPARE_CHUNK], m[lo:lo + _COMPARE_CHUNK]
            for ci, mi, c_id, m_id in zip(cc.tolist(), mm.tolist(), ids[cc].tolist(), ids[mm].tolist()):
                result = compare(c_id, m_id)
                stats.compared += 1
                if result.is_duplicate:
                    members.setdefault(ci, []).append((mi, result))
                    done[mi] = True
        active &= ~done
        del c, m, done, nodes
        if params.passes == 0:  # to completion: finish inside the groups of this pass
            stats.compared += _finish_groups(keys, params, active, root, rank, members, compare)
            break
    return pass_no


def _numbered_clusters(members: Dict[int, List[Tuple[int, PairResult]]], ids: np.ndarray,
                       url_of: Optional[Callable[[int], str]]) -> Tuple[Dict[int, Assignment], List[Cluster]]:
    """The assignments and clusters of ``members`` (canonical node -> its members and their
    pairs, emptied here), numbered by smallest member node."""
    found = sorted((min([c] + [m for m, _ in ms]), c) for c, ms in members.items())
    assignments: Dict[int, Assignment] = {}
    clusters: List[Cluster] = []
    for number, (_, c) in enumerate(found, start=1):
        cluster_id = f"cluster-{number:05d}"
        canon_id = int(ids[c])
        assignments[canon_id] = Assignment(
            cluster_id, True, "content", "canonical", PairResult(*_CANONICAL_SIMS, True, "")
        )
        pairs = members.pop(c)  # each cluster's pairs are freed as its assignments are made
        member_ids = [canon_id] + ids[np.array([m for m, _ in pairs], np.int64)].tolist()
        for mid, (_, result) in zip(member_ids[1:], pairs):
            assignments[mid] = Assignment(cluster_id, False, "content", result.rule or "duplicate", result)
        del pairs
        clusters.append(Cluster(cluster_id, canon_id, url_of(canon_id) if url_of else "", sorted(member_ids),
                                "content"))
    return assignments, clusters


def copy_keys(keys: ClusterKeys) -> Optional[np.ndarray]:
    """The exact-copy key of each page: its judged text's hash (``exact``) and what it says it is
    (``heading``: its h1, or its title without one; 0 where shared by too many pages to tell
    pages apart, :func:`_capped_headings`). Two pages that say the same and call themselves the
    same are exact copies; an application's items whose judged text is all template and whose
    title names the item (the "Operations" pages of two tables, two repositories' file trees of
    the same files) are not: the decision reads their titles (``similarity.judge``)."""
    if keys.exact is None or keys.heading is None:
        return keys.exact
    with np.errstate(over="ignore"):
        mixed = keys.exact ^ (keys.heading * np.uint64(0x9E3779B97F4A7C15))
    return np.where((keys.exact != 0) & (keys.heading != 0) & (mixed != 0), mixed, keys.exact)


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
    keys = _capped_headings(keys, params.heading_max_pages)
    stats = ClusterStats(eligible=len(keys))
    n = len(keys)
    # canonical preference: status 200 first, then the text most pages serve (exact copies), then
    # longest text, then smallest id (= node index)
    order = np.lexsort((np.arange(n), -keys.text_len, -copy_counts(keys.exact, n),
                        (keys.status != 200).astype(np.int8)))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)

    rep = exact_representatives(copy_keys(keys), keys.host, rank, params.same_host_only)
    follower = rep != np.arange(n)
    active = ~follower  # exact copies are represented by their best page until the end
    members: Dict[int, List[Tuple[int, PairResult]]] = {}
    stats.passes_run = _run_passes(keys, params, active, order, rank, members, compare, stats)
    stats.compared += attach_exact_copies(members, rep, np.nonzero(follower)[0], keys.ids, compare)

    assignments, clusters = _numbered_clusters(members, keys.ids, url_of)
    stats.clusters = len(clusters)
    stats.clustered_pages = len(assignments)
    return ClusterResult(assignments, clusters, stats)


def cluster_labels(result: ClusterResult) -> Dict[int, str]:
    """page id -> cluster id, for the clustered pages (handy for comparisons)."""
    return {page_id: a.cluster_id for page_id, a in result.assignments.items()}
