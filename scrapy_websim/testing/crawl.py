"""Run the ``websim`` CLI in a subprocess and read what it wrote.

Each crawl runs in its own process (a Twisted reactor cannot restart), with real Chromium; tests
and benches assert on the files it writes.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The directory that holds this ``scrapy_websim`` package (the repository in a checkout); put first
#: on the subprocess's PYTHONPATH so that it crawls with this very code.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: What must be equal between two crawls of one URL list (timings and per-request noise aside).
SAME = ("id", "url", "normalized_url", "final_url", "redirect_chain", "status_code", "content_type", "error",
        "title", "cluster_id", "is_canonical", "cluster_kind", "match_rule", "page_type")


def run_websim(args: Sequence[str], cwd: str, timeout: float = 300, env: Optional[Dict[str, str]] = None
               ) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "scrapy_websim.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def entry_points_dir(tmp_path: Any) -> str:
    """A folder holding this checkout's package metadata (a ``.dist-info`` with the entry points of
    its ``setup.cfg``), to put first on a subprocess's PYTHONPATH: Scrapy finds the commands the
    package installs (``scrapy list``) as after ``pip install``, even where the installed copy's
    metadata is older than the checkout."""
    import configparser  # noqa: PLC0415

    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(PACKAGE_ROOT, "setup.cfg"), encoding="utf-8")
    folder = os.path.join(str(tmp_path), "websim-metadata")
    info = os.path.join(folder, "scrapy_websim-0.0.0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write("Metadata-Version: 2.1\nName: scrapy-websim\nVersion: 0.0.0\n")
    with open(os.path.join(info, "entry_points.txt"), "w", encoding="utf-8") as fh:
        for option, value in cfg.items("options.entry_points"):
            fh.write(f"[{option}]\n{value.strip()}\n\n")
    return folder


def scrapy_env(tmp_path: Any) -> Dict[str, str]:
    """The environment of a ``python -m scrapy`` subprocess that runs this checkout: its package
    and its own metadata (:func:`entry_points_dir`: the ``scrapy list`` command it installs) first on
    PYTHONPATH, whatever copy of the package is installed."""
    path = os.pathsep.join([entry_points_dir(tmp_path), PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path)


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


def comparable(data: Dict[str, Any]) -> Tuple[List[tuple], List[tuple]]:
    """The rows (``SAME`` fields) and clusters of a result JSON, for comparing two crawls."""
    rows = [tuple(row[k] for k in SAME) for row in data["urls"]]
    clusters = sorted((c["cluster_id"], c["canonical_url"], tuple(c["member_ids"]), c["kind"])
                      for c in data["clusters"])
    return rows, clusters
