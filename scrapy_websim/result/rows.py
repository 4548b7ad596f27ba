"""The rows of a result: one per input URL (``OUTPUT_FIELDS``) and one per cluster, the stage
between labelling and clustering (``finalize.py``) and the files (``output.py``, the report).

:class:`ResultRows` reads the store and the :class:`~scrapy_websim.result.finalize.Result` beside
it, one record at a time; nothing here writes the store or knows a file format. Each url row is
the record as the store holds it, with the error a stage noted for it (``Result.notes``), its
assignment and its ``match_reason`` (``core/match/reasons.py``); :meth:`ResultRows.pairs` gives
each record (what the features file holds) with its row, so that every file of a run is written
from one pass over the store (``output.write_files``). Scrapy-free.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, Dict, Iterable, Iterator, Optional, Tuple

from scrapy_websim.core.match import reasons
from scrapy_websim.core.store import FeatureStore
from scrapy_websim.core.types import OUTPUT_FIELDS, Assignment, Cluster, PageRecord
from scrapy_websim.result.finalize import Result


def output_row(record: PageRecord, a: Optional[Assignment], reason: str = "") -> Dict[str, Any]:
    """The url record: ``OUTPUT_FIELDS`` in order (``reason``: its
    ``match_reason``, from ``core/match/reasons.py``)."""
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
        "tls_sha256": record.tls_sha256,
        "tls_sans": list(record.tls_sans),
        "favicon_url": record.favicon_url,
        "favicon_hash": record.favicon_hash,
        "match_reason": reason,
        "excerpt": record.excerpt,
        "content_digest": record.content_digest,
        "render_from": record.render_from,
    }
    if in_cluster and a.is_canonical:
        row.update(content_sim=1.0, structure_sim=1.0, visual_sim=1.0, behavior_sim=1.0)
    return OrderedDict((name, row[name]) for name in OUTPUT_FIELDS)


def safe_output_row(record: PageRecord, a: Optional[Assignment], reason: str = "") -> Dict[str, Any]:
    """:func:`output_row`, or for a record it cannot make a row of, the row of its id and URL with
    ``error`` saying what failed: one record never costs the others their rows."""
    try:
        return output_row(record, a, reason)
    except Exception as exc:  # noqa: BLE001
        return unwritable_row(record.id, record.url, exc)


def unwritable_row(page_id: Any, url: Any, exc: BaseException) -> Dict[str, Any]:
    """The row written in place of one that could not be made or encoded."""
    kept = PageRecord(id=page_id if type(page_id) is int else 0, url=url if isinstance(url, str) else "",
                      error=f"the record could not be written: {type(exc).__name__}: {exc}"[:300])
    kept.clean()
    return output_row(kept, None)


def cluster_row(c: Cluster) -> Dict[str, Any]:
    return OrderedDict(cluster_id=c.cluster_id, canonical_url=c.canonical_url, member_ids=list(c.member_ids),
                       kind=c.kind, origins=c.origins)


def cluster_rows(clusters: Iterable[Cluster]) -> Iterator[Dict[str, Any]]:
    return (cluster_row(c) for c in clusters)


class ResultRows:
    """The rows of ``result``, made from its store as they are read (a pass over the store each
    time :meth:`pairs`, :meth:`url_rows` or :meth:`records` is iterated: nothing per row is kept),
    and its ``meta``. What the writers of ``output.py`` and the report take."""

    def __init__(self, result: Result) -> None:
        self.result = result
        self.store: FeatureStore = result.store
        self.meta: Dict[str, Any] = result.meta

    def records(self) -> Iterator[PageRecord]:
        """The store's records in id order, each with the error a stage noted for it."""
        notes = self.result.notes
        for record in self.store.iter_records():
            note = notes.get(record.id)
            if note:
                record.error = f"{record.error}; {note}" if record.error else note
            yield record

    def pairs(self) -> Iterator[Tuple[PageRecord, Dict[str, Any]]]:
        """``(record, url row)`` per record, in id order (the store's): the record as
        :meth:`records` gives it, the row with its cluster and ``match_reason``."""
        result = self.result
        assigned, p, row_error = result.assigned, result.params, result.row_error
        ids = assigned.ids
        canonical_of = dict(zip(assigned.names, assigned.canon))
        for pos, (record, a) in enumerate(zip(self.records(), assigned.iter_assignments())):
            if record.id != ids[pos]:
                raise RuntimeError(f"the feature store changed after clustering (record {record.id})")
            shown = record
            if row_error and not record.error:  # on the row only: the features file keeps the record
                shown = copy.copy(record)
                shown.error = row_error
            try:
                why = reasons.match_reason(shown, a, canonical_of.get(a.cluster_id, 0), p.decision, p.cluster,
                                           record.id in assigned.short_items)
            except Exception as exc:  # noqa: BLE001 - the row is written without its reason
                why = f"no reason: {type(exc).__name__}: {exc}"[:300]
            yield record, safe_output_row(shown, a, why)

    def url_rows(self) -> Iterator[Dict[str, Any]]:
        """One row per record, in id order (the store's), with its cluster and ``match_reason``."""
        return (row for _record, row in self.pairs())

    def cluster_rows(self) -> Iterator[Dict[str, Any]]:
        return cluster_rows(self.result.assigned.clusters(self.store.urls_of))

    def probes(self) -> Iterator[PageRecord]:
        """The store's soft-404 probe records (the end of a features file)."""
        return self.store.iter_probes()
