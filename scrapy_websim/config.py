"""Every ``WEBSIM_*`` setting: its default, its parsing and its validation, in one place.

``WebsimConfig.from_settings(settings)`` is called once per crawler; every component reads the
same object. A bad value raises :class:`ConfigError` naming the setting and its valid range.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit


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


PROXY_SCHEMES = ("http", "https", "socks5")
_TOKEN_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP header name / cookie name (RFC 9110 token)


def _one_line(name: str, value: str) -> str:
    if any(c in value for c in "\r\n\0"):
        raise ConfigError(f"{name} must be one line (no CR, LF or NUL), got {value!r}")
    return value.strip()


def parse_proxy(name: str, value: Any) -> str:
    """``scheme://[user:password@]host:port`` with scheme http, https or socks5; ``""`` = no proxy."""
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string like 'http://127.0.0.1:8080', got {value!r}")
    value = _one_line(name, value)
    if not value:
        return ""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a proxy URL ({exc})") from None
    if parts.scheme.lower() not in PROXY_SCHEMES:
        raise ConfigError(f"{name}={value!r}: the scheme must be one of {', '.join(PROXY_SCHEMES)} "
                          f"(e.g. 'http://127.0.0.1:8080', 'socks5://127.0.0.1:1080')")
    if not parts.hostname or port is None:
        raise ConfigError(f"{name}={value!r} needs a host and a port, e.g. 'http://127.0.0.1:8080'")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError(f"{name}={value!r}: a proxy URL has no path, query or fragment")
    if parts.scheme.lower() == "socks5" and (parts.username or parts.password):
        raise ConfigError(f"{name}={value!r}: Chromium cannot authenticate to a SOCKS5 proxy; use one "
                          f"without user:password (e.g. an ssh -D tunnel) or an HTTP proxy")
    return value


def proxy_parts(proxy: str) -> Dict[str, str]:
    """Playwright's ``proxy`` launch option for a proxy URL: server, and username/password if given."""
    parts = urlsplit(proxy)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    option = {"server": f"{parts.scheme.lower()}://{host}:{parts.port}"}
    if parts.username:
        option["username"] = unquote(parts.username)
        option["password"] = unquote(parts.password or "")
    return option


def parse_header_line(name: str, line: str) -> Tuple[str, str]:
    """``"Name: value"`` -> ``("Name", "value")``."""
    if not isinstance(line, str) or ":" not in line:
        raise ConfigError(f"{name}: {line!r} is not a header; expected 'Name: value'")
    key, value = line.split(":", 1)
    return _check_header(name, key.strip(), value.strip())


def _check_header(name: str, key: Any, value: Any) -> Tuple[str, str]:
    if not isinstance(key, str) or not _TOKEN_RE.match(key):
        raise ConfigError(f"{name}: {key!r} is not a valid header name")
    if not isinstance(value, str):
        raise ConfigError(f"{name}: the value of header {key!r} must be a string, got {value!r}")
    return key, _one_line(f"{name} {key!r}", value)


def parse_headers(name: str, value: Any) -> Tuple[Tuple[str, str], ...]:
    """A dict ``{"Name": "value"}``, a list of ``"Name: value"`` lines, or a JSON object string."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return ()
        try:
            value = json.loads(text) if text.startswith(("{", "[")) else [text]
        except ValueError:
            raise ConfigError(f"{name} must be a dict of header names to values, got {value!r}") from None
    if hasattr(value, "items"):
        pairs = [_check_header(name, k, v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        pairs = [parse_header_line(name, line) for line in value]
    else:
        raise ConfigError(f"{name} must be a dict of header names to values, got {value!r}")
    seen: Dict[str, Tuple[str, str]] = {}
    for key, val in pairs:  # the last value of a name wins, as on a command line
        seen[key.lower()] = (key, val)
    return tuple(seen.values())


def parse_cookies(name: str, value: Any) -> str:
    """``"a=b; c=d"`` (a ``Cookie`` header value), checked and normalised; ``""`` = none."""
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string like 'a=b; c=d', got {value!r}")
    value = _one_line(name, value)
    pairs = []
    for part in value.split(";"):
        part = part.strip()
        if not part:
            continue
        key, eq, val = part.partition("=")
        if not eq or not _TOKEN_RE.match(key.strip()):
            raise ConfigError(f"{name}: {part!r} is not a cookie; expected 'name=value' pairs separated by ';'")
        pairs.append(f"{key.strip()}={val.strip()}")
    return "; ".join(pairs)


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
            redis_url=get_str(settings, "WEBSIM_REDIS_URL", ""),
            redis_job=get_str(settings, "WEBSIM_REDIS_JOB", "websim"),
            redis_lease_timeout=_lease_timeout(settings, page_timeout),
            strict_tls=get_bool(settings, "WEBSIM_STRICT_TLS", False),
            proxy=parse_proxy("WEBSIM_PROXY", _get(settings, "WEBSIM_PROXY", "")),
            headers=parse_headers("WEBSIM_HEADERS", _get(settings, "WEBSIM_HEADERS", {})),
            cookies=parse_cookies("WEBSIM_COOKIES", _get(settings, "WEBSIM_COOKIES", "")),
            user_agent=_one_line("WEBSIM_USER_AGENT", get_str(settings, "WEBSIM_USER_AGENT", "")),
            report_dir=report_dir,
            thumbnails_dir=thumbnails_dir,
            thumbnail_width=get_number(settings, "WEBSIM_THUMBNAIL_WIDTH", 320, 32, 1280, integer=True),
            thumbnail_format=get_str(settings, "WEBSIM_THUMBNAIL_FORMAT", "webp", choices=("webp", "jpeg")),
            thumbnail_quality=get_number(settings, "WEBSIM_THUMBNAIL_QUALITY", 60, 1, 100, integer=True),
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
