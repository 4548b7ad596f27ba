"""What every web-application bench shares: crawl a URL list with the shipped defaults, score the
clusters and labels against a truth written by hand, and re-score a kept crawl offline.

An application bench (``bench/app_*.py``) sets up real software on 127.0.0.1, builds its truth
(``{url: (group, label)}``: URLs with one group are one page or one template; ``label`` is the
special-page rule the URL must get, ``E1`` ``E3`` ``L1`` ``W1`` ``M1`` ``T1``, or ``None`` for a
content page, which must get none of them) and calls :func:`main`. Each bench then takes:

    python bench/app_NAME.py [-v] [--keep DIR]     # set up, crawl, score
    python bench/app_NAME.py --check               # set up and check the truth's URLs answer; no crawl
    python bench/appbench.py DIR [DIR ...]         # cluster DIR's kept features with this code, score
    python bench/appbench.py --refeature DIR       # compute DIR's features again from its kept HTML first

``--keep DIR`` keeps the URL list, the truth, the result, the features and every rendered page's
HTML (``pages.jsonl.gz``), so that a change of the decision (``appbench.py DIR``) or of the features
(``--refeature``; the screenshot's pHash is kept from the crawl) is measured without rendering
again. The last line:

    set=NAME urls=N groups=G dup_share=D missing=M precision=P recall=R f1=F false_pairs=K
    missed_pairs=K lost=L rules=right/special (pct) content_as_junk=J

``lost``: true groups none of whose pages is a canonical or alone. ``rules``: of the URLs that the
truth or the result gives a special-page label, those where both give the same.
``content_as_junk``: content URLs with a special-page label.

**Arguable pairs.** A bench may say which pairs of its URLs are arguable: pages whose answer
the truth cannot give without guessing (two windows of one log that share most of their
entries, a page of one template that the spec's length rule puts apart). It defines
``arguable(truth) -> {(url, url), ...}`` (sorted pairs) and passes it to :func:`main`; such a pair
counts neither as a true pair nor as a false one, and a group whose pages sit in a cluster whose
canonical is an arguable twin of one of them is not lost. ``appbench.py DIR`` asks the bench
module (``bench/app_NAME.py`` for a truth named NAME) again, so a kept crawl is scored with the
bench's current reading.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from itertools import combinations
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from scrapy_websim.testing import pagedump  # noqa: E402
from scrapy_websim.testing.crawl import run_websim  # noqa: E402

#: The special-page labels (R1 and U1 are duplicates found by URL: content pages may carry them).
SPECIAL = ("E1", "E3", "L1", "W1", "M1", "T1")
#: The label of a URL whose truth gives groups only (the documentation benches): not scored.
UNKNOWN = "?"

Truth = Dict[str, Tuple[str, Optional[str]]]
#: Pairs of URLs (sorted) that count neither as true nor as false (see the module docstring).
Arguable = Set[Tuple[str, str]]


def pip_install(venv: str, packages: Sequence[str]) -> None:
    """``packages`` installed with pip into the virtual environment ``venv`` (created when missing):
    each application bench keeps its software in one of its own."""
    print(f"installing {' '.join(packages)} into {venv}", flush=True)
    if not os.path.exists(os.path.join(venv, "bin", "pip")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", *packages], check=True)


def site_truth(site, bases: Dict[str, str], family: Optional[List[int]] = None) -> Tuple[Truth, Dict[str, str]]:
    """The truth of a ``scrapy_websim.testing.sites.Site`` (its groups of URLs; labels not given) and
    the arguable families of its groups (``family[g]``: the group standing for g's arguable twins,
    g itself when it has none; ``bench/platforms.py``)."""
    from scrapy_websim.testing import sites

    truth: Truth = {}
    fam: Dict[str, str] = {}
    for g, members in enumerate(site.groups):
        for m in members:
            url = sites.resolve(m, bases)
            truth[url] = (f"g{g}", UNKNOWN)
            if family is not None:
                fam[url] = f"f{family[g]}"
    return truth, fam


def crawl(urls: Iterable[str], workdir: str, extra: Iterable[str] = (), threads: int = 8,
          timeout: float = 7200, code: str = "") -> Dict[str, dict]:
    """Crawl ``urls`` (shuffled, seed 7) with the shipped defaults; ``{url: row}`` of the result.
    ``workdir`` gets ``urls.txt``, ``result.json``, ``features.jsonl`` and ``pages.jsonl.gz``.
    ``code``: crawl with the ``scrapy_websim`` of that tree instead of this one."""
    urls = list(urls)
    random.Random(7).shuffle(urls)
    os.makedirs(workdir, exist_ok=True)
    listing = os.path.join(workdir, "urls.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("\n".join(urls) + "\n")
    pages = os.path.join(workdir, "pages.jsonl.gz")
    if os.path.exists(pages):
        os.remove(pages)
    out = os.path.join(workdir, "result.json")
    proc = run_websim(["-l", listing, "-O", out, "-t", str(threads),
                       "--features-file", os.path.join(workdir, "features.jsonl"), "--loglevel", "WARNING",
                       "-s", 'EXTENSIONS={"scrapy_websim.testing.pagedump.PageDump": 100}', *extra],
                      cwd=workdir, timeout=timeout,
                      env={pagedump.ENV: pages, **({"PYTHONPATH": os.path.abspath(code)} if code else {})})
    if proc.returncode != 0:
        raise RuntimeError(f"websim failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return load_rows(out)


def truth_adder(truth: Truth, base: str = "") -> Callable[..., None]:
    """``add(group, label, *urls)``: each URL (a path is put after ``base``) into ``truth`` once
    (a URL listed twice is a bench's error)."""
    def add(group: str, label: Optional[str], *urls: str) -> None:
        for u in urls:
            url = u if u.startswith("http") else base + u
            assert url not in truth, url
            truth[url] = (group, label)
    return add


def load_rows(path: str) -> Dict[str, dict]:
    with open(path, encoding="utf-8") as fh:
        return {row["url"]: row for row in json.load(fh)["urls"]}


def _pairs(groups: Dict[str, str]) -> set:
    by: Dict[str, List[str]] = collections.defaultdict(list)
    for url, g in groups.items():
        if g:
            by[g].append(url)
    return {tuple(sorted(p)) for members in by.values() for p in combinations(members, 2)}


def score(name: str, truth: Truth, rows: Dict[str, dict], verbose: bool = False,
          family: Optional[Dict[str, str]] = None, arguable: Optional[Arguable] = None) -> str:
    """The one-line result (see the module docstring); with ``verbose`` the wrong pairs, the lost
    groups and the wrong labels first. ``family`` (url -> key) marks arguable truth: pairs of
    different groups of one family are not counted, and a family counts as one group for ``lost``;
    ``arguable``: pairs of URLs not counted (see the module docstring)."""
    urls = list(truth)
    missing = [u for u in urls if u not in rows]
    true_pairs = _pairs({u: g for u, (g, _) in truth.items()})
    got_pairs = _pairs({u: rows[u]["cluster_id"] for u in urls if u in rows})
    if family:
        in_family = {p for p in got_pairs | true_pairs
                     if truth[p[0]][0] != truth[p[1]][0] and family.get(p[0]) and family.get(p[0]) == family.get(p[1])}
        true_pairs -= in_family
        got_pairs -= in_family
    arguable = arguable or set()
    true_pairs -= arguable
    got_pairs -= arguable
    tp = len(true_pairs & got_pairs)
    precision = tp / len(got_pairs) if got_pairs else 1.0
    recall = tp / len(true_pairs) if true_pairs else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    groups: Dict[str, List[str]] = collections.defaultdict(list)
    for u, (g, _) in truth.items():
        groups[(family or {}).get(u) or g].append(u)
    canonical_of = {r["cluster_id"]: u for u, r in rows.items() if r.get("cluster_id") and r.get("is_canonical")}

    def kept(u: str) -> bool:  # the page is a canonical, alone, or with an arguable twin as its canonical
        r = rows.get(u)
        if r is None or not r["cluster_id"] or r["is_canonical"]:
            return True
        c = canonical_of.get(r["cluster_id"], "")
        return bool(c) and (min(u, c), max(u, c)) in arguable

    lost = [g for g, members in groups.items() if not any(kept(u) for u in members)]
    special = right = junk = 0
    wrong_labels = []
    for u, (_, label) in truth.items():
        if label == UNKNOWN:
            continue
        got = rows.get(u, {}).get("cluster_kind", "")
        got = got if got in SPECIAL else None
        if label is None and got is not None:
            junk += 1
        if label is not None or got is not None:
            special += 1
            if label == got:
                right += 1
            else:
                wrong_labels.append((u, label, got))
    dup_urls = sum(len(m) for m in groups.values() if len(m) > 1)
    if verbose:
        def line(u: str) -> str:
            r = rows.get(u, {})
            return (f"{r.get('cluster_id') or '-'} {r.get('cluster_kind') or '-'} {r.get('status_code')} "
                    f"{u} :: {r.get('match_reason', '')[:160]}")
        for a, b in sorted(got_pairs - true_pairs):
            print(f"FALSE  {truth[a][0]} / {truth[b][0]}\n    {line(a)}\n    {line(b)}")
        for a, b in sorted(true_pairs - got_pairs):
            print(f"MISSED {truth[a][0]}\n    {line(a)}\n    {line(b)}")
        for g in lost:
            print(f"LOST   {g}: " + ", ".join(groups[g][:3]))
        for u, want, got in wrong_labels:
            print(f"LABEL  want {want or 'content'} got {got or 'content'}: {line(u)}")
    pct = 100.0 * right / special if special else 100.0
    return (f"set={name} urls={len(urls)} groups={len(groups)} dup_share={dup_urls / max(1, len(urls)):.2f} "
            f"missing={len(missing)} precision={precision:.3f} recall={recall:.3f} f1={f1:.3f} "
            f"false_pairs={len(got_pairs - true_pairs)} missed_pairs={len(true_pairs - got_pairs)} "
            f"lost={len(lost)} rules={right}/{special} ({pct:.1f}%) content_as_junk={junk}")


def save_truth(truth: Truth, workdir: str, name: str, family: Optional[Dict[str, str]] = None,
               arguable: Optional[Arguable] = None) -> None:
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(workdir, "truth.json"), "w", encoding="utf-8") as fh:
        json.dump({"name": name, "truth": truth, "family": family or {}, "arguable": sorted(arguable or ())},
                  fh, indent=0)


def arguable_of(name: str, truth: Truth) -> Arguable:
    """The arguable pairs the bench module of a truth named ``name`` (``bench/app_NAME.py``) reads
    in it today (its ``arguable(truth)``); none when it has no such function."""
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(f"app_{name}")
    except ImportError:
        return set()
    reader = getattr(module, "arguable", None)
    return set(reader(truth)) if reader else set()


def load_truth(workdir: str) -> Tuple[str, Truth, Dict[str, str]]:
    with open(os.path.join(workdir, "truth.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    return (data["name"], {u: (g, label) for u, (g, label) in data["truth"].items()}, data.get("family") or {})


def refeature(workdir: str) -> str:
    """Compute the features of ``workdir``'s pages again from their kept HTML (the crawl's pHash,
    fetch fields and soft-404 probes kept) into ``features.refeatured.jsonl``; returns its path."""
    from scrapy.settings import Settings

    from scrapy_websim.config import WebsimConfig, WebsimParams
    from scrapy_websim.core.features import compute_features
    from scrapy_websim.core.store import iter_jsonl, save_jsonl

    params = WebsimParams.from_settings(Settings(), WebsimConfig()).features
    html = pagedump.read_pages(os.path.join(workdir, "pages.jsonl.gz"))
    out = os.path.join(workdir, "features.refeatured.jsonl")

    def records():
        for record in iter_jsonl(os.path.join(workdir, "features.jsonl")):
            page = html.get(record.url)
            if page is not None and not record.error:
                phash = record.phash
                compute_features(record, page, None, params)
                record.phash = phash
            yield record

    save_jsonl(records(), out)
    return out


def rescore(workdir: str, verbose: bool = False, features: str = "", extra: Iterable[str] = ()) -> str:
    """Cluster ``workdir``'s kept features with this code and score them against its truth."""
    name, truth, family = load_truth(workdir)
    features = features or os.path.join(workdir, "features.jsonl")
    out = os.path.join(workdir, "result.rescored.json")
    proc = run_websim(["cluster", features, "-O", out, *extra], cwd=workdir, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"websim cluster failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return score(name, truth, load_rows(out), verbose, family, arguable_of(name, truth))


def main(name: str, build: Callable[[argparse.Namespace, str], "contextlib.AbstractContextManager[Truth]"],
         doc: str, add_args: Optional[Callable[[argparse.ArgumentParser], None]] = None,
         check: Optional[Callable[[Truth], str]] = None,
         arguable: Optional[Callable[[Truth], Arguable]] = None) -> int:
    """The command line of an application bench. ``build(args, tmp)`` is a context manager that
    sets the application up in ``tmp``, serves it and yields the truth (URLs resolved);
    ``arguable(truth)``: the pairs of its URLs that are not counted (see the module docstring)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="print the wrong pairs, lost groups, labels")
    parser.add_argument("--keep", default="", help="keep the crawl (list, truth, result, features, HTML) here")
    parser.add_argument("--check", action="store_true",
                        help="set up and check that the truth's URLs answer as it says; no crawl")
    if add_args:
        add_args(parser)
    args = parser.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix=f"websim-{name}-")
    os.makedirs(tmp, exist_ok=True)
    try:
        with build(args, os.path.join(tmp, "app")) as truth:
            if args.check:
                print(check(truth) if check else check_truth(name, truth), flush=True)
                return 0
            pairs = arguable(truth) if arguable else set()
            save_truth(truth, tmp, name, arguable=pairs)
            rows = crawl(truth, tmp)
            print(score(name, truth, rows, args.verbose, arguable=pairs), flush=True)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def check_truth(name: str, truth: Truth) -> str:
    """Fetch every URL of the truth once (no browser): statuses per label, for ``--check``."""
    from scrapy_websim.testing.servers import fetch

    by_label: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for url, (_, label) in truth.items():
        try:
            status = fetch(url).status
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            status = type(exc).__name__
        by_label[label or "content"][status] += 1
    groups = len({g for g, _ in truth.values()})
    return f"set={name} urls={len(truth)} groups={groups} " + " ".join(
        f"{label}:{dict(c)}" for label, c in sorted(by_label.items()))


def special_titles(truth: Truth) -> str:
    """For ``--check``: the statuses and the titles (``<title>``) each group of special pages shows,
    one line a group, so that a group that mixes templates stands out (no browser: plain fetches)."""
    import re

    from scrapy_websim.testing.servers import fetch

    by_group: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for url, (group, label) in truth.items():
        if label in SPECIAL:
            got = fetch(url)
            title = re.search(rb"<title[^>]*>(.*?)</title>", got.body, re.S | re.I)
            text = " ".join((title.group(1) if title else b"-").decode("utf-8", "replace").split())
            by_group[f"{group} ({label})"][f"{got.status} {text[:60]}"] += 1
    return "\n".join(f"  {group}: {dict(c)}" for group, c in sorted(by_group.items()))


def _cli() -> int:
    parser = argparse.ArgumentParser(description="re-score a kept application-bench crawl")
    parser.add_argument("dirs", nargs="+", help="directories written by an application bench's --keep")
    parser.add_argument("--refeature", action="store_true", help="compute the features again from the kept HTML")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("-s", "--set", action="append", default=[], help="a setting for websim cluster")
    args = parser.parse_args()
    extra = [x for s in args.set for x in ("-s", s)]
    for d in args.dirs:
        features = refeature(d) if args.refeature else ""
        print(rescore(d, args.verbose, features, extra), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_cli())
