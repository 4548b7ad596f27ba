"""URL-structure SimHash: tell URLs of the same pattern without fetching them.

After the URL-SimHash deduplication method: a 64-bit SimHash whose features are the URL's
components, weighted by how much they say about the page: host 4, path 3, query 2, fragment 0.5,
scheme 0.5 (total 10), each component's weight split evenly over its segments (host labels, path
segments, query parameters). Tokens are type-generalised, so ``/item/123?page=2`` and
``/item/456?page=3`` have the same features and the same hash:

* a run of digits is ``{n}`` (a segment that is only a number becomes ``{n}``);
* a hex string of 8+ characters with a digit, a UUID, or a 16+ character mixed letters/digits
  token is ``{id}``;
* a run of CJK characters is ``{cjk}``; a percent-encoded run (non-ASCII slug) is ``{enc}``.

Path segments keep their position; query parameters are keyed by name (their order does not
matter). Similarity is ``100 - hamming / 64 * 100`` as in the seed.

``websim urls --dedupe FILE [--keep N] [--threshold S] [-o OUT]`` reduces a URL list to its
patterns: URLs are read in order, a URL whose hash is within the threshold's Hamming distance of a
pattern already met joins it, and only the first ``N`` URLs of each pattern are written.

Pure module: no Scrapy import.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlsplit

import numpy as np

from ..fingerprints import CJK_CHARS, blake2b64, hamming
from ..params.urls import UrlSimhashParams

__all__ = [
    "url_features",
    "url_simhash",
    "url_similarity",
    "dedupe_urls",
    "main",
]


DEFAULT_PARAMS = UrlSimhashParams()

_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX_RE = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*\d)[0-9a-f]{8,}(?![0-9a-z])", re.I)
_MIXED_RE = re.compile(r"(?<![0-9a-z])(?=[0-9a-z_-]*\d)(?=[0-9a-z_-]*[a-z])[0-9a-z_-]{16,}(?![0-9a-z])", re.I)
_ENC_RE = re.compile(r"(?:%[0-9a-f]{2})+", re.I)
_CJK_RE = re.compile(f"[{CJK_CHARS}]+")
_NUM_RE = re.compile(r"\d+")


def generalise(token: str) -> str:
    """Replace ids, numbers, CJK runs and percent-encoded runs by their type."""
    token = _UUID_RE.sub("{id}", token)
    token = _HEX_RE.sub("{id}", token)
    token = _MIXED_RE.sub("{id}", token)
    token = _ENC_RE.sub("{enc}", token)
    token = _CJK_RE.sub("{cjk}", token)
    return _NUM_RE.sub("{n}", token).lower()


def _split_url(url: str):
    url = url.strip()
    if "://" not in url[:12]:
        url = "http://" + url.lstrip("/")
    return urlsplit(url)


def url_features(url: str, params: UrlSimhashParams = DEFAULT_PARAMS) -> List[Tuple[str, float]]:
    """The weighted, type-generalised features of ``url``: ``[(feature, weight), ...]``."""
    parts = _split_url(url)
    feats: List[Tuple[str, float]] = [(f"s:{parts.scheme.lower()}", params.scheme_weight)]
    _spread(feats, "h", _host_tokens(parts), params.host_weight, False)
    _spread(feats, "p", _path_tokens(parts.path), params.path_weight, True)
    _spread(feats, "q", _query_tokens(parts.query), params.query_weight, False)
    if parts.fragment:
        _spread(feats, "f", [generalise(x) for x in parts.fragment.split("/") if x] or ["-"],
                params.fragment_weight, False)
    return feats


def _spread(feats: List[Tuple[str, float]], prefix: str, tokens: Sequence[str], weight: float,
            positional: bool) -> None:
    """One component's tokens as features, its weight split evenly over them."""
    if not tokens or weight <= 0:
        return
    each = weight / len(tokens)
    for i, tok in enumerate(tokens):
        feats.append((f"{prefix}{i}:{tok}" if positional else f"{prefix}:{tok}", each))


def _host_tokens(parts: Any) -> List[str]:
    """The host's labels (and port), positional from the right: the registrable domain is stable."""
    host = (parts.hostname or "").lower()
    labels = [generalise(x) if x.isdigit() else x for x in host.split(".") if x]
    if parts.port is not None:
        labels.append(f":{parts.port}")
    return [f"{len(labels) - i}={lab}" for i, lab in enumerate(labels)]


def _path_tokens(path: str) -> List[str]:
    """The path's segments, generalised (a trailing slash kept on the last)."""
    segments = [generalise(unquote(s) if not _ENC_RE.search(s) else s) for s in path.split("/") if s]
    if path.endswith("/") and segments:
        segments[-1] += "/"
    return segments


def _query_tokens(query: str) -> List[str]:
    """The query's ``name=value`` pairs, names lower-cased, values generalised, sorted."""
    tokens = []
    for pair in query.split("&"):
        if not pair:
            continue
        name, _, value = pair.partition("=")
        tokens.append(f"{name.lower()}={generalise(value)}")
    return sorted(tokens)


def _hash64(feature: str) -> int:
    return blake2b64(feature)


def url_simhash(url: str, params: UrlSimhashParams = DEFAULT_PARAMS) -> int:
    """64-bit SimHash of ``url``'s structure (an unsigned int)."""
    feats = url_features(url, params)
    hashes = np.array([_hash64(f) for f, _ in feats], dtype="<u8")
    weights = np.array([w for _, w in feats], dtype=np.float64)
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    vector = weights @ (bits.astype(np.float64) * 2.0 - 1.0)  # bit i of the hash is column i
    out = 0
    for i in np.flatnonzero(vector > 0):
        out |= 1 << int(i)
    return out


def url_similarity(a: str, b: str, params: UrlSimhashParams = DEFAULT_PARAMS) -> float:
    """Structural similarity of two URLs in [0, 100]: ``100 - hamming/64*100``."""
    return 100.0 - hamming(url_simhash(a, params), url_simhash(b, params)) / 64.0 * 100.0


class _PatternIndex:
    """Patterns (representative hashes) searchable within Hamming distance ``d`` (pigeonhole)."""

    def __init__(self, max_distance: int) -> None:
        self.d = max_distance
        nbands = max_distance + 1
        width = 64 // nbands
        self.bands = [(i * width, 64 if i == nbands - 1 else (i + 1) * width) for i in range(nbands)]
        self.tables: List[Dict[int, List[int]]] = [{} for _ in self.bands]
        self.reps: List[int] = []

    def _keys(self, h: int):
        for lo, hi in self.bands:
            yield (h >> lo) & ((1 << (hi - lo)) - 1)

    def find_or_add(self, h: int) -> int:
        """Index of the first pattern within distance d of ``h`` (a new pattern if none)."""
        best: Optional[int] = None
        for table, key in zip(self.tables, self._keys(h)):
            for idx in table.get(key, ()):
                if (best is None or idx < best) and hamming(self.reps[idx], h) <= self.d:
                    best = idx
        if best is not None:
            return best
        idx = len(self.reps)
        self.reps.append(h)
        for table, key in zip(self.tables, self._keys(h)):
            table.setdefault(key, []).append(idx)
        return idx


def _max_distance(threshold: float) -> int:
    return int((100.0 - threshold) / 100.0 * 64 + 1e-9)


def dedupe_urls(
    urls: Iterable[str],
    keep: int = 15,
    threshold: float = DEFAULT_PARAMS.dedupe_threshold,
    params: UrlSimhashParams = DEFAULT_PARAMS,
) -> List[str]:
    """The first ``keep`` URLs of each pattern, in input order (exact repeats count once)."""
    if keep < 1:
        raise ValueError(f"keep must be >= 1, got {keep!r}")
    if not 50.0 <= threshold <= 100.0:
        raise ValueError(f"threshold must be in [50, 100], got {threshold!r}")
    index = _PatternIndex(_max_distance(threshold))
    counts: Dict[int, int] = {}
    seen = set()
    out: List[str] = []
    for url in urls:
        if url in seen:
            continue
        seen.add(url)
        idx = index.find_or_add(url_simhash(url, params))
        n = counts.get(idx, 0)
        if n < keep:
            out.append(url)
        counts[idx] = n + 1
    return out


def _read_urls(lines: Iterable[str]) -> List[str]:
    out = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``websim urls --dedupe FILE [--keep N] [--threshold S] [-o OUT]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="websim urls",
        description="Reduce a URL list to its URL patterns without fetching anything "
        "(URL-structure SimHash).",
    )
    parser.add_argument("--dedupe", metavar="FILE", required=True,
                        help="URL list, one per line ('#' comments and blank lines skipped; - for stdin)")
    parser.add_argument("--keep", type=int, default=DEFAULT_PARAMS.keep, metavar="N",
                        help="URLs kept per pattern, first ones first (default %(default)s)")
    parser.add_argument("--threshold", type=float, default=DEFAULT_PARAMS.dedupe_threshold,
                        metavar="S", help="similarity in [50, 100] for one pattern (default %(default)s)")
    parser.add_argument("-o", "--output", metavar="OUT", default="-",
                        help="where to write the kept URLs (default stdout)")
    args = parser.parse_args(argv)
    if args.keep < 1:
        parser.error(f"--keep must be >= 1, got {args.keep}")
    if not 50.0 <= args.threshold <= 100.0:
        parser.error(f"--threshold must be in [50, 100], got {args.threshold}")
    try:
        if args.dedupe == "-":
            urls = _read_urls(sys.stdin)
        else:
            with open(args.dedupe, encoding="utf-8", errors="replace") as fh:
                urls = _read_urls(fh)
    except OSError as exc:
        print(f"websim urls: cannot read {args.dedupe}: {exc.strerror}", file=sys.stderr)
        return 2
    kept = dedupe_urls(urls, keep=args.keep, threshold=args.threshold)
    text = "".join(u + "\n" for u in kept)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"websim urls: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return 2
    print(f"websim urls: {len(urls)} URLs, {len(kept)} kept", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
