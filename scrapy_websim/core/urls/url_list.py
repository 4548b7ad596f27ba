"""Reading the URL list a user hands in (``-l`` / ``-a urls=``), exactly once per entry.

Every entry becomes an :class:`Entry` with its input position as id (from 1). An entry that is
not a usable URL keeps its id and carries an ``error``: it becomes a record, never a crash and
never a silent drop.

Besides URLs, a list may hold what scanning tools produce (README "Scanning many hosts"):

* bare ``host`` and ``host:port`` lines, expanded with ``ports`` (``--ports 80,443,8080,8443``):
  one entry per candidate URL, consecutive ids, each with ``expanded_from`` = the line;
* httpx JSON lines (a ``{...}`` line: its ``url`` field);
* an nmap XML report (``-oX``): one entry per open http/https service;
* ``-`` reads the list from standard input.
"""

from __future__ import annotations

import atexit
import functools
import ipaddress
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import IO, Any, Iterable, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit, urlunsplit

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_HOST_LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")
#: White space (``str.isspace``'s characters: ``re`` matches ``\s`` with the same test).
_SPACE_RE = re.compile(r"\s")


class UrlListError(ValueError):
    """The URL list itself cannot be read (missing file, not text)."""


@dataclass(frozen=True)
class Entry:
    id: int
    raw: str
    url: str  # the URL to fetch ("" when error)
    error: str = ""
    expanded_from: str = ""  # the input line a candidate URL was made from ("" for a URL line)
    fallback_url: str = ""  # http:// URL tried when https:// fails at the TLS handshake (unknown ports)


@functools.lru_cache(maxsize=4096)  # the hosts of a list repeat: each is checked once
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
    if _SPACE_RE.search(text):
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
        if line.startswith(_NOT_UTF8):
            yield line
            continue
        text = line.strip().lstrip("\ufeff")
        if not text or text.startswith("#"):
            continue
        # "http://x/ # note": a comment after white space; a '#' inside a URL is a fragment
        if not text.startswith("{"):  # a JSON line's strings may hold " #"
            text = re.split(r"\s+#", text, maxsplit=1)[0].strip()
        if text:
            yield text


#: ``--ports`` entries whose scheme is known; any other port is tried with https first, then http
#: when the TLS handshake fails (as httpx does). ``http:PORT`` / ``https:PORT`` force a scheme.
HTTP_PORTS = frozenset({80, 8000, 8008, 8080, 8888})
HTTPS_PORTS = frozenset({443, 8443, 9443})
DEFAULT_PORTS = "80,443,8080,8443"

#: A bare host or host:port line (no scheme, no path): what asset lists and nmap greps hold.
_BARE_HOST_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^:/\s\[\]?#@]+)(?::(\d{1,5}))?$")
#: nmap service names that speak HTTP (``ssl/http`` is ``http`` with ``tunnel="ssl"``).
_NMAP_HTTP = ("http", "https", "http-alt", "http-proxy", "https-alt", "http-mgmt", "ssl/http", "ssl/https")
_JSON_SHOWN = 200


def parse_ports(text: str) -> Tuple[Tuple[str, int], ...]:
    """``"80,443,https:8444"`` -> ``(("", 80), ("", 443), ("https", 8444))``; raises :class:`UrlListError`."""
    ports = []
    for part in (text or "").split(","):
        part = part.strip().lower()
        if not part:
            continue
        scheme, _, number = part.rpartition(":")
        if scheme not in ("", "http", "https") or not number.isdigit() or not 1 <= int(number) <= 65535:
            raise UrlListError(
                f"--ports {text!r}: {part!r} is not a port (1-65535, optionally http:PORT or https:PORT)")
        if (scheme, int(number)) not in ports:
            ports.append((scheme, int(number)))
    if not ports:
        raise UrlListError(f"--ports {text!r}: no port given (e.g. --ports {DEFAULT_PORTS})")
    return tuple(ports)


def _candidate(host: str, scheme: str, port: int) -> Tuple[str, str]:
    """``(url, fallback_url)`` for one host and port."""
    if not scheme:
        scheme = "http" if port in HTTP_PORTS else "https"
        fallback = port not in HTTP_PORTS and port not in HTTPS_PORTS
    else:
        fallback = False
    default = 80 if scheme == "http" else 443
    netloc = host if port == default else f"{host}:{port}"
    url = f"{scheme}://{netloc}/"
    return url, (f"http://{host}:{port}/" if fallback else "")


def expand_host(raw: str, ports: Sequence[Tuple[str, int]]) -> Optional[List[Tuple[str, str]]]:
    """Candidate ``(url, fallback)`` pairs of a bare ``host`` / ``host:port`` line, None if not one."""
    match = _BARE_HOST_RE.match(raw.strip())
    if not match or not _valid_host(match.group(1)):
        return None
    host, port = match.group(1).lower(), match.group(2)
    if port is not None:
        number = int(port)
        if not 1 <= number <= 65535:
            return None
        forced = [scheme for scheme, p in ports if p == number and scheme]
        return [_candidate(host, forced[0] if forced else "", number)]
    return [_candidate(host, scheme, number) for scheme, number in ports]


def _json_line(raw: str) -> Tuple[str, str]:
    """``(url_text, error)`` of an httpx JSON line."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return "", f"not a URL (broken JSON line: {exc})"
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url.strip():
        return "", "JSON line without a 'url' field (httpx -json output has one)"
    return url.strip(), ""


def _line_entries(raw: str, ports: Sequence[Tuple[str, int]]) -> Iterator[Tuple[str, str, str, str, str]]:
    """``(raw, url, error, expanded_from, fallback_url)`` for each entry one input line yields."""
    if raw.startswith(_NOT_UTF8):
        yield raw[1:].strip(), "", "not a URL (the line is not UTF-8 text)", "", ""
        return
    if raw.startswith("{"):
        text, error = _json_line(raw)
        if error:
            yield (raw if len(raw) <= _JSON_SHOWN else raw[:_JSON_SHOWN] + "..."), "", error, "", ""
            return
        url, error = check_url(text)
        yield text, url, error, "", ""
        return
    candidates = expand_host(raw, ports) if ports else None
    if candidates:
        for url, fallback in candidates:
            yield url, url, "", raw, fallback
        return
    url, error = check_url(raw)
    yield raw, url, error, "", ""


def _nmap_host_name(host: Any) -> str:
    """The name the user scanned (``type="user"``), else the host's IP address (IPv6 in brackets)."""
    names = [h.get("name", "") for h in host.iter("hostname") if h.get("type") == "user"]
    addrs = [a.get("addr", "") for a in host.findall("address") if a.get("addrtype") in ("ipv4", "ipv6")]
    name = (names or addrs or [""])[0]
    return f"[{name}]" if ":" in name else name


def _nmap_http_service(port: Any) -> Optional[Tuple[str, int, str]]:
    """``(scheme, port, label)`` of an open HTTP(S) port, else None."""
    state, service = port.find("state"), port.find("service")
    if state is None or state.get("state") != "open" or service is None:
        return None
    name = (service.get("name") or "").lower()
    if name not in _NMAP_HTTP:
        return None
    tunnel = (service.get("tunnel") or "").lower()
    scheme = "https" if "https" in name or tunnel == "ssl" or name.startswith("ssl/") else "http"
    number = int(port.get("portid", "0") or 0)
    return scheme, number, f"{'ssl/' if tunnel == 'ssl' else ''}{name}"


def nmap_services(text: str) -> Iterator[Tuple[str, str]]:
    """``(url, "nmap host:port/service")`` for every open HTTP(S) port of an nmap XML report."""
    if "<!DOCTYPE" in text[:2000] and "<!ENTITY" in text:
        raise UrlListError("nmap XML with entity declarations is refused (not what nmap -oX writes)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UrlListError(f"the nmap XML report cannot be read: {exc}") from None
    for host in root.iter("host"):
        name = _nmap_host_name(host)
        if not name:
            continue
        for port in host.iter("port"):
            found = _nmap_http_service(port)
            if found is not None:
                scheme, number, label = found
                yield _candidate(name, scheme, number)[0], f"nmap {name}:{number}/{label}"


#: The ending of a list file's name (with whatever a typo adds: ``urls.txtt``); no top-level domain
#: starts like these, so a host name never ends with one.
_LIST_SUFFIX_RE = re.compile(r"\.(txt|lst|list|xml|json|jsonl|csv|tsv|nmap|gnmap|urls?)[a-z0-9]{0,3}$", re.I)


def looks_like_a_file(value: str) -> bool:
    """``-l`` names a file rather than a URL or host: not a comma list, no scheme, and either a path
    (``/x``, ``./x``, ``~/x``, ``dir/x`` whose first part is no host name) or, without a ``/``, a
    list-like name ending."""
    if "," in value or "://" in value:
        return False
    if value.startswith(("/", "./", "../", "~")) or "\\" in value:
        return True
    head, slash, _ = value.partition("/")
    if slash:
        host = re.sub(r":\d+$", "", head)
        return not (_valid_host(host) and ("." in host or host == "localhost" or host.startswith("[")))
    return _LIST_SUFFIX_RE.search(value) is not None


def _list_path(value: str, base_dir: Optional[str]) -> Optional[str]:
    """The file ``value`` names (raises :class:`UrlListError` when it names one that does not exist),
    or None for a comma list / a single URL."""
    path = os.path.expanduser(value)
    path = path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path)
    if looks_like_a_file(value) or (os.path.isfile(path) and "," not in value):
        if not os.path.isfile(path):
            raise UrlListError(f"no such file: {value!r} (the URL list; a URL or host would be taken as "
                               f"one, but this names a file)")
        return path
    return None


#: Bytes of a list file read before anything is rendered, to refuse a file that is not text.
_SNIFF_BYTES = 65536


def _sniff(path: str, name: str) -> bytes:
    """The first bytes of the list file; raises :class:`UrlListError` if they are not UTF-8 text."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise UrlListError(f"URL list file {name!r} cannot be read: {exc.strerror or exc}") from None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut at the end of the sniffed bytes
            raise UrlListError(f"URL list file {name!r} is not UTF-8 text") from None
    return head


class UrlList:
    """An input list read as a stream: :meth:`entries` yields its :class:`Entry` objects one by one
    (ids from 1, in input order), every time it is called, without holding the list. A file is read
    line by line; a line that is not UTF-8 is an entry with an error. A comma list is held as text,
    and an nmap XML report is parsed whole (one entry per open HTTP service)."""

    def __init__(self, path: Optional[str] = None, text: Optional[str] = None,
                 ports: Sequence[Tuple[str, int]] = (), jsonl: bool = False, name: str = "") -> None:
        self.path, self.text, self.ports, self.jsonl = path, text, tuple(ports), jsonl
        self.name = name or path or "the URL list"

    def entries(self) -> Iterator[Entry]:
        if self.jsonl:  # a job's copy of the parsed list, written by an earlier version
            yield from _jsonl_entries(self.path or "")
            return
        if self.text is not None:
            raws: Iterable[str] = [part.strip() for part in self.text.split(",") if part.strip()]
        else:
            head = _sniff(self.path or "", self.name)
            if head.lstrip().lstrip(b"\xef\xbb\xbf").startswith((b"<?xml", b"<nmaprun")):
                yield from _nmap_entries(self.path or "", self.name)
                return
            raws = split_entries(_file_lines(self.path or ""))
        number = 0
        for raw in raws:
            for shown, url, error, origin, fallback in _line_entries(raw, self.ports):
                number += 1
                yield Entry(id=number, raw=shown, url=url, error=error, expanded_from=origin, fallback_url=fallback)

    def source_bytes(self) -> Iterator[bytes]:
        """What the list is made of (the file's bytes, or the comma list's text), in chunks."""
        if self.text is not None:
            yield self.text.encode("utf-8")
            return
        with open(self.path or "", "rb") as fh:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    return
                yield chunk


#: Marks a line of a list file that is not UTF-8 (a lone surrogate: no decoded text holds one); its
#: entry has an error.
_NOT_UTF8 = "\udc80"


def _file_lines(path: str) -> Iterator[str]:
    """The lines of a list file (as ``str.splitlines`` splits them), read as they are needed; a line
    that is not UTF-8 comes back decoded with U+FFFD and marked (``_NOT_UTF8`` prefix)."""
    with open(path, "rb") as fh:
        first = True
        for line in fh:
            if first:
                line, first = line[3:] if line.startswith(b"\xef\xbb\xbf") else line, False
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                text = _NOT_UTF8 + line.decode("utf-8", "replace")
            yield from text.splitlines() or [""]


def _nmap_entries(path: str, name: str) -> Iterator[Entry]:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise UrlListError(f"URL list file {name!r} is not UTF-8 text") from None
    for n, (url, origin) in enumerate(nmap_services(text), start=1):
        yield Entry(id=n, raw=url, url=url, expanded_from=origin)


def _jsonl_entries(path: str) -> Iterator[Entry]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield Entry(**json.loads(line))


def open_list(value: str, base_dir: Optional[str] = None, ports: Sequence[Tuple[str, int]] = (),
              stdin: Optional[IO[Any]] = None, spool_dir: Optional[str] = None) -> UrlList:
    """The list ``-l``/``urls`` names: a file, ``-`` (standard input, copied to a file in
    ``spool_dir`` (default: the system's temporary folder) as it is read, so that it is read once),
    else a comma list. Raises :class:`UrlListError` before anything is rendered for a value that is
    empty, names a missing file or a file that does not start as UTF-8 text."""
    if not isinstance(value, str) or not value.strip():
        raise UrlListError("the URL list is empty: give a .txt file (one URL per line), - for standard input, "
                           "or comma-separated URLs")
    value = value.strip()
    if value == "-":
        path = _spool(stdin if stdin is not None else sys.stdin, spool_dir)
        url_list = UrlList(path=path, ports=ports, name="standard input")
        try:
            _sniff(path, "standard input")
        except UrlListError:
            raise UrlListError("standard input is not UTF-8 text") from None
        return url_list
    file_path = _list_path(value, base_dir)
    if file_path is None:
        return UrlList(text=value, ports=ports, name="the comma list")
    _sniff(file_path, value)
    return UrlList(path=file_path, ports=ports, name=value)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _spool(stream: IO[Any], directory: Optional[str]) -> str:
    """Copy a stream (text or bytes) to a new file, chunk by chunk; its path (removed at exit)."""
    fd, path = tempfile.mkstemp(prefix="websim-stdin-", suffix=".txt", dir=directory)
    atexit.register(_remove_quietly, path)
    source = getattr(stream, "buffer", stream)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = source.read(1 << 20)
            if not chunk:
                break
            out.write(chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk)
    return path


def read_entries(value: str, base_dir: Optional[str] = None, ports: Sequence[Tuple[str, int]] = (),
                 stdin: Optional[IO[str]] = None) -> List[Entry]:
    """Parse ``-l``/``urls`` at once: a file, ``-`` (standard input), else a comma list (see
    :class:`UrlList` for the stream a crawl reads)."""
    return list(open_list(value, base_dir, ports, stdin).entries())
