"""The whole end of a crawl at scale: a real feature store in, result file out.

    python bench/collect.py --n 1000000        # generate, then finalize in a fresh process
    python bench/collect.py --n 1000000 --store /tmp/s1m.sqlite3 --out /tmp/r1m.json
                                               # keep (or reuse) the store, keep the result

The last line reads ``n=<N> cpu_seconds=<s> peak_rss_mb=<mb> rows=<url rows> clusters=<c>
seconds=<wall s> rows_sha=<sha256 of the result without meta.generated_at>``: the CPU time, peak
RSS and wall time of a child process that opens the store and does what ``websim cluster`` /
``websim collect`` do after loading the records (``Finalizer.run``: ids, rule labels, candidate join,
content clusters with the real pairwise decision on records read back from the store, rule and
URL clusters, then the rows written through ``output.write_atomically``). ``rows_sha`` lets two
versions of the code be compared on the same store (run the finalize step with another
``PYTHONPATH``). Generation runs in its own child process and is not measured.

Records: the SimHash/pHash/length/status/host law of ``bench/cluster.py`` (45 % of pages in
near-duplicate families, heavy-tailed family sizes), realistic record sizes (two 128-bin MinHash
hex strings, ~40 tag paths, a tag sequence, rule signals; ~4 KB of JSON), a MinHash derived from
the SimHash so near-identical texts stay near-identical; then special pages (3 % nginx-like 404s
from 20 templates, 1 % 5xx, 0.5 % login walls, 2 % thin pages), 3 % redirected to shared landing
pages (R1), 2 % URL variants of another page (U1), 0.5 % predicted duplicates (not rendered), 1 %
PDFs. Family members keep the family's structure and pHash; roles are drawn independently.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)  # after PYTHONPATH: the finalize step runs the code PYTHONPATH names


def _structures(rng: np.random.Generator, count: int = 32):
    tags = ["div", "p", "a", "span", "li", "ul", "h2", "img", "section", "table", "tr", "td"]
    pool = []
    for _ in range(count):
        paths = {}
        for _ in range(40):
            depth = int(rng.integers(3, 9))
            path = "html>body>" + ">".join(rng.choice(tags, depth))
            paths[path] = int(rng.integers(1, 30))
        seq = "".join(rng.choice(list("abcdefghijklmnop"), 300))
        counts = [int(x) for x in rng.integers(50, 2000, 7)]
        hist = [int(x) for x in rng.integers(0, 200, 14)]
        pool.append((paths, seq, counts, hist))
    return pool


def _minhash_table(rng: np.random.Generator):
    """bin b of a page's MinHash = T[b][nibble b % 16 of its SimHash]: one flipped SimHash bit
    changes 8 of 128 bins, unrelated pages share about 1/16 of them."""
    values = rng.integers(0, 2**32 - 1, (128, 16), dtype=np.uint64)
    return [[format(int(v), "08x") for v in row] for row in values]


def _minhash(table, simhash: int) -> str:
    nibbles = [(simhash >> (4 * k)) & 15 for k in range(16)]
    return "".join(table[b][nibbles[b & 15]] for b in range(128))


def _roles(n: int, rng: np.random.Generator) -> np.ndarray:
    """0 content, 1 404, 2 5xx, 3 login, 4 thin, 5 redirected, 6 URL variant, 7 predicted, 8 PDF."""
    shares = [0.03, 0.01, 0.005, 0.02, 0.03, 0.02, 0.005, 0.01]
    return rng.choice(9, n, p=[1.0 - sum(shares)] + shares)


def generate(n: int, path: str, seed: int = 1) -> None:
    from bench.cluster import generate as keys
    from scrapy_websim.core.store import FeatureStore
    from scrapy_websim.core.types import PageRecord

    sim, ph, tlen, status, host = keys(n, seed)
    rng = np.random.default_rng(seed + 7)
    role = _roles(n, rng)
    other = rng.integers(0, n, n)
    landing = rng.integers(0, max(1, n // 300), n)
    templates = rng.integers(0, 2**63, 64, dtype=np.int64)
    pool, table = _structures(rng), _minhash_table(rng)
    sim_l, ph_l, tlen_l, status_l, host_l = sim.tolist(), ph.tolist(), tlen.tolist(), status.tolist(), host.tolist()
    role_l, other_l, landing_l = role.tolist(), other.tolist(), landing.tolist()
    ids = list(range(1, n + 1))
    url = [f"http://h{host_l[i]}.test/p/{i}" for i in range(n)]
    store = FeatureStore(path, batch_size=5000)
    for i in range(n):
        r = role_l[i]
        paths, seq, counts, hist = pool[host_l[i] % len(pool)]
        mh = _minhash(table, sim_l[i])
        rec = PageRecord(
            id=ids[i], url=url[i], normalized_url=url[i], final_url=url[i], status_code=status_l[i],
            content_type="text/html; charset=utf-8", title=f"Page {i}", html_len=int(tlen_l[i] * 3 + 2000),
            rendered=True, text_len=tlen_l[i], simhash=sim_l[i], text_hash=sim_l[i] ^ 0x5555,
            minhash=mh, prose_len=tlen_l[i], prose_minhash=mh, dom_counts=counts, tag_paths=paths,
            depth_hist=hist, tag_seq=seq, page_type="detail", phash=ph_l[i], timings=[120.0, 300.0, 450.0],
            fingerprint=(sim_l[i] >> 3) ^ 0x1234,
            signals={"vis": tlen_l[i] + 300, "mv": tlen_l[i], "kw": {}, "pw": 0, "inputs": 0, "forms": 0, "fs": 0.0,
                     "head": "", "h": ""},
        )
        _apply_role(rec, r, i, other_l[i], landing_l[i], url, templates)
        store.add(rec)
    store.close()


def _apply_role(rec, role: int, i: int, other: int, landing: int, url, templates) -> None:
    if role in (1, 2, 3):  # special pages: short, template fingerprint
        rec.text_len, rec.html_len, rec.prose_len, rec.prose_minhash = 60, 900, 0, ""
        rec.status_code = {1: 404, 2: 500 + (i % 2) * 3, 3: 200}[role]
        rec.fingerprint = int(templates[(role * 20 + i % 20) % 64])
        rec.signals = dict(rec.signals, vis=80, mv=60)
        if role == 3:
            rec.signals.update(pw=1, forms=1, inputs=2, fs=0.8)
            rec.html_len = 3000
    elif role == 4:  # thin
        rec.html_len, rec.text_len, rec.prose_len = 700, 40, 0
        rec.signals = dict(rec.signals, vis=50, mv=40)
    elif role == 5:  # redirected to a shared landing page
        rec.final_url = f"http://landing.test/{landing}"
        rec.redirect_chain = [rec.url, rec.final_url]
    elif role == 6:  # a URL variant of another page
        rec.url = url[other] + "?utm_source=bench"
        rec.final_url = rec.url
        rec.normalized_url = url[other]
    elif role == 7:  # predicted duplicate, not rendered
        for name in ("text_len", "html_len", "prose_len", "status_code", "simhash", "phash", "text_hash",
                     "fingerprint"):
            setattr(rec, name, 0 if name in ("text_len", "html_len", "prose_len", "status_code") else None)
        rec.rendered, rec.final_url, rec.predicted_duplicate_of = False, "", url[other]
        rec.minhash = rec.prose_minhash = rec.tag_seq = ""
        rec.tag_paths, rec.dom_counts, rec.depth_hist, rec.signals = {}, [], [], {}
    elif role == 8:
        rec.content_type, rec.rendered, rec.content_length = "application/pdf", False, 50000
        rec.html_len = rec.text_len = 0


def finalize(store_path: str, out: str) -> str:
    from scrapy_websim.config import WebsimConfig, WebsimParams
    from scrapy_websim.core.store import FeatureStore
    from scrapy_websim.result.finalize import Finalizer
    from scrapy_websim.result.output import write_atomically
    from scrapy_websim.result.rows import ResultRows

    t0, c0 = time.perf_counter(), time.process_time()
    params = WebsimParams.from_settings({}, WebsimConfig())
    store = FeatureStore(store_path)
    result = Finalizer(params).run(store)
    fmt = "jsonl" if out.endswith(".jsonl") else "json"
    write_atomically(out, fmt, ResultRows(result))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    meta = result.meta
    store.close()
    return (f"n={meta['total_urls']} cpu_seconds={cpu:.2f} peak_rss_mb={peak:.0f} rows={_rows(out, fmt)} "
            f"clusters={meta['total_clusters']} seconds={seconds:.2f} rows_sha={_digest(out)}")


def _rows(out: str, fmt: str) -> int:
    with open(out, "rb") as fh:
        if fmt == "jsonl":
            return sum(1 for _ in fh)
        count = 0
        fh.readline()  # '{"urls": ['
        for line in fh:
            if line.startswith(b"],"):
                break
            count += line.startswith(b"{")
        return count


def _digest(out: str) -> str:
    h = hashlib.sha256()
    with open(out, "rb") as fh:
        for line in fh:
            h.update(re.sub(rb'"generated_at": "[^"]*"', b"", line))
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", help="feature store file: generated if missing, kept (default: a temporary one)")
    parser.add_argument("--out", help="result file, .json or .jsonl (default: a temporary .json)")
    parser.add_argument("--step", choices=("all", "generate", "finalize"), default="all", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step == "generate":
        generate(args.n, args.store, args.seed)
        return
    if args.step == "finalize":
        print(finalize(args.store, args.out), flush=True)
        return
    tmp = tempfile.mkdtemp(prefix="websim-bench-collect-")
    store = args.store or os.path.join(tmp, "features.sqlite3")
    out = args.out or os.path.join(tmp, "result.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    if not os.path.exists(store):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--step", "generate", "--n", str(args.n), "--seed", str(args.seed),
                        "--store", store], check=True, env=env, cwd=ROOT)
        print(f"  generated {args.n} records in {time.perf_counter() - t0:.0f} s -> {store} "
              f"({os.path.getsize(store) / 1e9:.2f} GB)", flush=True)
    line = subprocess.run([sys.executable, __file__, "--step", "finalize", "--store", store, "--out", out],
                          check=True, env=env, cwd=ROOT, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    if not args.store:
        for name in os.listdir(tmp):
            os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)
    print(line, flush=True)


if __name__ == "__main__":
    main()
