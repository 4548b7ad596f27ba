"""A tiny forward proxy that Chromium sends every request through when ``WEBSIM_DENY_NETWORKS`` is set.

Chromium follows redirects (HTTP, meta refresh, JavaScript) without asking Playwright's routes
again, so a route cannot stop a redirect into a forbidden network. A proxy sees every request,
redirect hops included: it resolves the host itself, refuses (HTTP 403, with the reason in the
``X-Websim-Blocked`` header) when any address is in a denied network, and otherwise connects to
the very address it checked (no second DNS lookup to race with). Plain http requests are forwarded
one per connection; https and websockets go through ``CONNECT`` tunnels. It runs in the crawl's
own event loop and listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from typing import Any, Callable, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

BLOCKED_HEADER = "X-Websim-Blocked"
_MAX_HEAD = 256 * 1024


async def resolve_checked(host: str, port: int, denied: Callable[[List[str]], Optional[str]]
                          ) -> Tuple[Optional[str], Optional[str]]:
    """``(address to connect to, None)`` or ``(None, reason it is refused)``."""
    host = host.strip("[]")
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return None, f"DNS lookup failed for {host}: {exc}"
        addresses = [str(info[4][0]) for info in infos]
    reason = denied(addresses)
    if reason:
        return None, f"blocked: {host} ({reason}, WEBSIM_DENY_NETWORKS)"
    return addresses[0], None


class GuardProxy:
    """``start(sock)`` serves on an already bound socket; ``denied(addresses)`` says why not, or None."""

    def __init__(self, denied: Callable[[Sequence[str]], Optional[str]]) -> None:
        self.denied = denied
        self.server: Optional[asyncio.AbstractServer] = None
        self.blocked = 0

    async def start(self, sock: socket.socket) -> None:
        self.server = await asyncio.start_server(self._client, sock=sock, limit=_MAX_HEAD)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: Optional[asyncio.StreamWriter] = None
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, _, rest = head.partition(b"\r\n")
            method, target, version = line.decode("latin-1").split(" ", 2)
            if method.upper() == "CONNECT":
                host, _, port_text = target.rpartition(":")
                port = int(port_text)
                head_out = b""
            else:
                parts = urlsplit(target)
                if parts.scheme not in ("http", "ws"):
                    await self._refuse(writer, f"blocked: scheme {parts.scheme!r}")
                    return
                host, port = parts.hostname or "", parts.port or 80
                path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
                headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(
                    (b"proxy-connection:", b"connection:", b"keep-alive:"))]
                head_out = (f"{method} {path} {version}\r\n".encode("latin-1") + b"\r\n".join(headers)
                            + b"\r\nConnection: close\r\n\r\n")
            address, reason = await resolve_checked(host, port, self.denied)
            if reason:
                self.blocked += 1
                logger.info("websim: %s", reason)
                await self._refuse(writer, reason)
                return
            up_reader, upstream = await asyncio.open_connection(address, port)
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

    @staticmethod
    async def _refuse(writer: asyncio.StreamWriter, reason: str) -> None:
        body = reason.encode("utf-8", "replace")
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     + f"{BLOCKED_HEADER}: ".encode() + body.replace(b"\r", b" ").replace(b"\n", b" ")
                     + f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()


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


__all__: Any = ["GuardProxy", "BLOCKED_HEADER", "bind_local", "proxy_args", "resolve_checked"]
