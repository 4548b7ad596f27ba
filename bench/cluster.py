"""Clustering benchmark on synthetic pages.

    python bench/cluster.py               # N = 10k, 100k, 1M, one child process each
    python bench/cluster.py --n 100000    # one size; the last line reads
    n=<N> seconds=<s> cpu_seconds=<s> peak_rss_mb=<mb> candidates=<pairs> pairs_differ=<k or na>
        [spot_groups=<g> spot_differ=<k>]

Pages: hosts with a Zipf-like size distribution, ~45 % of the pages in near-duplicate families
(sizes 2 .. a few thousand, heavy-tailed; members share the family SimHash exactly or within 1-4
bits, lengths within +-15 %, pHash exact or within 2 bits), ~3 % in "same screenshot, different
text" families, the rest unique (random SimHash/pHash, log-normal text length, median 2000 chars).
The synthetic decision mirrors the product's on these features: text from SimHash distance and
length ratio, visual from pHash distance, structure from the length ratio; rule 1 and rule 2.

``seconds`` times ``cluster()`` (candidate generation, passes and every compare call) on compact
keys (wall clock; the line before also gives its CPU seconds, which other load does not inflate);
``explicit_edges`` counts the pairs of distinct hash entries the joins produced (pairs already
known connected are skipped on large inputs); ``peak_rss_mb`` is the process's peak RSS measured
before the brute-force check;
``candidates`` is the number of candidate pairs compared (calls of ``compare``); ``pairs_differ``
is |same-cluster pairs of the fast result XOR those of an exhaustive reference| (all pairs tested,
default for N <= 100k; ``na`` above unless ``--brute full``). When the full check is off,
``--spot S`` (default 60) samples S pages (half of them clustered), finds each one's candidate
group by brute-force scans of all N pages, clusters it with the same reference and counts the
differing same-cluster pairs in ``spot_differ`` (groups above 40 pages are skipped and counted).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scrapy_websim.core.match.cluster import ClusterKeys, cluster
from scrapy_websim.core.params.match import ClusterParams
from scrapy_websim.core.types import PairResult

#: Largest near-duplicate family (a mirror or templated section); not a function of n, so the share
#: of pages in families of each size is the same at 10k, 100k and 1M.
FAMILY_CAP = 3000


def generate(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    sim = (rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
           + rng.integers(0, 2, n).astype(np.uint64))
    ph = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    tlen = np.clip(rng.lognormal(np.log(2000), 1.0, n), 200, 200000).astype(np.int64)
    status = np.where(rng.random(n) < 0.97, 200, rng.choice([201, 203, 206], n)).astype(np.int32)
    n_hosts = max(1, n // 40)
    host = np.minimum(rng.zipf(1.5, n) - 1, n_hosts - 1).astype(np.int32)
    # fixed family-size law, the same at every n: 1 + Zipf(1.7) capped at FAMILY_CAP pages
    cap = FAMILY_CAP
    pos = 0
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    while pos < int(0.48 * n):
        size = int(min(cap, 1 + rng.zipf(1.7)))
        size = min(size, n - pos)
        if size < 2:
            pos += 1
            continue
        idx = np.arange(pos, pos + size)
        pos += size
        base_len = tlen[idx[0]]
        visual_only = rng.random() < 0.06
        if visual_only:  # same screenshot, unrelated texts
            ph[idx] = ph[idx[0]]
            continue
        exact = rng.random(size) < 0.5
        for k, i in enumerate(idx):
            s = sim[idx[0]]
            if not exact[k]:
                for b in rng.choice(64, rng.integers(1, 5), replace=False):
                    s ^= bits[b]
            sim[i] = s
            p = ph[idx[0]]
            if rng.random() < 0.3:
                for b in rng.choice(64, rng.integers(1, 3), replace=False):
                    p ^= bits[b]
            ph[i] = p
        tlen[idx] = np.maximum(200, (base_len * rng.uniform(0.85, 1.15, size)).astype(np.int64))
        host[idx] = host[idx[0]] if rng.random() < 0.7 else host[idx]
    perm = rng.permutation(n)  # families are not contiguous in id order
    return sim[perm], ph[perm], tlen[perm], status[perm], host[perm]


def make_compare(sim, ph, tlen):
    # memoryviews of the arrays: an item read is a small int made on the spot, so the bench holds
    # no list of 10M Python ints (1.5 GB at 10M pages) and reads faster than from one
    sim_l = memoryview(np.ascontiguousarray(sim, np.uint64))
    ph_l = memoryview(np.ascontiguousarray(ph, np.uint64))
    len_l = memoryview(np.ascontiguousarray(tlen, np.int64))

    def compare(a: int, b: int) -> PairResult:
        la, lb = len_l[a], len_l[b]
        ratio = min(la, lb) / max(la, lb)
        d = (sim_l[a] ^ sim_l[b]).bit_count()
        text = 0.0 if ratio < 0.3 or d >= 16 else 1 - d / 16
        dv = (ph_l[a] ^ ph_l[b]).bit_count()
        visual = 0.0 if dv >= 20 else 1 - dv / 20
        structure = ratio
        if text >= 0.97 and (structure >= 0.85 or visual >= 0.85):
            return PairResult(text, structure, visual, 1.0, True, "rule1")
        if visual >= 0.99:
            return PairResult(text, structure, visual, 1.0, True, "rule2")
        return PairResult(text, structure, visual, 1.0, False, "")

    return compare


def brute_force_edges(sim, ph, tlen, host, params):
    """Every pair tested: text pairs by SimHash distance and length, visual pairs by pHash."""
    n = sim.shape[0]
    adj = defaultdict(set)
    order = np.argsort(tlen, kind="stable")
    slen = tlen[order].astype(np.float64)
    block = 256
    for start in range(0, n, block):
        rows = order[start:start + block]
        # lengths beyond 1/(1-diff) of the longest row (or the noise allowance above it) can never
        # pass; all other j > row are tested
        top = slen[min(start + block, n) - 1]
        longest = max(top / max(1e-12, 1 - params.length_diff), top + params.length_noise_chars)
        stop = int(np.searchsorted(slen, longest, "right"))
        cols = order[start:stop]
        x = sim[rows][:, None] ^ sim[cols][None, :]
        la = tlen[rows][:, None].astype(np.float64)
        lb = tlen[cols][None, :].astype(np.float64)
        longer = np.maximum(la, lb)
        ok = (np.bitwise_count(x) <= params.simhash_distance) & (
            longer - np.minimum(la, lb) <= np.maximum(params.length_diff * longer, params.length_noise_chars))
        if params.same_host_only:
            ok &= host[rows][:, None] == host[cols][None, :]
        r, c = np.nonzero(ok)
        for a, b in zip(rows[r].tolist(), cols[c].tolist()):
            if a != b:
                adj[a].add(b)
                adj[b].add(a)
    if params.visual_distance >= 0:
        assert params.visual_distance == 0, "the reference tests identical pHash only"
        same = defaultdict(list)
        for i, (value, h) in enumerate(zip(ph.tolist(), host.tolist())):
            same[(value, h) if params.same_host_only else value].append(i)
        for members in same.values():
            for a in members:
                for b in members:
                    if a != b:
                        adj[a].add(b)
    return adj


def reference_clusters(n, adj, rank, compare, params):
    """Components, canonical (best rank), canonical-only compares, repeated on the unmerged."""
    active = set(adj)
    label = {}
    passes = 0
    while active and (params.passes == 0 or passes < params.passes):
        passes += 1
        seen = set()
        leaving = set()
        for start in sorted(active):
            if start in seen:
                continue
            comp, stack = [], [start]
            seen.add(start)
            while stack:
                v = stack.pop()
                comp.append(v)
                for w in adj[v]:
                    if w in active and w not in seen:
                        seen.add(w)
                        stack.append(w)
            c = min(comp, key=rank.__getitem__)
            leaving.add(c)
            if len(comp) == 1:
                continue
            for m in adj[c]:
                if m in active and compare(c, m).is_duplicate:
                    label[m] = c
                    label[c] = c
                    leaving.add(m)
        active -= leaving
    return label


def same_cluster_pairs_differ(a: dict, b: dict) -> int:
    def pairs(label):
        sizes = defaultdict(int)
        for v in label.values():
            sizes[v] += 1
        return sum(s * (s - 1) // 2 for s in sizes.values())

    joint = defaultdict(int)
    for page, la in a.items():
        if page in b:
            joint[(la, b[page])] += 1
    both = sum(s * (s - 1) // 2 for s in joint.values())
    return pairs(a) + pairs(b) - 2 * both


def spot_check(sim, ph, tlen, host, params, compare, result, samples: int, seed: int, limit: int = 40):
    """Exactness at any n: the candidate groups of sampled pages, found by brute force (each page's
    neighbours by a scan of all n pages), clustered by the reference; the fast result restricted to
    each group must give the same same-cluster pairs. A group is closed under the candidate test,
    so the reference on it equals the global reference there. Half the samples are clustered pages
    (families), half uniform; groups above ``limit`` pages are skipped (counted). Returns
    (groups checked, pages in them, pairs differing, groups skipped)."""
    n = sim.shape[0]
    rng = np.random.default_rng(seed + 1000)
    clustered = np.fromiter(result.assignments.keys(), np.int64, len(result.assignments))
    picks = rng.choice(n, samples - samples // 2, replace=False).tolist()
    if clustered.shape[0]:
        picks += rng.choice(clustered, min(samples // 2, clustered.shape[0]), replace=False).tolist()
    tl = tlen.astype(np.float64)

    def neighbours(i: int) -> np.ndarray:
        longer = np.maximum(tl, tl[i])
        ok = (np.bitwise_count(sim ^ sim[i]) <= params.simhash_distance) & (
            longer - np.minimum(tl, tl[i]) <= np.maximum(params.length_diff * longer, params.length_noise_chars))
        if params.visual_distance >= 0:
            ok |= ph == ph[i]
        if params.same_host_only:
            ok &= host == host[i]
        ok[i] = False
        return np.flatnonzero(ok)

    fast = {page: a.cluster_id for page, a in result.assignments.items()}
    checked = pages = differ = skipped = 0
    done = set()
    for start in picks:
        if start in done:
            continue
        adj, stack = {start: None}, [start]
        while stack and len(adj) <= limit:
            v = stack.pop()
            adj[v] = set(neighbours(v).tolist())
            stack.extend(w for w in adj[v] if w not in adj and not adj.setdefault(w, None))
        if stack or len(adj) > limit:
            skipped += 1
            continue
        done.update(adj)
        order = sorted(adj, key=lambda i: (status_rank(i), -int(tlen[i]), i))
        rank = {page: r for r, page in enumerate(order)}
        full = {v: (w or set()) for v, w in adj.items()}
        ref = reference_clusters(len(full), full, rank, compare, params)
        got = {page: fast[page] for page in full if page in fast}
        differ += same_cluster_pairs_differ(got, ref)
        checked += 1
        pages += len(full)
    return checked, pages, differ, skipped


def status_rank(i: int) -> int:  # the bench's pages all have status 2xx; 200 ranks first
    return 0 if _STATUS[i] == 200 else 1


_STATUS: list = []


def run_one(n: int, brute: str, seed: int, spot: int = 0) -> str:
    sim, ph, tlen, status, host = generate(n, seed)
    keys = ClusterKeys(np.arange(n, dtype=np.int64), status, tlen, sim, np.ones(n, bool), ph, np.ones(n, bool), host)
    params = ClusterParams()
    compare = make_compare(sim, ph, tlen)
    t0, c0 = time.perf_counter(), time.process_time()
    result = cluster(keys, compare, params)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    st = result.stats
    print(f"  clusters={st.clusters} clustered_pages={st.clustered_pages} explicit_edges={st.explicit_edges} "
          f"passes={st.passes_run} cpu_seconds={cpu:.2f} (wall seconds count other load on the machine)", flush=True)
    differ = "na"
    if brute == "full" or (brute == "auto" and n <= 100_000):
        t1 = time.perf_counter()
        adj = brute_force_edges(sim, ph, tlen, host, params)
        order = np.lexsort((np.arange(n), -tlen, (status != 200).astype(np.int8)))
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        ref = reference_clusters(n, adj, rank.tolist(), compare, params)
        fast = {page: a.cluster_id for page, a in result.assignments.items()}
        differ = str(same_cluster_pairs_differ(fast, ref))
        print(f"  brute force: {time.perf_counter() - t1:.1f}s, reference clustered_pages={len(ref)}", flush=True)
    spot_txt = ""
    if spot:
        _STATUS[:] = status.tolist()
        t1 = time.perf_counter()
        checked, pages, sdiffer, skipped = spot_check(sim, ph, tlen, host, params, compare, result, spot, seed)
        print(f"  spot check: {time.perf_counter() - t1:.1f}s, {checked} groups ({pages} pages) checked against "
              f"brute force, {skipped} groups over 40 pages skipped", flush=True)
        spot_txt = f" spot_groups={checked} spot_differ={sdiffer}"
    return (f"n={n} seconds={seconds:.2f} cpu_seconds={cpu:.2f} peak_rss_mb={peak_mb:.0f} candidates={st.compared} "
            f"pairs_differ={differ}{spot_txt}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, help="one size (default: 10k, 100k and 1M in child processes)")
    parser.add_argument("--brute", choices=("auto", "full", "none"), default="auto")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spot", type=int, default=None,
                        help="sampled groups checked against brute force (default: 60 when the full check is off)")
    args = parser.parse_args()
    if args.n is None:
        for n in (10_000, 100_000, 1_000_000):
            out = subprocess.run([sys.executable, __file__, "--n", str(n), "--brute", args.brute,
                                  "--seed", str(args.seed)], check=True, capture_output=True, text=True).stdout
            print(out.strip().splitlines()[-1], flush=True)
        return
    full = args.brute == "full" or (args.brute == "auto" and args.n <= 100_000)
    spot = args.spot if args.spot is not None else (0 if full else 60)
    print(run_one(args.n, args.brute, args.seed, spot), flush=True)


if __name__ == "__main__":
    main()
