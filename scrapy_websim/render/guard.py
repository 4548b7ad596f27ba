"""Small forward proxies in the crawl's own event loop (127.0.0.1 only) that every connection of the
browser goes through.

* The **guard** (``WEBSIM_DENY_NETWORKS`` set): Chromium follows redirects (HTTP, meta refresh,
  JavaScript) without asking Playwright's routes again, so a route cannot stop a redirect into a
  forbidden network. The guard sees every request of the pages, redirect hops, WebSockets and TURN
  over TCP included: it resolves the host itself, refuses (HTTP 403) when any address is in a denied
  network, and otherwise connects to the very address it checked (no second DNS lookup to race
  with). Plain http requests are forwarded one per connection; https and websockets go through
  ``CONNECT`` tunnels.
* The **refuser**: the browser-wide proxy. The pages' browser contexts have a proxy of their own (the
  guard, the user's ``WEBSIM_PROXY``, or none), so what reaches the refuser is what Chromium asks
  for on its own (component updates, account checks...): it is answered 403 without a DNS lookup.

When the guard refuses a request or cannot reach its target, its answer carries
:data:`BLOCKED_HEADER` or :data:`ERROR_HEADER`, whose value starts with :data:`GUARD_TOKEN` (a
server cannot forge it), and the reason is kept per ``host:port`` (:meth:`GuardProxy.failure`) for
``CONNECT`` tunnels, whose refusal Chromium reports only as ``ERR_TUNNEL_CONNECTION_FAILED``.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import ipaddress
import logging
import secrets
import socket
import weakref
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

BLOCKED_HEADER = "X-Websim-Blocked"
ERROR_HEADER = "X-Websim-Error"
#: Starts the value of the guard's own headers in this process (``TOKEN reason``).
GUARD_TOKEN = secrets.token_hex(8)
_MAX_HEAD = 256 * 1024
#: Seconds the guard waits for a target to accept a connection.
CONNECT_TIMEOUT = 30.0
#: ``host:port`` targets whose last refusal or failure is kept.
_KEPT_FAILURES = 4096

Denied = Callable[[Sequence[str]], Optional[str]]


def guard_reason(value: Optional[str]) -> str:
    """The reason in a header value the guard of this process wrote, else ``""``."""
    if value and value.startswith(GUARD_TOKEN + " "):
        return value[len(GUARD_TOKEN) + 1:]
    return ""


#: Seconds a host's addresses are kept (as long as Chromium's own host cache keeps them), and how
#: many hosts at most.
DNS_TTL, _KEPT_HOSTS = 60.0, 10_000


class HostCache:
    """The addresses of the hosts looked up lately: the pages of one host need one lookup a minute."""

    def __init__(self) -> None:
        self._hosts: "collections.OrderedDict[str, Tuple[float, List[str]]]" = collections.OrderedDict()

    async def lookup(self, host: str, port: int) -> List[str]:
        """The host's addresses (raises OSError when it does not resolve)."""
        loop = asyncio.get_running_loop()
        key = host.lower()
        kept = self._hosts.get(key)
        if kept is not None and kept[0] > loop.time():
            return kept[1]
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [str(info[4][0]) for info in infos]
        self._hosts[key] = (loop.time() + DNS_TTL, addresses)
        self._hosts.move_to_end(key)
        while len(self._hosts) > _KEPT_HOSTS:
            self._hosts.popitem(last=False)
        return addresses


async def resolve_checked(host: str, port: int, denied: Callable[[List[str]], Optional[str]],
                          cache: Optional[HostCache] = None) -> Tuple[Optional[str], str, str]:
    """``(address to connect to, "", "")``, or ``(None, why it is blocked, "")``, or ``(None, "", why
    the name did not resolve)``."""
    host = host.strip("[]")
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            addresses = await (cache or HostCache()).lookup(host, port)
        except OSError as exc:
            return None, "", f"DNS lookup failed for {host} ({getattr(exc, 'strerror', None) or exc})"
    reason = denied(addresses)
    if reason:
        return None, f"blocked: {host} ({reason}, WEBSIM_DENY_NETWORKS)", ""
    return addresses[0], "", ""


def connect_error(exc: BaseException, host: str, port: int) -> str:
    """Why a connection to ``host:port`` failed, in words (as the browser's own errors are told)."""
    where = f"{host}:{port}"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return f"connection timed out ({where})"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused ({where})"
    code = getattr(exc, "errno", None)
    if code == errno.EHOSTUNREACH:
        return f"address unreachable ({where})"
    if code == errno.ENETUNREACH:
        return f"network unreachable ({where})"
    return f"connection failed ({where}: {getattr(exc, 'strerror', None) or type(exc).__name__})"


class GuardProxy:
    """``start(sock)`` serves on an already bound socket. ``denied(addresses)`` says why not, or None;
    ``denied=None`` makes the refuser (every request answered 403, no DNS lookup)."""

    def __init__(self, denied: Optional[Denied]) -> None:
        self.denied = denied
        if denied is not None:
            _GUARDS.add(self)
        self.server: Optional[asyncio.AbstractServer] = None
        self.blocked = 0
        self.refused = 0
        self._failures: "collections.OrderedDict[str, str]" = collections.OrderedDict()
        self.hosts = HostCache()

    async def start(self, sock: socket.socket) -> None:
        self.server = await asyncio.start_server(self._client, sock=sock, limit=_MAX_HEAD)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def failure(self, host: str, port: int) -> str:
        """Why the guard last refused or could not reach ``host:port``; ``""`` if it did not."""
        return self._failures.get(f"{host.strip('[]').lower()}:{port}", "")

    def _note(self, host: str, port: int, reason: str) -> None:
        key = f"{host.strip('[]').lower()}:{port}"
        self._failures[key] = reason
        self._failures.move_to_end(key)
        while len(self._failures) > _KEPT_FAILURES:
            self._failures.popitem(last=False)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: Optional[asyncio.StreamWriter] = None
        try:
            request = _parse_request(await reader.readuntil(b"\r\n\r\n"))
            if isinstance(request, str):
                await self._refuse(writer, request)
                return
            host, port, head_out = request
            opened = await self._open_upstream(writer, host, port)
            if opened is None:
                return
            up_reader, upstream = opened
            if head_out:
                upstream.write(head_out)
            else:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            # one exchange per connection: when either side is done, both are closed (Chromium opens
            # a new connection for its next request)
            pipes = [asyncio.ensure_future(_pipe(reader, upstream)), asyncio.ensure_future(_pipe(up_reader, writer))]
            _, pending = await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            for w in (writer, upstream):
                if w is not None:
                    w.close()

    async def _open_upstream(self, writer: asyncio.StreamWriter, host: str, port: int
                             ) -> Optional[Tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
        """The connection to ``host:port``, or None once the client was told why not (the
        browser's own request, a denied network, a name or a port that does not answer)."""
        if self.denied is None:
            self.refused += 1
            logger.debug("websim: the browser's own request to %s:%s refused (no page asked for it)", host, port)
            await self._refuse(writer, "refused: the browser's own request")
            return None
        address, blocked, failed = await resolve_checked(host, port, self.denied, self.hosts)
        if blocked or failed:
            self._note(host, port, blocked or failed)
            if blocked:
                self.blocked += 1
                logger.info("websim: %s", blocked)
            await self._refuse(writer, blocked or failed, status="403 Forbidden" if blocked else "502 Bad Gateway",
                               header=BLOCKED_HEADER if blocked else ERROR_HEADER)
            return None
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            reason = connect_error(exc, host, port)
            self._note(host, port, reason)
            await self._refuse(writer, reason, status="502 Bad Gateway", header=ERROR_HEADER)
            return None

    @staticmethod
    async def _refuse(writer: asyncio.StreamWriter, reason: str, status: str = "403 Forbidden",
                      header: str = BLOCKED_HEADER) -> None:
        body = reason.encode("utf-8", "replace")
        value = f"{GUARD_TOKEN} {reason}".encode("utf-8", "replace").replace(b"\r", b" ").replace(b"\n", b" ")
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n{header}: ".encode()
                     + value + f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()


#: The guards of this process (:func:`failure_for`).
_GUARDS: "weakref.WeakSet[GuardProxy]" = weakref.WeakSet()


def failure_for(url: str) -> str:
    """Why a guard of this process last refused or could not reach ``url``'s host and port, or ``""``."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    except ValueError:
        return ""
    for guard in list(_GUARDS):
        reason = guard.failure(host, port)
        if reason:
            return reason
    return ""


def _parse_request(head: bytes) -> Union[str, Tuple[str, int, bytes]]:
    """``(host, port, what to send upstream)`` of a proxy request's head (``b""`` for CONNECT:
    the client's bytes go through as they are); for a scheme other than http/ws, why it is refused
    (a string). ValueError for a head that is no request."""
    line, _, rest = head.partition(b"\r\n")
    method, target, version = line.decode("latin-1").split(" ", 2)
    if method.upper() == "CONNECT":
        host, _, port_text = target.rpartition(":")
        return host, int(port_text), b""
    parts = urlsplit(target)
    if parts.scheme not in ("http", "ws"):
        return f"blocked: scheme {parts.scheme!r}"
    path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(
        (b"proxy-connection:", b"connection:", b"keep-alive:"))]
    head_out = (f"{method} {path} {version}\r\n".encode("latin-1") + b"\r\n".join(headers)
                + b"\r\nConnection: close\r\n\r\n")
    return parts.hostname or "", parts.port or 80, head_out


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.CancelledError):
        pass


def bind_local() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def proxy_args(port: int) -> List[str]:
    """Chromium flags: everything through the proxy, loopback included (Chromium skips it by default)."""
    return [f"--proxy-server=http://127.0.0.1:{port}", "--proxy-bypass-list=<-loopback>"]


__all__: Any = ["GuardProxy", "BLOCKED_HEADER", "ERROR_HEADER", "GUARD_TOKEN", "HostCache", "bind_local",
                "connect_error", "failure_for", "guard_reason", "proxy_args", "resolve_checked"]
