"""The tunables of :mod:`scrapy_websim.core.urls`: URL normalisation (:class:`UrlParams`, read by
:mod:`~scrapy_websim.core.urls.normalize`), the URL-structure SimHash (:class:`UrlSimhashParams`,
read by :mod:`~scrapy_websim.core.urls.simhash`) and the duplicate predictor
(:class:`PredictorParams`, read by :mod:`~scrapy_websim.core.urls.predictor`). See
:mod:`scrapy_websim.core.params` for how a field is declared.

Pure module: no Scrapy import, no import of the algorithm modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from .base import FieldError, Params, param

__all__ = ["INDEX_FILES", "TRACKING_PARAMS", "UrlParams", "UrlSimhashParams", "PredictorParams"]


#: Last path segments that name the directory's default document.
INDEX_FILES = ("index.html", "index.htm", "index.php", "index.shtml", "default.htm", "default.html", "default.aspx")
#: Query parameter names dropped on top of the tracker prefixes (exact, case-insensitive).
TRACKING_PARAMS = (
    "_hsenc", "_hsmi", "mkt_tok", "spm", "_ga", "_gl", "srsltid", "igshid", "ref_src",
    "trk", "ncid", "cmpid", "s_cid", "wt.mc_id", "epik", "_openstat", "yclid", "mibextid",
)


@dataclass(frozen=True)
class UrlParams(Params):
    """Parameters of URL normalisation."""

    index_files: Tuple[str, ...] = param(INDEX_FILES, "", "last path segments dropped by normalisation")
    tracking_params: Tuple[str, ...] = param(TRACKING_PARAMS, "", "query parameters dropped")
    #: whatever the patterns say
    keep_params: Tuple[str, ...] = param((), "", "query parameters never dropped")
    #: courlan's pattern drops ``ref``, ``source``, ``keyword``, ``cid``, ...
    use_courlan_trackers: bool = param(False, "", "also drop courlan's broad tracker list")
    #: of non-root paths
    strip_trailing_slash: bool = param(True, "", "/a/ and /a are the same URL")

    def validate(self) -> "UrlParams":
        super().validate()
        if any("/" in v for v in self.index_files):
            raise FieldError("index_files", f"must be file names without '/', got {self.index_files!r}")
        return self


def _weight(default: float, component: str) -> float:
    """A component weight (they share one range): its share of the hash is weight / total."""
    return param(default, "[0, 100]", f"weight of the {component}")


@dataclass(frozen=True)
class UrlSimhashParams(Params):
    """Component weights and the dedupe defaults."""

    host_weight: float = _weight(4.0, "host labels")
    path_weight: float = _weight(3.0, "path segments")
    query_weight: float = _weight(2.0, "query parameters")
    fragment_weight: float = _weight(0.5, "fragment")
    scheme_weight: float = _weight(0.5, "scheme")
    #: 95 = Hamming <= 3
    dedupe_threshold: float = param(95.0, "[50, 100]", "two URLs are of one pattern from this similarity")
    keep: int = param(15, ">= 1", "URLs kept per pattern by dedupe_urls")


@dataclass(frozen=True)
class PredictorParams(Params):
    """Parameters of :class:`~scrapy_websim.core.urls.predictor.DupePredictor` (defaults are the
    shipped values)."""

    jaccard_threshold: float = param(0.9, "(0, 1]", "two pages are duplicates from this estimated Jaccard similarity")
    #: 64 gives a Jaccard standard error of ~0.04 near 0.9
    num_perm: int = param(64, "[16, 1024]", "MinHash permutations")
    #: bottom-k by URL hash
    sample_size: int = param(24, "[2, 1000]", "URLs per comparable group taking part in the statistics")
    confidence: float = param(0.95, "[0.5, 1)", "one-sided confidence of the lower bound taken as the probability")
    boilerplate_share: float = param(0.2, "(0, 1]", "a shingle on this share of the sample texts is site boilerplate")
    max_params: int = param(12, "[1, 100]", "URLs with more query parameters only take part in the path hypothesis")
    #: a memory bound; later pages still update the statistics
    max_urls: int = param(1_000_000, ">= 1", "URLs indexed at most")
