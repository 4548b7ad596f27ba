"""Per-origin soft-404 calibration: learn what each origin answers for a path it cannot have.

A keyword rule cannot know a host's own "not found" template (a custom page that says "Nothing
here yet" with status 200). Content-discovery tools learn it by asking for a random path; so does
the crawl (``WEBSIM_SOFT404_PROBES``): for each origin of the list it renders
``/<16 random hex digits>`` (and, with two probes, ``/<16 random hex digits>.html``) like any page,
and keeps the answer's template fingerprint (``core/rules/signals.py``: host names, paths, echoed
URL parts, digits and tokens normalised away, so the random path it echoes does not count).

At the end, :class:`Soft404Calibration` labels **E3** every page of that origin (by the origin of
its requested URL or of its final URL) whose template fingerprint equals a probe answer's, when
the rules gave it no label or only T1 (a login wall, WAF or maintenance page keeps its label; a
4xx page is E3 already). The probe records are never url records: they are kept apart in the
store and reported in ``meta["soft404"]``.

An origin is **not** calibrated (and says why in ``meta``) when its probe answer cannot be a
"not found" template:

* the probe failed, answered 5xx or a non-HTML body;
* the rules label the answer L1, W1, M1 (every unknown path answers the login wall: the real
  pages behind it must keep L1) or E1;
* the answer's final URL is the origin's home page (unknown paths redirect home), or the answer's
  fingerprint equals the fingerprint of a page of the list at the origin's root (an SPA shell or a
  catch-all route serving the home page for every path): labelling would take the home page and
  every other page served the same way for a 404.

Pure: no Scrapy import.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple
from urllib.parse import urlsplit

from ..params.rules import RuleParams
from ..rules.label import special_label
from ..types import MASK64, PageRecord, hex64
from ..urls.normalize import url_origin

__all__ = ["PROBE_SUFFIXES", "Soft404Calibration", "probe_urls", "is_root_url"]

#: The shapes of the random paths, in order: ``/<hex>`` then ``/<hex>.html`` (a server may route
#: file names and bare paths differently).
PROBE_SUFFIXES = ("", ".html")

#: Paths that are an origin's home page.
_ROOT_PATHS = frozenset(("", "/", "/index.html", "/index.htm", "/index.php", "/default.htm", "/default.aspx"))


def probe_urls(origin: str, count: int) -> List[str]:
    """``count`` (1 or 2) random-path URLs of ``origin`` (``scheme://host[:port]``): 64 random
    bits each, so no real page has that path."""
    return [f"{origin}/{secrets.token_hex(8)}{suffix}" for suffix in PROBE_SUFFIXES[:count]]


def is_root_url(url: str) -> bool:
    """The URL is its origin's home page (no query, a root or index path)."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return False
    return bool(parts.netloc) and not parts.query and parts.path.lower() in _ROOT_PATHS


def _origin(url: str) -> str:
    try:
        return url_origin(url) if url else ""
    except ValueError:
        return ""


def request_url(record: Any) -> str:
    """The URL that was requested (the list line may lack a scheme)."""
    chain = getattr(record, "redirect_chain", None) or ()
    return chain[0] if chain else (record.url or "")


@dataclass
class OriginCalibration:
    """What one origin answered to its probes."""

    origin: str
    probes: List[Dict[str, Any]] = field(default_factory=list)  # one entry per probe, for meta
    fingerprints: Set[int] = field(default_factory=set)  # the calibrated "not found" templates
    not_calibrated: str = ""  # why the origin is not calibrated ("" = calibrated when fingerprints)
    labelled: int = 0  # pages labelled E3 by the calibration


class Soft404Calibration:
    """Probe answers per origin; :meth:`relabel` turns a page matching one into E3."""

    def __init__(self, probes: Iterable[PageRecord], params: RuleParams = RuleParams()) -> None:
        self.params = params
        self.origins: Dict[str, OriginCalibration] = {}
        for probe in probes:
            self._add_probe(probe)

    def _add_probe(self, probe: PageRecord) -> None:
        origin = probe.probe_for or _origin(request_url(probe))
        entry = self.origins.setdefault(origin, OriginCalibration(origin))
        info: Dict[str, Any] = {"url": probe.url, "final_url": probe.final_url, "status_code": probe.status_code,
                                "title": probe.title[:200], "fingerprint": hex64(probe.fingerprint) or "",
                                "error": probe.error}
        entry.probes.append(info)
        reason = self._unusable(probe)
        if reason:
            info["not_used"] = reason
            if not entry.not_calibrated:
                entry.not_calibrated = reason
            return
        entry.fingerprints.add(probe.fingerprint & MASK64)  # type: ignore[operator]

    def _unusable(self, probe: PageRecord) -> str:
        if probe.error or not probe.status_code:
            return f"the probe failed ({probe.error or 'no response'})"
        if probe.status_code >= 500:
            return f"the probe answered {probe.status_code}"
        if probe.fingerprint is None:
            return "the probe's answer is not an HTML page"
        label = special_label(probe, self.params)
        if label in ("E1", "L1", "W1", "M1"):
            return f"unknown paths answer a {label} page"
        if probe.final_url and probe.final_url != request_url(probe) and is_root_url(probe.final_url):
            return "unknown paths redirect to the home page"
        return ""

    def see_page(self, url: str, final_url: str, fingerprint: Optional[int]) -> None:
        """Before labelling: a page of the list. One at an origin's root whose fingerprint equals
        that origin's probe answer means the origin serves its home page for unknown paths."""
        if fingerprint is None:
            return
        for candidate in (url, final_url):
            if not is_root_url(candidate):
                continue
            entry = self.origins.get(_origin(candidate))
            if entry is not None and (fingerprint & MASK64) in entry.fingerprints:
                entry.not_calibrated = "unknown paths answer the home page (a catch-all route or an SPA shell)"

    def needs_pages(self) -> bool:
        return any(entry.fingerprints for entry in self.origins.values())

    def relabel(self, record: PageRecord, label: Optional[str]) -> Optional[str]:
        """``label`` (from the rules), or ``"E3"`` for a page whose template is its origin's
        "not found" answer."""
        if label not in (None, "T1") or record.fingerprint is None or "E3" not in self.params.enabled_rules:
            return label
        if record.error or not (200 <= int(record.status_code or 0) <= 299):
            return label
        fingerprint = record.fingerprint & MASK64
        for origin in {_origin(request_url(record)), _origin(record.final_url)}:
            entry = self.origins.get(origin)
            if entry is not None and not entry.not_calibrated and fingerprint in entry.fingerprints:
                entry.labelled += 1
                return "E3"
        return label

    def summary(self) -> Dict[str, Any]:
        """``meta["soft404"]``: per origin, its probes and whether (and how many pages) it calibrated."""
        origins = []
        for origin in sorted(self.origins):
            entry = self.origins[origin]
            calibrated = bool(entry.fingerprints) and not entry.not_calibrated
            origins.append({"origin": origin, "calibrated": calibrated,
                            "not_calibrated": "" if calibrated else (entry.not_calibrated or "no usable probe"),
                            "labelled_e3": entry.labelled, "probes": entry.probes})
        return {
            "origins_probed": len(origins),
            "origins_calibrated": sum(1 for o in origins if o["calibrated"]),
            "labelled_e3": sum(o["labelled_e3"] for o in origins),
            "origins": origins,
        }


def root_fingerprint_rows(rows: Iterable[Tuple[str, str, str, Optional[str]]]
                          ) -> Iterable[Tuple[str, str, Optional[int]]]:
    """``(url, first URL of the redirect chain, final_url, fingerprint hex)`` rows -> what
    :meth:`Soft404Calibration.see_page` takes."""
    for url, first, final_url, fp in rows:
        yield (first or url), (final_url or ""), (int(fp, 16) if fp else None)
