"""Per-page cost of all the features the crawl computes, against a bare lxml parse.

    python bench/features.py [HTML_DIR] [--repeat N]

Pages: the rendered corpus HTML kept by ``bench/corpus/build.py --html-dir`` (default
``/tmp/websim-corpus-html``). When that directory has no pages, the raw python3-doc pages
(``/usr/share/doc/python3.11/html``, every 4th file) are used instead: same Sphinx template, not
rendered by Chromium, so slightly different markup.

For each page, the least CPU time (``time.process_time``) of ``--repeat`` runs (default 3): the
machine is shared, so wall time measures the other processes too.

* ``features_ms``: :func:`scrapy_websim.core.features.compute_features` with no screenshot, i.e.
  everything the pipeline does per page except the pHash: parse, main text, SimHash, DOM counts /
  paths / depth, tag sequence, page type, rule signals, template fingerprint.
* ``lxml_ms``: ``lxml.html.fromstring`` of the same HTML (the cost of merely parsing it).
* the breakdown: each step timed alone on one parsed tree (parse, text = extraction + SimHash,
  dom, lcs = tag sequence, pagetype, rules signals, fingerprint).

``phash_ms`` (pHash of a real 1280x800 Chromium PNG screenshot of a python doc page, decode
included; a drawn PNG when Chromium is missing) is printed on its own line: add it for the total.
The last line is exactly ``features_ms=<median> lxml_ms=<median> pages=<n>``.
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import lxml.html

from scrapy_websim.core import fingerprints
from scrapy_websim.core.features import FeatureParams, compute_features, parse_html
from scrapy_websim.core.page import dom, lcs, pagetype, text
from scrapy_websim.core.page.visual import phash_png
from scrapy_websim.core.rules import signals
from scrapy_websim.core.types import PageRecord

CORPUS_DIR = "/tmp/websim-corpus-html"
PYDOC_DIR = "/usr/share/doc/python3.11/html"
SCREENSHOT = "/tmp/websim-bench-screenshot-1280x800.png"


def _pages(html_dir: str) -> tuple[list[str], str]:
    files = sorted(glob.glob(os.path.join(html_dir, "*.html")))
    if files:
        return files, html_dir
    files = sorted(glob.glob(os.path.join(PYDOC_DIR, "**", "*.html"), recursive=True))[::4]
    if not files:
        sys.exit(f"no pages in {html_dir} nor {PYDOC_DIR}: run bench/corpus/build.py first")
    return files, f"{PYDOC_DIR} (raw, every 4th)"


def _screenshot_png() -> tuple[bytes, str]:
    """A real 1280x800 Chromium screenshot of a python doc page (cached), else a drawn PNG."""
    if os.path.exists(SCREENSHOT):
        return open(SCREENSHOT, "rb").read(), "chromium"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    page = os.path.join(PYDOC_DIR, "library", "functions.html")
    if chromium and os.path.exists(page):
        with tempfile.TemporaryDirectory() as profile:
            out = os.path.join(profile, "shot.png")
            try:
                subprocess.run(
                    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--user-data-dir={profile}", "--window-size=1280,800", f"--screenshot={out}",
                     "file://" + page],
                    check=True, timeout=60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                data = open(out, "rb").read()
                shutil.copyfile(out, SCREENSHOT)
                return data, "chromium"
            except (subprocess.SubprocessError, OSError):
                pass
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (1280, 800), "white")
    d = ImageDraw.Draw(img)
    for y in range(0, 800, 24):
        d.text((40, y), "Lorem ipsum dolor sit amet, consectetur adipiscing elit " * 3, fill="black")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue(), "drawn"


def _best(fn, repeat: int) -> float:
    """Least CPU time of ``repeat`` runs, in ms (CPU time: the machine is shared, wall time is not
    this process's cost)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("html_dir", nargs="?", default=CORPUS_DIR)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files, source = _pages(args.html_dir)
    params = FeatureParams()
    steps = {
        "parse": lambda html, doc, rec: parse_html(html),
        "text": lambda html, doc, rec: fingerprints.simhash64(text.extract_main_text(doc, params.text)),
        "dom": lambda html, doc, rec: dom.dom_features(doc, params.dom.max_paths, params.dom),
        "lcs": lambda html, doc, rec: lcs.tag_sequence(doc, params.lcs.max_tags),
        "pagetype": lambda html, doc, rec: pagetype.page_type(doc, rec.text_len, params.pagetype),
        "signals": lambda html, doc, rec: signals.page_signals(doc, rec.title, params.rules),
        "fingerprint": lambda html, doc, rec: signals.template_fingerprint(doc),
    }
    feats, parses = [], []
    parts: dict[str, list[float]] = {name: [] for name in steps}
    sizes = []
    for path in files:
        html = open(path, encoding="utf-8", errors="replace").read()
        sizes.append(len(html))
        parses.append(_best(lambda html=html: lxml.html.fromstring(html), args.repeat))
        rec = PageRecord(id=0, url="http://127.0.0.1/" + os.path.basename(path), title="")
        feats.append(_best(lambda rec=rec, html=html: compute_features(rec, html, b"", params), args.repeat))
        doc = parse_html(html)
        if doc is None:
            continue
        for name, step in steps.items():
            parts[name].append(_best(lambda step=step, html=html, doc=doc, rec=rec: step(html, doc, rec), args.repeat))
    png, kind = _screenshot_png()
    ph = [_best(lambda: phash_png(png), 1) for _ in range(20)]
    print(f"pages from {source}: {len(files)}, median HTML {statistics.median(sizes) / 1024:.0f} KiB")
    print("per-step median ms (each timed alone on one parsed tree):")
    for name, values in parts.items():
        print(f"  {name:<12} {statistics.median(values):7.2f}  p90 {sorted(values)[int(0.9 * len(values))]:7.2f}")
    print(f"  {'sum':<12} {sum(statistics.median(v) for v in parts.values()):7.2f}")
    print(f"phash_ms={statistics.median(ph):.2f} ({kind} 1280x800 PNG, {len(png) // 1024} KiB, decode included)")
    print(f"features_p90_ms={sorted(feats)[int(0.9 * len(feats))]:.2f}")
    print(f"features_ms={statistics.median(feats):.2f} lxml_ms={statistics.median(parses):.2f} pages={len(files)}")


if __name__ == "__main__":
    main()
