"""Parsers of the structured ``WEBSIM_*`` values (viewport, proxy, headers, cookies, networks).

Each takes the setting's name, for errors that name it, and raises :class:`ConfigError`.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any, Dict, Tuple, Union
from urllib.parse import unquote, urlsplit


class ConfigError(ValueError):
    """A ``WEBSIM_*`` setting has a value outside its valid range (or an unknown name)."""


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


Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]


def parse_networks(name: str, value: Any) -> Tuple[Network, ...]:
    """``"10.0.0.0/8, 169.254.0.0/16"`` or a list of CIDRs (an address alone is its /32 or /128)
    -> networks; anything else, a bad entry naming itself, raises :class:`ConfigError`."""
    if value in (None, "", [], ()):
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)):
        raise ConfigError(f"{name} must be a list of CIDR networks like ['169.254.0.0/16'], got {value!r}")
    networks = []
    for item in items:
        if isinstance(item, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
            networks.append(item)
            continue
        if not isinstance(item, str):
            raise ConfigError(f"{name}: {item!r} is not a CIDR network (like 10.0.0.0/8 or fd00::/8)")
        text = item.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ConfigError(f"{name}: {text!r} is not a CIDR network (like 10.0.0.0/8 or fd00::/8)") from None
    return tuple(networks)
