"""What scanning many hosts needs from the renderer: TLS details, headers, cookies, UA and proxy.

* :func:`context_kwargs` are the Playwright browser-context options (``playwright_context_kwargs``
  of every render request): certificate errors ignored unless ``WEBSIM_STRICT_TLS``, the headers
  the user put in Scrapy's ``DEFAULT_REQUEST_HEADERS`` on every request of the page (sub-requests
  included) and Scrapy's ``USER_AGENT`` as the browser's own when the user set one (scrapy-playwright
  already puts Scrapy's User-Agent header on every request of the page).
* :func:`watch_tls` (run in the page-init callback, before navigation) subscribes to Chromium's
  ``Security.visibleSecurityStateChanged`` over CDP; :func:`tls_state` reads the last state in the
  capture step: the certificate's subject, issuer, validity and ``certificateNetworkError``, the
  error Chromium would have shown an interstitial for (``ERR_CERT_AUTHORITY_INVALID`` ...) had
  certificate errors not been ignored.
* :class:`WebsimScanDownloaderMiddleware` puts ``WEBSIM_COOKIES`` on every Scrapy request (the
  navigation request of a rendered page takes Scrapy's headers, and the fallback HTTP client sends
  them as they are; Scrapy's own middlewares add its headers and User-Agent) and sends requests that
  are *not* rendered through ``WEBSIM_PROXY`` (``meta["proxy"]``, handled by Scrapy's
  ``HttpProxyMiddleware``). Chromium gets the proxy as a launch option (see ``addon.py``).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import logging
import socket
import ssl
import weakref
from typing import Any, Dict, List, Optional, Tuple

from scrapy_websim.config import WebsimConfig

logger = logging.getLogger(__name__)

TLS_FIELDS = ("tls_error", "tls_subject", "tls_issuer", "tls_valid_from", "tls_valid_to", "tls_sha256", "tls_sans")


def context_kwargs(config: WebsimConfig) -> Dict[str, Any]:
    """Browser-context options: TLS policy, extra headers, UA (cookies: :func:`add_cookies`)."""
    kwargs: Dict[str, Any] = {"ignore_https_errors": not config.strict_tls}
    headers = dict(config.headers)
    if headers:
        kwargs["extra_http_headers"] = headers
    if config.user_agent:
        kwargs["user_agent"] = config.user_agent
    return kwargs


def iso_time(seconds: Any) -> str:
    """Unix seconds -> ``2026-11-23T07:09:01Z`` (``""`` when unknown)."""
    try:
        return datetime.datetime.fromtimestamp(float(seconds), tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError, OverflowError, OSError):
        return ""


def cookie_pairs(cookies: str) -> List[Tuple[str, str]]:
    """``"a=b; c=d"`` (checked by the config) -> ``[("a", "b"), ("c", "d")]``."""
    pairs = []
    for part in cookies.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            pairs.append((name, value))
    return pairs


async def add_cookies(page: Any, url: str, cookies: str) -> None:
    """The user's cookies in the page's browser context, for the origin about to be loaded.

    Chromium sends them with the navigation and every same-site sub-request, like a logged-in
    browser (a ``Cookie`` header override would be dropped by Playwright's request routing).
    """
    if not cookies or not url.lower().startswith(("http://", "https://")):
        return
    try:
        await page.context.add_cookies([{"name": n, "value": v, "url": url} for n, v in cookie_pairs(cookies)])
    except Exception as exc:  # noqa: BLE001
        logger.warning("websim: could not set the cookies for %s: %s", url, exc)


# --- TLS details from Chromium (CDP Security domain) ---

_states: "weakref.WeakKeyDictionary[Any, Dict[str, Any]]" = weakref.WeakKeyDictionary()


async def watch_tls(page: Any) -> None:
    """Record the page's certificate state as Chromium computes it. Never raises."""
    holder: Dict[str, Any] = {}
    _states[page] = holder

    def on_state(event: Dict[str, Any]) -> None:
        state = (event or {}).get("visibleSecurityState") or {}
        holder["cert"] = state.get("certificateSecurityState")  # None for an http:// document

    session = await cdp_session(page)
    if session is None:
        return
    try:
        session.on("Security.visibleSecurityStateChanged", on_state)
        await session.send("Security.enable")
    except Exception as exc:  # noqa: BLE001 - the page went away: no TLS details
        logger.debug("websim: no TLS details for this page: %s", exc)


_sessions: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


async def cdp_session(page: Any) -> Optional[Any]:
    """The tab's one CDP session (TLS events, the screenshot); None when not Chromium or closed."""
    session = _sessions.get(page)
    if session is None:
        try:
            session = _sessions[page] = await page.context.new_cdp_session(page)
        except Exception as exc:  # noqa: BLE001
            logger.debug("websim: no CDP session for this page: %s", exc)
            return None
    return session


def tls_state(page: Any) -> Dict[str, Any]:
    """The TLS fields of the page's current document (empty dict for http:// or unknown)."""
    holder = _states.get(page) or {}
    cert = holder.get("cert")
    if not cert:
        return {}
    error = str(cert.get("certificateNetworkError") or "")
    fields: Dict[str, Any] = {
        "tls_error": error[5:] if error.startswith("net::") else error,
        "tls_subject": str(cert.get("subjectName") or ""),
        "tls_issuer": str(cert.get("issuer") or ""),
        "tls_valid_from": iso_time(cert.get("validFrom")),
        "tls_valid_to": iso_time(cert.get("validTo")),
    }
    chain = cert.get("certificate") or ()  # base64 DER, the leaf first
    if chain:
        try:
            fields.update(der_identity(base64.b64decode(chain[0])))
        except (ValueError, TypeError):
            pass
    return fields


def der_identity(der: bytes) -> Dict[str, Any]:
    """``tls_sha256`` (the certificate's SHA-256 over its DER bytes, as ``openssl x509
    -fingerprint -sha256`` and Shodan's ``ssl.cert.fingerprint.sha256`` give it, lower-case hex
    without colons) and ``tls_sans`` (its subjectAltName entries, ``DNS:name`` / ``IP:address``
    ...) of one DER certificate. Pivots: hosts serving one certificate share the hash."""
    fields: Dict[str, Any] = {"tls_sha256": hashlib.sha256(der).hexdigest()}
    try:
        from cryptography import x509  # noqa: PLC0415  (Scrapy's pyOpenSSL depends on it)

        cert = x509.load_der_x509_certificate(der)
        try:
            ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return fields
        sans: List[str] = []
        for name in ext:
            if isinstance(name, x509.DNSName):
                sans.append(f"DNS:{name.value}")
            elif isinstance(name, x509.IPAddress):
                sans.append(f"IP:{name.value}")
            elif isinstance(name, x509.RFC822Name):
                sans.append(f"email:{name.value}")
            elif isinstance(name, x509.UniformResourceIdentifier):
                sans.append(f"URI:{name.value}")
        fields["tls_sans"] = sans[:100]
    except Exception as exc:  # noqa: BLE001 - an odd certificate: the hash alone
        logger.debug("websim: certificate not parsed: %s", exc)
    return fields


def tls_from_security_details(details: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """Subject, issuer and validity from Playwright's ``response.security_details()``."""
    if not details:
        return {}
    return {
        "tls_subject": str(details.get("subjectName") or ""),
        "tls_issuer": str(details.get("issuer") or ""),
        "tls_valid_from": iso_time(details.get("validFrom")),
        "tls_valid_to": iso_time(details.get("validTo")),
    }


def _common_name(name: Any) -> str:
    try:
        for key, value in name.get_components():
            if key == b"CN":
                return value.decode("utf-8", "replace")
    except Exception:  # noqa: BLE001
        pass
    return ""


def _asn1_time(value: Optional[bytes]) -> str:
    if not value:
        return ""
    try:
        parsed = datetime.datetime.strptime(value.decode("ascii"), "%Y%m%d%H%M%SZ")
        return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return ""


def tls_from_certificate(certificate: Any) -> Dict[str, str]:
    """Subject, issuer and validity of the leaf certificate Scrapy's own client received."""
    x509 = getattr(certificate, "original", None)
    if x509 is None:
        return {}
    fields: Dict[str, Any] = {
        "tls_subject": _common_name(x509.get_subject()),
        "tls_issuer": _common_name(x509.get_issuer()),
        "tls_valid_from": _asn1_time(x509.get_notBefore()),
        "tls_valid_to": _asn1_time(x509.get_notAfter()),
    }
    try:
        from OpenSSL import crypto  # noqa: PLC0415

        fields.update(der_identity(crypto.dump_certificate(crypto.FILETYPE_ASN1, x509)))
    except Exception as exc:  # noqa: BLE001
        logger.debug("websim: certificate not serialised: %s", exc)
    return fields


def tls_error_of_failure(text: str) -> str:
    """``ERR_CERT_...`` from a navigation error, else ``""``."""
    pos = text.find("net::ERR_CERT_")
    if pos < 0:
        return ""
    return text[pos + 5 :].split()[0].rstrip(".,;:")


#: OpenSSL verify codes -> the error Chromium shows for the same certificate problem.
_VERIFY_CODES = {
    9: "ERR_CERT_DATE_INVALID",  # not yet valid
    10: "ERR_CERT_DATE_INVALID",  # expired
    18: "ERR_CERT_AUTHORITY_INVALID",  # self-signed
    19: "ERR_CERT_AUTHORITY_INVALID",  # self-signed certificate in the chain
    20: "ERR_CERT_AUTHORITY_INVALID",  # unable to get the local issuer certificate
    21: "ERR_CERT_AUTHORITY_INVALID",  # unable to verify the first certificate
    23: "ERR_CERT_REVOKED",
    62: "ERR_CERT_COMMON_NAME_INVALID",  # host name mismatch
    64: "ERR_CERT_COMMON_NAME_INVALID",  # IP address mismatch
}


def verify_tls(host: str, port: int, timeout: float = 10.0) -> str:
    """Why a browser would warn about ``host:port``'s certificate, by a TLS handshake that verifies
    the chain against the system's CA store and the host name (Python's ``ssl``); ``""`` if valid.

    For pages of Scrapy's own client, which does not verify. Blocking: run it in a thread.
    """
    context = ssl.create_default_context()
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=timeout) as sock:
            with context.wrap_socket(sock, server_hostname=host.strip("[]")):
                return ""
    except ssl.SSLCertVerificationError as exc:
        code = _VERIFY_CODES.get(exc.verify_code)
        return code or f"ERR_CERT_INVALID ({exc.verify_message})"
    except (OSError, ValueError) as exc:
        return f"not checked ({type(exc).__name__}: {str(exc)[:100]})"


def apply_tls(record: Any, fields: Dict[str, Any]) -> None:
    for name in TLS_FIELDS:
        if fields.get(name):
            setattr(record, name, fields[name])


# --- headers, cookies, UA and proxy for Scrapy's requests ---


class WebsimScanDownloaderMiddleware:
    """``WEBSIM_COOKIES`` on every request, and ``WEBSIM_PROXY`` for requests Scrapy's own client
    fetches (rendered ones use Chromium's proxy)."""

    def __init__(self, config: WebsimConfig) -> None:
        # through Scrapy's CookiesMiddleware (700), which rebuilds the Cookie header from its jar
        self.cookies = cookie_pairs(config.cookies)
        self.proxy = config.proxy
        self.socks = config.proxy.lower().startswith("socks")
        self._verified: Dict[Tuple[str, int], str] = {}  # (host, port) -> tls_error, one check per origin

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebsimScanDownloaderMiddleware":
        return cls(WebsimConfig.from_crawler(crawler))

    def process_request(self, request: Any, spider: Any = None) -> None:
        if self.cookies and isinstance(request.cookies, dict):
            for name, value in self.cookies:
                request.cookies.setdefault(name, value)
        if self.proxy and not request.meta.get("playwright") and "proxy" not in request.meta:
            if self.socks:
                from scrapy.exceptions import IgnoreRequest  # noqa: PLC0415

                # Scrapy's client has no SOCKS support: refuse rather than bypass the proxy.
                raise IgnoreRequest(f"not fetched: Scrapy's HTTP client (used for pages Chromium refuses) "
                                    f"cannot use the SOCKS proxy {self.proxy.split('@')[-1]}")
            request.meta["proxy"] = self.proxy
        return None

    async def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        """``meta["websim_tls_error"]`` for an HTTPS page of Scrapy's own client (Chromium's pages
        carry Chromium's verdict). Not checked through a proxy: the check would bypass it."""
        if "playwright" in (response.flags or ()) or not response.url.lower().startswith("https:"):
            return response
        from scrapy.utils.httpobj import urlparse_cached  # noqa: PLC0415

        parts = urlparse_cached(response)
        key = (parts.hostname or "", parts.port or 443)
        if self.proxy:
            error = "not checked (fetched through a proxy)"
        elif key in self._verified:
            error = self._verified[key]
        else:
            error = self._verified[key] = await asyncio.to_thread(verify_tls, *key)
        request.meta["websim_tls_error"] = error
        return response
