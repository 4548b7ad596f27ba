"""The end of a crawl (or ``websim cluster`` on a features file): labels, clusters, output rows.

:meth:`Finalizer.run` chains six stages, each a module-level function with plain inputs and
outputs: :func:`renumber_discovered` (ids of link-discovered pages), :func:`calibrate_soft404` (each origin's
"not found" answer, from the soft-404 probes), :func:`label_rules`
(special-page labels E1..T1 take their pages out of content clustering), :func:`cluster_content`
(the eligible rest, ``core/match/cluster.py`` comparing pairs with ``core/match/similarity.py``),
:func:`assign_clusters` (``core/match/assign.py`` combines content and rule clusters so that every page
has exactly one cluster or none) and :func:`summary` (the ``meta``). Records are streamed from the
store and held one at a time (plus a bounded cache for pair decisions): what lives as long as the
run is columns per page (numpy arrays: ids, hashes, lengths, cluster numbers) and what content
clustering holds for the pages it clusters. The rows are made when written, each record read back
from the store (``Result.url_rows``). The rows and file formats are in ``output.py``.

Scrapy-free: used by the extension and by the offline command alike.
"""

from __future__ import annotations

import datetime
import logging
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import AbstractSet, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from scrapy_websim.config import WebsimConfig, build_params, rule_keywords
from scrapy_websim.config_values import ConfigError
from scrapy_websim.core.features import FeatureParams
from scrapy_websim.core.match import assign, cluster, reasons, similarity, template
from scrapy_websim.core.match.assign_arrays import Assigned, PageTable
from scrapy_websim.core.match.soft404 import Soft404Calibration, root_fingerprint_rows
from scrapy_websim.core.params.match import ClusterParams, DecisionParams, TemplateParams
from scrapy_websim.core.params.page import DomParams, LcsParams, PageTypeParams, TextParams
from scrapy_websim.core.params.rules import RuleParams
from scrapy_websim.core.params.urls import UrlParams
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord, PairResult
from scrapy_websim.result import output

logger = logging.getLogger(__name__)

#: Records above this id are pages discovered by following links; they are renumbered after the
#: input URLs, in URL order, so ids do not depend on crawl order.
PROVISIONAL_ID_BASE = 1 << 40

@dataclass(frozen=True)
class FinalParams:
    config: WebsimConfig = field(default_factory=WebsimConfig)
    features: FeatureParams = field(default_factory=FeatureParams)
    decision: DecisionParams = field(default_factory=DecisionParams)
    cluster: Any = None
    assign: assign.AssignParams = field(default_factory=assign.AssignParams)
    template: TemplateParams = field(default_factory=TemplateParams)


@dataclass
class Result:
    """The assignment in columns (``core/match/assign_arrays.py``) beside the store: the rows are
    made one at a time, each record read back from the store when its row is written."""

    store: FeatureStore
    assigned: Assigned
    meta: Dict[str, Any]
    params: Optional["FinalParams"] = None  # the thresholds the ``match_reason`` of each row names
    #: Set on every row that has no error of its own (the last-resort result: :func:`unclustered`).
    row_error: str = ""

    def url_rows(self) -> Iterator[Dict[str, Any]]:
        ids = self.assigned.ids
        p = self.params or FinalParams()
        cluster_params = p.cluster or cluster.DEFAULT_PARAMS
        canonical_of = dict(zip(self.assigned.names, self.assigned.canon))
        for pos, (record, a) in enumerate(zip(self.store.iter_records(), self.assigned.iter_assignments())):
            if record.id != ids[pos]:
                raise RuntimeError(f"the feature store changed after clustering (record {record.id})")
            if self.row_error and not record.error:
                record.error = self.row_error
            try:
                why = reasons.match_reason(record, a, canonical_of.get(a.cluster_id, 0), p.decision, cluster_params,
                                           record.id in self.assigned.short_items)
            except Exception as exc:  # noqa: BLE001 - the row is written without its reason
                why = f"no reason: {type(exc).__name__}: {exc}"[:300]
            yield output.safe_output_row(record, a, why)

    def cluster_rows(self) -> Iterator[Dict[str, Any]]:
        return output.cluster_rows(self.assigned.clusters(self.store.urls_of))


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


#: Each crawler's parameter objects (``Finalizer.params_for``).
_PARAMS_BY_CRAWLER: "weakref.WeakKeyDictionary[Any, FinalParams]" = weakref.WeakKeyDictionary()


class Finalizer:
    def __init__(self, params: FinalParams) -> None:
        self.params = params

    @staticmethod
    def params_for(crawler: Any) -> FinalParams:
        """The crawler's core parameter objects, built from its settings once and shared by its
        components."""
        params = _PARAMS_BY_CRAWLER.get(crawler)
        if params is None:
            params = Finalizer.params_from_settings(crawler.settings, WebsimConfig.from_crawler(crawler))
            _PARAMS_BY_CRAWLER[crawler] = params
        return params

    @staticmethod
    def params_from_settings(settings: Any, config: WebsimConfig) -> FinalParams:
        rules = build_params(settings, RuleParams)
        extend, replace_lists = rule_keywords(settings)
        try:
            rules = rules.with_keywords(replace_lists=replace_lists, extend_lists=extend)
        except ValueError as exc:
            raise ConfigError(f"WEBSIM_RULE_KEYWORDS / WEBSIM_RULE_KEYWORDS_REPLACE: {exc}") from None
        decision = build_params(settings, DecisionParams)
        features = FeatureParams(
            text=build_params(settings, TextParams),
            dom=build_params(settings, DomParams),
            lcs=build_params(settings, LcsParams),
            pagetype=build_params(settings, PageTypeParams),
            rules=rules,
            urls=build_params(settings, UrlParams),
        )
        # Candidates must cover every pair the decision can accept: the text pre-filter at least as
        # wide as rule 1's text thresholds allow (the MinHash one, --text-threshold, read on the
        # SimHash scale: a lower threshold widens it), the visual candidates exactly rule 2's distance.
        loosest = min(decision.rule1_text, decision.rule1_jaccard)
        text_distance = int((1.0 - loosest) * decision.text_max_distance + 1e-9)
        visual_distance = (-1 if decision.rule2_visual > 1.0 else
                           cluster.phash_distance_for(decision.rule2_visual, decision.visual_max_distance))
        cluster_params = build_params(
            settings, ClusterParams,
            same_host_only=config.same_host_only,
            visual_distance=min(11, visual_distance),
            min_html_len=rules.thin_html_bytes, min_text_len=rules.thin_text_chars,  # thin or clustered
        )
        if cluster_params.simhash_distance < min(11, text_distance):
            cluster_params = replace(cluster_params, simhash_distance=min(11, text_distance))
        return FinalParams(
            config=config, features=features, decision=decision, cluster=cluster_params,
            assign=assign.AssignParams(rules=rules, urls=features.urls),
            template=build_params(settings, TemplateParams),
        )

    def run(self, store: FeatureStore, total_inputs: int = 0) -> Result:
        """The stages below, in order. Memory holds columns per page (ids, hashes, lengths,
        cluster numbers, the clustering keys) and what content clustering holds for its clustered
        pages; records are read from ``store`` one at a time (docs/performance.md, "The end of a
        large crawl").

        A record that one stage cannot handle gets ``error`` saying so and the others go on. If a
        stage fails as a whole, the result is :func:`unclustered`: every record, in no cluster,
        with ``meta["error"]`` saying why, so the output files are still written."""
        p = self.params
        try:
            renumber_discovered(store)
            soft404 = calibrate_soft404(store, p.assign)
            templates = site_templates(store, p.template, p.cluster)
            keys, table = label_rules(store, p.assign, p.cluster, soft404, templates)
            n_eligible = len(keys)
            pairs_failed: list = []
            content = cluster_content(keys, store, p.decision, p.cluster, failed=pairs_failed, templates=templates,
                                      short_items=table.short_items)
            del keys
            assigned = assign_clusters(store, content, table, p.assign)
            del content, table  # the columns of ``assigned`` are all the rows need
        except Exception as exc:
            logger.exception("websim: labelling and clustering failed; writing every record without a cluster")
            return unclustered(store, p, f"{type(exc).__name__}: {exc}")
        meta = summary(store, n_eligible, assigned.kind, p, templates)
        if soft404 is not None:
            meta["soft404"] = soft404.summary()
        if pairs_failed:
            meta["pairs_failed"] = len(pairs_failed)
            logger.error("websim: %d page pairs could not be compared (kept apart), e.g. %s", len(pairs_failed),
                         pairs_failed[0])
        return Result(store=store, assigned=assigned, meta=meta, params=p)


# --- the stages of Finalizer.run: plain inputs and outputs, each callable alone ---

def renumber_discovered(store: FeatureStore) -> None:
    """Give pages discovered by following links (ids above :data:`PROVISIONAL_ID_BASE`) the ids
    after the input URLs, in URL order, so that ids do not depend on crawl order."""
    provisional = list(store.ids(start=PROVISIONAL_ID_BASE))  # id column only: no record JSON parsed
    if not provisional:
        return
    last_input = max(store.ids(stop=PROVISIONAL_ID_BASE, last=True), default=0)
    records = sorted((store.get(pid) for pid in provisional), key=lambda r: (r.url, r.id))
    for record in records:
        store.delete(record.id)
    for new_id, record in enumerate(records, start=last_input + 1):
        record.id = new_id
        store.add(record)
    store.flush()


def calibrate_soft404(store: FeatureStore, params: assign.AssignParams) -> Optional[Soft404Calibration]:
    """The origins' "not found" answers from the store's soft-404 probes (None when the crawl
    made none); origins that answer unknown paths with their home page are found here, before
    any page is labelled (one pass over the records' URLs and fingerprints, read by SQLite)."""
    probes = list(store.iter_probes())
    if not probes:
        return None
    calibration = Soft404Calibration(probes, params.rules)
    if calibration.needs_pages():
        for url, final_url, fingerprint in root_fingerprint_rows(store.iter_url_fingerprints()):
            calibration.see_page(url, final_url, fingerprint)
    return calibration


def label_rules(store: FeatureStore, params: assign.AssignParams,
                cluster_params: Optional[ClusterParams] = None,
                soft404: Optional[Soft404Calibration] = None,
                templates: Optional[template.Templates] = None,
                ) -> Tuple[cluster.ClusterKeys, PageTable]:
    """One pass over the records: ``(clustering keys of the pages eligible for content
    clustering, every page's assignment columns)``. A page with a special-page label (E1..T1,
    ``table.spec_pos``) is taken out of content clustering; of the rest, the pages
    :func:`core.match.cluster.is_eligible` accepts get keys. Nothing per page is kept as an object."""
    table = PageTable()
    failed: Dict[int, str] = {}
    cp = cluster_params or cluster.DEFAULT_PARAMS
    short_items = table.short_items

    def unlabelled_rows() -> Iterator[cluster.KeyRow]:
        for record in store.iter_records():
            try:
                item = _item_of(record, templates)
                label = assign.add_page(table, record, params, soft404, item)
                row = None if label is not None else cluster.key_row(record)
            except Exception as exc:
                logger.exception("websim: page %s (%s) could not be labelled", record.id, record.url)
                failed[record.id] = f"labelling failed: {type(exc).__name__}: {exc}"[:300]
                assign.add_page(table, assign.unlabelled(record), params)
                continue
            if row is not None:
                if (record.text_len or 0) < cp.min_text_len and item():
                    short_items.add(record.id)
                yield row

    keys = cluster.build_keys(unlabelled_rows(), cp, short_items)
    assign.merge_similar_templates(table, store.get, params)
    for page_id, error in failed.items():  # after the pass: the store is not written while it is read
        record = store.get(page_id)
        record.error = f"{record.error}; {error}" if record.error else error
        store.add(record)
    store.flush()
    return keys, table


def _item_of(record, templates: Optional[template.Templates]) -> Callable[[], bool]:
    """Whether ``record`` is an item of its site (:meth:`~scrapy_websim.core.match.template.Templates.is_item`),
    worked out once and only when asked: the rules ask it of few pages."""
    known: List[bool] = []

    def item() -> bool:
        if not known:
            known.append(templates is not None and bool(templates) and templates.is_item(record))
        return known[0]
    return item


def site_templates(store: FeatureStore, params: TemplateParams,
                   cluster_params: Optional[ClusterParams] = None) -> template.Templates:
    """Each site's template and kinds of pages (:mod:`scrapy_websim.core.match.template`): one
    pass over the store's key columns picks each site's sample, whose shingle sets and tag paths
    are then read."""
    min_html = (cluster_params or cluster.DEFAULT_PARAMS).min_html_len
    sampler = template.TemplateSampler(params)
    for page_id, status, ctype, html_len, text_len, error, _s, _p, host, text_hash, _h in store.iter_key_rows():
        if template.can_sample(status, ctype, html_len, text_len, error, min_html):
            sampler.see(page_id, host, text_hash)
    return template.build_templates(sampler.samples(), store.template_pages, params, sampler.scales())


def cluster_content(keys: cluster.ClusterKeys, store: FeatureStore, decision: DecisionParams,
                    cluster_params: Optional[ClusterParams] = None,
                    failed: Optional[list] = None,
                    templates: Optional[template.Templates] = None,
                    short_items: AbstractSet[int] = frozenset()) -> cluster.ClusterResult:
    """Content clusters of the eligible pages; a candidate pair is decided on the full records,
    loaded from ``store`` as needed (a bounded cache). A pair that cannot be compared is kept
    apart (not a duplicate) and noted in ``failed`` as ``(id, id, error)``."""
    records = _RecordCache(store)

    def compare(a_id: int, b_id: int):
        try:
            a, b = records.get(a_id), records.get(b_id)
            if (a_id in short_items or b_id in short_items) and not similarity.same_text(a, b):
                return PairResult()  # a page of a few words is the same page only with the same words
            return similarity.compare(a, b, decision, templates.for_pair(a, b) if templates else None)
        except Exception as exc:  # noqa: BLE001 - one odd record must not stop the clustering
            if failed is not None:
                failed.append((a_id, b_id, f"{type(exc).__name__}: {exc}"))
            return PairResult()

    return cluster.cluster(keys, compare, cluster_params or cluster.DEFAULT_PARAMS)


def assign_clusters(store: FeatureStore, content: cluster.ClusterResult, table: PageTable,
                    params: assign.AssignParams) -> Assigned:
    """Every page's one cluster (or none): content clusters and rule clusters (R1, U1, predicted
    pages) combined by :func:`core.match.assign.assign_table`, on the columns of ``table``."""
    return assign.assign_table(table, content.assignments, content.clusters, params, store.get)


def summary(store: FeatureStore, n_eligible: int, kinds: Sequence[str], params: FinalParams,
            templates: Optional[template.Templates] = None) -> Dict[str, Any]:
    """The result's ``meta``: counts, the decision rules in words, the sites' templates, the time
    (``kinds``: each cluster's kind)."""
    d = params.decision
    return {
        "total_urls": len(store),
        "eligible_html_urls": n_eligible,
        "total_clusters": len(kinds),
        "content_clusters": sum(1 for kind in kinds if kind == "content"),
        "rule_clusters": sum(1 for kind in kinds if kind != "content"),
        "sim_threshold": params.config.sim_threshold,
        "decision": {
            "rule1": f"text >= {d.rule1_jaccard} (MinHash shingle measure, up to {d.text_noise_shingles} shingles of "
                     f"one page's own text forgiven; SimHash: {d.rule1_text}) and (structure >= {d.rule1_structure} "
                     f"or visual >= {d.rule1_visual})",
            "rule2": f"visual >= {d.rule2_visual} and text >= {d.rule2_min_jaccard}",
            "not_when": f"judged texts differ and: h1 headings share < {d.heading_min_jaccard} of their words (unless "
                        f"both pages have one title that holds half the words of one h1), or "
                        f"both are mostly prose and the shorter has >= {d.prose_len_min_chars} characters of it, "
                        f"< {d.prose_min_len_ratio} of the longer's",
            "structure_measure": d.structure_measure,
        },
        # the same thresholds as numbers, for 'websim explain' (which decides a pair as this run did)
        "decision_params": asdict(d),
        "cluster_params": asdict(params.cluster) if params.cluster is not None else {},
        "template_params": asdict(params.template),
        "templates": (templates or template.Templates(params=params.template)).summary(),
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def unclustered(store: FeatureStore, params: FinalParams, why: str) -> Result:
    """The last-resort result when labelling or clustering fails as a whole: one row per record,
    in no cluster, each row that had no error of its own saying that it was not clustered, and
    ``meta["error"]`` saying why (the command then exits with status 1)."""
    note = f"not clustered: labelling and clustering failed ({why})"[:300]
    ids = np.fromiter(store.ids(), np.int64)
    assigned = Assigned(ids, np.zeros(ids.shape[0], np.int64))
    meta = summary(store, 0, [], params)
    meta["error"] = note
    return Result(store=store, assigned=assigned, meta=meta, params=params, row_error=note)


def recluster_file(path: str, params: FinalParams) -> Result:
    """``websim cluster``: load a features JSON Lines file and cluster it again. The store is a
    temporary file, removed when the caller closes ``result.store`` (or here, if loading fails)."""
    store = FeatureStore(batch_size=params.config.batch_size)
    try:
        store.load_jsonl(path)
        store.flush()
        return Finalizer(params).run(store)
    except BaseException:
        store.close()
        raise
