"""Crawls in a network namespace of their own, with every packet that leaves loopback recorded.

``run_isolated(spec)`` runs this module in a new network and mount namespace (``unshare --net
--mount``, which needs root): only the loopback interface exists, and every IPv4 and IPv6 address is
routed to it as a local address (``ip route add local 0.0.0.0/0 dev lo``), so a packet that any
process sends to a public or private address (a resolver, a STUN server, a denied network) stays on
loopback, where a raw socket sees it; nothing can leave the machine. ``/etc/resolv.conf`` is replaced
inside the namespace (by default with ``nameserver 8.8.8.8``, the configuration that makes Chromium
try DNS over HTTPS on its own).

Inside, the driver (``python -m scrapy_websim.testing.netns SPEC.json``) serves ``spec["pages"]``
on ``127.0.0.1`` (``{port}`` in a page is the server's port), listens on ``spec["listen"]`` (UDP
and TCP ports on every address, counting what arrives), runs ``websim`` with ``spec["args"]``
(``{port}`` and ``{list}`` replaced) and writes a report next to the spec: the crawl's exit status
and stderr, every packet to an address outside 127.0.0.0/8 and ::1 (protocol, destination, port,
for DNS the name asked), and the listeners' hits.
"""

from __future__ import annotations

import http.server
import ipaddress
import json
import os
import shutil
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["isolation_problem", "run_isolated", "Packet"]

Packet = Dict[str, Any]


def isolation_problem() -> str:
    """Why a namespace cannot be made here (not root, no ``unshare``/``ip``), or ``""``."""
    if os.geteuid() != 0:
        return "a network namespace needs root"
    for binary in ("unshare", "ip", "mount"):
        if shutil.which(binary) is None:
            return f"{binary} is not installed (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "--net", "--mount", "--", "ip", "link", "set", "lo", "up"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"unshare --net --mount failed: {probe.stderr.strip()[:200]}"
    return ""


def run_isolated(spec: Dict[str, Any], workdir: str, timeout: float = 600) -> Dict[str, Any]:
    """Run the crawl of ``spec`` in its own namespace; returns the driver's report."""
    path = os.path.join(workdir, "netns-spec.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    from scrapy_websim.testing.crawl import PACKAGE_ROOT  # noqa: PLC0415

    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "--",
                           sys.executable, "-m", "scrapy_websim.testing.netns", path],
                          env=env, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    report_path = path + ".report.json"
    if proc.returncode != 0 or not os.path.exists(report_path):
        raise RuntimeError(f"the namespace driver failed ({proc.returncode}): {proc.stderr[-4000:]}")
    with open(report_path, encoding="utf-8") as fh:
        report: Dict[str, Any] = json.load(fh)
    return report


# --- inside the namespace ---

def _setup(resolv_conf: str, workdir: str) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # an interface with an address, as a real machine has (WebRTC gathers candidates only on one);
    # its peer is in this namespace too and has no address, so what is sent there goes nowhere
    subprocess.run(["ip", "link", "add", "websim0", "type", "veth", "peer", "name", "websim1"], check=True)
    subprocess.run(["ip", "addr", "add", "192.0.2.10/24", "dev", "websim0"], check=True)
    for name in ("websim0", "websim1"):
        subprocess.run(["ip", "link", "set", name, "up"], check=True)
    subprocess.run(["ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo"], check=True)
    subprocess.run(["ip", "-6", "route", "add", "local", "::/0", "dev", "lo"], check=False)
    resolv = os.path.join(workdir, "resolv.conf")
    with open(resolv, "w", encoding="utf-8") as fh:
        fh.write(resolv_conf)
    subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)


def _is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


def _dns_name(payload: bytes) -> str:
    """The first question's name of a DNS query, or ``""``."""
    try:
        at, labels = 12, []
        while payload[at]:
            size = payload[at]
            labels.append(payload[at + 1:at + 1 + size].decode("ascii", "replace"))
            at += 1 + size
        return ".".join(labels)
    except IndexError:
        return ""


def parse_packet(frame: bytes) -> Optional[Packet]:
    """Protocol, source, destination, ports (and a DNS query's name) of an Ethernet frame on lo."""
    data = frame[14:]
    if not data:
        return None
    version = data[0] >> 4
    if version == 4:
        header = (data[0] & 15) * 4
        proto, src, dst, l4 = data[9], socket.inet_ntoa(data[12:16]), socket.inet_ntoa(data[16:20]), data[header:]
    elif version == 6:
        proto = data[6]
        src = socket.inet_ntop(socket.AF_INET6, data[8:24])
        dst = socket.inet_ntop(socket.AF_INET6, data[24:40])
        l4 = data[40:]
    else:
        return None
    name = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmp6"}.get(proto, str(proto))
    packet: Packet = {"proto": name, "src": src, "dst": dst}
    if name in ("tcp", "udp") and len(l4) >= 4:
        packet["sport"], packet["dport"] = struct.unpack("!HH", l4[:4])
        if name == "udp" and packet["dport"] == 53:
            packet["dns"] = _dns_name(l4[8:])
    return packet


class Capture:
    """Every packet on lo to or from an address outside loopback (a raw socket, in a thread)."""

    def __init__(self) -> None:
        self.packets: List[Packet] = []
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind(("lo", 0))
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while self.running:
            try:
                frame, address = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            if address[2] == socket.PACKET_OUTGOING:  # each packet on lo is seen going out and coming in
                continue
            packet = parse_packet(frame)
            if packet and not (_is_loopback(packet["src"]) and _is_loopback(packet["dst"])):
                packet["t"] = round(time.time(), 3)
                self.packets.append(packet)

    def stop(self) -> List[Packet]:
        time.sleep(0.5)
        self.running = False
        self.thread.join(5)
        self.sock.close()
        return self.packets


class _Pages(http.server.BaseHTTPRequestHandler):
    pages: Dict[str, Tuple[str, str]] = {}

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        page = self.pages.get(path)
        if page is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        ctype, body = page
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def _listen(kind: str, port: int, hits: List[Dict[str, Any]]) -> None:
    family_hosts = ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::"))
    for family, host in family_hosts:
        sock = socket.socket(family, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            sock.bind((host, port))
        except OSError:
            continue
        if kind == "tcp":
            sock.listen(16)
        threading.Thread(target=_serve_listener, args=(kind, port, sock, hits), daemon=True).start()


def _serve_listener(kind: str, port: int, sock: socket.socket, hits: List[Dict[str, Any]]) -> None:
    while True:
        if kind == "udp":
            _data, peer = sock.recvfrom(65535)
            local = ""
        else:
            conn, peer = sock.accept()
            local = conn.getsockname()[0]
            conn.close()
        hits.append({"kind": kind, "port": port, "peer": peer[0], "local": local})


def _drive(spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    workdir = os.path.dirname(os.path.abspath(spec_path))
    _setup(spec.get("resolv_conf", "nameserver 8.8.8.8\n"), workdir)
    hits: List[Dict[str, Any]] = []
    for kind, port in spec.get("listen", ()):
        _listen(kind, int(port), hits)
    server = _Server(("127.0.0.1", 0), _Pages)
    port = server.server_address[1]
    _Pages.pages = {path: (page.get("type", "text/html; charset=utf-8"), page["body"].replace("{port}", str(port)))
                    for path, page in spec["pages"].items()}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    listing = os.path.join(workdir, "urls.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("\n".join(url.replace("{port}", str(port)) for url in spec["urls"]) + "\n")
    capture = Capture()
    from scrapy_websim.testing.crawl import run_websim  # noqa: PLC0415

    args = [a.replace("{port}", str(port)).replace("{list}", listing) for a in spec["args"]]
    started = time.time()
    proc = run_websim(args, cwd=workdir, timeout=spec.get("timeout", 400))
    time.sleep(spec.get("linger", 2.0))
    packets = capture.stop()
    server.shutdown()
    report = {"returncode": proc.returncode, "stderr": proc.stderr[-20000:], "port": port,
              "packets": packets, "hits": hits, "started": started}
    with open(spec_path + ".report.json", "w", encoding="utf-8") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        _drive(sys.argv[1])
