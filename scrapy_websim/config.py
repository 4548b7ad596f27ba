"""Every ``WEBSIM_*`` setting: its default, its parsing and its validation, in one place.

:data:`SETTINGS` is the table of all of them (type, default, valid range, one-line description;
README's "Settings" section is checked against it). ``WebsimConfig.from_settings(settings)`` is
called once per crawler and every component reads the same object (the core parameter objects are
built by ``build_params`` from the ``*_SETTINGS`` mappings below). A bad value raises
:class:`ConfigError` naming the setting and its valid range; an unknown ``WEBSIM_*`` name raises
one naming the closest valid setting. No other module reads a ``WEBSIM_*`` setting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from scrapy_websim.config_values import (  # noqa: F401  (re-exported: the public place of these names)
    PROXY_SCHEMES, ConfigError, _one_line, parse_cookies, parse_header_line, parse_headers, parse_proxy,
    parse_viewport, proxy_parts)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


_TABLE = object()


def _get(settings: Any, name: str, default: Any = _TABLE) -> Any:
    if default is _TABLE:
        default = SETTINGS_BY_NAME[name].default
    if hasattr(settings, "get"):
        value = settings.get(name, default)
    else:  # pragma: no cover
        value = getattr(settings, name, default)
    return default if value is None else value


def get_bool(settings: Any, name: str, default: Any = _TABLE) -> bool:
    value = _get(settings, name, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigError(f"{name} must be a boolean (True/False), got {value!r}")


def get_number(
    settings: Any,
    name: str,
    default: Any = _TABLE,
    lo: Optional[float] = None,
    hi: Optional[float] = None,
    integer: bool = False,
    lo_open: bool = False,
) -> Any:
    value = _get(settings, name, default)
    kind = "an integer" if integer else "a number"
    rng = _range_text(lo, hi, lo_open)
    try:
        if isinstance(value, bool):
            raise ValueError
        number = int(value) if integer and not (isinstance(value, float) and not value.is_integer()) else float(value)
        if integer and isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be {kind} {rng}, got {value!r}") from None
    if integer:
        number = int(number)
    if number != number or (lo is not None and (number < lo or (lo_open and number == lo))) or (
        hi is not None and number > hi
    ):
        raise ConfigError(f"{name} must be {kind} {rng}, got {value!r}")
    return number


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _range_text(lo: Optional[float], hi: Optional[float], lo_open: bool = False) -> str:
    left = "(" if lo_open else "["
    if lo is not None and hi is not None:
        return f"in {left}{_fmt(lo)}, {_fmt(hi)}]"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {_fmt(lo)}"
    if hi is not None:
        return f"<= {_fmt(hi)}"
    return ""


def get_str(settings: Any, name: str, default: Any = _TABLE, choices: Optional[Tuple[str, ...]] = None) -> str:
    value = _get(settings, name, default)
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    if choices is not None and value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


@dataclass(frozen=True)
class WebsimConfig:
    """Parsed ``WEBSIM_*`` settings. See README.md, section "Settings", for each one."""

    browser_executable: str = ""
    viewport: Tuple[int, int] = (1280, 800)
    http_timeout: float = 10.0
    page_timeout: float = 20.0
    stable_timeout: float = 10.0
    network_idle_ms: int = 500
    dom_stable_checks: int = 3
    dom_check_interval_ms: int = 100
    tab_reuse: int = 50
    batch_size: int = 1000
    sim_threshold: float = 0.85
    screenshots_dir: str = ""
    features_file: str = ""
    progress_interval: float = 30.0
    same_host_only: bool = False
    deny_networks: Any = ()  #: parsed by scrapy_websim.render.handler.parse_networks
    redis_url: str = ""
    redis_job: str = "websim"
    redis_lease_timeout: float = 120.0
    # --- scanning many hosts (README "Scanning many hosts") ---
    strict_tls: bool = False
    proxy: str = ""
    headers: Tuple[Tuple[str, str], ...] = ()
    cookies: str = ""
    user_agent: str = ""
    report_dir: str = ""
    thumbnails_dir: str = ""
    thumbnail_width: int = 320
    thumbnail_format: str = "webp"
    thumbnail_quality: int = 60
    extra: Dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def thumbnails_path(self) -> str:
        """Where the crawl keeps thumbnails: WEBSIM_THUMBNAILS_DIR, else the report's thumbs/, else none."""
        return self.thumbnails_dir or (os.path.join(self.report_dir, "thumbs") if self.report_dir else "")

    @classmethod
    def from_settings(cls, settings: Any) -> "WebsimConfig":
        check_names(settings)
        viewport = parse_viewport("WEBSIM_VIEWPORT", _get(settings, "WEBSIM_VIEWPORT"))
        http_timeout = get_number(settings, "WEBSIM_HTTP_TIMEOUT", lo=0.0, hi=600.0, lo_open=True)
        page_timeout = get_number(settings, "WEBSIM_PAGE_TIMEOUT", lo=0.0, hi=600.0, lo_open=True)
        stable_timeout = get_number(settings, "WEBSIM_STABLE_TIMEOUT", lo=0.0, hi=600.0)
        if page_timeout < http_timeout:
            raise ConfigError(
                f"WEBSIM_PAGE_TIMEOUT ({page_timeout:g} s) must be >= WEBSIM_HTTP_TIMEOUT "
                f"({http_timeout:g} s): the page budget includes the HTTP response"
            )
        screenshots_dir = get_str(settings, "WEBSIM_SCREENSHOTS_DIR")
        if screenshots_dir and os.path.exists(screenshots_dir) and not os.path.isdir(screenshots_dir):
            raise ConfigError(f"WEBSIM_SCREENSHOTS_DIR={screenshots_dir!r} exists and is not a directory")
        report_dir = get_str(settings, "WEBSIM_REPORT_DIR")
        thumbnails_dir = get_str(settings, "WEBSIM_THUMBNAILS_DIR")
        for name, value in (("WEBSIM_REPORT_DIR", report_dir), ("WEBSIM_THUMBNAILS_DIR", thumbnails_dir)):
            if value and os.path.exists(value) and not os.path.isdir(value):
                raise ConfigError(f"{name}={value!r} exists and is not a directory")
        return cls(
            browser_executable=get_str(settings, "WEBSIM_BROWSER_EXECUTABLE"),
            viewport=viewport,
            http_timeout=http_timeout,
            page_timeout=page_timeout,
            stable_timeout=stable_timeout,
            network_idle_ms=get_number(settings, "WEBSIM_NETWORK_IDLE_MS", lo=0, hi=60000, integer=True),
            dom_stable_checks=get_number(settings, "WEBSIM_DOM_STABLE_CHECKS", lo=1, hi=100, integer=True),
            dom_check_interval_ms=get_number(settings, "WEBSIM_DOM_CHECK_INTERVAL_MS", lo=10, hi=10000, integer=True),
            tab_reuse=get_number(settings, "WEBSIM_TAB_REUSE", lo=0, hi=1_000_000, integer=True),
            batch_size=get_number(settings, "WEBSIM_BATCH_SIZE", lo=1, hi=10_000_000, integer=True),
            sim_threshold=get_number(settings, "WEBSIM_SIM_THRESHOLD", lo=0.0, hi=1.0),
            screenshots_dir=screenshots_dir,
            features_file=get_str(settings, "WEBSIM_FEATURES_FILE"),
            progress_interval=get_number(settings, "WEBSIM_PROGRESS_INTERVAL", lo=0.0, hi=86400.0),
            same_host_only=get_bool(settings, "WEBSIM_SAME_HOST_ONLY"),
            deny_networks=_get(settings, "WEBSIM_DENY_NETWORKS"),
            redis_url=get_str(settings, "WEBSIM_REDIS_URL"),
            redis_job=get_str(settings, "WEBSIM_REDIS_JOB"),
            redis_lease_timeout=_lease_timeout(settings, page_timeout),
            strict_tls=get_bool(settings, "WEBSIM_STRICT_TLS"),
            proxy=parse_proxy("WEBSIM_PROXY", _get(settings, "WEBSIM_PROXY")),
            headers=parse_headers("WEBSIM_HEADERS", _get(settings, "WEBSIM_HEADERS")),
            cookies=parse_cookies("WEBSIM_COOKIES", _get(settings, "WEBSIM_COOKIES")),
            user_agent=_one_line("WEBSIM_USER_AGENT", get_str(settings, "WEBSIM_USER_AGENT")),
            report_dir=report_dir,
            thumbnails_dir=thumbnails_dir,
            thumbnail_width=get_number(settings, "WEBSIM_THUMBNAIL_WIDTH", lo=32, hi=1280, integer=True),
            thumbnail_format=get_str(settings, "WEBSIM_THUMBNAIL_FORMAT", choices=("webp", "jpeg")),
            thumbnail_quality=get_number(settings, "WEBSIM_THUMBNAIL_QUALITY", lo=1, hi=100, integer=True),
        )


def _lease_timeout(settings: Any, page_timeout: float) -> float:
    """``WEBSIM_REDIS_LEASE_TIMEOUT``: a live worker renews its leases every quarter of it, so it only
    needs to outlast a stalled heartbeat; still at least one page budget (the default grows with it)."""
    explicit = _get(settings, "WEBSIM_REDIS_LEASE_TIMEOUT", None) is not None
    value = get_number(settings, "WEBSIM_REDIS_LEASE_TIMEOUT", max(120.0, page_timeout), 4.0, 86400.0)
    if explicit and value < page_timeout:
        raise ConfigError(f"WEBSIM_REDIS_LEASE_TIMEOUT ({value:g} s) must be >= WEBSIM_PAGE_TIMEOUT "
                          f"({page_timeout:g} s)")
    return value


def build_params(settings: Any, cls: Any, mapping: Mapping[str, str], **fixed: Any) -> Any:
    """A core parameter dataclass from settings: ``mapping`` is ``{field: "WEBSIM_SETTING"}``.

    Unset settings keep the dataclass default. Values are coerced to the default's type, and the
    dataclass's own ``validate()`` runs; any error is re-raised naming the *setting*.
    """
    import dataclasses  # noqa: PLC0415

    defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
    kwargs: Dict[str, Any] = dict(fixed)
    for fname, sname in mapping.items():
        default = defaults.get(fname)
        if _get(settings, sname, None) is None:
            continue
        if isinstance(default, bool):
            kwargs[fname] = get_bool(settings, sname, default)
        elif isinstance(default, int):
            kwargs[fname] = get_number(settings, sname, default, integer=True)
        elif isinstance(default, float):
            kwargs[fname] = get_number(settings, sname, default)
        elif isinstance(default, tuple):
            value = _get(settings, sname, default)
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            if not isinstance(value, (list, tuple, set, frozenset)):
                raise ConfigError(f"{sname} must be a list, got {value!r}")
            kwargs[fname] = tuple(value)
        else:
            kwargs[fname] = _get(settings, sname, default)
    try:
        params = cls(**kwargs)
        if hasattr(params, "validate"):
            params.validate()
    except (TypeError, ValueError) as exc:
        message = str(exc)
        for fname, sname in mapping.items():
            if message.startswith(fname + " ") or f" {fname} " in message or message.startswith(fname + ":"):
                message = message.replace(fname, sname, 1)
                break
        raise ConfigError(message) from None
    return params


# --------------------------------------------------------------------------------------------
# The settings table: every WEBSIM_* setting once (README "Settings" is checked against it).
# --------------------------------------------------------------------------------------------

#: ``Setting.default`` of a list whose default is the core dataclass's (too long for the table).
CORE_DEFAULT = object()


@dataclass(frozen=True)
class Setting:
    """One ``WEBSIM_*`` setting: README type, default, valid range and a one-line description."""

    name: str
    type: str  #: as in README: "int", "float s" (seconds), "int ms", "str", "bool", "list", "dict"
    default: Any
    range: str  #: valid values, "" = any value of the type
    doc: str
    group: str
    param: str = ""  #: "kind.field" of the core parameter object it sets (see param_settings)
    shown: str = ""  #: README's default cell where it is not the plain default

    def readme_default(self) -> str:
        if self.shown:
            return self.shown
        value = self.default
        if isinstance(value, str):
            return f'`"{value}"`'
        if isinstance(value, bool) or value in ((), {}):
            return f"`{'[]' if value == () else value}`"
        return f"`{_fmt(value) if isinstance(value, float) else value}`"


def _group(group: str, *rows: Tuple[Any, ...]) -> Tuple[Setting, ...]:
    """Rows ``(name, type, default, range, description[, param[, README default]])``."""
    return tuple(Setting(name, typ, default, rng, doc, group, *more) for name, typ, default, rng, doc, *more in rows)


_R = "Rendering and crawl"
_S = "Scanning many hosts"
SETTINGS: Tuple[Setting, ...] = (
    *_group(_R,
        ("WEBSIM_BROWSER_EXECUTABLE", "str", "", "", "browser path or name on PATH; empty = search"),
        ("WEBSIM_VIEWPORT", "str", "1280x800", "WIDTHxHEIGHT, sides in [200, 4096]", "viewport size"),
        ("WEBSIM_HTTP_TIMEOUT", "float s", 10.0, "(0, 600]", "navigation until DOMContentLoaded"),
        ("WEBSIM_PAGE_TIMEOUT", "float s", 20.0, "(0, 600], >= WEBSIM_HTTP_TIMEOUT", "whole page budget"),
        ("WEBSIM_STABLE_TIMEOUT", "float s", 10.0, "[0, 600]", "cap of the stable-page wait"),
        ("WEBSIM_NETWORK_IDLE_MS", "int ms", 500, "[0, 60000]", "no request in flight for this long"),
        ("WEBSIM_DOM_STABLE_CHECKS", "int", 3, "[1, 100]", "consecutive unchanged DOM digests"),
        ("WEBSIM_DOM_CHECK_INTERVAL_MS", "int ms", 100, "[10, 10000]", "time between DOM digests"),
        ("WEBSIM_TAB_REUSE", "int", 50, "[0, 10^6]", "pages one browser tab renders before a new tab; 0 or 1 = a new tab per page"),
        ("WEBSIM_SCREENSHOTS_DIR", "str", "", "a directory", "save each viewport screenshot as ID.png here"),
        ("WEBSIM_FEATURES_FILE", "str", "", "", "write every page's features (JSON Lines) for websim cluster"),
        ("WEBSIM_BATCH_SIZE", "int", 1000, "[1, 10^7]", "records buffered before a write to the on-disk store"),
        ("WEBSIM_SIM_THRESHOLD", "float", 0.85, "[0, 1]", "recorded in meta (as in the reference tool)"),
        ("WEBSIM_PROGRESS_INTERVAL", "float s", 30.0, "[0, 86400]", "progress log line interval, 0 = off"),
        ("WEBSIM_DENY_NETWORKS", "list", (), "CIDR networks", "networks no request may reach, redirect hops included"),
    ),
    *_group(_S,
        ("WEBSIM_STRICT_TLS", "bool", False, "", "certificate errors fail the page (both clients)"),
        ("WEBSIM_PROXY", "str", "", "http/https/socks5 URL", "proxy for Chromium and Scrapy's client; empty = none"),
        ("WEBSIM_HEADERS", "dict", {}, "header names to values", "headers on every request"),
        ("WEBSIM_COOKIES", "str", "", "'a=b; c=d'", "cookies on every request"),
        ("WEBSIM_USER_AGENT", "str", "", "one line", "User-Agent of every request; empty = Scrapy's/Chromium's own"),
    ),
    *_group("Report",
        ("WEBSIM_REPORT_DIR", "str", "", "a directory", "write the HTML report here when the crawl ends"),
        ("WEBSIM_THUMBNAILS_DIR", "str", "", "a directory", "keep a thumbnail per rendered page here"),
        ("WEBSIM_THUMBNAIL_WIDTH", "int px", 320, "[32, 1280]", "thumbnail width"),
        ("WEBSIM_THUMBNAIL_FORMAT", "str", "webp", "webp, jpeg", "thumbnail format"),
        ("WEBSIM_THUMBNAIL_QUALITY", "int", 60, "[1, 100]", "encoder quality"),
    ),
    *_group("Decision and clustering",
        ("WEBSIM_TEXT_THRESHOLD", "float", 0.75, "[0, 1]", "rule 1: minimum SimHash text similarity", "decision.rule1_text"),
        ("WEBSIM_TEXT_JACCARD_THRESHOLD", "float", 0.6, "[0, 1]", "rule 1: minimum MinHash text similarity", "decision.rule1_jaccard"),
        ("WEBSIM_STRUCTURE_THRESHOLD", "float", 0.85, "[0, 1]", "rule 1: minimum structure similarity", "decision.rule1_structure"),
        ("WEBSIM_VISUAL_THRESHOLD", "float", 0.9, "[0, 1]", "rule 1: minimum visual similarity", "decision.rule1_visual"),
        ("WEBSIM_VISUAL_FALLBACK_THRESHOLD", "float", 0.99, "[0, 1.01]", "rule 2: visual alone (> 1 disables)", "decision.rule2_visual"),
        ("WEBSIM_VISUAL_FALLBACK_MIN_BITS", "int", 8, "[0, 32]", "rule 2: pHash bits set and unset at least", "decision.rule2_min_phash_bits"),
        ("WEBSIM_VISUAL_FALLBACK_MIN_JACCARD", "float", 0.3, "[0, 1]", "rule 2: minimum MinHash text similarity", "decision.rule2_min_jaccard"),
        ("WEBSIM_HEADING_MIN_JACCARD", "float", 0.6, "[0, 1]", "no duplicate between pages whose h1 headings share fewer words, 0 = off", "decision.heading_min_jaccard"),
        ("WEBSIM_PROSE_MIN_LEN_RATIO", "float", 0.8, "[0, 1]", "no duplicate between prose pages whose prose lengths differ more (shorter / longer), 0 = off", "decision.prose_min_len_ratio"),
        ("WEBSIM_PROSE_LEN_MIN_CHARS", "int", 1000, "[0, 10^7]", "the prose length check needs this much prose on the shorter page", "decision.prose_len_min_chars"),
        ("WEBSIM_TEXT_MIN_LENGTH_RATIO", "float", 0.3, "[0, 1]", "text similarity is 0 below this length ratio", "decision.text_min_len_ratio"),
        ("WEBSIM_TEXT_MAX_DISTANCE", "int", 16, "[1, 64]", "SimHash distance where text similarity reaches 0", "decision.text_max_distance"),
        ("WEBSIM_VISUAL_MAX_DISTANCE", "int", 20, "[1, 64]", "pHash distance where visual similarity reaches 0", "decision.visual_max_distance"),
        ("WEBSIM_STRUCTURE_MEASURE", "str", "paths", "paths, lcs, both", "structure similarity measure", "decision.structure_measure"),
        ("WEBSIM_STRUCTURE_COUNT_WEIGHT", "float", 0.5, "[0, 1]", "weight of the DOM-count cosine in paths", "decision.structure_count_weight"),
        ("WEBSIM_SAME_HOST_ONLY", "bool", False, "", "compare pages of the same host only"),
        ("WEBSIM_PREFILTER_SIMHASH_DISTANCE", "int", 8, "[0, 11]", "candidate SimHash distance", "cluster.simhash_distance"),
        ("WEBSIM_PREFILTER_LENGTH_DIFF", "float", 0.5, "[0, 1]", "candidate text-length difference", "cluster.length_diff"),
        ("WEBSIM_CLUSTER_PASSES", "int", 0, ">= 0", "canonical-centred passes per group, 0 = to completion", "cluster.passes"),
    ),
    *_group("Features",
        ("WEBSIM_TEXT_EXTRACTOR", "str", "websim", "websim, trafilatura", "main-text extractor", "text.extractor"),
        ("WEBSIM_TEXT_SEMANTIC_MIN_SHARE", "float", 0.5, "[0, 1]", "share of text article/main must hold", "text.semantic_min_share"),
        ("WEBSIM_TEXT_SEMANTIC_MIN_CHARS", "int", 140, ">= 0", "minimum characters of such a container", "text.semantic_min_chars"),
        ("WEBSIM_TEXT_MAX_LINK_DENSITY", "float", 0.5, "[0, 1]", "blocks with more link text are dropped", "text.max_link_density"),
        ("WEBSIM_TEXT_ARTICLE_MIN_SHARE", "float", 1.0, "[0, 1]", "article share of the visible text to judge by it", "text.article_min_share"),
        ("WEBSIM_TEXT_LIST_FALLBACK_CHARS", "int", 200, "[0, 1000000]", "shorter articles: judged by visible text", "text.list_fallback_chars"),
        ("WEBSIM_TEXT_PROSE_SHARE", "float", 0.6, "[0, 1]", "density extraction widens to this paragraph share", "text.prose_share"),
        ("WEBSIM_DOM_MAX_PATHS", "int", 512, "[1, 100000]", "tag paths kept per page", "dom.max_paths"),
        ("WEBSIM_DOM_MAX_PATH_DEPTH", "int", 32, "[1, 1000]", "tags per path", "dom.max_path_depth"),
        ("WEBSIM_MAX_TAGS", "int", 5000, "[1, 1000000]", "tag-sequence length kept for LCS", "lcs.max_tags"),
    ),
    *_group("Rules and URLs",
        ("WEBSIM_RULES_ENABLED", "list", CORE_DEFAULT, "rule ids", "rules that may fire", "rules.enabled_rules",
         "all: `E1 E3 L1 W1 M1 T1 R1 U1`"),
        ("WEBSIM_RULE_KEYWORDS", "dict", {}, "rule id -> words", "words added to a rule's list"),
        ("WEBSIM_RULE_KEYWORDS_REPLACE", "dict", {}, "rule id -> words", "lists that replace a rule's list"),
        ("WEBSIM_THIN_HTML_BYTES", "int", 1024, ">= 0", "T1: HTML below this is thin", "rules.thin_html_bytes"),
        ("WEBSIM_THIN_TEXT_CHARS", "int", 200, ">= 0", "T1: main text below this is thin", "rules.thin_text_chars"),
        ("WEBSIM_RULE_SHORT_TEXT_CHARS", "int", 600, ">= 0", "keyword rules on 2xx pages need less main text", "rules.short_text_chars"),
        ("WEBSIM_LOGIN_FORM_SHARE", "float", 0.5, "[0, 1]", "L1 on 2xx: share of the page inside forms", "rules.form_share"),
        ("WEBSIM_ERROR_LENGTH_TOLERANCE", "float", 0.2, "[0, 1]", "E3: HTML-length band within one template", "rules.e3_length_tolerance"),
        ("WEBSIM_RULE_SIGNAL_CHARS", "int", 120, ">= 0", "characters of visible text kept in the signals", "rules.signal_text_chars"),
        ("WEBSIM_RULE_SCOPE", "str", "template", "template, origin", "rule clusters per template or per origin", "rules.scope"),
        ("WEBSIM_URL_INDEX_FILES", "list", CORE_DEFAULT, "", "last path segments dropped by normalisation", "urls.index_files",
         "`index.html index.htm index.php …`"),
        ("WEBSIM_URL_TRACKING_PARAMS", "list", CORE_DEFAULT, "", "query parameters dropped", "urls.tracking_params",
         "`_hsenc spm srsltid …`"),
        ("WEBSIM_URL_KEEP_PARAMS", "list", (), "", "query parameters never dropped", "urls.keep_params"),
        ("WEBSIM_URL_BROAD_TRACKERS", "bool", False, "", "also drop courlan's broad tracker list", "urls.use_courlan_trackers"),
        ("WEBSIM_URL_STRIP_TRAILING_SLASH", "bool", True, "", "/a/ and /a are the same URL", "urls.strip_trailing_slash"),
    ),
    *_group("Many machines (distributed mode)",
        ("WEBSIM_REDIS_URL", "str", "", "redis:// URL", "Redis of the distributed job; set: the crawl is a worker"),
        ("WEBSIM_REDIS_JOB", "str", "websim", "1-200 characters", "job name"),
        ("WEBSIM_REDIS_LEASE_TIMEOUT", "float s", 120.0, "[4, 86400], >= WEBSIM_PAGE_TIMEOUT",
         "un-renewed leases go back to the queue after this", "", "`120` (`WEBSIM_PAGE_TIMEOUT` if larger)"),
    ),
    *_group("Duplicate prediction",
        ("WEBSIM_PREDICT_ENABLED", "bool", False, "", "predict for every request"),
        ("WEBSIM_PREDICT_THRESHOLD", "float", 0.98, "[0, 1]", "drop requests at or above this probability"),
        ("WEBSIM_PREDICT_EXPLORATION", "float", 0.05, "[0, 1]", "share of would-be-dropped requests fetched"),
        ("WEBSIM_PREDICT_WARMUP", "int", 300, "[0, 10^7]", "pages learned from before anything is dropped"),
        ("WEBSIM_PREDICT_SEED", "int", 0, "64-bit", "exploration is deterministic per (seed, URL)"),
        ("WEBSIM_PREDICT_CONFIDENCE", "float", 0.8, "[0.5, 1)", "one-sided confidence of the lower bound"),
        ("WEBSIM_PREDICT_JACCARD", "float", 0.9, "(0, 1]", "shingle Jaccard of the same content"),
    ),
)
SETTINGS_BY_NAME: Dict[str, Setting] = {s.name: s for s in SETTINGS}


def default(name: str) -> Any:
    """The table's default of ``name``."""
    return SETTINGS_BY_NAME[name].default


def check_names(settings: Any) -> None:
    """An unknown ``WEBSIM_*`` name (a typo) is an error naming it and the closest valid one."""
    import difflib  # noqa: PLC0415

    names = settings.keys() if hasattr(settings, "keys") else iter(settings)
    for name in sorted(str(n) for n in names):
        if name.startswith("WEBSIM_") and name not in SETTINGS_BY_NAME:
            close = difflib.get_close_matches(name, list(SETTINGS_BY_NAME), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else " (README, section Settings, lists them all)"
            raise ConfigError(f"unknown setting {name}{hint}")


def param_settings(kind: str) -> Dict[str, str]:
    """``{field: setting}`` of a core parameter object (``build_params``): ``kind`` is the part of
    ``Setting.param`` before the dot (text, dom, lcs, decision, urls, rules, cluster)."""
    return {s.param.split(".", 1)[1]: s.name for s in SETTINGS if s.param.split(".", 1)[0] == kind}


TEXT_SETTINGS = param_settings("text")
DOM_SETTINGS = param_settings("dom")
LCS_SETTINGS = param_settings("lcs")
DECISION_SETTINGS = param_settings("decision")
URL_SETTINGS = param_settings("urls")
RULE_SETTINGS = param_settings("rules")
CLUSTER_SETTINGS = param_settings("cluster")


def rule_keywords(settings: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(WEBSIM_RULE_KEYWORDS, WEBSIM_RULE_KEYWORDS_REPLACE)``, each checked to be {rule: [words]}."""
    extend = _get(settings, "WEBSIM_RULE_KEYWORDS", None) or {}
    replace_lists = _get(settings, "WEBSIM_RULE_KEYWORDS_REPLACE", None) or {}
    for name, value in (("WEBSIM_RULE_KEYWORDS", extend), ("WEBSIM_RULE_KEYWORDS_REPLACE", replace_lists)):
        if not isinstance(value, dict) or not all(isinstance(v, (list, tuple)) for v in value.values()):
            raise ConfigError(f"{name} must be a dict like {{'L1': ['sign in'], 'E3': [...]}}, got {value!r}")
    return extend, replace_lists


@dataclass(frozen=True)
class PredictSettings:
    """The ``WEBSIM_PREDICT_*`` settings of the prediction spider middleware."""

    enabled: bool = False
    threshold: float = 0.98
    exploration: float = 0.05
    warmup: int = 300
    seed: int = 0
    jaccard: float = 0.9
    confidence: float = 0.8

    @classmethod
    def from_settings(cls, settings: Any) -> "PredictSettings":
        """Read and validate the WEBSIM_PREDICT_* settings (errors name the setting and range)."""
        confidence = get_number(settings, "WEBSIM_PREDICT_CONFIDENCE", lo=0.5, hi=1.0)
        if confidence >= 1.0:
            raise ConfigError(f"WEBSIM_PREDICT_CONFIDENCE must be a number in [0.5, 1), got {confidence!r}")
        return cls(
            enabled=get_bool(settings, "WEBSIM_PREDICT_ENABLED"),
            threshold=get_number(settings, "WEBSIM_PREDICT_THRESHOLD", lo=0.0, hi=1.0),
            exploration=get_number(settings, "WEBSIM_PREDICT_EXPLORATION", lo=0.0, hi=1.0),
            warmup=get_number(settings, "WEBSIM_PREDICT_WARMUP", lo=0, hi=10_000_000, integer=True),
            seed=get_number(settings, "WEBSIM_PREDICT_SEED", lo=-(2**63), hi=2**63 - 1, integer=True),
            jaccard=get_number(settings, "WEBSIM_PREDICT_JACCARD", lo=0.0, hi=1.0, lo_open=True),
            confidence=confidence,
        )
