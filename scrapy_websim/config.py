"""Every ``WEBSIM_*`` setting: its default, its parsing and its validation, in one place.

``WebsimConfig.from_settings(settings)`` is called once per crawler; every component reads the
same object. A bad value raises :class:`ConfigError` naming the setting and its valid range.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple


class ConfigError(ValueError):
    """A ``WEBSIM_*`` setting has a value outside its valid range."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _get(settings: Any, name: str, default: Any) -> Any:
    if hasattr(settings, "get"):
        value = settings.get(name, default)
    else:  # pragma: no cover
        value = getattr(settings, name, default)
    return default if value is None else value


def get_bool(settings: Any, name: str, default: bool) -> bool:
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
    default: float,
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


def get_str(settings: Any, name: str, default: str, choices: Optional[Tuple[str, ...]] = None) -> str:
    value = _get(settings, name, default)
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    if choices is not None and value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def parse_viewport(name: str, value: Any) -> Tuple[int, int]:
    """``"1280x800"`` or ``(1280, 800)`` -> ``(1280, 800)``; each side in [200, 4096]."""
    try:
        if isinstance(value, str):
            w, h = value.lower().split("x")
        else:
            w, h = value
        width, height = int(w), int(h)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must look like '1280x800' (WIDTHxHEIGHT), got {value!r}") from None
    if not (200 <= width <= 4096 and 200 <= height <= 4096):
        raise ConfigError(f"{name} sides must be in [200, 4096] pixels, got {value!r}")
    return width, height


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
    batch_size: int = 1000
    sim_threshold: float = 0.85
    screenshots_dir: str = ""
    features_file: str = ""
    progress_interval: float = 30.0
    same_host_only: bool = False
    follow_links: bool = False
    max_pages: int = 0
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
        viewport = parse_viewport("WEBSIM_VIEWPORT", _get(settings, "WEBSIM_VIEWPORT", "1280x800"))
        http_timeout = get_number(settings, "WEBSIM_HTTP_TIMEOUT", 10.0, 0.0, 600.0, lo_open=True)
        page_timeout = get_number(settings, "WEBSIM_PAGE_TIMEOUT", 20.0, 0.0, 600.0, lo_open=True)
        stable_timeout = get_number(settings, "WEBSIM_STABLE_TIMEOUT", 10.0, 0.0, 600.0)
        if page_timeout < http_timeout:
            raise ConfigError(
                f"WEBSIM_PAGE_TIMEOUT ({page_timeout:g} s) must be >= WEBSIM_HTTP_TIMEOUT "
                f"({http_timeout:g} s): the page budget includes the HTTP response"
            )
        screenshots_dir = get_str(settings, "WEBSIM_SCREENSHOTS_DIR", "")
        if screenshots_dir and os.path.exists(screenshots_dir) and not os.path.isdir(screenshots_dir):
            raise ConfigError(f"WEBSIM_SCREENSHOTS_DIR={screenshots_dir!r} exists and is not a directory")
        report_dir = get_str(settings, "WEBSIM_REPORT_DIR", "")
        thumbnails_dir = get_str(settings, "WEBSIM_THUMBNAILS_DIR", "")
        for name, value in (("WEBSIM_REPORT_DIR", report_dir), ("WEBSIM_THUMBNAILS_DIR", thumbnails_dir)):
            if value and os.path.exists(value) and not os.path.isdir(value):
                raise ConfigError(f"{name}={value!r} exists and is not a directory")
        return cls(
            browser_executable=get_str(settings, "WEBSIM_BROWSER_EXECUTABLE", ""),
            viewport=viewport,
            http_timeout=http_timeout,
            page_timeout=page_timeout,
            stable_timeout=stable_timeout,
            network_idle_ms=get_number(settings, "WEBSIM_NETWORK_IDLE_MS", 500, 0, 60000, integer=True),
            dom_stable_checks=get_number(settings, "WEBSIM_DOM_STABLE_CHECKS", 3, 1, 100, integer=True),
            dom_check_interval_ms=get_number(settings, "WEBSIM_DOM_CHECK_INTERVAL_MS", 100, 10, 10000, integer=True),
            batch_size=get_number(settings, "WEBSIM_BATCH_SIZE", 1000, 1, 10_000_000, integer=True),
            sim_threshold=get_number(settings, "WEBSIM_SIM_THRESHOLD", 0.85, 0.0, 1.0),
            screenshots_dir=screenshots_dir,
            features_file=get_str(settings, "WEBSIM_FEATURES_FILE", ""),
            progress_interval=get_number(settings, "WEBSIM_PROGRESS_INTERVAL", 30.0, 0.0, 86400.0),
            same_host_only=get_bool(settings, "WEBSIM_SAME_HOST_ONLY", False),
            max_pages=get_number(settings, "WEBSIM_MAX_PAGES", 0, 0, 100_000_000, integer=True),
            report_dir=report_dir,
            thumbnails_dir=thumbnails_dir,
            thumbnail_width=get_number(settings, "WEBSIM_THUMBNAIL_WIDTH", 320, 32, 1280, integer=True),
            thumbnail_format=get_str(settings, "WEBSIM_THUMBNAIL_FORMAT", "webp", choices=("webp", "jpeg")),
            thumbnail_quality=get_number(settings, "WEBSIM_THUMBNAIL_QUALITY", 60, 1, 100, integer=True),
        )


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
