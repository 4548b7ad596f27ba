"""Does ``websim explain`` agree with the clustering on every pair it decided?

    python bench/explain.py                      # 4 templates, 100 pages each, plus their noisy copies
    python bench/explain.py --pages 100 --only git-doc

The page set is ``bench/textsim.py``'s: real documentation pages of Debian packages (python3-doc,
postgresql-doc-15, apache2-doc, git-doc, ...) and a noisy copy of each (banner, timestamp line,
"recommended" links, CSRF token, ~3 % of the words changed), through the shipped feature code.
The pages of all templates are clustered together by the shipped end of a crawl
(``finalize.label_rules``, ``cluster.cluster``, ``finalize.assign_clusters``), with the pair
callback recording every pair the clustering compared and its decision; the result and the
features are written as a crawl writes them (result JSON with ``meta.decision_params``, features
JSON Lines). Then ``websim explain``'s own code (``explain.explain_records``, with the thresholds
read back from the result's meta and the two pages read back from the features file) explains

* every pair the clustering compared: the explanation's decision must be the clustering's;
* every pair of pages in one content cluster: it must say "together", and for a canonical and
  its member that the decision agrees with how the member joined;
* every compared pair left in two clusters (or alone): it must say "apart".

The last line: ``explain_agree=N/N compared=C same_cluster=S``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from dataclasses import replace
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.textsim import TEMPLATES, ensure_packages, features, template_files
from scrapy_websim.config import WebsimConfig, WebsimParams
from scrapy_websim.core.features import FeatureParams
from scrapy_websim.core.match import cluster, similarity
from scrapy_websim.core.store import FeatureStore, iter_jsonl, save_jsonl
from scrapy_websim.core.types import PageRecord, PairResult
from scrapy_websim.result import finalize, output
from scrapy_websim.result.explain import cluster_params_of, decision_params_of, explain_records
from scrapy_websim.result.rows import ResultRows
from scrapy_websim.testing.sites import noisy_copy, title_of

DEFAULT_TEMPLATES = ("python3-doc", "postgresql-doc", "apache2-doc", "git-doc")


def page_set(names, pages: int) -> List[PageRecord]:
    params = FeatureParams()
    records: List[PageRecord] = []
    for name in names:
        files = template_files(TEMPLATES[name][1], pages)
        htmls = []
        for f in files:
            with open(f, encoding="utf-8", errors="replace") as fh:
                htmls.append((f, fh.read()))
        titles = [title_of(h)[:80] for _, h in htmls if title_of(h)] or ["Overview"]
        for i, (f, html) in enumerate(htmls):
            url = f"http://bench.invalid{f}"  # the whole path: two sections of a manual both have index.html
            records.append(replace(features(url, html, params), url=url, final_url=url))
            copy_url = url + "?copy=1"
            records.append(replace(features(copy_url, noisy_copy(html, titles, seed=i), params),
                                   url=copy_url, final_url=copy_url))
    for n, r in enumerate(records, start=1):
        r.id = n
    return records


def cluster_recording(store: FeatureStore, p: WebsimParams):
    """The shipped end of a crawl, with every compared pair recorded."""
    compared: Dict[Tuple[int, int], PairResult] = {}
    keys, table = finalize.label_rules(store, p.assign, p.cluster)
    n_eligible = len(keys)
    cache: Dict[int, PageRecord] = {}

    def get(page_id: int) -> PageRecord:
        if page_id not in cache:
            cache[page_id] = store.get(page_id)
        return cache[page_id]

    def compare(a: int, b: int) -> PairResult:
        result = similarity.compare(get(a), get(b), p.decision)
        compared[(a, b)] = result
        return result

    content = cluster.cluster(keys, compare, p.cluster)
    assigned = finalize.assign_clusters(store, content, table, p.assign)
    result = finalize.Result(store=store, assigned=assigned, meta=finalize.summary(store, n_eligible, assigned.kind, p),
                             params=p)
    return result, compared


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="pages per template (default 100; each gets a copy)")
    parser.add_argument("--only", nargs="*", help="template names (default: %s)" % " ".join(DEFAULT_TEMPLATES))
    parser.add_argument("--no-install", action="store_true", help="do not apt-get missing packages")
    parser.add_argument("--max-members", type=int, default=40, help="pairs of at most this many members per cluster")
    args = parser.parse_args(argv)
    names = list(args.only or DEFAULT_TEMPLATES)
    if not args.no_install:
        ensure_packages(sorted({TEMPLATES[n][0] for n in names}))
    records = page_set(names, args.pages)
    params = WebsimParams.from_settings({}, WebsimConfig())
    tmp = tempfile.mkdtemp(prefix="websim-bench-explain-")
    features_path, result_path = os.path.join(tmp, "features.jsonl"), os.path.join(tmp, "result.json")
    save_jsonl(records, features_path)
    with FeatureStore(os.path.join(tmp, "store.sqlite")) as store:
        store.add_many(records)
        store.flush()
        result, compared = cluster_recording(store, params)
        output.write_atomically(result_path, "json", ResultRows(result))

    # what websim explain reads: the result file (rows, meta) and the features file
    with open(result_path, encoding="utf-8") as fh:
        data = json.load(fh)
    rows = {row["id"]: row for row in data["urls"]}
    by_id = {r.id: r for r in iter_jsonl(features_path)}
    decision = decision_params_of(data["meta"], params.decision, False)
    cluster_params = cluster_params_of(data["meta"], params.cluster, False)
    members: Dict[str, List[int]] = {}
    for row in data["urls"]:
        if row["cluster_id"] and row["cluster_kind"] == "content":
            members.setdefault(row["cluster_id"], []).append(row["id"])
    same = set()
    for ids in members.values():
        for a, b in itertools.combinations(sorted(ids)[: args.max_members], 2):
            same.add((a, b))
    pairs = set(compared) | same
    agree, bad = 0, []
    for a, b in sorted(pairs):
        ex = explain_records(by_id[a], by_id[b], decision, cluster_params, params.assign.rules, (rows[a], rows[b]))
        ok = True
        key = (a, b) if (a, b) in compared else (b, a) if (b, a) in compared else None
        if key is not None:
            ok &= ex.duplicate == compared[key].is_duplicate
        together = rows[a]["cluster_id"] != "" and rows[a]["cluster_id"] == rows[b]["cluster_id"]
        ok &= ex.clustered == ("together" if together else "apart")
        if together and (rows[a]["is_canonical"] or rows[b]["is_canonical"]):
            ok &= ex.agrees is True
        if ok:
            agree += 1
        else:
            bad.append((rows[a]["url"], rows[b]["url"], ex.duplicate, ex.clustered, ex.agrees))
    for item in bad[:10]:
        print("disagree:", *item)
    print(f"pages={len(records)} clusters={sum(1 for c in data['clusters'] if c['kind'] == 'content')} "
          f"files={tmp}")
    print(f"explain_agree={agree}/{len(pairs)} compared={len(compared)} same_cluster={len(same)}")
    return 0 if agree == len(pairs) else 1


if __name__ == "__main__":
    sys.exit(main())
