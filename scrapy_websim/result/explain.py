"""``websim explain``: why two pages are (or are not) in one cluster.

The pair is decided by :func:`scrapy_websim.core.match.similarity.judge`, the function whose
``result`` the clustering's :func:`~scrapy_websim.core.match.similarity.compare` returns, on the
two pages' features (a features file written with ``--features-file``), with the thresholds of the
run that wrote the result (its ``meta.decision_params``) unless the command gives others. The
candidate test is the clustering's own (``cluster.is_candidate_pair``), the special-page labels are
``core/rules/label.py``'s. With a result file, what the clustering did with the pair is read
from it: clustering is canonical-centred, so two pages were compared with each other only when
one of them is the canonical of the group the other was in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, List, Optional, Set, Tuple

from scrapy_websim.core.fingerprints import hamming
from scrapy_websim.core.match import cluster, reasons, similarity, template
from scrapy_websim.core.params.match import ClusterParams, DecisionParams
from scrapy_websim.core.rules.label import special_label
from scrapy_websim.core.store import NotAFeaturesFile, iter_jsonl
from scrapy_websim.core.types import PageRecord
from scrapy_websim.result.report.writer import ReportError, load_result

__all__ = ["ExplainError", "PairExplanation", "explain_records", "explain_files", "is_features_file"]


class ExplainError(ValueError):
    """A file cannot be read, or a URL is not in it."""


@dataclass
class PairExplanation:
    lines: List[str] = field(default_factory=list)
    data: Dict[str, Any] = field(default_factory=dict)
    #: the pair decision (None: not compared by content, a page being special or not eligible)
    duplicate: Optional[bool] = None
    #: what the result file says: "together" (one cluster), "apart" or "" (no result file)
    clustered: str = ""
    #: the result agrees with the decision where the clustering decided this very pair
    agrees: Optional[bool] = None


def is_features_file(path: str) -> bool:
    try:
        next(iter(iter_jsonl(path)), None)
    except (NotAFeaturesFile, ValueError, UnicodeDecodeError):
        return False
    return True


def find_records(path: str, urls: Tuple[str, ...], sampler: Optional[template.TemplateSampler] = None,
                 min_html_len: int = 0) -> Dict[str, PageRecord]:
    """The records of ``urls`` in a features file (by ``url``, else by ``final_url``); with a
    ``sampler``, every page the sites' templates may be made of is shown to it on the way."""
    try:
        found, by_final = _read_features(path, set(urls), sampler, min_html_len)
    except NotAFeaturesFile as exc:
        raise ExplainError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExplainError(f"{path}: {exc}") from None
    for url in urls:
        if url not in found and url in by_final:
            found[url] = by_final[url]
    missing = [url for url in urls if url not in found]
    if missing:
        raise ExplainError(f"{path}: no page with URL {missing[0]!r} (give the URL as it was in the list)")
    return found


def _read_features(path: str, wanted: Set[str], sampler: Optional[template.TemplateSampler], min_html_len: int
                   ) -> Tuple[Dict[str, PageRecord], Dict[str, PageRecord]]:
    """One pass over a features file: the first record of each wanted URL by ``url`` and by
    ``final_url``; each page a template may be made of shown to ``sampler``."""
    found: Dict[str, PageRecord] = {}
    by_final: Dict[str, PageRecord] = {}
    for record in iter_jsonl(path):
        if sampler is not None and _can_sample(record, min_html_len):
            sampler.see(record.id, cluster.host_of(record), record.text_hash)
        if record.url in wanted and record.url not in found:
            found[record.url] = record
        if record.final_url in wanted and record.final_url not in by_final:
            by_final[record.final_url] = record
    return found, by_final


def _can_sample(record: PageRecord, min_html_len: int) -> bool:
    return not record.probe_for and template.can_sample(record.status_code, record.content_type, record.html_len,
                                                        record.text_len, record.error, min_html_len)


def _describe(name: str, r: PageRecord) -> str:
    h1 = r.signals.get("h1", "") if isinstance(r.signals, dict) else ""
    return (f"{name}: #{r.id} {r.url} (status {r.status_code}, {r.text_len} characters of text"
            + (f", h1 {h1[:80]!r}" if h1 else "") + (f", title {r.title[:80]!r}" if r.title else "") + ")")


def _label_line(name: str, r: PageRecord, label: Optional[str]) -> str:
    if label is None:
        return ""
    fp = f"{r.fingerprint:016x}" if r.fingerprint is not None else "none"
    return f"{name} is a special page: {label} {reasons.RULE_NAMES[label]} (template fingerprint {fp})"


def candidate_words(a: PageRecord, b: PageRecord, params: ClusterParams) -> Tuple[bool, str]:
    """Whether the clustering's pre-filter makes the two eligible pages a candidate pair, and why.
    (The same-heading candidates also need that at most ``heading_max_pages`` eligible pages share
    the heading, which two pages alone cannot tell: assumed here.)"""
    keys = cluster.build_keys([a, b], params)
    ok = cluster.is_candidate_pair(keys, params, 0, 1)
    bits = []
    if a.simhash is not None and b.simhash is not None:
        bits.append(f"SimHash distance {hamming(a.simhash, b.simhash)} (<= {params.simhash_distance} needed)")
    short, long_ = sorted((a.text_len, b.text_len))
    bits.append(f"text lengths {short} / {long_} (differ by <= {params.length_diff:.0%} or "
                f"{params.length_noise_chars} characters needed)")
    if params.visual_distance >= 0 and a.phash is not None and b.phash is not None:
        bits.append(f"pHash distance {hamming(a.phash, b.phash)} (<= {params.visual_distance} makes a candidate)")
    ha, hb = cluster.heading_key(a), cluster.heading_key(b)
    if ha and ha == hb:
        bits.append("same h1 (or title without h1)")
    if params.same_host_only and cluster.host_of(a) != cluster.host_of(b):
        bits.append("other hosts (same-host-only)")
    return ok, "; ".join(bits)


def _row_words(name: str, row: Dict[str, Any]) -> str:
    cid = row.get("cluster_id") or ""
    if not cid:
        where = "in no cluster"
    else:
        where = f"in {cid}" + (" (canonical)" if row.get("is_canonical") in (True, "true") else "")
    why = row.get("match_reason") or ""
    return f"{name} {where}" + (f": {why}" if why else "")


def explain_records(a: PageRecord, b: PageRecord, decision: DecisionParams,
                    cluster_params: ClusterParams, rule_params: Any,
                    rows: Optional[Tuple[Dict[str, Any], Dict[str, Any]]] = None,
                    templates: Optional[template.Templates] = None) -> PairExplanation:
    """The explanation of one pair from the two records (and, if given, their result rows, and
    the sites' templates the crawl's pages make)."""
    ex = PairExplanation()
    lines = ex.lines
    lines += [_describe("A", a), _describe("B", b)]
    labels = (special_label(a, rule_params), special_label(b, rule_params))
    ineligible = (reasons.ineligible_because(a, cluster_params), reasons.ineligible_because(b, cluster_params))
    ex.data = {"a": {"id": a.id, "url": a.url, "label": labels[0] or "", "ineligible": ineligible[0]},
               "b": {"id": b.id, "url": b.url, "label": labels[1] or "", "ineligible": ineligible[1]}}
    compared = _compared_by_content(lines, ((a, labels[0], ineligible[0]), (b, labels[1], ineligible[1])))
    if a.id == b.id:
        lines.append("A and B are the same page")
    if compared:
        ok, words = candidate_words(a, b, cluster_params)
        ex.data["candidates"] = ok
        lines.append(("candidates: yes (" if ok else "candidates: no, the clustering never compares them (")
                     + words + ")")
    d = similarity.judge(a, b, decision, full=True, template=templates.for_pair(a, b) if templates else None)
    ex.data["decision"] = _decision_data(d, decision)
    if compared:
        lines += reasons.decision_words(d, decision)
        ex.duplicate = d.result.is_duplicate
    else:
        lines.append("the decision below is what the pages' features say; the clustering did not use it:")
        lines += ["  " + line for line in reasons.decision_words(d, decision)]
    if rows is not None:
        _clustering_words(ex, d, rows, labels)
    return ex


def _compared_by_content(lines: List[str], pages: Tuple[Tuple[PageRecord, Optional[str], List[str]], ...]) -> bool:
    """Whether the clustering compares the two pages by content: neither is a special page nor
    ineligible (``pages``: each page with its label and why it is not eligible); a line for each
    that is."""
    compared = True
    for name, (r, label, why) in zip("AB", pages):
        if label is not None:
            lines.append(_label_line(name, r, label) + ": special pages are grouped by rule and template, "
                         "never compared by content")
            compared = False
        elif why:
            lines.append(f"{name} is not eligible for content clustering: " + "; ".join(why))
            compared = False
    return compared


def _decision_data(d: similarity.PairDecision, decision: DecisionParams) -> Dict[str, Any]:
    """The pair decision's figures and thresholds, for ``--json``."""
    return {
        "text_sim": d.result.content_sim, "structure_sim": d.result.structure_sim,
        "visual_sim": d.result.visual_sim, "behavior_sim": d.result.behavior_sim,
        "text_measure": d.text_measure, "text_threshold": d.text_threshold,
        "structure_threshold": decision.rule1_structure, "visual_threshold": decision.rule1_visual,
        "visual_fallback_threshold": decision.rule2_visual, "rule2_min_text": decision.rule2_min_jaccard,
        "rule1": d.rule1, "rule2": d.rule2, "rule2_allowed": d.rule2_allowed, "rule2_blocked": d.rule2_blocked,
        "heading_sim": d.heading, "title_names_heading": d.title_names_heading, "heading_veto": d.heading_veto,
        "prose_lengths": list(d.prose_lengths), "prose_veto": d.prose_veto, "more_veto": d.more_veto,
        "items_veto": d.items_veto, "title_items_veto": d.title_items_veto, "fields_veto": d.fields_veto,
        "titles_veto": d.titles_veto,
        "duplicate": d.result.is_duplicate, "rule": d.result.rule,
        "template_share": [d.own.template_share(0), d.own.template_share(1)] if d.own else None,
        "shared_shingles": d.own.both if d.own else None,
        "own_shingles": [d.own.own_a, d.own.own_b] if d.own else None,
    }


def _clustering_words(ex: PairExplanation, d: similarity.PairDecision,
                      rows: Tuple[Dict[str, Any], Dict[str, Any]], labels: Tuple[Optional[str], Optional[str]]) -> None:
    """What the result file did with the pair, and whether that agrees with the decision."""
    ra, rb = rows
    ex.lines += ["in the result:", "  " + _row_words("A", ra), "  " + _row_words("B", rb)]
    ca, cb = ra.get("cluster_id") or "", rb.get("cluster_id") or ""
    together = bool(ca) and ca == cb
    ex.clustered = "together" if together else "apart"
    ex.data["result"] = {"a_cluster": ca, "b_cluster": cb, "together": together}
    ex.lines.append(_together_words(ex, d, ra, rb) if together else _apart_words(ex, d, labels))


def _is_canonical(row: Dict[str, Any]) -> bool:
    return row.get("is_canonical") in (True, "true")


def _content_kind(row: Dict[str, Any]) -> bool:
    return (row.get("cluster_kind") or "content") == "content"


def _together_words(ex: PairExplanation, d: similarity.PairDecision, ra: Dict[str, Any], rb: Dict[str, Any]) -> str:
    """The two pages are in one cluster: how they got there (and whether the decision agrees)."""
    how = _joined_by_comparison(ra, rb)
    if how:
        ex.agrees = _agrees(d, how)
        return (f"clustering: {'B' if _is_canonical(ra) else 'A'} joined by its comparison with the canonical "
                f"({how}); " + ("the decision above agrees" if ex.agrees else
                                "the decision above DISAGREES (other thresholds than this run's?)"))
    if not (_content_kind(ra) and _content_kind(rb)):
        kind = ra.get("cluster_kind") or ""
        return (f"clustering: together in a {kind} cluster: special pages group by rule and template "
                f"fingerprint (R1/U1 by final or normalised URL), without a pair comparison")
    return ("clustering: both are in one cluster without a comparison of this pair: a member joins by its "
            "comparison with the canonical (never with another member), or by R1, U1 or prediction")


def _joined_by_comparison(ra: Dict[str, Any], rb: Dict[str, Any]) -> str:
    """Of two pages of one content cluster, one the canonical: how the other joined it when that
    was by comparing this very pair (``rule1``, ``rule2``, ``exact``), else ``""``."""
    if not (_content_kind(ra) and _content_kind(rb)) or not (_is_canonical(ra) or _is_canonical(rb)):
        return ""
    how = (rb if _is_canonical(ra) else ra).get("match_rule") or ""
    return how if how in ("rule1", "rule2", "exact") else ""


def _agrees(d: similarity.PairDecision, how: str) -> bool:
    """The decision agrees with a member's ``match_rule`` against its canonical."""
    if how in ("rule1", "rule2"):
        return d.result.is_duplicate and d.result.rule == how
    return d.text_measure == "identical" or d.result.is_duplicate  # an exact copy joins whatever the decision says


def _apart_words(ex: PairExplanation, d: similarity.PairDecision, labels: Tuple[Optional[str], Optional[str]]) -> str:
    """The two pages are in two clusters (or none): why."""
    if labels[0] or labels[1]:
        return "clustering: apart (at least one is a special page; those group by rule and template)"
    if ex.duplicate is None:
        return "clustering: apart (a page not eligible for content clustering is never compared)"
    if d.result.is_duplicate:
        return ("clustering: apart although the pair is a duplicate: the clustering compares a page only with "
                "the canonical of its group, and one of them had already joined another canonical, or they "
                "are not candidates")
    ex.agrees = True
    return "clustering: apart, and the decision agrees (not duplicates)"


def decision_params_of(meta: Dict[str, Any], base: DecisionParams, overridden: bool
                       ) -> DecisionParams:
    given = meta.get("decision_params") if isinstance(meta, dict) else None
    if overridden or not isinstance(given, dict):
        return base
    names = {f.name for f in fields(DecisionParams)}
    return replace(base, **{k: v for k, v in given.items() if k in names}).validate()


def cluster_params_of(meta: Dict[str, Any], base: ClusterParams, overridden: bool) -> ClusterParams:
    given = meta.get("cluster_params") if isinstance(meta, dict) else None
    if overridden or not isinstance(given, dict):
        return base
    names = {f.name for f in fields(ClusterParams)}
    return replace(base, **{k: v for k, v in given.items() if k in names})


def explain_files(first: str, url_a: str, url_b: str, features: Optional[str], params: Any,
                  overridden: bool = False) -> PairExplanation:
    """``websim explain FIRST URL_A URL_B [--features F]``: FIRST is a features file, or a result
    file (then ``features`` gives the pages' features). ``params``: the WebsimParams of the
    command's settings; the result's own thresholds win unless ``overridden``."""
    rows = None
    meta: Dict[str, Any] = {}
    if is_features_file(first):
        features = first
    else:
        rows, meta = _result_rows(first, url_a, url_b)
        if not features:
            return _without_features(rows)
    decision = decision_params_of(meta, params.decision, overridden)
    cluster_params = cluster_params_of(meta, params.cluster or cluster.DEFAULT_PARAMS, overridden)
    sampler = template.TemplateSampler(params.template)
    records = find_records(features, (url_a, url_b), sampler, cluster_params.min_html_len)
    templates = template.build_templates(sampler.samples(), _pages_of(features, sampler), params.template,
                                         sampler.scales())
    return explain_records(records[url_a], records[url_b], decision, cluster_params, params.assign.rules, rows,
                           templates)


def _result_rows(path: str, url_a: str, url_b: str) -> Tuple[Tuple[Dict[str, Any], Dict[str, Any]], Dict[str, Any]]:
    """The rows of the two URLs in a result file, and its ``meta``."""
    try:
        result_rows, _clusters, meta = load_result(path)
    except ReportError as exc:
        raise ExplainError(str(exc)) from None
    by_url: Dict[str, Dict[str, Any]] = {}
    for row in result_rows:
        if isinstance(row, dict):
            by_url.setdefault(str(row.get("url", "")), row)
    missing = [u for u in (url_a, url_b) if u not in by_url]
    if missing:
        raise ExplainError(f"{path}: no record with URL {missing[0]!r}")
    return (by_url[url_a], by_url[url_b]), meta


def _without_features(rows: Tuple[Dict[str, Any], Dict[str, Any]]) -> PairExplanation:
    """What a result file alone says about the pair."""
    ex = PairExplanation(clustered="together" if rows[0].get("cluster_id") and
                         rows[0].get("cluster_id") == rows[1].get("cluster_id") else "apart")
    ex.lines = ["in the result:", "  " + _row_words("A", rows[0]), "  " + _row_words("B", rows[1]),
                "the pair decision needs the pages' features: add --features FILE (a crawl writes it "
                "with --features-file)"]
    ex.data = {"result": {"a_cluster": rows[0].get("cluster_id") or "", "b_cluster": rows[1].get("cluster_id") or ""}}
    return ex


def _pages_of(features: str, sampler: template.TemplateSampler) -> Any:
    """``ids -> (id, shingle set, tag paths)`` of the sampled pages of a features file (read again, once)."""
    wanted = {pid for ids in sampler.samples().values() for pid in ids}
    pages: Dict[int, Tuple[str, Any]] = {}
    if wanted:
        for record in iter_jsonl(features):
            if record.id in wanted and not record.probe_for:
                pages[record.id] = (record.shingle_set, record.tag_paths)
    return lambda ids: ((i, *pages[i]) for i in ids if i in pages)


def to_json(ex: PairExplanation) -> str:
    data = dict(ex.data, duplicate=ex.duplicate, clustered=ex.clustered, agrees=ex.agrees, lines=ex.lines)
    return json.dumps(data, ensure_ascii=False, indent=1)
