"""Main-text extraction quality and speed on the article-extraction benchmark (181 pages).

Scoring follows the benchmark's README: ``\\w+`` tokens, 4-gram shingles with multiplicity,
per-page TP/FP/FN normalised by their sum, precision/recall averaged over pages, F1 from the means.

    python bench/extraction.py --data DIR [--only websim,trafilatura,readability]
    EXTRACTION_BENCHMARK_DIR=DIR python bench/extraction.py

``DIR`` is a copy of the article-extraction-benchmark (its ``ground-truth.json`` and
``html/<key>.html.gz`` files); ``--data`` wins over the environment variable.

Speed is the median ms per page of the extraction alone, on a tree already parsed by
``lxml.html.fromstring`` (what the feature pipeline has); extractors that need a string
(trafilatura, readability-lxml) are timed on the string, which is how they would be called.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import time
from collections import Counter

import lxml.html

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from scrapy_websim.core.page.text import extract_main_text
from scrapy_websim.core.params.page import TextParams

_WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text: str) -> Counter:
    toks = _WORD.findall(text or "")
    return Counter(tuple(toks[i : i + 4]) for i in range(max(0, len(toks) - 3)))


def score(true: str, pred: str):
    t, p = shingles(true), shingles(pred)
    tp = sum((t & p).values())
    fp = sum((p - t).values())
    fn = sum((t - p).values())
    if fp == 0 and fn == 0:
        return 1.0, 1.0
    s = tp + fp + fn
    tp, fp, fn = tp / s, fp / s, fn / s
    prec = tp / (tp + fp) if tp + fp > 0 else None
    rec = tp / (tp + fn) if tp + fn > 0 else None
    return prec, rec


def run_websim(html: str, doc):
    return extract_main_text(doc)


def run_trafilatura_tree(html: str, doc):
    return extract_main_text(doc, TextParams(extractor="trafilatura"))


def run_trafilatura(html: str, doc):
    import trafilatura

    return trafilatura.extract(html, include_comments=False, include_tables=True) or ""


def run_readability(html: str, doc):
    from readability import Document

    summary = Document(html).summary(html_partial=True)
    return lxml.html.fromstring(summary).text_content() if summary.strip() else ""


EXTRACTORS = {"websim": run_websim, "trafilatura_tree": run_trafilatura_tree, "trafilatura": run_trafilatura,
              "readability": run_readability}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("EXTRACTION_BENCHMARK_DIR"),
                    help="the article-extraction-benchmark directory (default: $EXTRACTION_BENCHMARK_DIR)")
    ap.add_argument("--only", default="websim,trafilatura_tree,trafilatura,readability")
    args = ap.parse_args()
    if not args.data:
        ap.error("no benchmark data: pass --data DIR or set EXTRACTION_BENCHMARK_DIR to the "
                 "article-extraction-benchmark directory (ground-truth.json and html/*.html.gz)")
    truth_path = os.path.join(args.data, "ground-truth.json")
    if not os.path.isfile(truth_path):
        ap.error(f"{args.data!r} is not the article-extraction-benchmark: {truth_path} is missing")
    unknown = sorted(set(args.only.split(",")) - set(EXTRACTORS))
    if unknown:
        ap.error(f"--only: unknown extractor(s) {', '.join(unknown)}; known: {', '.join(EXTRACTORS)}")
    with open(truth_path, encoding="utf-8") as fh:
        truth = json.load(fh)
    pages = []
    for key, item in sorted(truth.items()):
        path = os.path.join(args.data, "html", key + ".html.gz")
        with gzip.open(path, "rb") as fh:
            html = fh.read().decode("utf-8", "replace")
        pages.append((key, html, item["articleBody"]))
    for name in args.only.split(","):
        fn = EXTRACTORS[name]
        precs, recs, times = [], [], []
        for key, html, body in pages:
            doc = lxml.html.fromstring(html)
            t0 = time.perf_counter()
            pred = fn(html, doc)
            times.append((time.perf_counter() - t0) * 1000.0)
            p, r = score(body, pred)
            if p is not None:
                precs.append(p)
            if r is not None:
                recs.append(r)
        P = statistics.fmean(precs)
        R = statistics.fmean(recs)
        F = 2 * P * R / (P + R) if P + R else 0.0
        print(
            f"extractor={name} precision={P:.3f} recall={R:.3f} f1={F:.3f} "
            f"median_ms={statistics.median(times):.2f} p90_ms={sorted(times)[int(0.9 * len(times))]:.2f} "
            f"pages={len(pages)}"
        )


if __name__ == "__main__":
    main()
