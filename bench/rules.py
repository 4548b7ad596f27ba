"""Per-page cost of the rule features: ``page_signals`` and ``template_fingerprint``.

    python bench/rules.py [--repeat N] [--every K]

Pages: the python3-doc HTML (``/usr/share/doc/python3.11/html``, every K-th file, default 4),
each parsed once with lxml; for each page the best of ``--repeat`` runs (default 3) of each
function on the same tree, in CPU time of this process (``time.process_time``: other processes
on a busy machine do not inflate it). Timed: ``page_signals``, ``template_fingerprint`` and
``rule_features`` (both from one walk of the tree, what the pipeline should call). Prints the
median, p90 and max in ms, and the page count. The last line is exactly
``signals_ms=<median> fingerprint_ms=<median> both_ms=<median> pages=<n>``.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import lxml.html

from scrapy_websim.core.params.rules import RuleParams
from scrapy_websim.core.rules.signals import page_signals, rule_features, template_fingerprint

PYDOC_DIR = "/usr/share/doc/python3.11/html"


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best * 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--every", type=int, default=4)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(PYDOC_DIR, "**", "*.html"), recursive=True))[:: args.every]
    if not files:
        print(f"no pages: python3-doc is not installed ({PYDOC_DIR})")
        return 1
    params = RuleParams()
    sig_ms, fp_ms, both_ms, sizes = [], [], [], []
    for path in files:
        with open(path, "rb") as fh:
            raw = fh.read()
        doc = lxml.html.document_fromstring(raw)
        title = (doc.findtext(".//title") or "").strip()
        sig_ms.append(best_ms(lambda doc=doc, title=title: page_signals(doc, title, params), args.repeat))
        fp_ms.append(best_ms(lambda doc=doc: template_fingerprint(doc), args.repeat))
        both_ms.append(best_ms(lambda doc=doc, title=title: rule_features(doc, title, params), args.repeat))
        sizes.append(len(raw))

    def stats(xs):
        xs = sorted(xs)
        return f"median {statistics.median(xs):.2f}  p90 {xs[int(0.9 * (len(xs) - 1))]:.2f}  max {xs[-1]:.2f}"

    print(f"pages: {len(files)} python3-doc files, median {statistics.median(sizes) / 1024:.0f} KB")
    print(f"page_signals ms:         {stats(sig_ms)}")
    print(f"template_fingerprint ms: {stats(fp_ms)}")
    print(f"rule_features ms:        {stats(both_ms)}")
    print(f"signals_ms={statistics.median(sig_ms):.2f} fingerprint_ms={statistics.median(fp_ms):.2f} "
          f"both_ms={statistics.median(both_ms):.2f} pages={len(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
