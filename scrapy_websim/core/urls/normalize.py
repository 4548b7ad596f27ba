"""URL normalisation for U1 and the ``normalized_url`` output field.

:func:`normalize_url` is w3lib's ``canonicalize_url`` (percent-encoding, IDNA host, sorted query,
no fragment, resolved dot segments) followed by what makes two spellings of one page equal:

* scheme and host lower-cased, ``www.`` kept (``www.example.com`` and ``example.com`` may be
  different sites), default ports (``:80`` for http, ``:443`` for https) dropped;
* tracking parameters dropped: the unambiguous part of courlan's tracker list (prefixes
  ``utm_``, ``mc_``, ``pk_``, ``mtm_``, ... and click ids ``fbclid``, ``gclid``, ``msclkid``, ...)
  plus :attr:`UrlParams.tracking_params`. Every other query parameter is kept, so ``/view?id=1``
  and ``/view?id=2`` stay different. courlan's broad pattern also drops ``keyword``, ``source``,
  ``ref``, ``cid``, ``uid``, ``session``..., which select content on many sites
  (``/search?keyword=x``, ``/list?cid=3``); it is off by default (``use_courlan_trackers``);
* a last path segment in :attr:`UrlParams.index_files` (``index.html``, ``index.htm``,
  ``index.php``, ...) dropped, so ``/docs/index.html`` equals ``/docs/``;
* trailing-slash differences removed (``/docs/`` equals ``/docs``; the root stays ``/``).

Pure: no Scrapy import; deterministic; never raises on junk (returns the input stripped).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional, Tuple
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from ..params.urls import UrlParams

try:  # courlan's broad tracker pattern (AdGuard / ClearURLs / Firefox query stripping)
    from courlan.clean import TRACKERS_RE

    _COURLAN_TRACKERS: Optional["re.Pattern[str]"] = TRACKERS_RE
except ImportError:  # pragma: no cover - courlan is a declared dependency
    _COURLAN_TRACKERS = None

#: The unambiguous part of courlan's pattern: names that only ever carry tracking data.
_TRACKER_PREFIXES = re.compile(
    r"^(?:(?:dc|fb|g|tw|y|ysc|msc|ms|tt|li_fat_|wbra|gbra)clid|(?:click|gbra|igsh|wbra|msclk)id)$|"
    r"^(?:ads?|mc|ga|gs|itm|mkt|ml|mtm|oly|pk|utm|vero|hsa|_hs)_"
)

__all__ = ["normalize_url", "url_origin", "is_tracking_param", "link_target"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def is_tracking_param(name: str, params: UrlParams = UrlParams()) -> bool:
    """True if the query parameter ``name`` only tracks the visitor and never changes content."""
    low = name.lower()
    if low in _lowered(params.keep_params):
        return False
    if low in _lowered(params.tracking_params) or _TRACKER_PREFIXES.search(low):
        return True
    return bool(params.use_courlan_trackers and _COURLAN_TRACKERS and _COURLAN_TRACKERS.search(low))


@lru_cache(maxsize=64)
def _lowered(names: Tuple[str, ...]) -> frozenset:
    return frozenset(n.lower() for n in names)


def _host_port(parts) -> Tuple[str, Optional[int]]:
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port
    except ValueError:  # non-numeric port: keep the raw netloc below
        port = None
    if port is not None and _DEFAULT_PORTS.get(parts.scheme.lower()) == port:
        port = None
    return host, port


def _netloc(parts) -> str:
    host, port = _host_port(parts)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    userinfo = ""
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "") + "@"
    return f"{userinfo}{host}" + (f":{port}" if port is not None else "")


def link_target(url: str) -> str:
    """The page a link leads to: ``url`` without its fragment, unless the fragment is a route of
    a client-rendered app (``#/settings``, ``#!/users/3``, ``#!users``): such an app sends one
    shell for every route and renders each route's page in the browser, so the fragment names
    the page. Any other fragment is an anchor inside the page (``#usage``, ``#section-2``)."""
    base, sep, fragment = url.partition("#")
    return url if sep and fragment.startswith(("/", "!")) else base


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` with the default port dropped (``""`` for junk)."""
    try:
        parts = urlsplit(canonicalize_url(url.strip()))
        if not parts.scheme or not parts.netloc:
            return ""
        host, port = _host_port(parts)
    except ValueError:
        return ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def normalize_url(url: str, params: UrlParams = UrlParams()) -> str:
    """The normalised form of ``url`` (see module docstring); equal strings mean "same page"."""
    raw = (url or "").strip()
    if not raw:
        return ""
    try:
        parts = urlsplit(canonicalize_url(raw))
        if not parts.scheme or not parts.netloc:
            return raw
        netloc = _netloc(parts)
    except ValueError:
        return raw
    path = parts.path or "/"
    segments = path.split("/")
    if segments[-1].lower() in _lowered(params.index_files):
        segments[-1] = ""
        path = "/".join(segments)
    if params.strip_trailing_slash and len(path) > 1:
        path = path.rstrip("/") or "/"
    query = ""
    if parts.query:
        # Filter the pieces canonicalize_url already sorted and encoded, so its encoding stands.
        kept = [
            piece
            for piece in parts.query.split("&")
            if piece and not is_tracking_param(unquote_plus(piece.split("=", 1)[0]), params)
        ]
        query = "&".join(kept)
    return urlunsplit((parts.scheme.lower(), netloc, path, query, ""))
