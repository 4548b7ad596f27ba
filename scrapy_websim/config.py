"""Every ``WEBSIM_*`` setting and every ``WEBSIM_PARAMS`` key: its default, parsing and validation.

Each value's default, valid range and one-line description are written once, where the value
lives: a field of :class:`WebsimConfig` or :class:`PredictSettings`, or a field of a core parameter
object (``param`` in ``core/params/``, where every core parameter object is declared). A field is
reached in one of two ways, both derived from its declaration:

* a *setting* (what a user sets: the main thresholds, rule lists, rendering and scanning options,
  outputs): a field of :class:`WebsimConfig` / :class:`PredictSettings` declared with a settings
  group is setting ``WEBSIM_`` / ``WEBSIM_PREDICT_`` + its name in capitals; a core field names
  its own setting (``param(..., setting="WEBSIM_TEXT_THRESHOLD")``);
* a key of the one dict setting ``WEBSIM_PARAMS`` (the algorithm's internals):
  ``"{object}.{field}"``, the object's key in :data:`PARAM_OBJECTS` and the field's name
  (``{"text.max_link_density": 0.5, "cluster.passes": 2}``).

The table :data:`SETTINGS` (type, default, valid range, one-line description; docs/settings.md is
generated from it) and :data:`PARAM_KEYS` are built from those declarations.
``WebsimConfig.from_crawler(crawler)`` reads and checks the settings once per crawler and every
component of it gets the same object; so does ``WebsimParams.from_crawler(crawler)``, every core
parameter object of the run (built by :func:`build_params`), which the feature extraction, the
labelling, the clustering and the rows all take (a command builds its one with
``WebsimParams.from_settings``). A bad value raises
:class:`ConfigError` naming the setting (or ``WEBSIM_PARAMS['key']``) and its valid range; an
unknown ``WEBSIM_*`` name or ``WEBSIM_PARAMS`` key raises one naming the closest valid one. No other
module reads a ``WEBSIM_*`` setting.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import os
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Type

from scrapy_websim.config_values import (  # noqa: F401  (re-exported: the public place of these names)
    PROXY_SCHEMES,
    ConfigError,
    Network,
    _one_line,
    parse_cookies,
    parse_header_line,
    parse_headers,
    parse_networks,
    parse_proxy,
    parse_viewport,
    proxy_parts,
)
from scrapy_websim.core.params.base import FieldError, Params, param, parse_range
from scrapy_websim.core.params.match import ClusterParams, DecisionParams, TemplateParams
from scrapy_websim.core.params.page import DomParams, LcsParams, PageTypeParams, TextParams
from scrapy_websim.core.params.rules import RuleParams
from scrapy_websim.core.params.urls import PredictorParams, UrlParams

if TYPE_CHECKING:
    from scrapy_websim.core.features import FeatureParams
    from scrapy_websim.core.match.assign import AssignParams

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


_TABLE = object()

#: Each crawler's :class:`WebsimConfig` (``WebsimConfig.from_crawler``).
_BY_CRAWLER: "weakref.WeakKeyDictionary[Any, WebsimConfig]" = weakref.WeakKeyDictionary()
#: Each crawler's :class:`WebsimParams` (``WebsimParams.from_crawler``).
_PARAMS_BY_CRAWLER: "weakref.WeakKeyDictionary[Any, WebsimParams]" = weakref.WeakKeyDictionary()


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
        number = _parse_number(value, integer)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be {must}, got {value!r}") from None
    if integer:
        number = int(number)
    if number != number or (rng is not None and not rng.holds(number)):
        raise ConfigError(f"{name} must be {must}, got {value!r}")
    return number


def _parse_number(value: Any, integer: bool) -> Any:
    """``value`` as an int (``integer``: a whole number or the text of one) or a float;
    ValueError or TypeError when it is no such number (a bool is none)."""
    if isinstance(value, bool):
        raise ValueError
    number = int(value) if integer and not (isinstance(value, float) and not value.is_integer()) else float(value)
    if integer and isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        raise ValueError
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


def _to_words(name: str, value: Any) -> Tuple[Any, ...]:
    """A list value: a list, a tuple, a set, or comma-separated text (as given on a command line)."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise ConfigError(f"{name} must be a list, got {value!r}")
    return tuple(value)


def _one_line_str(name: str, value: Any) -> str:
    return _one_line(name, _to_str(name, value))


def _directory(name: str, value: Any) -> str:
    value = _to_str(name, value)
    if value and os.path.exists(value) and not os.path.isdir(value):
        raise ConfigError(f"{name}={value!r} exists and is not a directory")
    return value


#: ``follow``'s page cap when none is given (the ``websim`` spider's ``max_pages``, ``--max-pages``; 0 = none).
FOLLOW_MAX_PAGES = 10_000

#: A result file's format by its name's ending (the ``-o`` of the ``websim`` command and spider).
RESULT_FORMATS = {".json": "json", ".jsonl": "jsonl", ".jsonlines": "jsonl", ".csv": "csv"}


def result_format(path: str) -> str:
    """The format of result file ``path`` by its ending (``""``: none of :data:`RESULT_FORMATS`)."""
    return RESULT_FORMATS.get(os.path.splitext(path)[1].lower(), "")


def _result_files(name: str, value: Any) -> Tuple[str, ...]:
    """``WEBSIM_OUTPUT``: one path, a comma-separated text of paths or a list; each ends in a result format."""
    paths = tuple(_one_line(name, p) for p in _to_words(name, value))
    for path in paths:
        if not result_format(path):
            raise ConfigError(f"{name}: {path!r} must end in .json, .jsonl or .csv")
    return paths


def _read(name: str, value: Any, f: "dataclasses.Field[Any]") -> Any:
    """``value`` of setting or key ``name`` (None: unset), parsed and range-checked as field ``f`` of a
    config object declares it (its default when unset)."""
    meta, default = f.metadata, f.default
    if value is None:
        value = default
    if meta.get("parse"):
        return meta["parse"](name, value)
    if isinstance(default, bool):
        return _to_bool(name, value)
    if isinstance(default, (int, float)):
        return _to_number(name, value, meta["range"], isinstance(default, int))
    if isinstance(default, str):
        return _to_str(name, value, meta["choices"])
    return value


def _coerce(name: str, value: Any, f: "dataclasses.Field[Any]") -> Any:
    """``value`` of setting or key ``name`` as the type of core field ``f`` (its range and choices are
    checked by the object's own ``validate()``)."""
    default = f.default
    if isinstance(default, bool):
        return _to_bool(name, value)
    if isinstance(default, (int, float)):
        return _to_number(name, value, "", isinstance(default, int))
    if isinstance(default, tuple):
        return _to_words(name, value)
    return value


def _in(group: str) -> Callable[..., Any]:
    """``param`` for the setting fields of one settings group (``more``: ``unit``, the table
    ``type``/``shown`` default/``valid`` values where not derived, a ``parse(name, value)``)."""
    return functools.partial(param, group=group)


def _like(cls: Any, name: str, group: Optional[str] = None, **changes: Any) -> Any:
    """A field declared as the core field ``cls.name`` is (default, range, description): a setting of
    settings ``group``, or a ``WEBSIM_PARAMS`` key without one."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    meta = {k: v for k, v in f.metadata.items() if k not in ("set_by", "setting")}
    if group:
        meta["group"] = group
    return param(changes.pop("default", f.default), meta.pop("range"), meta.pop("doc"), **meta, **changes)


_DECIDE = "Decision and clustering"
_RENDER, _SCAN, _REPORT, _MANY = map(_in, ("Rendering and crawl", "Scanning many hosts", "Report",
                                           "Many machines (distributed mode)"))
_DIR = {"parse": _directory, "valid": "a directory"}


@dataclass(frozen=True)
class WebsimConfig:
    """Parsed ``WEBSIM_*`` settings (field ``x`` with a settings group: setting ``WEBSIM_X``) and the
    crawl's ``WEBSIM_PARAMS`` keys (the other ``param`` fields: key ``crawl.x``). docs/settings.md,
    "Settings", describes each one."""

    browser_executable: str = _RENDER("", "", "browser path or name on PATH; empty = search")
    viewport: Tuple[int, int] = _RENDER((1280, 800), "", "viewport size", parse=parse_viewport, type="str",
                                        shown='`"1280x800"`', valid="WIDTHxHEIGHT, sides in [200, 4096]")
    http_timeout: float = _RENDER(10.0, "(0, 600]", "navigation until DOMContentLoaded", unit="s")
    page_timeout: float = _RENDER(20.0, "(0, 600]", "whole page budget", unit="s",
                                  valid="(0, 600], >= WEBSIM_HTTP_TIMEOUT")
    stable_timeout: float = _RENDER(10.0, "[0, 600]", "cap of the stable-page wait", unit="s")
    network_idle_ms: int = param(500, "[0, 60000]", "stable page: no request in flight for this long", unit="ms")
    dom_stable_checks: int = param(3, "[1, 100]", "stable page: consecutive unchanged DOM digests")
    dom_check_interval_ms: int = param(100, "[10, 10000]", "stable page: time between DOM digests", unit="ms")
    stable_early: bool = param(True, "", "end the stable-page wait once the page is provably done")
    render_all: bool = _RENDER(False, "", "render every page; default: a page whose document is the same as one "
                               "rendered before (per-request noise masked) and whose render said what its HTML "
                               "says takes that render, and non-HTML documents are not rendered")
    tab_reuse: int = param(50, "[0, 1000000]",
                           "pages one browser tab renders before a new tab; 0 or 1 = a new tab per page")
    batch_size: int = param(1000, "[1, 10000000]", "records buffered before a write to the on-disk store")
    sim_threshold: float = param(0.85, "[0, 1]", "recorded in meta (as in the reference tool)")
    screenshots_dir: str = _RENDER("", "", "save each viewport screenshot as ID.png here", **_DIR)
    features_file: str = _RENDER("", "", "write every page's features (JSON Lines) for websim cluster")
    #: the websim spider's -o/-O result feeds are added to these by the add-on
    output: Tuple[str, ...] = _RENDER((), "", "the result files (.json, .jsonl, .csv; comma-separated), replaced "
                                      "at the end of the crawl; empty: with your own spider websim-SPIDER.json, "
                                      "with the websim spider its -o files", parse=_result_files, type="list",
                                      valid="paths ending in .json, .jsonl or .csv")
    progress: str = param("auto", "", "progress: a live bar on a terminal (auto: when standard error is one, "
                          "else log lines), log lines, or none", choices=("auto", "bar", "log", "off"))
    progress_interval: float = param(30.0, "[0, 86400]", "progress log line interval, 0 = off", unit="s")
    same_host_only: bool = _like(ClusterParams, "same_host_only", _DECIDE)
    deny_networks: Tuple[Network, ...] = _RENDER((), "", "networks no request may reach, redirect hops included",
                                                 parse=parse_networks, valid="CIDR networks")
    redis_url: str = _MANY("", "", "Redis of the distributed job; set: the crawl is a worker", valid="redis:// URL")
    redis_job: str = _MANY("websim", "", "job name", valid="1-200 characters")
    #: the default grows with WEBSIM_PAGE_TIMEOUT (see _lease_timeout)
    redis_lease_timeout: float = _MANY(120.0, "[4, 86400]", "un-renewed leases go back to the queue after this",
                                       unit="s", valid="[4, 86400], >= WEBSIM_PAGE_TIMEOUT",
                                       shown="`120` (`WEBSIM_PAGE_TIMEOUT` if larger)")
    # --- scanning many hosts (docs/scanning.md) ---
    strict_tls: bool = _SCAN(False, "", "certificate errors fail the page (both clients)")
    #: Scrapy has no proxy setting (its client reads ``meta["proxy"]`` and the environment)
    proxy: str = _SCAN("", "", "proxy for Chromium and Scrapy's client; empty = none", parse=parse_proxy,
                       valid="http/https/socks5 URL")
    #: Scrapy's ``DEFAULT_REQUEST_HEADERS`` that are not Scrapy's defaults: the browser sends them on
    #: every request of the page (Scrapy's requests carry them all already)
    headers: Tuple[Tuple[str, str], ...] = field(default=(), metadata={"scrapy": "DEFAULT_REQUEST_HEADERS"})
    #: Scrapy's ``USER_AGENT`` when it is not Scrapy's default: the browser reports it as its own
    #: (``navigator.userAgent``); else Chromium keeps its own there
    user_agent: str = field(default="", metadata={"scrapy": "USER_AGENT"})
    cookies: str = _SCAN("", "", "cookies on every request", parse=parse_cookies, valid="'a=b; c=d'")
    favicon: bool = _SCAN(True, "", "hash each page's favicon (Shodan's favicon hash; one request per favicon "
                          "URL and crawl, from Chromium's cache when it can)")
    soft404_probes: int = _SCAN(1, "[0, 2]", "random paths rendered per origin to learn its own not-found answer "
                                "(pages with that template become E3); 0 = off")
    soft404_min_urls: int = param(20, "[1, 100000000]", "soft-404 probes only for origins with at least this many "
                                  "URLs in the list (one probe then costs at most 1/20 of the origin's rendering)")
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
        """Every ``WEBSIM_*`` setting and ``WEBSIM_PARAMS`` key checked (the core objects' too, so a
        bad value stops the crawl before it starts), and this object read."""
        check_names(settings)
        values = read_fields(cls, settings)
        values["user_agent"], values["headers"] = scrapy_identity(settings)
        page_timeout, http_timeout = values["page_timeout"], values["http_timeout"]
        if page_timeout < http_timeout:
            raise ConfigError(
                f"WEBSIM_PAGE_TIMEOUT ({page_timeout:g} s) must be >= WEBSIM_HTTP_TIMEOUT "
                f"({http_timeout:g} s): the page budget includes the HTTP response"
            )
        values["redis_lease_timeout"] = _lease_timeout(settings, values["redis_lease_timeout"], page_timeout)
        read_fields(PredictSettings, settings)
        for _key, obj, _group in PARAM_OBJECTS:
            if issubclass(obj, Params):
                build_params(settings, obj)
        return cls(**values)


@dataclass(frozen=True)
class WebsimParams:
    """Every core parameter object of a run, built from the settings once: what the feature
    extraction (``features``), the labelling (``assign``), the site templates (``template``), the
    clustering (``decision``, ``cluster``) and the rows (the thresholds a ``match_reason`` names)
    take, beside the run's :class:`WebsimConfig`."""

    config: WebsimConfig
    features: "FeatureParams"
    decision: DecisionParams
    cluster: ClusterParams
    assign: "AssignParams"
    template: TemplateParams

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimParams":
        """The crawler's parameters: built from its settings once, then shared by its components."""
        params = _PARAMS_BY_CRAWLER.get(crawler)
        if params is None:
            params = _PARAMS_BY_CRAWLER[crawler] = cls.from_settings(crawler.settings,
                                                                     WebsimConfig.from_crawler(crawler))
        return params

    @classmethod
    def from_settings(cls, settings: Any, config: Optional[WebsimConfig] = None) -> "WebsimParams":
        """The parameters of ``settings`` (``config``: their :class:`WebsimConfig`, read here if not
        given); a bad value raises :class:`ConfigError` naming it."""
        # start-up time: lxml and the page and match modules load when a run builds its parameters,
        # not for the commands that build none (websim urls, report, status)
        from scrapy_websim.core.features import FeatureParams  # noqa: PLC0415  # start-up time
        from scrapy_websim.core.match.assign import AssignParams  # noqa: PLC0415  # start-up time
        from scrapy_websim.core.match.cluster import phash_distance_for  # noqa: PLC0415  # start-up time

        config = config if config is not None else WebsimConfig.from_settings(settings)
        rules = build_params(settings, RuleParams)
        extend, replace_lists = rule_keywords(settings)
        try:
            rules = rules.with_keywords(replace_lists=replace_lists, extend_lists=extend)
        except ValueError as exc:
            raise ConfigError(f"WEBSIM_RULE_KEYWORDS / WEBSIM_RULE_KEYWORDS_REPLACE: {exc}") from None
        decision = build_params(settings, DecisionParams)
        features = FeatureParams(
            text=build_params(settings, TextParams),
            dom=build_params(settings, DomParams),
            lcs=build_params(settings, LcsParams),
            pagetype=build_params(settings, PageTypeParams),
            rules=rules,
            urls=build_params(settings, UrlParams),
        )
        # Candidates must cover every pair the decision can accept: the text pre-filter at least as
        # wide as rule 1's text thresholds allow (the MinHash one, --text-threshold, read on the
        # SimHash scale: a lower threshold widens it), the visual candidates exactly rule 2's distance.
        loosest = min(decision.rule1_text, decision.rule1_jaccard)
        text_distance = int((1.0 - loosest) * decision.text_max_distance + 1e-9)
        visual_distance = (-1 if decision.rule2_visual > 1.0 else
                           phash_distance_for(decision.rule2_visual, decision.visual_max_distance))
        cluster_params = build_params(
            settings, ClusterParams,
            same_host_only=config.same_host_only,
            visual_distance=min(11, visual_distance),
            min_html_len=rules.thin_html_bytes, min_text_len=rules.thin_text_chars,  # thin or clustered
        )
        if cluster_params.simhash_distance < min(11, text_distance):
            cluster_params = dataclasses.replace(cluster_params, simhash_distance=min(11, text_distance))
        return cls(
            config=config, features=features, decision=decision, cluster=cluster_params,
            assign=AssignParams(rules=rules, urls=features.urls),
            template=build_params(settings, TemplateParams),
        )


def _lease_timeout(settings: Any, value: float, page_timeout: float) -> float:
    """``WEBSIM_REDIS_LEASE_TIMEOUT``: a live worker renews its leases every quarter of it, so it only
    needs to outlast a stalled heartbeat; still at least one page budget (the default grows with it)."""
    if _get(settings, "WEBSIM_REDIS_LEASE_TIMEOUT", None) is None:
        return max(value, page_timeout)
    if value < page_timeout:
        raise ConfigError(f"WEBSIM_REDIS_LEASE_TIMEOUT ({value:g} s) must be >= WEBSIM_PAGE_TIMEOUT "
                          f"({page_timeout:g} s)")
    return value


def scrapy_identity(settings: Any) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """``(user_agent, headers)`` the browser takes from Scrapy's ``USER_AGENT`` and
    ``DEFAULT_REQUEST_HEADERS``: what the user set there, Scrapy's own defaults left out (Scrapy's
    User-Agent already goes on every request of the page through scrapy-playwright; Scrapy's
    ``Accept`` is a document's, and Chromium sends each sub-request its own)."""
    from scrapy.settings import default_settings  # noqa: PLC0415  # start-up time: websim urls loads no Scrapy

    agent = _get(settings, "USER_AGENT", "") or ""
    agent = "" if agent == default_settings.USER_AGENT else _one_line_str("USER_AGENT", agent)
    raw = _get(settings, "DEFAULT_REQUEST_HEADERS", None) or {}
    if hasattr(raw, "copy_to_dict"):
        raw = raw.copy_to_dict()
    if hasattr(raw, "items"):
        raw = {_text(k): _text(v) for k, v in raw.items()}
    scrapy_default = {(k.lower(), v) for k, v in default_settings.DEFAULT_REQUEST_HEADERS.items()}
    pairs = parse_headers("DEFAULT_REQUEST_HEADERS", raw)
    return agent, tuple((k, v) for k, v in pairs if (k.lower(), v) not in scrapy_default)


def _text(value: Any) -> Any:
    return value.decode("latin-1") if isinstance(value, bytes) else value


_PREDICT = "Duplicate prediction"
_PRED = _in(_PREDICT)


@dataclass(frozen=True)
class PredictSettings:
    """The ``WEBSIM_PREDICT_*`` settings of the prediction spider middleware (field ``x`` with a
    settings group: setting ``WEBSIM_PREDICT_X``; the others: ``WEBSIM_PARAMS`` key ``predict.x``)."""

    enabled: bool = _PRED(False, "", "predict for every request")
    threshold: float = _PRED(0.98, "[0, 1]", "drop requests at or above this probability")
    exploration: float = param(0.05, "[0, 1]", "share of would-be-dropped requests fetched anyway")
    warmup: int = param(300, "[0, 10000000]", "pages learned from before anything is dropped")
    seed: int = param(0, f"[{-2**63}, {2**63 - 1}]", "exploration is deterministic per (seed, URL)", valid="64-bit")
    jaccard: float = _like(PredictorParams, "jaccard_threshold")
    #: below the predictor's own: a hypothesis with no counter-example passes sooner
    #: (docs/prediction.md, "Settings")
    confidence: float = _like(PredictorParams, "confidence", default=0.8)

    @classmethod
    def from_settings(cls, settings: Any) -> "PredictSettings":
        """Read and validate the WEBSIM_PREDICT_* settings and predict.* keys (errors name them and the range)."""
        check_names(settings)
        return cls(**read_fields(cls, settings))


# --------------------------------------------------------------------------------------------
# Where each field is reached: a setting, or a key of WEBSIM_PARAMS.
# --------------------------------------------------------------------------------------------

#: The objects whose fields are settings or ``WEBSIM_PARAMS`` keys: (key, class, settings group of the
#: settings a core field declares). A key of ``WEBSIM_PARAMS`` is ``"{key}.{field}"``.
PARAM_OBJECTS: Tuple[Tuple[str, Type[Any], str], ...] = (
    ("crawl", WebsimConfig, ""),
    ("predict", PredictSettings, ""),
    ("text", TextParams, "Features"),
    ("pagetype", PageTypeParams, "Features"),
    ("dom", DomParams, "Features"),
    ("lcs", LcsParams, "Features"),
    ("decision", DecisionParams, _DECIDE),
    ("cluster", ClusterParams, _DECIDE),
    ("template", TemplateParams, _DECIDE),
    ("rules", RuleParams, "Rules"),
    ("urls", UrlParams, "Rules"),
)
_KEY_OF: Dict[Any, str] = {cls: key for key, cls, _group in PARAM_OBJECTS}
_PREFIX = {WebsimConfig: "WEBSIM_", PredictSettings: "WEBSIM_PREDICT_"}


def setting_name(cls: Any, f: "dataclasses.Field[Any]") -> str:
    """The setting of field ``f`` of ``cls``; ``""`` when it has none."""
    if f.metadata.get("setting"):
        return str(f.metadata["setting"])
    if f.metadata.get("group"):
        return _PREFIX[cls] + f.name.upper()
    return ""


def _is_key(cls: Any, f: "dataclasses.Field[Any]") -> bool:
    """Field ``f`` is a ``WEBSIM_PARAMS`` key: declared with ``param``, no setting, nothing sets it."""
    return "range" in f.metadata and not setting_name(cls, f) and not f.metadata.get("set_by")


def _key_label(key: str) -> str:
    return f"WEBSIM_PARAMS[{key!r}]"


#: ``{"text.max_link_density": field}``: every ``WEBSIM_PARAMS`` key, derived from the declarations.
PARAM_KEYS: Dict[str, "dataclasses.Field[Any]"] = {
    f"{key}.{f.name}": f for key, cls, _group in PARAM_OBJECTS for f in dataclasses.fields(cls) if _is_key(cls, f)}
#: The other fields of those objects, by key: why each one is not a key.
_NOT_KEYS: Dict[str, str] = {
    f"{key}.{f.name}": (f"is the setting {setting_name(cls, f)}: set that instead" if setting_name(cls, f) else
                        f"cannot be set: it follows {f.metadata['set_by']}")
    for key, cls, _group in PARAM_OBJECTS for f in dataclasses.fields(cls)
    if "range" in f.metadata and not _is_key(cls, f)}


def _closest(word: str, names: Any) -> str:
    """The valid name closest to ``word`` (the same field of another object first), or ``""``."""
    names = list(names)
    same = [n for n in names if "." in word and n.split(".", 1)[-1] == word.split(".", 1)[-1]]
    close = same[:1] or difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return close[0] if close else ""


def params_of(settings: Any) -> Dict[str, Any]:
    """``WEBSIM_PARAMS`` (a dict, or its JSON text as given with ``-s``) as ``{key: value}``, every key
    checked: an unknown one is an error naming the closest valid key."""
    raw = _get(settings, "WEBSIM_PARAMS", None)
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    if hasattr(raw, "copy_to_dict"):
        raw = raw.copy_to_dict()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"WEBSIM_PARAMS must be a dict like {{'cluster.passes': 2}} (or its JSON text), "
                          f"got {_get(settings, 'WEBSIM_PARAMS', None)!r}")
    for key in raw:
        if key in PARAM_KEYS:
            continue
        if key in _NOT_KEYS:
            raise ConfigError(f"WEBSIM_PARAMS key {key!r} {_NOT_KEYS[key]}")
        close = _closest(str(key), PARAM_KEYS)
        hint = f"; did you mean {close!r}?" if close else " (docs/settings.md lists the keys)"
        raise ConfigError(f"unknown WEBSIM_PARAMS key {key!r}{hint}")
    return dict(raw)


def read_fields(cls: Any, settings: Any) -> Dict[str, Any]:
    """``{field: value}`` of every setting field and ``WEBSIM_PARAMS`` key of config class ``cls``,
    parsed and range-checked as declared (errors name the setting or the key)."""
    key, params, values = _KEY_OF[cls], params_of(settings), {}
    for f in dataclasses.fields(cls):
        name = setting_name(cls, f)
        if name:
            values[f.name] = _read(name, _get(settings, name, None), f)
        elif _is_key(cls, f):
            values[f.name] = _read(_key_label(f"{key}.{f.name}"), params.get(f"{key}.{f.name}"), f)
    return values


def build_params(settings: Any, cls: Any, **fixed: Any) -> Any:
    """A core parameter object from settings: each field from its setting (``param(...,
    setting=...)``) or its ``WEBSIM_PARAMS`` key, unless ``fixed`` gives it; unset ones keep the
    declared default. Values are parsed as the default's type, then the object's own ``validate()``
    runs; its :class:`FieldError` is re-raised naming the setting or the key."""
    key, params = _KEY_OF[cls], params_of(settings)
    kwargs: Dict[str, Any] = dict(fixed)
    labels: Dict[str, str] = {}
    for f in dataclasses.fields(cls):
        name = setting_name(cls, f)
        if f.name in fixed or not (name or _is_key(cls, f)):
            continue
        label = name or _key_label(f"{key}.{f.name}")
        value = _get(settings, name, None) if name else params.get(f"{key}.{f.name}")
        if value is not None:
            kwargs[f.name], labels[f.name] = _coerce(label, value, f), label
    try:
        return cls(**kwargs).validate()
    except FieldError as exc:
        raise ConfigError(f"{labels.get(exc.field, exc.field)} {exc.problem}") from None


def param_default(key: str) -> Any:
    """The declared default of ``WEBSIM_PARAMS`` key ``key``."""
    return PARAM_KEYS[key].default


# --------------------------------------------------------------------------------------------
# The settings table: every WEBSIM_* setting once (docs/settings.md is generated from it).
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One ``WEBSIM_*`` setting or ``WEBSIM_PARAMS`` key: table type, default, valid range and a
    one-line description."""

    name: str
    type: str  #: as in the table: "int", "float s" (seconds), "int ms", "str", "bool", "list", "dict"
    default: Any
    range: str  #: valid values, "" = any value of the type
    doc: str
    group: str
    param: str = ""  #: "object.field" of the core parameter object a setting sets
    shown: str = ""  #: the table's default cell where it is not the plain default

    def readme_default(self) -> str:
        if self.shown:
            return self.shown
        value = self.default
        if isinstance(value, str):
            return f'`"{value}"`'
        if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
            return f"`{' '.join(value[:3])}{' …' if len(value) > 3 else ''}`"
        if isinstance(value, bool) or value in ((), {}):
            return f"`{'[]' if value == () else value}`"
        return f"`{_fmt(value) if isinstance(value, float) else value}`"


_PARAMS_GROUP = "Algorithm parameters"
#: The groups of the settings table, in its order.
GROUPS = ("Rendering and crawl", "Scanning many hosts", "Report", _DECIDE, "Features", "Rules",
          "Many machines (distributed mode)", _PREDICT, _PARAMS_GROUP)

#: The settings that are no field: rule_keywords() reads two into RuleParams.with_keywords, and
#: WEBSIM_PARAMS holds the keys.
_OTHERS = tuple(Setting(name, "dict", {}, valid, doc, group) for name, valid, doc, group in (
    ("WEBSIM_RULE_KEYWORDS", "rule id -> words", "words added to a rule's list", "Rules"),
    ("WEBSIM_RULE_KEYWORDS_REPLACE", "rule id -> words", "lists that replace a rule's list", "Rules"),
    ("WEBSIM_PARAMS", "key -> value", "the algorithm's parameters, by key (below)", _PARAMS_GROUP)))


def _row(name: str, f: "dataclasses.Field[Any]", group: str, param_: str = "") -> Setting:
    """The table row of setting or key ``name``, declared by field ``f``."""
    meta, value = f.metadata, f.default
    kind = ("bool" if isinstance(value, bool) else "int" if isinstance(value, int) else
            "float" if isinstance(value, float) else "list" if isinstance(value, tuple) else "str")
    kind = meta.get("type") or (f"{kind} {meta['unit']}" if meta.get("unit") else kind)
    valid = meta.get("valid") or ", ".join(meta["choices"]) or re.sub(r"^(int|number) ", "", meta["range"])
    return Setting(name, kind, value, valid, meta["doc"], group, param_, meta.get("shown", ""))


def _rows() -> Iterator[Setting]:
    for key, cls, group in PARAM_OBJECTS:
        for f in dataclasses.fields(cls):
            name = setting_name(cls, f)
            if name:
                yield _row(name, f, f.metadata.get("group") or group, "" if cls in _PREFIX else f"{key}.{f.name}")
    yield from _OTHERS


SETTINGS: Tuple[Setting, ...] = tuple(sorted(_rows(), key=lambda s: GROUPS.index(s.group)))
SETTINGS_BY_NAME: Dict[str, Setting] = {s.name: s for s in SETTINGS}
#: Every ``WEBSIM_PARAMS`` key as a table row (docs/settings.md lists them).
PARAMS: Tuple[Setting, ...] = tuple(_row(key, f, key.split(".")[0]) for key, f in PARAM_KEYS.items())

def params_markdown() -> str:
    """The docs' table of the ``WEBSIM_PARAMS`` keys (docs/settings.md; scripts/settings_table.py writes it)."""
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for p in PARAMS:
        meaning = f"{p.doc}, {p.range}" if p.range else p.doc
        lines.append(f"| `{p.name}` | {p.type} | {p.readme_default()} | {meaning} |")
    return "\n".join(lines)


def default(name: str) -> Any:
    """The table's default of ``name``."""
    return SETTINGS_BY_NAME[name].default


def check_names(settings: Any) -> None:
    """An unknown ``WEBSIM_*`` name (a typo) is an error naming it and the closest valid one."""
    names = settings.keys() if hasattr(settings, "keys") else iter(settings)
    for name in sorted(str(n) for n in names):
        if not name.startswith("WEBSIM_") or name in SETTINGS_BY_NAME:
            continue
        close = difflib.get_close_matches(name, list(SETTINGS_BY_NAME), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else " (docs/settings.md lists them all)"
        raise ConfigError(f"unknown setting {name}{hint}")


def rule_keywords(settings: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(WEBSIM_RULE_KEYWORDS, WEBSIM_RULE_KEYWORDS_REPLACE)``, each checked to be {rule: [words]}."""
    extend = _get(settings, "WEBSIM_RULE_KEYWORDS", None) or {}
    replace_lists = _get(settings, "WEBSIM_RULE_KEYWORDS_REPLACE", None) or {}
    for name, value in (("WEBSIM_RULE_KEYWORDS", extend), ("WEBSIM_RULE_KEYWORDS_REPLACE", replace_lists)):
        if not isinstance(value, dict) or not all(isinstance(v, (list, tuple)) for v in value.values()):
            raise ConfigError(f"{name} must be a dict like {{'L1': ['sign in'], 'E3': [...]}}, got {value!r}")
    return extend, replace_lists
