"""The PageRecord-based assignment as it was before the end of a crawl moved to columns
(the record-based ``scrapy_websim/core/match/assign.py`` of earlier versions), kept as the reference that
``tests/test_finalize_columns.py`` checks the column version against: objects per page, every
step written out plainly."""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Tuple

# the names and keys of groups did not change: shared; the steps that combine them are the old ones
from scrapy_websim.core.match.assign import RULE_PREFIX, _h64, _rule_key, content_cluster_id, copy_key
from scrapy_websim.core.params.rules import RuleParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.types import Assignment, Cluster, PageRecord
from scrapy_websim.core.urls.normalize import normalize_url, url_origin


def _canon_key(r: PageRecord) -> Tuple[int, int, int]:
    return (0 if r.status_code == 200 else 1, -int(r.text_len or 0), r.id)


def _origin(r: PageRecord) -> str:
    return url_origin(r.final_url or r.url)


def _length_bands(members: List[PageRecord], tolerance: float) -> List[List[PageRecord]]:
    """Split into bands where a length is more than ``tolerance`` above the one before it."""
    ordered = sorted(members, key=lambda r: (r.html_len or r.content_length or 0, r.id))
    bands: List[List[PageRecord]] = []
    previous = 0
    for r in ordered:
        length = r.html_len or r.content_length or 0
        if bands and previous >= length * (1.0 - tolerance):
            bands[-1].append(r)
        else:
            bands.append([r])
        previous = length
    return bands


_SPECIAL_KINDS = frozenset(("E1", "E3", "L1", "W1", "M1", "T1"))


class _State:
    def __init__(self, records: Dict[int, PageRecord]) -> None:
        self.records = records
        self.assign: Dict[int, Assignment] = {}
        self.members: Dict[str, List[int]] = {}
        self.canonical: Dict[str, int] = {}
        self.kind: Dict[str, str] = {}

    def new_cluster(self, cid: str, kind: str, ids: Iterable[int], rule: str) -> None:
        ids = sorted(set(ids), key=lambda i: _canon_key(self.records[i]))
        canon = ids[0]
        self.members[cid] = sorted(ids)
        self.canonical[cid] = canon
        self.kind[cid] = kind
        for i in ids:
            self.assign[i] = Assignment(
                cluster_id=cid,
                is_canonical=i == canon,
                cluster_kind=kind,
                match_rule="canonical" if i == canon else rule,
            )

    def join(self, cid: str, page_id: int, rule: str) -> None:
        self.members[cid] = sorted(self.members[cid] + [page_id])
        self.assign[page_id] = Assignment(
            cluster_id=cid, is_canonical=False, cluster_kind=self.kind[cid], match_rule=rule
        )


def _group_alone(
    state: _State,
    candidates: List[PageRecord],
    key: Callable[[PageRecord], str],
    rule: str,
    make_id: Callable[[PageRecord, str], str],
    rendered_stays: bool = False,
) -> None:
    """R1/U1: alone pages sharing ``key`` join a clustered page's cluster or form a new one
    (``rendered_stays``: a page rendered to text does not join a special page's cluster)."""
    groups: Dict[str, List[PageRecord]] = {}
    for r in candidates:
        k = key(r)
        if k:
            groups.setdefault(k, []).append(r)
    for k in sorted(groups):
        group = groups[k]
        alone = [r for r in group if r.id not in state.assign]
        if not alone:
            continue
        placed = sorted((r for r in group if r.id in state.assign), key=_canon_key)
        if placed:
            cid = state.assign[placed[0].id].cluster_id
            for r in alone:
                if rendered_stays and r.text_hash is not None and state.kind[cid] in _SPECIAL_KINDS:
                    continue
                state.join(cid, r.id, rule)
        elif len(alone) >= 2:
            best = min(alone, key=_canon_key)
            state.new_cluster(make_id(best, k), rule, (r.id for r in alone), rule)


def _thin_copies(state: "_State", pages: List[PageRecord], rules: RuleParams) -> None:
    """A free T1 page joins the cluster of the best content page (in a content cluster, or alone
    with status 200 and no label: it first becomes a content cluster's canonical) that has its
    ``copy_key``."""
    labels = {r.id: special_label(r, rules) for r in pages}
    targets: Dict[int, List[PageRecord]] = {}
    for r in pages:
        key = copy_key(r)
        if not key or labels[r.id] is not None:
            continue
        a = state.assign.get(r.id)
        if (a is not None and state.kind[a.cluster_id] == "content") or (a is None and r.status_code == 200):
            targets.setdefault(key, []).append(r)
    for r in pages:
        key = copy_key(r)
        if labels[r.id] != "T1" or r.id in state.assign or key not in targets:
            continue
        best = min(targets[key], key=_canon_key)
        if best.id not in state.assign:
            state.new_cluster(content_cluster_id(best.url), "content", [best.id], "content")
        state.join(state.assign[best.id].cluster_id, r.id, "copy")


def _rule_clusters(state: "_State", pages: Iterable[PageRecord], rules: RuleParams) -> None:
    """Special pages: one cluster per rule and template across hosts (``{prefix}-{hash}``), or
    per origin (``{prefix}-{origin}-{hash}``, E1 ``err5xx-{origin}``) with ``scope="origin"``.
    E3 groups are split into HTML-length bands (the second and later get ``-2``, ``-3``...)."""
    groups: Dict[Tuple[str, str, str], List[PageRecord]] = {}
    for r in pages:
        code = special_label(r, rules)
        if code is not None:
            groups.setdefault((code, *_rule_key(code, r, rules.scope)), []).append(r)
    for (code, origin, template), members in sorted(groups.items()):
        base = "-".join(part for part in (RULE_PREFIX[code], origin, template) if part)
        bands = _length_bands(members, rules.e3_length_tolerance) if code == "E3" else [members]
        for n, band in enumerate(bands, start=1):
            cid = base if n == 1 else f"{base}-{n}"
            state.new_cluster(cid, code, (r.id for r in band), code)


def _resolve_predicted(
    recs: List[PageRecord], by_url: Dict[str, int], by_final: Dict[str, int],
    records: Dict[int, PageRecord],
) -> Dict[int, int]:
    """Predicted page id -> id of the rendered page it duplicates (following chains)."""
    out: Dict[int, int] = {}
    for r in recs:
        if not r.predicted_duplicate_of:
            continue
        seen = {r.id}
        cur = r
        while cur.predicted_duplicate_of:
            target = by_url.get(cur.predicted_duplicate_of, by_final.get(cur.predicted_duplicate_of))
            if target is None or target in seen:
                cur = None
                break
            seen.add(target)
            cur = records[target]
        if cur is not None and cur.id != r.id:
            out[r.id] = cur.id
    return out


def combine(
    records: Iterable[PageRecord],
    content: Dict[int, Assignment],
    content_clusters: List[Cluster],
    params,
) -> Tuple[Dict[int, Assignment], List[Cluster]]:
    """Give every page exactly one cluster or none (see the module docstring for the order).

    ``content`` maps page id -> Assignment for pages in content clusters (pages with an empty
    ``cluster_id`` count as alone); ``content_clusters`` are those clusters. Returns an
    Assignment for every record and every cluster (content and rule), sorted by canonical id.
    """
    recs = sorted(records, key=lambda r: r.id)
    by_id = {r.id: r for r in recs}
    state = _State(by_id)
    by_url: Dict[str, int] = {}
    by_final: Dict[str, int] = {}
    for r in recs:
        by_url.setdefault(r.url, r.id)
        if r.final_url:
            by_final.setdefault(r.final_url, r.id)
    predicted = _resolve_predicted(recs, by_url, by_final, by_id)

    # 2 (before 1 so that content wins): content clusters as given.
    _seed_content(state, content, content_clusters, by_id)
    # 1a: a thin page that is a copy of a content page (same text, heading and title) joins it.
    _thin_copies(state, [r for r in recs if r.id not in predicted], params.rules)
    # 1: special pages, grouped by rule.
    _rule_clusters(state, (r for r in recs if r.id not in state.assign and r.id not in predicted), params.rules)
    # 3-4: R1 then U1 for pages still alone (resolved predicted pages wait for step 5).
    _url_groups(state, [r for r in recs if r.id not in predicted], params)
    # 5: predicted duplicates join the cluster of the page they were predicted to duplicate.
    for pid in sorted(predicted):
        target = predicted[pid]
        if target not in state.assign:
            url = by_id[target].url
            state.new_cluster(content_cluster_id(url), "content", [target], "content")
        state.join(state.assign[target].cluster_id, pid, "predicted")

    out = {r.id: state.assign.get(r.id, Assignment()) for r in recs}
    return out, _clusters_of(state, by_id)


def _seed_content(state: "_State", content: Dict[int, Assignment], content_clusters: List[Cluster],
                  by_id: Dict[int, PageRecord]) -> None:
    for c in content_clusters:
        ids = [i for i in c.member_ids if i in by_id]
        if not ids:
            continue
        state.members[c.cluster_id] = sorted(ids)
        state.canonical[c.cluster_id] = c.canonical_id
        state.kind[c.cluster_id] = c.kind or "content"
    for i, a in content.items():
        if i in by_id and a.cluster_id and a.cluster_id in state.members:
            state.assign[i] = a


def _url_groups(state: "_State", candidates: List[PageRecord], params) -> None:
    """R1 (same final URL) then U1 (same normalized URL) among the pages still alone."""
    rule_on = params.rules.enabled_rules
    if "R1" in rule_on:
        _group_alone(
            state, candidates, lambda r: r.final_url or "", "R1",
            lambda best, k: f"redir-{_h64(k)}",
        )
    if "U1" in rule_on:
        def norm(r: PageRecord) -> str:
            return r.normalized_url or normalize_url(r.url, params.urls)

        def u1_id(best: PageRecord, k: str) -> str:
            origin = url_origin(k)
            return f"urlcanon-{origin}-{k[len(origin):] or '/'}"

        _group_alone(state, candidates, norm, "U1", u1_id, rendered_stays=True)


def _clusters_of(state: "_State", by_id: Dict[int, PageRecord]) -> List[Cluster]:
    clusters = [
        Cluster(
            cluster_id=cid,
            canonical_id=state.canonical[cid],
            canonical_url=by_id[state.canonical[cid]].url if state.canonical[cid] in by_id else "",
            member_ids=list(state.members[cid]),
            kind=state.kind[cid],
            origins=len({_origin(by_id[i]) for i in state.members[cid] if i in by_id}),
        )
        for cid in state.members
    ]
    clusters.sort(key=lambda c: (c.canonical_id, c.cluster_id))
    return clusters
