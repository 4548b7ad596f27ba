"""Benchmark of the tag-sequence LCS similarity (scrapy_websim.core.page.lcs).

Prints the median time of one ``lcs_similarity`` for two pages of 5,000 tags each (and, for
reference, for two unrelated pages and for pages sharing a template), and in the same run the
time of the textbook O(n*m) dynamic programme on 500-tag pages scaled by 100 (n*m grows 100x
from 500x500 to 5,000x5,000).

Usage: python bench/lcs.py [--repeat N] [--seed S]
The last line reads exactly: lcs_ms=<median> textbook_ms_estimate=<x> n=5000
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_websim.core.page.lcs import TAG_TABLE, lcs_length, lcs_similarity, tag_char

N = 5000
SMALL = 500

# Tag frequencies roughly as on the 181 real news pages of the article-extraction benchmark.
_WEIGHTS = [26, 26, 18, 9, 5, 4, 3, 6, 0, 0, 2, 1.5, 1, 1, 1, 1, 1, 0.7, 0.3, 0.7, 1, 1, 0.4, 0.2,
            0.5, 0.2, 0.6, 0.6, 0.6, 0.2]
_ALPHABET = [tag_char(t) for t in TAG_TABLE[: len(_WEIGHTS)]]


def random_page(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_ALPHABET, _WEIGHTS, k=n))


def same_template(rng: random.Random, page: str, change: float = 0.3) -> str:
    """The page with ``change`` of its tags substituted, deleted or followed by an insertion."""
    out = []
    for c in page:
        r = rng.random()
        if r < change / 3:
            out.append(rng.choices(_ALPHABET, _WEIGHTS)[0])
        elif r < 2 * change / 3:
            continue
        elif r < change:
            out.extend((c, rng.choices(_ALPHABET, _WEIGHTS)[0]))
        else:
            out.append(c)
    return "".join(out)[: len(page)].ljust(len(page), _ALPHABET[0])


def textbook_lcs(a: str, b: str) -> int:
    """The textbook LCS dynamic programme (full table)."""
    c = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            if a[i] == b[j]:
                c[i + 1][j + 1] = c[i][j] + 1
            elif c[i + 1][j] > c[i][j + 1]:
                c[i + 1][j + 1] = c[i + 1][j]
            else:
                c[i + 1][j + 1] = c[i][j + 1]
    return c[len(a)][len(b)]


def median_ms(func, *args, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    a = random_page(rng, N)
    unrelated = random_page(rng, N)
    templated = same_template(rng, a)
    small_a, small_b = random_page(rng, SMALL), random_page(rng, SMALL)

    assert lcs_length(small_a, small_b) == textbook_lcs(small_a, small_b)
    ms_unrelated = median_ms(lcs_similarity, a, unrelated, repeat=args.repeat)
    ms_templated = median_ms(lcs_similarity, a, templated, repeat=args.repeat)
    textbook_small = median_ms(textbook_lcs, small_a, small_b, repeat=max(3, args.repeat // 4))
    print(f"unrelated  {N}x{N}: sim={lcs_similarity(a, unrelated):.4f} median {ms_unrelated:.2f} ms")
    print(f"template   {N}x{N}: sim={lcs_similarity(a, templated):.4f} median {ms_templated:.2f} ms")
    print(f"textbook   {SMALL}x{SMALL}: median {textbook_small:.2f} ms (x100 for {N}x{N})")
    lcs_ms = max(ms_unrelated, ms_templated)  # report the slower of the two cases
    print(f"lcs_ms={lcs_ms:.3f} textbook_ms_estimate={textbook_small * 100:.1f} n={N}")


if __name__ == "__main__":
    main()
