"""Every ``WEBSIM_*`` setting: its default, its parsing and its validation, in one place.

Each setting's default, valid range and one-line description are written once, where its value
lives: a field of :class:`WebsimConfig` or :class:`PredictSettings` (the setting's name is
``WEBSIM_`` or ``WEBSIM_PREDICT_`` + the field's name), or a field of a core parameter object
(``param`` in ``core/params/``, where every core parameter object is declared; :data:`_CORE`
below maps those settings to their fields). The table :data:`SETTINGS` (type, default, valid
range, one-line description; README's "Settings" section is checked against it) is built from
those declarations. ``WebsimConfig.from_settings(settings)`` is
called once per crawler and every component reads the same object (the core parameter objects are
built by ``build_params`` from the ``*_SETTINGS`` mappings below). A bad value raises
:class:`ConfigError` naming the setting and its valid range; an unknown ``WEBSIM_*`` name raises
one naming the closest valid setting. No other module reads a ``WEBSIM_*`` setting.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from scrapy_websim.config_values import (  # noqa: F401  (re-exported: the public place of these names)
    PROXY_SCHEMES, ConfigError, Network, _one_line, parse_cookies, parse_header_line, parse_headers,
    parse_networks, parse_proxy, parse_viewport, proxy_parts)
from scrapy_websim.core.params import (
    ClusterParams, DecisionParams, DomParams, FieldError, LcsParams, PredictorParams, RuleParams, TextParams, UrlParams,
    param, parse_range)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


_TABLE = object()

#: Each crawler's :class:`WebsimConfig` (``WebsimConfig.from_crawler``).
_BY_CRAWLER: "weakref.WeakKeyDictionary[Any, WebsimConfig]" = weakref.WeakKeyDictionary()


def _get(settings: Any, name: str, default: Any = _TABLE) -> Any:
    if default is _TABLE:
        default = SETTINGS_BY_NAME[name].default
    if hasattr(settings, "get"):
        value = settings.get(name, default)
    else:  # pragma: no cover
        value = getattr(settings, name, default)
    return default if value is None else value


def get_bool(settings: Any, name: str, default: Any = _TABLE) -> bool:
    return _to_bool(name, _get(settings, name, default))


def _to_bool(name: str, value: Any) -> bool:
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
    spec = f"{'(' if lo_open else '['}{_fmt(lo)}, {_fmt(hi)}]" if lo is not None and hi is not None else (
        f">= {_fmt(lo)}" if lo is not None else "")
    return _to_number(name, _get(settings, name, default), spec, integer)


def _to_number(name: str, value: Any, spec: str, integer: bool) -> Any:
    """``value`` (a number or its text) as an int or a float in the range ``spec``
    (``core/params/base.py``'s form, e.g. ``"(0, 600]"``; ``""`` = any)."""
    kind = "int" if integer else "number"
    rng = parse_range(f"{kind} {spec}") if spec else None
    must = rng.text if rng else ("an integer" if integer else "a number")
    try:
        if isinstance(value, bool):
            raise ValueError
        number = int(value) if integer and not (isinstance(value, float) and not value.is_integer()) else float(value)
        if integer and isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be {must}, got {value!r}") from None
    if integer:
        number = int(number)
    if number != number or (rng is not None and not rng.holds(number)):
        raise ConfigError(f"{name} must be {must}, got {value!r}")
    return number


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def get_str(settings: Any, name: str, default: Any = _TABLE, choices: Optional[Tuple[str, ...]] = None) -> str:
    return _to_str(name, _get(settings, name, default), choices)


def _to_str(name: str, value: Any, choices: Optional[Tuple[str, ...]] = None) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    if choices and value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def _one_line_str(name: str, value: Any) -> str:
    return _one_line(name, _to_str(name, value))


def _directory(name: str, value: Any) -> str:
    value = _to_str(name, value)
    if value and os.path.exists(value) and not os.path.isdir(value):
        raise ConfigError(f"{name}={value!r} exists and is not a directory")
    return value


def _read(settings: Any, name: str, f: "dataclasses.Field[Any]") -> Any:
    """Setting ``name``, parsed and checked as field ``f`` declares it (its default when unset)."""
    meta, default = f.metadata, f.default
    value = _get(settings, name, default)
    if meta.get("parse"):
        return meta["parse"](name, value)
    if isinstance(default, bool):
        return _to_bool(name, value)
    if isinstance(default, (int, float)):
        return _to_number(name, value, meta["range"], isinstance(default, int))
    if isinstance(default, str):
        return _to_str(name, value, meta["choices"])
    return value


def read_fields(cls: Any, settings: Any, prefix: str) -> Dict[str, Any]:
    """``{field: value}`` of every setting field of ``cls`` (setting ``prefix + FIELD``)."""
    return {f.name: _read(settings, prefix + f.name.upper(), f) for f in _setting_fields(cls)}


def _setting_fields(cls: Any) -> Iterator["dataclasses.Field[Any]"]:
    return (f for f in dataclasses.fields(cls) if "group" in f.metadata)


def _in(group: str) -> Callable[..., Any]:
    """``param`` for the setting fields of one README group (``more``: ``unit``, the README
    ``type``/``shown`` default/``valid`` values where not derived, a ``parse(name, value)``)."""
    return functools.partial(param, group=group)


def _like(cls: Any, name: str, group: str, **changes: Any) -> Any:
    """A setting field declared as the core field ``cls.name`` is (default, range, description)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    meta = dict(f.metadata)
    return param(changes.pop("default", f.default), meta.pop("range"), meta.pop("doc"), **meta, group=group, **changes)


_DECIDE = "Decision and clustering"
_RENDER, _SCAN, _REPORT, _MANY = map(_in, ("Rendering and crawl", "Scanning many hosts", "Report",
                                           "Many machines (distributed mode)"))
_DIR = {"parse": _directory, "valid": "a directory"}


@dataclass(frozen=True)
class WebsimConfig:
    """Parsed ``WEBSIM_*`` settings (field ``x``: setting ``WEBSIM_X``). README.md, section
    "Settings", describes each one."""

    browser_executable: str = _RENDER("", "", "browser path or name on PATH; empty = search")
    viewport: Tuple[int, int] = _RENDER((1280, 800), "", "viewport size", parse=parse_viewport, type="str",
                                        shown='`"1280x800"`', valid="WIDTHxHEIGHT, sides in [200, 4096]")
    http_timeout: float = _RENDER(10.0, "(0, 600]", "navigation until DOMContentLoaded", unit="s")
    page_timeout: float = _RENDER(20.0, "(0, 600]", "whole page budget", unit="s",
                                  valid="(0, 600], >= WEBSIM_HTTP_TIMEOUT")
    stable_timeout: float = _RENDER(10.0, "[0, 600]", "cap of the stable-page wait", unit="s")
    network_idle_ms: int = _RENDER(500, "[0, 60000]", "no request in flight for this long", unit="ms")
    dom_stable_checks: int = _RENDER(3, "[1, 100]", "consecutive unchanged DOM digests")
    dom_check_interval_ms: int = _RENDER(100, "[10, 10000]", "time between DOM digests", unit="ms")
    stable_early: bool = _RENDER(True, "", "end the stable-page wait once the page is provably done")
    tab_reuse: int = _RENDER(50, "[0, 1000000]",
                             "pages one browser tab renders before a new tab; 0 or 1 = a new tab per page")
    batch_size: int = _RENDER(1000, "[1, 10000000]", "records buffered before a write to the on-disk store")
    sim_threshold: float = _RENDER(0.85, "[0, 1]", "recorded in meta (as in the reference tool)")
    screenshots_dir: str = _RENDER("", "", "save each viewport screenshot as ID.png here", **_DIR)
    features_file: str = _RENDER("", "", "write every page's features (JSON Lines) for websim cluster")
    progress_interval: float = _RENDER(30.0, "[0, 86400]", "progress log line interval, 0 = off", unit="s")
    same_host_only: bool = _like(ClusterParams, "same_host_only", _DECIDE)
    deny_networks: Tuple[Network, ...] = _RENDER((), "", "networks no request may reach, redirect hops included",
                                                 parse=parse_networks, valid="CIDR networks")
    redis_url: str = _MANY("", "", "Redis of the distributed job; set: the crawl is a worker", valid="redis:// URL")
    redis_job: str = _MANY("websim", "", "job name", valid="1-200 characters")
    #: the default grows with WEBSIM_PAGE_TIMEOUT (see _lease_timeout)
    redis_lease_timeout: float = _MANY(120.0, "[4, 86400]", "un-renewed leases go back to the queue after this",
                                       unit="s", valid="[4, 86400], >= WEBSIM_PAGE_TIMEOUT",
                                       shown="`120` (`WEBSIM_PAGE_TIMEOUT` if larger)")
    # --- scanning many hosts (README "Scanning many hosts") ---
    strict_tls: bool = _SCAN(False, "", "certificate errors fail the page (both clients)")
    proxy: str = _SCAN("", "", "proxy for Chromium and Scrapy's client; empty = none", parse=parse_proxy,
                       valid="http/https/socks5 URL")
    headers: Tuple[Tuple[str, str], ...] = _SCAN((), "", "headers on every request", parse=parse_headers,
                                                 type="dict", shown="`{}`", valid="header names to values")
    cookies: str = _SCAN("", "", "cookies on every request", parse=parse_cookies, valid="'a=b; c=d'")
    user_agent: str = _SCAN("", "", "User-Agent of every request; empty = Scrapy's/Chromium's own",
                            parse=_one_line_str, valid="one line")
    favicon: bool = _SCAN(True, "", "hash each page's favicon (Shodan's favicon hash; one request per favicon "
                          "URL and crawl, from Chromium's cache when it can)")
    soft404_probes: int = _SCAN(1, "[0, 2]", "random paths rendered per origin to learn its own not-found answer "
                                "(pages with that template become E3); 0 = off")
    soft404_min_urls: int = _SCAN(20, "[1, 100000000]", "probe only origins with at least this many URLs in the list "
                                  "(one probe then costs at most 1/20 of the origin's rendering)")
    per_host_max: int = _SCAN(8, "[1, 1000]", "most pages of one host in flight when websim sets the per-host "
                              "limit: it starts at 2 and rises to this while the host answers as fast")
    report_dir: str = _REPORT("", "", "write the HTML report here when the crawl ends", **_DIR)
    thumbnails_dir: str = _REPORT("", "", "keep a thumbnail per rendered page here", **_DIR)
    thumbnail_width: int = _REPORT(320, "[32, 1280]", "thumbnail width", unit="px")
    thumbnail_format: str = _REPORT("webp", "", "thumbnail format", choices=("webp", "jpeg"))
    thumbnail_quality: int = _REPORT(60, "[1, 100]", "encoder quality")
    extra: Dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def thumbnails_path(self) -> str:
        """Where the crawl keeps thumbnails: WEBSIM_THUMBNAILS_DIR, else the report's thumbs/, else none."""
        return self.thumbnails_dir or (os.path.join(self.report_dir, "thumbs") if self.report_dir else "")

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimConfig":
        """The crawler's config: built and checked from its settings once, then shared by every
        component of that crawler."""
        config = _BY_CRAWLER.get(crawler)
        if config is None:
            config = _BY_CRAWLER[crawler] = cls.from_settings(crawler.settings)
        return config

    @classmethod
    def from_settings(cls, settings: Any) -> "WebsimConfig":
        check_names(settings)
        values = read_fields(cls, settings, "WEBSIM_")
        page_timeout, http_timeout = values["page_timeout"], values["http_timeout"]
        if page_timeout < http_timeout:
            raise ConfigError(
                f"WEBSIM_PAGE_TIMEOUT ({page_timeout:g} s) must be >= WEBSIM_HTTP_TIMEOUT "
                f"({http_timeout:g} s): the page budget includes the HTTP response"
            )
        values["redis_lease_timeout"] = _lease_timeout(settings, values["redis_lease_timeout"], page_timeout)
        return cls(**values)


def _lease_timeout(settings: Any, value: float, page_timeout: float) -> float:
    """``WEBSIM_REDIS_LEASE_TIMEOUT``: a live worker renews its leases every quarter of it, so it only
    needs to outlast a stalled heartbeat; still at least one page budget (the default grows with it)."""
    if _get(settings, "WEBSIM_REDIS_LEASE_TIMEOUT", None) is None:
        return max(value, page_timeout)
    if value < page_timeout:
        raise ConfigError(f"WEBSIM_REDIS_LEASE_TIMEOUT ({value:g} s) must be >= WEBSIM_PAGE_TIMEOUT "
                          f"({page_timeout:g} s)")
    return value


def build_params(settings: Any, cls: Any, mapping: Mapping[str, str], **fixed: Any) -> Any:
    """A core parameter dataclass from settings: ``mapping`` is ``{field: "WEBSIM_SETTING"}``.

    Unset settings keep the dataclass default. Values are coerced to the default's type, and the
    dataclass's own ``validate()`` runs; its :class:`FieldError` is re-raised naming the *setting*.
    """
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
        return cls(**kwargs).validate()
    except FieldError as exc:
        raise ConfigError(f"{mapping.get(exc.field, exc.field)} {exc.problem}") from None


_PREDICT = "Duplicate prediction"
_PRED = _in(_PREDICT)


@dataclass(frozen=True)
class PredictSettings:
    """The ``WEBSIM_PREDICT_*`` settings of the prediction spider middleware (field ``x``:
    setting ``WEBSIM_PREDICT_X``)."""

    enabled: bool = _PRED(False, "", "predict for every request")
    threshold: float = _PRED(0.98, "[0, 1]", "drop requests at or above this probability")
    exploration: float = _PRED(0.05, "[0, 1]", "share of would-be-dropped requests fetched")
    warmup: int = _PRED(300, "[0, 10000000]", "pages learned from before anything is dropped")
    seed: int = _PRED(0, f"[{-2**63}, {2**63 - 1}]", "exploration is deterministic per (seed, URL)", valid="64-bit")
    jaccard: float = _like(PredictorParams, "jaccard_threshold", _PREDICT)
    #: below the predictor's own 0.95: with no counter-example a hypothesis passes 0.98 after ~35
    #: observations instead of ~135 (README, "Duplicate prediction")
    confidence: float = _like(PredictorParams, "confidence", _PREDICT, default=0.8)

    @classmethod
    def from_settings(cls, settings: Any) -> "PredictSettings":
        """Read and validate the WEBSIM_PREDICT_* settings (errors name the setting and range)."""
        return cls(**read_fields(cls, settings, "WEBSIM_PREDICT_"))


# --------------------------------------------------------------------------------------------
# The settings table: every WEBSIM_* setting once (README "Settings" is checked against it).
# --------------------------------------------------------------------------------------------


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


#: README's groups, in its order.
GROUPS = ("Rendering and crawl", "Scanning many hosts", "Report", _DECIDE, "Features", "Rules and URLs",
          "Many machines (distributed mode)", _PREDICT)

#: The settings of the core parameter objects: (README group, kind, class, rows); a row is
#: ``(setting, field)`` or ``(setting, field, README default)``. Default, range and description are
#: the field's; ``kind`` names the ``build_params`` mapping (``param_settings(kind)``).
_CORE: Tuple[Tuple[str, str, Any, Tuple[Tuple[str, ...], ...]], ...] = (
    (_DECIDE, "decision", DecisionParams, (
        ("WEBSIM_TEXT_THRESHOLD", "rule1_text"),
        ("WEBSIM_TEXT_JACCARD_THRESHOLD", "rule1_jaccard"),
        ("WEBSIM_TEXT_NOISE_SHINGLES", "text_noise_shingles"),
        ("WEBSIM_STRUCTURE_THRESHOLD", "rule1_structure"),
        ("WEBSIM_VISUAL_THRESHOLD", "rule1_visual"),
        ("WEBSIM_VISUAL_FALLBACK_THRESHOLD", "rule2_visual"),
        ("WEBSIM_VISUAL_FALLBACK_MIN_BITS", "rule2_min_phash_bits"),
        ("WEBSIM_VISUAL_FALLBACK_MIN_JACCARD", "rule2_min_jaccard"),
        ("WEBSIM_HEADING_MIN_JACCARD", "heading_min_jaccard"),
        ("WEBSIM_PROSE_MIN_LEN_RATIO", "prose_min_len_ratio"),
        ("WEBSIM_PROSE_LEN_MIN_CHARS", "prose_len_min_chars"),
        ("WEBSIM_TEXT_MIN_LENGTH_RATIO", "text_min_len_ratio"),
        ("WEBSIM_TEXT_MAX_DISTANCE", "text_max_distance"),
        ("WEBSIM_VISUAL_MAX_DISTANCE", "visual_max_distance"),
        ("WEBSIM_STRUCTURE_MEASURE", "structure_measure"),
        ("WEBSIM_STRUCTURE_COUNT_WEIGHT", "structure_count_weight"),
    )),
    (_DECIDE, "cluster", ClusterParams, (
        ("WEBSIM_PREFILTER_SIMHASH_DISTANCE", "simhash_distance"),
        ("WEBSIM_PREFILTER_LENGTH_DIFF", "length_diff"),
        ("WEBSIM_PREFILTER_HEADING_MAX_PAGES", "heading_max_pages"),
        ("WEBSIM_PREFILTER_LENGTH_NOISE_CHARS", "length_noise_chars"),
        ("WEBSIM_CLUSTER_PASSES", "passes"),
    )),
    ("Features", "text", TextParams, (
        ("WEBSIM_TEXT_EXTRACTOR", "extractor"),
        ("WEBSIM_TEXT_SEMANTIC_MIN_SHARE", "semantic_min_share"),
        ("WEBSIM_TEXT_SEMANTIC_MIN_CHARS", "semantic_min_chars"),
        ("WEBSIM_TEXT_MAX_LINK_DENSITY", "max_link_density"),
        ("WEBSIM_TEXT_ARTICLE_MIN_SHARE", "article_min_share"),
        ("WEBSIM_TEXT_LIST_FALLBACK_CHARS", "list_fallback_chars"),
        ("WEBSIM_TEXT_PROSE_SHARE", "prose_share"),
    )),
    ("Features", "dom", DomParams, (
        ("WEBSIM_DOM_MAX_PATHS", "max_paths"),
        ("WEBSIM_DOM_MAX_PATH_DEPTH", "max_path_depth"),
    )),
    ("Features", "lcs", LcsParams, (("WEBSIM_MAX_TAGS", "max_tags"),)),
    ("Rules and URLs", "rules", RuleParams, (
        ("WEBSIM_RULES_ENABLED", "enabled_rules", "all: `E1 E3 L1 W1 M1 T1 R1 U1`"),
        ("WEBSIM_THIN_HTML_BYTES", "thin_html_bytes"),
        ("WEBSIM_THIN_TEXT_CHARS", "thin_text_chars"),
        ("WEBSIM_RULE_SHORT_TEXT_CHARS", "short_text_chars"),
        ("WEBSIM_LOGIN_FORM_SHARE", "form_share"),
        ("WEBSIM_ERROR_LENGTH_TOLERANCE", "e3_length_tolerance"),
        ("WEBSIM_RULE_SIGNAL_CHARS", "signal_text_chars"),
        ("WEBSIM_RULE_SCOPE", "scope"),
    )),
    ("Rules and URLs", "urls", UrlParams, (
        ("WEBSIM_URL_INDEX_FILES", "index_files", "`index.html index.htm index.php …`"),
        ("WEBSIM_URL_TRACKING_PARAMS", "tracking_params", "`_hsenc spm srsltid …`"),
        ("WEBSIM_URL_KEEP_PARAMS", "keep_params"),
        ("WEBSIM_URL_BROAD_TRACKERS", "use_courlan_trackers"),
        ("WEBSIM_URL_STRIP_TRAILING_SLASH", "strip_trailing_slash"),
    )),
)

#: The two settings that are no field: rule_keywords() reads them into RuleParams.with_keywords.
_KEYWORDS = tuple(Setting(name, "dict", {}, "rule id -> words", doc, "Rules and URLs") for name, doc in (
    ("WEBSIM_RULE_KEYWORDS", "words added to a rule's list"),
    ("WEBSIM_RULE_KEYWORDS_REPLACE", "lists that replace a rule's list")))


def _row(name: str, f: "dataclasses.Field[Any]", group: str, param_: str = "", shown: str = "") -> Setting:
    """The table row of setting ``name``, declared by field ``f``."""
    meta, value = f.metadata, f.default
    kind = ("bool" if isinstance(value, bool) else "int" if isinstance(value, int) else
            "float" if isinstance(value, float) else "list" if isinstance(value, tuple) else "str")
    kind = meta.get("type") or (f"{kind} {meta['unit']}" if meta.get("unit") else kind)
    valid = meta.get("valid") or ", ".join(meta["choices"]) or re.sub(r"^(int|number) ", "", meta["range"])
    return Setting(name, kind, value, valid, meta["doc"], group, param_, shown or meta.get("shown", ""))


def _rows() -> Iterator[Setting]:
    for cls, prefix in ((WebsimConfig, "WEBSIM_"), (PredictSettings, "WEBSIM_PREDICT_")):
        for f in _setting_fields(cls):
            yield _row(prefix + f.name.upper(), f, f.metadata["group"])
    for group, kind, cls, rows in _CORE:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name, fname, *shown in rows:
            yield _row(name, fields[fname], group, f"{kind}.{fname}", *shown)
    yield from _KEYWORDS


SETTINGS: Tuple[Setting, ...] = tuple(sorted(_rows(), key=lambda s: GROUPS.index(s.group)))
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
