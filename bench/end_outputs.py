"""The end of a crawl's outputs, byte for byte, from two versions of the code on the same input.

    python bench/end_outputs.py --code /tmp/old-checkout --features F1.jsonl F2.jsonl ...

For each features file (a crawl's ``--features-file``) it runs, once with the code of ``--code``
(``PYTHONPATH``) and once with this checkout's:

* ``websim cluster FEATURES -O r.json -O r.jsonl -O r.csv`` (the offline re-cluster);
* the distributed collect: a real ``redis-server`` on 127.0.0.1, ``websim push`` of the file's
  URLs, every record stored as a worker stores it, then ``websim collect -o r.json -o r.jsonl
  -o r.csv --features-file f.jsonl``;

and compares every file written, with ``meta.generated_at`` (the time of the run) masked. One line
per file: ``same`` or ``DIFFERS``; the last line reads ``files=<n> differ=<k>``. Exit status 1 if a
file differs. Needs Debian's ``redis-server`` for the collect part (skipped without it).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from scrapy_websim.core.store import iter_jsonl  # noqa: E402
from scrapy_websim.testing.redis_server import RedisServer, redis_server_path  # noqa: E402

FORMATS = ("json", "jsonl", "csv")


def _websim(code: str, args: List[str]) -> None:
    env = dict(os.environ, PYTHONPATH=code)
    run = subprocess.run([sys.executable, "-m", "scrapy_websim.cli", *args], env=env, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        raise SystemExit(f"websim {' '.join(args)} exited {run.returncode}:\n{run.stderr[-3000:]}")


def recluster(code: str, features: str, out: str) -> None:
    _websim(code, ["cluster", features, *sum((["-O", os.path.join(out, f"r.{f}")] for f in FORMATS), [])])


_STORE_RECORDS = """
import sys
from scrapy_websim.core.store import iter_jsonl
from scrapy_websim.distributed.job import Job, connect
job = Job(connect(sys.argv[1]), sys.argv[2])
ids = {}
for page_id, raw, _url, _error in job.iter_inputs():
    ids.setdefault(raw, page_id)
for record in iter_jsonl(sys.argv[3]):
    if not record.probe_for and record.url in ids:
        record.id = ids.pop(record.url)
        job.record(record)
"""


def collect(code: str, features: str, out: str, redis_url: str, job: str) -> None:
    """``websim collect`` of a job whose records are the features file's (one per distinct URL)."""
    urls = [r.url for r in iter_jsonl(features) if not r.probe_for]
    listing = os.path.join(out, "urls.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{u}\n" for u in urls if u and "\n" not in u and not u.lstrip().startswith("#")))
    _websim(code, ["push", "-l", listing, "--redis", redis_url, "--job", job])
    env = dict(os.environ, PYTHONPATH=code)
    subprocess.run([sys.executable, "-c", _STORE_RECORDS, redis_url, job, features], env=env, check=True)
    _websim(code, ["collect", "--redis", redis_url, "--job", job, "--partial",
                   "--features-file", os.path.join(out, "f.jsonl"),
                   *sum((["-o", os.path.join(out, f"r.{f}")] for f in FORMATS), [])])


def _masked(path: str) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read()
    return re.sub(rb'"generated_at": "[^"]*"', b'"generated_at": ""', data)


def compare(a: str, b: str) -> Dict[str, bool]:
    """``{file name: same}`` of every file in folder ``a`` or ``b``."""
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    same = {}
    for name in names:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not (os.path.isfile(pa) and os.path.isfile(pb)):
            same[name] = False
            continue
        same[name] = filecmp.cmp(pa, pb, shallow=False) or _masked(pa) == _masked(pb)
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", required=True, help="root of the other version's checkout (its PYTHONPATH)")
    parser.add_argument("--features", nargs="+", required=True, help="features files (JSON Lines)")
    parser.add_argument("--keep", help="keep the outputs in this folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="websim-end-outputs-")
    server = RedisServer(os.path.join(work, "redis")).start() if redis_server_path() else None
    files = differ = 0
    try:
        for n, features in enumerate(args.features):
            for side, code in (("old", os.path.abspath(args.code)), ("new", ROOT)):
                folder = os.path.join(work, f"{n}-cluster-{side}")
                os.makedirs(folder, exist_ok=True)
                recluster(code, features, folder)
                if server is not None:
                    folder = os.path.join(work, f"{n}-collect-{side}")
                    os.makedirs(folder, exist_ok=True)
                    collect(code, features, folder, server.url, f"j{n}{side}")
            for step in ("cluster", "collect") if server is not None else ("cluster",):
                same = compare(os.path.join(work, f"{n}-{step}-old"), os.path.join(work, f"{n}-{step}-new"))
                for name, ok in same.items():
                    files += 1
                    differ += not ok
                    print(f"{features} {step} {name}: {'same' if ok else 'DIFFERS'}", flush=True)
    finally:
        if server is not None:
            server.stop()
    print(json.dumps({"work": work}))
    print(f"files={files} differ={differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
