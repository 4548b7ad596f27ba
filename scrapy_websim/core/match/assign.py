"""One cluster per page: rule clusters and content clusters combined.

Every input URL ends in exactly one cluster, or in none. The steps run in this order and a page
placed by an earlier step is never moved: special pages grouped by rule and template fingerprint
(``RuleParams.scope``; thin pages by title and the shape of their words), content clusters
unchanged, then R1 (same final URL), U1 (same normalised URL; a fragment variant joins only when
it rendered the same text), then predicted duplicates join the page they were predicted from.
docs/special-pages.md ("How rule and content clusters combine") gives the ids, canonicals and
``match_rule`` of each step.

Memory: the steps run on columns (``assign_arrays.py``), not on records. :func:`add_page` reads
what they need of one record (~90 bytes a page) as the end of a crawl streams the store;
:func:`assign_table` assigns on those columns. :func:`combine` does the same on records in memory.
"""

from __future__ import annotations

import array
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple
from urllib.parse import urlsplit

import numpy as np

from ..fingerprints import TEMPLATE_SHINGLES, blake2b64, blake2b_digest, decode_shingle_set
from ..params.rules import RuleParams
from ..params.urls import UrlParams
from ..rules.label import Item, special_label
from ..types import MASK64, Assignment, Cluster, PageRecord, hex64
from ..urls.normalize import normalize_url, url_origin
from .assign_arrays import Assigned, PageTable, assign_pages, expand
from .similarity import own_sim, structure_sim

__all__ = ["AssignParams", "add_page", "assign_table", "combine", "content_cluster_id",
           "merge_similar_templates", "rule_cluster_prefix", "template_similarity"]

#: Cluster id prefix per rule.
RULE_PREFIX = {
    "E1": "err5xx",
    "E3": "errtpl",
    "L1": "loginwall",
    "W1": "waf",
    "M1": "maint",
    "T1": "thin",
    "R1": "redir",
    "U1": "urlcanon",
}


@dataclass(frozen=True)
class AssignParams:
    rules: RuleParams = field(default_factory=RuleParams)
    urls: UrlParams = field(default_factory=UrlParams)

    def validate(self) -> "AssignParams":
        self.rules.validate()
        self.urls.validate()
        return self


def rule_cluster_prefix(code: str) -> str:
    return RULE_PREFIX[code]


def _h64(text: str) -> str:
    return hex64(blake2b64(text))


def content_cluster_id(canonical_url: str) -> str:
    """Id of a content cluster created here (around a page that predicted pages duplicate)."""
    return f"content-{_h64(canonical_url)}"


def _origin(r: PageRecord) -> str:
    return origin_of(r.final_url or r.url)


_ORIGINS: Dict[Tuple[str, str], str] = {}


def origin_of(url: str) -> str:
    """``url_origin(url)``, computed once per scheme and authority: the origin depends on nothing
    else, and canonicalising a whole URL (~50 us) for each of 10M pages would cost minutes."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url_origin(url)
    key = (parts.scheme, parts.netloc)
    origin = _ORIGINS.get(key)
    if origin is None:
        if len(_ORIGINS) >= 100_000:
            _ORIGINS.clear()
        origin = _ORIGINS[key] = url_origin(f"{parts.scheme}://{parts.netloc}" if parts.netloc else url)
    return origin


def _template_key(r: PageRecord) -> int:
    if r.fingerprint is not None:
        return r.fingerprint & MASK64
    # Not rendered (non-HTML): the status and content type are the template.
    return int(_h64(f"{r.status_code}|{(r.content_type or '').split(';')[0].strip().lower()}"), 16)


_DIGITS = re.compile(r"\d+")


def _thin_title(r: PageRecord) -> str:
    """A thin page's title as its rule key reads it: words lower-cased, digits masked (a port or
    a count in a placeholder's title is no other page)."""
    return _DIGITS.sub("0", " ".join((r.title or "").lower().split()))


def status_class(code: str, status: Optional[int]) -> str:
    """The part of an E1/E3 page's status that is part of its template: digits are normalised
    away in the fingerprint, and a page that says only "Error 500" is not the 503 one, nor a
    "forbidden" 403 the 404 of one frame. 404 and 410 are one class ("not found", "gone"). A 2xx
    E3 page keeps its own: it may be a soft 404 of the not-found template, but also an error the
    application shows in the same frame (a report that fails with a database error), which is
    not the missing page's template."""
    value = int(status or 0)
    if code == "E3" and value in (404, 410):
        return "notfound"
    return str(value)


#: A thin page has under 200 characters of judged text or under 1 KB of HTML: a page with this
#: much text or more says something no thin page says, and gets no :func:`copy_key`.
COPY_TEXT_MAX = 2048


def copy_key(r: PageRecord) -> int:
    """What a page says and what it calls itself, as one 64-bit value (0 for a page without
    text, or with :data:`COPY_TEXT_MAX` characters or more): the exact-copy hash of its judged
    text, its h1 and its title (digits masked, as :func:`_thin_title`). A thin page (``T1``)
    with the key of a page that content clustering took (a short item of a larger site: a
    ticket, an API page of a few words) is a copy of that page, on a mirror whose few pages hold
    no kind of their own."""
    if not r.text_hash or not 0 < (r.text_len or 0) < COPY_TEXT_MAX:
        return 0
    h1 = r.signals.get("h1", "") if isinstance(r.signals, dict) else ""
    return int(_h64(f"{r.text_hash & MASK64:016x}|{h1}|{_thin_title(r)}"), 16) or 1


def _rule_key(code: str, r: PageRecord, scope: str) -> Tuple[str, str]:
    """(origin part, template part) of a special page's group key; ``""`` where the scope
    leaves that part out. The status code is part of an E1/E3 template (:func:`status_class`). A thin
    page's title is part of its template: the fingerprint leaves out what a page echoes of its
    URL, which is right for an error or login page (it names what was asked for, not what it is)
    and wrong for a short content page, which names its own item: javadoc's "Uses of Class
    java.awt.Robot: no usage" pages of a thousand classes are one template whose only words of
    their own are the class name, in the title and the heading. A placeholder page served on
    many hosts has one title everywhere. A thin page with main text is keyed by that text's shape
    (:attr:`~scrapy_websim.core.types.PageRecord.text_shape`: numbers, hosts and URLs masked) and
    its title rather than by the template: a copy in other chrome, or with a server's banner, has
    another fingerprint but the same few words, and "Ref 1234" / "Ref 98" are one template."""
    template = _template_key(r)
    if code == "T1":
        if r.text_shape and r.text_len > 0:
            template = int(_h64(f"shape|{r.text_shape & MASK64:016x}|{_thin_title(r)}"), 16)
        else:
            template = int(_h64(f"{template:016x}|{_thin_title(r)}"), 16)
    if scope == "origin":
        return _origin(r), ("" if code == "E1" else f"{template:016x}")
    if code in ("E1", "E3"):
        template = int(_h64(f"{status_class(code, r.status_code)}|{template:016x}"), 16)
    return "", f"{template:016x}"


_ZERO = bytes(16)


def _digest(text: str) -> bytes:
    """16 bytes: two different URLs share a digest with probability 2**-128."""
    return blake2b_digest(text, 16)


def _normalized(r: PageRecord, params: AssignParams) -> str:
    return r.normalized_url or normalize_url(r.url, params.urls)


def _route(r: PageRecord, norm: str) -> str:
    """The normalised URL with the exact-copy hash of the text the page rendered ("" for a page
    without rendered text): one rendering of one page, whatever its spelling."""
    if not norm or r.text_hash is None:
        return ""
    return f"{norm}#{r.text_hash & MASK64:016x}"


def _routes_on_fragment(r: PageRecord) -> bool:
    """A URL with a non-empty fragment that was rendered to text."""
    return r.text_hash is not None and bool((r.url or "").partition("#")[2])


def add_page(table: PageTable, r: PageRecord, params: AssignParams, soft404: Optional[Any] = None,
             item: Item = False) -> Optional[str]:
    """Append one page to ``table`` (ids strictly increasing) and return its special-page label
    (``soft404``: a :class:`~scrapy_websim.core.match.soft404.Soft404Calibration` that may make it E3;
    ``item``: whether the page is an item of its site, as :func:`special_label` takes it).
    Everything is read from the page before the table changes: if reading it raises, the table
    is as it was (see :func:`unlabelled`)."""
    label = special_label(r, params.rules, item)
    label = soft404.relabel(r, label) if soft404 is not None else label
    pos = len(table.ids)
    if pos and r.id <= table.ids[-1]:
        raise ValueError(f"page ids must come in increasing order: {r.id} after {table.ids[-1]}")
    norm = _normalized(r, params)
    route = _route(r, norm)
    digests = _url_digests(r, norm, route)
    flags = _url_flags(r, norm, route)
    key = _rule_key(label, r, params.rules.scope) if label is not None else ("", "")
    text_len = int(r.text_len or 0)
    table.ids.append(r.id)
    table.not200.append(0 if r.status_code == 200 else 1)
    table.text_len.append(text_len)
    table.url += digests[0]
    table.final += digests[1]
    table.norm += digests[2]
    table.route += digests[3]
    table.flags.append(flags)
    table.origin += digests[4]
    table.copy.append(int(r.text_hash) & MASK64 if r.text_hash and 0 < text_len < COPY_TEXT_MAX else 0)
    if label is not None:
        _add_special(table, pos, label, key, r.html_len or r.content_length or 0)
    if r.predicted_duplicate_of:
        table.pred_pos.append(pos)
        table.pred_key += _digest(r.predicted_duplicate_of)
    return label


def _url_digests(r: PageRecord, norm: str, route: str) -> Tuple[bytes, bytes, bytes, bytes, bytes]:
    """The digests of the page's URL, final URL, normalised URL, route and origin (zero for none)."""
    return (_digest(r.url), _digest(r.final_url) if r.final_url else _ZERO, _digest(norm) if norm else _ZERO,
            _digest(route) if route else _ZERO, _digest(_origin(r)))


def _url_flags(r: PageRecord, norm: str, route: str) -> int:
    """Which URL columns of the page take part in R1 / U1: 1 its final URL, 2 its normalised URL
    (not for a fragment rendered to text), 4 its route."""
    return (1 if r.final_url else 0) | (2 if norm and not _routes_on_fragment(r) else 0) | (4 if route else 0)


def _add_special(table: PageTable, pos: int, label: str, key: Tuple[str, str], length: int) -> None:
    """The page at ``pos`` joins (or starts) the group of its rule ``label`` and ``key``."""
    name = "-".join(part for part in (RULE_PREFIX[label], *key) if part)
    group = table.group_index.get(name)
    if group is None:
        group = table.group_index[name] = len(table.group_names)
        table.group_names.append(name)
        table.group_codes.append(label)
        table.group_scope.append(key[0])
        table.group_first.append(pos)
        table.group_size.append(0)
    table.group_size[group] += 1
    table.spec_pos.append(pos)
    table.spec_group.append(group)
    table.spec_len.append(length)


#: The rules whose pages are grouped by template similarity (T1 is keyed by the page's own words,
#: R1 and U1 by URL).
SIMILAR_TEMPLATE_RULES = ("E1", "E3", "L1", "W1", "M1")
#: A class with more groups than this finds each group's candidates through its smallest shingle
#: values (groups sharing one of :data:`_PROBES` of them) rather than comparing all pairs.
_ALL_PAIRS_MAX = 400
_PROBES = 8


#: Shingles of one template's page that the other lacks forgiven (the larger side's): a block a
#: template shows in one state and not another (a captcha for anonymous visitors, a "log in to
#: reach page X" line, a list of what was searched for).
TEMPLATE_NOISE_SHINGLES = 50


def template_similarity(a: PageRecord, b: PageRecord) -> Tuple[float, float]:
    """(masked-text similarity, structure similarity) of two special pages' templates: the word
    3-shingles of what their fingerprints hash (``fingerprint_shingles``; 0 when either has none),
    by the noise-forgiving measure of the text (:func:`~scrapy_websim.core.match.similarity.own_sim`
    with :data:`TEMPLATE_NOISE_SHINGLES`), and the cosine of their DOM counts with the weighted
    Jaccard of their tag paths."""
    sa, sb = decode_shingle_set(a.fingerprint_shingles), decode_shingle_set(b.fingerprint_shingles)
    if not sa.shape[0] or not sb.shape[0]:
        return 0.0, structure_sim(a, b)
    # a set cut at TEMPLATE_SHINGLES holds the smallest values: compare below the smaller ceiling
    ceilings = [int(x[-1]) for x in (sa, sb) if x.shape[0] >= TEMPLATE_SHINGLES]
    if ceilings:
        ceiling = min(ceilings)
        sa, sb = sa[sa <= ceiling], sb[sb <= ceiling]
    both = int(np.intersect1d(sa, sb, assume_unique=True).shape[0])
    own_a, own_b = int(sa.shape[0]) - both, int(sb.shape[0]) - both
    return own_sim(both, own_a, own_b, TEMPLATE_NOISE_SHINGLES), structure_sim(a, b)


def _template_text_min(code: str, rules: RuleParams) -> float:
    """How alike two templates' own texts must be to join: any error page of one status, a soft
    404 as a 404 (the structure decides), a login/WAF/maintenance page alike."""
    return rules.error_template_text_similarity if code in ("E1", "E3") else rules.template_text_similarity


def merge_similar_templates(table: PageTable, get: Callable[[int], PageRecord], params: AssignParams) -> int:
    """Join the special-page groups of one rule whose templates are alike: the same login form
    reached with another return-to value, a 404 naming another missing thing, a page adding a
    line about where a login leads. Groups are compared by their first page (smallest id); in each
    class (rule, scope and, for E1/E3, :func:`status_class`) the largest group (then the smallest
    name) takes the groups alike to it, then the next one left, so no chain of small changes joins
    two templates.
    Renames the joined groups' pages in ``table``; returns how many groups were joined."""
    rules = params.rules
    if len(table.group_names) < 2:
        return 0
    classes, reps = _template_classes(table, get)
    target = list(range(len(table.group_names)))
    joined = 0
    for (code, _scope, _status), members in classes.items():
        text_min = _template_text_min(code, rules)
        if len(members) < 2 or text_min > 1.0:
            continue
        members.sort(key=lambda g: (-table.group_size[g], table.group_names[g]))
        joined += _join_alike(members, reps, text_min, rules.template_structure_similarity, target)
    joined += _join_soft_404s(classes, reps, rules, target)
    if joined:
        remap = np.asarray(target, np.int64)
        groups = np.frombuffer(table.spec_group, np.int64)
        table.spec_group = array.array("q", remap[groups].tobytes()) if groups.shape[0] else table.spec_group
    return joined


def _template_classes(table: PageTable, get: Callable[[int], PageRecord]
                      ) -> Tuple[Dict[Tuple[str, str, str], List[int]], Dict[int, PageRecord]]:
    """The groups whose templates may join, by class (rule, scope and, for E1/E3, the status's
    :func:`status_class`), and each group's first page."""
    classes: Dict[Tuple[str, str, str], List[int]] = {}
    reps: Dict[int, PageRecord] = {}
    for g, code in enumerate(table.group_codes):
        if code not in SIMILAR_TEMPLATE_RULES:
            continue
        rep = reps[g] = get(int(table.ids[table.group_first[g]]))
        status = status_class(code, rep.status_code) if code in ("E1", "E3") else ""
        classes.setdefault((code, table.group_scope[g], status), []).append(g)
    return classes, reps


def _join_alike(members: List[int], reps: Dict[int, PageRecord], text_min: float, structure_min: float,
                target: List[int]) -> int:
    """In one class (``members`` largest first), each group left takes the groups alike to it
    (``target[h] = g``); how many were joined."""
    sets = {g: decode_shingle_set(reps[g].fingerprint_shingles) for g in members}
    order = {g: i for i, g in enumerate(members)}
    index = _probe_index(members, sets) if len(members) > _ALL_PAIRS_MAX else {}
    done: Set[int] = set()
    joined = 0
    for i, g in enumerate(members):
        if g in done:
            continue
        done.add(g)
        if index:
            cands = sorted(_probed(g, sets, index) - done, key=order.__getitem__)
        else:
            cands = [h for h in members[i + 1:] if h not in done]
        alike = [h for h in cands if _templates_alike(reps[g], reps[h], text_min, structure_min)]
        for h in alike:
            target[h] = g
        done.update(alike)
        joined += len(alike)
    return joined


def _join_soft_404s(classes: Dict[Tuple[str, str, str], List[int]], reps: Dict[int, PageRecord], rules: Any,
                    target: List[int]) -> int:
    """A 2xx E3 template joins a 404/410 template of its scope when their own texts are as alike
    as one login template's (``rules.template_text_similarity``), not merely their frame: a soft
    404 that says what the 404 says about another missing thing ("No such check-in" beside "No
    such document"), not an error the application shows in the same frame (a failing report)."""
    moved: Dict[int, int] = {}
    for (code, scope, status), soft in classes.items():
        if code == "E3" and status.isdigit() and 200 <= int(status) <= 299:
            hard = [g for g in classes.get(("E3", scope, "notfound"), ()) if target[g] == g]
            for h in (g for g in soft if target[g] == g) if hard else ():
                into = _first_alike(h, hard, reps, rules)
                if into is not None:
                    moved[h] = into
    if moved:
        target[:] = [moved.get(t, t) for t in target]
    return len(moved)


def _first_alike(h: int, groups: List[int], reps: Dict[int, PageRecord], rules: Any) -> Optional[int]:
    """The first of ``groups`` whose template is alike to ``h``'s, own texts as alike as one
    login template's."""
    return next((g for g in groups if _templates_alike(reps[g], reps[h], rules.template_text_similarity,
                                                       rules.template_structure_similarity)), None)


def _templates_alike(a: PageRecord, b: PageRecord, text_min: float, structure_min: float) -> bool:
    text, structure = template_similarity(a, b)
    return text >= text_min and structure >= structure_min


def _probed(g: int, sets: Dict[int, Any], index: Dict[int, List[int]]) -> Set[int]:
    """The groups that share one of their smallest shingle values with ``g``."""
    return {h for v in sets[g][:_PROBES].tolist() for h in index.get(v, ())}


def _probe_index(members: List[int], sets: Dict[int, Any]) -> Dict[int, List[int]]:
    """Smallest shingle value -> the groups holding it among their :data:`_PROBES` smallest."""
    index: Dict[int, List[int]] = {}
    for g in members:
        for v in sets[g][:_PROBES].tolist():
            index.setdefault(v, []).append(g)
    return index


def unlabelled(r: PageRecord) -> PageRecord:
    """What :func:`add_page` is given for a page it could not read: its id alone (not even the URL,
    which may be what could not be read), so the page has its row in the table, in no cluster."""
    return PageRecord(id=r.id, url="", error="not labelled")


def cluster_names(params: AssignParams) -> Dict[str, Callable[[PageRecord], str]]:
    """The id of a cluster made by R1, U1 or around a predicted page's target, from one of its pages."""
    def u1_id(r: PageRecord) -> str:
        k = _normalized(r, params)
        origin = url_origin(k)
        return f"urlcanon-{origin}-{k[len(origin):] or '/'}"

    def route_id(r: PageRecord) -> str:
        return u1_id(r) + _route(r, "-")[1:]

    return {"R1": lambda r: f"redir-{_h64(r.final_url)}", "U1": u1_id, "U1route": route_id,
            "predicted": lambda r: content_cluster_id(r.url)}


def assign_table(table: PageTable, content: Dict[int, Assignment], content_clusters: Iterable[Cluster],
                 params: AssignParams, get: Callable[[int], PageRecord]) -> Assigned:
    """Every page of ``table`` its one cluster or none, in columns (see the module docstring for
    the order); ``get(id)`` reads back the few pages whose strings name a new cluster."""
    return assign_pages(table, content, content_clusters, params.rules.enabled_rules,
                        params.rules.e3_length_tolerance, cluster_names(params), get, copy_key)


def combine(
    records: Iterable[PageRecord],
    content: Dict[int, Assignment],
    content_clusters: List[Cluster],
    params: AssignParams = AssignParams(),
    soft404: Optional[Any] = None,
) -> Tuple[Dict[int, Assignment], List[Cluster]]:
    """Give every page exactly one cluster or none (see the module docstring for the order).

    ``content`` maps page id -> Assignment for pages in content clusters (pages with an empty
    ``cluster_id`` count as alone); ``content_clusters`` are those clusters. Returns an
    Assignment for every record and every cluster (content and rule), sorted by canonical id.
    In memory, for small inputs; the end of a crawl streams the store into :func:`add_page` and
    :func:`assign_table` instead.
    """
    recs = sorted(records, key=lambda r: r.id)
    by_id = {r.id: r for r in recs}
    table = PageTable()
    for r in recs:
        add_page(table, r, params, soft404)
    merge_similar_templates(table, by_id.__getitem__, params)
    out = assign_table(table, content, content_clusters, params, by_id.__getitem__)
    clusters = list(out.clusters(lambda ids: {i: by_id[i].url for i in ids if i in by_id}))
    return expand(out, content), clusters
