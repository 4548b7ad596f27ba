"""Every feature value is what it was when ``tests/data/features/golden.json.gz`` was written.

The feature code is rewritten for speed now and then (one walk for several features, caches); such
a change must not change any value a page gets. For each page of ``tests/features_snapshot.py``
(saved real pages, Debian documentation pages, the hostile server's pages, hand-written edge
pages, seeded random pages) the golden file holds a short hash of every ``PageRecord`` field
``compute_features`` fills and of what each public feature function returns.

A change that is *meant* to change feature values rewrites the file:
``python -m tests.test_features_regression --write`` (and says so in its commit). A Debian page
whose installed bytes differ from the ones hashed (another package version) is skipped.
"""

from __future__ import annotations

import gzip
import json
import sys
from functools import lru_cache
from typing import Dict

import pytest

from tests import features_snapshot as fs

GOLDEN = fs.DATA / "features" / "golden.json.gz"
RANDOM_PAGES = 60


def _pages(expected_debian=None) -> Dict[str, fs.Page]:
    found: Dict[str, fs.Page] = {}
    for source in (fs.data_pages(), fs.debian_pages(expected_debian), fs.hostile_pages(), fs.edge_pages(),
                   fs.random_pages(RANDOM_PAGES)):
        for page in source:
            found[page[0]] = page
    return found


@lru_cache(maxsize=1)
def _golden() -> Dict[str, Dict[str, str]]:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


@lru_cache(maxsize=1)
def _installed() -> Dict[str, fs.Page]:
    return _pages(_golden())


def _keys():
    return sorted(_golden()) if GOLDEN.exists() else []


@pytest.mark.parametrize("key", _keys())
def test_feature_values_unchanged(key):
    page = _installed().get(key)
    if page is None:
        assert key.startswith("debian/"), f"{key} is no longer made by tests/features_snapshot.py"
        pytest.skip("this version of the Debian page is not installed")
    _, html, url, title = page
    got = fs.digests(fs.snapshot(html, url, title))
    expected = _golden()[key]
    changed = sorted(name for name in set(got) | set(expected) if got.get(name) != expected.get(name))
    assert not changed, f"{key}: values changed: {', '.join(changed)}"


def test_every_page_has_golden_values():
    """A page added to the snapshot's sources without rewriting the golden file is not checked."""
    missing = [key for key in _pages() if key not in _golden() and not key.startswith("debian/")]
    assert not missing
    assert sum(key.startswith("random/") for key in _golden()) == RANDOM_PAGES


def _write() -> None:
    golden = {key: fs.digests(fs.snapshot(html, url, title)) for key, (_, html, url, title) in _pages().items()}
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_bytes(gzip.compress(json.dumps(golden, sort_keys=True, indent=0).encode("ascii"), mtime=0))
    print(f"wrote {len(golden)} pages to {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.test_features_regression --write")
    _write()
