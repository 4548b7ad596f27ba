"""Per-page cost of the features, on the rendered corpus pages.

    python bench/corpus/build.py            # once: renders the corpus, keeps HTML in /tmp/websim-corpus-html
    python bench/features.py [/tmp/websim-corpus-html]

For each rendered page: parse once (``lxml.html.fromstring``, timed alone as ``lxml_ms``), then
main text + SimHash + DOM features on that tree (``features_ms``, parse included, as the pipeline
runs it). ``phash_ms`` (pHash of a 1280x800 PNG viewport screenshot, decode included) is printed
on its own line because the corpus keeps no screenshots; add it for the total per page.
The last line is ``features_ms=<median> lxml_ms=<median> pages=<n>``.
"""

from __future__ import annotations

import glob
import io
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import lxml.html  # noqa: E402

from scrapy_websim.core.dom import dom_features  # noqa: E402
from scrapy_websim.core.text import extract_main_text, simhash64  # noqa: E402
from scrapy_websim.core.visual import phash_png  # noqa: E402


def _screenshot_png() -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (1280, 800), "white")
    d = ImageDraw.Draw(img)
    for y in range(0, 800, 24):
        d.text((40, y), "Lorem ipsum dolor sit amet, consectetur adipiscing elit " * 3, fill="black")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def main() -> None:
    html_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/websim-corpus-html"
    files = sorted(glob.glob(os.path.join(html_dir, "*.html")))
    if not files:
        sys.exit(f"no pages in {html_dir}: run bench/corpus/build.py first")
    feats, parses = [], []
    for path in files:
        html = open(path, encoding="utf-8").read()
        t0 = time.perf_counter()
        lxml.html.fromstring(html)
        parses.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        doc = lxml.html.fromstring(html)
        text = extract_main_text(doc)
        simhash64(text)
        dom_features(doc)
        feats.append((time.perf_counter() - t0) * 1000)
    png = _screenshot_png()
    ph = []
    for _ in range(20):
        t0 = time.perf_counter()
        phash_png(png)
        ph.append((time.perf_counter() - t0) * 1000)
    print(f"phash_ms={statistics.median(ph):.2f} (1280x800 PNG, decode included)")
    print(f"features_p90_ms={sorted(feats)[int(0.9 * len(feats))]:.2f}")
    print(f"features_ms={statistics.median(feats):.2f} lxml_ms={statistics.median(parses):.2f} pages={len(files)}")


if __name__ == "__main__":
    main()
