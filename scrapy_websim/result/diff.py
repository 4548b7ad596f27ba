"""``websim diff OLD NEW``: what changed between two scans of the same scope.

Every URL is compared with itself: its status, its final URL, its label (the special-page rule of
its cluster), its content type, and, from the ``content_digest`` both results carry
(:mod:`scrapy_websim.core.page.digest`), its text with per-request tokens masked, the entries of a
directory listing, its tag structure and its screenshot. Clusters are not what is compared: a URL
whose cluster changed because a page it was grouped with changed is *collateral*, listed apart; a
URL that redirects to a listed URL whose content changed is collateral of it; and a cluster whose
members changed only by noise (a template id or a canonical that moved, pages the clustering
grouped otherwise) is no change.

What a URL's own change is (its ``kinds``, first the main one; :data:`KIND_WORDS`):

``failed`` / ``back``
    it could not be fetched this time / it could not before and can now, or it was an error,
    maintenance or login page and is content again;
``moved``
    its final URL changed: it now redirects (to a listed page or elsewhere), no longer redirects,
    or redirects somewhere else (session ids, tokens and tracking parameters masked, see
    :func:`_mask_url`);
``locked`` / ``opened``
    it became a login wall, a WAF / challenge page or a 401/403 / it was one and is not any more;
``gone``, ``5xx``, ``maintenance``
    it became an error page (404, a soft 404), a server error, a maintenance page;
``status``
    its status changed within one of these (``500 -> 503``, ``404 -> 410``);
``type``
    its content type (``text/html -> application/json``);
``content``
    its text changed: the masked word-pair similarity is below ``text_similarity`` and at least
    ``min_changed_pairs`` pairs were added or removed, or ``short_changed_pairs`` with the tag
    structure changed too (a short page moved to another template), or ``many_changed_pairs``
    whatever the similarity (a long page that gained a whole section); a short page (fewer than
    ``short_page_pairs`` in both scans) only with its structure or its title changed too. A
    smaller edit, a rotating banner, an ad slot, a tip of the day, a timestamp or shuffled links
    are no change (:class:`~scrapy_websim.core.params.page.ChangeParams` holds the thresholds);
``template``
    the same, for a special page that stayed one (a new server's or application's error page);
``listing``
    a directory listing gained or lost entries;
``title``, ``layout``
    only its title changed (numbers and ids masked); only its look (tag structure and screenshot
    both far apart).

A label that flips while the page, its status and its final URL stay the same (a thin page near
the length limit, a calibration) is no change: the rules judged one page two ways.

Results of versions without ``content_digest`` still diff: what they carry (status, final URL,
title, label) is compared, and for their content the diff falls back on cluster membership: a URL
whose cluster changed with no change of its own that could be checked is reported with the kind
``cluster``, and the diff says for how many URLs the content was not compared.

Clusters are matched by membership, never by id (content clusters are numbered, ``cluster-00001``
..., and the numbers move when a page is added anywhere): two clusters whose ids are derived from
what they group (every id but ``cluster-NNNNN``) and that are in both scans are the same cluster,
the rest are paired greedily by the number of unchanged URLs they share. Only clusters whose
membership changed because of a URL's own change (or a URL added or removed) are listed; their ids
are written ``old:ID`` (a cluster of the old scan) and ``new:ID`` (of the new scan).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple
from urllib.parse import urlsplit, urlunsplit

from scrapy_websim.core.match.reasons import RULE_NAMES, SPECIAL_CODES
from scrapy_websim.core.page.digest import Digest, DigestDelta, compare, masked_words, parse_digest
from scrapy_websim.core.params.page import ChangeParams
from scrapy_websim.core.urls.normalize import normalize_url
from scrapy_websim.result.report.writer import ReportError, load_result

__all__ = ["DiffError", "Scan", "KINDS", "KIND_WORDS", "UrlCompare", "load_scan", "compare_url",
           "redirect_target", "diff_scans", "diff_files", "summary_lines", "write_diff"]

#: Numbered content clusters: their ids say nothing about what they hold.
_NUMBERED = re.compile(r"^cluster-\d+$")
#: Rule cluster id prefixes, for results of versions without ``cluster_kind``.
_PREFIX_KIND = {"err5xx": "E1", "errtpl": "E3", "loginwall": "L1", "waf": "W1", "maint": "M1", "thin": "T1",
                "redir": "R1", "urlcanon": "U1", "cluster": "content", "content": "content"}
#: The kinds of a URL's own change, in the order they are named (the first one found is the main one).
KINDS = ("failed", "back", "moved", "locked", "opened", "gone", "5xx", "maintenance", "status", "type", "content",
         "template", "listing", "title", "layout", "cluster")
#: What each kind means, for the summary and the report's filter.
KIND_WORDS = {
    "failed": "could not be fetched", "back": "back (fetched again, or content again)", "moved": "final URL changed",
    "locked": "became a login wall or WAF page", "opened": "no longer a login wall or WAF page",
    "gone": "became an error page or soft 404", "5xx": "became a server error",
    "maintenance": "became a maintenance page",
    "status": "status changed", "content": "text changed", "template": "special page with another template",
    "listing": "entries added or removed", "title": "title changed", "layout": "look changed",
    "type": "content type changed", "cluster": "changed cluster (content not compared)",
}
#: States of a page that keep a visitor out: a login wall, a WAF page, a 401/403 without either.
_LOCKS = ("L1", "W1", "denied")
#: A query value or path segment that is a session id or token: masked when final URLs are compared.
_TOKENISH = re.compile(r"(?<![A-Za-z0-9_\-])(?=[a-z_\-]*[0-9A-Z])[A-Za-z0-9_\-]{16,}(?![A-Za-z0-9_\-])")
_SESSION_PATH_PARAM = re.compile(r";[a-z_]*sess[a-z_]*id=[^/?#]*", re.I)
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


#: The shipped thresholds of what counts as a change.
DEFAULT_CHANGE_PARAMS = ChangeParams()


class DiffError(ValueError):
    """A result file cannot be read or is not a scrapy-websim result."""


@dataclass
class Scan:
    """One result, keyed by URL (a URL listed twice: its second record is ``URL [2]``)."""

    path: str
    rows: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    members: Dict[str, Set[str]] = field(default_factory=dict)  # cluster id -> URL keys
    canonical: Dict[str, str] = field(default_factory=dict)  # cluster id -> URL key
    kind: Dict[str, str] = field(default_factory=dict)  # cluster id -> kind
    cluster_of: Dict[str, str] = field(default_factory=dict)  # URL key -> cluster id ("" alone)
    has_digests: bool = False  # the result carries content_digest (this version or later)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _kind_of(cluster_id: str, row: Dict[str, Any]) -> str:
    kind = _text(row.get("cluster_kind"))
    if kind:
        return kind
    return _PREFIX_KIND.get(cluster_id.split("-", 1)[0], "content")


def label_of(row: Dict[str, Any], kind: str) -> str:
    """``error`` (not fetched), the special-page rule of the page's cluster, else ``content``."""
    if _text(row.get("error")):
        return "error"
    return kind if kind in SPECIAL_CODES else "content"


def _is_canonical(row: Dict[str, Any]) -> bool:
    value = row.get("is_canonical")
    return value is True or value == "true"


def scan_from_rows(path: str, rows: Iterable[Dict[str, Any]]) -> Scan:
    scan = Scan(path)
    seen: Dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or "url" not in row:
            raise DiffError(f"{path}: record {n} has no 'url' field: not a scrapy-websim result")
        url = _text(row["url"])
        seen[url] = seen.get(url, 0) + 1
        key = url if seen[url] == 1 else f"{url} [{seen[url]}]"
        scan.rows[key] = row
        scan.has_digests = scan.has_digests or "content_digest" in row
        cid = _text(row.get("cluster_id"))
        scan.cluster_of[key] = cid
        if not cid:
            continue
        scan.members.setdefault(cid, set()).add(key)
        scan.kind.setdefault(cid, _kind_of(cid, row))
        if _is_canonical(row):
            scan.canonical.setdefault(cid, key)
    for cid, keys in scan.members.items():  # a result without is_canonical: its first member
        scan.canonical.setdefault(cid, min(keys))
    return scan


def load_scan(path: str) -> Scan:
    """Read a result file (JSON, JSON Lines or CSV, any version) into a :class:`Scan`."""
    if os.path.isdir(path):
        raise DiffError(f"{path!r} is a directory, not a result file")
    try:
        rows, _clusters, _meta = load_result(path)
    except ReportError as exc:
        raise DiffError(str(exc)) from None
    except OSError as exc:
        raise DiffError(f"{path!r}: {exc.strerror or exc}") from None
    return scan_from_rows(path, rows)


def _derived(cluster_id: str) -> bool:
    return not _NUMBERED.match(cluster_id)


def match_clusters(old: Scan, new: Scan, changed: Set[str] = frozenset()) -> Dict[str, str]:  # type: ignore[assignment]
    """Old cluster id -> new cluster id, for the clusters that are the same cluster: the same
    derived id, else most shared URLs, counting only URLs not in ``changed`` (a page whose content
    changed says nothing about which cluster is which)."""
    pairs = {cid: cid for cid in sorted(old.members.keys() & new.members.keys()) if _derived(cid)}
    taken = set(pairs.values())
    for (o, n), _count in sorted(_shared_urls(old, new, changed, pairs, taken).items(),
                                 key=lambda item: (-item[1], item[0])):
        if o not in pairs and n not in taken:
            pairs[o] = n
            taken.add(n)
    return pairs


def _shared_urls(old: Scan, new: Scan, changed: Set[str], pairs: Dict[str, str], taken: Set[str]
                 ) -> Dict[Tuple[str, str], int]:
    """(old cluster, new cluster) -> the URLs not in ``changed`` they share, for the clusters of one
    kind not paired yet."""
    overlap: Dict[Tuple[str, str], int] = {}
    for key, o in old.cluster_of.items():
        n = new.cluster_of.get(key, "")
        if key in changed or not o or not n or o in pairs or n in taken:
            continue
        if old.kind[o] == new.kind[n]:
            overlap[(o, n)] = overlap.get((o, n), 0) + 1
    return overlap


# ---------------------------------------------------------------------------------------------
# One URL compared with itself


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _state(row: Dict[str, Any], kind: str) -> str:
    """What a page is, for comparing it with itself: ``error`` (not fetched), a special-page rule
    that belongs to the page itself (``E1``, ``E3``, ``L1``, ``W1``, ``M1``; a thin page and the
    R1 / U1 groups, which depend on a length or on other URLs, count as ``content``), ``denied``
    (a 401 or 403 that no more specific rule took), or for a page no rule labelled (a non-HTML
    answer) ``E1`` / ``E3`` by its status."""
    if _text(row.get("error")):
        return "error"
    status = _int(row.get("status_code"))
    if kind not in ("E1", "E3", "L1", "W1", "M1"):
        kind = "E1" if status >= 500 else "E3" if 400 <= status < 500 else "content"
    return "denied" if kind == "E3" and status in (401, 403) else kind


def _mask_url(url: str) -> str:
    """A final URL normalised (tracking parameters, default ports, ``index.html``, trailing
    slash) with session ids and tokens masked: a path segment of 16 characters or more with a
    digit or a capital in it or of 8 or more mixing letters and digits (``/s/8f3a2b9c/``; not
    ``/article/12345``), a ``;jsessionid=``, a query value with a digit in it or of 16
    characters or more (``?sid=a8f3``, ``?t=1700000000``, ``?state=...``). ``?lang=en`` and
    ``?next=/admin`` stay."""
    norm = normalize_url(url) if url else ""
    try:
        parts = urlsplit(norm)
    except ValueError:
        return norm
    path = "/".join(_mask_segment(seg) for seg in _SESSION_PATH_PARAM.sub("", parts.path).split("/"))
    query = "&".join(_mask_parameter(piece) for piece in parts.query.split("&") if piece)
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def _mask_segment(segment: str) -> str:
    """A path segment, ``0`` when it looks like a session id or a token."""
    if _TOKENISH.fullmatch(segment) or len(segment) >= 8 and _DIGIT.search(segment) and _LETTER.search(segment):
        return "0"
    return segment


def _mask_parameter(piece: str) -> str:
    """``name=value`` of a query, the value ``0`` when it has a digit or is long."""
    name, sep, value = piece.partition("=")
    if not sep:
        return name
    return name + "=" + ("0" if _DIGIT.search(value) or len(value) >= 16 else value)


def redirect_target(row: Dict[str, Any]) -> str:
    """Where the URL leads when it is not itself (masked, see :func:`_mask_url`); "" when its
    final URL is the URL fetched."""
    final = _text(row.get("final_url"))
    chain = row.get("redirect_chain")
    if isinstance(chain, str):  # CSV: a JSON array
        try:
            chain = json.loads(chain) if chain else []
        except ValueError:
            chain = []
    first = chain[0] if isinstance(chain, list) and chain and isinstance(chain[0], str) else _text(row.get("url"))
    if not final:
        return ""
    target = _mask_url(final)
    return "" if target == _mask_url(first) or target == _mask_url(_text(row.get("url"))) else target


def _both(old: Dict[str, Any], new: Dict[str, Any], name: str) -> bool:
    """Both results carry the field (a result of an older version may not)."""
    return name in old and name in new


def _title(row: Dict[str, Any]) -> str:
    return " ".join(masked_words(_text(row.get("title"))))


def _main_type(row: Dict[str, Any]) -> str:
    return _text(row.get("content_type")).split(";")[0].strip().lower()


@dataclass
class UrlCompare:
    """One URL compared with itself (:func:`compare_url`)."""

    kinds: List[str] = field(default_factory=list)
    why: List[str] = field(default_factory=list)  # one phrase per kind
    figures: Dict[str, Any] = field(default_factory=dict)
    checked: bool = True  # the content could be compared (both sides have a digest, or neither was rendered)
    through: str = ""  # the listed URL this one redirects to, whose change it shows (collateral)

    def add(self, kind: str, why: str) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)
            self.why.append(why)


def _state_change(c: UrlCompare, old_state: str, new_state: str, old_status: int, new_status: int) -> None:
    """The kinds a change of state (and status) makes."""
    names = {"content": "content", "error": "not fetched", "denied": "E3 access denied",
             **{k: f"{k} {RULE_NAMES[k]}" for k in RULE_NAMES}}
    move = f"{names.get(old_state, old_state)} -> {names.get(new_state, new_state)}"
    if old_status != new_status:
        move += f" (status {old_status} -> {new_status})"
    if old_state == new_state:
        if old_status != new_status and (old_status // 100 != new_status // 100 or old_state != "content"):
            c.add("status", f"status {old_status} -> {new_status}")
        return
    c.add(_state_kind(old_state, new_state), move)


def _state_kind(old_state: str, new_state: str) -> str:
    """The kind of a change from one state to another."""
    if new_state in _LOCKS and old_state not in _LOCKS:
        return "locked"
    if old_state in _LOCKS and new_state not in _LOCKS:
        return {"content": "opened", "E1": "5xx", "E3": "gone", "M1": "maintenance"}[new_state]
    # an error state, content again, or from one error state to another
    return {"E1": "5xx", "E3": "gone", "M1": "maintenance", "content": "back"}.get(new_state, "status")


def _content_change(c: UrlCompare, a: Digest, b: Digest, special: bool, retitled: bool,
                    params: ChangeParams) -> None:
    d = compare(a, b)
    c.figures.update(text_similarity=d.text_similarity, pairs_added=d.added, pairs_removed=d.removed,
                     structure_distance=d.structure_distance, visual_distance=d.visual_distance,
                     entries=list(d.entries))
    structure = d.structure_distance >= params.structure_distance
    if _text_changed(d, max(a.shingles, b.shingles), structure, retitled, params):
        words = "replaced" if d.text_similarity < 0.2 else "changed"
        c.add("template" if special else "content",
              f"text {words} (similarity {d.text_similarity:.2f}; {d.added} word pairs added, {d.removed} removed)")
    old_n, new_n = d.entries
    if d.listing and abs(new_n - old_n) >= params.listing_entries:
        c.add("listing", f"listing {old_n} -> {new_n} entries ({new_n - old_n:+d})")
    if not c.kinds and structure and d.visual_distance is not None and d.visual_distance >= params.visual_distance:
        c.add("layout", f"look changed (structure {d.structure_distance}/64 and screenshot {d.visual_distance}/64 "
                        "bits apart)")


def _text_changed(d: DigestDelta, shingles: int, structure: bool, retitled: bool, params: ChangeParams) -> bool:
    """The text changed enough to be a change (``shingles``: the word pairs of the longer side;
    ``structure``: the tag structure changed too)."""
    dissimilar = d.text_similarity < params.text_similarity
    if shingles < params.short_page_pairs:  # a short page: its words alone may rotate
        return dissimilar and d.changed >= params.short_changed_pairs and (structure or retitled)
    return d.changed >= params.many_changed_pairs or dissimilar and (
        d.changed >= params.min_changed_pairs or (structure and d.changed >= params.short_changed_pairs))


def _page_changed(d: DigestDelta, params: ChangeParams) -> bool:
    """The page itself changed at all: some word pairs, or its tag structure."""
    return d.changed >= params.short_changed_pairs or d.structure_distance >= params.structure_distance


def compare_url(old: Dict[str, Any], new: Dict[str, Any], old_kind: str, new_kind: str,
                params: ChangeParams = DEFAULT_CHANGE_PARAMS) -> UrlCompare:
    """The own changes of one URL between two scans (its rows and the kinds of its clusters)."""
    c = UrlCompare()
    old_state, new_state = _state(old, old_kind), _state(new, new_kind)
    if old_state == "error" or new_state == "error":
        _fetch_change(c, old_state, new_state, new)
        return c
    _redirect_change(c, old, new)
    old_status, new_status = _int(old.get("status_code")), _int(new.get("status_code"))
    a, b = _digest(old), _digest(new)
    if _judged_twice(old_state, new_state, old_status, new_status, a, b, params):
        old_state = new_state  # the rules judged one page two ways (a thin page near the length limit): no change
    _state_change(c, old_state, new_state, old_status, new_status)
    _type_change(c, old, new)
    if a is None or b is None:
        c.checked = False
    elif not c.kinds and old_state == new_state:
        _content_change(c, a, b, old_state != "content", _retitled(old, new), params)
    if not c.kinds and _retitled(old, new):
        c.add("title", f"title {_text(old.get('title'))!r} -> {_text(new.get('title'))!r}")
    return c


def _fetch_change(c: UrlCompare, old_state: str, new_state: str, new: Dict[str, Any]) -> None:
    """One side could not be fetched: ``failed``, ``back`` or nothing."""
    if old_state == new_state:
        return
    if new_state == "error":
        c.add("failed", f"now fails: {_text(new.get('error'))[:120]}")
    else:
        c.add("back", "fetched again")


def _redirect_change(c: UrlCompare, old: Dict[str, Any], new: Dict[str, Any]) -> None:
    """``moved``: where the URL leads changed."""
    old_target, new_target = redirect_target(old), redirect_target(new)
    if old_target == new_target or not _both(old, new, "final_url"):
        return
    before, after = _text(old.get("final_url")), _text(new.get("final_url"))
    if not old_target:
        c.add("moved", f"now redirects to {after}")
    elif not new_target:
        c.add("moved", f"no longer redirects (went to {before})")
    else:
        c.add("moved", f"redirects to {after} instead of {before}")


def _judged_twice(old_state: str, new_state: str, old_status: int, new_status: int, a: Optional[Digest],
                  b: Optional[Digest], params: ChangeParams) -> bool:
    """The state changed while the status and the page itself did not."""
    if old_state == new_state or old_status != new_status or a is None or b is None:
        return False
    return not _page_changed(compare(a, b), params)


def _type_change(c: UrlCompare, old: Dict[str, Any], new: Dict[str, Any]) -> None:
    old_type, new_type = _main_type(old), _main_type(new)
    if old_type != new_type and old_type and new_type:
        c.add("type", f"content type {old_type} -> {new_type}")


def _retitled(old: Dict[str, Any], new: Dict[str, Any]) -> bool:
    """Both results carry a title, and it changed (numbers and ids masked)."""
    return _both(old, new, "title") and _title(old) != _title(new)


#: The digest of a page with no text, no entries, no structure and no screenshot.
_EMPTY_DIGEST = Digest(shingles=0, sketch=(0xFFFF,) * 64, entries=0, entries_hash=0, listing=False, structure=0,
                       phash=None)


def _digest(row: Dict[str, Any]) -> Optional[Digest]:
    """The page's digest; an empty one for a page with nothing to digest (not HTML, an empty
    page) in a result that carries digests; None when its content is unknown: a result written
    without digests, or a page predicted to be a duplicate and not rendered."""
    if "content_digest" not in row or _text(row.get("match_rule")) == "predicted":
        return None
    return parse_digest(row.get("content_digest")) or _EMPTY_DIGEST


# ---------------------------------------------------------------------------------------------
# The diff of two scans


def _side(scan: Scan, key: str, pairs_name: str) -> Dict[str, Any]:
    row = scan.rows[key]
    cid = scan.cluster_of.get(key, "")
    return {"status": row.get("status_code"), "label": label_of(row, scan.kind.get(cid, "")),
            "title": _text(row.get("title")), "final_url": _text(row.get("final_url")),
            "excerpt": _text(row.get("excerpt")), "cluster": f"{pairs_name}:{cid}" if cid else "",
            "error": _text(row.get("error"))}


def _peers(scan: Scan, key: str) -> Set[str]:
    cid = scan.cluster_of.get(key, "")
    return (scan.members.get(cid, set()) - {key}) if cid else set()


def diff_scans(old: Scan, new: Scan, params: ChangeParams = DEFAULT_CHANGE_PARAMS) -> Dict[str, Any]:
    """The changes from ``old`` to ``new`` (see the module docstring), as one JSON-able dict."""
    params.validate()
    both = sorted(old.rows.keys() & new.rows.keys())
    added_urls = sorted(new.rows.keys() - old.rows.keys())
    removed_urls = sorted(old.rows.keys() - new.rows.keys())
    compared = {key: compare_url(old.rows[key], new.rows[key], old.kind.get(old.cluster_of[key], ""),
                                 new.kind.get(new.cluster_of[key], ""), params) for key in both}
    _through_redirects(old, new, compared)
    own = {key for key, c in compared.items() if c.kinds} | set(added_urls) | set(removed_urls)
    unchecked = [key for key, c in compared.items() if not c.checked]
    own |= _cluster_as_change(old, new, compared, unchecked)
    collateral, regrouped = _collateral(old, new, both, own, compared)
    url_changes = _url_changes(old, new, both, own, compared)
    clusters, canonicals = _cluster_changes(old, new, own, match_clusters(old, new, own))
    by_kind = _kind_counts(url_changes)
    counts = {
        "urls_changed": len(url_changes),
        "urls_added": len(added_urls),
        "urls_removed": len(removed_urls),
        "collateral": len(collateral),
        "unchecked": len(unchecked),
        "regrouped": len(regrouped),
        "clusters_appeared": len(clusters["appeared"]),
        "clusters_vanished": len(clusters["vanished"]),
        "clusters_changed": len(clusters["changed"]),
        "canonicals_changed": len(canonicals),
    }
    return {
        "kind": "websim-diff",
        "version": 2,
        "old": {"path": old.path, "urls": len(old.rows), "clusters": len(old.members), "digests": old.has_digests},
        "new": {"path": new.path, "urls": len(new.rows), "clusters": len(new.members), "digests": new.has_digests},
        "changed": bool(url_changes or added_urls or removed_urls),
        "params": asdict(params),
        "counts": counts,
        "by_kind": by_kind,
        "kind_words": {k: KIND_WORDS[k] for k in by_kind},
        "urls": {"changed": url_changes, "collateral": collateral, "added": added_urls, "removed": removed_urls,
                 "unchecked": sorted(unchecked), "regrouped": regrouped},
        "clusters": clusters,
        "canonicals": canonicals,
        "notes": _unchecked_notes(old, new, unchecked),
    }


def _cluster_as_change(old: Scan, new: Scan, compared: Dict[str, UrlCompare], unchecked: List[str]) -> Set[str]:
    """A URL whose content could not be compared: a change of its cluster is its change (kind
    ``cluster``). The URLs that got it."""
    pairs = match_clusters(old, new)
    marked = set()
    for key in unchecked:
        o, n = old.cluster_of[key], new.cluster_of[key]
        if not compared[key].kinds and (o or n) and (not o or not n or pairs.get(o) != n):
            compared[key].add("cluster", f"cluster {_cluster_name('old', o)} -> {_cluster_name('new', n)} "
                                         "(content not compared)")
            marked.add(key)
    return marked


def _collateral(old: Scan, new: Scan, both: List[str], own: Set[str], compared: Dict[str, UrlCompare]
                ) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The URLs with no change of their own whose cluster changed: collateral when only URLs with
    changes of their own (or the URL they redirect to) joined or left it, else regrouped."""
    collateral: List[Dict[str, Any]] = []
    regrouped: List[str] = []
    for key in both:
        if key in own:
            continue
        before, after = _peers(old, key), _peers(new, key)
        moved = before ^ after
        through = {compared[key].through} - {""}
        if not moved and not through:
            continue
        if moved <= own:
            moved |= through
            collateral.append({"url": key, "joined": sorted(after - before), "left": sorted(before - after),
                               "because": sorted(moved), "old": _side(old, key, "old"), "new": _side(new, key, "new")})
        else:
            regrouped.append(key)
    return collateral, regrouped


def _url_changes(old: Scan, new: Scan, both: List[str], own: Set[str], compared: Dict[str, UrlCompare]
                 ) -> List[Dict[str, Any]]:
    """Every URL with changes of its own, with its before and after."""
    changes = []
    for key in both:
        c = compared[key]
        if not c.kinds:
            continue
        copies = sorted(_peers(new, key) - _peers(old, key) - own)
        if copies and c.kinds[0] in ("content", "template"):
            more = f" (+{len(copies) - 1} more)" if len(copies) > 1 else ""
            c.why[0] += f"; now grouped with {copies[0]}{more}"
        changes.append({"url": key, "kinds": c.kinds, "main": c.kinds[0], "what": "; ".join(c.why),
                        "figures": c.figures, "old": _side(old, key, "old"), "new": _side(new, key, "new")})
    return changes


def _kind_counts(url_changes: List[Dict[str, Any]]) -> Dict[str, int]:
    """URLs per kind of change, in the order of :data:`KINDS`."""
    counts: Dict[str, int] = {}
    for u in url_changes:
        for kind in u["kinds"]:
            counts[kind] = counts.get(kind, 0) + 1
    return {k: counts[k] for k in KINDS if k in counts}


def _unchecked_notes(old: Scan, new: Scan, unchecked: List[str]) -> List[str]:
    if not unchecked:
        return []
    which = [s.path for s in (old, new) if not s.has_digests]
    why = (f"{' and '.join(which)} {'has' if len(which) == 1 else 'have'} no content_digest (written by an "
           "earlier version)") if which else "pages without a content digest (not rendered)"
    return [f"content of {len(unchecked)} URLs not compared: {why}; status, final URL, title and label were, and a "
            "change of cluster is reported instead (kind 'cluster')"]


#: Kinds that say what a page's content is; a URL that redirects shows its target's content.
_CONTENT_KINDS = frozenset(("content", "template", "listing", "title", "layout"))


def _through_redirects(old: Scan, new: Scan, compared: Dict[str, UrlCompare]) -> None:
    """A URL that redirects, in both scans, to the same listed URL shows that URL's content: when
    that changed, the change is the target's (reported for it), not the redirecting URL's."""
    listed: Dict[str, str] = {}
    for key in compared:
        if not redirect_target(new.rows[key]):
            listed.setdefault(_mask_url(_text(new.rows[key].get("url"))), key)
    for key, c in compared.items():
        shown = _shown_target(c, old.rows[key], new.rows[key], listed)
        if shown is not None and shown != key and compared[shown].kinds:
            c.kinds.clear()
            c.why.clear()
            c.through = shown


def _shown_target(c: UrlCompare, old: Dict[str, Any], new: Dict[str, Any], listed: Dict[str, str]) -> Optional[str]:
    """The listed URL whose content a URL shows: it redirects there in both scans, and its changes
    are all of content."""
    target = redirect_target(new)
    if not target or not c.kinds or not set(c.kinds) <= _CONTENT_KINDS or target != redirect_target(old):
        return None
    return listed.get(target)


def _cluster_name(which: str, cid: str) -> str:
    return f"{which}:{cid}" if cid else "(no cluster)"


def _cluster_changes(old: Scan, new: Scan, own: Set[str], pairs: Dict[str, str]
                     ) -> Tuple[Dict[str, List[Dict[str, Any]]], List[Dict[str, Any]]]:
    """The clusters whose membership changed because of URLs' own changes (``own``), and the
    canonicals that changed because the old canonical changed or left."""
    paired_new = set(pairs.values())

    def entry(scan: Scan, which: str, cid: str) -> Dict[str, Any]:
        members = scan.members[cid]
        return {"cluster_id": f"{which}:{cid}", "kind": scan.kind[cid], "size": len(members),
                "canonical_url": scan.canonical.get(cid, ""), "urls": sorted(members),
                "changed_urls": sorted(members & own)}

    appeared = [entry(new, "new", cid) for cid in sorted(new.members)
                if cid not in paired_new and new.members[cid] & own]
    vanished = [entry(old, "old", cid) for cid in sorted(old.members) if cid not in pairs and old.members[cid] & own]
    changed, canonicals = _paired_changes(old, new, own, pairs)
    return {"appeared": appeared, "vanished": vanished, "changed": changed}, canonicals


def _paired_changes(old: Scan, new: Scan, own: Set[str], pairs: Dict[str, str]
                    ) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Of the clusters in both scans: those URLs with changes of their own joined or left, and
    those whose canonical changed because the old one did."""
    changed: List[Dict[str, Any]] = []
    canonicals: List[Dict[str, Any]] = []
    for o, n in sorted(pairs.items()):
        joined, left = sorted(new.members[n] - old.members[o]), sorted(old.members[o] - new.members[n])
        cause = sorted(set(joined + left) & own)
        if cause:
            changed.append({"old_cluster": f"old:{o}", "new_cluster": f"new:{n}", "kind": new.kind[n],
                            "old_size": len(old.members[o]), "new_size": len(new.members[n]),
                            "joined": joined, "left": left, "because": cause})
        oc, nc = old.canonical.get(o, ""), new.canonical.get(n, "")
        if oc != nc and oc in own:
            canonicals.append({"old_cluster": f"old:{o}", "new_cluster": f"new:{n}", "old_canonical": oc,
                               "new_canonical": nc})
    return changed, canonicals


def diff_files(old_path: str, new_path: str, params: ChangeParams = DEFAULT_CHANGE_PARAMS) -> Dict[str, Any]:
    return diff_scans(load_scan(old_path), load_scan(new_path), params)


# ---------------------------------------------------------------------------------------------
# The summary for a person


def _more(lines: List[str], items: List[Any], limit: int, line) -> None:
    for item in items[:limit]:
        got = line(item)
        lines.extend(got if isinstance(got, list) else [got])
    if len(items) > limit:
        lines.append(f"    ... {len(items) - limit} more (all of them in the JSON: -o diff.json)")


def _quote(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "\u2026")


def _state_words(side: Dict[str, Any]) -> str:
    if side["error"]:
        return f"not fetched ({side['error'][:80]})"
    bits = [f"{side['status']} {side['label']}", _quote(side["title"], 60)]
    if side["final_url"]:
        bits.append(f"at {side['final_url']}")
    if side["excerpt"]:
        bits.append(_quote(side["excerpt"]))
    return " ".join(bits)


def summary_lines(d: Dict[str, Any], limit: int = 30) -> List[str]:
    """The diff for a person: counts, each changed URL with its before and after, then the
    collateral and the clusters (``limit`` entries per list)."""
    c = d["counts"]
    lines = [f"websim diff: {d['old']['path']} ({d['old']['urls']} URLs, {d['old']['clusters']} clusters) -> "
             f"{d['new']['path']} ({d['new']['urls']} URLs, {d['new']['clusters']} clusters)"]
    lines.extend(f"note: {note}" for note in d.get("notes", ()))
    if not d["changed"]:
        lines.append("no changes")
        return lines
    kinds = ", ".join(f"{n} {k}" for k, n in d["by_kind"].items())
    lines.append(f"{c['urls_changed']} URLs changed ({kinds or 'none'}); {c['urls_added']} added, "
                 f"{c['urls_removed']} removed; {c['collateral']} collateral (a page grouped with them changed)")

    def url_block(u: Dict[str, Any]) -> List[str]:
        return [f"  {u['url']}  [{', '.join(u['kinds'])}] {u['what']}",
                f"      before: {_state_words(u['old'])}",
                f"      after:  {_state_words(u['new'])}"]

    _more(lines, d["urls"]["changed"], limit, url_block)
    _more(lines, d["urls"]["added"], limit, lambda u: f"  + URL {u}")
    _more(lines, d["urls"]["removed"], limit, lambda u: f"  - URL {u}")
    if d["urls"]["collateral"]:
        _collateral_lines(lines, d["urls"]["collateral"], limit)
    cl = d["clusters"]
    if cl["appeared"] or cl["vanished"] or cl["changed"] or d["canonicals"]:
        _cluster_lines(lines, cl, d["canonicals"], limit)
    return lines


def _collateral_lines(lines: List[str], collateral: List[Dict[str, Any]], limit: int) -> None:
    """The collateral URLs, grouped by the URLs that joined and left their cluster."""
    lines.append("collateral (these pages did not change; a page of their cluster did):")
    groups: Dict[Tuple[Tuple[str, ...], Tuple[str, ...]], List[str]] = {}
    for x in collateral:
        groups.setdefault((tuple(x["joined"]), tuple(x["left"])), []).append(x["url"])

    def collateral_line(item: Tuple[Tuple[Tuple[str, ...], Tuple[str, ...]], List[str]]) -> str:
        (joined, left), urls = item
        bits = []
        if joined:
            bits.append("now with " + ", ".join(joined[:3]) + (" ..." if len(joined) > 3 else ""))
        if left:
            bits.append("no longer with " + ", ".join(left[:3]) + (" ..." if len(left) > 3 else ""))
        more = f" (+{len(urls) - 3} more)" if len(urls) > 3 else ""
        return f"  {', '.join(urls[:3])}{more}: {'; '.join(bits)}"

    _more(lines, list(groups.items()), limit, collateral_line)


def _cluster_lines(lines: List[str], cl: Dict[str, List[Dict[str, Any]]], canonicals: List[Dict[str, Any]],
                   limit: int) -> None:
    """The clusters that appeared, vanished or changed, and the canonicals that changed."""
    lines.append("clusters these changes touched (old:ID is a cluster of the old scan, new:ID of the new one):")

    def pages(n: int) -> str:
        return f"{n} page" if n == 1 else f"{n} pages"

    _more(lines, cl["appeared"], limit, lambda x: f"  + {x['cluster_id']} ({x['kind']}, {pages(x['size'])}) "
                                                  f"appeared with {', '.join(x['changed_urls'][:3])}")
    _more(lines, cl["vanished"], limit, lambda x: f"  - {x['cluster_id']} ({x['kind']}, {pages(x['size'])}) "
                                                  f"vanished with {', '.join(x['changed_urls'][:3])}")

    def changed_line(x: Dict[str, Any]) -> str:
        because = set(x["because"])
        bits = [f"+{u}" for u in x["joined"] if u in because][:3] + [f"-{u}" for u in x["left"] if u in because][:3]
        more = len(because) - len(bits)
        others = len(x["joined"]) + len(x["left"]) - len(because)
        return (f"  ~ {x['old_cluster']} = {x['new_cluster']} ({x['kind']}, {x['old_size']} -> {x['new_size']} "
                f"pages): " + " ".join(bits) + (f" (+{more} more)" if more > 0 else "")
                + (f" (and {others} unchanged {'page' if others == 1 else 'pages'} regrouped)" if others else ""))

    _more(lines, cl["changed"], limit, changed_line)
    _more(lines, canonicals, limit,
          lambda x: f"  canonical of {x['new_cluster']}: {x['old_canonical']} -> {x['new_canonical']}")


def write_diff(path: str, d: Dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(d, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    os.replace(tmp, path)

