"""The records that flow through scrapy-websim, and their JSON form.

One :class:`PageRecord` per input URL flows one way: the spider/renderer fills the fetch fields,
the recorder fills the feature fields (and drops the HTML and screenshot), the end of the crawl
labels the pages and clusters the compact features, and the result files get one row per record
plus one row per :class:`Cluster`.

64-bit hashes are Python ints in memory and 16-digit lower-case hex strings in JSON, so that
JavaScript readers (which lose precision above 2**53) read them correctly.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple, overload

#: The url-record columns, in output order.
OUTPUT_FIELDS = (
    "id",
    "url",
    "normalized_url",
    "final_url",
    "redirect_chain",
    "status_code",
    "content_length",
    "content_type",
    "error",
    "title",
    "cluster_id",
    "is_canonical",
    "similarity_to_canonical",
    "content_sim",
    "structure_sim",
    "visual_sim",
    "behavior_sim",
    "cluster_kind",
    "match_rule",
    "page_type",
    # scanning many hosts (after the seed's columns)
    "expanded_from",
    "tls_error",
    "tls_subject",
    "tls_issuer",
    "tls_valid_from",
    "tls_valid_to",
    # pivots: group hosts by certificate and favicon (after the columns above)
    "tls_sha256",
    "tls_sans",
    "favicon_url",
    "favicon_hash",
    # why the page is in its cluster, or in none (core/match/reasons.py)
    "match_reason",
    # what websim diff compares of a page between two scans (core/page/digest.py)
    "excerpt",
    "content_digest",
    # the page whose render this page took (its document was the same): "" = its own render
    "render_from",
)

#: Order of the four DOM counts in :attr:`PageRecord.dom_counts`.
DOM_COUNT_NAMES = ("nodes", "text_nodes", "div", "a", "img", "input", "script")

_HEX64_FIELDS = ("simhash", "phash", "fingerprint", "text_hash", "text_shape")

#: The 64 bits of every stored hash (SimHash, pHash, fingerprint, token hashes).
MASK64 = (1 << 64) - 1


#: Content types of an HTML page: the one "is HTML" definition (rendering, clustering eligibility).
HTML_TYPES = ("text/html", "application/xhtml+xml")


def is_html_type(content_type: Optional[str], empty_is_html: bool = False) -> bool:
    """``content_type`` (parameters and case ignored) is HTML or XHTML; an empty one only with
    ``empty_is_html``."""
    ct = (content_type or "").split(";")[0].strip().lower()
    return ct in HTML_TYPES or (empty_is_html and not ct)


@overload
def hex64(value: int) -> str: ...
@overload
def hex64(value: None) -> None: ...
def hex64(value: Optional[int]) -> Optional[str]:
    return None if value is None else format(value & MASK64, "016x")


def unhex64(value: Any) -> Optional[int]:
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    return int(value, 16)


#: What no output can carry: lone UTF-16 surrogates (a page's script can put them in its DOM,
#: title or URL; UTF-8 cannot encode them) and the C0 control characters other than tab, line
#: feed and carriage return (NUL and friends break CSV readers, terminals and SQLite text).
_UNENCODABLE_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
#: What takes their place: U+FFFD, the character a decoder puts where it met bytes it could not read.
REPLACEMENT = "\ufffd"
#: What the ``url`` field cannot carry: lone surrogates only. It is the input line as given, control
#: characters such as NUL included (JSON writes them as ``\u0000``; the CSV writer replaces them
#: and says so in the row).
_UNENCODABLE_URL_RE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every character no output can carry replaced by U+FFFD (the same string,
    not a copy, when there is none)."""
    if _UNENCODABLE_RE.search(text) is None:
        return text
    return _UNENCODABLE_RE.sub(REPLACEMENT, text)


def clean_url(text: str) -> str:
    """The ``url`` field as every output can write it: lone surrogates become U+FFFD, control
    characters are kept (the same string when there is nothing to replace)."""
    if _UNENCODABLE_URL_RE.search(text) is None:
        return text
    return _UNENCODABLE_URL_RE.sub(REPLACEMENT, text)


def clean_value(value: Any) -> Any:
    """``value`` (strings, numbers, lists, tuples and dicts of them) as every output format can
    write it: strings and dict keys through :func:`clean_text`, floats that are not finite (JSON has
    no NaN or Infinity) as 0.0, anything else as its cleaned ``str``."""
    if isinstance(value, str):
        return clean_text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else 0.0
    if isinstance(value, (list, tuple)):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return clean_text(value.decode("utf-8", "replace"))
    return clean_text(str(value))


@dataclass
class PageRecord:
    """Everything known about one input URL. Only compact features; never HTML or images."""

    # --- identity and fetch (renderer) ---
    id: int
    url: str
    normalized_url: str = ""
    final_url: str = ""
    redirect_chain: List[str] = field(default_factory=list)
    status_code: int = 0
    content_length: int = 0
    content_type: str = ""
    error: str = ""
    title: str = ""
    html_len: int = 0  # bytes of the rendered HTML (UTF-8)
    rendered: bool = False  # went through the browser (False: non-HTML, failure, predicted)
    render_from: str = ""  # URL of the page whose render this one took (the same document); "" = own
    www_authenticate: str = ""  # the response's WWW-Authenticate header (an HTTP auth wall)
    # --- text features ---
    text_len: int = 0  # main-text length in characters
    simhash: Optional[int] = None  # 64-bit SimHash of the main text
    text_hash: Optional[int] = None  # 64-bit hash of the main text's tokens (exact copies share it)
    text_shape: Optional[int] = None  # text_hash with numbers, hosts, URLs masked (core.rules.signals.mask_tokens)
    minhash: str = ""  # 128-bin MinHash of the main text's word 3-shingles, hex (core.fingerprints.minhash)
    prose_len: int = 0  # characters of the page's prose: visible text without link lists (core.page.prose.prose_text)
    prose_minhash: str = ""  # MinHash of that prose; "" when it is too short to judge by
    shingles: int = 0  # distinct word 3-shingles of the main text (0: unknown, an older features file)
    prose_shingles: int = 0  # distinct word 3-shingles of the prose (0 with no prose_minhash)
    #: the main text's distinct shingles, 32-bit, for the template-aware decision
    #: (core.fingerprints.encode_shingle_set); "" above SHINGLE_SET_MAX or in older features files
    shingle_set: str = ""
    # --- DOM features ---
    dom_counts: List[int] = field(default_factory=list)  # see DOM_COUNT_NAMES
    tag_paths: Dict[str, int] = field(default_factory=dict)  # "html>body>div>p" -> count (bounded)
    depth_hist: List[int] = field(default_factory=list)  # depth -> number of elements
    tag_seq: str = ""  # element tags in document order, one char per tag (core.page.lcs)
    page_type: str = "unknown"  # list / detail / unknown
    # --- visual ---
    phash: Optional[int] = None  # 64-bit pHash of the viewport screenshot
    # --- behaviour (milliseconds) ---
    timings: List[float] = field(default_factory=list)  # [ttfb, dom_content_loaded, load]
    # --- rule signals (core.rules.signals) ---
    fingerprint: Optional[int] = None  # template fingerprint of visible text + tag skeleton
    #: shingles of the masked text the fingerprint hashed (the 512 smallest; encode_shingle_set):
    #: what similar templates are grouped by
    fingerprint_shingles: str = ""
    signals: Dict[str, Any] = field(default_factory=dict)
    # --- what websim diff compares between two scans (core.page.digest) ---
    excerpt: str = ""  # the first characters of the judged text
    content_digest: str = ""  # masked-text sketch, entries, structure, pHash; "" when not rendered
    # --- prediction (spider middleware) ---
    predicted_duplicate_of: str = ""  # URL the page was predicted to duplicate (not rendered)
    # --- input and TLS (scanning many hosts) ---
    expanded_from: str = ""  # the input line this URL was made from (host + --ports, nmap service)
    tls_error: str = ""  # the certificate error a browser would warn about (ERR_CERT_...), "" when valid
    tls_subject: str = ""
    tls_issuer: str = ""
    tls_valid_from: str = ""  # ISO 8601 UTC
    tls_valid_to: str = ""
    tls_sha256: str = ""  # SHA-256 of the leaf certificate (DER), 64 hex digits
    tls_sans: List[str] = field(default_factory=list)  # subjectAltName entries: "DNS:a.example", "IP:10.0.0.1"
    # --- favicon (a pivot: Shodan's http.favicon.hash) ---
    favicon_url: str = ""  # <link rel=icon> of the page, else /favicon.ico of its origin
    favicon_hash: Optional[int] = None  # signed 32-bit MurmurHash3 of the base64 favicon bytes (Shodan's)
    # --- soft-404 calibration (core/match/soft404.py) ---
    probe_for: str = ""  # set on a random-path probe's record: the origin it calibrates (never a url record)

    def clean(self) -> Tuple[str, ...]:
        """Make every field writable by every output (:func:`clean_value`; ``url``, the input line as
        given, by :func:`clean_url`); returns the names of the fields that changed. A record is
        cleaned where it enters the feature store or a distributed job's queue, so that one page's
        odd strings never cost another record."""
        changed = []
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (bool, int)) or value is None:
                continue
            if isinstance(value, str):
                new: Any = clean_url(value) if f.name == "url" else clean_text(value)
                if new is not value:
                    setattr(self, f.name, new)
                    changed.append(f.name)
                continue
            if not value and isinstance(value, (list, dict)):  # nothing in it to clean
                continue
            new = clean_value(value)
            if new != value or type(new) is not type(value) or _has_nan(value):
                setattr(self, f.name, new)
                changed.append(f.name)
        if changed and "url" in changed:
            note = "the URL held characters no output can carry (replaced by U+FFFD)"
            self.error = f"{self.error}; {note}" if self.error else note
        return tuple(changed)

    def to_json(self) -> Dict[str, Any]:
        data = asdict(self)
        for name in _HEX64_FIELDS:
            data[name] = hex64(data[name])
        return data

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "PageRecord":
        known = {f.name for f in fields(cls)}
        kwargs = {_RENAMED.get(k, k): v for k, v in data.items() if _RENAMED.get(k, k) in known}
        for name in _HEX64_FIELDS:
            if name in kwargs:
                kwargs[name] = unhex64(kwargs[name])
        return cls(**kwargs)


#: Fields of features files written by earlier versions, under their present names.
_RENAMED = {"dense_len": "prose_len", "dense_minhash": "prose_minhash", "dense_shingles": "prose_shingles"}


def _has_nan(value: Any) -> bool:
    """A NaN anywhere in ``value`` (NaN != NaN, so an equality test cannot see it replaced)."""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    return False


@dataclass
class PairResult:
    """The four similarities of a pair and the decision."""

    content_sim: float = 0.0
    structure_sim: float = 0.0
    visual_sim: float = 0.0
    behavior_sim: float = 0.0
    is_duplicate: bool = False
    rule: str = ""  # "" | "rule1" | "rule2"
    #: what the text measure saw beyond the sites' template (core.match.template): the share of the
    #: two pages' shingles that was template, the shingles both say, and each one's own; shared -1:
    #: compared by MinHash or SimHash (no shingle sets)
    template_share: float = 0.0
    shared: int = -1
    own_a: int = 0
    own_b: int = 0

    def detail(self) -> Tuple[float, float, float, float]:
        """The text measure's figures as numbers (``template_share, shared, own_a, own_b``)."""
        return (self.template_share, float(self.shared), float(self.own_a), float(self.own_b))

    @property
    def similarity(self) -> float:
        """One number for ``similarity_to_canonical``: the mean of the three deciding measures."""
        return round((self.content_sim + self.structure_sim + self.visual_sim) / 3.0, 6)


@dataclass
class Assignment:
    """The final label of one page: exactly one cluster (or none)."""

    cluster_id: str = ""
    is_canonical: bool = True
    cluster_kind: str = ""  # "" | "content" | "E1" | "E3" | "L1" | "W1" | "M1" | "T1" | "R1" | "U1"
    match_rule: str = ""  # "" | "canonical" | "rule1" | "rule2" | "exact" | rule code | "predicted"
    sims: PairResult = field(default_factory=PairResult)


@dataclass
class Cluster:
    cluster_id: str
    canonical_id: int
    canonical_url: str
    member_ids: List[int]
    kind: str  # "content" or a rule code
    origins: int = 0  # distinct origins (scheme://host[:port] of the final URL) among the members
