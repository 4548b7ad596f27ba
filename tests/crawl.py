"""Run real crawls for tests: the demo site on 127.0.0.1 and the ``websim`` CLI in a subprocess.

Each crawl runs in its own process (a Twisted reactor cannot restart), with real Chromium, and the
tests assert on the files it writes.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from example_project.demo_site import server as demo  # noqa: E402


@contextlib.contextmanager
def demo_site(n_ports: int = 1) -> Iterator[List[str]]:
    """Serve the demo site on ``n_ports`` free ports of 127.0.0.1; yields their base URLs."""
    servers = demo.serve([0] * n_ports)
    try:
        yield [f"http://127.0.0.1:{httpd.server_address[1]}" for httpd, _ in servers]
    finally:
        for httpd, _thread in servers:
            httpd.stopping = True
            httpd.shutdown()
            httpd.server_close()


def run_websim(args: Sequence[str], cwd: str, timeout: float = 300, env: Optional[Dict[str, str]] = None
               ) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = REPO + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "scrapy_websim.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def crawl(tmp_path: Any, urls: Sequence[str], output: str = "result.json", extra: Sequence[str] = (),
          timeout: float = 300) -> Dict[str, Any]:
    """Crawl ``urls`` (written to a .txt list) and return the parsed output and the process."""
    listing = os.path.join(str(tmp_path), "urls.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("\n".join(urls) + "\n")
    out = os.path.join(str(tmp_path), output)
    proc = run_websim(["-l", listing, "-o", out, "--loglevel", "INFO", *extra], cwd=str(tmp_path), timeout=timeout)
    assert proc.returncode == 0, f"websim failed ({proc.returncode}):\n{proc.stderr[-6000:]}"
    assert os.path.exists(out), proc.stderr[-4000:]
    return {"path": out, "proc": proc, "data": load(out)}


def load(path: str) -> Any:
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def by_url(data: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {row["url"]: row for row in data["urls"]}
