"""What the browser sends, packet by packet, in a network namespace of its own (``scrapy_websim/testing/netns.py``).

Every address is routed to loopback inside the namespace, so a packet any process sends to a
public resolver, a STUN server or a denied network is seen there (and goes nowhere else).

* ``WEBSIM_DENY_NETWORKS`` holds for every protocol a page can use: WebRTC (STUN and TURN over UDP
  and TCP), WebSocket (ws and wss), DNS prefetch and preconnect, a service worker's fetches.
* The browser makes no connection of its own: no DNS over HTTPS, no resolver probe after a failed
  lookup (Chromium asks 8.8.8.8 and 8.8.4.4 for google.com), no update or account check. The only
  packets that leave loopback are the lookups of the names the pages asked for.
"""

from __future__ import annotations

import json
import os

import pytest

from scrapy_websim.testing.netns import isolation_problem, run_isolated

pytestmark = pytest.mark.crawl

_PROBLEM = isolation_problem()
needs_namespace = pytest.mark.skipif(bool(_PROBLEM), reason=f"no network namespace here: {_PROBLEM}")

PLAIN = "<html><head><title>{t}</title></head><body><p>{t}: a page of its own.</p></body></html>"
WEBRTC = """<html><head><title>webrtc</title></head><body><p>webrtc</p><script>
for (const servers of [[{urls: 'stun:10.0.0.1:3478'}],
                       [{urls: ['turn:10.0.0.2:3478?transport=udp', 'turn:10.0.0.2:3478?transport=tcp'],
                         username: 'u', credential: 'p'}],
                       [{urls: 'stun:stun.denied.example:3478'}]]) {
  const pc = new RTCPeerConnection({iceServers: servers});
  pc.createDataChannel('x');
  pc.createOffer().then((offer) => pc.setLocalDescription(offer));
}
</script></body></html>"""
SOCKETS = """<html><head><title>sockets</title></head><body><p>sockets</p><script>
for (const url of ['ws://10.0.0.3:3478/', 'wss://10.0.0.3:3478/', 'ws://ws.denied.example:3478/']) {
  try { new WebSocket(url); } catch (e) {}
}
</script></body></html>"""
PREFETCH = """<html><head><title>prefetch</title>
<link rel="dns-prefetch" href="//prefetch.denied.example"><link rel="preconnect" href="http://10.0.0.4:3478">
<link rel="preconnect" href="https://10.0.0.4:3478"><link rel="prefetch" href="http://10.0.0.4:3478/next">
</head><body><p>prefetch</p><a href="http://link.denied.example/">a link</a></body></html>"""
WORKER = """<html><head><title>worker</title></head><body><p>worker</p><script>
if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js');
</script></body></html>"""
WORKER_JS = ("self.addEventListener('install', (e) => e.waitUntil(fetch('http://10.0.0.5:3478/').catch(() => 0)));\n"
             "fetch('http://10.0.0.5:3478/boot').catch(() => 0);")
DNS_FAILS = """<html><head><title>moving</title></head><body><p>moving</p><script>
location.href = 'http://no-such-host.invalid/';
</script></body></html>"""

#: Ports the namespace listens on, on every address (what reaches them is a hit).
LISTEN = [["udp", 3478], ["tcp", 3478]]


def _crawl(tmp_path, pages, paths, extra=()):
    spec = {"pages": pages, "urls": ["http://127.0.0.1:{port}" + p for p in paths], "listen": LISTEN,
            "args": ["-l", "{list}", "-o", "r.json", "--no-calibrate-404", "--page-timeout", "20", *extra],
            "linger": 3.0}
    report = run_isolated(spec, str(tmp_path))
    assert report["returncode"] == 0, report["stderr"][-4000:]
    with open(os.path.join(str(tmp_path), "r.json"), encoding="utf-8") as fh:
        rows = json.load(fh)["urls"]
    return report, rows


@needs_namespace
def test_denied_networks_are_never_reached_by_any_protocol(tmp_path):
    pages = {"/webrtc": {"body": WEBRTC}, "/sockets": {"body": SOCKETS}, "/prefetch": {"body": PREFETCH},
             "/worker": {"body": WORKER}, "/sw.js": {"body": WORKER_JS, "type": "application/javascript"},
             "/plain": {"body": PLAIN.format(t="plain")}}
    report, rows = _crawl(tmp_path, pages, ["/webrtc", "/sockets", "/prefetch", "/worker", "/plain"],
                          ["-s", "WEBSIM_DENY_NETWORKS=10.0.0.0/8"])
    assert [r["status_code"] for r in rows] == [200] * 5, rows
    denied = [p for p in report["packets"] if p["dst"].startswith("10.")]
    assert denied == [], f"packets to the denied network: {denied[:10]}"
    assert report["hits"] == [], "a denied address was reached"
    # the browser looks up no name itself (a prefetch, a STUN server's name, a link); the guard looks
    # up what the pages request through it (the WebSocket's host) and refuses it
    lookups = {p.get("dns") for p in report["packets"] if p.get("dport") == 53}
    assert not lookups & {"prefetch.denied.example", "stun.denied.example", "link.denied.example"}, lookups


@needs_namespace
def test_the_browser_makes_no_connection_of_its_own(tmp_path):
    pages = {"/a": {"body": PLAIN.format(t="a")}, "/b": {"body": PLAIN.format(t="b")},
             "/dns-fails": {"body": DNS_FAILS}}
    report, rows = _crawl(tmp_path, pages, ["/a", "/b", "/dns-fails"])
    # the lookups of the name the page asked for, nothing else: no DNS over HTTPS, no resolver probe
    # to 8.8.8.8/8.8.4.4, no update or account check of the browser's own
    own = [p for p in report["packets"] if not p["proto"].startswith("icmp")
           and not (p.get("dport") == 53 and p.get("dns") == "no-such-host.invalid")]
    assert own == [], f"connections no page asked for: {own[:10]}"
    assert [r["status_code"] for r in rows[:2]] == [200, 200]
    assert rows[2]["error"].startswith("DNS lookup failed"), rows[2]
