"""Pairwise precision/recall of the duplicate decision on the labelled corpus, over a threshold grid.

    python bench/corpus/tune.py [tests/data/corpus/features.jsonl.gz]

Pairs: all pairs of eligible pages (status 200, text >= 200 chars); a pair is a true duplicate
when both pages come from the same base page (``group``). Prints the seed thresholds' figures,
then the grid points with precision >= 0.995 sorted by recall (best last).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import sys
from dataclasses import replace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from scrapy_websim.core.match.similarity import (
    DEFAULT_DECISION_PARAMS,
    SEED_DECISION_PARAMS,
    decide,
    structure_sim,
    text_sim,
    visual_sim,
)
from scrapy_websim.core.params.match import DecisionParams
from scrapy_websim.core.types import PageRecord

DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "corpus", "features.jsonl.gz")


def load(path: str):
    pages = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            rec = PageRecord.from_json(row)
            if rec.status_code == 200 and rec.text_len >= 200:
                pages.append((rec, row["group"], row["variant"]))
    return pages


def pair_sims(pages, params: DecisionParams):
    """[(content, structure, visual, same_group, variants)] for every pair."""
    out = []
    for (a, ga, va), (b, gb, vb) in itertools.combinations(pages, 2):
        out.append((text_sim(a, b, params), structure_sim(a, b, params), visual_sim(a, b, params), ga == gb, (va, vb)))
    return out


def evaluate(sims, params: DecisionParams):
    tp = fp = fn = 0
    for c, s, v, same, _ in sims:
        dup = bool(decide(c, s, v, params))
        if dup and same:
            tp += 1
        elif dup:
            fp += 1
        elif same:
            fn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, tp, fp, fn


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PATH
    pages = load(path)
    sims = pair_sims(pages, DEFAULT_DECISION_PARAMS)
    n_pos = sum(1 for x in sims if x[3])
    print(f"pages={len(pages)} pairs={len(sims)} duplicate_pairs={n_pos}")
    for name, params in (("seed", SEED_DECISION_PARAMS), ("default", DEFAULT_DECISION_PARAMS)):
        p, r, tp, fp, fn = evaluate(sims, params)
        print(f"{name}: precision={p:.4f} recall={r:.4f} tp={tp} fp={fp} fn={fn} {params}")
    # nearest non-duplicates and farthest duplicates, to see the margins
    neg = sorted((x for x in sims if not x[3]), key=lambda x: -x[0])[:5]
    pos = sorted((x for x in sims if x[3]), key=lambda x: x[0])[:5]
    print("closest non-duplicates (text, structure, visual):", [tuple(round(y, 3) for y in x[:3]) for x in neg])
    print("farthest duplicates (text, structure, visual, variants):",
          [tuple(round(y, 3) for y in x[:3]) + x[4] for x in pos])
    results = []
    for t, s, v, v2 in itertools.product(
        (0.97, 0.93, 0.9, 0.87, 0.85, 0.8, 0.75), (0.85, 0.9, 0.95), (0.85, 0.9, 0.95, 1.01), (0.99, 1.01)
    ):
        params = replace(DEFAULT_DECISION_PARAMS, rule1_text=t, rule1_structure=s, rule1_visual=v, rule2_visual=v2)
        p, r, tp, fp, fn = evaluate(sims, params)
        results.append((p >= 0.995, r, p, t, s, v, v2, fp, fn))
    results.sort()
    for ok, r, p, t, s, v, v2, fp, fn in results[-12:]:
        print(f"grid: rule1_text={t} rule1_structure={s} rule1_visual={v} rule2_visual={v2} "
              f"precision={p:.4f} recall={r:.4f} fp={fp} fn={fn} ok={ok}")


if __name__ == "__main__":
    main()
