"""Whether a page may take another page's render instead of being rendered itself.

A fleet of hosts shows a few hundred things many times over: a server's default page, one
appliance's login, one error page. Rendering is what a crawl spends its CPU on, so a page whose
document is the same as one already rendered takes that render (its screenshot and rendered HTML)
instead of being rendered again. Two tests decide it:

* :func:`response_key`: the response, with what changes from request to request masked (the
  host's own name and port, the request's path where the page echoes it, values of
  ``nonce``/``csrf``/``token`` attributes, hex ids and UUIDs, long tokens that mix letters and
  digits inside tags and scripts, times of day and dates), and its status and type. Pages with
  one key say the same once rendered, unless a script makes them differ.
* :func:`renders_as_served`: the first page's render says what its HTML says (the same visible
  text and title, about as many elements), so no script changed what the page shows: the
  next page with the key, whose scripts are the same, is taken as rendered the same. A page
  whose scripts changed it without fetching data is taken as rendered the same once two renders
  on two hosts say the same (:func:`page_signature`; the handler decides, see
  ``scrapy_websim/render/once.py``); once two renders have shown a set of scripts
  (:func:`script_set`) doing the same on two hosts, another document running that very set is
  taken after one render. A shell that fills itself with data it fetches, a page that
  redirects itself: pages with its key are always rendered.

Masking is deliberately narrow: a version number, a count or a word is never masked, so two
pages that differ in anything a person reads have different keys (masking too much would give a
page another page's content; masking too little only costs a render).

Pure: no Scrapy import.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import urljoin, urlsplit

from .features import parse_html
from .page.visible import visible_text

__all__ = ["spellings", "masked_body", "page_signature", "response_key", "renders_as_served", "script_set",
           "swap_host"]

#: Placeholder of a masked span (not a byte a page can hold in text: a NUL).
_MASK = b"\x00"
#: Values of attributes that carry a per-request secret: ``nonce="..."``, ``value`` of a field
#: named like a token (``csrfmiddlewaretoken``, ``authenticity_token``, ``__RequestVerificationToken``,
#: ``_token``), ``content`` of ``<meta name="csrf-token">``.
_SECRET_ATTR = re.compile(
    rb"""(\bnonce\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)"""
    rb"""|(<(?:input|meta)\b[^>]*?(?:csrf|xsrf|token|nonce)[^>]*?\b(?:value|content)\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""",
    re.I)
#: A run of 16+ token characters (hex, base64, base64url): masked when it mixes letters and digits,
#: but only inside tags, scripts and styles (attribute values, a script's settings): in the text a
#: person reads such a run can be a name ("CVE-2026-49975_1", "libgnutls-openssl27").
_TOKEN = re.compile(rb"[A-Za-z0-9_+/-]{16,}={0,2}")
#: Markup: a tag with its attributes (only one holding a run as long as a token: the others have
#: nothing to mask), a script's or a style's content.
_MARKUP = re.compile(rb"<script\b.*?</script\s*>|<style\b.*?</style\s*>|<(?=[^>]*?[A-Za-z0-9_+/-]{16})[^>]*>",
                     re.I | re.S)
#: Words without which no secret attribute can be there (checked before its slower pattern).
_SECRET_WORDS = (b"nonce", b"csrf", b"xsrf", b"token")
#: In any text: a hex run of 16+ characters with a digit and a letter (request ids, session ids,
#: hashes) and a UUID.
_HEX = re.compile(rb"\b(?=[0-9a-f]{8})(?:(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{16,}\b"
                  rb"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)", re.I)
_DIGIT = re.compile(rb"\d")
_LETTER = re.compile(rb"[A-Za-z]")
#: Times of day (12:03, 12:03:44.123), ISO dates (2026-11-26), RFC dates with their weekday (Thu, 26 Nov 2026;
#: Thursday, 26-Nov-2026; Nov 26, 2026), numeric dates (11/26/2026).
_MONTHS = rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_WEEKDAY = rb"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+)?"
#: (The lookahead on the first character lets the engine skip the other positions quickly.)
_TIME_DATE = re.compile(
    rb"\b(?=[0-9JFMASONDTW])(?:"
    rb"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b"
    rb"|\d{4}-\d{2}-\d{2}(?=[T\s\"'<,]|$)"
    rb"|" + _WEEKDAY + rb"\d{1,2}[-\s]" + _MONTHS + rb"[-\s]\d{2,4}\b"
    rb"|" + _WEEKDAY + _MONTHS + rb"\s+\d{1,2},?\s+\d{4}\b"
    rb"|\d{1,4}/\d{1,2}/\d{2,4}\b)", re.I)


def _mask_tokens(match: "re.Match[bytes]") -> bytes:
    token = match.group(0)
    return _MASK if _DIGIT.search(token) and _LETTER.search(token) else token


def _mask_secret(match: "re.Match[bytes]") -> bytes:
    if match.group(1) is not None:
        return match.group(1) + _MASK
    return match.group(3) + _MASK


#: A request's path shorter than this is not masked (``/``, ``/a``: too common to be an echo).
MIN_PATH_CHARS = 5
#: After a masked or swapped spelling: not inside a longer name (``10.0.0.1`` in ``10.0.0.12``).
_END = rb"(?![\w-])"


def spellings(url: str) -> Tuple[str, ...]:
    """How a page may name its own request: ``host:port``, ``host``, and the path when it is
    long enough to be an echo (an error page's "/old/index.html was not found")."""
    parts = urlsplit(url)
    path = parts.path if len(parts.path) >= MIN_PATH_CHARS else ""
    # Tomcat writes the path's slashes as "&#47;" (the rendered HTML has them as "/" again)
    escaped = path.replace("/", "&#47;")
    return parts.netloc.lower().rsplit("@", 1)[-1], (parts.hostname or "").lower(), path, escaped


def _host_names(url_hosts: Iterable[str]) -> list:
    """The spellings to mask, longest first (``host:port`` before ``host``)."""
    names = {h.lower().encode("utf-8") for h in url_hosts if h and len(h) >= 3}
    return sorted(names, key=len, reverse=True)


def _port_of(hosts: Iterable[str]) -> bytes:
    """The explicit port of ``host:port`` among ``hosts`` (IPv6 ``[::1]:8080`` too), else ``b""``."""
    for name in hosts:
        head, sep, tail = name.rpartition(":")
        if sep and tail.isdigit() and not head.endswith(":") and (not head.startswith("[") or head.endswith("]")):
            return tail.encode()
    return b""


def masked_body(body: bytes, hosts: Iterable[str] = ()) -> bytes:
    """``body`` with the per-request noise masked (see the module docstring); ``hosts``: the page's
    ``host:port`` and ``host`` (the host's own name is noise: every host of a fleet names itself)."""
    lowered = body.lower()
    text = _SECRET_ATTR.sub(_mask_secret, body) if any(w in lowered for w in _SECRET_WORDS) else body
    hosts = list(hosts)
    names = _host_names(hosts)
    if names:
        if any(name in lowered for name in names):
            pattern = re.compile(b"(?:" + b"|".join(re.escape(n) for n in names) + b")" + _END, re.I)
            text = pattern.sub(_MASK + b"h", text)
    port = _port_of(hosts)
    if port and port in text:  # "Server at 10.0.0.5 Port 8080", "localhost:8080": the port of the URL, however written
        text = re.sub(rb"(?i)(\bport\s*|:)" + port + rb"\b", lambda m: m.group(1) + _MASK + b"p", text)
    text = _TIME_DATE.sub(_MASK + b"t", text)
    text = _HEX.sub(_MASK, text)
    return _MARKUP.sub(lambda m: _TOKEN.sub(_mask_tokens, m.group(0)), text)


def response_key(status: int, content_type: str, body: bytes, hosts: Iterable[str] = ()) -> bytes:
    """The key of a response: pages with one key are the same document (see :func:`masked_body`)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(str(int(status)).encode() + b"\x01" + content_type.split(";")[0].strip().lower().encode() + b"\x01")
    digest.update(masked_body(body, hosts))
    return digest.digest()


def _words(doc) -> list:
    return visible_text(doc).split() if doc is not None else []


def _elements(doc) -> int:
    if doc is None:
        return 0
    return sum(1 for _ in doc.iter("*"))


def renders_as_served(served_html: str, rendered_html: str, served_title: str = "",
                      rendered_title: Optional[str] = None) -> bool:
    """Whether rendering changed nothing a person reads: the same visible words (and title, when
    given), about as many elements (the browser adds a few: ``tbody``, ``head``). A page empty in
    both is served as rendered."""
    served = parse_html(served_html)
    rendered = parse_html(rendered_html)
    if _words(served) != _words(rendered):
        return False
    if rendered_title is not None and " ".join(served_title.split()) != " ".join(rendered_title.split()):
        return False
    a, b = _elements(served), _elements(rendered)
    return abs(a - b) <= max(8, 0.1 * max(a, b))


def page_signature(html: str, hosts: Iterable[str] = ()) -> bytes:
    """What a rendered page says (its visible words and title, its host and per-request noise
    masked as in :func:`masked_body`): two renders of one document on two hosts compare by it."""
    doc = parse_html(html)
    title = doc.find(".//title") if doc is not None else None
    text = " ".join(_words(doc)) + "\x01" + (title.text_content() if title is not None else "")
    return hashlib.blake2b(masked_body(text.encode("utf-8"), hosts), digest_size=16).digest()


#: ``<script type>`` values a browser runs (an absent or empty type is JavaScript too).
_SCRIPT_TYPES = frozenset({"", "module", "text/javascript", "application/javascript", "text/ecmascript",
                           "application/ecmascript"})


def script_set(html: str, url: str, hosts: Iterable[str] = ()) -> bytes:
    """The code a document runs, as a digest: in document order, each script's URL (resolved
    against ``url``, its scheme and host left out: another host's copy runs the same file) or
    its inline text (the host's own name masked), and each inline event handler. ``b""`` for a
    document that runs no script. Data blocks (JSON, templates) are left out: they are part of
    the document, which the response key already compares."""
    doc = parse_html(html)
    if doc is None:
        return b""
    digest = hashlib.blake2b(digest_size=20)
    count = 0
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        for part in _code_of(el, url, hosts):
            digest.update(part + b"\x01")
            count += 1
    return digest.digest() if count else b""


def _code_of(el: Any, url: str, hosts: Iterable[str]) -> List[bytes]:
    """What element ``el`` runs: a script's URL path or masked inline text, its event handlers."""
    parts = []
    if el.tag == "script" and (el.get("type") or "").strip().lower() in _SCRIPT_TYPES:
        src = (el.get("src") or "").strip()
        if src:
            where = urlsplit(urljoin(url, src))
            parts.append(b"s" + (where.path + "?" + where.query).encode("utf-8", "replace"))
        else:
            parts.append(b"i" + masked_body((el.text or "").encode("utf-8", "replace"), hosts))
    for name, value in el.attrib.items():
        if name.lower().startswith("on"):
            parts.append(b"e" + name.lower().encode() + b"=" + masked_body(value.encode("utf-8", "replace"), hosts))
    return parts


def swap_host(html: str, old: Sequence[str], new: Sequence[str]) -> str:
    """``html`` with the spellings of one host (``host:port``, ``host``, and its port written as
    ``Port N``) replaced by another's, in order: a render taken from another host names the page's
    own host."""
    for before, after in zip(old, new):
        if before and after and before != after and len(before) >= 3:
            html = re.sub(re.escape(before) + _END.decode(), after.replace("\\", "\\\\"), html)
    old_port, new_port = _port_of(old).decode(), _port_of(new).decode()
    if old_port and new_port and old_port != new_port:
        html = re.sub(r"(?i)(\bport\s*)" + old_port + r"\b", lambda m: m.group(1) + new_port, html)
    return html
