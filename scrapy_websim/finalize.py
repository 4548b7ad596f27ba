"""The end of a crawl (or ``websim cluster`` on a features file): labels, clusters, output rows.

Order: special-page labels (E1..T1) take their pages out of content clustering; the eligible
rest is clustered by content (``core/cluster.py``, comparing pairs with ``core/similarity.py``);
then ``core/assign.py`` combines content clusters and rule clusters (R1, U1, predicted pages) so
that every page has exactly one cluster or none.

Scrapy-free: used by the extension and by the offline command alike.
"""

from __future__ import annotations

import datetime
import tempfile
import os
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterator, List, Optional

from scrapy_websim.config import (CLUSTER_SETTINGS, DECISION_SETTINGS, DOM_SETTINGS, LCS_SETTINGS, RULE_SETTINGS,
                                  TEXT_SETTINGS, URL_SETTINGS, ConfigError, WebsimConfig, build_params,
                                  rule_keywords)
from scrapy_websim.core import assign, cluster, similarity
from scrapy_websim.core.features import FeatureParams
from scrapy_websim.core.rules import RuleParams, special_label
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.text import TextParams
from scrapy_websim.core.dom import DomParams
from scrapy_websim.core.lcs import LcsParams
from scrapy_websim.core.urls import UrlParams
from scrapy_websim.core.types import OUTPUT_FIELDS, Assignment, Cluster, PageRecord

#: Records above this id are pages discovered by following links; they are renumbered after the
#: input URLs, in URL order, so ids do not depend on crawl order.
PROVISIONAL_ID_BASE = 1 << 40

@dataclass(frozen=True)
class FinalParams:
    config: WebsimConfig = field(default_factory=WebsimConfig)
    features: FeatureParams = field(default_factory=FeatureParams)
    decision: similarity.DecisionParams = field(default_factory=similarity.DecisionParams)
    cluster: Any = None
    assign: assign.AssignParams = field(default_factory=assign.AssignParams)


@dataclass
class Result:
    store: FeatureStore
    assignments: Dict[int, Assignment]
    clusters: List[Cluster]
    meta: Dict[str, Any]

    def url_rows(self) -> Iterator[Dict[str, Any]]:
        for record in self.store.iter_records():
            yield output_row(record, self.assignments.get(record.id))

    def cluster_rows(self) -> Iterator[Dict[str, Any]]:
        for c in self.clusters:
            yield OrderedDict(
                cluster_id=c.cluster_id, canonical_url=c.canonical_url, member_ids=list(c.member_ids), kind=c.kind,
                origins=c.origins)


def output_row(record: PageRecord, a: Optional[Assignment]) -> Dict[str, Any]:
    a = a or Assignment()
    sims = a.sims
    in_cluster = bool(a.cluster_id)
    row = {
        "id": record.id,
        "url": record.url,
        "normalized_url": record.normalized_url,
        "final_url": record.final_url,
        "redirect_chain": list(record.redirect_chain),
        "status_code": record.status_code,
        "content_length": record.content_length,
        "content_type": record.content_type,
        "error": record.error,
        "title": record.title,
        "cluster_id": a.cluster_id,
        "is_canonical": a.is_canonical if in_cluster else True,
        "similarity_to_canonical": (1.0 if a.is_canonical else sims.similarity) if in_cluster else 0.0,
        "content_sim": round(sims.content_sim, 6) if in_cluster else 0.0,
        "structure_sim": round(sims.structure_sim, 6) if in_cluster else 0.0,
        "visual_sim": round(sims.visual_sim, 6) if in_cluster else 0.0,
        "behavior_sim": round(sims.behavior_sim, 6) if in_cluster else 0.0,
        "cluster_kind": a.cluster_kind if in_cluster else "",
        "match_rule": a.match_rule if in_cluster else "",
        "page_type": record.page_type,
        "expanded_from": record.expanded_from,
        "tls_error": record.tls_error,
        "tls_subject": record.tls_subject,
        "tls_issuer": record.tls_issuer,
        "tls_valid_from": record.tls_valid_from,
        "tls_valid_to": record.tls_valid_to,
    }
    if in_cluster and a.is_canonical:
        row.update(content_sim=1.0, structure_sim=1.0, visual_sim=1.0, behavior_sim=1.0)
    return OrderedDict((name, row[name]) for name in OUTPUT_FIELDS)


def _light(record: PageRecord) -> PageRecord:
    """The record without its bulky structure features (rules and assignment do not use them)."""
    return replace(record, tag_paths={}, tag_seq="", depth_hist=[], dom_counts=[])


class _RecordCache:
    """Loads full records from the store for pair comparisons, keeping the most recent ones."""

    def __init__(self, store: FeatureStore, size: int = 4096) -> None:
        self.store, self.size = store, size
        self.cache: "OrderedDict[int, PageRecord]" = OrderedDict()

    def get(self, record_id: int) -> PageRecord:
        rec = self.cache.get(record_id)
        if rec is None:
            rec = self.cache[record_id] = self.store.get(record_id)
            if len(self.cache) > self.size:
                self.cache.popitem(last=False)
        else:
            self.cache.move_to_end(record_id)
        return rec


class Finalizer:
    def __init__(self, params: FinalParams) -> None:
        self.params = params

    @staticmethod
    def params_from_settings(settings: Any, config: WebsimConfig) -> FinalParams:
        rules = build_params(settings, RuleParams, RULE_SETTINGS)
        extend, replace_lists = rule_keywords(settings)
        try:
            rules = rules.with_keywords(replace_lists=replace_lists, extend_lists=extend)
        except ValueError as exc:
            raise ConfigError(f"WEBSIM_RULE_KEYWORDS / WEBSIM_RULE_KEYWORDS_REPLACE: {exc}") from None
        decision = build_params(settings, similarity.DecisionParams, DECISION_SETTINGS)
        features = FeatureParams(
            text=build_params(settings, TextParams, TEXT_SETTINGS),
            dom=build_params(settings, DomParams, DOM_SETTINGS),
            lcs=build_params(settings, LcsParams, LCS_SETTINGS),
            rules=rules,
            urls=build_params(settings, UrlParams, URL_SETTINGS),
        )
        # Candidates must cover every pair the decision can accept: the text pre-filter at least as
        # wide as rule 1's text threshold allows, the visual candidates exactly rule 2's distance.
        text_distance = int((1.0 - decision.rule1_text) * decision.text_max_distance + 1e-9)
        visual_distance = (-1 if decision.rule2_visual > 1.0 else
                           cluster.phash_distance_for(decision.rule2_visual, decision.visual_max_distance))
        cluster_params = build_params(
            settings, cluster.ClusterParams, CLUSTER_SETTINGS,
            same_host_only=config.same_host_only,
            visual_distance=min(11, visual_distance),
        )
        if cluster_params.simhash_distance < min(11, text_distance):
            cluster_params = replace(cluster_params, simhash_distance=min(11, text_distance))
        return FinalParams(
            config=config, features=features, decision=decision, cluster=cluster_params,
            assign=assign.AssignParams(rules=rules, urls=features.urls),
        )

    def run(self, store: FeatureStore, total_inputs: int = 0) -> Result:
        p = self.params
        _renumber_discovered(store)
        special_ids = set()
        eligible: List[PageRecord] = []
        for record in store.iter_records():
            if special_label(record, p.assign.rules) is not None:
                special_ids.add(record.id)
            elif cluster.is_eligible(record, p.cluster):
                eligible.append(_light(record))
        records = _RecordCache(store)

        def compare(a_id: int, b_id: int):
            return similarity.compare(records.get(a_id), records.get(b_id), p.decision)

        final_urls = {r.id: r.final_url or r.url for r in eligible}
        result = cluster.cluster(eligible, compare, p.cluster, url_of=final_urls.get)
        content, content_clusters = result.assignments, result.clusters
        n_eligible = len(eligible)
        del eligible, final_urls
        assignments, clusters = assign.combine((_light(r) for r in store.iter_records()), content,
                                               content_clusters, p.assign)
        meta = {
            "total_urls": len(store),
            "eligible_html_urls": n_eligible,
            "total_clusters": len(clusters),
            "content_clusters": sum(1 for c in clusters if c.kind == "content"),
            "rule_clusters": sum(1 for c in clusters if c.kind != "content"),
            "sim_threshold": p.config.sim_threshold,
            "decision": {
                "rule1": f"text >= {p.decision.rule1_jaccard} (MinHash; SimHash: {p.decision.rule1_text}) and (structure >= {p.decision.rule1_structure} "
                         f"or visual >= {p.decision.rule1_visual})",
                "rule2": f"visual >= {p.decision.rule2_visual}",
                "structure_measure": p.decision.structure_measure,
            },
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        return Result(store=store, assignments=assignments, clusters=clusters, meta=meta)


def _renumber_discovered(store: FeatureStore) -> None:
    ids = [row[0] for row in store.iter_key_rows()]  # id column only: no record JSON parsed
    provisional = [i for i in ids if i >= PROVISIONAL_ID_BASE]
    if not provisional:
        return
    last_input = max((i for i in ids if i < PROVISIONAL_ID_BASE), default=0)
    records = sorted((store.get(pid) for pid in provisional), key=lambda r: (r.url, r.id))
    for record in records:
        store.delete(record.id)
    for new_id, record in enumerate(records, start=last_input + 1):
        record.id = new_id
        store.add(record)
    store.flush()


def recluster_file(path: str, params: FinalParams) -> Result:
    """``websim cluster``: load a features JSON Lines file and cluster it again."""
    tmpdir = tempfile.mkdtemp(prefix="websim-cluster-")
    store = FeatureStore(os.path.join(tmpdir, "features.sqlite"), batch_size=params.config.batch_size)
    store.load_jsonl(path)
    store.flush()
    return Finalizer(params).run(store)
