"""Reading the URL list a user hands in (``-l`` / ``-a urls=``), exactly once per entry.

Every entry becomes an :class:`Entry` with its input position as id (from 1). An entry that is
not a usable URL keeps its id and carries an ``error``: it becomes a record, never a crash and
never a silent drop.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional
from urllib.parse import urlsplit, urlunsplit

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_HOST_LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")


class UrlListError(ValueError):
    """The URL list itself cannot be read (missing file, not text)."""


@dataclass(frozen=True)
class Entry:
    id: int
    raw: str
    url: str  # the URL to fetch ("" when error)
    error: str = ""


def _valid_host(host: str) -> bool:
    if not host:
        return False
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
            return True
        except ValueError:
            return False
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", host):
        return False  # 999.1.1.1 and friends
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    labels = ascii_host.rstrip(".").split(".")
    return all(_HOST_LABEL_RE.match(label) for label in labels)


def check_url(raw: str) -> tuple:
    """``(url, error)``: the URL to fetch (``http://`` added when the scheme is missing), or an error."""
    text = raw.strip()
    if not text:
        return "", "empty entry"
    if any(c.isspace() for c in text):
        return "", "not a URL (contains white space)"
    if not _SCHEME_RE.match(text):
        if text.startswith("//"):
            text = "http:" + text
        elif ":" in text.split("/")[0] and not re.match(r"^[^:/]+:\d+($|/)", text):
            scheme = text.split(":", 1)[0].lower()
            return "", f"unsupported scheme {scheme!r} (only http and https are fetched)"
        else:
            text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port  # raises on a bad port
    except ValueError as exc:
        return "", f"not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "", f"unsupported scheme {parts.scheme.lower()!r} (only http and https are fetched)"
    host = parts.hostname or ""
    if "[" in parts.netloc:
        host = "[" + host + "]"
    if not _valid_host(host):
        return "", f"not a URL (no valid host in {raw.strip()!r})"
    if port == 0:
        return "", "not a URL (port 0)"
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc, path, parts.query, parts.fragment)), ""


def split_entries(lines: Iterable[str]) -> Iterator[str]:
    """Yield the entries of a URL file: blank lines and ``#`` comment lines skipped."""
    for line in lines:
        text = line.strip().lstrip("\ufeff")
        if not text or text.startswith("#"):
            continue
        # "http://x/ # note": a comment after white space; a '#' inside a URL is a fragment
        text = re.split(r"\s+#", text, maxsplit=1)[0].strip()
        if text:
            yield text


def read_entries(value: str, base_dir: Optional[str] = None) -> List[Entry]:
    """Parse ``-l``/``urls``: a path to a text file (``.txt``, or any existing file), else a comma list."""
    if not isinstance(value, str) or not value.strip():
        raise UrlListError("the URL list is empty: give a .txt file (one URL per line) or comma-separated URLs")
    value = value.strip()
    path = value if os.path.isabs(value) or base_dir is None else os.path.join(base_dir, value)
    if value.lower().endswith(".txt") or (os.path.isfile(path) and "," not in value):
        if not os.path.isfile(path):
            raise UrlListError(f"URL list file not found: {value!r}")
        try:
            with open(path, encoding="utf-8-sig") as fh:
                raws = list(split_entries(fh))
        except UnicodeDecodeError:
            raise UrlListError(f"URL list file {value!r} is not UTF-8 text") from None
    else:
        raws = [part.strip() for part in value.split(",") if part.strip()]
    entries = []
    for number, raw in enumerate(raws, start=1):
        url, error = check_url(raw)
        entries.append(Entry(id=number, raw=raw, url=url, error=error))
    return entries
