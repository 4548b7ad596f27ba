"""``websim diff OLD NEW``: what changed between two scans of the same scope.

Two result files (``.json``, ``.jsonl`` or ``.csv``, of this version or an older one) are compared
by URL and by cluster membership, never by cluster id alone: content clusters are numbered
(``cluster-00001`` ...) and the numbers move when a page is added anywhere, so a cluster of the
old scan is matched with the cluster of the new scan that shares most of its URLs.

Matching clusters
    1. Clusters whose id is derived from what they group (every id but the numbered
       ``cluster-NNNNN``: ``errtpl-{template hash}``, ``urlcanon-{origin}-{path}``, ...) and that
       exist in both scans are the same cluster.
    2. The rest are paired greedily by the number of URLs they share (most first; ties by the two
       ids), each cluster at most once, and only clusters of one kind (a content cluster whose
       pages became login walls has vanished, and a login-wall cluster appeared). A cluster of the
       new scan that shares no URL with any unpaired old cluster has *appeared*; an old one left
       unpaired has *vanished*.

What counts as a change
    * a cluster appeared or vanished;
    * a paired cluster *grew* (URLs only the new one has) and/or *shrank* (URLs only the old one
      had), or, both ids being derived from content, changed id (the template or URL it is named
      after changed: an upgraded server's error page);
    * its canonical URL changed;
    * a URL was added to or removed from the list;
    * a URL changed cluster (it was alone and is in a cluster, or the reverse, or its new cluster
      is not the one its old cluster was paired with) or changed label: ``content``, ``error``
      (not fetched) or the special-page rule (``E1`` ... ``T1``) of its cluster.

A renumbered cluster with the same URLs, kind and canonical is no change, so a result compared
with itself, or with a re-run that found the same clusters, has none.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Set, Tuple

from scrapy_websim.core.match.reasons import SPECIAL_CODES

__all__ = ["DiffError", "Scan", "load_scan", "diff_scans", "diff_files", "summary_lines"]

#: Numbered content clusters: their ids say nothing about what they hold.
_NUMBERED = re.compile(r"^cluster-\d+$")
#: Rule cluster id prefixes, for results of versions without ``cluster_kind``.
_PREFIX_KIND = {"err5xx": "E1", "errtpl": "E3", "loginwall": "L1", "waf": "W1", "maint": "M1", "thin": "T1",
                "redir": "R1", "urlcanon": "U1", "cluster": "content", "content": "content"}


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
    from scrapy_websim.report.writer import ReportError, load_result  # noqa: PLC0415

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


def match_clusters(old: Scan, new: Scan) -> Dict[str, str]:
    """Old cluster id -> new cluster id, for the clusters that are the same cluster."""
    pairs: Dict[str, str] = {}
    for cid in sorted(old.members.keys() & new.members.keys()):
        if _derived(cid):
            pairs[cid] = cid
    taken = set(pairs.values())
    overlap: Dict[Tuple[str, str], int] = {}
    for key, o in old.cluster_of.items():
        n = new.cluster_of.get(key, "")
        if o and n and o not in pairs and n not in taken and old.kind[o] == new.kind[n]:
            overlap[(o, n)] = overlap.get((o, n), 0) + 1
    for (o, n), _count in sorted(overlap.items(), key=lambda item: (-item[1], item[0])):
        if o not in pairs and n not in taken:
            pairs[o] = n
            taken.add(n)
    return pairs


def _cluster_entry(scan: Scan, cid: str) -> Dict[str, Any]:
    return {"cluster_id": cid, "kind": scan.kind[cid], "size": len(scan.members[cid]),
            "canonical_url": scan.canonical.get(cid, ""), "urls": sorted(scan.members[cid])}


def diff_scans(old: Scan, new: Scan) -> Dict[str, Any]:
    """The changes from ``old`` to ``new`` (see the module docstring), as one JSON-able dict."""
    pairs = match_clusters(old, new)
    paired_new = set(pairs.values())
    appeared = [_cluster_entry(new, cid) for cid in sorted(new.members) if cid not in paired_new]
    vanished = [_cluster_entry(old, cid) for cid in sorted(old.members) if cid not in pairs]
    changed: List[Dict[str, Any]] = []
    canonicals: List[Dict[str, Any]] = []
    for o, n in sorted(pairs.items()):
        added, removed = sorted(new.members[n] - old.members[o]), sorted(old.members[o] - new.members[n])
        what = []
        if added:
            what.append("grew")
        if removed:
            what.append("shrank")
        if o != n and _derived(o) and _derived(n):
            what.append("renamed")
        if what:
            changed.append({"old_cluster": o, "new_cluster": n, "old_kind": old.kind[o], "new_kind": new.kind[n],
                            "old_size": len(old.members[o]), "new_size": len(new.members[n]), "changes": what,
                            "added": added, "removed": removed})
        oc, nc = old.canonical.get(o, ""), new.canonical.get(n, "")
        if oc != nc:
            canonicals.append({"old_cluster": o, "new_cluster": n, "old_canonical": oc, "new_canonical": nc})
    url_changes: List[Dict[str, Any]] = []
    for key in sorted(old.rows.keys() & new.rows.keys()):
        o, n = old.cluster_of[key], new.cluster_of[key]
        old_label = label_of(old.rows[key], old.kind.get(o, ""))
        new_label = label_of(new.rows[key], new.kind.get(n, ""))
        what = []
        if (o or n) and (not o or not n or pairs.get(o) != n):
            what.append("cluster")
        if old_label != new_label:
            what.append("label")
        if what:
            url_changes.append({
                "url": key, "changes": what, "old_cluster": o, "new_cluster": n,
                "old_label": old_label, "new_label": new_label,
                "old_status": old.rows[key].get("status_code"), "new_status": new.rows[key].get("status_code"),
                "old_title": _text(old.rows[key].get("title")), "new_title": _text(new.rows[key].get("title")),
                "new_reason": _text(new.rows[key].get("match_reason")),
            })
    added_urls = sorted(new.rows.keys() - old.rows.keys())
    removed_urls = sorted(old.rows.keys() - new.rows.keys())
    counts = {
        "clusters_appeared": len(appeared),
        "clusters_vanished": len(vanished),
        "clusters_grew": sum(1 for c in changed if "grew" in c["changes"]),
        "clusters_shrank": sum(1 for c in changed if "shrank" in c["changes"]),
        "clusters_renamed": sum(1 for c in changed if "renamed" in c["changes"]),
        "canonicals_changed": len(canonicals),
        "urls_added": len(added_urls),
        "urls_removed": len(removed_urls),
        "urls_changed_cluster": sum(1 for u in url_changes if "cluster" in u["changes"]),
        "urls_changed_label": sum(1 for u in url_changes if "label" in u["changes"]),
    }
    return {
        "kind": "websim-diff",
        "version": 1,
        "old": {"path": old.path, "urls": len(old.rows), "clusters": len(old.members)},
        "new": {"path": new.path, "urls": len(new.rows), "clusters": len(new.members)},
        "changed": any(counts.values()),
        "counts": counts,
        "clusters": {"appeared": appeared, "vanished": vanished, "changed": changed},
        "canonicals": canonicals,
        "urls": {"added": added_urls, "removed": removed_urls, "changed": url_changes},
    }


def diff_files(old_path: str, new_path: str) -> Dict[str, Any]:
    return diff_scans(load_scan(old_path), load_scan(new_path))


def _more(lines: List[str], items: List[Any], limit: int, line) -> None:
    for item in items[:limit]:
        lines.append(line(item))
    if len(items) > limit:
        lines.append(f"    ... {len(items) - limit} more (all of them in the JSON: -o diff.json)")


def summary_lines(d: Dict[str, Any], limit: int = 30) -> List[str]:
    """The diff for a person: counts, then each change (``limit`` lines per list)."""
    c = d["counts"]
    lines = [f"websim diff: {d['old']['path']} ({d['old']['urls']} URLs, {d['old']['clusters']} clusters) -> "
             f"{d['new']['path']} ({d['new']['urls']} URLs, {d['new']['clusters']} clusters)"]
    if not d["changed"]:
        lines.append("no changes")
        return lines
    lines.append(f"clusters: {c['clusters_appeared']} appeared, {c['clusters_vanished']} vanished, "
                 f"{c['clusters_grew']} grew, {c['clusters_shrank']} shrank, {c['clusters_renamed']} renamed; "
                 f"{c['canonicals_changed']} canonicals changed")
    lines.append(f"URLs: {c['urls_added']} added, {c['urls_removed']} removed, {c['urls_changed_cluster']} changed "
                 f"cluster, {c['urls_changed_label']} changed label")
    cl = d["clusters"]

    def pages(n: int) -> str:
        return f"{n} page" if n == 1 else f"{n} pages"

    _more(lines, cl["appeared"], limit,
          lambda x: f"  + {x['cluster_id']} ({x['kind']}, {pages(x['size'])}) canonical {x['canonical_url']}")
    _more(lines, cl["vanished"], limit,
          lambda x: f"  - {x['cluster_id']} ({x['kind']}, {pages(x['size'])}) canonical {x['canonical_url']}")

    def changed_line(x: Dict[str, Any]) -> str:
        name = x["old_cluster"] if x["old_cluster"] == x["new_cluster"] else f"{x['old_cluster']} -> {x['new_cluster']}"
        kind = x["new_kind"]
        bits = [f"+{u}" for u in x["added"][:3]] + [f"-{u}" for u in x["removed"][:3]]
        more = len(x["added"]) + len(x["removed"]) - len(bits)
        return (f"  ~ {name} ({kind}, {x['old_size']} -> {x['new_size']} pages; {', '.join(x['changes'])})"
                + (": " + " ".join(bits) if bits else "") + (f" (+{more} more)" if more > 0 else ""))

    _more(lines, cl["changed"], limit, changed_line)
    _more(lines, d["canonicals"], limit,
          lambda x: f"  canonical of {x['new_cluster']}: {x['old_canonical']} -> {x['new_canonical']}")
    _more(lines, d["urls"]["added"], limit, lambda u: f"  + URL {u}")
    _more(lines, d["urls"]["removed"], limit, lambda u: f"  - URL {u}")

    def url_line(x: Dict[str, Any]) -> str:
        bits = []
        if "label" in x["changes"]:
            bits.append(f"{x['old_label']} -> {x['new_label']}")
        if "cluster" in x["changes"]:
            bits.append(f"{x['old_cluster'] or '(no cluster)'} -> {x['new_cluster'] or '(no cluster)'}")
        if x["old_status"] != x["new_status"]:
            bits.append(f"status {x['old_status']} -> {x['new_status']}")
        return f"  {x['url']}: " + "; ".join(bits)

    _more(lines, d["urls"]["changed"], limit, url_line)
    return lines


def write_diff(path: str, d: Dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(d, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    os.replace(tmp, path)
