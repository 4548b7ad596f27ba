"""Why a page is where it is: the ``match_reason`` of every url record, and the words of a pair
decision for ``websim explain``.

A record's reason is written from what the clustering kept for it (its cluster, its canonical,
its ``match_rule`` and the similarities to the canonical, which are the very figures
:func:`similarity.compare` decided on) and the thresholds of the run; nothing is compared again.
Clustering is canonical-centred: a member of a content cluster joined by its comparison with the
canonical, never with another member, so its reason names the canonical. Special pages are
grouped by rule and template fingerprint, so theirs names the rule, the status and the
fingerprint.
"""

from __future__ import annotations

from typing import List, Optional

from ..params.match import ClusterParams, DecisionParams
from ..types import Assignment, PageRecord, PairResult
from .cluster import DEFAULT_PARAMS, _row_eligible
from .similarity import DEFAULT_DECISION_PARAMS, PairDecision

__all__ = ["RULE_NAMES", "SPECIAL_CODES", "match_reason", "ineligible_because", "decision_words"]

#: The special-page rules (their pages never take part in content clustering).
SPECIAL_CODES = ("E1", "E3", "L1", "W1", "M1", "T1")
RULE_NAMES = {
    "E1": "5xx server error",
    "E3": "error page / soft 404",
    "L1": "login wall",
    "W1": "WAF / challenge page",
    "M1": "maintenance page",
    "T1": "thin page",
    "R1": "same final URL",
    "U1": "same normalised URL",
}


def _f(value: float) -> str:
    return f"{value:.3f}"


def _t(value: float) -> str:
    return f"{value:g}"


def ineligible_because(record: PageRecord, params: ClusterParams = DEFAULT_PARAMS, item: bool = False) -> List[str]:
    """What keeps a page out of content clustering (README "Clustering"); empty when eligible
    (``item``: an item of its site, eligible with any text)."""
    # the eligibility test of the clustering itself, on the six columns it reads
    if _row_eligible((record.id, record.status_code, record.content_type or "", record.html_len,
                      record.text_len, record.error or ""), params, item):
        return []
    return _fetch_reasons(record) + _size_reasons(record, params, item)


def _fetch_reasons(record: PageRecord) -> List[str]:
    """What about the fetch keeps a page out: an error, a status other than 2xx, not HTML."""
    why = []
    if record.error:
        why.append(f"error: {record.error[:120]}")
    status = int(record.status_code or 0)
    if not 200 <= status <= 299:
        why.append(f"status {status}" if status else "no response")
    ctype = (record.content_type or "").split(";")[0].strip()
    if ctype.lower() not in ("text/html", "application/xhtml+xml"):
        why.append(f"content type {ctype or 'none'}, not HTML")
    return why


def _size_reasons(record: PageRecord, params: ClusterParams, item: bool) -> List[str]:
    """What about its size keeps a page out: too little HTML, too little main text."""
    why = []
    if (record.html_len or 0) < params.min_html_len:
        why.append(f"HTML {record.html_len or 0} bytes < {params.min_html_len}")
    if (record.text_len or 0) < (1 if item else params.min_text_len):
        why.append(f"main text {record.text_len or 0} characters < {params.min_text_len}"
                   + ("" if item or not record.text_len else " (and not one of many pages of one kind on its site)"))
    return why


def own_words(sims: PairResult) -> str:
    """What the text measure compared beyond the sites' template, in words ("" when it compared
    MinHashes or SimHashes)."""
    if sims.shared < 0:
        return ""
    head = (f"{sims.template_share:.0%} of the shingles were the site's template; beyond it "
            if sims.template_share > 0 else "no site template; ")
    return f"{head}{sims.shared} shingles on both, {sims.own_a} and {sims.own_b} on one only"


def _rule1_words(sims: PairResult, text_threshold: float, params: DecisionParams) -> str:
    own = own_words(sims)
    parts = [f"text {_f(sims.content_sim)}" + (f" ({own})" if own else "") + f" >= {_t(text_threshold)}"]
    if sims.structure_sim >= params.rule1_structure:
        parts.append(f"structure {_f(sims.structure_sim)} >= {_t(params.rule1_structure)}")
    if sims.visual_sim >= params.rule1_visual:
        parts.append(f"visual {_f(sims.visual_sim)} >= {_t(params.rule1_visual)}")
    if len(parts) == 3:
        return f"{parts[0]} and {parts[1]} (and {parts[2]})"
    return " and ".join(parts)


def _rule2_words(sims: PairResult, params: DecisionParams) -> str:
    own = own_words(sims)
    return (f"visual {_f(sims.visual_sim)} >= {_t(params.rule2_visual)}, "
            f"text {_f(sims.content_sim)}" + (f" ({own})" if own else "")
            + f" >= rule 2's floor {_t(params.rule2_min_jaccard)}")


def _sims_words(sims: PairResult) -> str:
    return f"text {_f(sims.content_sim)}, structure {_f(sims.structure_sim)}, visual {_f(sims.visual_sim)}"


def match_reason(record: PageRecord, a: Optional[Assignment], canonical_id: int = 0,
                 decision: DecisionParams = DEFAULT_DECISION_PARAMS,
                 cluster_params: ClusterParams = DEFAULT_PARAMS, item: bool = False) -> str:
    """One line saying why ``record`` is in its cluster (or in none), for the url record (``item``:
    a page with little text that was clustered as an item of its site)."""
    a = a or Assignment()
    rule = a.match_rule
    if not a.cluster_id:
        return _alone_reason(record, cluster_params, item)
    kind = a.cluster_kind
    if kind in SPECIAL_CODES and rule in ("canonical", kind):
        return _special_reason(record, kind, rule, canonical_id)
    if rule == "canonical":
        return _canonical_reason(kind)
    if rule in ("rule1", "rule2", "exact"):
        return _decided_reason(record, a, canonical_id, decision)
    return _joined_reason(record, rule, canonical_id)


def _alone_reason(record: PageRecord, cluster_params: ClusterParams, item: bool) -> str:
    why = ineligible_because(record, cluster_params, item)
    if why:
        return "alone: not eligible for content clustering (" + "; ".join(why) + ")"
    return ("alone: eligible, but no candidate page (if it had any) is a duplicate of it "
            "(websim explain shows why for a pair)")


def _special_reason(record: PageRecord, kind: str, rule: str, canonical_id: int) -> str:
    """A page of a special-page rule's cluster."""
    fp = f"{record.fingerprint:016x}" if record.fingerprint is not None else "none (not rendered)"
    head = f"{kind} {RULE_NAMES[kind]}: status {record.status_code}, template fingerprint {fp}"
    tail = ("; canonical: its status-200 page, else the longest text, else the smallest id"
            if rule == "canonical"
            else f"; grouped with the pages of this rule and template (canonical #{canonical_id})")
    return head + tail


def _canonical_reason(kind: str) -> str:
    if kind == "content":
        return ("canonical: the best page of its candidate group (status 200 first, then the text most "
                "pages serve, then the longest text, then the smallest id); members joined by comparison with it")
    return (f"canonical of a {RULE_NAMES.get(kind, kind)} cluster: its status-200 page, else the longest text, "
            f"else the smallest id")


def _decided_reason(record: PageRecord, a: Assignment, canonical_id: int, decision: DecisionParams) -> str:
    """A member that joined by a comparison with its canonical (``rule1``, ``rule2``, ``exact``)."""
    rule = a.match_rule
    if rule == "rule1":
        jaccard = bool(record.minhash)
        threshold = decision.rule1_jaccard if jaccard else decision.rule1_text
        return f"rule1 with canonical #{canonical_id}: {_rule1_words(a.sims, threshold, decision)}"
    if rule == "rule2":
        return f"rule2 with canonical #{canonical_id}: {_rule2_words(a.sims, decision)}"
    return (f"exact: the same judged text (text_hash) as a page of the cluster, and no title or form naming "
            f"another item, so an exact copy; with canonical #{canonical_id} ({_sims_words(a.sims)}) neither rule "
            f"holds alone")


def _joined_reason(record: PageRecord, rule: str, canonical_id: int) -> str:
    """A member that joined without a comparison (R1, U1, a prediction)."""
    if rule == "R1":
        return f"R1: its final URL {record.final_url} is also another page's final URL; joined that page's cluster"
    if rule == "U1":
        return f"U1: its normalised URL {record.normalized_url} is also another page's; joined that page's cluster"
    if rule == "copy":
        return (f"copy: thin by its own site, but its judged text, heading and title are those of a page of this "
                f"content cluster (canonical #{canonical_id}): a copy of a short item of a larger site")
    if rule == "predicted":
        return (f"predicted: not rendered; the URL predictor judged it a duplicate of "
                f"{record.predicted_duplicate_of} and it joined that page's cluster")
    return f"{rule or 'joined'} (canonical #{canonical_id})"


#: The checks that keep apart two pages about two items of one kind, as ``websim explain`` words
#: them: (name, PairDecision flag, why it keeps a pair apart, what passing means).
_ITEM_CHECKS = (
    ("item check", "items_veto",
     "a page names in its title or h1 a word of its own URL that the other page's URL, title and h1 lack",
     "neither page names an item of its own URL that the other lacks"),
    ("title item check", "title_items_veto", "the titles are one frame around a different item on each side",
     "the titles do not name two items in one frame"),
    ("form check", "fields_veto",
     "a form field shows a different value on each page, on one of them what its URL asked for",
     "no form field shows what one page was asked for and the other lacks"),
)


def decision_words(d: PairDecision, params: DecisionParams = DEFAULT_DECISION_PARAMS) -> List[str]:
    """The pair decision as lines: each similarity against its thresholds, each rule, each check."""
    r = d.result
    lines = [
        f"text       {_f(r.content_sim)}  {_measure_words(d)}; rule 1 needs >= {_t(d.text_threshold)}, "
        f"rule 2 needs >= {_t(params.rule2_min_jaccard)}",
        f"structure  {_f(r.structure_sim)}  ({params.structure_measure}); rule 1 needs >= {_t(params.rule1_structure)} "
        f"(or visual >= {_t(params.rule1_visual)})",
        f"visual     {_f(r.visual_sim)}  rule 1 needs >= {_t(params.rule1_visual)} without structure; "
        f"rule 2 needs >= {_t(params.rule2_visual)}",
        f"behaviour  {_f(r.behavior_sim)}  (reported only)",
        _rule1_line(d, params),
        _rule2_line(d, params),
    ]
    lines += _check_lines(d, params)
    joined = d.rule1 or d.rule2 or d.text_measure == "identical"  # one judged text joins by itself
    if not joined:  # the checks only ever keep apart a pair a rule joined
        lines = [line.replace(": keeps them apart", ": would keep them apart (no rule joined them anyway)")
                 for line in lines]
    verdict = (f"decision: duplicates ({r.rule})" if r.is_duplicate else
               "decision: not duplicates" + (" (a check kept them apart)" if joined else ""))
    lines.append(verdict)
    return lines


def _measure_words(d: PairDecision) -> str:
    """How the text similarity was measured."""
    measure = {"identical": "identical judged text (equal text_hash)",
               "minhash": "MinHash shingle measure", "simhash": "SimHash measure (no MinHash)"}[d.text_measure]
    if d.own is None or d.text_measure == "identical":
        return measure
    own = d.own
    if own.template_a or own.template_b:
        return ("exact shingle measure beyond the sites' template: "
                f"{own.template_share(0):.0%} of A's and {own.template_share(1):.0%} of B's shingles were "
                f"template; {own.both} on both, {own.own_a} on A only, {own.own_b} on B only")
    return (f"exact shingle measure (no site template): {own.both} on both, {own.own_a} on A only, "
            f"{own.own_b} on B only")


def _rule1_line(d: PairDecision, params: DecisionParams) -> str:
    r = d.result
    if d.rule1:
        return f"rule 1: yes ({_rule1_words(r, d.text_threshold, params)})"
    if r.content_sim < d.text_threshold:
        return f"rule 1: no (text {_f(r.content_sim)} < {_t(d.text_threshold)})"
    return (f"rule 1: no (structure {_f(r.structure_sim)} < {_t(params.rule1_structure)} and "
            f"visual {_f(r.visual_sim)} < {_t(params.rule1_visual)})")


def _rule2_line(d: PairDecision, params: DecisionParams) -> str:
    r = d.result
    if not d.rule2_allowed:
        why = ("a screenshot is missing or near-uniform (too few pHash bits set or unset)"
               if d.rule2_blocked == "screenshot" else
               f"text {_f(r.content_sim)} < rule 2's floor {_t(params.rule2_min_jaccard)}")
        return f"rule 2: not applied ({why})"
    if d.rule2:
        return f"rule 2: yes ({_rule2_words(r, params)})"
    return f"rule 2: no (visual {_f(r.visual_sim)} < {_t(params.rule2_visual)})"


def _check_lines(d: PairDecision, params: DecisionParams) -> List[str]:
    """The checks that keep apart a pair a rule joined, each as a line (or why none applied)."""
    if d.text_measure == "identical":
        lines = ["checks: identical judged text: only the checks of what the pages call themselves apply"]
        for name, veto, why, passed in _ITEM_CHECKS:
            lines.append(f"{name}: {why} (two items of one kind): keeps them apart" if getattr(d, veto)
                         else f"{name}: passed ({passed})")
        return lines
    if d.same_words and not d.checked:
        return [f"checks: not applied (the same {d.own.both if d.own else 0} word shingles beyond the template "
                "on both pages, give or take a phrase)"]
    if not d.checked:
        return []
    lines = [_heading_line(d, params), _prose_line(d, params)]
    if d.more_veto:
        lines.append(f"more check: one page says more than {params.max_more_shingles} shingles beyond the "
                     f"noise allowance ({params.text_noise_shingles}) that the other lacks: keeps them apart")
    else:
        lines.append("more check: passed (neither page says much more than the other)")
    for name, veto, why, passed in _ITEM_CHECKS:
        lines.append(f"{name}: {why} (two items of one kind): keeps them apart" if getattr(d, veto)
                     else f"{name}: passed ({passed})")
    lines.append(_title_line(d))
    return lines


def _title_line(d: PairDecision) -> str:
    if d.titles_veto:
        return ("title check: the titles name two pages (they share no word, or one has words of its own): "
                "keeps them apart")
    return "title check: passed (the titles share their words, give or take two, or a page has none)"


def _heading_line(d: PairDecision, params: DecisionParams) -> str:
    if d.heading is None:
        return "heading check: not applied (a page has no h1)"
    if d.heading_veto:
        return (f"heading check: h1 headings share {_f(d.heading)} of their words < "
                f"{_t(params.heading_min_jaccard)}: keeps them apart")
    if d.heading < params.heading_min_jaccard:
        return (f"heading check: h1 headings share {_f(d.heading)} < {_t(params.heading_min_jaccard)}, "
                f"but both pages carry one title that names their h1: not applied")
    return f"heading check: passed (h1 headings share {_f(d.heading)} >= {_t(params.heading_min_jaccard)})"


def _prose_line(d: PairDecision, params: DecisionParams) -> str:
    if d.prose_veto:
        short, long_ = sorted(d.prose_lengths)
        return (f"prose length check: both mostly prose, {short} < {_t(params.prose_min_len_ratio)} x "
                f"{long_} characters: keeps them apart")
    return f"prose length check: passed (prose {d.prose_lengths[0]} / {d.prose_lengths[1]} characters)"
