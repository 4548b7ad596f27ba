"""The end of a crawl (or ``websim cluster`` on a features file): labels, clusters, output rows.

:meth:`Finalizer.run` chains five stages, each a module-level function with plain inputs and
outputs: :func:`renumber_discovered` (ids of link-discovered pages), :func:`label_rules`
(special-page labels E1..T1 take their pages out of content clustering), :func:`cluster_content`
(the eligible rest, ``core/match/cluster.py`` comparing pairs with ``core/match/similarity.py``),
:func:`assign_clusters` (``core/match/assign.py`` combines content and rule clusters so that every page
has exactly one cluster or none) and :func:`summary` (the ``meta``). Records are streamed from the
store; only the eligible pages' light records are held, during content clustering. The rows and
file formats are in ``output.py``.

Scrapy-free: used by the extension and by the offline command alike.
"""

from __future__ import annotations

import datetime
import tempfile
import os
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from scrapy_websim.config import (CLUSTER_SETTINGS, DECISION_SETTINGS, DOM_SETTINGS, LCS_SETTINGS, RULE_SETTINGS,
                                  TEXT_SETTINGS, URL_SETTINGS, ConfigError, WebsimConfig, build_params,
                                  rule_keywords)
from scrapy_websim import output
from scrapy_websim.core.match import assign, cluster, similarity
from scrapy_websim.core.features import FeatureParams
from scrapy_websim.core.rules.signals import RuleParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.page.text import TextParams
from scrapy_websim.core.page.dom import DomParams
from scrapy_websim.core.page.lcs import LcsParams
from scrapy_websim.core.urls.normalize import UrlParams
from scrapy_websim.core.types import Assignment, Cluster, PageRecord

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
        return output.url_rows(self.store.iter_records(), self.assignments)

    def cluster_rows(self) -> Iterator[Dict[str, Any]]:
        return output.cluster_rows(self.clusters)


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
        """The stages below, in order; each streams the records from ``store``."""
        p = self.params
        renumber_discovered(store)
        _special_ids, eligible = label_rules(store, p.assign.rules, p.cluster)
        n_eligible = len(eligible)
        content = cluster_content(eligible, store, p.decision, p.cluster)
        del eligible  # the light records are not needed any more: free them before assignment
        assignments, clusters = assign_clusters(store, content, p.assign)
        return Result(store=store, assignments=assignments, clusters=clusters,
                      meta=summary(store, n_eligible, clusters, p))


# --- the stages of Finalizer.run: plain inputs and outputs, each callable alone ---

def renumber_discovered(store: FeatureStore) -> None:
    """Give pages discovered by following links (ids above :data:`PROVISIONAL_ID_BASE`) the ids
    after the input URLs, in URL order, so that ids do not depend on crawl order."""
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


def label_rules(store: FeatureStore, rules: RuleParams,
                cluster_params: Optional[cluster.ClusterParams] = None) -> Tuple[Set[int], List[PageRecord]]:
    """``(ids of special pages, light records eligible for content clustering)``: a page with a
    special-page label (E1..T1) is taken out of content clustering; of the rest, the pages
    :func:`core.match.cluster.is_eligible` accepts are kept without their bulky structure features."""
    cluster_params = cluster_params or cluster.DEFAULT_PARAMS
    special_ids = set()
    eligible: List[PageRecord] = []
    for record in store.iter_records():
        if special_label(record, rules) is not None:
            special_ids.add(record.id)
        elif cluster.is_eligible(record, cluster_params):
            eligible.append(_light(record))
    return special_ids, eligible


def cluster_content(eligible: List[PageRecord], store: FeatureStore, decision: similarity.DecisionParams,
                    cluster_params: Optional[cluster.ClusterParams] = None) -> cluster.ClusterResult:
    """Content clusters of the eligible pages; a candidate pair is decided on the full records,
    loaded from ``store`` as needed (a bounded cache)."""
    records = _RecordCache(store)

    def compare(a_id: int, b_id: int):
        return similarity.compare(records.get(a_id), records.get(b_id), decision)

    final_urls = {r.id: r.final_url or r.url for r in eligible}
    return cluster.cluster(eligible, compare, cluster_params or cluster.DEFAULT_PARAMS, url_of=final_urls.get)


def assign_clusters(store: FeatureStore, content: cluster.ClusterResult,
                    params: assign.AssignParams) -> Tuple[Dict[int, Assignment], List[Cluster]]:
    """Every page's one cluster (or none): content clusters and rule clusters (R1, U1, predicted
    pages) combined by :func:`core.match.assign.combine`, streaming the light records."""
    return assign.combine((_light(r) for r in store.iter_records()), content.assignments, content.clusters, params)


def summary(store: FeatureStore, n_eligible: int, clusters: List[Cluster], params: FinalParams) -> Dict[str, Any]:
    """The result's ``meta``: counts, the decision rules in words, the time."""
    d = params.decision
    return {
        "total_urls": len(store),
        "eligible_html_urls": n_eligible,
        "total_clusters": len(clusters),
        "content_clusters": sum(1 for c in clusters if c.kind == "content"),
        "rule_clusters": sum(1 for c in clusters if c.kind != "content"),
        "sim_threshold": params.config.sim_threshold,
        "decision": {
            "rule1": f"text >= {d.rule1_jaccard} (MinHash; SimHash: {d.rule1_text}) and (structure >= {d.rule1_structure} "
                     f"or visual >= {d.rule1_visual})",
            "rule2": f"visual >= {d.rule2_visual}",
            "structure_measure": d.structure_measure,
        },
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def recluster_file(path: str, params: FinalParams) -> Result:
    """``websim cluster``: load a features JSON Lines file and cluster it again."""
    tmpdir = tempfile.mkdtemp(prefix="websim-cluster-")
    store = FeatureStore(os.path.join(tmpdir, "features.sqlite"), batch_size=params.config.batch_size)
    store.load_jsonl(path)
    store.flush()
    return Finalizer(params).run(store)
