"""Labelling and clustering: the stage of the end of a crawl (or of ``websim cluster`` on a features
file, or of ``websim collect``) between the record store and the rows.

The flow is one way (docs/architecture.md, "The end of a crawl"): the store, complete
(:func:`renumber_discovered` is its last write) -> :meth:`Finalizer.run` (this module: it reads the
store and never writes it) -> a :class:`Result` -> the rows (``rows.py``) -> the files
(``output.py``, the report). :meth:`Finalizer.run` chains six stages, each a module-level function
with plain inputs and outputs: :func:`calibrate_soft404` (each origin's "not found" answer, from the
soft-404 probes), :func:`site_templates` (each site's template and kinds of pages),
:func:`label_rules` (special-page labels E1..T1 take their pages out of content clustering),
:func:`cluster_content` (the eligible rest, ``core/match/cluster.py`` comparing pairs with
``core/match/similarity.py``), :func:`assign_clusters` (``core/match/assign.py`` combines content
and rule clusters so that every page has exactly one cluster or none) and :func:`summary`
(the ``meta``). Records are streamed from the store and held one at a time (plus a bounded cache
for pair decisions): what lives as long as the run is columns per page (numpy arrays: ids, hashes,
lengths, cluster numbers), what content clustering holds for the pages it clusters, and the
``notes`` of the records a stage could not handle.

The parameters are the run's :class:`~scrapy_websim.config.WebsimParams`, built once from the
settings. Scrapy-free: used by the extension and by the commands alike.
"""

from __future__ import annotations

import datetime
import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import AbstractSet, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from scrapy_websim.config import WebsimParams
from scrapy_websim.core.match import assign, cluster, similarity, template
from scrapy_websim.core.match.assign_arrays import Assigned, PageTable
from scrapy_websim.core.match.soft404 import Soft404Calibration, root_fingerprint_rows
from scrapy_websim.core.params.match import ClusterParams, DecisionParams, TemplateParams
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import PageRecord, PairResult

logger = logging.getLogger(__name__)

#: Records above this id are pages discovered by following links; they are renumbered after the
#: input URLs, in URL order, so ids do not depend on crawl order.
PROVISIONAL_ID_BASE = 1 << 40

@dataclass
class Result:
    """What labelling and clustering made of the store: the assignment in columns
    (``core/match/assign_arrays.py``), the ``meta``, and the errors of the records a stage could
    not handle. The store is as the run found it; ``rows.py`` makes the rows of the two."""

    store: FeatureStore
    assigned: Assigned
    meta: Dict[str, Any]
    params: WebsimParams  # the thresholds the ``match_reason`` of each row names
    #: id -> why a stage could not handle the record (added to its ``error``: rows, features file)
    notes: Dict[int, str] = field(default_factory=dict)
    #: Set on every row that has no error of its own (the last-resort result: :func:`unclustered`).
    row_error: str = ""


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
    def __init__(self, params: WebsimParams) -> None:
        self.params = params

    def run(self, store: FeatureStore, total_inputs: int = 0) -> Result:
        """The stages below, in order. Memory holds columns per page (ids, hashes, lengths,
        cluster numbers, the clustering keys) and what content clustering holds for its clustered
        pages; records are read from ``store`` one at a time (docs/performance.md, "The end of a
        large crawl").

        ``store`` is read, never written. A record that one stage cannot handle gets a note saying
        so (``Result.notes``: its ``error`` in the rows) and the others go on. If a stage fails as a
        whole, the result is :func:`unclustered`: every record, in no cluster, with
        ``meta["error"]`` saying why, so the output files are still written."""
        p = self.params
        failed: Dict[int, str] = {}
        notes: Dict[int, str] = {}  # the labelling's failures, once its pass is complete
        try:
            soft404 = calibrate_soft404(store, p.assign)
            templates = site_templates(store, p.template, p.cluster)
            keys, table = label_rules(store, p.assign, p.cluster, soft404, templates, failed=failed)
            notes = failed
            n_eligible = len(keys)
            pairs_failed: list = []
            content = cluster_content(keys, store, p.decision, p.cluster, failed=pairs_failed, templates=templates,
                                      short_items=table.short_items)
            del keys
            assigned = assign_clusters(store, content, table, p.assign)
            del content, table  # the columns of ``assigned`` are all the rows need
        except Exception as exc:
            logger.exception("websim: labelling and clustering failed; writing every record without a cluster")
            return unclustered(store, p, f"{type(exc).__name__}: {exc}", notes)
        meta = summary(store, n_eligible, assigned.kind, p, templates)
        if soft404 is not None:
            meta["soft404"] = soft404.summary()
        if pairs_failed:
            meta["pairs_failed"] = len(pairs_failed)
            logger.error("websim: %d page pairs could not be compared (kept apart), e.g. %s", len(pairs_failed),
                         pairs_failed[0])
        return Result(store=store, assigned=assigned, meta=meta, params=p, notes=notes)


# --- the store's last write, by whoever fills it (the extension, websim collect, websim cluster) ---

def renumber_discovered(store: FeatureStore) -> None:
    """Give pages discovered by following links (ids above :data:`PROVISIONAL_ID_BASE`) the ids
    after the input URLs, in URL order, so that ids do not depend on crawl order. The last write to
    a store before :meth:`Finalizer.run` reads it."""
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


# --- the stages of Finalizer.run: plain inputs and outputs, each callable alone ---

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
                failed: Optional[Dict[int, str]] = None,
                ) -> Tuple[cluster.ClusterKeys, PageTable]:
    """One pass over the records: ``(clustering keys of the pages eligible for content
    clustering, every page's assignment columns)``. A page with a special-page label (E1..T1,
    ``table.spec_pos``) is taken out of content clustering; of the rest, the pages
    :func:`core.match.cluster.is_eligible` accepts get keys. Nothing per page is kept as an object.
    A record that cannot be labelled is unlabelled, and ``failed[id]`` says why (the store is not
    written: the rows and the features file add it to the record's ``error``)."""
    table = PageTable()
    failed = {} if failed is None else failed
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


def summary(store: FeatureStore, n_eligible: int, kinds: Sequence[str], params: WebsimParams,
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
            "not_when": not_when(params),
            "structure_measure": d.structure_measure,
        },
        # the same thresholds as numbers, for 'websim explain' (which decides a pair as this run did)
        "decision_params": asdict(d),
        "cluster_params": asdict(params.cluster),
        "template_params": asdict(params.template),
        "templates": (templates or template.Templates(params=params.template)).summary(),
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def not_when(params: WebsimParams) -> List[str]:
    """The checks that keep a pair apart though rules 1 or 2 hold, in words (docs/decision.md,
    "Which bench needs which check")."""
    d, c = params.decision, params.cluster
    return [
        f"heading: both pages' judged texts differ and their h1 headings share < {d.heading_min_jaccard} of their "
        "words (unless both have one title that holds half the words of one h1)",
        f"prose length: both are mostly prose and the shorter has >= {d.prose_len_min_chars} characters of it, "
        f"< {d.prose_min_len_ratio} of the longer's",
        f"says much more: one page has > {d.max_more_shingles} shingles beyond the template and the noise "
        "allowance that the other lacks" if d.max_more_shingles else "says much more: off",
        "item: one page names in its title or h1 a word of its URL that the other's URL, title and h1 lack",
        "title item: the titles are one frame around a different item (pages named by number)",
        "form: a field both pages show holds another value on each, the value one URL asked for",
        f"title: both pages' judged texts differ and their titles (host and numbers left out) share no word, or "
        f"one has >= {d.title_own_words} words the other lacks" if d.title_own_words else "title: off",
        "identical text, another name: two pages with one judged text apart when the item, title item or form "
        "check says they are two items (an exact copy's key holds its heading)",
        f"short item: a page under {c.min_text_len} characters that is an item of its site joins exact copies only",
        f"templated: beyond a template that was most of both pages, text >= {d.rule1_templated} is needed",
    ]


def unclustered(store: FeatureStore, params: WebsimParams, why: str,
                notes: Optional[Dict[int, str]] = None) -> Result:
    """The last-resort result when labelling or clustering fails as a whole: one row per record,
    in no cluster, each row that had no error of its own saying that it was not clustered, and
    ``meta["error"]`` saying why (the command then exits with status 1)."""
    note = f"not clustered: labelling and clustering failed ({why})"[:300]
    ids = np.fromiter(store.ids(), np.int64)
    assigned = Assigned(ids, np.zeros(ids.shape[0], np.int64))
    meta = summary(store, 0, [], params)
    meta["error"] = note
    return Result(store=store, assigned=assigned, meta=meta, params=params, notes=dict(notes or {}),
                  row_error=note)


def recluster_file(path: str, params: WebsimParams) -> Result:
    """``websim cluster``: load a features JSON Lines file and cluster it again. The store is a
    temporary file, removed when the caller closes ``result.store`` (or here, if loading fails)."""
    store = FeatureStore(batch_size=params.config.batch_size)
    try:
        store.load_jsonl(path)
        renumber_discovered(store)
        return Finalizer(params).run(store)
    except BaseException:
        store.close()
        raise
