"""CONCURRENT_REQUESTS_PER_DOMAIN holds with the asyncio reactor (scrapy_websim.crawler.downloader)."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r'''
import http.server, sys, threading, time
import scrapy
from scrapy.crawler import CrawlerProcess
state = {"n": 0, "max": 0}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with lock:
            state["n"] += 1
            state["max"] = max(state["max"], state["n"])
        time.sleep(0.2)
        with lock:
            state["n"] -= 1
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
class S(scrapy.Spider):
    name = "s"
    async def start(self):
        for i in range(6):
            yield scrapy.Request(f"http://127.0.0.1:{server.server_address[1]}/{i}")
    def parse(self, response):
        pass
settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": int(sys.argv[2]), "LOG_LEVEL": "ERROR",
            "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor"}
if sys.argv[1] != "-":
    settings["DOWNLOADER"] = sys.argv[1]
process = CrawlerProcess(settings)
process.crawl(S)
process.start()
print(state["max"])
'''


def _max_in_flight(downloader: str, per_host: int) -> int:
    env = {**os.environ, "PYTHONPATH": REPO}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, downloader, str(per_host)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(proc.stdout.split()[-1])


def test_per_host_concurrency_is_a_limit():
    # 6 requests queued at once on one host, each answered in 0.2 s: Scrapy 2.19's own Downloader
    # let all 6 go at once with the asyncio reactor; the limit of 2 must hold (and be reached)
    assert _max_in_flight("scrapy_websim.crawler.downloader.WebsimDownloader", 2) == 2
