"""The steps of ``assign.py`` on compact columns: memory follows the pages as numpy arrays
(about 100 bytes a page), not as Python objects, so 10M pages can be assigned on one machine.

:class:`PageTable` holds what assignment needs of each page, appended in id order by
:func:`scrapy_websim.core.match.assign.add_page`; the strings that decide groups (URL, final
URL, normalised URL, origin) are kept as 16-byte BLAKE2b digests (two different strings share one
with probability 2**-128), the special-page group as an index into the distinct group names.
:func:`assign_pages` runs the steps of the module docstring of ``assign.py`` in the same order with
the same tie-breaks; the few strings a new cluster's id needs are read back through
``get(id) -> PageRecord``. The result, :class:`Assigned`, gives one page's :class:`Assignment` at a
time and the clusters sorted by canonical id.
"""

from __future__ import annotations

import array
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..types import Assignment, Cluster, PageRecord, PairResult

#: The kinds of the special pages' clusters (a content page's URL twin there is another page).
SPECIAL_KINDS = frozenset(("E1", "E3", "L1", "W1", "M1", "T1"))

__all__ = ["Assigned", "PageTable", "assign_pages"]

KEY = "S16"  # a 16-byte digest, compared as bytes
#: A content page's pair figures: the four similarities and ``PairResult.detail()``.
SIM_COLUMNS = 8


def _keys(buf: bytearray) -> np.ndarray:
    return np.frombuffer(bytes(buf), dtype=KEY) if buf else np.zeros(0, KEY)


@dataclass
class PageTable:
    """Per-page columns in id order (``pos`` = position in that order), plus the special pages'
    and the predicted pages' columns (sparse)."""

    ids: array.array = field(default_factory=lambda: array.array("q"))
    not200: array.array = field(default_factory=lambda: array.array("b"))
    text_len: array.array = field(default_factory=lambda: array.array("q"))
    url: bytearray = field(default_factory=bytearray)  # digest of the URL
    final: bytearray = field(default_factory=bytearray)  # of the final URL (16 zero bytes: none)
    norm: bytearray = field(default_factory=bytearray)  # of the normalised URL (16 zero bytes: none)
    route: bytearray = field(default_factory=bytearray)  # of normalised URL + rendered text hash (zeros: none)
    origin: bytearray = field(default_factory=bytearray)  # of the origin of the final URL (else URL)
    #: the judged text's exact-copy hash of a page with a little text (0: none, or too much for a
    #: thin page to share it): where a thin copy of a content page is looked for
    copy: array.array = field(default_factory=lambda: array.array("Q"))
    #: 1: final URL; 2: grouped by normalised URL (not a fragment URL rendered to text); 4: route
    flags: array.array = field(default_factory=lambda: array.array("b"))
    spec_pos: array.array = field(default_factory=lambda: array.array("q"))
    spec_group: array.array = field(default_factory=lambda: array.array("q"))
    spec_len: array.array = field(default_factory=lambda: array.array("q"))  # HTML (else content) length
    group_names: List[str] = field(default_factory=list)  # special group -> its cluster id (first band)
    group_codes: List[str] = field(default_factory=list)  # special group -> its rule code
    group_index: Dict[str, int] = field(default_factory=dict)
    group_scope: List[str] = field(default_factory=list)  # special group -> its origin part ("" across hosts)
    group_first: array.array = field(default_factory=lambda: array.array("q"))  # special group -> first pos
    group_size: array.array = field(default_factory=lambda: array.array("q"))  # special group -> pages
    pred_pos: array.array = field(default_factory=lambda: array.array("q"))
    pred_key: bytearray = field(default_factory=bytearray)  # digest of predicted_duplicate_of
    #: ids of the pages with less text than content clustering needs that are items of their site
    #: (one of many pages of one structure there): clustered all the same, never thin
    short_items: set = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.ids)


class Assigned:
    """Every page's cluster (or none), in columns: ``cl[pos]`` indexes the clusters (-1 alone),
    ``rule[pos]`` indexes :attr:`rule_names`; content pages keep their four similarities."""

    def __init__(self, ids: np.ndarray, origin: np.ndarray) -> None:
        n = ids.shape[0]
        self.ids = ids
        self.cl = np.full(n, -1, np.int32)
        self.rule = np.zeros(n, np.uint8)
        self.rule_names: List[str] = [""]
        self._rule_code: Dict[str, int] = {"": 0}
        self.canon: List[int] = []  # canonical id per cluster
        self.kind: List[str] = []
        self.names: List[str] = []
        self.sim_pos = np.zeros(0, np.int64)
        self.sims = np.zeros((0, SIM_COLUMNS), np.float64)
        self._origin = origin
        self.origins: Optional[np.ndarray] = None
        #: ids of the short pages that were clustered as items of their site (``PageTable.short_items``)
        self.short_items: set = set()

    def code(self, rule: str) -> int:
        c = self._rule_code.get(rule)
        if c is None:
            c = self._rule_code[rule] = len(self.rule_names)
            self.rule_names.append(rule)
        return c

    def new_cluster(self, name: str, kind: str, members: np.ndarray, rule: str, rank: np.ndarray) -> int:
        k = len(self.canon)
        canon = int(members[np.argmin(rank[members])])
        self.cl[members] = k
        self.rule[members] = self.code(rule)
        self.rule[canon] = self.code("canonical")
        self.canon.append(int(self.ids[canon]))
        self.kind.append(kind)
        self.names.append(name)
        return k

    # --- reading the result
    def assignment(self, pos: int, sims: Optional[Sequence[float]] = None) -> Assignment:
        k = int(self.cl[pos])
        if k < 0:
            return Assignment()
        page_id = int(self.ids[pos])
        pair = PairResult()
        if sims is not None:
            content, structure, visual, behavior, share, shared, own_a, own_b = sims
            pair = PairResult(content, structure, visual, behavior, template_share=share, shared=int(shared),
                              own_a=int(own_a), own_b=int(own_b))
        return Assignment(self.names[k], page_id == self.canon[k], self.kind[k], self.rule_names[self.rule[pos]], pair)

    def iter_assignments(self) -> Iterator[Assignment]:
        """One Assignment per page, in id order."""
        sim_pos, sims = self.sim_pos.tolist(), self.sims
        j = 0
        for pos in range(self.ids.shape[0]):
            if j < len(sim_pos) and sim_pos[j] == pos:
                yield self.assignment(pos, sims[j].tolist())
                j += 1
            else:
                yield self.assignment(pos)

    def cluster_members(self) -> Iterator[Tuple[int, List[int]]]:
        """``(cluster index, sorted member ids)``, clusters by canonical id then cluster id."""
        placed = np.flatnonzero(self.cl >= 0)
        cl = self.cl[placed]
        order = np.argsort(cl, kind="stable")
        placed, cl = placed[order], cl[order]
        bounds = np.searchsorted(cl, np.arange(len(self.canon) + 1))
        for k in sorted(range(len(self.canon)), key=lambda k: (self.canon[k], self.names[k])):
            yield k, self.ids[placed[bounds[k]:bounds[k + 1]]].tolist()

    def count_origins(self) -> np.ndarray:
        """Distinct origins among each cluster's members."""
        placed = np.flatnonzero(self.cl >= 0)
        counts = np.zeros(len(self.canon), np.int64)
        if placed.shape[0]:
            cl, origin = self.cl[placed], self._origin[placed]
            order = np.lexsort((origin, cl))
            cl, origin = cl[order], origin[order]
            new = np.ones(cl.shape[0], bool)
            new[1:] = (cl[1:] != cl[:-1]) | (origin[1:] != origin[:-1])
            counts = np.bincount(cl[new], minlength=len(self.canon))
        return counts

    def clusters(self, url_of: Callable[[Iterable[int]], Dict[int, str]]) -> Iterator[Cluster]:
        """The clusters sorted by canonical id; ``url_of(ids)`` gives the canonicals' URLs (asked
        for 1000 at a time)."""
        origins = self.count_origins()
        batch: List[Tuple[int, List[int]]] = []
        for item in self.cluster_members():
            batch.append(item)
            if len(batch) >= 1000:
                yield from self._clusters_of(batch, origins, url_of)
                batch = []
        yield from self._clusters_of(batch, origins, url_of)

    def _clusters_of(self, batch, origins, url_of) -> Iterator[Cluster]:
        urls = url_of([self.canon[k] for k, _ in batch]) if batch else {}
        for k, members in batch:
            yield Cluster(self.names[k], self.canon[k], urls.get(self.canon[k], ""), members, self.kind[k],
                          int(origins[k]))


# --- the steps (``assign.py`` docstring): each reads and writes ``Assigned`` columns


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Position of each wanted id in ``ids`` (sorted), -1 where absent."""
    if not ids.shape[0]:
        return np.full(wanted.shape[0], -1, np.int64)
    pos = np.minimum(np.searchsorted(ids, wanted), ids.shape[0] - 1)
    return np.where(ids[pos] == wanted, pos, -1)


def seed_content(out: Assigned, content: Dict[int, Assignment], content_clusters: Iterable[Cluster]) -> None:
    """Step 2 (before 1 so that content wins): the content clusters as given."""
    index: Dict[str, int] = {}
    for c in content_clusters:
        present = _positions(out.ids, np.asarray(c.member_ids, np.int64))
        if (present >= 0).any():
            index[c.cluster_id] = len(out.canon)
            out.canon.append(int(c.canonical_id))
            out.kind.append(c.kind or "content")
            out.names.append(c.cluster_id)
    page_ids, ks, rules, sims = array.array("q"), array.array("q"), array.array("q"), array.array("d")
    for i, a in content.items():
        k = index.get(a.cluster_id) if a.cluster_id else None
        if k is not None:
            page_ids.append(i)
            ks.append(k)
            rules.append(out.code(a.match_rule))
            s = a.sims
            sims.extend((s.content_sim, s.structure_sim, s.visual_sim, s.behavior_sim, *s.detail()))
    pos = _positions(out.ids, np.frombuffer(page_ids, np.int64) if page_ids else np.zeros(0, np.int64))
    keep = pos >= 0
    pos = pos[keep]
    out.cl[pos] = np.frombuffer(ks, np.int64)[keep] if ks else 0
    out.rule[pos] = np.frombuffer(rules, np.int64)[keep] if rules else 0
    sims_arr = (np.frombuffer(sims, np.float64).reshape(-1, SIM_COLUMNS) if sims else np.zeros((0, SIM_COLUMNS)))[keep]
    order = np.argsort(pos, kind="stable")
    out.sim_pos, out.sims = pos[order], sims_arr[order]


def resolve_predicted(table: PageTable, ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(positions, target positions)`` of the predicted pages whose chain of
    ``predicted_duplicate_of`` ends at a page of the crawl that is not predicted itself (a URL is
    looked up among the URLs first, then among the final URLs; the smallest id wins)."""
    n = ids.shape[0]
    pred = np.frombuffer(table.pred_pos, np.int64) if len(table.pred_pos) else np.zeros(0, np.int64)
    if not pred.shape[0]:
        return pred, pred
    wanted = _keys(table.pred_key)
    target = _lookup(_keys(table.url), np.ones(n, bool), wanted)
    flags = np.frombuffer(table.flags, np.int8)
    by_final = _lookup(_keys(table.final), (flags & 1) != 0, wanted)
    target = np.where(target >= 0, target, by_final)
    jump = np.arange(n + 1, dtype=np.int64)  # n: "not in the crawl"
    jump[pred] = np.where(target >= 0, target, n)
    for _ in range(max(1, int(n).bit_length() + 1)):  # pointer doubling: chains of any length
        jump = jump[jump]
    is_pred = np.zeros(n + 1, bool)
    is_pred[pred] = True
    end = jump[pred]
    ok = (end < n) & ~is_pred[end]  # a chain into a cycle ends on a predicted page
    return pred[ok], end[ok]


def _lookup(keys: np.ndarray, usable: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Smallest position whose key equals each wanted key, -1 where none."""
    cand = np.flatnonzero(usable)
    if not cand.shape[0]:
        return np.full(wanted.shape[0], -1, np.int64)
    order = cand[np.argsort(keys[cand], kind="stable")]
    sorted_keys = keys[order]
    at = np.minimum(np.searchsorted(sorted_keys, wanted), order.shape[0] - 1)
    return np.where(sorted_keys[at] == wanted, order[at], -1)


def join_thin_copies(out: Assigned, table: PageTable, free: np.ndarray, rank: np.ndarray,
                     name_of: Callable[[int], str], copy_key: Callable[[int], int]) -> np.ndarray:
    """Step 1a: a free thin page (``T1``) that says what a content page says and calls itself the
    same joins that page's cluster (``match_rule = "copy"``; the best-ranked such page's; a page
    alone, status 200 and no special page, first becomes the canonical of a content cluster named
    ``name_of(its id)``): thin by its own site, where a mirror's few pages hold no kind of their
    own, it is a copy of an item of a larger site (a short ticket, an API page of a few words),
    and exact copies are one page. Pages are matched by their judged text's hash
    (``PageTable.copy``), then ``copy_key(id)`` (what the page says and calls itself) is read for
    the few that match. Returns the positions that joined."""
    none = np.zeros(0, np.int64)
    if not len(table.spec_pos) or not len(table.copy):
        return none
    pos = np.frombuffer(table.spec_pos, np.int64)
    thin_group = np.array([code == "T1" for code in table.group_codes], bool)
    copy = np.frombuffer(table.copy, np.uint64)
    thin = pos[thin_group[np.frombuffer(table.spec_group, np.int64)] & free[pos]]
    thin = thin[copy[thin] != 0]
    if not thin.shape[0]:
        return none
    content = np.ones(copy.shape[0], bool)
    content[pos] = False  # special pages are no content
    content &= copy != 0
    kinds = np.array([k == "content" for k in out.kind] + [False], bool)
    not200 = np.frombuffer(table.not200, np.int8)
    content &= np.where(out.cl >= 0, kinds[out.cl], free & (not200 == 0))
    targets = np.flatnonzero(content)
    if not targets.shape[0]:
        return none
    targets = targets[np.lexsort((rank[targets], copy[targets]))]  # by text, best-ranked first
    texts = copy[targets]
    lo, hi = np.searchsorted(texts, copy[thin], "left"), np.searchsorted(texts, copy[thin], "right")
    joined: List[int] = []
    keys: Dict[int, int] = {}

    def key(p: int) -> int:
        if p not in keys:
            keys[p] = copy_key(int(out.ids[p]))
        return keys[p]

    for p, a, b in zip(thin[lo < hi].tolist(), lo[lo < hi].tolist(), hi[lo < hi].tolist()):
        t = next((int(t) for t in targets[a:b].tolist() if key(t) == key(p)), -1)
        if t < 0:
            continue
        if out.cl[t] < 0:
            out.new_cluster(name_of(int(out.ids[t])), "content", np.array([t]), "content", rank)
        out.cl[p] = out.cl[t]
        out.rule[p] = out.code("copy")
        joined.append(p)
    return np.asarray(joined, np.int64)


def rule_clusters(out: Assigned, table: PageTable, free: np.ndarray, rank: np.ndarray, tolerance: float) -> None:
    """Step 1: the special pages still free, one cluster per group name (E3 split in length
    bands: sorted by (length, id), a page starts a new band when the page before it is shorter
    than ``length * (1 - tolerance)``: a gap in the lengths, not a cut through a run of them)."""
    if not len(table.spec_pos):
        return
    pos = np.frombuffer(table.spec_pos, np.int64)
    group = np.frombuffer(table.spec_group, np.int64)
    length = np.frombuffer(table.spec_len, np.int64)
    take = free[pos]
    pos, group, length = pos[take], group[take], length[take]
    order = np.lexsort((pos, length, group))
    pos, group, length = pos[order], group[order], length[order]
    bounds = np.flatnonzero(np.diff(group)) + 1
    starts = np.concatenate(([0], bounds)) if pos.shape[0] else np.zeros(0, np.int64)
    ends = np.append(bounds, pos.shape[0])
    for s, e in zip(starts.tolist(), ends.tolist()):
        g = int(group[s])
        code, base = table.group_codes[g], table.group_names[g]
        bands = _bands(length[s:e].tolist(), tolerance) if code == "E3" else [(0, e - s)]
        for n, (b0, b1) in enumerate(bands, start=1):
            out.new_cluster(base if n == 1 else f"{base}-{n}", code, pos[s + b0:s + b1], code, rank)


def _bands(lengths: List[int], tolerance: float) -> List[Tuple[int, int]]:
    """(start, end) of each band of ``lengths`` (sorted): each page within ``tolerance`` of the
    page before it. An error template's pages grow with what they echo of their request (a
    deeper path, a longer name) in small steps; a page of another size stands apart."""
    bands: List[Tuple[int, int]] = []
    previous = 0
    for i, length in enumerate(lengths):
        if bands and previous >= length * (1.0 - tolerance):
            bands[-1] = (bands[-1][0], i + 1)
        else:
            bands.append((i, i + 1))
        previous = length
    return bands


def group_alone(out: Assigned, keys: np.ndarray, usable: np.ndarray, rank: np.ndarray, by_rank: np.ndarray,
                rule: str, make_name: Callable[[int], str], rendered: Optional[np.ndarray] = None) -> None:
    """R1/U1: among ``usable`` pages sharing a key, the alone ones join the cluster of the best
    placed one (status 200, longest text, smallest id), or, with none placed and two or more
    alone, form a new cluster named ``make_name(page id)``. A ``rendered`` page (one whose
    rendered text the rules took for content) does not join a special page's cluster: the two
    URLs look alike, but what the pages said tells them apart (``/`` a directory listing, its
    ``/index.php`` the server's 404)."""
    cand = np.flatnonzero(usable)
    if cand.shape[0] < 2:
        return
    cand = cand[np.argsort(keys[cand], kind="stable")]
    k = keys[cand]
    new = np.ones(cand.shape[0], bool)
    new[1:] = k[1:] != k[:-1]
    gid = np.cumsum(new) - 1
    groups = int(gid[-1]) + 1
    alone = out.cl[cand] < 0
    n_alone = np.bincount(gid, weights=alone, minlength=groups)
    best = np.full(groups, rank.shape[0], np.int64)
    np.minimum.at(best, gid[~alone], rank[cand[~alone]])
    placed = best < rank.shape[0]
    join = alone & placed[gid]
    if rendered is not None and join.any():
        target = out.cl[by_rank[np.minimum(best, rank.shape[0] - 1)]]
        special = np.array([out.kind[int(t)] in SPECIAL_KINDS for t in target.tolist()], bool)
        join &= ~(rendered[cand] & special[gid])
    if join.any():
        out.cl[cand[join]] = out.cl[by_rank[best[gid[join]]]]
        out.rule[cand[join]] = out.code(rule)
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], cand.shape[0])
    for g in np.flatnonzero(~placed & (n_alone >= 2)).tolist():
        members = cand[starts[g]:ends[g]]
        out.new_cluster(make_name(int(out.ids[members[0]])), rule, members, rule, rank)


def join_predicted(out: Assigned, pred: np.ndarray, target: np.ndarray, rank: np.ndarray,
                   name_of: Callable[[int], str]) -> None:
    """Step 5: a predicted page joins its target's cluster; an alone target first becomes the
    canonical of a new content cluster named ``name_of(target id)``."""
    for t in np.unique(target[out.cl[target] < 0]).tolist():
        out.new_cluster(name_of(int(out.ids[t])), "content", np.array([t]), "content", rank)
    out.cl[pred] = out.cl[target]
    out.rule[pred] = out.code("predicted")


def canon_rank(table: PageTable) -> Tuple[np.ndarray, np.ndarray]:
    """``(rank, by_rank)``: a page's place in the canonical order (status 200 first, then the
    longest main text, then the smallest id) and its inverse."""
    n = len(table)
    not200 = np.frombuffer(table.not200, np.int8) if n else np.zeros(0, np.int8)
    text_len = np.frombuffer(table.text_len, np.int64) if n else np.zeros(0, np.int64)
    by_rank = np.lexsort((np.arange(n), -text_len, not200))
    rank = np.empty(n, np.int64)
    rank[by_rank] = np.arange(n)
    return rank, by_rank


def assign_pages(table: PageTable, content: Dict[int, Assignment], content_clusters: Iterable[Cluster],
                 rules_on: Tuple[str, ...], tolerance: float, names: Dict[str, Callable[[PageRecord], str]],
                 get: Callable[[int], PageRecord], copy_key: Callable[[PageRecord], int]) -> Assigned:
    """The steps in order (see ``assign.py``); ``names`` builds the id of a new R1, U1 or predicted
    cluster from one of its pages, read with ``get``."""
    ids = np.frombuffer(table.ids, np.int64).copy() if len(table) else np.zeros(0, np.int64)
    out = Assigned(ids, _keys(table.origin))
    out.short_items = table.short_items
    rank, by_rank = canon_rank(table)
    seed_content(out, content, content_clusters)
    pred, target = resolve_predicted(table, ids)
    resolved = np.zeros(ids.shape[0], bool)
    resolved[pred] = True

    def name_from(kind: str) -> Callable[[int], str]:
        return lambda page_id: names[kind](get(page_id))

    join_thin_copies(out, table, (out.cl < 0) & ~resolved, rank, name_from("predicted"),
                     lambda page_id: copy_key(get(page_id)))
    rule_clusters(out, table, (out.cl < 0) & ~resolved, rank, tolerance)
    flags = np.frombuffer(table.flags, np.int8) if len(table) else np.zeros(0, np.int8)

    for rule, keys, bit, name in (("R1", table.final, 1, "R1"), ("U1", table.route, 4, "U1route"),
                                  ("U1", table.norm, 2, "U1")):
        if rule in rules_on:
            group_alone(out, _keys(keys), ((flags & bit) != 0) & ~resolved, rank, by_rank, rule,
                        name_from(name), (flags & 4) != 0 if bit == 2 else None)
    join_predicted(out, pred, target, rank, name_from("predicted"))
    return out


def expand(out: Assigned, content: Dict[int, Assignment]) -> Dict[int, Assignment]:
    """``{id: Assignment}`` for small inputs (tests, ``assign.combine``): a content page keeps the
    Assignment it came with."""
    result: Dict[int, Assignment] = {}
    for page_id, a in zip(out.ids.tolist(), out.iter_assignments()):
        given: Any = content.get(page_id)
        result[page_id] = given if given is not None and given.cluster_id and given.cluster_id == a.cluster_id else a
    return result
